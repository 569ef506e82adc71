/**
 * Field ownership for server-side apply, modelled on the API server's managedFields:
 * every write records which leaf fields each (manager, operation, subresource) owns.
 *
 * - Objects are granular (each key is a field) unless `x-kubernetes-map-type: atomic`.
 * - Lists are atomic unless the schema says `x-kubernetes-list-type: set` (each value is owned) or
 *   `map` (each element, identified by its `x-kubernetes-list-map-keys`, is owned field by field).
 *   `metadata.finalizers` is a set and `metadata.ownerReferences` a map keyed by uid, as upstream.
 * - An apply owns exactly what it sends; fields it sent before and no longer sends are removed unless
 *   another manager also owns them. Applying a value that differs from one owned by another manager is
 *   a conflict unless `force` is set, which moves the field to the applier.
 * - An update (PUT / non-apply PATCH / POST) takes ownership of every field whose value it changed.
 */
import { clone, deepEqual, isPlainObject, type Json } from './patch.js';

export type Schema = Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
type Segment = string | { v: Json } | { k: Record<string, Json> };

const ELEMENT = Symbol('list element');
type Leaf = { segs: Segment[]; value: Json | typeof ELEMENT };

const META_SCHEMA: Schema = {
  type: 'object',
  properties: {
    labels: { type: 'object' },
    annotations: { type: 'object' },
    finalizers: { type: 'array', 'x-kubernetes-list-type': 'set' },
    ownerReferences: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['uid'] },
  },
};

/** metadata fields the server owns; never part of anyone's field set. */
const SERVER_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'generateName',
]);

export interface OwnershipEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  subresource: string;
  apiVersion: string;
  time: string;
  fields: Set<string>;
}

export type Ownership = OwnershipEntry[];

export class ApplyConflict extends Error {
  constructor(readonly conflicts: Array<{ manager: string; field: string }>) {
    super(
      `Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}: ` +
        conflicts.map((c) => `conflict with "${c.manager}": ${c.field}`).join('; '),
    );
  }
}

function childSchema(schema: Schema, seg: Segment, depth: number): Schema {
  if (depth === 0 && seg === 'metadata') return META_SCHEMA;
  if (!schema) return undefined;
  if (typeof seg === 'string') {
    const fromProps = schema.properties?.[seg];
    if (fromProps) return fromProps;
    return isPlainObject(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined;
  }
  return schema.items;
}

const encode = (segs: Segment[]): string => JSON.stringify(segs);
const decode = (key: string): Segment[] => JSON.parse(key) as Segment[];

export function fieldPathText(key: string): string {
  return decode(key)
    .map((s) =>
      typeof s === 'string'
        ? `.${s}`
        : 'v' in s
          ? `[${JSON.stringify(s.v)}]`
          : `[${Object.entries(s.k)
              .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
              .join(',')}]`,
    )
    .join('');
}

function collect(value: Json, schema: Schema, segs: Segment[], out: Map<string, Leaf>): void {
  if (isPlainObject(value) && schema?.['x-kubernetes-map-type'] !== 'atomic') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined);
    if (keys.length === 0 && segs.length > 0) {
      out.set(encode(segs), { segs, value });
      return;
    }
    for (const key of keys) {
      if (segs.length === 0 && (key === 'apiVersion' || key === 'kind')) continue;
      if (segs.length === 1 && segs[0] === 'metadata' && SERVER_META.has(key)) continue;
      collect(value[key], childSchema(schema, key, segs.length), [...segs, key], out);
    }
    return;
  }
  if (Array.isArray(value) && value.length > 0) {
    const listType = schema?.['x-kubernetes-list-type'];
    if (listType === 'set') {
      for (const item of value) {
        const path = [...segs, { v: item }];
        out.set(encode(path), { segs: path, value: item });
      }
      return;
    }
    if (listType === 'map' && Array.isArray(schema?.['x-kubernetes-list-map-keys'])) {
      const mapKeys = schema['x-kubernetes-list-map-keys'] as string[];
      for (const item of value) {
        if (!isPlainObject(item)) continue;
        const k: Record<string, Json> = {};
        for (const mk of mapKeys) if (item[mk] !== undefined) k[mk] = item[mk]!;
        const path = [...segs, { k }];
        out.set(encode(path), { segs: path, value: ELEMENT });
        collect(item, schema?.items, path, out);
      }
      return;
    }
  }
  out.set(encode(segs), { segs, value });
}

/** Leaf fields of an object (without server-owned metadata). */
export function leafFields(object: Json | undefined, schema: Schema): Map<string, Leaf> {
  const out = new Map<string, Leaf>();
  if (object !== undefined) collect(object, schema, [], out);
  return out;
}

function findElement(list: Json[], seg: Segment): number {
  if (typeof seg === 'string') return -1;
  if ('v' in seg) return list.findIndex((item) => deepEqual(item, seg.v));
  return list.findIndex(
    (item) => isPlainObject(item) && Object.entries(seg.k).every(([k, v]) => deepEqual(item[k], v)),
  );
}

function removePath(root: Json, segs: Segment[]): void {
  let cursor: Json | undefined = root;
  for (const seg of segs.slice(0, -1)) {
    if (cursor === undefined || cursor === null) return;
    if (typeof seg === 'string') cursor = isPlainObject(cursor) ? cursor[seg] : undefined;
    else cursor = Array.isArray(cursor) ? cursor[findElement(cursor, seg)] : undefined;
  }
  const last = segs[segs.length - 1];
  if (typeof last === 'string') {
    if (isPlainObject(cursor)) delete cursor[last];
  } else if (Array.isArray(cursor)) {
    const index = findElement(cursor, last);
    if (index >= 0) cursor.splice(index, 1);
  }
}

/** Merges an applied configuration into the live object following the schema's list and map types. */
function mergeApplied(live: Json | undefined, applied: Json, schema: Schema, depth: number): Json {
  if (isPlainObject(applied) && isPlainObject(live) && schema?.['x-kubernetes-map-type'] !== 'atomic') {
    const result: Record<string, Json> = { ...live };
    for (const [key, value] of Object.entries(applied)) {
      if (value === undefined) continue;
      result[key] = mergeApplied(live[key], value, childSchema(schema, key, depth), depth + 1);
    }
    return result;
  }
  if (Array.isArray(applied) && Array.isArray(live)) {
    const listType = schema?.['x-kubernetes-list-type'];
    if (listType === 'set') {
      const result = [...live];
      for (const item of applied) if (!result.some((x) => deepEqual(x, item))) result.push(clone(item));
      return result;
    }
    if (listType === 'map' && Array.isArray(schema?.['x-kubernetes-list-map-keys'])) {
      const mapKeys = schema['x-kubernetes-list-map-keys'] as string[];
      const result = [...live];
      for (const item of applied) {
        if (!isPlainObject(item)) continue;
        const k: Record<string, Json> = {};
        for (const mk of mapKeys) if (item[mk] !== undefined) k[mk] = item[mk]!;
        const index = findElement(result, { k });
        if (index >= 0) result[index] = mergeApplied(result[index], item, schema?.items, depth + 1);
        else result.push(clone(item));
      }
      return result;
    }
  }
  return clone(applied);
}

function isOwnedWithin(entries: Ownership, except: OwnershipEntry | undefined, key: string): boolean {
  const prefix = key.slice(0, -1) + ',';
  return entries.some((e) => e !== except && [...e.fields].some((f) => f === key || f.startsWith(prefix)));
}

function entryFor(
  entries: Ownership,
  manager: string,
  operation: 'Apply' | 'Update',
  subresource: string,
): OwnershipEntry | undefined {
  return entries.find((e) => e.manager === manager && e.operation === operation && e.subresource === subresource);
}

export interface ApplyArgs {
  live: Json | undefined;
  applied: Json;
  schema: Schema;
  entries: Ownership;
  manager: string;
  subresource: string;
  apiVersion: string;
  force: boolean;
  now: string;
}

/** Server-side apply: returns the merged object and updates `entries` in place (throws ApplyConflict). */
export function applyConfiguration(args: ApplyArgs): Json {
  const { live, applied, schema, entries, manager, subresource, force } = args;
  const appliedFields = leafFields(applied, schema);
  const liveFields = leafFields(live, schema);
  const mine = entryFor(entries, manager, 'Apply', subresource);
  const conflicts: Array<{ manager: string; field: string; entry: OwnershipEntry; key: string }> = [];
  for (const [key, leaf] of appliedFields) {
    const current = liveFields.get(key);
    if (!current || current.value === ELEMENT || leaf.value === ELEMENT) continue;
    if (deepEqual(current.value, leaf.value)) continue;
    for (const entry of entries) {
      if (entry === mine || entry.manager === manager) continue;
      if (entry.fields.has(key)) conflicts.push({ manager: entry.manager, field: fieldPathText(key), entry, key });
    }
  }
  if (conflicts.length > 0 && !force) throw new ApplyConflict(conflicts);
  for (const c of conflicts) c.entry.fields.delete(c.key);

  let result = mergeApplied(live === undefined ? {} : clone(live), applied, schema, 0);
  for (const key of mine?.fields ?? []) {
    if (appliedFields.has(key)) continue;
    if (isOwnedWithin(entries, mine, key)) continue;
    removePath(result, decode(key));
  }
  const target = mine ?? {
    manager,
    operation: 'Apply' as const,
    subresource,
    apiVersion: args.apiVersion,
    time: args.now,
    fields: new Set<string>(),
  };
  target.fields = new Set(appliedFields.keys());
  target.time = args.now;
  target.apiVersion = args.apiVersion;
  if (!mine) entries.push(target);
  pruneEmpty(entries);
  result = result ?? {};
  return result;
}

/** Ownership after a non-apply write: the writer takes every field it changed; removed fields lose all owners. */
export function recordUpdate(args: {
  before: Json | undefined;
  after: Json;
  schema: Schema;
  entries: Ownership;
  manager: string;
  subresource: string;
  apiVersion: string;
  now: string;
}): void {
  const before = leafFields(args.before, args.schema);
  const after = leafFields(args.after, args.schema);
  const changed: string[] = [];
  for (const [key, leaf] of after) {
    const old = before.get(key);
    if (!old || (leaf.value !== ELEMENT && !deepEqual(old.value, leaf.value))) changed.push(key);
  }
  const removed = [...before.keys()].filter((k) => !after.has(k));
  if (changed.length === 0 && removed.length === 0) return;
  for (const entry of args.entries) {
    for (const key of changed) entry.fields.delete(key);
    for (const key of removed) entry.fields.delete(key);
  }
  if (changed.length > 0) {
    let mine = entryFor(args.entries, args.manager, 'Update', args.subresource);
    if (!mine) {
      mine = {
        manager: args.manager,
        operation: 'Update',
        subresource: args.subresource,
        apiVersion: args.apiVersion,
        time: args.now,
        fields: new Set(),
      };
      args.entries.push(mine);
    }
    for (const key of changed) mine.fields.add(key);
    mine.time = args.now;
  }
  pruneEmpty(args.entries);
}

function pruneEmpty(entries: Ownership): void {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i].fields.size === 0) entries.splice(i, 1);
}

/** The managedFields list the API server would return for these entries. */
export function managedFieldsOf(entries: Ownership): Json[] {
  return entries.map((e) => {
    const root: Record<string, Json> = {};
    for (const key of [...e.fields].sort()) {
      let node = root;
      for (const seg of decode(key)) {
        const name =
          typeof seg === 'string'
            ? `f:${seg}`
            : 'v' in seg
              ? `v:${JSON.stringify(seg.v)}`
              : `k:${JSON.stringify(seg.k)}`;
        node = (node[name] ??= {}) as Record<string, Json>;
      }
      if (Object.keys(node).length > 0) node['.'] = {};
    }
    const out: Record<string, Json> = {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time,
      fieldsType: 'FieldsV1',
      fieldsV1: root,
    };
    if (e.subresource) out.subresource = e.subresource;
    return out;
  });
}
