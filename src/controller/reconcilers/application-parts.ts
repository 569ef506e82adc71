/**
 * What the parts of the Application reconciler share: its timing constants and cache index names, and
 * the {@link ApplicationParts} each part (basic delivery, takeover, agent model) is handed.
 */
import type { CacheReader } from '../../kube/cache.js';
import { MANAGED_CLUSTER, MANAGED_CLUSTER_SET, MANAGED_CLUSTER_SET_BINDING } from '../../kube/resources.js';
import type {
  ManagedCluster,
  ManagedClusterSet,
  ManagedClusterSetBinding,
  TenancyInventory,
} from '../../model/placement/tenancy.js';
import type { ReconcilerContext } from '../runtime/reconciler.js';
import type { ApplicationWrites } from './application-writes.js';
import type { rolloutReader } from './rollout-cache.js';

/** Largest work the controller writes (OCM rejects works whose manifests exceed 500 KiB). */
export const MAX_WORK_BYTES = 500 * 1024;
/** Index of ManifestWorks by the hub Application they point back at. */
export const WORK_OWNER_INDEX = 'hub-application';
/** Index of hub Applications by the ManagedCluster they target (pull-labelled apps only). */
export const APP_CLUSTER_INDEX = 'target-cluster';
/**
 * Index of hub Applications by the ManifestWork they would write (`cluster/name`), pull-labelled apps only:
 * a work that carries no hub annotations (another tool's, at the app's name) still wakes the app when it
 * appears, changes or goes.
 */
export const APP_TARGET_WORK_INDEX = 'target-work';
/** Index of hub Applications by namespace (tenancy is per namespace). */
export const APP_NAMESPACE_INDEX = 'namespace';
/** Index of ManagedClusterSetBindings by the set they bind. */
export const BINDING_SET_INDEX = 'cluster-set';
/** Index of PlacementDecisions by namespace (ACM's tenancy rule, ACM_TENANCY_CONDITION). */
export const DECISION_NAMESPACE_INDEX = 'app-decision-namespace';
/** A reconcile that finds the cache behind its own last write comes back after this long (the watch event usually comes first). */
export const LAGGING_REQUEUE_MS = 250;
/**
 * An app refused because of a work its cache has not seen (judged from a live read) looks again after this
 * long, until the cache holds that work: if the work goes before its watch event ever arrives (a watch down
 * meanwhile), no event would bring the app back.
 */
export const UNSEEN_WORK_RECHECK_MS = 10_000;
/** Longest a new app's first write (finalizer and first status) waits behind a burst of other keys. */
export const FIRST_WRITE_WAIT_MS = 30_000;

/** The clusters, cluster sets and bindings tenancy is judged on, as the cache holds them. */
export function tenancyInventory(cache: CacheReader): TenancyInventory {
  return {
    clusters: new Map(
      cache.list<ManagedCluster>(MANAGED_CLUSTER.id).map((cluster) => [cluster.metadata.name, cluster]),
    ),
    clusterSets: cache.list<ManagedClusterSet>(MANAGED_CLUSTER_SET.id),
    bindings: cache.list<ManagedClusterSetBinding>(MANAGED_CLUSTER_SET_BINDING.id),
  };
}

/** What every part of the Application reconciler is handed. */
export interface ApplicationParts {
  readonly context: ReconcilerContext;
  readonly writes: ApplicationWrites;
  /** The rollout policy and state of waved apps, parsed once per ConfigMap version. */
  readonly rollouts: ReturnType<typeof rolloutReader>;
  /** The tenancy inventory, built once per change of the clusters, sets or bindings. */
  inventory(): TenancyInventory;
}
