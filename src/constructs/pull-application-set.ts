import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { applicationSetAppNamePattern, ARGOCD_API_VERSION, buildPullApplicationSet, CLUSTER_NAME_PARAM, DEFAULT_REQUEUE_AFTER_SECONDS } from '../model/index.js';
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
  /**
   * Escape hatch: the ApplicationSet (`dist/<hub>/hub/application-sets.yaml`); also `ApiObject.of(appSet)`.
   * Undefined only when the placement is missing (a problem reported at synth).
   */
  public readonly applicationSet?: ApiObject;

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
    this.hub._ensureApplicationSetSupport();
    routeOutput(this, OutputFiles.APPLICATION_SETS);
    const path = `${this.node.path}/ApplicationSet`;
    this.applicationSet = apiObjectFrom(
      this,
      'ApplicationSet',
      buildPullApplicationSet(this.definition, {
        name: this.name,
        namespace: this.hub.argoNamespace,
        placement: props.placement.name,
        requeueAfterSeconds: this.requeueAfterSeconds,
        constructPath: path,
      }),
    );
    this.node.defaultChild = this.applicationSet;
    this.hub._registerRenderable(this);
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

  /** @internal spokes the placement selects offline get the destination namespace and RBAC. */
  public _render(): void {
    if (this.placement.hub !== this.hub || !this.placement.evaluatedOffline) return;
    for (const spoke of this.placement.selectedSpokes()) {
      this.hub._spokeNamed(spoke.name)?._addDelivery(this.delivery());
      this.hub._addRuntimeObject({
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        namespace: this.hub.argoNamespace,
        name: applicationSetAppNamePattern(this.name).replace(CLUSTER_NAME_PARAM, spoke.name),
        path: `${this.node.path} (generated at runtime for spoke ${spoke.name})`,
      });
    }
  }
}
