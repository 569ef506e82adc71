/**
 * JSON Merge Patch (RFC 7386) and JSON Patch (RFC 6902), applied to plain JSON values.
 * Inputs are never mutated.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function isPlainObject(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ak = Object.keys(a).filter((k) => a[k] !== undefined);
    const bk = Object.keys(b).filter((k) => b[k] !== undefined);
    return ak.length === bk.length && ak.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 7386: objects merge recursively, `null` removes a key, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): Json {
  if (!isPlainObject(patch)) return clone(patch as Json);
  const result: Record<string, Json> = isPlainObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

export class PatchError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`invalid JSON pointer ${JSON.stringify(pointer)}`, 422);
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function containerOf(doc: Json, parts: string[], op: string): { parent: Json; key: string } {
  let cursor: Json = doc;
  for (const part of parts.slice(0, -1)) {
    if (Array.isArray(cursor)) cursor = cursor[Number(part)];
    else if (isPlainObject(cursor)) cursor = cursor[part];
    else cursor = undefined as unknown as Json;
    if (cursor === undefined)
      throw new PatchError(`${op} operation does not apply: doc is missing path: /${parts.join('/')}`, 422);
  }
  return { parent: cursor, key: parts[parts.length - 1] };
}

function readPointer(doc: Json, pointer: string, op: string): Json {
  let cursor: Json = doc;
  for (const part of parsePointer(pointer)) {
    if (Array.isArray(cursor)) cursor = cursor[Number(part)];
    else if (isPlainObject(cursor)) cursor = cursor[part];
    else cursor = undefined as unknown as Json;
    if (cursor === undefined)
      throw new PatchError(`${op} operation does not apply: doc is missing path: ${pointer}`, 422);
  }
  return cursor;
}

function removeAt(doc: Json, pointer: string, op: string): Json {
  const parts = parsePointer(pointer);
  if (parts.length === 0) throw new PatchError(`${op}: cannot remove the whole document`, 422);
  const { parent, key } = containerOf(doc, parts, op);
  if (Array.isArray(parent)) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) {
      throw new PatchError(`${op} operation does not apply: doc is missing path: ${pointer}`, 422);
    }
    return parent.splice(index, 1)[0];
  }
  if (isPlainObject(parent) && key in parent) {
    const value = parent[key]!;
    delete parent[key];
    return value;
  }
  throw new PatchError(`${op} operation does not apply: doc is missing path: ${pointer}`, 422);
}

function addAt(doc: Json, pointer: string, value: Json, op: string, replace: boolean): Json {
  const parts = parsePointer(pointer);
  if (parts.length === 0) return value;
  const { parent, key } = containerOf(doc, parts, op);
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length || (replace && index === parent.length)) {
      throw new PatchError(`${op} operation does not apply: index out of range in ${pointer}`, 422);
    }
    if (replace) parent[index] = value;
    else parent.splice(index, 0, value);
  } else if (isPlainObject(parent)) {
    if (replace && !(key in parent)) {
      throw new PatchError(`${op} operation does not apply: doc is missing key: ${pointer}`, 422);
    }
    parent[key] = value;
  } else {
    throw new PatchError(`${op} operation does not apply: doc is missing path: ${pointer}`, 422);
  }
  return doc;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

/** RFC 6902. A failing `test` or a missing path rejects the whole patch (nothing is applied). */
export function jsonPatch(target: Json, operations: unknown): Json {
  if (!Array.isArray(operations)) throw new PatchError('json patch must be an array of operations', 400);
  let doc = clone(target);
  for (const raw of operations as JsonPatchOp[]) {
    const { op, path } = raw;
    if (typeof path !== 'string') throw new PatchError(`operation ${JSON.stringify(raw)} has no path`, 422);
    switch (op) {
      case 'add':
        doc = addAt(doc, path, clone(raw.value as Json), op, false);
        break;
      case 'replace':
        doc = addAt(doc, path, clone(raw.value as Json), op, true);
        break;
      case 'remove':
        removeAt(doc, path, op);
        break;
      case 'move': {
        const value = removeAt(doc, raw.from ?? '', op);
        doc = addAt(doc, path, value, op, false);
        break;
      }
      case 'copy':
        doc = addAt(doc, path, clone(readPointer(doc, raw.from ?? '', op)), op, false);
        break;
      case 'test':
        if (!deepEqual(readPointer(doc, path, op), raw.value)) {
          throw new PatchError(`the test operation failed: value at ${path} is not ${JSON.stringify(raw.value)}`, 422);
        }
        break;
      default:
        throw new PatchError(`unknown json patch operation ${JSON.stringify(op)}`, 422);
    }
  }
  return doc;
}
