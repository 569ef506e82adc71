/**
 * A compact field-level diff of two Kubernetes objects for `pullfleet plan`: dotted paths with the old
 * and new value, list items matched by identity (kind and name, or `name`) rather than position so one
 * inserted manifest does not show every later one as changed.
 */

export interface FieldChange {
  /** `spec.source.targetRevision`, `spec.workload.manifests[Application argocd/web].spec.project`. */
  readonly path: string;
  /** Absent when the field was added. */
  readonly old?: unknown;
  /** Absent when the field was removed. */
  readonly new?: unknown;
}

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> => !!v && typeof v === 'object' && !Array.isArray(v);

function itemKey(item: Json): string | undefined {
  if (!isObject(item)) return undefined;
  const meta = item.metadata;
  if (isObject(meta) && typeof meta.name === 'string') {
    const kind = typeof item.kind === 'string' ? `${item.kind} ` : '';
    return `${kind}${typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/` : ''}${meta.name}`;
  }
  if (typeof item.name === 'string') return item.name;
  if (isObject(item.resourceIdentifier)) {
    const id = item.resourceIdentifier;
    return `${String(id.resource ?? '')} ${id.namespace ? `${String(id.namespace)}/` : ''}${String(id.name ?? '')}`;
  }
  return undefined;
}

/** Keys of every item, or undefined when some item has none or two share one (then match by position). */
function keysOf(list: Json[]): string[] | undefined {
  const keys = list.map(itemKey);
  if (keys.some((k) => k === undefined)) return undefined;
  if (new Set(keys).size !== keys.length) return undefined;
  return keys as string[];
}

function same(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }
  return false;
}

const join = (base: string, key: string) => (base ? `${base}.${key}` : key);
const isScalarList = (list: Json[]) => list.every((x) => !isObject(x) && !Array.isArray(x));

function walk(a: Json, b: Json, at: string, out: FieldChange[]): void {
  if (same(a, b)) return;
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys) {
      const has = (o: Record<string, Json>) => Object.prototype.hasOwnProperty.call(o, key);
      const path = join(at, key);
      if (!has(a)) out.push({ path, new: b[key] });
      else if (!has(b)) out.push({ path, old: a[key] });
      else walk(a[key], b[key], path, out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && !(isScalarList(a) && isScalarList(b))) {
    const ka = keysOf(a);
    const kb = keysOf(b);
    if (ka && kb) {
      const oldByKey = new Map(ka.map((k, i) => [k, a[i]]));
      const newByKey = new Map(kb.map((k, i) => [k, b[i]]));
      for (const k of ka) {
        if (!newByKey.has(k)) out.push({ path: `${at}[${k}]`, old: oldByKey.get(k) });
        else walk(oldByKey.get(k), newByKey.get(k), `${at}[${k}]`, out);
      }
      for (const k of kb) if (!oldByKey.has(k)) out.push({ path: `${at}[${k}]`, new: newByKey.get(k) });
      return;
    }
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (i >= b.length) out.push({ path: `${at}[${i}]`, old: a[i] });
      else if (i >= a.length) out.push({ path: `${at}[${i}]`, new: b[i] });
      else walk(a[i], b[i], `${at}[${i}]`, out);
    }
    return;
  }
  out.push({ path: at || '(whole object)', old: a, new: b });
}

/** Every field that differs between `before` and `after`, in path order (object keys sorted). */
export function diffFields(before: unknown, after: unknown): FieldChange[] {
  const out: FieldChange[] = [];
  walk(before, after, '', out);
  return out;
}

/** Longest rendering of one value in a change line. */
export const MAX_VALUE_CHARS = 60;

/** Characters of what both sides share kept before the first difference when long values are cut. */
const LEAD_CHARS = 16;

/** Items of a list named one by one in a change line before "and N more". */
const MAX_LIST_ITEMS = 5;

/** A value as JSON, cut to `max` characters with "…". */
export function compactValue(value: unknown, max = MAX_VALUE_CHARS): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Two values as JSON, each within `max` characters. Values that do not fit are cut around where the two
 * texts first differ (the same start on both sides, with a little of what they share before it), so a
 * difference past the first `max` characters is still visible.
 */
function compactPair(before: unknown, after: unknown, max = MAX_VALUE_CHARS): [string, string] {
  const a = JSON.stringify(before) ?? String(before);
  const b = JSON.stringify(after) ?? String(after);
  if (a.length <= max && b.length <= max) return [a, b];
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  // Start a little before the difference, or earlier when the longer side would not fill the line.
  const start = Math.max(0, Math.min(prefix - LEAD_CHARS, Math.max(a.length, b.length) - max + 1));
  const cut = (text: string) => {
    const shown = start > 0 ? `…${text.slice(start)}` : text;
    return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
  };
  return [cut(a), cut(b)];
}

const isScalar = (v: unknown) => v === null || (typeof v !== 'object' && typeof v !== 'function');

/** What `after` has that `before` lacks, counting repeats (a multiset difference), in `after`'s order. */
function extra(before: readonly unknown[], after: readonly unknown[]): unknown[] {
  const left = new Map<string, number>();
  for (const item of before) {
    const key = JSON.stringify(item);
    left.set(key, (left.get(key) ?? 0) + 1);
  }
  return after.filter((item) => {
    const key = JSON.stringify(item);
    const n = left.get(key) ?? 0;
    if (n > 0) left.set(key, n - 1);
    return n === 0;
  });
}

/**
 * A long list of scalars (cluster names, label values) by its items: `30 → 31 items: + "spoke-31"`, or
 * undefined when the items are the same, only ordered differently.
 */
function listDelta(before: readonly unknown[], after: readonly unknown[]): string | undefined {
  const added = extra(before, after);
  const removed = extra(after, before);
  if (added.length === 0 && removed.length === 0) return undefined;
  const items = (sign: string, list: unknown[]) => {
    const shown = list.slice(0, MAX_LIST_ITEMS).map((item) => compactValue(item, MAX_VALUE_CHARS / 2));
    const more = list.length > MAX_LIST_ITEMS ? ` and ${list.length - MAX_LIST_ITEMS} more` : '';
    return `${sign} ${shown.join(', ')}${more}`;
  };
  const parts = [...(added.length ? [items('+', added)] : []), ...(removed.length ? [items('-', removed)] : [])];
  return `${before.length} → ${after.length} items: ${parts.join('; ')}`;
}

/**
 * `path: old → new`, `path: added value`, `path: removed (was value)`. Long values are cut where the two
 * sides differ; a long list of scalars is shown by the items added and removed.
 */
export function formatFieldChange(change: FieldChange): string {
  const hasOld = Object.prototype.hasOwnProperty.call(change, 'old');
  const hasNew = Object.prototype.hasOwnProperty.call(change, 'new');
  if (hasOld && hasNew) {
    const { old, new: next } = change;
    const long = [old, next].some((value) => (JSON.stringify(value) ?? '').length > MAX_VALUE_CHARS);
    if (long && Array.isArray(old) && Array.isArray(next) && old.every(isScalar) && next.every(isScalar)) {
      const delta = listDelta(old, next);
      if (delta) return `${change.path}: ${delta}`;
    }
    const [before, after] = compactPair(old, next);
    return `${change.path}: ${before} → ${after}`;
  }
  if (hasNew) return `${change.path}: added ${compactValue(change.new)}`;
  return `${change.path}: removed (was ${compactValue(change.old)})`;
}
