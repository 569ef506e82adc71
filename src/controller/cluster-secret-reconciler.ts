/**
 * Duty 3: a blank Argo CD cluster Secret for every ManagedCluster that a pull ApplicationSet's Placement
 * selects (so the clusterDecisionResource generator keeps its decisions). Only Secrets carrying the
 * controller's own label are ever changed, and one is deleted only when its ManagedCluster is gone.
 */
import {
  CONTROLLER_OWNED_LABEL,
  LOCAL_CLUSTER,
  PLACEMENT_LABEL,
  PULL_LABEL,
  buildClusterSecret,
  parseBool,
  type KubeObject,
} from '../model/index.js';
import type { Reconciler, ReconcilerContext } from './reconciler.js';
import { APPLICATION_SET, CLUSTER_SECRET_SELECTOR, MANAGED_CLUSTER, PLACEMENT_DECISION, SECRET } from './resources.js';

/** The single key this reconciler works on: the whole set of cluster Secrets is one unit. */
export const CLUSTER_SECRETS_KEY = 'cluster-secrets';

interface Generator {
  clusterDecisionResource?: { labelSelector?: { matchLabels?: Record<string, string> } };
  matrix?: { generators?: Generator[] };
  merge?: { generators?: Generator[] };
}

interface ApplicationSetLike extends KubeObject {
  spec?: { generators?: Generator[]; template?: { metadata?: { labels?: Record<string, string> } } };
}

interface PlacementDecisionLike extends KubeObject {
  status?: { decisions?: Array<{ clusterName?: string }> };
}

interface SecretLike extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function placementsOf(generators: Generator[] | undefined, into: Set<string>): void {
  for (const generator of generators ?? []) {
    const placement = generator.clusterDecisionResource?.labelSelector?.matchLabels?.[PLACEMENT_LABEL];
    if (placement) into.add(placement);
    placementsOf(generator.matrix?.generators, into);
    placementsOf(generator.merge?.generators, into);
  }
}

/** `<namespace>/<placement>` of every Placement a pull ApplicationSet generates from. */
export function pullPlacements(appSets: readonly ApplicationSetLike[]): Set<string> {
  const result = new Set<string>();
  for (const appSet of appSets) {
    if (!parseBool(appSet.spec?.template?.metadata?.labels?.[PULL_LABEL])) continue;
    const names = new Set<string>();
    placementsOf(appSet.spec?.generators, names);
    for (const name of names) result.add(`${appSet.metadata.namespace}/${name}`);
  }
  return result;
}

function decode(value: string | undefined): string | undefined {
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/** The cluster name a cluster Secret registers. */
export function secretClusterName(secret: SecretLike): string | undefined {
  return secret.stringData?.name ?? decode(secret.data?.name);
}

export function createClusterSecretReconciler(context: ReconcilerContext): Reconciler | undefined {
  const { cache, writer, config, logger } = context;
  if (!config.clusterSecrets) return undefined;
  const all = () => [CLUSTER_SECRETS_KEY];

  async function reconcile(): Promise<void> {
    const clusters = new Set(cache.list(MANAGED_CLUSTER.id).map((cluster) => cluster.metadata.name));
    const placements = pullPlacements(cache.list<ApplicationSetLike>(APPLICATION_SET.id));
    const wanted = new Set<string>();
    for (const decision of cache.list<PlacementDecisionLike>(PLACEMENT_DECISION.id)) {
      const placement = decision.metadata.labels?.[PLACEMENT_LABEL];
      if (!placement || !placements.has(`${decision.metadata.namespace}/${placement}`)) continue;
      for (const entry of decision.status?.decisions ?? []) {
        if (entry.clusterName && entry.clusterName !== LOCAL_CLUSTER && clusters.has(entry.clusterName)) wanted.add(entry.clusterName);
      }
    }

    const secrets = cache.list<SecretLike>(SECRET.id).filter((secret) => secret.metadata.namespace === config.argoNamespace);
    const byName = new Map(secrets.map((secret) => [secret.metadata.name, secret]));
    const registered = new Map<string, SecretLike[]>();
    for (const secret of secrets) {
      const cluster = secretClusterName(secret);
      if (cluster) registered.set(cluster, [...(registered.get(cluster) ?? []), secret]);
    }

    for (const cluster of [...wanted].sort()) {
      const desired = buildClusterSecret(cluster, config.argoNamespace, { [CONTROLLER_OWNED_LABEL]: 'true' });
      const holders = registered.get(cluster) ?? [];
      if (holders.some((secret) => secret.metadata.labels?.[CONTROLLER_OWNED_LABEL] !== 'true')) continue; // someone else registers it
      const existing = byName.get(desired.metadata.name);
      if (existing && existing.metadata.labels?.[CONTROLLER_OWNED_LABEL] !== 'true') {
        logger.warn({ secret: `${config.argoNamespace}/${desired.metadata.name}`, cluster }, 'a Secret of that name exists and is not ours: leaving it alone');
        continue;
      }
      const data = { name: Buffer.from(desired.stringData.name).toString('base64'), server: Buffer.from(desired.stringData.server).toString('base64') };
      const upToDate =
        existing &&
        existing.data?.name === data.name &&
        existing.data?.server === data.server &&
        Object.keys(existing.data ?? {}).length === 2 &&
        Object.entries(desired.metadata.labels ?? {}).every(([key, value]) => existing.metadata.labels?.[key] === value);
      if (upToDate) continue;
      const { stringData: _ignored, ...rest } = desired;
      await writer.apply(SECRET, { ...rest, data } as KubeObject);
      logger.info({ cluster }, 'wrote blank cluster Secret');
    }

    for (const secret of secrets) {
      if (secret.metadata.labels?.[CONTROLLER_OWNED_LABEL] !== 'true') continue;
      const cluster = secretClusterName(secret);
      if (cluster && clusters.has(cluster)) continue;
      await writer.delete(SECRET, secret.metadata.namespace, secret.metadata.name, secret.metadata.uid ? { uid: secret.metadata.uid } : {});
      logger.info({ cluster, secret: secret.metadata.name }, 'deleted cluster Secret of a ManagedCluster that is gone');
    }
  }

  return {
    name: 'cluster-secrets',
    workers: 1,
    watches: [
      { kind: APPLICATION_SET, keysFor: all },
      { kind: PLACEMENT_DECISION, keysFor: all },
      // Only which ManagedClusters exist matters here: status updates (every agent, all the time) change nothing.
      { kind: MANAGED_CLUSTER, keysFor: (_object, previous, type) => ((type ?? (previous ? 'update' : 'add')) === 'update' ? [] : all()) },
      { kind: SECRET, scope: { namespace: config.argoNamespace, labelSelector: CLUSTER_SECRET_SELECTOR }, keysFor: all },
    ],
    resyncKeys: all,
    reconcile,
  };
}
