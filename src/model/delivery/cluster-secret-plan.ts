/**
 * What the cluster-Secret duty writes, decided from what the hub holds (pure; the reconciler in
 * src/controller/reconcilers/cluster-secret.ts reads the cache, calls {@link planClusterSecrets} and writes what it
 * returns).
 *
 * - Every ManagedCluster (not the hub itself) a pull ApplicationSet's Placement decides gets a blank cluster
 *   Secret carrying the controller's label, unless a GitOpsCluster registers it, another Secret registers it,
 *   or a Secret of that name exists that is not the controller's.
 * - Every Secret of the controller's whose ManagedCluster exists mirrors the labels pull ApplicationSets read
 *   ({@link mirrorSpokeLabels}); a Secret written in the same run is judged on the labels the server stored.
 * - A Secret of the controller's is deleted only when its ManagedCluster is gone.
 */
import { canonicalJson } from '../core/canonical-json.js';
import { CONTROLLER_OWNED_LABEL, isHubItself, LOCAL_CLUSTER, PLACEMENT_LABEL } from '../core/keys.js';
import type { KubeObject } from '../core/types.js';
import {
  buildClusterSecret,
  isSpokeLabelMirrorKey,
  mirrorSpokeLabels,
  pullPlacements,
  spokeLabelReaders,
  type ApplicationSetLike,
  type PlacementDecisionLike,
  type SpokeLabelMirror,
} from './cluster-secret.js';

/** A ManagedCluster as the cluster-Secret duty reads it. */
export interface ManagedClusterLike extends KubeObject {
  metadata: KubeObject['metadata'] & { labels?: Record<string, string> };
}

/** A Secret as the cluster-Secret duty reads it. */
export interface ClusterSecretLike extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** A GitOpsCluster of either flavour; only what decides which clusters it registers is typed. */
export interface GitOpsClusterLike extends KubeObject {
  spec?: {
    placementRef?: { name?: string; kind?: string };
    createBlankClusterSecrets?: boolean;
    gitopsAddon?: { enabled?: boolean; argoCDAgent?: { enabled?: boolean; mode?: string } };
    argoCDAgentAddon?: { mode?: string };
  };
}

/** Whether a GitOpsCluster registers its placement's clusters itself (so pullfleet must not). */
export function registersClusterSecrets(gitOpsCluster: GitOpsClusterLike): boolean {
  const spec = gitOpsCluster.spec ?? {};
  // OCM v1alpha1: the agent add-on registers every agent. ACM v1beta1: the controller writes a Secret for
  // every cluster of the placement (blank ones with createBlankClusterSecrets, agent ones with the agent).
  return (
    spec.argoCDAgentAddon !== undefined ||
    gitOpsCluster.apiVersion?.endsWith('/v1beta1') === true ||
    spec.createBlankClusterSecrets === true ||
    spec.gitopsAddon?.argoCDAgent?.enabled === true
  );
}

/**
 * The clusters GitOpsClusters register, each with the GitOpsCluster (`<namespace>/<name>`) that does: the
 * decisions of each one's Placement, looked up in the GitOpsCluster's own namespace (the only place its
 * controller looks).
 */
export function gitOpsClusterServed(
  gitOpsClusters: readonly GitOpsClusterLike[],
  decisions: readonly PlacementDecisionLike[],
): Map<string, string> {
  const placements = new Map<string, string>();
  for (const gitOpsCluster of gitOpsClusters) {
    const placement = gitOpsCluster.spec?.placementRef?.name;
    if (!placement || !registersClusterSecrets(gitOpsCluster)) continue;
    placements.set(
      `${gitOpsCluster.metadata.namespace}/${placement}`,
      `${gitOpsCluster.metadata.namespace}/${gitOpsCluster.metadata.name}`,
    );
  }
  const served = new Map<string, string>();
  for (const decision of decisions) {
    const owner = placements.get(`${decision.metadata.namespace}/${decision.metadata.labels?.[PLACEMENT_LABEL] ?? ''}`);
    if (!owner) continue;
    for (const entry of decision.status?.decisions ?? [])
      if (entry.clusterName && !served.has(entry.clusterName)) served.set(entry.clusterName, owner);
  }
  return served;
}

function decode(value: string | undefined): string | undefined {
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/** The cluster name a cluster Secret registers. */
export function secretClusterName(secret: ClusterSecretLike): string | undefined {
  return secret.stringData?.name ?? decode(secret.data?.name);
}

/** Whether a Secret carries the controller's own label (only those are ever changed or deleted). */
function isOurs(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[CONTROLLER_OWNED_LABEL] === 'true';
}

/** What the cluster-Secret duty reads from the hub. */
export interface ClusterSecretWorld {
  /** The hub Argo CD's namespace: the only one whose Secrets are read or written. */
  readonly argoNamespace: string;
  readonly managedClusters: readonly ManagedClusterLike[];
  readonly applicationSets: readonly ApplicationSetLike[];
  readonly decisions: readonly PlacementDecisionLike[];
  /** The hub's GitOpsClusters (none when the CRD is not installed). */
  readonly gitOpsClusters: readonly GitOpsClusterLike[];
  /** The cluster Secrets the hub holds; those outside `argoNamespace` are ignored. */
  readonly secrets: readonly ClusterSecretLike[];
}

/** One decision about a cluster that pull ApplicationSets decide, in cluster name order. */
export type ClusterSecretStep =
  /** Write the blank Secret (server-side apply): it is missing or out of date. */
  | { readonly kind: 'apply'; readonly cluster: string; readonly secret: KubeObject; readonly mirror: SpokeLabelMirror }
  /** A GitOpsCluster registers the cluster but a Secret of the controller's from before is still there: kept. */
  | { readonly kind: 'kept'; readonly cluster: string; readonly gitOpsCluster: string }
  /** A Secret of the blank Secret's name exists and is not the controller's: left alone. */
  | { readonly kind: 'name-taken'; readonly cluster: string; readonly secret: string };

/** The spoke-label mirrors of one Secret of the controller's whose ManagedCluster exists. */
export interface ClusterSecretMirrorStep {
  readonly cluster: string;
  readonly secret: ClusterSecretLike;
  /** What the Secret should carry; `mirror.patch` is the merge patch of its labels, if any. */
  readonly mirror: SpokeLabelMirror;
}

/** Everything the cluster-Secret duty writes in one run, in the order it writes it. */
export interface ClusterSecretPlan {
  /** Per cluster pull ApplicationSets decide (sorted), what becomes of its Secret; up-to-date ones are left out. */
  readonly steps: readonly ClusterSecretStep[];
  /**
   * The mirror steps of the Secrets of the controller's whose ManagedCluster exists, given the labels the server
   * stored for the Secrets applied in this run (by name); the others are judged on the labels they carry.
   */
  mirrors(written: ReadonlyMap<string, Readonly<Record<string, string>>>): ClusterSecretMirrorStep[];
  /** Secrets of the controller's whose ManagedCluster is gone, with the cluster each registered. */
  readonly deletes: readonly { readonly cluster?: string; readonly secret: ClusterSecretLike }[];
}

/** The clusters pull ApplicationSets decide that exist (the hub itself, and `local-cluster`, never). */
function wantedClusters(world: ClusterSecretWorld, clusters: ReadonlySet<string>): string[] {
  const placements = pullPlacements(world.applicationSets);
  const wanted = new Set<string>();
  for (const decision of world.decisions) {
    const placement = decision.metadata.labels?.[PLACEMENT_LABEL];
    if (!placement || !placements.has(`${decision.metadata.namespace}/${placement}`)) continue;
    for (const entry of decision.status?.decisions ?? []) {
      if (entry.clusterName && entry.clusterName !== LOCAL_CLUSTER && clusters.has(entry.clusterName))
        wanted.add(entry.clusterName);
    }
  }
  return [...wanted].sort();
}

/** What one run knows about the fleet: the live clusters, the Secrets by name and cluster, and the mirrors. */
interface Survey {
  readonly world: ClusterSecretWorld;
  readonly clusters: ReadonlySet<string>;
  readonly secrets: readonly ClusterSecretLike[];
  readonly byName: ReadonlyMap<string, ClusterSecretLike>;
  readonly registered: ReadonlyMap<string, ClusterSecretLike[]>;
  readonly served: ReadonlyMap<string, string>;
  mirrorOf(cluster: string, secretLabels: Readonly<Record<string, string>>): SpokeLabelMirror;
}

function survey(world: ClusterSecretWorld): Survey {
  // The hub itself gets no cluster Secret, whatever it is named.
  const live = new Map(
    world.managedClusters
      .filter((cluster) => !isHubItself(cluster.metadata.name, cluster.metadata.labels))
      .map((cluster) => [cluster.metadata.name, cluster]),
  );
  const readers = spokeLabelReaders(world.applicationSets, world.decisions);
  const secrets = world.secrets.filter((secret) => secret.metadata.namespace === world.argoNamespace);
  const registered = new Map<string, ClusterSecretLike[]>();
  for (const secret of secrets) {
    const cluster = secretClusterName(secret);
    if (cluster) registered.set(cluster, [...(registered.get(cluster) ?? []), secret]);
  }
  return {
    world,
    clusters: new Set(live.keys()),
    secrets,
    byName: new Map(secrets.map((secret) => [secret.metadata.name, secret])),
    registered,
    served: gitOpsClusterServed(world.gitOpsClusters, world.decisions),
    mirrorOf: (cluster, secretLabels) =>
      mirrorSpokeLabels({
        cluster,
        secretLabels,
        clusterLabels: live.get(cluster)?.metadata.labels ?? {},
        readKeys: readers.readKeys,
        ...(readers.requiredKeys.has(cluster) ? { requiredKeys: readers.requiredKeys.get(cluster) } : {}),
      }),
  };
}

/** What becomes of the Secret of one cluster pull ApplicationSets decide; undefined when it is as it should be. */
function clusterStep(at: Survey, cluster: string): ClusterSecretStep | undefined {
  const namespace = at.world.argoNamespace;
  const blank = buildClusterSecret(cluster, namespace, { [CONTROLLER_OWNED_LABEL]: 'true' });
  const holders = at.registered.get(cluster) ?? [];
  const gitOpsCluster = at.served.get(cluster);
  if (gitOpsCluster) {
    // The GitOpsCluster's controller registers it. A Secret of ours made before is kept (removing it would
    // make the ApplicationSet drop the cluster's Applications); it is no longer updated.
    return holders.some((secret) => isOurs(secret.metadata.labels))
      ? { kind: 'kept', cluster, gitOpsCluster }
      : undefined;
  }
  if (holders.some((secret) => !isOurs(secret.metadata.labels))) return undefined; // someone else registers it
  const existing = at.byName.get(blank.metadata.name);
  if (existing && !isOurs(existing.metadata.labels))
    return { kind: 'name-taken', cluster, secret: `${namespace}/${blank.metadata.name}` };
  const data = {
    name: Buffer.from(blank.stringData.name).toString('base64'),
    server: Buffer.from(blank.stringData.server).toString('base64'),
  };
  const upToDate =
    existing &&
    existing.data?.name === data.name &&
    existing.data?.server === data.server &&
    Object.keys(existing.data ?? {}).length === 2 &&
    Object.entries(blank.metadata.labels ?? {}).every(([key, value]) => existing.metadata.labels?.[key] === value);
  if (upToDate) return undefined;
  // The blank Secret's labels and the spoke-label mirrors (of what it carries now, or of nothing when new).
  const mirror = at.mirrorOf(cluster, { ...(existing?.metadata.labels ?? {}), ...blank.metadata.labels });
  const managed = Object.entries(mirror.labels).filter(
    ([key]) => key in (blank.metadata.labels ?? {}) || isSpokeLabelMirrorKey(key),
  );
  const desired = { ...blank, metadata: { ...blank.metadata, labels: Object.fromEntries(managed) } };
  const { stringData: _ignored, ...rest } = desired;
  return { kind: 'apply', cluster, secret: { ...rest, data } as KubeObject, mirror };
}

/** The mirror steps of the Secrets of the controller's whose ManagedCluster exists. */
function mirrorSteps(
  at: Survey,
  written: ReadonlyMap<string, Readonly<Record<string, string>>>,
): ClusterSecretMirrorStep[] {
  const steps: ClusterSecretMirrorStep[] = [];
  for (const secret of at.secrets) {
    const labels = written.get(secret.metadata.name) ?? secret.metadata.labels ?? {};
    if (!isOurs(labels)) continue;
    const cluster = secretClusterName(secret);
    if (!cluster || !at.clusters.has(cluster)) continue;
    steps.push({ cluster, secret, mirror: at.mirrorOf(cluster, labels) });
  }
  return steps;
}

/** What the cluster-Secret duty writes for the hub as `world` shows it (see the module comment). */
export function planClusterSecrets(world: ClusterSecretWorld): ClusterSecretPlan {
  const at = survey(world);
  const steps = wantedClusters(world, at.clusters).flatMap((cluster) => clusterStep(at, cluster) ?? []);
  const deletes = at.secrets.flatMap((secret) => {
    if (!isOurs(secret.metadata.labels)) return [];
    const cluster = secretClusterName(secret);
    if (cluster && at.clusters.has(cluster)) return [];
    return [{ ...(cluster ? { cluster } : {}), secret }];
  });
  return { steps, deletes, mirrors: (written) => mirrorSteps(at, written) };
}

/** What the log should say about one Secret's spoke-label mirrors. */
export interface SpokeLabelMirrorWarnings {
  /** What the warnings are about, to log them when it changes rather than on every run; undefined when none. */
  readonly state?: string;
  /** The warnings, each with the label keys it concerns (if any). */
  readonly warnings: readonly { readonly labels?: readonly string[]; readonly message: string }[];
}

/** The warnings a Secret's spoke-label mirrors call for: labels held, labels missing, a name that is no label value. */
export function spokeLabelMirrorWarnings(mirror: SpokeLabelMirror): SpokeLabelMirrorWarnings {
  if (!mirror.held.length && !mirror.missing.length && !mirror.problem) return { warnings: [] };
  const state = canonicalJson({ held: mirror.held, missing: mirror.selectable ? mirror.missing : [] });
  const waiting = !mirror.selectable && mirror.missing.length > 0 ? canonicalJson(mirror.missing) : '';
  const warnings: { labels?: readonly string[]; message: string }[] = [];
  if (mirror.held.length)
    warnings.push({
      labels: mirror.held,
      message:
        'the ManagedCluster lost labels pull ApplicationSets read: their mirrors on its cluster Secret keep the last value (removing them would put the unreplaced {{...}} text into its Applications); give the cluster the labels again, or stop reading them',
    });
  if (mirror.selectable && mirror.missing.length)
    warnings.push({
      labels: mirror.missing,
      message:
        'a pull ApplicationSet deciding this cluster reads labels it does not have: its Applications for the cluster carry the unreplaced {{...}} text; give the ManagedCluster the labels',
    });
  if (waiting)
    warnings.push({
      labels: mirror.missing,
      message:
        'a pull ApplicationSet deciding this cluster reads labels it does not have: its cluster Secret is not made selectable (pullfleet.io/cluster), so no Application reading spoke labels is generated for it until the ManagedCluster has them',
    });
  if (mirror.problem) warnings.push({ message: mirror.problem });
  return { state: `${state}|${waiting}|${mirror.problem ?? ''}`, warnings };
}
