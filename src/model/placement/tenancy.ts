/**
 * OCM's tenancy rule for pull delivery: a hub Application may only target a ManagedCluster that belongs
 * to a ManagedClusterSet bound (by a ManagedClusterSetBinding) to the Application's namespace. The hub
 * itself (`local-cluster`) is never a target. Pure functions over a snapshot of the hub's cluster objects.
 */
import { CLUSTERSET_LABEL, isHubItself, LOCAL_CLUSTER, LOCAL_CLUSTER_LABEL } from '../core/keys.js';
import { matchesSelector, type LabelSelector } from './placement.js';
import type { KubeObject } from '../core/types.js';

/** A ManagedCluster (cluster.open-cluster-management.io/v1); only the fields pullfleet reads. */
export interface ManagedCluster extends KubeObject {
  spec?: { hubAcceptsClient?: boolean; [key: string]: unknown };
  status?: { conditions?: Array<{ type: string; status: string }>; [key: string]: unknown };
}

/** A ManagedClusterSet (v1beta2). An absent selector means `ExclusiveClusterSetLabel`. */
export interface ManagedClusterSet extends KubeObject {
  spec?: {
    clusterSelector?: { selectorType?: 'ExclusiveClusterSetLabel' | 'LabelSelector'; labelSelector?: LabelSelector };
  };
}

/** A ManagedClusterSetBinding (v1beta2): binds `spec.clusterSet` to the binding's namespace. */
export interface ManagedClusterSetBinding extends KubeObject {
  spec?: { clusterSet?: string };
}

/** Whether `cluster` is a member of `set` under the set's selector type. */
export function clusterInSet(cluster: Pick<ManagedCluster, 'metadata'>, set: ManagedClusterSet): boolean {
  const selector = set.spec?.clusterSelector;
  // OCM builds the member selector with LabelSelectorAsSelector: an absent selector selects no cluster.
  if (selector?.selectorType === 'LabelSelector')
    return !!selector.labelSelector && matchesSelector(selector.labelSelector, cluster.metadata.labels ?? {});
  return cluster.metadata.labels?.[CLUSTERSET_LABEL] === set.metadata.name;
}

/** The snapshot of hub objects the tenancy rule reads. */
export interface TenancyInventory {
  /** ManagedClusters by name. */
  readonly clusters: ReadonlyMap<string, ManagedCluster>;
  readonly clusterSets: readonly ManagedClusterSet[];
  readonly bindings: readonly ManagedClusterSetBinding[];
}

export interface TenancyOptions {
  /**
   * Single-tenant hubs: any existing ManagedCluster except `local-cluster` may be targeted from any namespace.
   * @default false
   */
  readonly relaxed?: boolean;
}

/** Names of the cluster sets bound to `namespace`, sorted. */
export function boundClusterSets(namespace: string, bindings: readonly ManagedClusterSetBinding[]): string[] {
  const names = new Set<string>();
  for (const binding of bindings) {
    if (binding.metadata.namespace !== namespace) continue;
    const set = binding.spec?.clusterSet ?? binding.metadata.name;
    if (set) names.add(set);
  }
  return [...names].sort();
}

/**
 * Why an Application in `namespace` may not deliver to `cluster`, or undefined when it may. The message
 * names the cluster, the namespace and the fix.
 */
export function tenancyProblem(
  namespace: string,
  cluster: string,
  inventory: TenancyInventory,
  options: TenancyOptions = {},
): string | undefined {
  if (cluster === LOCAL_CLUSTER)
    return `${LOCAL_CLUSTER} is the hub itself and never a pull-delivery target: choose a spoke cluster`;
  const managed = inventory.clusters.get(cluster);
  if (!managed)
    return `ManagedCluster "${cluster}" does not exist on this hub: register the cluster or fix the target annotation`;
  if (isHubItself(cluster, managed.metadata.labels))
    return `ManagedCluster "${cluster}" is labelled ${LOCAL_CLUSTER_LABEL}: "true", so it is the hub itself and never a pull-delivery target: choose a spoke cluster`;
  if (options.relaxed) return undefined;
  const bound = boundClusterSets(namespace, inventory.bindings);
  const sets = new Map(inventory.clusterSets.map((set) => [set.metadata.name, set]));
  for (const name of bound) {
    const set = sets.get(name);
    if (set && clusterInSet(managed, set)) return undefined;
  }
  const boundText =
    bound.length === 0 ? 'no ManagedClusterSet is bound to it' : `bound sets [${bound.join(', ')}] do not contain it`;
  return `namespace "${namespace}" may not deliver to ManagedCluster "${cluster}": ${boundText}; add a ManagedClusterSetBinding in "${namespace}" for a set that contains the cluster`;
}
