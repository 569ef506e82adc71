/**
 * The construct library's output path, internal: the order objects are written in, the file each lands in,
 * the provenance every object carries, and how a model object becomes an ApiObject. The public part (where
 * objects land) is output.ts; rendering is _render-json.ts and writing _output-writer.ts, re-exported here
 * for the constructs that use them.
 */
import type { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { CONSTRUCT_PATH_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../model/core/keys.js';
import { routeOf } from './_output-routes.js';
import { RenderableApiObject } from './_render-json.js';
import { OutputFiles } from './output.js';

export { renderJson } from './_render-json.js';
export { OutputWriter } from './_output-writer.js';

const sortedScopes = new WeakSet<IConstruct>();

/**
 * Writes the children of `scope` in the order of their ids rather than the order they were created in.
 * A PullApplication renders one child per target spoke in name order; an escape hatch that asks for
 * one spoke's objects before the fleet renders creates that child early, and this keeps the output the
 * same either way.
 */
export function sortChildrenInOutput(scope: IConstruct): void {
  sortedScopes.add(scope);
}

/** `root` and every construct below it in output order: depth first, parents before children. */
export function inOutputOrder(root: IConstruct): IConstruct[] {
  const out: IConstruct[] = [];
  const visit = (c: IConstruct): void => {
    out.push(c);
    const children = c.node.children;
    const ordered = sortedScopes.has(c)
      ? [...children].sort((a, b) => (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0))
      : children;
    for (const child of ordered) visit(child);
  };
  visit(root);
  return out;
}

/** The output file of an API object: the file of its nearest routed ancestor, else {@link OutputFiles.DEFAULT}. */
export function outputFileOf(obj: IConstruct): string {
  for (let at: IConstruct | undefined = obj; at; at = at.node.scope) {
    const file = routeOf(at);
    if (file) return file;
  }
  return OutputFiles.DEFAULT;
}

const stamped = new WeakSet<ApiObject>();

/**
 * Adds the provenance label and construct-path annotation (the object's own path) to an object that
 * was not made through {@link apiObjectFrom}. Idempotent.
 */
export function stampProvenance(obj: ApiObject): void {
  if (!stamped.has(obj)) addProvenance(obj, false);
}

/**
 * Adds provenance to `obj` once: the managed-by label unless it carries one, and the construct-path
 * annotation (its own path) unless `pathGiven` (a hub Application and its work both name the
 * PullApplication target that made them). {@link stampProvenance} then leaves it alone.
 */
export function addProvenance(obj: ApiObject, pathGiven: boolean): void {
  stamped.add(obj);
  if (obj.metadata.getLabel(MANAGED_BY_LABEL) === undefined) obj.metadata.addLabel(MANAGED_BY_LABEL, MANAGED_BY_VALUE);
  if (!pathGiven) obj.metadata.addAnnotation(CONSTRUCT_PATH_ANNOTATION, obj.node.path);
}

/**
 * cdk8s drops `null` when it renders an object, but a `null` in Helm values is how Helm removes a
 * chart default. Objects holding a `null` are built with this placeholder in its place and rendered
 * back to `null` (a string with NUL characters never comes from a fleet description: YAML cannot hold one).
 */
const NULL_PLACEHOLDER = '\u0000pullfleet:null\u0000';

function replaceNulls(value: unknown, from: unknown, to: unknown): unknown {
  if (value === from) return to;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => replaceNulls(item, from, to));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceNulls(item, from, to)]));
}

/** Strings at least this long are held once per fleet, however many objects hold them. */
const LONG_STRING = 256;
/**
 * Members under these keys are held once per fleet when equal: the RBAC rules, subjects and role
 * references every spoke's bootstrap repeats for each app (tens of thousands of equal small objects in a
 * fleet of a thousand spokes). They are frozen once shared.
 */
const SHARED_MEMBERS: ReadonlySet<string> = new Set(['rules', 'subjects', 'roleRef']);

/** What a fleet holds once: long strings, and equal values of {@link SHARED_MEMBERS}. */
interface SharedPool {
  readonly strings: Map<string, string>;
  readonly members: Map<string, object>;
}
const sharedPools = new WeakMap<IConstruct, SharedPool>();

/** What the fleet (the root construct) that `scope` belongs to holds once. */
function sharedPoolOf(scope: IConstruct): SharedPool {
  const root = scope.node.root;
  let pool = sharedPools.get(root);
  if (!pool) {
    pool = { strings: new Map(), members: new Map() };
    sharedPools.set(root, pool);
  }
  return pool;
}

/** `value`, and everything in it, frozen. */
function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) freezeDeep(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * Whether `value` holds a `null` anywhere; on the way, each long string member of it is replaced by the
 * equal string the fleet already holds, if any, and each member under a {@link SHARED_MEMBERS} key by the
 * equal value the fleet holds (frozen). The model builds the same long strings for every object of a kind
 * (the CEL expression of each ManifestWork, Helm values given as text) and the same RBAC parts for every
 * spoke, and a fleet of thousands of spokes would otherwise hold each of them tens of thousands of times.
 * Replacing a value with an equal one changes nothing but memory; frozen objects are left as they are.
 */
function shareEqualParts(value: unknown, pool: SharedPool): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  const writable = !Object.isFrozen(value);
  let holdsNull = false;
  for (const key of Object.keys(record)) {
    const item = record[key];
    if (typeof item === 'string') {
      if (item.length < LONG_STRING) continue;
      const held = pool.strings.get(item);
      if (held === undefined) pool.strings.set(item, item);
      else if (writable) record[key] = held;
    } else if (item !== null && typeof item === 'object') {
      if (shareEqualParts(item, pool)) holdsNull = true;
      else if (writable && SHARED_MEMBERS.has(key)) {
        // Only null-free values are shared: a value holding a null is copied with a placeholder later.
        const id = `${key}\u0000${JSON.stringify(item)}`;
        const held = pool.members.get(id);
        if (held === undefined) pool.members.set(id, freezeDeep(item));
        else record[key] = held;
      }
    } else if (item === null) {
      holdsNull = true;
    }
  }
  return holdsNull;
}

/**
 * `value` ready to be held by an ApiObject: when it holds a `null`, a copy with the placeholder in its
 * place, and `apiObject` renders the placeholder back to `null`. Long strings in it are shared with the
 * rest of the fleet ({@link shareEqualParts}).
 */
export function keepNulls<T>(apiObject: ApiObject, value: T): T {
  if (!shareEqualParts(value, sharedPoolOf(apiObject))) return value;
  renderNullsBack(apiObject);
  return replaceNulls(value, null, NULL_PLACEHOLDER) as T;
}

/** Makes `apiObject` render the placeholder as `null`. */
function renderNullsBack(apiObject: ApiObject): void {
  const render = apiObject.toJson.bind(apiObject);
  apiObject.toJson = () => replaceNulls(render(), NULL_PLACEHOLDER, null);
}

/** An object built by src/model, as the construct library renders it. */
export type PlainObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
};

/**
 * An ApiObject from a plain object built by src/model; a `null` in it is rendered as `null` (cdk8s
 * alone would drop it). Provenance is added here: the managed-by label,
 * and the construct path unless the model object already names one (a hub Application and its work
 * both name the PullApplication target that made them).
 */
export function apiObjectFrom<T extends PlainObject>(scope: IConstruct, id: string, obj: T): ApiObject {
  const keepsNull = shareEqualParts(obj, sharedPoolOf(scope));
  const props = (keepsNull ? replaceNulls(obj, null, NULL_PLACEHOLDER) : obj) as PlainObject & {
    metadata: { labels?: Record<string, string> };
  };
  // Labels and annotations go straight into the object's metadata: given in props, cdk8s would keep the
  // given maps as well as its own copies of them (the rendered object is the same either way).
  const { labels, annotations, ...metadata } = props.metadata;
  const apiObject = new RenderableApiObject(scope, id, { ...props, metadata });
  for (const [key, value] of Object.entries(labels ?? {})) apiObject.metadata.addLabel(key, value);
  for (const [key, value] of Object.entries(annotations ?? {})) apiObject.metadata.addAnnotation(key, value);
  if (keepsNull) renderNullsBack(apiObject);
  addProvenance(apiObject, obj.metadata.annotations?.[CONSTRUCT_PATH_ANNOTATION] !== undefined);
  return apiObject;
}
