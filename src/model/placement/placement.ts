/**
 * Offline Placement evaluation: which spokes of a known inventory a Placement selects, following OCM's
 * rules (cluster sets bound to the namespace, predicates ORed, label and claim selectors ANDed inside a
 * predicate, taints and tolerations, `local-cluster` never selected for pull delivery).
 */
import { LOCAL_CLUSTER } from '../core/keys.js';
import { matchesSelector, type LabelSelector, type SelectorRequirement } from '../core/selectors.js';

export { matchesSelector, type LabelSelector, SelectorOperator, type SelectorRequirement } from '../core/selectors.js';

export interface ClusterPredicate {
  requiredClusterSelector: {
    labelSelector?: LabelSelector;
    claimSelector?: { matchExpressions?: SelectorRequirement[] };
  };
}

/** The effect of a ManagedCluster taint on placements (the values are OCM's). */
export enum TaintEffect {
  /** Placements that do not tolerate the taint never select the cluster. */
  NO_SELECT = 'NoSelect',
  /** Placements prefer other clusters, but may still select this one. */
  PREFER_NO_SELECT = 'PreferNoSelect',
  /** Placements that do not tolerate the taint keep the cluster if already selected, but select it no more. */
  NO_SELECT_IF_NEW = 'NoSelectIfNew',
}

/** How a {@link Toleration} matches a taint (the values are OCM's). */
export enum TolerationOperator {
  /** The taint's key (and value) must equal the toleration's. */
  EQUAL = 'Equal',
  /** The taint's key must equal the toleration's, whatever its value; without a key, every taint matches. */
  EXISTS = 'Exists',
}

/** A taint on a ManagedCluster: placements must tolerate it to select the cluster. */
export interface Taint {
  /** The taint key. */
  key: string;
  /**
   * The taint value.
   * @default - none
   */
  value?: string;
  /** What the taint does to placements that do not tolerate it. */
  effect: TaintEffect;
}

/** A Placement's toleration of ManagedCluster taints. */
export interface Toleration {
  /**
   * The taint key it tolerates.
   * @default - every key (with `TolerationOperator.EXISTS`)
   */
  key?: string;
  /**
   * How the taint is matched.
   * @default TolerationOperator.EQUAL
   */
  operator?: TolerationOperator;
  /**
   * The taint value it tolerates (with `TolerationOperator.EQUAL`).
   * @default - the empty value
   */
  value?: string;
  /**
   * The taint effect it tolerates.
   * @default - every effect
   */
  effect?: TaintEffect;
  /**
   * How long the cluster stays selected after the taint appears, in seconds.
   * @default - forever
   */
  tolerationSeconds?: number;
}

export interface PrioritizerConfiguration {
  scoreCoordinate: { type: 'BuiltIn' | 'AddOn'; builtIn?: string; addOn?: { resourceName: string; scoreName: string } };
  weight?: number;
}

/** The `spec` of a cluster.open-cluster-management.io/v1beta1 Placement (the fields pullfleet renders). */
export interface PlacementSpec {
  clusterSets?: string[];
  numberOfClusters?: number;
  predicates?: ClusterPredicate[];
  tolerations?: Toleration[];
  prioritizerPolicy?: { mode?: 'Additive' | 'Exact'; configurations?: PrioritizerConfiguration[] };
  decisionStrategy?: { groupStrategy?: { clustersPerDecisionGroup?: number | string } };
}

/** A spoke as the hub sees it: its ManagedCluster labels, claims, cluster sets and taints. */
export interface InventoryCluster {
  name: string;
  labels: Record<string, string>;
  claims?: Record<string, string>;
  clusterSets: readonly string[];
  taints?: readonly Taint[];
}

function predicateMatches(predicate: ClusterPredicate, cluster: InventoryCluster): boolean {
  const { labelSelector, claimSelector } = predicate.requiredClusterSelector;
  return matchesSelector(labelSelector, cluster.labels) && matchesSelector(claimSelector, cluster.claims ?? {});
}

function tolerates(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.key === undefined || t.key === '') return t.operator === TolerationOperator.EXISTS;
    if (t.key !== taint.key) return false;
    return t.operator === TolerationOperator.EXISTS || (t.value ?? '') === (taint.value ?? '');
  });
}

/**
 * Names of the clusters `spec` selects from `inventory`, given the cluster sets bound to the Placement's
 * namespace. Sorted by name. With `numberOfClusters`, the first clusters by name are kept: prioritizer
 * scores depend on runtime data (allocatable resources, add-on scores) that an offline evaluation does
 * not have, so name order is the deterministic stand-in.
 */
export function evaluatePlacement(
  spec: PlacementSpec,
  inventory: readonly InventoryCluster[],
  boundSets: readonly string[],
): string[] {
  const bound = new Set(boundSets);
  const sets = spec.clusterSets?.length ? spec.clusterSets.filter((s) => bound.has(s)) : [...bound];
  const eligible = new Set(sets);
  const predicates = spec.predicates ?? [];
  const tolerations = spec.tolerations ?? [];
  const selected = inventory
    .filter((c) => c.name !== LOCAL_CLUSTER)
    .filter((c) => c.clusterSets.some((s) => eligible.has(s)))
    .filter((c) => predicates.length === 0 || predicates.some((p) => predicateMatches(p, c)))
    .filter((c) =>
      (c.taints ?? []).every((taint) => taint.effect === TaintEffect.PREFER_NO_SELECT || tolerates(tolerations, taint)),
    )
    .map((c) => c.name)
    .sort();
  const unique = [...new Set(selected)];
  return spec.numberOfClusters === undefined ? unique : unique.slice(0, spec.numberOfClusters);
}
