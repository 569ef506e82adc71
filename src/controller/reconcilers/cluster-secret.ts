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
 *
 * What to write is the model's (src/model/delivery/cluster-secret-plan.ts): this file reads the cache and the
 * GitOpsClusters, calls `planClusterSecrets` and writes what it returns.
 */
import type { Logger } from 'pino';
import { canonicalJson } from '../../model/core/canonical-json.js';
import {
  type ApplicationSetLike,
  type PlacementDecisionLike,
  type SpokeLabelMirror,
} from '../../model/delivery/cluster-secret.js';
import {
  planClusterSecrets,
  spokeLabelMirrorWarnings,
  type ClusterSecretLike,
  type GitOpsClusterLike,
  type ManagedClusterLike,
} from '../../model/delivery/cluster-secret-plan.js';
import { KubeApiError } from '../../kube/client.js';
import type { Reconciler, ReconcilerContext, WatchSpec } from '../runtime/reconciler.js';
import {
  APPLICATION_SET,
  CLUSTER_SECRET_SELECTOR,
  MANAGED_CLUSTER,
  PLACEMENT_DECISION,
  SECRET,
  type ResourceKind,
} from '../../kube/resources.js';

export {
  gitOpsClusterServed,
  registersClusterSecrets,
  secretClusterName,
  type GitOpsClusterLike,
} from '../../model/delivery/cluster-secret-plan.js';

/** The single key this reconciler works on: the whole set of cluster Secrets is one unit. */
export const CLUSTER_SECRETS_KEY = 'cluster-secrets';

/** The GitOpsCluster CRD in the flavour each hub may serve: ACM's v1beta1 first, then OCM's v1alpha1. */
export const GITOPS_CLUSTER_KINDS: readonly ResourceKind[] = ['v1beta1', 'v1alpha1'].map((version) => ({
  id: `GitOpsCluster/${version}`,
  group: 'apps.open-cluster-management.io',
  version,
  kind: 'GitOpsCluster',
  plural: 'gitopsclusters',
  namespaced: true,
}));

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

/**
 * Logs the warnings a Secret's spoke-label mirrors call for, when what they say changes rather than on every run
 * (`record`: per cluster, what was logged last).
 */
function warnMirrors(
  record: Map<string, string>,
  logger: Logger,
  cluster: string,
  secret: string,
  mirror: SpokeLabelMirror,
): void {
  const { state, warnings } = spokeLabelMirrorWarnings(mirror);
  if (state === undefined) {
    record.delete(cluster);
    return;
  }
  if (record.get(cluster) === state) return;
  record.set(cluster, state);
  for (const warning of warnings)
    logger.warn({ cluster, secret, ...(warning.labels ? { labels: warning.labels } : {}) }, warning.message);
}

/** What every run of the cluster-Secret reconciler works with. */
interface ClusterSecretRun {
  readonly context: ReconcilerContext;
  readonly listGitOpsClusters: GitOpsClusterLister;
  /** What was last logged about each cluster's mirrors, so a warning is logged when it changes, not every run. */
  readonly mirrorWarnings: Map<string, string>;
}

/** One run: read the cache (and the GitOpsClusters), plan, write what the plan says. */
async function reconcileClusterSecrets(run: ClusterSecretRun): Promise<void> {
  const { cache, writer, config, logger } = run.context;
  const namespace = config.argoNamespace;
  const managedClusters = cache.list<ManagedClusterLike>(MANAGED_CLUSTER.id);
  const applicationSets = cache.list<ApplicationSetLike>(APPLICATION_SET.id);
  const decisions = cache.list<PlacementDecisionLike>(PLACEMENT_DECISION.id);
  const gitOpsClusters = (await run.listGitOpsClusters()) ?? [];
  const secrets = cache.list<ClusterSecretLike>(SECRET.id);
  const plan = planClusterSecrets({
    argoNamespace: namespace,
    managedClusters,
    applicationSets,
    decisions,
    gitOpsClusters,
    secrets,
  });
  const warn = (cluster: string, secret: string, mirror: SpokeLabelMirror) =>
    warnMirrors(run.mirrorWarnings, logger, cluster, `${namespace}/${secret}`, mirror);

  /** The labels of Secrets applied in this run, as the server stored them. */
  const written = new Map<string, Record<string, string>>();
  for (const step of plan.steps) {
    if (step.kind === 'kept')
      logger.warn(
        { cluster: step.cluster, gitOpsCluster: step.gitOpsCluster },
        'cluster is registered by a GitOpsCluster but still has a pullfleet cluster Secret: kept; delete it by hand once the GitOpsCluster controller has registered the cluster',
      );
    else if (step.kind === 'name-taken')
      logger.warn(
        { secret: step.secret, cluster: step.cluster },
        'a Secret of that name exists and is not ours: leaving it alone',
      );
    else {
      const stored = await writer.apply(SECRET, step.secret);
      written.set(step.secret.metadata.name, stored.metadata.labels ?? {});
      warn(step.cluster, step.secret.metadata.name, step.mirror);
      logger.info({ cluster: step.cluster }, 'wrote blank cluster Secret');
    }
  }

  // Every Secret of ours whose ManagedCluster exists follows that cluster's labels (one patch, only on a difference).
  for (const { cluster, secret, mirror } of plan.mirrors(written)) {
    warn(cluster, secret.metadata.name, mirror);
    if (!mirror.patch) continue;
    await writer.mergePatch(SECRET, secret.metadata.namespace, secret.metadata.name, {
      metadata: { labels: mirror.patch },
    });
    logger.info({ cluster, secret: secret.metadata.name, labels: mirror.patch }, 'updated spoke-label mirrors');
  }

  for (const { cluster, secret } of plan.deletes) {
    if (cluster) run.mirrorWarnings.delete(cluster);
    await writer.delete(
      SECRET,
      secret.metadata.namespace,
      secret.metadata.name,
      secret.metadata.uid ? { uid: secret.metadata.uid } : {},
    );
    logger.info({ cluster, secret: secret.metadata.name }, 'deleted cluster Secret of a ManagedCluster that is gone');
  }
}

/** The events that bring the one key: ApplicationSets, decisions, ManagedClusters' labels, the cluster Secrets. */
function clusterSecretWatches(argoNamespace: string, all: () => string[]): WatchSpec[] {
  return [
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
      scope: { namespace: argoNamespace, labelSelector: CLUSTER_SECRET_SELECTOR },
      keysFor: all,
    },
  ];
}

/** The cluster-Secret reconciler (one key for the whole set); undefined when cluster Secrets are switched off. */
export function createClusterSecretReconciler(
  context: ReconcilerContext,
  options: { listGitOpsClusters?: GitOpsClusterLister } = {},
): Reconciler | undefined {
  const { config } = context;
  if (!config.clusterSecrets) return undefined;
  const all = () => [CLUSTER_SECRETS_KEY];
  const run: ClusterSecretRun = {
    context,
    listGitOpsClusters:
      options.listGitOpsClusters ??
      (context.reader
        ? apiGitOpsClusterLister(context.reader, config.requestTimeoutSeconds * 1000)
        : () => Promise.resolve(undefined)),
    mirrorWarnings: new Map(),
  };
  return {
    name: 'cluster-secrets',
    workers: 1,
    watches: clusterSecretWatches(config.argoNamespace, all),
    resyncKeys: all,
    reconcile: () => reconcileClusterSecrets(run),
  };
}
