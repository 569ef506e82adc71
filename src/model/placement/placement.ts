/**
 * Offline Placement evaluation: which spokes of a known inventory a Placement selects, following the
 * scheduler of OCM's placement controller v1.3.1 (cluster sets bound to the namespace, predicates ORed,
 * label and claim selectors ANDed inside a predicate, taints and tolerations, the specs it refuses, the
 * prioritizers under `numberOfClusters`), then leaving out the hub itself (`local-cluster`), which pull
 * delivery never targets. test/ocm/placement-differential.test.ts holds it to the real controller; what
 * only the hub knows is reported, not guessed silently (see {@link PlacementEvaluation.unknowns}).
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
   * How many clusters to select. On the hub the prioritizers choose which; the offline evaluation ranks
   * as they do where the scores are known offline, and by name where only the hub has them.
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

const KNOWN_OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `key` is not a label key apimachinery accepts (`[prefix/]name`), or undefined. */
function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    return `label key "${key}" has a prefix that is not a DNS subdomain`;
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name))
    return `label key "${key}" is not a qualified name`;
  return undefined;
}

function labelValueProblem(key: string, value: string): string | undefined {
  return value.length > 63 || !LABEL_VALUE.test(value)
    ? `value "${value}" of "${key}" is not a label value`
    : undefined;
}

/**
 * Why apimachinery's `LabelSelectorAsSelector` refuses `selector` (OCM then marks the Placement
 * misconfigured), or undefined.
 */
function selectorProblem(where: string, selector: LabelSelector | undefined): string | undefined {
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(key, value);
    if (problem) return `${where}: ${problem}`;
  }
  for (const req of selector?.matchExpressions ?? []) {
    const values = req.values ?? [];
    if (!KNOWN_OPERATORS.includes(req.operator))
      return `${where}: "${req.operator}" is not a valid label selector operator (use In, NotIn, Exists or DoesNotExist)`;
    const problem = labelKeyProblem(req.key);
    if (problem) return `${where}: ${problem}`;
    if ((req.operator === 'In' || req.operator === 'NotIn') && values.length === 0)
      return `${where}: ${req.operator} on "${req.key}" needs at least one value`;
    if ((req.operator === 'Exists' || req.operator === 'DoesNotExist') && values.length > 0)
      return `${where}: ${req.operator} on "${req.key}" takes no values`;
    for (const value of values) {
      const valueProblem = labelValueProblem(req.key, value);
      if (valueProblem) return `${where}: ${valueProblem}`;
    }
  }
  return undefined;
}

/** OCM's built-in prioritizers in v1.3.1; any other name with a weight makes the Placement misconfigured. */
const OCM_BUILT_IN_PRIORITIZERS: readonly string[] = [
  'Balance',
  'Steady',
  'ResourceAllocatableCPU',
  'ResourceAllocatableMemory',
];

/** The weights OCM uses for a spec: Balance and Steady 1 in `Additive` mode, then the configured ones. */
function prioritizerWeights(spec: PlacementSpec): Map<string, number> {
  const weights = new Map<string, number>();
  if ((spec.prioritizerPolicy?.mode ?? 'Additive') !== 'Exact') {
    weights.set('BuiltIn/Balance', 1);
    weights.set('BuiltIn/Steady', 1);
  }
  for (const c of spec.prioritizerPolicy?.configurations ?? []) {
    const sc = c.scoreCoordinate;
    const type = sc?.type ?? 'BuiltIn';
    const key =
      type === 'BuiltIn' ? `BuiltIn/${sc?.builtIn ?? ''}` : `AddOn/${sc?.addOn?.resourceName}/${sc?.addOn?.scoreName}`;
    weights.set(key, c.weight ?? 1);
  }
  return weights;
}

/**
 * Why OCM's placement controller (v1.3.1) refuses `spec` (condition `PlacementMisconfigured=True`): it
 * then writes an empty decision, so the Placement selects no cluster. Undefined when it schedules it.
 *
 * @remarks The checks are the scheduler's: a toleration without a key must use `Exists`, and `Exists`
 * takes no value (taint-toleration filter); every predicate's label and claim selector must convert to a
 * selector (apimachinery `LabelSelectorAsSelector`: known operators, values for `In`/`NotIn` only, valid
 * keys and values); the prioritizer mode is `Additive` or `Exact`, and each prioritizer with a non-zero
 * weight is a built-in one OCM knows (Balance, Steady, ResourceAllocatableCPU, ResourceAllocatableMemory) or an add-on score with
 * `addOn` set. The filters check only while clusters are left to filter; either way nothing is selected.
 */
export function placementMisconfiguration(spec: PlacementSpec): string | undefined {
  for (const [i, t] of (spec.tolerations ?? []).entries()) {
    const operator = t.operator ?? TolerationOperator.EQUAL;
    if (!t.key && operator !== TolerationOperator.EXISTS)
      return `tolerations[${i}]: a toleration without a key must use operator Exists`;
    if (operator === TolerationOperator.EXISTS && t.value)
      return `tolerations[${i}]: a toleration with operator Exists takes no value`;
  }
  for (const [i, p] of (spec.predicates ?? []).entries()) {
    const { labelSelector, claimSelector } = p.requiredClusterSelector ?? {};
    const problem =
      selectorProblem(`predicates[${i}].requiredClusterSelector.labelSelector`, labelSelector) ??
      selectorProblem(`predicates[${i}].requiredClusterSelector.claimSelector`, {
        matchExpressions: claimSelector?.matchExpressions ?? [],
      });
    if (problem) return problem;
  }
  const mode = spec.prioritizerPolicy?.mode ?? 'Additive';
  if (mode !== 'Additive' && mode !== 'Exact')
    return `prioritizerPolicy.mode "${String(mode)}" is neither Additive nor Exact`;
  for (const [i, c] of (spec.prioritizerPolicy?.configurations ?? []).entries()) {
    if ((c.weight ?? 1) === 0) continue;
    const sc = c.scoreCoordinate;
    if (!sc) return `prioritizerPolicy.configurations[${i}]: scoreCoordinate is required`;
    if ((sc.type ?? 'BuiltIn') === 'BuiltIn') {
      if (!OCM_BUILT_IN_PRIORITIZERS.includes(sc.builtIn ?? ''))
        return `prioritizerPolicy.configurations[${i}]: "${sc.builtIn ?? ''}" is not a built-in prioritizer of OCM (${OCM_BUILT_IN_PRIORITIZERS.join(', ')})`;
    } else if (!sc.addOn) return `prioritizerPolicy.configurations[${i}]: an AddOn score needs addOn`;
  }
  return undefined;
}

function predicateMatches(predicate: ClusterPredicate, cluster: InventoryCluster): boolean {
  const { labelSelector, claimSelector } = predicate.requiredClusterSelector ?? {};
  // A claim selector has only matchExpressions (OCM's ClusterClaimSelector); anything else is not read.
  return (
    matchesSelector(labelSelector, cluster.labels) &&
    matchesSelector({ matchExpressions: claimSelector?.matchExpressions ?? [] }, cluster.claims ?? {})
  );
}

/** The first toleration that matches `taint`, as OCM's taint-toleration filter looks for one. */
function toleration(tolerations: readonly Toleration[], taint: Taint): Toleration | undefined {
  return tolerations.find((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.key && t.key !== taint.key) return false;
    return t.operator === TolerationOperator.EXISTS || (t.value ?? '') === (taint.value ?? '');
  });
}

/** Options of {@link explainPlacement}. */
export interface PlacementEvaluationOptions {
  /**
   * The clusters the Placement's PlacementDecisions hold now, when it already exists on the hub: they keep
   * a `NoSelectIfNew` taint they do not tolerate, and the `Steady` prioritizer ranks them first.
   * @default - a new Placement (no decisions yet)
   */
  readonly currentDecisions?: readonly string[];
}

/** What {@link explainPlacement} knows of a Placement's decisions. */
export interface PlacementEvaluation {
  /** The spokes it delivers to: {@link PlacementEvaluation.decisions} without the hub itself, sorted. */
  readonly selected: string[];
  /**
   * The clusters OCM's PlacementDecisions would hold (the hub itself included when it is chosen), sorted.
   * With `numberOfClusters` the scheduler keeps the best-scored ones first, ties by name.
   */
  readonly decisions: string[];
  /** Every cluster that passes the cluster sets, predicates and taints (before `numberOfClusters`), sorted. */
  readonly feasible: string[];
  /** Why OCM refuses the Placement (it then selects nothing); see {@link placementMisconfiguration}. */
  readonly misconfigured?: string;
  /**
   * What the offline answer cannot know, each naming the cause; empty when the answer is exact. With
   * entries, the hub may decide other clusters among {@link PlacementEvaluation.feasible}.
   */
  readonly unknowns: string[];
}

/**
 * OCM's placement scheduling (v1.3.1) over a known inventory: cluster sets bound to the namespace, the
 * predicate and taint-toleration filters, the prioritizer scores that are known offline, and
 * `numberOfClusters`. See {@link PlacementEvaluation.unknowns} for what only the hub knows: add-on and
 * resource scores, `Balance` (the decisions of every other Placement, in the order the hub made them),
 * and how long ago a taint a toleration bounds with `tolerationSeconds` appeared.
 */
export function explainPlacement(
  spec: PlacementSpec,
  inventory: readonly InventoryCluster[],
  boundSets: readonly string[],
  options: PlacementEvaluationOptions = {},
): PlacementEvaluation {
  const misconfigured = placementMisconfiguration(spec);
  if (misconfigured !== undefined) return { selected: [], decisions: [], feasible: [], misconfigured, unknowns: [] };
  const current = new Set(options.currentDecisions ?? []);
  const bound = new Set(boundSets);
  const sets = spec.clusterSets?.length ? spec.clusterSets.filter((s) => bound.has(s)) : [...bound];
  const eligible = new Set(sets);
  const predicates = spec.predicates ?? [];
  const tolerations = spec.tolerations ?? [];
  const unknowns: string[] = [];
  const byName = new Map<string, InventoryCluster>();
  for (const c of inventory) if (!byName.has(c.name)) byName.set(c.name, c);
  const feasible = [...byName.values()]
    .filter((c) => c.clusterSets.some((s) => eligible.has(s)))
    .filter((c) => predicates.length === 0 || predicates.some((p) => predicateMatches(p, c)))
    .filter((c) =>
      (c.taints ?? []).every((taint) => {
        if (taint.effect === TaintEffect.PREFER_NO_SELECT) return true;
        if (taint.effect === TaintEffect.NO_SELECT_IF_NEW && current.has(c.name)) return true;
        const t = toleration(tolerations, taint);
        if (t?.tolerationSeconds !== undefined)
          unknowns.push(
            `cluster ${c.name} stays selected only until ${t.tolerationSeconds}s after its taint ${taint.key} appeared (the inventory does not record when)`,
          );
        return t !== undefined;
      }),
    )
    .map((c) => c.name)
    .sort();
  let decisions = feasible;
  const n = spec.numberOfClusters;
  if (n !== undefined && n < feasible.length) {
    const weights = prioritizerWeights(spec);
    for (const [key, weight] of [...weights].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (weight === 0 || key === 'BuiltIn/Steady') continue;
      unknowns.push(
        key === 'BuiltIn/Balance'
          ? `the Balance prioritizer (weight ${weight}) ranks clusters by the decisions of every other Placement on the hub`
          : key.startsWith('AddOn/')
            ? `the add-on score ${key.slice('AddOn/'.length)} (weight ${weight}) exists only on the hub`
            : `the ${key.slice('BuiltIn/'.length)} prioritizer (weight ${weight}) ranks clusters by their allocatable resources`,
      );
    }
    // Steady: the clusters decided now score 100, the others 0; ties go by name.
    const steady = weights.get('BuiltIn/Steady') ?? 0;
    if (steady < 0)
      unknowns.push(
        `the Steady prioritizer has a negative weight (${steady}): each schedule ranks the clusters just decided last, so the hub keeps moving the decisions`,
      );
    const score = (name: string): number => (current.has(name) ? 100 * steady : 0);
    decisions = [...feasible]
      .sort((a, b) => score(b) - score(a) || (a < b ? -1 : 1))
      .slice(0, n)
      .sort();
  }
  const selected = decisions.filter((name) => !isHubItself(name, byName.get(name)?.labels));
  return { selected, decisions, feasible, unknowns };
}

/**
 * Names of the clusters `spec` selects from `inventory`, given the cluster sets bound to the Placement's
 * namespace: what {@link explainPlacement} decides, without the hub itself. Sorted by name. With
 * `numberOfClusters`, the clusters OCM's scheduler ranks first; where that depends on scores only the hub
 * has (add-on and resource scores, `Balance`), ties go by name, as on a hub where those scores are equal.
 */
export function evaluatePlacement(
  spec: PlacementSpec,
  inventory: readonly InventoryCluster[],
  boundSets: readonly string[],
  options: PlacementEvaluationOptions = {},
): string[] {
  return explainPlacement(spec, inventory, boundSets, options).selected;
}
