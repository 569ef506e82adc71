/**
 * Kubernetes label selectors (`metav1.LabelSelector`) and how they match a label map, following
 * apimachinery's `labels.Selector`. Used for Placement predicates (labels and cluster claims), cluster
 * sets, and the label selectors of ApplicationSet generators. Pure: no I/O.
 */
import type { EnumValue } from './types.js';

/** The operator of a {@link SelectorRequirement} (the values are the Kubernetes API's). */
export enum SelectorOperator {
  /** The label is present and its value is one of `values`. */
  IN = 'In',
  /** The label is absent, or its value is none of `values`. */
  NOT_IN = 'NotIn',
  /** The label is present, whatever its value (give no `values`). */
  EXISTS = 'Exists',
  /** The label is absent (give no `values`). */
  DOES_NOT_EXIST = 'DoesNotExist',
}

/** One `matchExpressions` entry of a label selector. */
export interface SelectorRequirement {
  /** The label (or cluster claim) the requirement tests. */
  key: string;
  /** How the value of `key` is tested: a {@link SelectorOperator} or its value (`'In'`). */
  operator: EnumValue<SelectorOperator>;
  /**
   * The values `In` and `NotIn` compare with.
   * @default - none (what `Exists` and `DoesNotExist` need)
   */
  values?: string[];
}

/** A Kubernetes label selector: `matchLabels` and `matchExpressions`, ANDed. */
export interface LabelSelector {
  /**
   * Labels that must all be present with these values.
   * @default {}
   */
  matchLabels?: Record<string, string>;
  /**
   * Requirements that must all hold.
   * @default []
   */
  matchExpressions?: SelectorRequirement[];
}

/**
 * A label selector as read from an object pullfleet does not type strictly (an ApplicationSet generator):
 * the operator may be any string.
 */
export interface LooseLabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }>;
}

const has = (labels: Readonly<Record<string, string>>, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(labels, key);

function requirementMatches(
  req: { readonly key: string; readonly operator: string; readonly values?: readonly string[] },
  labels: Readonly<Record<string, string>>,
): boolean {
  const present = has(labels, req.key);
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return present && values.includes(labels[req.key]);
    case 'NotIn':
      return !present || !values.includes(labels[req.key]);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    default:
      return false;
  }
}

/**
 * Whether `labels` satisfy the label selector `selector`, with apimachinery's semantics.
 *
 * @remarks
 * - Every `matchLabels` entry and every `matchExpressions` requirement must hold (they are ANDed).
 * - An empty selector (`{}`, or no lists) matches every label map. So does an absent selector
 *   (`undefined`): the selectors evaluated here are struct fields in their Kubernetes types
 *   (a Placement's `labelSelector` and `claimSelector`, a generator's `labelSelector`), where absent
 *   and empty are the same thing.
 * - `NotIn` and `DoesNotExist` match a map without the key; `In` and `Exists` need the key present.
 * - `In` with no values matches nothing; `NotIn` with no values matches everything (the API server
 *   rejects both; validation reports them).
 * - An unknown operator matches nothing (apimachinery refuses to build such a selector, and an
 *   invalid selector must not select clusters).
 * - Only the map's own keys count, so a label named like an Object.prototype member is not "present".
 *
 * `labels` may be undefined (an object without labels), which is the empty map.
 */
export function matchesSelector(
  selector: LooseLabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!selector) return true;
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(have, key) || have[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((req) => requirementMatches(req, have));
}
