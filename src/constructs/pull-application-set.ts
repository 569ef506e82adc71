import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { Construct as PlainConstruct } from 'constructs';
import {
  applicationSetAppNamePattern,
  ARGOCD_API_VERSION,
  buildAutonomousSpokeApplication,
  buildPullApplicationSet,
  DEFAULT_REQUEUE_AFTER_SECONDS,
  DeliveryModel,
  generatedApplicationName,
  applicationSetStep,
  manifestWorkName,
  MAX_LABEL_LENGTH,
  NO_HANDBACK,
  type AgentHandback,
} from '../model/index.js';
import { PullAppBase, type PullAppOptions } from './app-props.js';
import { apiObjectFrom, OutputFiles, routeOutput } from './output.js';
import type { IPlacement } from './interfaces.js';

export interface PullApplicationSetProps extends PullAppOptions {
  /** The Placement whose decisions (at runtime) choose the spokes. Must be in the hub's Argo CD namespace. */
  readonly placement: IPlacement;
  /**
   * How often the generator re-reads placement decisions, in seconds.
   * @default 180
   */
  readonly requeueAfterSeconds?: number;
}

/**
 * An app delivered to whatever a Placement selects at runtime: an ApplicationSet with a
 * clusterDecisionResource generator whose template carries the pull label, the target cluster and
 * skip-reconcile. The hub controller wraps each generated Application into a ManifestWork.
 * Spokes the Placement selects offline get the app's namespace and RBAC in their bootstrap.
 */
export class PullApplicationSet extends PullAppBase {
  /** The Placement whose decisions choose the spokes. */
  public readonly placement: IPlacement;
  /** How often the generator re-reads placement decisions, in seconds. */
  public readonly requeueAfterSeconds: number;
  private renderedApplicationSet?: ApiObject;

  /**
   * Escape hatch: the ApplicationSet (`dist/<hub>/hub/application-sets.yaml`); also `ApiObject.of(appSet)`
   * once the hub rendered. Its shape depends on the delivery model of the placement, known once the
   * whole hub is declared, so the first use renders the hub: call it after the last declaration.
   * Undefined when the placement is missing (a problem reported at synth), and for agent-autonomous
   * apps, whose Application each spoke's own folder holds.
   */
  public get applicationSet(): ApiObject | undefined {
    this.hub._render('applicationSet');
    return this.renderedApplicationSet;
  }

  constructor(scope: Construct, id: string, props: PullApplicationSetProps) {
    super(scope, id, props, 'PullApplicationSet');
    this.placement = props.placement;
    this.requeueAfterSeconds = props.requeueAfterSeconds ?? DEFAULT_REQUEUE_AFTER_SECONDS;
    if (!(Number.isInteger(this.requeueAfterSeconds) && this.requeueAfterSeconds > 0)) {
      this.problems.push(`requeueAfterSeconds ${props.requeueAfterSeconds} must be a whole number of seconds > 0: use the default ${DEFAULT_REQUEUE_AFTER_SECONDS} or another positive number`);
      this.requeueAfterSeconds = DEFAULT_REQUEUE_AFTER_SECONDS;
    }
    if (!props.placement || typeof props.placement.selectedSpokes !== 'function') {
      this.problems.push('placement is missing: give the Placement whose decisions choose the spokes (or use PullApplication with spokes)');
      return;
    }
    if (this.placementOnThisHub(props.placement) && props.placement.namespace !== this.hub.argoNamespace) {
      this.problems.push(
        `placement "${props.placement.name}" is in namespace "${props.placement.namespace}", but the ApplicationSet generator only reads decisions in "${this.hub.argoNamespace}": create the placement in "${this.hub.argoNamespace}"`,
      );
    }
    // Created here, ahead of the ApplicationSets in the output, whatever model the placement turns out to have.
    this.hub._ensureApplicationSetSupport();
    this.hub._registerRenderable(this);
  }

  /**
   * The delivery model of this app: the model of the GitOpsCluster on its placement, else basic.
   * Known once the whole hub is declared.
   */
  public get model(): DeliveryModel {
    return this.hub._gitOpsClusterOfPlacement(this.placement)?.model ?? DeliveryModel.BASIC;
  }

  /** The ApplicationSet (basic and agent-managed models); agent-autonomous apps render per spoke instead. */
  private renderApplicationSet(model: DeliveryModel.BASIC | DeliveryModel.AGENT_MANAGED, handback: AgentHandback): void {
    routeOutput(this, OutputFiles.APPLICATION_SETS);
    const path = `${this.node.path}/ApplicationSet`;
    this.renderedApplicationSet = apiObjectFrom(
      this,
      'ApplicationSet',
      buildPullApplicationSet(this.definition, {
        name: this.name,
        namespace: this.hub.argoNamespace,
        placement: this.placement.name,
        requeueAfterSeconds: this.requeueAfterSeconds,
        constructPath: path,
        model,
        handback,
      }),
    );
    this.node.defaultChild = this.renderedApplicationSet;
  }

  /** What the ApplicationSet renders now: see applicationSetStep (one template serves every spoke of the placement). */
  private rendering(): { model: DeliveryModel; handback: AgentHandback } {
    const model = this.model;
    if (!this.placement.evaluatedOffline) return { model, handback: NO_HANDBACK };
    const spokes = this.placement.selectedSpokes().filter((spoke) => spoke.hub === this.hub);
    const step = applicationSetStep(model, spokes.map((spoke) => ({ name: spoke.name, decision: this.hub._deliveryModelOf(spoke.name) })));
    if (step.problem) this.problems.push(`placement "${this.placement.name}" ${step.problem}`);
    return step;
  }

  /** @internal legal but almost certainly wrong (shown by synth and validate; errors with --strict). */
  public override _warnings(): string[] {
    const warnings = super._warnings();
    if (this.placement && typeof this.placement.selectedSpokes === 'function' && !this.placement.evaluatedOffline) {
      warnings.push(
        `placement "${this.placement.namespace}/${this.placement.name}" is imported, so synth cannot tell which spokes it selects: their bootstraps get no namespace "${this.definition.destinationNamespace}" or RBAC for app "${this.name}"; create them on those spokes some other way`,
      );
    }
    return warnings;
  }

  /**
   * The Application the applicationset-controller generates for `spoke` should fit a label value:
   * Argo CD's label-based resource tracking and ACM's search carry the app name in a label. (Spoke and
   * app names are DNS labels, so the name itself is always a valid object name.)
   */
  private checkGeneratedName(appName: string, spoke: string): void {
    if (appName.length <= MAX_LABEL_LENGTH) return;
    const room = MAX_LABEL_LENGTH - spoke.length - 1;
    const fix = room > 0 ? `shorten the app name "${this.name}" to at most ${room} characters` : `the spoke name alone leaves no room: shorten the spoke name`;
    this.warnings.push(
      `the Application generated for spoke "${spoke}" is named "${appName}" (${appName.length} characters, over ${MAX_LABEL_LENGTH}): Argo CD's label-based resource tracking and ACM's search carry the app name in a label value; ${fix}`,
    );
  }

  /** @internal spokes the placement selects offline get the destination namespace and RBAC. */
  public _render(): void {
    if (this.placement.hub !== this.hub) return;
    const { model, handback } = this.rendering();
    if (model !== DeliveryModel.AGENT_AUTONOMOUS) this.renderApplicationSet(model, handback);
    // An imported placement is not evaluated offline: the spokes it selects are known only at runtime.
    if (!this.placement.evaluatedOffline) return;
    for (const spoke of this.placement.selectedSpokes()) {
      // Agent-managed: the principal hands the AppProject to the agent; the bootstrap brings namespace and RBAC.
      this.hub._spokeNamed(spoke.name)?._addDelivery(model === DeliveryModel.AGENT_MANAGED ? { ...this.delivery(), project: undefined } : this.delivery());
      // The applicationset-controller names the app in full; the work name and plan ids follow from it.
      const appName = generatedApplicationName(applicationSetAppNamePattern(this.name), spoke.name);
      this.checkGeneratedName(appName, spoke.name);
      this.hub._claimSpokeApplication(spoke.name, this.hub.argoNamespace, appName, model, `${this.node.path}`);
      if (model === DeliveryModel.AGENT_AUTONOMOUS) {
        // The spoke owns the spec: each selected spoke gets the Application in its own folder.
        const scope = new PlainConstruct(this, spoke.name);
        routeOutput(scope, OutputFiles.spokeApplications(spoke.name));
        apiObjectFrom(
          scope,
          'Application',
          buildAutonomousSpokeApplication(this.definition, { cluster: spoke.name, namespace: this.hub.argoNamespace, constructPath: `${scope.node.path}/Application`, name: appName }) as never,
        );
        continue;
      }
      if (model === DeliveryModel.AGENT_MANAGED) this.hub._addAgentProjectDestination(this.definition, spoke.name);
      // The work the controller will write for this app, recorded in the plan state like a rendered one
      // (a later move of the spoke goes step by step from its deleteOption).
      if (model === DeliveryModel.BASIC) this.hub._addRenderedWork(spoke.name, manifestWorkName(this.hub.argoNamespace, appName), handback.standBy ? 'Orphan' : 'Foreground');
      this.hub._addRuntimeObject({
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        namespace: this.hub.argoNamespace,
        name: appName,
        path: `${this.node.path} (generated at runtime for spoke ${spoke.name})`,
      });
    }
  }
}
