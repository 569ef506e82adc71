import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import {
  buildAgentManagedHubApplication,
  buildAutonomousSpokeApplication,
} from '../model/delivery/agent-applications.js';
import { DeliveryModel } from '../model/delivery/delivery-model.js';
import {
  applyAgentHandback,
  buildStaticHubApplication,
  staticHubApplicationName,
} from '../model/delivery/hub-application.js';
import { buildManifestWork, spokeAppNamespace, wrapProblem } from '../model/delivery/manifestwork.js';
import { handbackOf } from '../model/delivery/transition.js';
import { localClusterRule, workSizeRule } from '../model/validation/rules.js';
import { PULL_APP_CHECKS, PullAppBase, type PullAppOptions } from './app-props.js';
import { checkedProps, listOf, placementRef, propsOf, spokeRef } from './_props-check.js';
import { apiObjectFrom, OutputFiles, routeOutput } from './_output.js';
import type { IPlacement, ISpoke } from './interfaces.js';

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

/** The runtime type of every {@link PullApplicationProps} key (see props-check.ts). */
const PULL_APPLICATION_PROPS = propsOf<PullApplicationProps>('PullApplication', {
  ...PULL_APP_CHECKS,
  spokes: listOf(spokeRef<ISpoke>(), '[east, west]'),
  placement: placementRef<IPlacement>(),
});

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
    super(scope, id, props, 'PullApplication', PULL_APPLICATION_PROPS);
    props = checkedProps<PullApplicationProps>(this);
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

  /**
   * Adds every spoke `placement` selects (evaluated offline at synth). A placement added twice, or one
   * synth cannot evaluate (imported with `Placement.fromName`), is a reported problem.
   */
  public deployToPlacement(placement: IPlacement): void {
    if (!placement.evaluatedOffline) {
      this.problems.push(
        `app "${this.name}" cannot deliver statically through placement "${placement.namespace}/${placement.name}": it is imported (${placement.node.path}), so synth cannot tell which spokes it selects: use a PullApplicationSet with this placement, or give the app spokes`,
      );
      return;
    }
    if (this.placements.includes(placement)) {
      this.problems.push(
        `app "${this.name}" already deploys to placement "${placement.name}": add each placement once`,
      );
      return;
    }
    this.placements.push(placement);
  }

  /** Target spokes: explicit ones plus placement selections, de-duplicated and sorted by name. */
  public targets(): ISpoke[] {
    const all = new Map<string, ISpoke>();
    for (const spoke of this.spokeList) all.set(spoke.name, spoke);
    for (const placement of this.placements)
      for (const spoke of placement.selectedSpokes()) if (!all.has(spoke.name)) all.set(spoke.name, spoke);
    return [...all.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** @internal */
  public _render(): void {
    for (const placement of this.placements) this.placementOnThisHub(placement);
    for (const spoke of this.targets()) {
      if (spoke.hub !== this.hub) {
        this.problems.push(
          `spoke "${spoke.name}" (${spoke.node.path}) is not a spoke of hub "${this.hub.name}": declare it on this hub or deliver from its own hub`,
        );
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
      this.hub._claimSpokeApplication(
        spoke.name,
        this.hub.argoNamespace,
        staticHubApplicationName(this.name, spoke.name),
        model,
        scope.node.path,
      );
      if (model === DeliveryModel.AGENT_MANAGED) {
        // The principal owns the spec: a hub Application routed to the agent by destination name.
        const appScope = new Construct(scope, 'HubApplication');
        routeOutput(appScope, OutputFiles.APPLICATIONS);
        appScope.node.defaultChild = apiObjectFrom(
          appScope,
          'Application',
          buildAgentManagedHubApplication(this.definition, target) as never,
        );
        this.hub._addAgentProjectDestination(this.definition, spoke.name);
        // The principal hands the AppProject to the agent; the bootstrap brings only namespace and RBAC.
        this.hub._spokeNamed(spoke.name)?._addDelivery({ ...this.delivery(), project: undefined });
        this.delivered++;
        continue;
      }
      if (model === DeliveryModel.AGENT_AUTONOMOUS) {
        // The spoke owns the spec: the Application goes into the spoke's own folder; the hub renders nothing.
        const appScope = new Construct(scope, 'SpokeApplication');
        routeOutput(appScope, OutputFiles.spokeApplications(spoke.name));
        apiObjectFrom(appScope, 'Application', buildAutonomousSpokeApplication(this.definition, target) as never);
        this.hub._spokeNamed(spoke.name)?._addDelivery(this.delivery());
        this.delivered++;
        continue;
      }
      // Taking the spoke back from argocd-agent: step 1 keeps the hub app routed to the agent (see AgentHandback).
      const hubApp = applyAgentHandback(
        buildStaticHubApplication(this.definition, {
          cluster: spoke.name,
          namespace: this.hub.argoNamespace,
          constructPath: scope.node.path,
        }),
        spoke.name,
        handbackOf(decision),
      );
      const problem = wrapProblem(hubApp);
      if (problem) {
        this.problems.push(`cannot deliver to spoke "${spoke.name}": ${problem}`);
        continue;
      }
      // Basic → agent-managed: the spoke Application this move hands to the agent (named by plan).
      if (decision.moveStep !== undefined)
        this.hub._addHandOver(spoke.name, `${spokeAppNamespace(hubApp)}/${hubApp.metadata.name}`);
      if (decision.clear) {
        // Step 2 of basic → agent-managed: neither hub Application nor work; removing the work (Foreground)
        // deletes the spoke Application, which step 1 left without the resources finalizer.
        this.hub._spokeNamed(spoke.name)?._addDelivery(this.delivery());
        this.delivered++;
        continue;
      }
      const work = buildManifestWork(hubApp, { feedbackScrapeType: this.hub.workFeedbackScrapeType });
      // During a move between models the work orphans the spoke Application when it is deleted.
      if (decision.deleteOption === 'Orphan') work.spec.deleteOption = { propagationPolicy: 'Orphan' };
      this.hub._addRenderedWork(spoke.name, work.metadata.name, decision.deleteOption, decision.fromAgent === true);
      const sizeProblem = workSizeRule(work.metadata.name, spoke.name, work, this.hub.workSizeBudget);
      if (sizeProblem) this.problems.push(sizeProblem);
      const appScope = new Construct(scope, 'HubApplication');
      routeOutput(appScope, OutputFiles.APPLICATIONS);
      appScope.node.defaultChild = apiObjectFrom(appScope, 'Application', hubApp as never);
      const workScope = new Construct(scope, 'Work');
      routeOutput(workScope, OutputFiles.works(spoke.name));
      workScope.node.defaultChild = apiObjectFrom(workScope, 'ManifestWork', work as never);
      // An imported spoke has no bootstrap to carry the namespace and RBAC.
      this.hub._spokeNamed(spoke.name)?._addDelivery(this.delivery());
      this.delivered++;
    }
  }

  /**
   * Escape hatch: the hub Application rendered for `spoke` (`dist/<hub>/hub/applications.yaml`).
   * Renders the hub on first use, so call it after the last declaration of the hub. Throws when the
   * app does not deliver to `spoke`.
   */
  public hubApplication(spoke: ISpoke | string): ApiObject {
    return this.renderedFor(spoke, 'HubApplication', 'hubApplication');
  }

  /**
   * Escape hatch: the ManifestWork rendered for `spoke` (`dist/<hub>/hub/works/<spoke>.yaml`). Renders
   * the hub on first use, like {@link hubApplication}. A patch here changes the work only: the hub
   * Application it was built from stays as rendered.
   */
  public manifestWork(spoke: ISpoke | string): ApiObject {
    return this.renderedFor(spoke, 'Work', 'manifestWork');
  }

  private renderedFor(spoke: ISpoke | string, id: string, accessor: string): ApiObject {
    const name = typeof spoke === 'string' ? spoke : spoke.name;
    this.hub._render(`${this.node.path}.${accessor}('${name}')`);
    const scope = this.node.tryFindChild(name)?.node.tryFindChild(id);
    if (!scope) {
      const delivered = this.node.children.filter((c) => c.node.tryFindChild('Work')).map((c) => c.node.id);
      throw new Error(
        `${this.node.path}: app "${this.name}" renders nothing for spoke "${name}" (it delivers to ${delivered.length ? delivered.map((n) => `"${n}"`).join(', ') : 'no spoke'}): deploy it there first, or use one of those spokes`,
      );
    }
    return ApiObject.of(scope);
  }

  /** @internal */
  public override _warnings(): string[] {
    const warnings = super._warnings();
    if (this.delivered === 0 && this.problems.length === 0) {
      warnings.push(
        `app "${this.name}" is delivered nowhere: ${this.placements.length ? 'its placements select no spoke; check them' : 'give it spokes, a placement, or call deployTo(...)'}`,
      );
    }
    return warnings;
  }
}
