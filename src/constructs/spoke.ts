import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { CLUSTERSET_LABEL, CONSTRUCT_PATH_ANNOTATION, isHubItself, WORK_API_VERSION } from '../model/core/keys.js';
import { dnsLabelProblem } from '../model/core/names.js';
import { kubernetesMinor } from '../model/core/versions.js';
import { enumMember, type EnumValue, type JsonObject } from '../model/core/types.js';
import {
  BOOTSTRAP_WORK_NAME,
  buildBootstrapWork,
  buildSpokeBootstrap,
  spokeArgoController,
  type SpokeArgoSetup,
  type SpokeDelivery,
} from '../model/delivery/bootstrap.js';
import { buildClusterSecret } from '../model/delivery/cluster-secret.js';
import { buildSpokeFolderApplication, DeliveryModel } from '../model/delivery/delivery-model.js';
import { type InventoryCluster, type Taint } from '../model/placement/placement.js';
import { labelKeyRule, taintProblems } from '../model/validation/object-rules.js';
import { dnsLabelRule, dnsSubdomainRule, labelRule } from '../model/validation/rules.js';
import { HubFlavor, type IClusterSet, type IHub, type ISpoke } from './interfaces.js';
import { fillObject, heldObjects, pickRendered, renderedObjectCall, reserveObject, spokeNameOf } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';
import { hubOf, hubParts, type HubParts } from './_hub-parts.js';
import { claimId, markKind, nameFromId } from './_ids.js';
import { apiObjectFrom } from './_output.js';
import { OutputFiles, routeOutput } from './output.js';
import { recordProblem } from './_problems.js';
import { bool, checkProps, clusterSetRef, propsOf, shape, str, stringMap, TAINTS_CHECK } from './_props-check.js';
import { normalizeVersions, resolveSpokeVersions, type VersionSource } from '../model/validation/versions.js';
import { assertNotRendered, fleetRendered } from './_render-order.js';

export type { ISpoke } from './interfaces.js';

/** What a spoke imported with `Spoke.fromSpokeName` looks like to placements and cluster sets. */
export interface SpokeImportOptions {
  /**
   * The exclusive cluster set the cluster belongs to (sets the
   * `cluster.open-cluster-management.io/clusterset` label).
   * @default - no exclusive set
   */
  readonly clusterSet?: IClusterSet;
  /**
   * ManagedCluster labels.
   * @default {}
   */
  readonly labels?: Record<string, string>;
  /**
   * ClusterClaims of the cluster.
   * @default {}
   */
  readonly claims?: Record<string, string>;
  /**
   * Taints on the ManagedCluster.
   * @default []
   */
  readonly taints?: readonly Taint[];
  /**
   * The cluster runs OpenShift (adds the `vendor: OpenShift` label unless set).
   * @default false
   */
  readonly openshift?: boolean;
}

/** Settings of a {@link Spoke}. */
export interface SpokeProps {
  /**
   * The exclusive cluster set this spoke belongs to (sets the
   * `cluster.open-cluster-management.io/clusterset` label).
   * @default - no exclusive set (label-selected sets may still include it)
   */
  readonly clusterSet?: IClusterSet;
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
   * The spoke's Kubernetes version (`'1.29'`, or as the server reports it, `'v1.29.5+rhcos'`); OpenShift
   * 4.16 runs 1.29, 4.17 runs 1.30. Below 1.30 the server has no `admissionregistration.k8s.io/v1`
   * ValidatingAdmissionPolicy, so an OpenShift spoke's bootstrap leaves out the duplicate Route CRD
   * guardrail instead of failing to apply. `pullfleet inventory pull` records it for each cluster. The same as
   * `versions.kubernetes` (give one of them).
   * @default - `versions.kubernetes`, else what `versions.openshift`, the spoke's cluster sets or its hub declare;
   * nothing declared: the bootstrap is rendered for Kubernetes 1.30 or later
   */
  readonly kubernetesVersion?: string;
  /**
   * The releases the spoke runs (spoke Argo CD, klusterlet, Kubernetes or OpenShift). Each component not
   * declared here comes from the spoke's cluster sets (`spokeVersions`), then from the hub
   * (`versions.spokes`). Synth checks what is delivered to the spoke against them
   * (docs/reference/compatibility.md). Declaring `openshift` implies `openshift: true`.
   * @default - what its cluster sets or hub declare; nothing declared anywhere: no check against the
   * spoke's releases
   */
  readonly versions?: SpokeVersions;
  /**
   * Service account of the spoke's Argo CD application controller, which gets the apps' declared RBAC.
   * @default - follows what installs the spoke Argo CD: `acm-openshift-gitops-argocd-application-controller`
   * when an ACM GitOpsCluster with the gitops add-on selects the spoke, `argocd-argocd-application-controller`
   * when an OCM GitOpsCluster (argocd-agent add-on) does, else `openshift-gitops-argocd-application-controller`
   * on ACM hubs (OpenShift GitOps) and `argocd-application-controller` on OCM hubs (upstream Argo CD)
   */
  readonly argoControllerServiceAccount?: string;
  /**
   * Namespace of that service account.
   * @default - `openshift-gitops` under the ACM gitops add-on, the agent namespace under the OCM
   * argocd-agent add-on, else the hub's Argo CD namespace
   */
  readonly argoControllerNamespace?: string;
}

/**
 * The releases of the upstream components a spoke (or every spoke of a group) runs. Each is `major.minor`
 * (`'3.0'`) or `major.minor.patch`; a leading `v` and a build suffix are accepted.
 */
export interface SpokeVersions {
  /**
   * Argo CD on the spoke (it applies the payload Applications).
   * @default - undeclared: no check against the spoke's Argo CD
   */
  readonly argoCD?: string;
  /**
   * The klusterlet (its work agent applies works and reports their status), as the OCM release (`'1.1'`).
   * @default - undeclared: no check against the klusterlet
   */
  readonly klusterlet?: string;
  /**
   * Kubernetes on the spoke (`'1.29'`, or as the server reports it, `'v1.29.5+rhcos'`).
   * @default - undeclared, or the release `openshift` runs
   */
  readonly kubernetes?: string;
  /**
   * OpenShift on the spoke (`'4.16'`); sets the Kubernetes release it runs (4.16 runs 1.29, 4.17 runs
   * 1.30). Given to a group, it applies to its OpenShift spokes only.
   * @default - undeclared
   */
  readonly openshift?: string;
}

/** The runtime type of every {@link SpokeVersions} key (see props-check.ts). */
export const SPOKE_VERSIONS_CHECK = shape<SpokeVersions>('spoke versions', {
  argoCD: str(),
  klusterlet: str(),
  kubernetes: str(),
  openshift: str(),
});

const SPOKE_IMPORT_CHECKS = {
  clusterSet: clusterSetRef<IClusterSet>(),
  labels: stringMap('label', "{ env: 'prod' }"),
  claims: stringMap('claim', "{ platform: 'AWS' }"),
  taints: TAINTS_CHECK,
  openshift: bool(),
};

/** The runtime type of every {@link SpokeImportOptions} key (see props-check.ts). */
const SPOKE_IMPORT_OPTIONS = propsOf<SpokeImportOptions>('Spoke.fromSpokeName options', SPOKE_IMPORT_CHECKS);

/** The runtime type of every {@link SpokeProps} key (see props-check.ts). */
const SPOKE_PROPS = propsOf<SpokeProps>('Spoke', {
  ...SPOKE_IMPORT_CHECKS,
  kubernetesVersion: str(),
  versions: SPOKE_VERSIONS_CHECK,
  argoControllerServiceAccount: str(),
  argoControllerNamespace: str(),
});

/** Effective labels and every problem with a spoke's name, labels, claims, taints and exclusive set. */
function resolveSpoke(
  hub: IHub,
  name: string,
  props: SpokeImportOptions,
): { labels: Record<string, string>; problems: string[] } {
  const problems: string[] = [];
  const labels: Record<string, string> = { ...(props.labels ?? {}) };
  if (props.openshift && labels.vendor === undefined) labels.vendor = 'OpenShift';
  if (props.clusterSet) {
    if (props.clusterSet.matchLabels) {
      problems.push(
        `cluster set "${props.clusterSet.name}" selects members by labels, so it cannot be a spoke's exclusive clusterSet: give the spoke matching labels instead`,
      );
    } else if (labels[CLUSTERSET_LABEL] !== undefined && labels[CLUSTERSET_LABEL] !== props.clusterSet.name) {
      problems.push(
        `label ${CLUSTERSET_LABEL}="${labels[CLUSTERSET_LABEL]}" contradicts clusterSet "${props.clusterSet.name}": drop the label`,
      );
    } else {
      labels[CLUSTERSET_LABEL] = props.clusterSet.name;
    }
  }
  const nameProblem = dnsLabelRule('spoke name', name);
  if (nameProblem) problems.push(nameProblem);
  for (const [key, value] of Object.entries(labels)) {
    const keyProblem = labelKeyRule('spoke label', key);
    if (keyProblem) problems.push(keyProblem);
    const problem = labelRule('spoke', key, value);
    if (problem) problems.push(problem);
  }
  for (const [key, value] of Object.entries(props.claims ?? {})) {
    const keyProblem = dnsSubdomainRule('spoke claim name', key);
    if (keyProblem) problems.push(keyProblem);
    if (typeof value !== 'string')
      problems.push(`spoke claim ${key} has the value ${JSON.stringify(value)}: ClusterClaim values are strings`);
  }
  problems.push(...taintProblems([...(props.taints ?? [])], 'taints'));
  if (props.clusterSet && props.clusterSet.hub !== hub) {
    problems.push(
      `cluster set "${props.clusterSet.node.path}" belongs to hub "${props.clusterSet.hub.name}", not "${hub.name}": use a ClusterSet of this spoke's hub`,
    );
  }
  return { labels, problems };
}

/**
 * A ManagedCluster that exists on the hub but is set up outside the fleet description
 * ({@link Spoke.fromSpokeName}). It is a static target for PullApplication; the fleet renders no cluster
 * Secret and no bootstrap for it, and placements do not select it offline.
 */
class ImportedSpoke extends Construct implements ISpoke {
  public readonly name: string;
  public readonly hub: IHub;
  public readonly openshift: boolean;
  private readonly labelMap: Record<string, string>;
  private readonly claims: Record<string, string>;
  private readonly taints: readonly Taint[];

  constructor(scope: Construct, id: string, hub: IHub, name: string, options: SpokeImportOptions) {
    super(scope, id);
    markKind(this, 'Spoke');
    options = checkProps(this, SPOKE_IMPORT_OPTIONS, options);
    this.hub = hub;
    this.name = name;
    this.openshift = options.openshift ?? false;
    this.claims = { ...(options.claims ?? {}) };
    this.taints = [...(options.taints ?? [])];
    const { labels, problems } = resolveSpoke(hub, name, options);
    this.labelMap = labels;
    this.node.addValidation({
      validate: () => {
        const declared = hubParts(hub).registry.spokeNamed(name);
        if (declared)
          return [
            ...problems,
            `spoke "${name}" is imported with Spoke.fromSpokeName, but the fleet also declares it (${declared.node.path}): use the declared Spoke`,
          ];
        const first = hub.node.findAll().find((c) => c instanceof ImportedSpoke && c.name === name);
        if (first !== this)
          return [
            ...problems,
            `spoke "${name}" is already imported (${first?.node.path}): import each spoke once and reuse the result`,
          ];
        return [...problems];
      },
    });
  }

  public get labels(): Record<string, string> {
    return { ...this.labelMap };
  }

  public inventoryEntry(): InventoryCluster {
    const sets = this.hub.clusterSets.filter((set) => set.isMember(this)).map((set) => set.name);
    return { name: this.name, labels: this.labels, claims: { ...this.claims }, clusterSets: sets, taints: this.taints };
  }
}

/**
 * A spoke: an inventory entry for one ManagedCluster. Renders its blank Argo CD cluster Secret, and
 * its bootstrap (as a ManifestWork and as plain YAML for the first manual apply).
 */
export class Spoke extends Construct implements ISpoke, IRendersObjects {
  /**
   * A ManagedCluster that exists on the hub but is not described in the fleet (registered and
   * bootstrapped some other way). It is a static target: `PullApplication` renders its hub Application
   * and ManifestWork. The fleet renders no Argo CD cluster Secret and no bootstrap for it, and
   * placements never select it offline (it is not among `hub.spokes`). `options` give the labels,
   * claims and taints cluster sets see. Import each spoke once and reuse the result: a second import of
   * the same name, or one the fleet also declares, is a problem at synth.
   * @param scope the hub, or any construct inside it: the hub the cluster is registered with
   * @param id the construct id of the import under `scope` (unique there, as every construct id)
   * @param name the ManagedCluster name
   * @param options the labels, claims, taints and exclusive cluster set of the cluster
   */
  public static fromSpokeName(scope: Construct, id: string, name: string, options: SpokeImportOptions = {}): ISpoke {
    return new ImportedSpoke(scope, id, hubOf(scope, { kind: 'Spoke', id }).hub, name, options);
  }

  /** The ManagedCluster name (the `id` given to the constructor; also the cluster's namespace on the hub). */
  public readonly name: string;
  /** The hub the spoke is registered with. */
  public readonly hub: IHub;
  /** The spoke runs OpenShift (`props.openshift`). */
  public readonly openshift: boolean;
  /**
   * The spoke's Kubernetes version as `major.minor`, when the spoke itself declares one (`props.kubernetesVersion`,
   * `props.versions.kubernetes`, or the release `props.versions.openshift` runs); {@link versions} also has
   * what its cluster sets and hub declare.
   */
  public readonly kubernetesVersion?: string;
  /** What the spoke itself declares (`props.versions`), canonical. */
  private readonly ownVersions: SpokeVersions;
  /** The exclusive cluster set, if any. */
  public readonly clusterSet?: IClusterSet;
  private readonly claimMap: Record<string, string>;
  private readonly taintList: readonly Taint[];
  private readonly parts: HubParts;
  private readonly labelMap: Record<string, string>;
  private readonly controllerOverride: { readonly serviceAccount?: string; readonly namespace?: string };
  private readonly deliveries: SpokeDelivery[] = [];
  private readonly problems: string[] = [];
  private moveTarget?: DeliveryModel;
  /** The cluster Secret, while the spoke renders one. */
  private secret?: ApiObject;
  /**
   * The hatch that first handed the Secret out (`clusterSecret`, or a `renderedObject({ ... })` call): its
   * edits are lost if a GitOpsCluster registers the cluster.
   */
  private secretHandedOut?: string;
  /** The bootstrap ManifestWork, created with the spoke and filled in when the fleet renders. */
  private bootstrapWorkObject?: ApiObject;
  /** The scope of the plain bootstrap objects (`dist/<hub>/bootstrap/<spoke>.yaml`). */
  private bootstrapScope?: Construct;
  private readonly bootstrapEdits: Array<(objects: ApiObject[]) => void> = [];

  constructor(scope: Construct, id: string, props: SpokeProps = {}) {
    super(scope, claimId(scope, 'Spoke', id));
    markKind(this, 'Spoke');
    props = checkProps(this, SPOKE_PROPS, props);
    this.parts = hubOf(scope, { kind: 'Spoke', id });
    this.hub = this.parts.hub;
    this.name = nameFromId(this, id);
    const declared = normalizeVersions('versions', props.versions ?? {});
    this.problems.push(...declared.problems);
    this.openshift = props.openshift ?? declared.versions.openshift !== undefined;
    if (props.openshift === false && declared.versions.openshift !== undefined)
      this.problems.push(
        `versions.openshift ${declared.versions.openshift} is declared, but openshift is false: set openshift: true, or drop versions.openshift`,
      );
    let kubernetes = declared.versions.kubernetes;
    if (props.kubernetesVersion !== undefined) {
      const legacy = kubernetesMinor(props.kubernetesVersion);
      if (legacy === undefined)
        this.problems.push(
          `kubernetesVersion ${JSON.stringify(props.kubernetesVersion)} is not a Kubernetes version: give major.minor, for example '1.29', or the version the server reports, for example 'v1.29.5'`,
        );
      else if (kubernetes !== undefined && kubernetes !== legacy)
        this.problems.push(
          `kubernetesVersion ${legacy} contradicts versions.kubernetes ${kubernetes}: declare the Kubernetes version once`,
        );
      else kubernetes = legacy;
    }
    this.ownVersions = { ...declared.versions, ...(kubernetes !== undefined ? { kubernetes } : {}) };
    const own = resolveSpokeVersions([[{ name: `spoke "${this.name}"`, versions: this.ownVersions }]], true);
    this.problems.push(...own.problems);
    this.kubernetesVersion = own.versions.kubernetes;
    this.clusterSet = props.clusterSet;
    this.claimMap = { ...(props.claims ?? {}) };
    this.taintList = (props.taints ?? []).map((t) => ({ ...t }));
    this.controllerOverride = {
      serviceAccount: props.argoControllerServiceAccount,
      namespace: props.argoControllerNamespace,
    };
    const resolved = resolveSpoke(this.hub, this.name, props);
    this.labelMap = resolved.labels;
    this.problems.push(...resolved.problems);
    const nameProblem = dnsLabelRule('spoke name', this.name);
    const registered = this.parts.registry.addSpoke({
      spoke: this,
      moveTarget: () => this.moveTarget,
      addDelivery: (delivery) => this.addDelivery(delivery),
    });
    this.node.addValidation({ validate: () => [...this.problems] });

    // local-cluster is never a target; an invalid name or a duplicate is already a reported problem.
    if (!isHubItself(this.name, this.labelMap) && !nameProblem && registered) {
      const secretScope = new Construct(this, 'ClusterSecret');
      routeOutput(secretScope, OutputFiles.CLUSTER_SECRETS);
      this.secret = apiObjectFrom(secretScope, 'Secret', buildClusterSecret(this.name, this.hub.argoNamespace));
      secretScope.node.defaultChild = this.secret;
      // The bootstrap exists whatever else is declared; its content (every app's namespace) comes when the fleet renders.
      this.bootstrapScope = new Construct(this, 'Bootstrap');
      routeOutput(this.bootstrapScope, OutputFiles.bootstrap(this.name));
      const workScope = new Construct(this, 'BootstrapWork');
      routeOutput(workScope, OutputFiles.works(this.name));
      this.bootstrapWorkObject = reserveObject(
        workScope,
        'ManifestWork',
        { apiVersion: WORK_API_VERSION, kind: 'ManifestWork', name: BOOTSTRAP_WORK_NAME, namespace: this.name },
        this,
      );
      this.parts.order.afterRender(() => this.renderBootstrap());
    }
  }

  /** ClusterClaims of the spoke: a copy, which changes nothing rendered. */
  public get claims(): Record<string, string> {
    return { ...this.claimMap };
  }

  /** Taints on the ManagedCluster: a copy, which changes nothing rendered. */
  public get taints(): Taint[] {
    return this.taintList.map((t) => ({ ...t }));
  }

  /**
   * The ApiObject the spoke renders for `query`: `{ kind: 'Secret' }` is its Argo CD cluster Secret on the
   * hub (`dist/<hub>/hub/cluster-secrets.yaml`), `{ kind: 'ManifestWork' }` its bootstrap ManifestWork
   * (`dist/<hub>/hub/works/<spoke>.yaml`, filled in when the fleet renders); both exist from the spoke's
   * declaration, so ask at any time. A GitOpsCluster whose placement selects the spoke registers the
   * cluster itself, and then the fleet renders no Secret for it: edits made through it would be lost, so
   * synth reports that as a problem. The plain bootstrap objects (`dist/<hub>/bootstrap/<spoke>.yaml`:
   * Namespace, ClusterRole, ...) depend on every app delivered to the spoke, so they exist once the fleet
   * rendered; to edit them before, use {@link editBootstrapObjects}. Throws for an object the spoke
   * renders none of (a Secret or bootstrap of local-cluster, an invalid name, a duplicate spoke), or more
   * than one of (give `name`).
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return this.objectFor(query, renderedObjectCall(query));
  }

  /** {@link renderedObject}, for the hatch `hatch` (how synth names it if the object is then not rendered). */
  private objectFor(query: RenderedObjectQuery, hatch: string): ApiObject {
    const spoke = spokeNameOf(query?.spoke);
    if (spoke !== undefined && spoke !== this.name)
      throw new Error(
        `${this.node.path}: ${renderedObjectCall(query)}: spoke "${this.name}" renders objects for itself only: leave spoke out, or ask spoke "${spoke}"`,
      );
    if (query?.kind === 'Secret' && !this.secret)
      throw new Error(
        `${this.node.path}: spoke "${this.name}" renders no cluster Secret (local-cluster, an invalid name, a duplicate spoke, or a GitOpsCluster registers the cluster)`,
      );
    if (query?.kind === 'ManifestWork') this.bootstrapObject();
    const obj = pickRendered(this, query, {
      what: `spoke "${this.name}"`,
      kinds: ['Secret', 'ManifestWork'],
      objects: heldObjects(this, () => this.name),
      later: `its plain bootstrap objects (dist/${this.hub.name}/bootstrap/${this.name}.yaml) exist once the fleet renders: edit them with editBootstrapObjects((objects) => ...), which runs when they are rendered`,
    });
    if (obj === this.secret) this.secretHandedOut ??= hatch;
    return obj;
  }

  /**
   * Escape hatch: the Argo CD cluster Secret on the hub (`dist/<hub>/hub/cluster-secrets.yaml`), created
   * with the spoke: read it at any time. A GitOpsCluster whose placement selects the spoke registers the
   * cluster itself, and then the fleet renders no Secret for it: edits made here would be lost, so synth
   * reports that as a problem. Throws for a spoke that renders none, as far as the spoke knows
   * (local-cluster, an invalid name, a duplicate), and, once the fleet rendered, for a cluster a
   * GitOpsCluster registers.
   * @deprecated use `renderedObject({ kind: 'Secret' })`, the same object.
   */
  public get clusterSecret(): ApiObject {
    return this.objectFor({ kind: 'Secret' }, 'clusterSecret');
  }

  /**
   * Escape hatch: the bootstrap ManifestWork (`dist/<hub>/hub/works/<spoke>.yaml`), created with the
   * spoke and filled in when the fleet renders: read it at any time. Throws for a spoke that renders no
   * bootstrap (local-cluster, an invalid name, a duplicate).
   * @deprecated use `renderedObject({ kind: 'ManifestWork' })`, the same object.
   */
  public get bootstrapWork(): ApiObject {
    return this.renderedObject({ kind: 'ManifestWork' });
  }

  /**
   * The bootstrap objects as plain YAML for the first manual apply (`dist/<hub>/bootstrap/<spoke>.yaml`),
   * in order. Which objects there are depends on every app delivered to the spoke, so they exist only once
   * the fleet rendered: before that this throws; change them with {@link editBootstrapObjects}, which
   * runs when they are rendered. Throws for a spoke that renders no bootstrap, like {@link bootstrapWork}.
   * @deprecated once the fleet rendered, each is `renderedObject({ kind, name })`, the same object; before,
   * change them with {@link editBootstrapObjects}.
   */
  public get bootstrapObjects(): ApiObject[] {
    this.bootstrapObject();
    if (!fleetRendered(this))
      throw new Error(
        `${this.node.path}: spoke.bootstrapObjects exist once the fleet renders (they depend on every app delivered to spoke "${this.name}"): change them with spoke.editBootstrapObjects((objects) => ...), which runs when they are rendered`,
      );
    return this.bootstrapScope!.node.children.filter((c): c is ApiObject => ApiObject.isApiObject(c));
  }

  /**
   * Escape hatch for the bootstrap objects as plain YAML ({@link bootstrapObjects}): `edit` runs when the
   * fleet renders them, with the objects in order, so call it at any time before synth. Patches here do
   * not reach the bootstrap ManifestWork, which holds copies ({@link bootstrapWork}). Throws for a spoke
   * that renders no bootstrap, and after the fleet rendered.
   */
  public editBootstrapObjects(edit: (objects: ApiObject[]) => void): void {
    this.bootstrapObject();
    assertNotRendered(this, 'editBootstrapObjects(...) called');
    this.bootstrapEdits.push(edit);
  }

  /** The bootstrap ManifestWork; throws for a spoke that renders no bootstrap. */
  private bootstrapObject(): ApiObject {
    if (!this.bootstrapWorkObject)
      throw new Error(
        `${this.node.path}: spoke "${this.name}" renders no bootstrap (local-cluster, an invalid name or a duplicate spoke)`,
      );
    return this.bootstrapWorkObject;
  }

  /**
   * What the spoke runs: each component from the spoke's own `versions` (and `kubernetesVersion`), else from
   * the cluster sets it is a member of (`spokeVersions`), else from the hub (`versions.spokes`); Kubernetes
   * also from the OpenShift release. Known once the whole hub is declared. Undeclared components are absent.
   */
  public get versions(): SpokeVersions {
    const { from: _from, ...versions } = this._resolvedVersions().versions;
    return versions;
  }

  /** @internal the resolved versions, where each came from, and the problems of resolving them. */
  public _resolvedVersions(): ReturnType<typeof resolveSpokeVersions> {
    const sets: VersionSource[] = this.hub.clusterSets
      .filter((set) => set.isMember(this))
      .flatMap((set) => {
        const versions = (set as { spokeVersions?: SpokeVersions }).spokeVersions;
        return versions ? [{ name: `cluster set "${set.name}"`, versions }] : [];
      });
    const hubVersions = (this.hub as { versions?: { spokes?: SpokeVersions } }).versions?.spokes;
    return resolveSpokeVersions(
      [
        [{ name: `spoke "${this.name}"`, versions: this.ownVersions }],
        sets,
        hubVersions ? [{ name: `hub "${this.hub.name}"`, versions: hubVersions }] : [],
      ],
      this.openshift,
    );
  }

  /** Effective ManagedCluster labels (a copy). */
  public get labels(): Record<string, string> {
    return { ...this.labelMap };
  }

  /**
   * Where the spoke's Argo CD comes from: the add-on of the (first) GitOpsCluster whose placement selects
   * the spoke offline, else the hub flavour's usual install. Known once the whole hub is declared.
   */
  private get argoSetup(): SpokeArgoSetup {
    const fromGitOpsCluster = this.parts.registry.spokeArgoSetupOf(this.name);
    if (fromGitOpsCluster) return fromGitOpsCluster;
    return this.parts.settings.flavor === HubFlavor.ACM
      ? { kind: 'openshift-gitops', namespace: this.hub.argoNamespace }
      : { kind: 'upstream', namespace: this.hub.argoNamespace };
  }

  /** Service account of the spoke's Argo CD application controller: the prop, else what installs the spoke's Argo CD (a GitOpsCluster add-on that selects the spoke, or the hub flavour's usual install). */
  public get argoControllerServiceAccount(): string {
    return this.controllerOverride.serviceAccount ?? spokeArgoController(this.argoSetup).serviceAccount;
  }

  /** Namespace of that service account: the prop, else where that Argo CD runs. */
  public get argoControllerNamespace(): string {
    return this.controllerOverride.namespace ?? spokeArgoController(this.argoSetup).namespace;
  }

  /** This spoke as offline placement evaluation sees it. */
  public inventoryEntry(): InventoryCluster {
    const sets = this.hub.clusterSets.filter((set) => set.isMember(this)).map((set) => set.name);
    return { name: this.name, labels: this.labels, claims: { ...this.claims }, clusterSets: sets, taints: this.taints };
  }

  /**
   * The delivery model of this spoke: the model of the GitOpsCluster whose placement selects it
   * (evaluated offline), else basic. Known once the whole hub is declared: read earlier, it reflects
   * what is declared so far.
   */
  public get deliveryModel(): DeliveryModel {
    return this.parts.ledger.decisionFor(this.name).model;
  }

  /**
   * Moves this spoke to `model` without an outage, in two synths (two commits) that synth enforces from
   * the previous output: basic → agent-autonomous keeps its works with `deleteOption: Orphan` first, then
   * drops them while the spoke folder takes the Applications; basic → agent-managed takes three: the works
   * take the resources finalizer off the spoke Applications, then go (deleting them, nothing pruned), then
   * the agent creates its own copies; agent → basic renders the works with Orphan first, then Foreground. Change the placements so a GitOpsCluster of `model` selects the spoke (or none, for
   * basic), call this, and remove it once `pullfleet plan` says the move is complete.
   */
  public moveTo(model: EnumValue<DeliveryModel>): void {
    assertNotRendered(this, `moveTo(${JSON.stringify(model)}) called`);
    const target = enumMember(model);
    if (!Object.values(DeliveryModel).includes(target)) {
      this.problems.push(
        `moveTo(${JSON.stringify(model)}): not a delivery model; use DeliveryModel.BASIC, DeliveryModel.AGENT_MANAGED or DeliveryModel.AGENT_AUTONOMOUS`,
      );
      return;
    }
    if (this.moveTarget !== undefined && this.moveTarget !== target) {
      this.problems.push(
        `moveTo(${target}) after moveTo(${this.moveTarget}): a spoke moves to one model at a time: keep one moveTo call`,
      );
      return;
    }
    this.moveTarget = target;
  }

  /** An app deploys here (namespace, RBAC grants, project and repositories). */
  private addDelivery(delivery: SpokeDelivery): void {
    // An app with an invalid destination namespace reports it itself; its spokes get nothing from it,
    // rather than a nameless Namespace reported again under every spoke.
    if (dnsLabelProblem(delivery.namespace) !== undefined) return;
    this.deliveries.push(delivery);
  }

  private renderBootstrap(): void {
    const { model, gitOpsCluster } = this.parts.ledger.decisionFor(this.name);
    // A GitOpsCluster registers its clusters itself (ACM: blank secrets; OCM: the agent add-on).
    if (gitOpsCluster && this.secret) {
      this.node.findChild('ClusterSecret').node.tryRemoveChild('Secret');
      this.secret = undefined;
      const hatch = this.secretHandedOut;
      if (hatch !== undefined)
        recordProblem(
          this,
          this.node.path,
          `${hatch}: GitOpsCluster ${gitOpsCluster} selects spoke "${this.name}" and registers the cluster with the hub Argo CD itself, so the fleet renders no cluster Secret for it and the edits made through ${hatch} would be lost: remove the use of ${hatch} for this spoke`,
        );
    }
    const scope = this.bootstrapScope!;
    const kubernetesVersion = this._resolvedVersions().versions.kubernetes;
    const objects = buildSpokeBootstrap({
      cluster: this.name,
      argoNamespace: this.hub.argoNamespace,
      openshift: this.openshift,
      ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
      argoControllerServiceAccount: this.argoControllerServiceAccount,
      argoControllerNamespace: this.argoControllerNamespace,
      namespaces: this.deliveries,
    });
    if (model === DeliveryModel.AGENT_AUTONOMOUS) {
      const source = this.parts.registry.gitOpsClusterAt(gitOpsCluster)?.spokeFolderSource;
      if (source)
        objects.push(buildSpokeFolderApplication(source, this.hub.name, this.name, this.hub.argoNamespace) as never);
    }
    const manifests: JsonObject[] = [];
    const rendered: ApiObject[] = [];
    for (const obj of objects) {
      const id = `${obj.kind}-${obj.metadata.namespace ? `${obj.metadata.namespace}-` : ''}${obj.metadata.name}`;
      obj.metadata.annotations = {
        ...(obj.metadata.annotations ?? {}),
        [CONSTRUCT_PATH_ANNOTATION]: `${scope.node.path}/${id}`,
      };
      rendered.push(apiObjectFrom(scope, id, obj));
      manifests.push(obj);
    }
    const work = this.bootstrapWorkObject!;
    fillObject(work, buildBootstrapWork(this.name, manifests, work.node.path));
    for (const edit of this.bootstrapEdits) edit([...rendered]);
  }
}
