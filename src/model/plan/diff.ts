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

/** A value as JSON, cut to `max` characters with "…". */
export function compactValue(value: unknown, max = MAX_VALUE_CHARS): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `path: old → new`, `path: added value`, `path: removed (was value)`. */
export function formatFieldChange(change: FieldChange): string {
  const hasOld = Object.prototype.hasOwnProperty.call(change, 'old');
  const hasNew = Object.prototype.hasOwnProperty.call(change, 'new');
  if (hasOld && hasNew) return `${change.path}: ${compactValue(change.old)} → ${compactValue(change.new)}`;
  if (hasNew) return `${change.path}: added ${compactValue(change.new)}`;
  return `${change.path}: removed (was ${compactValue(change.old)})`;
}
