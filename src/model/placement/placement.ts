/**
 * Offline Placement evaluation: which spokes of a known inventory a Placement selects, following OCM's
 * rules (cluster sets bound to the namespace, predicates ORed, label and claim selectors ANDed inside a
 * predicate, taints and tolerations, `local-cluster` never selected for pull delivery).
 */
import { isHubItself } from '../core/keys.js';
import { matchesSelector, type LabelSelector, type SelectorRequirement } from '../core/selectors.js';
import type { EnumValue } from '../core/types.js';

export { matchesSelector, type LabelSelector, SelectorOperator, type SelectorRequirement } from '../core/selectors.js';

/** One entry of a Placement's `spec.predicates`: a cluster is selected when any predicate matches it. */
export interface ClusterPredicate {
  /** The selectors a cluster must match for this predicate; when both are given, both must match. */
  requiredClusterSelector: {
    /**
     * Selector over the ManagedCluster's labels.
     * @default - every cluster matches
     */
    labelSelector?: LabelSelector;
    /**
     * Selector over the cluster's ClusterClaims (by claim name and value), written as label expressions.
     * @default - every cluster matches
     */
    claimSelector?: {
      /**
       * Expressions that must all hold.
       * @default []
       */
      matchExpressions?: SelectorRequirement[];
    };
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
  /** What the taint does to placements that do not tolerate it: a {@link TaintEffect} or its value (`'NoSelect'`). */
  effect: EnumValue<TaintEffect>;
}

/** A Placement's toleration of ManagedCluster taints. */
export interface Toleration {
  /**
   * The taint key it tolerates.
   * @default - every key (with `TolerationOperator.EXISTS`)
   */
  key?: string;
  /**
   * How the taint is matched: a {@link TolerationOperator} or its value (`'Exists'`).
   * @default TolerationOperator.EQUAL
   */
  operator?: EnumValue<TolerationOperator>;
  /**
   * The taint value it tolerates (with `TolerationOperator.EQUAL`).
   * @default - the empty value
   */
  value?: string;
  /**
   * The taint effect it tolerates: a {@link TaintEffect} or its value (`'NoSelect'`).
   * @default - every effect
   */
  effect?: EnumValue<TaintEffect>;
  /**
   * How long the cluster stays selected after the taint appears, in seconds.
   * @default - forever
   */
  tolerationSeconds?: number;
}

/** One entry of a Placement's `spec.prioritizerPolicy.configurations`: a score and its weight. */
export interface PrioritizerConfiguration {
  /** Where the score comes from: a prioritizer built into OCM, or a score an add-on publishes. */
  scoreCoordinate: {
    /** `BuiltIn` to read `builtIn`, `AddOn` to read `addOn`. */
    type: 'BuiltIn' | 'AddOn';
    /** Name of the built-in prioritizer (with `BuiltIn`), such as `Balance`, `Steady` or `ResourceAllocatableCPU`. */
    builtIn?: string;
    /** The add-on score (with `AddOn`): an AddOnPlacementScore resource and a score in it. */
    addOn?: {
      /** Name of the AddOnPlacementScore resource in each cluster's namespace on the hub. */
      resourceName: string;
      /** Name of the score within that resource. */
      scoreName: string;
    };
  };
  /**
   * How much this score counts in a cluster's total score, from -10 to 10.
   * @default 1
   */
  weight?: number;
}

/** The `spec` of a cluster.open-cluster-management.io/v1beta1 Placement (the fields pullfleet renders). */
export interface PlacementSpec {
  /**
   * ManagedClusterSets to select from; only those bound to the Placement's namespace count.
   * @default - every cluster set bound to the namespace
   */
  clusterSets?: string[];
  /**
   * How many clusters to select. On the hub the prioritizers choose which; synth's offline evaluation
   * keeps the first ones by name.
   * @default - every matching cluster
   */
  numberOfClusters?: number;
  /**
   * Predicates; a cluster is selected when any of them matches.
   * @default - every cluster of the sets
   */
  predicates?: ClusterPredicate[];
  /**
   * Tolerations of ManagedCluster taints.
   * @default - none (see {@link TaintEffect} for what an untolerated taint does)
   */
  tolerations?: Toleration[];
  /**
   * How clusters are scored when `numberOfClusters` leaves a choice.
   * @default - OCM's default prioritizers, in `Additive` mode
   */
  prioritizerPolicy?: {
    /**
     * `Additive` adds the configured prioritizers to OCM's defaults; `Exact` uses only them.
     * @default 'Additive'
     */
    mode?: 'Additive' | 'Exact';
    /**
     * The prioritizers and their weights.
     * @default []
     */
    configurations?: PrioritizerConfiguration[];
  };
  /**
   * How decisions are split into groups for a progressive rollout; pullfleet renders none.
   * @default - one decision group holding every selected cluster
   */
  decisionStrategy?: {
    /** How clusters are grouped. */
    groupStrategy?: {
      /**
       * Most clusters in one decision group: a number, or a percentage of the selected clusters such as
       * `'25%'`.
       * @default '100%'
       */
      clustersPerDecisionGroup?: number | string;
    };
  };
}

/** A spoke as the hub sees it: its ManagedCluster labels, claims, cluster sets and taints. */
export interface InventoryCluster {
  /** The ManagedCluster name. */
  name: string;
  /** The ManagedCluster labels that placement label selectors match. */
  labels: Record<string, string>;
  /**
   * The cluster's ClusterClaims (name to value) that placement claim selectors match.
   * @default {}
   */
  claims?: Record<string, string>;
  /** Names of the ManagedClusterSets the cluster belongs to. */
  clusterSets: readonly string[];
  /**
   * Taints on the ManagedCluster, which placements must tolerate to select it.
   * @default []
   */
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
    .filter((c) => !isHubItself(c.name, c.labels))
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
