/**
 * Runtime type checks of construct props. TypeScript checks props only when they are written in
 * TypeScript; values that arrive from JSON, a spread object or `any` reach the constructors unchecked.
 * Each construct declares its props once as a {@link PropSpec} (key → expected type), which the compiler
 * holds to the props interface: a key missing from the spec, a key the interface lacks, or a check of the
 * wrong type does not compile. At construction the spec is applied to the props actually given:
 * - a value of the wrong type is an error naming the construct path, the key, the value and its JS
 *   type, and the fix; the value is then left out (the prop's default applies), so nothing downstream
 *   trips over it a second time;
 * - a key the props do not have is a warning (an error with `--strict`), with a "did you mean" for a
 *   near miss: a misspelled optional prop is otherwise silently ignored.
 * Value rules (a DNS label, a whole number >= 0, a known sync option...) stay with each construct.
 */
import type { IConstruct } from 'constructs';
import { nearestName } from '../model/core/nearest.js';
import type { Taint } from '../model/placement/placement.js';

const INVALID: unique symbol = Symbol('invalid');
type Result<T> = T | typeof INVALID;

interface Findings {
  readonly errors: string[];
  readonly warnings: string[];
}

/** A runtime check of one value: what it expects, and how to turn a value into a checked copy. */
export interface Check<T> {
  /** What the value must be, for messages ("a string", "a list of taints"...). */
  readonly expected: string;
  /** @internal the checked value (a copy for objects and lists), or INVALID after recording why. */
  readonly run: (value: unknown, at: string, found: Findings) => Result<T>;
  /**
   * @internal true when the key must be given (only for nested objects; constructors check their own).
   * @default false
   */
  readonly required?: boolean;
}

/** The checks of every key of props `P`: exactly the keys of `P`, each checked as its type. */
export type PropSpec<P> = { readonly [K in keyof P]-?: Check<NonNullable<P[K]>> };

/** `a string`, `a number`, `an array`, `null`, `a ClusterSet`... the JS type of `value`, for messages. */
export function jsType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
    return !name || name === 'Object' ? 'an object' : `a ${name}`;
  }
  return typeof value === 'undefined' ? 'undefined' : `${/^[aeiou]/.test(typeof value) ? 'an' : 'a'} ${typeof value}`;
}

/** The value as written in a fleet file, shortened. */
export function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol' || typeof value === 'bigint')
    return `${String(value)}${typeof value === 'bigint' ? 'n' : ''}`;
  if (
    value !== null &&
    typeof value === 'object' &&
    (value as { node?: { path?: unknown } }).node?.path !== undefined
  ) {
    return `the construct ${String((value as { node: { path: unknown } }).node.path)}`;
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined; // a cycle
  }
  if (text === undefined) return String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function problem(at: string, value: unknown, expected: string, fix: string, found: Findings): typeof INVALID {
  found.errors.push(`${at} is ${shown(value)} (${jsType(value)}): expected ${expected}: ${fix}`);
  return INVALID;
}

function join(at: string, key: string | number): string {
  if (typeof key === 'number') return `${at}[${key}]`;
  const safe = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
  if (!at) return safe;
  return safe.startsWith('"') ? `${at}[${safe}]` : `${at}.${safe}`;
}

/** A string (its format, or the members of a string union, are the construct's own rules). */
export function str<T extends string = string>(expected = 'a string'): Check<T> {
  return {
    expected,
    run: (value, at, found) => {
      if (typeof value === 'string') return value as T;
      const fix =
        typeof value === 'number' || typeof value === 'boolean'
          ? `write it in quotes, "${String(value)}"`
          : 'give a string';
      return problem(at, value, expected, fix, found);
    },
  };
}

/** One of a few strings (a string union such as `'Automatic' | 'Manual'`). */
export function oneOf<const T extends string>(...values: readonly T[]): Check<T> {
  const expected = values.map((v) => JSON.stringify(v)).join(' or ');
  return {
    expected,
    run: (value, at, found) =>
      (values as readonly unknown[]).includes(value)
        ? (value as T)
        : problem(at, value, expected, `use ${expected}`, found),
  };
}

/** A member of a TypeScript enum (`HubFlavor.OCM`), also accepted as its string value. */
export function enumOf<T extends string>(enumObject: Record<string, T>, enumName: string): Check<T> {
  const members = Object.entries(enumObject);
  const expected = `one of ${members.map(([k]) => `${enumName}.${k}`).join(', ')}`;
  return {
    expected,
    run: (value, at, found) => {
      if ((Object.values(enumObject) as unknown[]).includes(value)) return value as T;
      const near =
        typeof value === 'string'
          ? members.find(([k, v]) => k.toLowerCase() === value.toLowerCase() || v.toLowerCase() === value.toLowerCase())
          : undefined;
      return problem(
        at,
        value,
        expected,
        near ? `use ${enumName}.${near[0]} (the string "${near[1]}")` : `use ${expected}`,
        found,
      );
    },
  };
}

const TRUE_WORDS = ['true', 'yes', 'y', 'on', '1', 'enabled'];
const FALSE_WORDS = ['false', 'no', 'n', 'off', '0', 'disabled', ''];

/** true or false. */
export function bool(): Check<boolean> {
  const expected = 'true or false';
  return {
    expected,
    run: (value, at, found) => {
      if (typeof value === 'boolean') return value;
      const word =
        typeof value === 'string' || typeof value === 'number' ? String(value).trim().toLowerCase() : undefined;
      const meant =
        word === undefined
          ? undefined
          : TRUE_WORDS.includes(word)
            ? true
            : FALSE_WORDS.includes(word)
              ? false
              : undefined;
      const fix = meant === undefined ? 'give true or false' : `write ${meant} (a boolean, without quotes)`;
      return problem(at, value, expected, fix, found);
    },
  };
}

/** A number (its range is the construct's own rule). */
export function num(expected = 'a number'): Check<number> {
  return {
    expected,
    run: (value, at, found) => {
      if (typeof value === 'number') return value;
      const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      const fix = Number.isFinite(parsed) ? `write ${parsed} (a number, without quotes)` : `give ${expected}`;
      return problem(at, value, expected, fix, found);
    },
  };
}

/** A map of string values (`what`: label, claim): a bad entry is a problem of its own and is left out. */
export function stringMap(what: string, example: string): Check<Record<string, string>> {
  const expected = `a map of ${what}s with string values, for example ${example}`;
  return {
    expected,
    run: (value, at, found) => {
      if (!isPlainObject(value)) return problem(at, value, expected, `give an object such as ${example}`, found);
      const out: Record<string, string> = {};
      for (const [key, item] of Object.entries(value)) {
        if (item === undefined) continue;
        if (typeof item === 'string') out[key] = item;
        else
          problem(
            join(at, key),
            item,
            `a string (${what} values are strings)`,
            typeof item === 'number' || typeof item === 'boolean'
              ? `write it in quotes, "${String(item)}"`
              : 'give a string',
            found,
          );
      }
      return out;
    },
  };
}

/** Any plain JSON-like object (its content is checked by the construct, as Helm values are). */
export function plainObject<T extends object = Record<string, unknown>>(expected = 'an object'): Check<T> {
  return {
    expected,
    run: (value, at, found) =>
      isPlainObject(value) ? (value as T) : problem(at, value, expected, 'give an object', found),
  };
}

/** A list: every item is checked; a bad item is a problem of its own and is left out. */
export function listOf<T>(item: Check<T>, example: string): Check<T[]> {
  const expected = `a list (each item ${item.expected}), for example ${example}`;
  return {
    expected,
    run: (value, at, found) => {
      if (!Array.isArray(value)) {
        const fix =
          value === '' || (typeof value === 'string' && /^(none|no|null|nil|\[\])$/i.test(value.trim()))
            ? 'give an empty list [] for none, or leave it out'
            : `give a list such as ${example}`;
        return problem(at, value, expected, fix, found);
      }
      const out: T[] = [];
      value.forEach((v, i) => {
        const checked = item.run(v, join(at, i), found);
        if (checked !== INVALID) out.push(checked);
      });
      return out;
    },
  };
}

/**
 * Runs one check outside props (a value the library takes in a factory, such as a wave's spokes): the
 * checked value, or undefined when it is wrong, and every problem found, each naming `at`.
 */
export function checkValue<T>(check: Check<T>, value: unknown, at: string): { value?: T; errors: string[] } {
  const found: Findings = { errors: [], warnings: [] };
  const checked = check.run(value, at, found);
  return checked === INVALID ? { errors: found.errors } : { value: checked, errors: found.errors };
}

/** A reference to another object of the library (a construct, an AppSource...), recognised by `is`. */
export function ref<T>(is: (value: unknown) => boolean, expected: string, fix: string): Check<T> {
  return { expected, run: (value, at, found) => (is(value) ? (value as T) : problem(at, value, expected, fix, found)) };
}

/** A map from names to checked values (`overrides` of `addInventory`): a bad entry is left out. */
export function recordOf<T>(item: Check<T>, example: string): Check<Record<string, T>> {
  const expected = `an object by name (each value ${item.expected}), for example ${example}`;
  return {
    expected,
    run: (value, at, found) => {
      if (!isPlainObject(value)) return problem(at, value, expected, `give an object such as ${example}`, found);
      const out: Record<string, T> = {};
      for (const [key, v] of Object.entries(value)) {
        const checked = item.run(v, join(at, key), found);
        if (checked !== INVALID) out[key] = checked;
      }
      return out;
    },
  };
}

/** A function (a callback such as `onProgress`). */
export function fn<T extends (...args: never[]) => unknown>(expected = 'a function'): Check<T> {
  return {
    expected,
    run: (value, at, found) =>
      typeof value === 'function' ? (value as T) : problem(at, value, expected, 'give a function', found),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';
const hasMethods = (v: unknown, ...names: string[]) => isObject(v) && names.every((n) => typeof v[n] === 'function');

/** A spoke (a Spoke or `Spoke.fromSpokeName`), recognised by its interface so a copy of the library made it too. */
export function spokeRef<T>(): Check<T> {
  return ref<T>(
    (v) => hasMethods(v, 'inventoryEntry') && typeof (v as { name?: unknown }).name === 'string',
    'a Spoke',
    "pass the Spoke object (new Spoke(hub, 'east') or Spoke.fromSpokeName(hub, 'East', 'east')), not its name",
  );
}

/** A cluster set (a ClusterSet or `ClusterSet.fromClusterSetName`). */
export function clusterSetRef<T>(): Check<T> {
  return ref<T>(
    (v) => hasMethods(v, 'isMember', 'bindTo') && typeof (v as { name?: unknown }).name === 'string',
    'a ClusterSet',
    "pass the ClusterSet object (new ClusterSet(hub, 'prod') or ClusterSet.fromClusterSetName(hub, 'Prod', 'prod')), not its name",
  );
}

/** A placement (a Placement or `Placement.fromPlacementName`). */
export function placementRef<T>(): Check<T> {
  return ref<T>(
    (v) => hasMethods(v, 'selectedSpokes') && typeof (v as { name?: unknown }).name === 'string',
    'a Placement',
    "pass the Placement object (new Placement(hub, 'all-prod', {...}) or Placement.fromPlacementName(hub, 'AllProd', 'all-prod')), not its name",
  );
}

/** A Rollout (`Rollout.waves([...])`). */
export function rolloutRef<T>(): Check<T> {
  return ref<T>(
    (v) => hasMethods(v, '_declarations', '_problems'),
    'a Rollout',
    "use Rollout.waves([{ labels: { ring: 'canary' } }, { rest: true }]) (import { Rollout } from 'pullfleet')",
  );
}

/** A cdk8s Duration. */
export function duration<T>(): Check<T> {
  return ref<T>(
    (v) => hasMethods(v, 'toSeconds'),
    'a Duration',
    'use Duration.minutes(15) (import { Duration } from "cdk8s")',
  );
}

/** The value must be given (in a nested object; constructors report their own missing props). */
export function required<T>(check: Check<T>): Check<T> {
  return { ...check, required: true };
}

/** A nested object with props of its own (a taint, a grant, controller settings). */
export function shape<P>(name: string, spec: PropSpec<P>): Check<P> {
  const expected = `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`;
  return {
    expected,
    run: (value, at, found) => {
      if (!isPlainObject(value))
        return problem(at, value, expected, `give an object with the keys ${Object.keys(spec).join(', ')}`, found);
      return checkKeys(name, spec, value, at, found);
    },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === Object.prototype || proto === null;
}

function checkKeys<P>(
  name: string,
  spec: PropSpec<P>,
  value: Record<string, unknown>,
  at: string,
  found: Findings,
): Result<P> {
  const checks = spec as unknown as Record<string, Check<unknown>>;
  const known = Object.keys(checks);
  const out: Record<string, unknown> = {};
  let complete = true;
  for (const [key, item] of Object.entries(value)) {
    const check = checks[key];
    if (!check) {
      const near = nearestName(key, known);
      found.warnings.push(
        `${join(at, key)} is not a prop of ${name}, so ${shown(item)} is ignored: ${near ? `did you mean ${join(at, near)}?` : `remove it (the props are ${known.join(', ')})`}`,
      );
      continue;
    }
    if (item === undefined) continue;
    const checked = check.run(item, join(at, key), found);
    if (checked === INVALID) {
      if (check.required) complete = false;
      continue;
    }
    out[key] = checked;
  }
  for (const [key, check] of Object.entries(checks)) {
    if (check.required && value[key] === undefined) {
      found.errors.push(`${join(at, key)} is missing: give ${check.expected}`);
      complete = false;
    }
  }
  return complete ? (out as P) : INVALID;
}

/** The props of one construct (or factory): its name for messages and the check of every key. */
export interface PropsOf<P> {
  readonly name: string;
  readonly spec: PropSpec<P>;
}

/** Declares the props spec of `name` (checked against `P` by the compiler). */
export function propsOf<P>(name: string, spec: PropSpec<P>): PropsOf<P> {
  return { name, spec };
}

const checkedByConstruct = new WeakMap<IConstruct, { props: unknown; invalid: ReadonlySet<string> }>();

/** @internal the props {@link checkProps} checked for construct `c` (subclasses read what their base checked). */
export function checkedProps<P>(c: IConstruct): P {
  const found = checkedByConstruct.get(c);
  if (!found) throw new Error(`${c.node.path}: its props were not checked (checkProps)`);
  return found.props as P;
}

/**
 * @internal true when {@link checkProps} already reported prop `key` of `c` (a value of the wrong type),
 * so the construct does not report the same key again as missing.
 */
export function propReported(c: IConstruct, key: string): boolean {
  return checkedByConstruct.get(c)?.invalid.has(key) ?? false;
}

type Recorded = {
  errors: Array<{ path: string; message: string }>;
  warnings: Array<{ path: string; message: string }>;
};
const recordedByRoot = new WeakMap<IConstruct, Recorded>();

function recordedOf(scope: IConstruct): Recorded {
  const root = scope.node.root;
  let found = recordedByRoot.get(root);
  if (!found) recordedByRoot.set(root, (found = { errors: [], warnings: [] }));
  return found;
}

/** @internal records a warning (an error with --strict) for the fleet report. */
export function recordWarning(scope: IConstruct, path: string, message: string): void {
  recordedOf(scope).warnings.push({ path, message });
}

/** @internal the prop problems recorded under `root` (Fleet lists them with every other problem). */
export function recordedPropProblems(root: IConstruct): Readonly<Recorded> {
  return recordedByRoot.get(root) ?? { errors: [], warnings: [] };
}

/**
 * Checks `props` given to a construct against its spec without a construct to report to (factories
 * such as `AppSource.git`): the checked copy, and the errors and warnings as messages.
 */
export function checkPropsValue<P>(
  what: PropsOf<P>,
  props: unknown,
  at = '',
): { props: Partial<P>; errors: string[]; warnings: string[]; invalid: Set<string> } {
  const found: Findings = { errors: [], warnings: [] };
  if (props === undefined) return { props: {}, ...found, invalid: new Set() };
  if (!isPlainObject(props)) {
    found.errors.push(
      `the props of ${what.name} are ${shown(props)} (${jsType(props)}): expected an object with the keys ${Object.keys(what.spec).join(', ')}`,
    );
    return { props: {}, ...found, invalid: new Set(Object.keys(what.spec)) };
  }
  const checked = checkKeys(what.name, what.spec, props, at, found);
  const kept = checked === INVALID ? {} : (checked as Record<string, unknown>);
  const invalid = new Set(Object.keys(props).filter((k) => k in what.spec && props[k] !== undefined && !(k in kept)));
  return { props: kept as Partial<P>, ...found, invalid };
}

/**
 * Checks the props given to construct `c` against its spec: every wrong type is an error and every
 * unknown key a warning, reported under the construct's path. Returns the props with wrongly typed
 * values and unknown keys left out (defaults then apply; synth fails on the errors anyway).
 */
export function checkProps<P>(c: IConstruct, what: PropsOf<P>, props: unknown): P {
  const { props: checked, errors, warnings, invalid } = checkPropsValue(what, props);
  const path = c.node.path || what.name;
  for (const message of errors) recordedOf(c).errors.push({ path, message });
  for (const message of warnings) recordWarning(c, path, message);
  checkedByConstruct.set(c, { props: checked, invalid });
  return checked as P;
}

/** @internal the runtime type of a list of taints (a Spoke's, an inventory override's). */
export const TAINTS_CHECK: Check<Taint[]> = listOf(
  shape<Taint>('taint', { key: required(str()), value: str(), effect: required(str<Taint['effect']>()) }),
  "[{ key: 'gpu', effect: TaintEffect.NO_SELECT }]",
);
