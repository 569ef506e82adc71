import { Construct, type IConstruct } from 'constructs';
import {
  buildBootstrapWork,
  buildClusterSecret,
  buildSpokeFolderApplication,
  DeliveryModel,
  buildSpokeBootstrap,
  CLUSTERSET_LABEL,
  CONSTRUCT_PATH_ANNOTATION,
  dnsLabelRule,
  dnsSubdomainRule,
  labelKeyRule,
  labelRule,
  taintProblems,
  LOCAL_CLUSTER,
  type InventoryCluster,
  type JsonObject,
  type SpokeDelivery,
  type Taint,
} from '../model/index.js';
import type { ClusterSet } from './cluster-set.js';
import { claimId, Hub, HubFlavor, markKind } from './hub.js';
import { apiObjectFrom, OutputFiles, routeOutput } from './output.js';

/** A managed cluster of a hub. */
export interface ISpoke extends IConstruct {
  /** The ManagedCluster name (also its namespace on the hub). */
  readonly name: string;
  readonly hub: Hub;
  /** Effective ManagedCluster labels (including the cluster-set and vendor labels). */
  readonly labels: Record<string, string>;
  readonly openshift: boolean;
}

export interface SpokeProps {
  /**
   * The exclusive cluster set this spoke belongs to (sets the
   * `cluster.open-cluster-management.io/clusterset` label).
   * @default - no exclusive set (label-selected sets may still include it)
   */
  readonly clusterSet?: ClusterSet;
  /**
   * ManagedCluster labels, as placements and label-selected sets see them.
   * @default {}
   */
  readonly labels?: Record<string, string>;
  /**
   * ClusterClaims of the spoke, for placement claim selectors.
   * @default {}
   */
  readonly claims?: Record<string, string>;
  /**
   * Taints on the ManagedCluster (placements must tolerate NoSelect taints).
   * @default []
   */
  readonly taints?: readonly Taint[];
  /**
   * The spoke runs OpenShift (adds the `vendor: OpenShift` label unless set, and the duplicate Route
   * CRD guardrail to its bootstrap).
   * @default false
   */
  readonly openshift?: boolean;
  /**
   * Service account of the spoke's Argo CD application controller, which gets the apps' declared RBAC.
   * @default 'openshift-gitops-argocd-application-controller' on ACM hubs, else 'argocd-application-controller'
   */
  readonly argoControllerServiceAccount?: string;
}

/**
 * A spoke: an inventory entry for one ManagedCluster. Renders its blank Argo CD cluster Secret, and
 * its bootstrap (as a ManifestWork and as plain YAML for the first manual apply).
 */
export class Spoke extends Construct implements ISpoke {
  public readonly name: string;
  public readonly hub: Hub;
  public readonly openshift: boolean;
  public readonly clusterSet?: ClusterSet;
  public readonly claims: Record<string, string>;
  public readonly taints: readonly Taint[];
  public readonly argoControllerServiceAccount: string;
  private readonly labelMap: Record<string, string>;
  private readonly deliveries: SpokeDelivery[] = [];
  private readonly problems: string[] = [];
  private secretScope?: Construct;
  private moveTarget?: DeliveryModel;

  constructor(scope: Construct, id: string, props: SpokeProps = {}) {
    super(scope, claimId(scope, 'Spoke', id));
    markKind(this, 'Spoke');
    this.hub = Hub.of(scope);
    this.name = id;
    this.openshift = props.openshift ?? false;
    this.clusterSet = props.clusterSet;
    this.claims = { ...(props.claims ?? {}) };
    this.taints = [...(props.taints ?? [])];
    this.argoControllerServiceAccount =
      props.argoControllerServiceAccount ?? (this.hub.flavor === HubFlavor.ACM ? 'openshift-gitops-argocd-application-controller' : 'argocd-application-controller');
    const labels: Record<string, string> = { ...(props.labels ?? {}) };
    if (this.openshift && labels.vendor === undefined) labels.vendor = 'OpenShift';
    if (props.clusterSet) {
      if (props.clusterSet.matchLabels) {
        this.problems.push(`cluster set "${props.clusterSet.name}" selects members by labels, so it cannot be a spoke's exclusive clusterSet: give the spoke matching labels instead`);
      } else if (labels[CLUSTERSET_LABEL] !== undefined && labels[CLUSTERSET_LABEL] !== props.clusterSet.name) {
        this.problems.push(`label ${CLUSTERSET_LABEL}="${labels[CLUSTERSET_LABEL]}" contradicts clusterSet "${props.clusterSet.name}": drop the label`);
      } else {
        labels[CLUSTERSET_LABEL] = props.clusterSet.name;
      }
    }
    this.labelMap = labels;

    const nameProblem = dnsLabelRule('spoke name', id);
    if (nameProblem) this.problems.push(nameProblem);
    for (const [key, value] of Object.entries(labels)) {
      const keyProblem = labelKeyRule('spoke label', key);
      if (keyProblem) this.problems.push(keyProblem);
      const problem = labelRule('spoke', key, value);
      if (problem) this.problems.push(problem);
    }
    for (const [key, value] of Object.entries(this.claims)) {
      const keyProblem = dnsSubdomainRule('spoke claim name', key);
      if (keyProblem) this.problems.push(keyProblem);
      if (typeof value !== 'string') this.problems.push(`spoke claim ${key} has the value ${JSON.stringify(value)}: ClusterClaim values are strings`);
    }
    this.problems.push(...taintProblems(this.taints, 'taints'));
    if (props.clusterSet && props.clusterSet.hub !== this.hub) {
      this.problems.push(`cluster set "${props.clusterSet.node.path}" belongs to hub "${props.clusterSet.hub.name}", not "${this.hub.name}": use a ClusterSet of this spoke's hub`);
    }
    const registered = this.hub._addSpoke(this);
    this.node.addValidation({ validate: () => [...this.problems] });

    // local-cluster is never a target; an invalid name or a duplicate is already a reported problem.
    if (id !== LOCAL_CLUSTER && !nameProblem && registered) {
      const secretScope = new Construct(this, 'ClusterSecret');
      routeOutput(secretScope, OutputFiles.CLUSTER_SECRETS);
      apiObjectFrom(secretScope, 'Secret', buildClusterSecret(id, this.hub.argoNamespace));
      this.secretScope = secretScope;
      this.hub._afterRender(() => this.renderBootstrap());
    }
  }

  /** Effective ManagedCluster labels (a copy). */
  public get labels(): Record<string, string> {
    return { ...this.labelMap };
  }

  /** This spoke as offline placement evaluation sees it. */
  public inventoryEntry(): InventoryCluster {
    const sets = this.hub.clusterSets.filter((set) => set.isMember(this)).map((set) => set.name);
    return { name: this.name, labels: this.labels, claims: { ...this.claims }, clusterSets: sets, taints: this.taints };
  }

  /**
   * The delivery model of this spoke: the model of the GitOpsCluster whose placement selects it
   * (evaluated offline), else basic. Known once the whole hub is declared.
   */
  public get deliveryModel(): DeliveryModel {
    return this.hub._deliveryModelOf(this.name).model;
  }

  /**
   * Moves this spoke to `model` without an outage, in two synths (two commits) that synth enforces from
   * the previous output: basic → agent keeps its works with `deleteOption: Orphan` first, then drops them
   * while the agent adopts the Applications; agent → basic renders the works with Orphan first, then
   * Foreground. Change the placements so a GitOpsCluster of `model` selects the spoke (or none, for
   * basic), call this, and remove it once `pullfleet plan` says the move is complete.
   */
  public moveTo(model: DeliveryModel): void {
    if (!Object.values(DeliveryModel).includes(model)) {
      this.problems.push(`moveTo(${JSON.stringify(model)}): not a delivery model; use DeliveryModel.BASIC, DeliveryModel.AGENT_MANAGED or DeliveryModel.AGENT_AUTONOMOUS`);
      return;
    }
    if (this.moveTarget !== undefined && this.moveTarget !== model) {
      this.problems.push(`moveTo(${model}) after moveTo(${this.moveTarget}): a spoke moves to one model at a time`);
      return;
    }
    this.moveTarget = model;
  }

  /** @internal the model moveTo asked for, if any. */
  public get _moveTarget(): DeliveryModel | undefined {
    return this.moveTarget;
  }

  /** @internal an app deploys here (namespace, RBAC grants, project and repositories). */
  public _addDelivery(delivery: SpokeDelivery): void {
    this.deliveries.push(delivery);
  }

  private renderBootstrap(): void {
    const { model, gitOpsCluster } = this.hub._deliveryModelOf(this.name);
    // A GitOpsCluster registers its clusters itself (ACM: blank secrets; OCM: the agent add-on).
    if (gitOpsCluster && this.secretScope) this.secretScope.node.tryRemoveChild('Secret');
    const scope = new Construct(this, 'Bootstrap');
    routeOutput(scope, OutputFiles.bootstrap(this.name));
    const objects = buildSpokeBootstrap({
      cluster: this.name,
      argoNamespace: this.hub.argoNamespace,
      openshift: this.openshift,
      argoControllerServiceAccount: this.argoControllerServiceAccount,
      namespaces: this.deliveries,
    });
    if (model === DeliveryModel.AGENT_AUTONOMOUS) {
      const source = this.hub.gitOpsClusters.find((g) => g.node.path === gitOpsCluster)?.spokeFolderSource;
      if (source) objects.push(buildSpokeFolderApplication(source, this.hub.name, this.name, this.hub.argoNamespace) as never);
    }
    const manifests: JsonObject[] = [];
    for (const obj of objects) {
      const id = `${obj.kind}-${obj.metadata.namespace ? `${obj.metadata.namespace}-` : ''}${obj.metadata.name}`;
      obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [CONSTRUCT_PATH_ANNOTATION]: `${scope.node.path}/${id}` };
      apiObjectFrom(scope, id, obj);
      manifests.push(obj);
    }
    const workScope = new Construct(this, 'BootstrapWork');
    routeOutput(workScope, OutputFiles.works(this.name));
    apiObjectFrom(workScope, 'ManifestWork', buildBootstrapWork(this.name, manifests, `${workScope.node.path}/ManifestWork`) as never);
  }
}
