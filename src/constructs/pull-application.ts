import { Construct } from 'constructs';
import {
  buildAgentManagedHubApplication,
  buildAutonomousSpokeApplication,
  buildManifestWork,
  buildStaticHubApplication,
  DeliveryModel,
  localClusterRule,
  staticHubApplicationName,
  wrapProblem,
  workSizeRule,
} from '../model/index.js';
import { PullAppBase, type PullAppOptions } from './app-props.js';
import { apiObjectFrom, OutputFiles, routeOutput } from './output.js';
import type { IPlacement } from './placement.js';
import type { ISpoke, Spoke } from './spoke.js';

export interface PullApplicationProps extends PullAppOptions {
  /**
   * Spokes to deliver to.
   * @default [] (add more with deployTo)
   */
  readonly spokes?: readonly ISpoke[];
  /**
   * A Placement evaluated offline against the hub's spokes at synth time; its selection is added to
   * `spokes`. For runtime selection use PullApplicationSet.
   * @default - none
   */
  readonly placement?: IPlacement;
}

/**
 * An app delivered statically: for every target spoke, synth renders the hub Application (pull label,
 * target cluster, skip-reconcile, `pullfleet.io/delivery: static`) and the ManifestWork built from it
 * by the same model function the controller uses.
 */
export class PullApplication extends PullAppBase {
  private readonly spokeList: ISpoke[] = [];
  private readonly spokeSet = new Set<ISpoke>();
  private readonly placements: IPlacement[] = [];
  private delivered = 0;

  constructor(scope: Construct, id: string, props: PullApplicationProps) {
    super(scope, id, props, 'PullApplication');
    for (const spoke of props.spokes ?? []) this.deployTo(spoke);
    if (props.placement) this.deployToPlacement(props.placement);
    this.hub._registerRenderable(this);
  }

  /** Adds target spokes. A spoke added twice is a reported problem. */
  public deployTo(...spokes: ISpoke[]): void {
    for (const spoke of spokes) {
      if (this.spokeSet.has(spoke)) {
        this.problems.push(`app "${this.name}" already deploys to spoke "${spoke.name}": add each spoke once`);
        continue;
      }
      this.spokeList.push(spoke);
      this.spokeSet.add(spoke);
    }
  }

  /** Adds every spoke `placement` selects (evaluated offline at synth). A placement added twice is a reported problem. */
  public deployToPlacement(placement: IPlacement): void {
    if (this.placements.includes(placement)) {
      this.problems.push(`app "${this.name}" already deploys to placement "${placement.name}": add each placement once`);
      return;
    }
    this.placements.push(placement);
  }

  /** Target spokes: explicit ones plus placement selections, de-duplicated and sorted by name. */
  public targets(): ISpoke[] {
    const all = new Map<string, ISpoke>();
    for (const spoke of this.spokeList) all.set(spoke.name, spoke);
    for (const placement of this.placements) for (const spoke of placement.selectedSpokes()) if (!all.has(spoke.name)) all.set(spoke.name, spoke);
    return [...all.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** @internal */
  public _render(): void {
    for (const placement of this.placements) this.placementOnThisHub(placement);
    for (const spoke of this.targets()) {
      if (spoke.hub !== this.hub) {
        this.problems.push(`spoke "${spoke.name}" (${spoke.node.path}) is not a spoke of hub "${this.hub.name}": declare it on this hub or deliver from its own hub`);
        continue;
      }
      const local = localClusterRule(this.name, spoke.name);
      if (local) {
        this.problems.push(local);
        continue;
      }
      const scope = new Construct(this, spoke.name);
      const decision = this.hub._deliveryModelOf(spoke.name);
      const model = decision.model;
      const target = { cluster: spoke.name, namespace: this.hub.argoNamespace, constructPath: scope.node.path };
      this.hub._claimSpokeApplication(spoke.name, this.hub.argoNamespace, staticHubApplicationName(this.name, spoke.name), model, scope.node.path);
      if (model === DeliveryModel.AGENT_MANAGED) {
        // The principal owns the spec: a hub Application routed to the agent by destination name.
        const appScope = new Construct(scope, 'HubApplication');
        routeOutput(appScope, OutputFiles.APPLICATIONS);
        apiObjectFrom(appScope, 'Application', buildAgentManagedHubApplication(this.definition, target) as never);
        this.hub._addAgentProjectDestination(this.definition, spoke.name);
        // The principal hands the AppProject to the agent; the bootstrap brings only namespace and RBAC.
        (spoke as Spoke)._addDelivery({ ...this.delivery(), project: undefined });
        this.delivered++;
        continue;
      }
      if (model === DeliveryModel.AGENT_AUTONOMOUS) {
        // The spoke owns the spec: the Application goes into the spoke's own folder; the hub renders nothing.
        const appScope = new Construct(scope, 'SpokeApplication');
        routeOutput(appScope, OutputFiles.spokeApplications(spoke.name));
        apiObjectFrom(appScope, 'Application', buildAutonomousSpokeApplication(this.definition, target) as never);
        (spoke as Spoke)._addDelivery(this.delivery());
        this.delivered++;
        continue;
      }
      const hubApp = buildStaticHubApplication(this.definition, {
        cluster: spoke.name,
        namespace: this.hub.argoNamespace,
        constructPath: scope.node.path,
      });
      const problem = wrapProblem(hubApp);
      if (problem) {
        this.problems.push(`cannot deliver to spoke "${spoke.name}": ${problem}`);
        continue;
      }
      const work = buildManifestWork(hubApp, { feedbackScrapeType: this.hub.workFeedbackScrapeType });
      // During a move between models the work orphans the spoke Application when it is deleted.
      if (decision.deleteOption === 'Orphan') work.spec.deleteOption = { propagationPolicy: 'Orphan' };
      this.hub._addRenderedWork(spoke.name, work.metadata.name, decision.deleteOption);
      const sizeProblem = workSizeRule(work.metadata.name, spoke.name, work, this.hub.workSizeBudget);
      if (sizeProblem) this.problems.push(sizeProblem);
      const appScope = new Construct(scope, 'HubApplication');
      routeOutput(appScope, OutputFiles.APPLICATIONS);
      apiObjectFrom(appScope, 'Application', hubApp as never);
      const workScope = new Construct(scope, 'Work');
      routeOutput(workScope, OutputFiles.works(spoke.name));
      apiObjectFrom(workScope, 'ManifestWork', work as never);
      (spoke as Spoke)._addDelivery(this.delivery());
      this.delivered++;
    }
  }

  /** @internal */
  public override _warnings(): string[] {
    const warnings = super._warnings();
    if (this.delivered === 0 && this.problems.length === 0) {
      warnings.push(`app "${this.name}" is delivered nowhere: ${this.placements.length ? 'its placements select no spoke; check them' : 'give it spokes, a placement, or call deployTo(...)'}`);
    }
    return warnings;
  }
}
