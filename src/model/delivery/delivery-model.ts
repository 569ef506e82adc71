/**
 * The advanced pull model (argocd-agent) next to the basic one: which delivery model a spoke uses, the
 * GitOpsCluster of either flavour that selects it, and the shapes an app takes in each model.
 *
 * - basic: hub Application (skip-reconcile) + ManifestWork carrying the Application to the spoke;
 * - agent-managed: the hub (principal) owns the spec; a hub Application routed to the agent by
 *   `spec.destination.name` (argocd-agent 0.7.0 and later), no pull label, no work;
 * - agent-autonomous: the spoke owns the spec; the Application lives in a per-spoke folder the spoke's
 *   own Argo CD syncs, and the hub only shows the status the principal mirrors.
 */
import {
  ARGOCD_API_VERSION,
  CONSTRUCT_PATH_ANNOTATION,
  IN_CLUSTER_SERVER,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  PLACEMENT_API_VERSION,
  PULLFLEET_PREFIX,
} from '../core/keys.js';
import { enumMember, type Application, type JsonObject, type KubeObject } from '../core/types.js';
import { type Toleration, TolerationOperator } from '../placement/placement.js';

/** How apps reach a spoke. */
export enum DeliveryModel {
  /** Hub Application wrapped in a ManifestWork; the spoke Argo CD reconciles the copy. */
  BASIC = 'basic',
  /** argocd-agent in managed mode: the hub owns each Application's spec, the agent applies it. */
  AGENT_MANAGED = 'agent-managed',
  /** argocd-agent in autonomous mode: the spoke owns the spec (its own Git folder), the hub mirrors status. */
  AGENT_AUTONOMOUS = 'agent-autonomous',
}

/** Label on every hub Application and ApplicationSet (and its template): the delivery model. */
export const DELIVERY_MODEL_LABEL = `${PULLFLEET_PREFIX}delivery-model`;

export const GITOPS_CLUSTER_GROUP = 'apps.open-cluster-management.io';
/** The ACM flavour (argoServer, createBlankClusterSecrets, gitopsAddon). */
export const GITOPS_CLUSTER_ACM_VERSION = `${GITOPS_CLUSTER_GROUP}/v1beta1`;
/** The OCM flavour (argoCDAgentAddon). */
export const GITOPS_CLUSTER_OCM_VERSION = `${GITOPS_CLUSTER_GROUP}/v1alpha1`;

/**
 * Upstream defaults of the OCM argoCDAgentAddon (the add-on controller's namespaces). The principal's
 * address and port are left out unless given: with either missing, the upstream controller discovers
 * both from the principal's Service.
 */
export const AGENT_ADDON_DEFAULTS = {
  agentNamespace: 'argocd',
  operatorNamespace: 'argocd-operator-system',
} as const;

/** The agent mode a model runs, or undefined for basic. */
export function agentMode(model: DeliveryModel): 'managed' | 'autonomous' | undefined {
  if (model === DeliveryModel.AGENT_MANAGED) return 'managed';
  if (model === DeliveryModel.AGENT_AUTONOMOUS) return 'autonomous';
  return undefined;
}

/** True for the two argocd-agent models. */
export function isAgentDeliveryModel(model: DeliveryModel): boolean {
  return model !== DeliveryModel.BASIC;
}

export interface GitOpsClusterCommon {
  readonly name: string;
  readonly namespace: string;
  readonly placement: string;
  readonly constructPath: string;
}

export interface AcmGitOpsClusterOptions extends GitOpsClusterCommon {
  readonly argoNamespace: string;
  /** Install the spoke Argo CD through the gitops add-on. */
  readonly gitopsAddon?: {
    readonly enabled: boolean;
    readonly overrideExistingConfigs: boolean;
    readonly olmSubscription?: JsonObject;
    /** The agent, when the model is an agent model. */
    readonly argoCDAgent?: {
      readonly mode: 'managed' | 'autonomous';
      readonly serverAddress?: string;
      /** Rendered as a string, the type of the CRD field. */
      readonly serverPort?: number;
      readonly propagateHubCA: boolean;
    };
  };
}

export interface OcmGitOpsClusterOptions extends GitOpsClusterCommon {
  readonly mode: 'managed' | 'autonomous';
  readonly principalServerAddress?: string;
  /** Rendered as a string, the type of the CRD field. */
  readonly principalServerPort?: number;
  readonly agentNamespace: string;
  readonly operatorNamespace: string;
}

function gitOpsClusterMetadata(options: GitOpsClusterCommon): KubeObject['metadata'] {
  return {
    name: options.name,
    namespace: options.namespace,
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
    annotations: { [CONSTRUCT_PATH_ANNOTATION]: options.constructPath },
  };
}

/**
 * On an ACM GitOpsCluster: `"true"` stops the hub CA from being pushed to the agents' clusters. ACM 2.17
 * reads this annotation and no longer `gitopsAddon.argoCDAgent.propagateHubCA`; 2.15 and 2.16 read only the
 * field (see the upstream contract page).
 */
export const SKIP_HUB_CA_PROPAGATION_ANNOTATION = 'apps.open-cluster-management.io/skip-hub-ca-propagation';

const placementRef = (name: string): JsonObject => ({ apiVersion: PLACEMENT_API_VERSION, kind: 'Placement', name });

/** The ACM `v1beta1` GitOpsCluster: the hub Argo CD registers the placement's clusters with blank secrets. */
export function buildAcmGitOpsCluster(options: AcmGitOpsClusterOptions): KubeObject & { spec: JsonObject } {
  const spec: JsonObject = {
    argoServer: { argoNamespace: options.argoNamespace },
    placementRef: placementRef(options.placement),
    createBlankClusterSecrets: true,
  };
  const addon = options.gitopsAddon;
  if (addon) {
    const gitopsAddon: JsonObject = { enabled: addon.enabled, overrideExistingConfigs: addon.overrideExistingConfigs };
    if (addon.olmSubscription) gitopsAddon.olmSubscription = addon.olmSubscription;
    if (addon.argoCDAgent) {
      const agent = addon.argoCDAgent;
      gitopsAddon.argoCDAgent = {
        enabled: true,
        mode: agent.mode,
        ...(agent.serverAddress !== undefined ? { serverAddress: agent.serverAddress } : {}),
        ...(agent.serverPort !== undefined ? { serverPort: String(agent.serverPort) } : {}),
        propagateHubCA: agent.propagateHubCA,
      };
    }
    spec.gitopsAddon = gitopsAddon;
  }
  const metadata = gitOpsClusterMetadata(options);
  // ACM 2.17 reads only the annotation; 2.15 and 2.16 only the field: say it both ways.
  if (addon?.argoCDAgent?.propagateHubCA === false)
    metadata.annotations = { ...metadata.annotations, [SKIP_HUB_CA_PROPAGATION_ANNOTATION]: 'true' };
  return {
    apiVersion: GITOPS_CLUSTER_ACM_VERSION,
    kind: 'GitOpsCluster',
    metadata,
    spec,
  };
}

/**
 * The tolerations the OCM GitOpsCluster controller puts on the Placement it reads: a cluster that is
 * unreachable or unavailable stays selected (so its agent and its apps stay where they are). It appends
 * each one the Placement lacks, in this order, and counts one as present when a toleration with the same
 * key and operator exists, whatever its effect, value or seconds (argocd-pull-integration v0.23.0 and
 * later, `ensurePlacementTolerations`; see the upstream contract page).
 */
export const OCM_GITOPS_CLUSTER_TOLERATIONS: readonly Toleration[] = [
  { key: 'cluster.open-cluster-management.io/unreachable', operator: TolerationOperator.EXISTS },
  { key: 'cluster.open-cluster-management.io/unavailable', operator: TolerationOperator.EXISTS },
];

/**
 * The tolerations an OCM GitOpsCluster's Placement converges to, given the ones it declares: those, then
 * each of {@link OCM_GITOPS_CLUSTER_TOLERATIONS} they lack. An operator left out is OCM's default, `Equal`.
 */
export function withOcmGitOpsClusterTolerations(declared: readonly Toleration[]): Toleration[] {
  const operatorOf = (t: Toleration): TolerationOperator => enumMember(t.operator ?? TolerationOperator.EQUAL);
  const missing = OCM_GITOPS_CLUSTER_TOLERATIONS.filter(
    (required) => !declared.some((t) => t.key === required.key && operatorOf(t) === operatorOf(required)),
  );
  return [...declared.map((t) => ({ ...t })), ...missing.map((t) => ({ ...t }))];
}

/** The OCM `v1alpha1` GitOpsCluster: the argocd-agent add-on on every placement cluster. */
export function buildOcmGitOpsCluster(options: OcmGitOpsClusterOptions): KubeObject & { spec: JsonObject } {
  return {
    apiVersion: GITOPS_CLUSTER_OCM_VERSION,
    kind: 'GitOpsCluster',
    metadata: gitOpsClusterMetadata(options),
    spec: {
      placementRef: placementRef(options.placement),
      argoCDAgentAddon: {
        mode: options.mode,
        ...(options.principalServerAddress !== undefined
          ? { principalServerAddress: options.principalServerAddress }
          : {}),
        ...(options.principalServerPort !== undefined
          ? { principalServerPort: String(options.principalServerPort) }
          : {}),
        agentNamespace: options.agentNamespace,
        operatorNamespace: options.operatorNamespace,
      },
    },
  };
}

/** Name of the bootstrap Application that syncs an autonomous spoke's own folder. */
export const SPOKE_APPS_APPLICATION = 'pullfleet-spoke-apps';

/** Where an autonomous spoke's own folder lives in the fleet repository. */
export interface SpokeFolderSource {
  /** The fleet repository holding the synth output (`dist/`), which the spoke's own Argo CD syncs its folder from. */
  readonly repoURL: string;
  /** The branch, tag or commit of that repository the spoke syncs. */
  readonly targetRevision: string;
  /** The folder holding `dist/` in the repository (`dist` at its root). */
  readonly outputPath: string;
}

/** The path of a spoke's own folder: `<outputPath>/<hub>/spokes/<spoke>`. */
export function spokeFolderPath(source: SpokeFolderSource, hub: string, spoke: string): string {
  return `${source.outputPath.replace(/\/+$/, '')}/${hub}/spokes/${spoke}`;
}

/**
 * The bootstrap Application of an autonomous spoke: its own Argo CD syncs its own folder (no pruning
 * of Applications removed from the folder until the user says so: `prune: false`).
 */
export function buildSpokeFolderApplication(
  source: SpokeFolderSource,
  hub: string,
  spoke: string,
  argoNamespace: string,
): Application {
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata: {
      name: SPOKE_APPS_APPLICATION,
      namespace: argoNamespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [DELIVERY_MODEL_LABEL]: DeliveryModel.AGENT_AUTONOMOUS },
    },
    spec: {
      project: 'default',
      source: {
        repoURL: source.repoURL,
        targetRevision: source.targetRevision,
        path: spokeFolderPath(source, hub, spoke),
        directory: { recurse: true },
      },
      destination: { server: IN_CLUSTER_SERVER, namespace: argoNamespace },
      syncPolicy: { automated: { prune: false, selfHeal: true } },
    },
  };
}

/**
 * The hub AppProject an agent-managed project needs on the principal: the destinations by agent name,
 * the sources of its apps.
 */
export function buildAgentAppProject(
  project: string,
  argoNamespace: string,
  entries: ReadonlyArray<{ cluster: string; namespace: string; sourceRepos: readonly string[] }>,
): KubeObject & { spec: JsonObject } {
  const destinations = new Map<string, { name: string; namespace: string }>();
  const repos = new Set<string>();
  for (const e of entries) {
    destinations.set(`${e.cluster}/${e.namespace}`, { name: e.cluster, namespace: e.namespace });
    e.sourceRepos.forEach((r) => repos.add(r));
  }
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'AppProject',
    metadata: {
      name: project,
      namespace: argoNamespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [DELIVERY_MODEL_LABEL]: DeliveryModel.AGENT_MANAGED },
    },
    spec: {
      sourceRepos: [...repos].sort(),
      destinations: [...destinations.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d),
    },
  };
}

/** One GitOpsCluster as the model check sees it. */
export interface GitOpsClusterSelection {
  readonly path: string;
  readonly model: DeliveryModel;
  readonly spokes: readonly string[];
}

/**
 * Each spoke's model from the GitOpsClusters selecting it (else basic), and a problem for every spoke
 * two GitOpsClusters of different modes select, naming both.
 */
export function resolveDeliveryModels(selections: readonly GitOpsClusterSelection[]): {
  models: Map<string, { model: DeliveryModel; path: string }>;
  problems: Array<{ path: string; message: string }>;
} {
  const models = new Map<string, { model: DeliveryModel; path: string }>();
  const problems: Array<{ path: string; message: string }> = [];
  for (const sel of selections) {
    for (const spoke of sel.spokes) {
      const prior = models.get(spoke);
      if (!prior) {
        models.set(spoke, { model: sel.model, path: sel.path });
      } else if (prior.model !== sel.model) {
        problems.push({
          path: sel.path,
          message: `spoke "${spoke}" is selected by GitOpsCluster ${prior.path} (${prior.model}) and by ${sel.path} (${sel.model}): a spoke runs one delivery model; narrow one of the two placements`,
        });
      }
    }
  }
  return { models, problems };
}
