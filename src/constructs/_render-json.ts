/**
 * The JSON of an ApiObject exactly as `toJson()` renders it, in less time for the objects pullfleet makes
 * ({@link RenderableApiObject}). Only public cdk8s API is used: the props are the ones pullfleet gave the object,
 * and the metadata is rendered by `ApiObjectMetadataDefinition.toJson()`. What is done here in one walk is what
 * cdk8s does in two (cdk8s-team/cdk8s-core `src/api-object.ts` `toJson`, `src/resolve.ts`, `src/_util.ts`
 * `sanitizeValue`); test/constructs/render-json.test.ts checks it against the installed cdk8s, and each process
 * checks its first objects again (see {@link renderJson}).
 */
import {
  ApiObject,
  App,
  ImplicitTokenResolver,
  Lazy,
  LazyResolver,
  NumberStringUnionResolver,
  type ApiObjectProps,
  type JsonPatch,
} from 'cdk8s';
import type { Construct } from 'constructs';

/** The props each {@link RenderableApiObject} was made with (the very object cdk8s renders), until it is patched. */
const givenProps = new WeakMap<ApiObject, object>();

/**
 * An ApiObject whose props are known here (those given to its constructor, which cdk8s keeps and renders) and
 * which says when an escape hatch adds a JSON patch: from then on it renders through `toJson()`.
 */
export class RenderableApiObject extends ApiObject {
  public constructor(scope: Construct, id: string, props: ApiObjectProps) {
    super(scope, id, props);
    givenProps.set(this, props);
  }

  public override addJsonPatch(...ops: JsonPatch[]): void {
    givenProps.delete(this);
    super.addJsonPatch(...ops);
  }
}

/** Returned by {@link plainJson} for a value that is not plain JSON data. */
const NOT_PLAIN = Symbol('not plain');

/**
 * `value` as cdk8s renders it when it is JSON data, `Lazy` values included (resolving such a value is a copy
 * in which each `Lazy` is replaced by what it produces; sanitizing then drops `null` and `undefined` members,
 * and sorts keys unless `sortKeys` is false), or {@link NOT_PLAIN} when it holds anything else: another class instance (a token), a
 * function, an object without the plain prototype.
 */
function plainJson(value: unknown, sortKeys: boolean): unknown {
  if (value === null || value === undefined) return undefined;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = plainJson(value[i], sortKeys);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype)
    return value instanceof Lazy ? plainJson(value.produce(), sortKeys) : NOT_PLAIN;
  const keys = Object.keys(value);
  if (sortKeys) keys.sort();
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const item = plainJson((value as Record<string, unknown>)[key], sortKeys);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    if (item !== undefined && item !== null) out[key] = item;
  }
  return out;
}

/** Whether each app resolves values with cdk8s's own resolvers only (a plain value is then left as it is). */
const defaultResolvers = new WeakMap<App, boolean>();

function resolvesOnlyTokens(app: App): boolean {
  let only = defaultResolvers.get(app);
  if (only === undefined) {
    const kinds = [LazyResolver, ImplicitTokenResolver, NumberStringUnionResolver];
    only = app.resolvers.length === kinds.length && app.resolvers.every((r, i) => r.constructor === kinds[i]);
    defaultResolvers.set(app, only);
  }
  return only;
}

/**
 * How many quick renderings of a process are compared with `toJson()` before they are trusted: should cdk8s
 * render differently (another version), quick rendering is switched off for the rest of the process.
 */
const PROBES = 64;
let probesLeft = PROBES;
let quickRendering = true;

/**
 * The JSON of `obj` without `toJson()` when that gives the same: `obj` is a {@link RenderableApiObject} without
 * JSON patches, rendered by cdk8s's own `toJson` (no instance override) with the app's default resolvers, and
 * its props are JSON data (`Lazy` values included). Undefined otherwise. A value that throws while it is
 * produced gives undefined too: `toJson()` then says what went wrong, naming the construct.
 */
export function quickJson(obj: ApiObject): Record<string, unknown> | undefined {
  const props = givenProps.get(obj);
  if (props === undefined || obj.toJson !== ApiObject.prototype.toJson || !resolvesOnlyTokens(App.of(obj)))
    return undefined;
  try {
    // The metadata as cdk8s renders it is JSON data already resolved, sorted and without empty members: rendering
    // it again with the rest would change nothing, so only the rest is walked.
    const metadata: unknown = obj.metadata.toJson();
    const { metadata: _replaced, ...rest } = props as Record<string, unknown>;
    const data = plainJson(rest, !process.env.CDK8S_DISABLE_SORT);
    if (data === NOT_PLAIN || typeof data !== 'object' || data === null) return undefined;
    // apiVersion, kind and metadata first, then the rest (as ApiObject.toJson orders them).
    const json = data as Record<string, unknown>;
    const result: Record<string, unknown> = {};
    if ('apiVersion' in json) result.apiVersion = json.apiVersion;
    if ('kind' in json) result.kind = json.kind;
    if (metadata !== undefined && metadata !== null) result.metadata = metadata;
    for (const key of Object.keys(json)) if (!(key in result)) result[key] = json[key];
    return result;
  } catch {
    return undefined;
  }
}

/**
 * The JSON of `obj`, exactly as `obj.toJson()` renders it: {@link quickJson} when it applies, `toJson()`
 * otherwise. The first {@link PROBES} quick renderings of a process are compared with `toJson()` (which is
 * returned): should a cdk8s version render differently, quick rendering is off for the rest of the process.
 */
export function renderJson(obj: ApiObject): Record<string, unknown> {
  const quick = quickRendering ? quickJson(obj) : undefined;
  if (quick === undefined) return obj.toJson() as Record<string, unknown>;
  if (probesLeft > 0) {
    probesLeft--;
    const json = obj.toJson() as Record<string, unknown>;
    if (JSON.stringify(json) !== JSON.stringify(quick)) quickRendering = false;
    return json;
  }
  return quick;
}
