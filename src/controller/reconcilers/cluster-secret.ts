/**
 * The cluster-Secret duty: a blank Argo CD cluster Secret for every ManagedCluster that a pull ApplicationSet's
 * Placement selects (so the clusterDecisionResource generator keeps its decisions). Only Secrets carrying the
 * controller's own label are ever changed, and one is deleted only when its ManagedCluster is gone.
 *
 * Each Secret it owns also mirrors the live ManagedCluster labels the pull ApplicationSets' templates read
 * (`SpokeParam.label`), and carries `pullfleet.io/cluster` once the matrix of those ApplicationSets may select it
 * (`mirrorSpokeLabels`; docs/concepts/per-spoke-values.md). Secrets synth renders are not touched.
 *
 * Clusters a GitOpsCluster serves get no Secret from here: ACM's controller (v1beta1) writes its own for
 * its placement's clusters and refuses a cluster that already has one it did not create, and the OCM
 * agent add-on (v1alpha1) registers each agent as a cluster Secret. GitOpsClusters are listed on every
 * run (either flavour, whichever the hub serves; no informer, so a hub without the CRD runs as before).
 */
import { CONTROLLER_OWNED_LABEL, isHubItself, LOCAL_CLUSTER, PLACEMENT_LABEL } from '../../model/core/keys.js';
import { canonicalJson } from '../../model/core/canonical-json.js';
import { type KubeObject } from '../../model/core/types.js';
import {
  buildClusterSecret,
  isSpokeLabelMirrorKey,
  mirrorSpokeLabels,
  pullPlacements,
  spokeLabelReaders,
  type ApplicationSetLike,
  type PlacementDecisionLike,
  type SpokeLabelMirror,
} from '../../model/delivery/cluster-secret.js';
import { KubeApiError } from '../../kube/client.js';
import type { Reconciler, ReconcilerContext } from '../runtime/reconciler.js';
import {
  APPLICATION_SET,
  CLUSTER_SECRET_SELECTOR,
  MANAGED_CLUSTER,
  PLACEMENT_DECISION,
  SECRET,
  type ResourceKind,
} from '../../kube/resources.js';

/** The single key this reconciler works on: the whole set of cluster Secrets is one unit. */
export const CLUSTER_SECRETS_KEY = 'cluster-secrets';

interface ManagedClusterLike extends KubeObject {
  metadata: KubeObject['metadata'] & { labels?: Record<string, string> };
}

interface SecretLike extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** The GitOpsCluster CRD in the flavour each hub may serve: ACM's v1beta1 first, then OCM's v1alpha1. */
export const GITOPS_CLUSTER_KINDS: readonly ResourceKind[] = ['v1beta1', 'v1alpha1'].map((version) => ({
  id: `GitOpsCluster/${version}`,
  group: 'apps.open-cluster-management.io',
  version,
  kind: 'GitOpsCluster',
  plural: 'gitopsclusters',
  namespaced: true,
}));

/** A GitOpsCluster of either flavour; only what decides which clusters it registers is typed. */
export interface GitOpsClusterLike extends KubeObject {
  spec?: {
    placementRef?: { name?: string; kind?: string };
    createBlankClusterSecrets?: boolean;
    gitopsAddon?: { enabled?: boolean; argoCDAgent?: { enabled?: boolean; mode?: string } };
    argoCDAgentAddon?: { mode?: string };
  };
}

/**
 * Reads the hub's GitOpsClusters: the list, or undefined when the CRD is not installed (neither version
 * served). Other failures throw, so no Secret is written while it is unknown who registers a cluster.
 */
export type GitOpsClusterLister = () => Promise<GitOpsClusterLike[] | undefined>;

/** How long an absent GitOpsCluster CRD is taken as absent before asking again. */
export const GITOPS_CLUSTER_ABSENT_TTL_MS = 30_000;

/**
 * A lister over the API: every served version is listed (a CRD may serve both, and a server may answer an
 * unserved version with an empty list), and the views are kept side by side (a cluster is left to the
 * GitOpsCluster if any view says so). An absent CRD is asked about again after the TTL.
 */
export function apiGitOpsClusterLister(
  reader: NonNullable<ReconcilerContext['reader']>,
  timeoutMs: number,
  now: () => number = Date.now,
): GitOpsClusterLister {
  let absentUntil = 0;
  return async () => {
    if (now() < absentUntil) return undefined;
    let served = false;
    const items: GitOpsClusterLike[] = [];
    for (const kind of GITOPS_CLUSTER_KINDS) {
      try {
        items.push(...(await reader.list<GitOpsClusterLike>(kind, {}, 500, { timeoutMs })).items);
        served = true;
      } catch (error) {
        if (error instanceof KubeApiError && error.statusCode === 404) continue;
        if (error instanceof KubeApiError && error.statusCode === 403) {
          throw new Error(
            `not allowed to list gitopsclusters.apps.open-cluster-management.io (403): apply this hub's controller install again (its ClusterRole grants get/list/watch on gitopsclusters); no cluster Secret is written until then: ${error.message}`,
          );
        }
        throw error;
      }
    }
    if (served) return items;
    absentUntil = now() + GITOPS_CLUSTER_ABSENT_TTL_MS;
    return undefined;
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
 * The clusters GitOpsClusters register: the decisions of each one's Placement, looked up in the
 * GitOpsCluster's own namespace (the only place its controller looks).
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
export function secretClusterName(secret: SecretLike): string | undefined {
  return secret.stringData?.name ?? decode(secret.data?.name);
}

export function createClusterSecretReconciler(
  context: ReconcilerContext,
  options: { listGitOpsClusters?: GitOpsClusterLister } = {},
): Reconciler | undefined {
  const { cache, writer, config, logger } = context;
  if (!config.clusterSecrets) return undefined;
  const all = () => [CLUSTER_SECRETS_KEY];
  const listGitOpsClusters: GitOpsClusterLister =
    options.listGitOpsClusters ??
    (context.reader
      ? apiGitOpsClusterLister(context.reader, config.requestTimeoutSeconds * 1000)
      : () => Promise.resolve(undefined));

  /** What was last logged about each cluster's mirrors, so a warning is logged when it changes, not every run. */
  const mirrorWarnings = new Map<string, string>();
  function warnMirrors(cluster: string, secret: string, mirror: SpokeLabelMirror): void {
    if (!mirror.held.length && !mirror.missing.length && !mirror.problem) {
      mirrorWarnings.delete(cluster);
      return;
    }
    const state = canonicalJson({ held: mirror.held, missing: mirror.selectable ? mirror.missing : [] });
    const waiting = !mirror.selectable && mirror.missing.length > 0 ? canonicalJson(mirror.missing) : '';
    const text = `${state}|${waiting}|${mirror.problem ?? ''}`;
    if (mirrorWarnings.get(cluster) === text) return;
    mirrorWarnings.set(cluster, text);
    if (mirror.held.length)
      logger.warn(
        { cluster, secret, labels: mirror.held },
        'the ManagedCluster lost labels pull ApplicationSets read: their mirrors on its cluster Secret keep the last value (removing them would put the unreplaced {{...}} text into its Applications); give the cluster the labels again, or stop reading them',
      );
    if (mirror.selectable && mirror.missing.length)
      logger.warn(
        { cluster, secret, labels: mirror.missing },
        'a pull ApplicationSet deciding this cluster reads labels it does not have: its Applications for the cluster carry the unreplaced {{...}} text; give the ManagedCluster the labels',
      );
    if (waiting)
      logger.warn(
        { cluster, secret, labels: mirror.missing },
        'a pull ApplicationSet deciding this cluster reads labels it does not have: its cluster Secret is not made selectable (pullfleet.io/cluster), so no Application reading spoke labels is generated for it until the ManagedCluster has them',
      );
    if (mirror.problem) logger.warn({ cluster, secret }, mirror.problem);
  }

  async function reconcile(): Promise<void> {
    // The hub itself gets no cluster Secret, whatever it is named.
    const live = new Map(
      cache
        .list<ManagedClusterLike>(MANAGED_CLUSTER.id)
        .filter((cluster) => !isHubItself(cluster.metadata.name, cluster.metadata.labels))
        .map((cluster) => [cluster.metadata.name, cluster]),
    );
    const clusters = new Set(live.keys());
    const appSets = cache.list<ApplicationSetLike>(APPLICATION_SET.id);
    const placements = pullPlacements(appSets);
    const decisions = cache.list<PlacementDecisionLike>(PLACEMENT_DECISION.id);
    const readers = spokeLabelReaders(appSets, decisions);
    const mirrorOf = (cluster: string, secretLabels: Record<string, string>): SpokeLabelMirror =>
      mirrorSpokeLabels({
        cluster,
        secretLabels,
        clusterLabels: live.get(cluster)?.metadata.labels ?? {},
        readKeys: readers.readKeys,
        ...(readers.requiredKeys.has(cluster) ? { requiredKeys: readers.requiredKeys.get(cluster) } : {}),
      });
    const gitOpsClusters = await listGitOpsClusters();
    const served = gitOpsClusterServed(gitOpsClusters ?? [], decisions);
    const wanted = new Set<string>();
    for (const decision of decisions) {
      const placement = decision.metadata.labels?.[PLACEMENT_LABEL];
      if (!placement || !placements.has(`${decision.metadata.namespace}/${placement}`)) continue;
      for (const entry of decision.status?.decisions ?? []) {
        if (entry.clusterName && entry.clusterName !== LOCAL_CLUSTER && clusters.has(entry.clusterName))
          wanted.add(entry.clusterName);
      }
    }

    const secrets = cache
      .list<SecretLike>(SECRET.id)
      .filter((secret) => secret.metadata.namespace === config.argoNamespace);
    const byName = new Map(secrets.map((secret) => [secret.metadata.name, secret]));
    const registered = new Map<string, SecretLike[]>();
    for (const secret of secrets) {
      const cluster = secretClusterName(secret);
      if (cluster) registered.set(cluster, [...(registered.get(cluster) ?? []), secret]);
    }

    /** The labels of Secrets applied in this run, as the server stored them. */
    const written = new Map<string, Record<string, string>>();
    for (const cluster of [...wanted].sort()) {
      const blank = buildClusterSecret(cluster, config.argoNamespace, { [CONTROLLER_OWNED_LABEL]: 'true' });
      const holders = registered.get(cluster) ?? [];
      const gitOpsCluster = served.get(cluster);
      if (gitOpsCluster) {
        // The GitOpsCluster's controller registers it. A Secret of ours made before is kept (removing it would
        // make the ApplicationSet drop the cluster's Applications); it is no longer updated.
        if (holders.some((secret) => secret.metadata.labels?.[CONTROLLER_OWNED_LABEL] === 'true')) {
          logger.warn(
            { cluster, gitOpsCluster },
            'cluster is registered by a GitOpsCluster but still has a pullfleet cluster Secret: kept; delete it by hand once the GitOpsCluster controller has registered the cluster',
          );
        }
        continue;
      }
      if (holders.some((secret) => secret.metadata.labels?.[CONTROLLER_OWNED_LABEL] !== 'true')) continue; // someone else registers it
      const existing = byName.get(blank.metadata.name);
      if (existing && existing.metadata.labels?.[CONTROLLER_OWNED_LABEL] !== 'true') {
        logger.warn(
          { secret: `${config.argoNamespace}/${blank.metadata.name}`, cluster },
          'a Secret of that name exists and is not ours: leaving it alone',
        );
        continue;
      }
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
      if (upToDate) continue;
      // The blank Secret's labels and the spoke-label mirrors (of what it carries now, or of nothing when new).
      const mirror = mirrorOf(cluster, { ...(existing?.metadata.labels ?? {}), ...blank.metadata.labels });
      const managed = Object.entries(mirror.labels).filter(
        ([key]) => key in (blank.metadata.labels ?? {}) || isSpokeLabelMirrorKey(key),
      );
      const desired = { ...blank, metadata: { ...blank.metadata, labels: Object.fromEntries(managed) } };
      const { stringData: _ignored, ...rest } = desired;
      const stored = await writer.apply(SECRET, { ...rest, data } as KubeObject);
      written.set(desired.metadata.name, stored.metadata.labels ?? {});
      warnMirrors(cluster, `${config.argoNamespace}/${desired.metadata.name}`, mirror);
      logger.info({ cluster }, 'wrote blank cluster Secret');
    }

    // Every Secret of ours whose ManagedCluster exists follows that cluster's labels (one patch, only on a difference).
    for (const secret of secrets) {
      const labels = written.get(secret.metadata.name) ?? secret.metadata.labels ?? {};
      if (labels[CONTROLLER_OWNED_LABEL] !== 'true') continue;
      const cluster = secretClusterName(secret);
      if (!cluster || !clusters.has(cluster)) continue;
      const mirror = mirrorOf(cluster, labels);
      warnMirrors(cluster, `${config.argoNamespace}/${secret.metadata.name}`, mirror);
      if (!mirror.patch) continue;
      await writer.mergePatch(SECRET, secret.metadata.namespace, secret.metadata.name, {
        metadata: { labels: mirror.patch },
      });
      logger.info({ cluster, secret: secret.metadata.name, labels: mirror.patch }, 'updated spoke-label mirrors');
    }

    for (const secret of secrets) {
      if (secret.metadata.labels?.[CONTROLLER_OWNED_LABEL] !== 'true') continue;
      const cluster = secretClusterName(secret);
      if (cluster && clusters.has(cluster)) continue;
      if (cluster) mirrorWarnings.delete(cluster);
      await writer.delete(
        SECRET,
        secret.metadata.namespace,
        secret.metadata.name,
        secret.metadata.uid ? { uid: secret.metadata.uid } : {},
      );
      logger.info({ cluster, secret: secret.metadata.name }, 'deleted cluster Secret of a ManagedCluster that is gone');
    }
  }

  return {
    name: 'cluster-secrets',
    workers: 1,
    watches: [
      { kind: APPLICATION_SET, keysFor: all },
      { kind: PLACEMENT_DECISION, keysFor: all },
      // Which ManagedClusters exist and their labels (mirrored): status updates (every agent, all the time) change nothing.
      {
        kind: MANAGED_CLUSTER,
        keysFor: (object, previous, type) =>
          (type ?? (previous ? 'update' : 'add')) === 'update' &&
          canonicalJson(object.metadata.labels) === canonicalJson(previous?.metadata.labels)
            ? []
            : all(),
      },
      {
        kind: SECRET,
        scope: { namespace: config.argoNamespace, labelSelector: CLUSTER_SECRET_SELECTOR },
        keysFor: all,
      },
    ],
    resyncKeys: all,
    reconcile,
  };
}
