/**
 * The storage and write semantics of the fake API server, shared by its HTTP front and by tests that
 * act as other actors directly. Every write goes through here, so direct writes bump resourceVersion
 * and reach watchers exactly like HTTP writes.
 */
import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { applyConfiguration, ApplyConflict, managedFieldsOf, recordUpdate, type Ownership } from './ownership.js';
import { clone, deepEqual, isPlainObject, jsonPatch, mergePatch, PatchError } from './patch.js';
import {
  apiVersionOf,
  definitionsFromCrd,
  qualifiedName,
  Registry,
  resourceKey,
  type ResourceDefinition,
} from './registry.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';

export type KubeObj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

/** An API error carrying the Kubernetes Status object the server answers with. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toStatus(): KubeObj {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      // Some answers of kube-apiserver carry no reason (a server-side apply of an undeclared field).
      ...(this.reason ? { reason: this.reason } : {}),
      details: this.details,
      code: this.code,
    };
  }
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

interface StoredEvent {
  rv: number;
  key: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObj;
  previous?: KubeObj;
}

export interface WatchSink {
  send(type: WatchEventType, object: KubeObj): void;
  close(): void;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Resume after this resourceVersion; '' or '0' starts with synthetic ADDED events for what exists. */
  resourceVersion?: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface WriteOptions {
  /** 'status' to write through the status subresource. */
  subresource?: string;
  /** Field manager recorded in managedFields (required for apply). */
  fieldManager?: string;
  /** Server-side apply: take fields owned by other managers. */
  force?: boolean;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
}

interface Watcher {
  key: string;
  namespace?: string;
  labels: (l: Record<string, string> | undefined) => boolean;
  fields: (o: KubeObj) => boolean;
  sink: WatchSink;
}

/** etcd's default request limit (--max-request-bytes): an object larger than this cannot be stored. */
export const MAX_STORED_BYTES = 1.5 * 1024 * 1024;
/** The API server's limit on a write request body. */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Why a label or annotation key is not a qualified name (`[prefix/]name`), or undefined. */
function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'a qualified name must have at most one "/"';
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    return 'prefix part must be a lowercase RFC 1123 subdomain';
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name))
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)";
  return undefined;
}

function parseApplyBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseYaml(text);
  }
}

// Its own formatter on purpose: this stands in for another program, so it does not share pullfleet's code.
function timestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** Translates ajv errors to the causes the API server reports (field paths in dotted form). */
function ajvCauses(validate: ValidateFunction): StatusCause[] {
  return (validate.errors ?? []).map((e) => {
    const base = e.instancePath
      .replace(/^\//, '')
      .split('/')
      .filter(Boolean)
      .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
      .join('')
      .replace(/\.\[/g, '[');
    if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      return { reason: 'FieldValueRequired', message: 'Required value', field: base ? `${base}.${missing}` : missing };
    }
    if (e.keyword === 'enum') {
      return {
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: supported values: ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`,
        field: base,
      };
    }
    if (e.keyword === 'format') {
      return {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(e.data)}: ${base} in body must be of type ${(e.params as { format: string }).format}: ${JSON.stringify(e.data)}`,
        field: base,
      };
    }
    return { reason: 'FieldValueInvalid', message: `Invalid value: ${e.message ?? 'invalid'}`, field: base };
  });
}

/** Removes x-kubernetes-* and other keywords ajv would misread, and keeps `nullable` working. */
function ajvSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(ajvSchema);
  if (!isPlainObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-kubernetes-')) continue;
    if (key === 'format' && value !== 'date-time') continue;
    out[key] =
      key === 'properties' || key === 'patternProperties'
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, ajvSchema(v)]))
        : ajvSchema(value);
  }
  if (out.nullable === true && out.type === undefined) delete out.nullable;
  return out;
}

/** Compiled validators, shared by every store in the process (compiling the Argo CD schemas is slow). */
const AJV = new Ajv({ strict: false, allErrors: true, useDefaults: true, validateFormats: true, verbose: true });
// The API server checks date-time (RFC 3339) strings in custom resources; other formats are not checked here.
AJV.addFormat('date-time', /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/);
const COMPILED = new WeakMap<object, ValidateFunction>();

export interface StoreOptions {
  /** How many past events watches can resume from (older resourceVersions get 410 Gone). @default 20000 */
  historyLimit?: number;
  /** Clock for creationTimestamp / deletionTimestamp / managedFields times. */
  now?: () => Date;
  /**
   * Accept namespaced creates into namespaces that do not exist (older behaviour of the double). The real
   * server answers 404 `namespaces "x" not found`. @default false
   */
  implicitNamespaces?: boolean;
}

export class FakeStore {
  readonly registry = new Registry();
  private readonly objects = new Map<string, Map<string, KubeObj>>();
  private readonly ownership = new Map<string, Ownership>();
  private readonly history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private rv = 0;
  /** Events with a resourceVersion above this are still in the history. */
  private compactedRv = 0;
  private readonly historyLimit: number;
  private readonly now: () => Date;
  private readonly implicitNamespaces: boolean;

  constructor(opts: StoreOptions = {}) {
    this.historyLimit = opts.historyLimit ?? 20_000;
    this.now = opts.now ?? (() => new Date());
    this.implicitNamespaces = opts.implicitNamespaces === true;
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  registerDefinition(def: ResourceDefinition): void {
    this.registry.register(def);
  }

  registerCrd(crd: KubeObj): ResourceDefinition[] {
    const defs = definitionsFromCrd(crd);
    for (const def of defs) this.registerDefinition(def);
    return defs;
  }

  // ---------------------------------------------------------------- reads

  get(def: ResourceDefinition, namespace: string | undefined, name: string): KubeObj {
    const found = this.bucket(def).get(objectKey(def.namespaced ? namespace : undefined, name));
    if (!found) throw this.notFound(def, name);
    return found;
  }

  find(def: ResourceDefinition, namespace: string | undefined, name: string): KubeObj | undefined {
    return this.bucket(def).get(objectKey(def.namespaced ? namespace : undefined, name));
  }

  list(
    def: ResourceDefinition,
    opts: ListOptions = {},
  ): { items: KubeObj[]; resourceVersion: string; continue?: string } {
    const labels = this.labelSelector(opts.labelSelector);
    const fields = this.fieldSelector(opts.fieldSelector);
    const all = [...this.bucket(def).entries()]
      .filter(([, o]) => !def.namespaced || !opts.namespace || o.metadata.namespace === opts.namespace)
      .filter(([, o]) => labels(o.metadata.labels) && fields(o))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    let start = 0;
    let listRv = this.resourceVersion;
    if (opts.continue) {
      let token: { k: string; rv: string };
      try {
        token = JSON.parse(Buffer.from(opts.continue, 'base64url').toString('utf8')) as { k: string; rv: string };
      } catch {
        throw new ApiError(400, 'BadRequest', 'continue key is not valid: incorrect encoded start resourceVersion');
      }
      start = all.findIndex(([k]) => k > token.k);
      if (start < 0) start = all.length;
      listRv = token.rv;
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : all.length;
    const page = all.slice(start, start + limit);
    const more = start + limit < all.length;
    return {
      items: page.map(([, o]) => o),
      resourceVersion: listRv,
      continue: more
        ? Buffer.from(JSON.stringify({ k: page[page.length - 1][0], rv: listRv })).toString('base64url')
        : undefined,
    };
  }

  // ---------------------------------------------------------------- writes

  create(def: ResourceDefinition, namespace: string | undefined, body: KubeObj, opts: WriteOptions = {}): KubeObj {
    if (!isPlainObject(body)) throw new ApiError(400, 'BadRequest', 'the request body must be an object');
    this.checkTypeMeta(def, body);
    const meta: KubeObj = isPlainObject(body.metadata) ? body.metadata : {};
    const ns: string | undefined = def.namespaced ? (namespace ?? meta.namespace) : undefined;
    if (def.namespaced && !ns)
      throw new ApiError(400, 'BadRequest', 'the namespace of the object is required for a namespaced resource');
    if (def.namespaced && meta.namespace && meta.namespace !== ns) {
      throw new ApiError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (ns) this.checkNamespaceExists(ns);
    let name = meta.name as string | undefined;
    if (!name && meta.generateName) name = `${meta.generateName}${randomUUID().replace(/-/g, '').slice(0, 5)}`;
    if (!name)
      throw this.invalid(def, '', [
        {
          reason: 'FieldValueRequired',
          field: 'metadata.name',
          message: 'Required value: name or generateName is required',
        },
      ]);
    this.checkName(def, name);
    if (this.bucket(def).has(objectKey(ns, name))) {
      throw new ApiError(409, 'AlreadyExists', `${qualifiedName(def)} "${name}" already exists`, {
        name,
        group: def.group,
        kind: def.plural,
      });
    }
    const obj: KubeObj = clone(body);
    obj.apiVersion = apiVersionOf(def);
    obj.kind = def.kind;
    const cleanMeta: KubeObj = { ...obj.metadata };
    for (const k of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'managedFields',
      'selfLink',
    ])
      delete cleanMeta[k];
    cleanMeta.name = name;
    if (ns) cleanMeta.namespace = ns;
    cleanMeta.uid = randomUUID();
    cleanMeta.creationTimestamp = timestamp(this.now());
    if (def.custom) cleanMeta.generation = 1;
    obj.metadata = cleanMeta;
    if (def.subresources.includes('status') && def.custom) delete obj.status;
    this.validate(def, obj);
    const entries: Ownership = [];
    recordUpdate({
      before: undefined,
      after: obj,
      schema: def.schema,
      entries,
      manager: opts.fieldManager ?? 'unknown',
      subresource: '',
      apiVersion: apiVersionOf(def),
      now: timestamp(this.now()),
    });
    return this.commit(def, undefined, obj, entries);
  }

  /** PUT: full replace of the object (or of its status through the status subresource). */
  update(
    def: ResourceDefinition,
    namespace: string | undefined,
    name: string,
    body: KubeObj,
    opts: WriteOptions = {},
  ): KubeObj {
    if (!isPlainObject(body)) throw new ApiError(400, 'BadRequest', 'the request body must be an object');
    this.checkTypeMeta(def, body);
    const existing = this.get(def, namespace, name);
    const meta = isPlainObject(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== name) {
      throw new ApiError(
        400,
        'BadRequest',
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    }
    if (meta.resourceVersion === undefined || meta.resourceVersion === '') {
      if (def.custom) {
        throw this.invalid(def, name, [
          {
            reason: 'FieldValueInvalid',
            field: 'metadata.resourceVersion',
            message: 'Invalid value: 0x0: must be specified for an update',
          },
        ]);
      }
    } else if (meta.resourceVersion !== existing.metadata.resourceVersion) {
      throw this.conflict(def, name);
    }
    return this.writeNext(def, existing, clone(body), opts, 'Update');
  }

  patch(
    def: ResourceDefinition,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: WriteOptions = {},
  ): KubeObj {
    if (type === 'strategic' && def.custom) {
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      );
    }
    let body = patch;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      try {
        const text = body.toString();
        // Apply bodies are YAML; clients almost always send JSON (a YAML subset), which parses much faster.
        body = type === 'apply' ? parseApplyBody(text) : JSON.parse(text);
      } catch (e) {
        throw new ApiError(400, 'BadRequest', `error decoding patch: ${(e as Error).message}`);
      }
    }
    const existing = this.find(def, namespace, name);
    if (type === 'apply') return this.apply(def, namespace, name, existing, body as KubeObj, opts);
    if (!existing) throw this.notFound(def, name);
    let next: KubeObj;
    try {
      if (type === 'json') next = jsonPatch(existing, body) as KubeObj;
      else {
        if (!isPlainObject(body)) throw new ApiError(400, 'BadRequest', 'a merge patch must be a JSON object');
        next = mergePatch(existing, body) as KubeObj;
      }
    } catch (e) {
      if (e instanceof PatchError) throw new ApiError(e.code, e.code === 400 ? 'BadRequest' : 'Invalid', e.message);
      throw e;
    }
    if (!isPlainObject(next) || !isPlainObject(next.metadata))
      throw new ApiError(422, 'Invalid', 'the patch removed the object metadata');
    const sentRv = next.metadata.resourceVersion;
    if (sentRv !== undefined && sentRv !== existing.metadata.resourceVersion) throw this.conflict(def, name);
    if (next.metadata.name !== name)
      throw new ApiError(
        400,
        'BadRequest',
        `the name of the object (${String(next.metadata.name)}) does not match the name on the URL (${name})`,
      );
    return this.writeNext(def, existing, next, opts, 'Update');
  }

  delete(def: ResourceDefinition, namespace: string | undefined, name: string, opts: DeleteOptions = {}): KubeObj {
    const existing = this.get(def, namespace, name);
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== existing.metadata.uid) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${qualifiedName(def)} "${name}": Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata.uid}`,
        { name, group: def.group, kind: def.plural },
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== existing.metadata.resourceVersion) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${qualifiedName(def)} "${name}": Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`,
        { name, group: def.group, kind: def.plural },
      );
    }
    if (def.group === '' && def.plural === 'namespaces') this.deleteNamespaceContents(name);
    if ((existing.metadata.finalizers ?? []).length > 0) {
      if (existing.metadata.deletionTimestamp) return existing;
      const next = clone(existing);
      next.metadata.deletionTimestamp = timestamp(this.now());
      next.metadata.deletionGracePeriodSeconds = 0;
      if (def.custom) next.metadata.generation = (existing.metadata.generation ?? 0) + 1;
      return this.commit(def, existing, next, this.ownershipOf(def, existing));
    }
    return this.remove(def, existing);
  }

  // ---------------------------------------------------------------- watch

  /**
   * Starts a watch: replays history after `resourceVersion` (or synthetic ADDED events for the current
   * state), then streams. Returns `gone` (and sends nothing) when the resourceVersion is too old.
   */
  watch(
    def: ResourceDefinition,
    opts: WatchOptions,
    sink: WatchSink,
  ): { gone: false; stop: () => void } | { gone: true; status: KubeObj } {
    const watcher: Watcher = {
      key: resourceKey(def),
      namespace: def.namespaced ? opts.namespace : undefined,
      labels: this.labelSelector(opts.labelSelector),
      fields: this.fieldSelector(opts.fieldSelector),
      sink,
    };
    const from = opts.resourceVersion;
    if (!from || from === '0') {
      for (const obj of this.list(def, {
        namespace: watcher.namespace,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
      }).items) {
        sink.send('ADDED', obj);
      }
    } else {
      const fromRv = Number(from);
      if (!Number.isFinite(fromRv))
        throw new ApiError(400, 'BadRequest', `invalid resource version ${JSON.stringify(from)}`);
      if (fromRv < this.compactedRv) {
        return {
          gone: true,
          status: new ApiError(
            410,
            'Expired',
            `too old resource version: ${fromRv} (${this.compactedRv + 1})`,
          ).toStatus(),
        };
      }
      for (const event of this.history) {
        if (event.rv > fromRv && event.key === watcher.key) this.deliver(watcher, event);
      }
    }
    this.watchers.add(watcher);
    return { gone: false, stop: () => this.watchers.delete(watcher) };
  }

  /** Number of open watches (optionally for one resource). */
  watchCount(def?: ResourceDefinition): number {
    if (!def) return this.watchers.size;
    const key = resourceKey(def);
    return [...this.watchers].filter((w) => w.key === key).length;
  }

  /** Forgets all history and closes every open watch: a resume from any earlier resourceVersion gets 410 Gone. */
  expireWatches(): void {
    // Move the clock on (as unrelated writes would) so every resourceVersion a client holds is now too old.
    this.rv += 1;
    this.compactedRv = this.rv;
    this.history.length = 0;
    this.closeWatches();
  }

  /** Closes every open watch without forgetting history (a plain disconnect; resumes succeed). */
  closeWatches(): void {
    const open = [...this.watchers];
    this.watchers.clear();
    for (const w of open) w.sink.close();
  }

  /** Sends a BOOKMARK carrying the current resourceVersion to every open watch that asked for bookmarks. */
  bookmark(filter: (sink: WatchSink) => boolean = () => true): void {
    for (const w of this.watchers) {
      if (!filter(w.sink)) continue;
      const [group, version, plural] = w.key.split('/');
      const def = this.registry.byPath(group, version, plural);
      w.sink.send('BOOKMARK', {
        kind: def?.kind,
        apiVersion: def ? apiVersionOf(def) : undefined,
        metadata: { resourceVersion: this.resourceVersion },
      });
    }
  }

  // ---------------------------------------------------------------- internals

  private bucket(def: ResourceDefinition): Map<string, KubeObj> {
    const key = resourceKey(def);
    let bucket = this.objects.get(key);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(key, bucket);
    }
    return bucket;
  }

  private ownershipOf(def: ResourceDefinition, obj: KubeObj): Ownership {
    return this.ownership.get(`${resourceKey(def)}|${objectKey(obj.metadata.namespace, obj.metadata.name)}`) ?? [];
  }

  private labelSelector(text: string | undefined) {
    try {
      return parseLabelSelector(text);
    } catch (e) {
      throw new ApiError(400, 'BadRequest', `unable to parse requirement: ${(e as SelectorError).message}`);
    }
  }

  private fieldSelector(text: string | undefined) {
    try {
      return parseFieldSelector(text);
    } catch (e) {
      throw new ApiError(400, 'BadRequest', (e as SelectorError).message);
    }
  }

  private checkTypeMeta(def: ResourceDefinition, body: KubeObj): void {
    if (body.apiVersion !== undefined && body.apiVersion !== apiVersionOf(def)) {
      throw new ApiError(
        400,
        'BadRequest',
        `the API version in the data (${body.apiVersion}) does not match the expected API version (${apiVersionOf(def)})`,
      );
    }
    if (body.kind !== undefined && body.kind !== def.kind) {
      throw new ApiError(
        400,
        'BadRequest',
        `the kind in the data (${body.kind}) does not match the expected kind (${def.kind})`,
      );
    }
  }

  private checkName(def: ResourceDefinition, name: string): void {
    if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
      throw this.invalid(def, name, [
        {
          reason: 'FieldValueInvalid',
          field: 'metadata.name',
          message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
        },
      ]);
    }
  }

  /** Namespace lifecycle admission: no new object in a namespace that does not exist or is terminating. */
  private checkNamespaceExists(namespace: string): void {
    if (this.implicitNamespaces) return;
    const def = this.registry.byPath('', 'v1', 'namespaces');
    if (!def) return;
    const found = this.bucket(def).get(objectKey(undefined, namespace));
    if (!found)
      throw new ApiError(404, 'NotFound', `namespaces "${namespace}" not found`, {
        name: namespace,
        kind: 'namespaces',
      });
    if (found.metadata.deletionTimestamp) {
      throw new ApiError(
        403,
        'Forbidden',
        `unable to create new content in namespace ${namespace} because it is being terminated`,
        { name: namespace, kind: 'namespaces' },
      );
    }
  }

  private notFound(def: ResourceDefinition, name: string): ApiError {
    return new ApiError(404, 'NotFound', `${qualifiedName(def)} "${name}" not found`, {
      name,
      group: def.group,
      kind: def.plural,
    });
  }

  private conflict(def: ResourceDefinition, name: string): ApiError {
    return new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedName(def)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, group: def.group, kind: def.plural },
    );
  }

  private invalid(def: ResourceDefinition, name: string, causes: StatusCause[]): ApiError {
    const text = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ');
    const what = def.group ? `${def.kind}.${def.group}` : def.kind;
    return new ApiError(422, 'Invalid', `${what} "${name}" is invalid: ${causes.length > 1 ? `[${text}]` : text}`, {
      name,
      group: def.group,
      kind: def.kind,
      causes,
    });
  }

  /** Label and annotation syntax, as the API server checks it for every kind. */
  private checkMetadata(def: ResourceDefinition, obj: KubeObj): void {
    const causes: StatusCause[] = [];
    const labels = (obj.metadata?.labels ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(labels)) {
      const keyProblem = qualifiedNameProblem(key);
      if (keyProblem)
        causes.push({
          reason: 'FieldValueInvalid',
          field: 'metadata.labels',
          message: `Invalid value: "${key}": ${keyProblem}`,
        });
      if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: 'metadata.labels',
          message: `Invalid value: "${String(value)}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`,
        });
      }
    }
    const annotations = (obj.metadata?.annotations ?? {}) as Record<string, unknown>;
    let size = 0;
    for (const [key, value] of Object.entries(annotations)) {
      const keyProblem = qualifiedNameProblem(key);
      if (keyProblem)
        causes.push({
          reason: 'FieldValueInvalid',
          field: 'metadata.annotations',
          message: `Invalid value: "${key}": ${keyProblem}`,
        });
      size += key.length + (typeof value === 'string' ? value.length : 0);
    }
    if (size > 256 * 1024)
      causes.push({
        reason: 'FieldValueTooLong',
        field: 'metadata.annotations',
        message: `Too long: must have at most 262144 bytes`,
      });
    if (causes.length > 0) throw this.invalid(def, obj.metadata?.name ?? '', causes);
  }

  /** Applies schema defaults in place and rejects what the schema forbids (custom resources only). */
  private validate(def: ResourceDefinition, obj: KubeObj): void {
    this.checkMetadata(def, obj);
    if (!def.custom || !def.schema) return;
    pruneUnknown(obj, def.schema, true);
    let validate = COMPILED.get(def.schema);
    if (!validate) {
      validate = AJV.compile(ajvSchema(def.schema) as object);
      COMPILED.set(def.schema, validate);
    }
    const metadata = obj.metadata;
    if (!validate(obj)) throw this.invalid(def, metadata?.name ?? '', ajvCauses(validate));
    obj.metadata = metadata;
  }

  /** The object a PUT or non-apply PATCH would store, with server-owned fields and subresource rules applied. */
  private writeNext(
    def: ResourceDefinition,
    existing: KubeObj,
    body: KubeObj,
    opts: WriteOptions,
    operation: 'Update',
  ): KubeObj {
    const statusSub = opts.subresource === 'status';
    if (opts.subresource && !(statusSub && def.subresources.includes('status'))) {
      throw new ApiError(
        404,
        'NotFound',
        `the server could not find the requested resource (${qualifiedName(def)}/${opts.subresource})`,
      );
    }
    let next: KubeObj;
    if (statusSub) {
      next = clone(existing);
      if (body.status === undefined) delete next.status;
      else next.status = body.status;
    } else {
      next = body;
      next.apiVersion = apiVersionOf(def);
      next.kind = def.kind;
      if (def.subresources.includes('status')) {
        if (existing.status === undefined) delete next.status;
        else next.status = clone(existing.status);
      }
    }
    next.metadata = this.serverMeta(existing, isPlainObject(next.metadata) ? next.metadata : {});
    this.checkFinalizers(def, existing, next);
    const entries = this.ownershipOf(def, existing).map((e) => ({ ...e, fields: new Set(e.fields) }));
    recordUpdate({
      before: existing,
      after: next,
      schema: def.schema,
      entries,
      manager: opts.fieldManager ?? 'unknown',
      subresource: opts.subresource ?? '',
      apiVersion: apiVersionOf(def),
      now: timestamp(this.now()),
    });
    void operation;
    return this.finishWrite(def, existing, next, entries);
  }

  private apply(
    def: ResourceDefinition,
    namespace: string | undefined,
    name: string,
    existing: KubeObj | undefined,
    body: KubeObj,
    opts: WriteOptions,
  ): KubeObj {
    if (!opts.fieldManager) throw new ApiError(400, 'BadRequest', 'PATCH requests using apply must set fieldManager');
    if (!isPlainObject(body)) throw new ApiError(400, 'BadRequest', 'the applied configuration must be an object');
    if (!body.apiVersion || !body.kind)
      throw new ApiError(400, 'BadRequest', 'apiVersion and kind must be set in an applied configuration');
    this.checkTypeMeta(def, body);
    const meta = isPlainObject(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== name) {
      throw new ApiError(
        400,
        'BadRequest',
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    }
    const statusSub = opts.subresource === 'status';
    if (opts.subresource && !(statusSub && def.subresources.includes('status'))) {
      throw new ApiError(
        404,
        'NotFound',
        `the server could not find the requested resource (${qualifiedName(def)}/${opts.subresource})`,
      );
    }
    if (statusSub && !existing) throw this.notFound(def, name);
    if (meta.resourceVersion !== undefined && existing && meta.resourceVersion !== existing.metadata.resourceVersion)
      throw this.conflict(def, name);
    const applied: KubeObj = clone(body);
    if (def.subresources.includes('status')) {
      if (statusSub) {
        for (const k of Object.keys(applied))
          if (!['apiVersion', 'kind', 'metadata', 'status'].includes(k)) delete applied[k];
        applied.metadata = { name };
      } else {
        delete applied.status;
      }
    }
    // kube-apiserver builds a typed object from the applied configuration before anything else, and refuses
    // (500, no reason) a field its schema does not declare, where other writes prune it.
    const undeclared = def.custom && def.schema ? undeclaredField(applied, def.schema, '', true) : undefined;
    if (undeclared)
      throw new ApiError(
        500,
        '',
        `failed to create typed patch object (${namespace ? `${namespace}/` : ''}${name}; ${apiVersionOf(def)}, Kind=${def.kind}): ${undeclared}: field not declared in schema`,
      );
    const entries = existing ? this.ownershipOf(def, existing).map((e) => ({ ...e, fields: new Set(e.fields) })) : [];
    let merged: KubeObj;
    try {
      merged = applyConfiguration({
        live: existing,
        applied,
        schema: def.schema,
        entries,
        manager: opts.fieldManager,
        subresource: opts.subresource ?? '',
        apiVersion: apiVersionOf(def),
        force: opts.force === true,
        now: timestamp(this.now()),
      }) as KubeObj;
    } catch (e) {
      if (e instanceof ApplyConflict) {
        throw new ApiError(409, 'Conflict', e.message, {
          name,
          group: def.group,
          kind: def.plural,
          causes: e.conflicts.map((c) => ({
            reason: 'FieldManagerConflict',
            message: `conflict with "${c.manager}"`,
            field: c.field,
          })),
        });
      }
      throw e;
    }
    if (!existing) {
      const ns = def.namespaced ? (namespace ?? meta.namespace) : undefined;
      if (def.namespaced && meta.namespace && meta.namespace !== ns) {
        throw new ApiError(
          400,
          'BadRequest',
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      this.checkName(def, name);
      if (ns) this.checkNamespaceExists(String(ns));
      merged.apiVersion = apiVersionOf(def);
      merged.kind = def.kind;
      merged.metadata = {
        ...(merged.metadata ?? {}),
        name,
        uid: randomUUID(),
        creationTimestamp: timestamp(this.now()),
      };
      if (ns) merged.metadata.namespace = ns;
      if (def.custom) merged.metadata.generation = 1;
      for (const k of ['resourceVersion', 'deletionTimestamp', 'managedFields']) delete merged.metadata[k];
      if (def.subresources.includes('status') && def.custom) delete merged.status;
      this.validate(def, merged);
      return this.commit(def, undefined, merged, entries);
    }
    merged.metadata = this.serverMeta(existing, merged.metadata ?? {});
    this.checkFinalizers(def, existing, merged);
    return this.finishWrite(def, existing, merged, entries);
  }

  private serverMeta(existing: KubeObj, meta: KubeObj): KubeObj {
    const out: KubeObj = { ...meta };
    for (const k of [
      'name',
      'namespace',
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'resourceVersion',
    ]) {
      if (existing.metadata[k] === undefined) delete out[k];
      else out[k] = existing.metadata[k];
    }
    delete out.managedFields;
    return out;
  }

  private checkFinalizers(def: ResourceDefinition, existing: KubeObj, next: KubeObj): void {
    if (!existing.metadata.deletionTimestamp) return;
    const before = new Set<string>(existing.metadata.finalizers ?? []);
    const added = ((next.metadata.finalizers ?? []) as string[]).filter((f) => !before.has(f));
    if (added.length > 0) {
      throw this.invalid(def, existing.metadata.name, [
        {
          reason: 'FieldValueForbidden',
          field: 'metadata.finalizers',
          message: 'Forbidden: no new finalizers can be added if the object is being deleted',
        },
      ]);
    }
  }

  private finishWrite(def: ResourceDefinition, existing: KubeObj, next: KubeObj, entries: Ownership): KubeObj {
    this.validate(def, next);
    if (def.custom) {
      const strip = (o: KubeObj) => {
        const copy: KubeObj = { ...o };
        delete copy.metadata;
        if (def.subresources.includes('status')) delete copy.status;
        return copy;
      };
      if (!deepEqual(strip(existing), strip(next))) next.metadata.generation = (existing.metadata.generation ?? 0) + 1;
    }
    const comparable = (o: KubeObj) => ({
      ...o,
      metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined },
    });
    const owners = (list: Ownership) => list.map((e) => [e.manager, e.operation, e.subresource, [...e.fields].sort()]);
    // A write that changes neither content nor field ownership changes nothing (no new resourceVersion).
    if (
      deepEqual(comparable(existing), comparable(next)) &&
      deepEqual(owners(this.ownershipOf(def, existing)), owners(entries))
    )
      return existing;
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      return this.remove(def, {
        ...next,
        metadata: { ...next.metadata, resourceVersion: existing.metadata.resourceVersion },
      });
    }
    return this.commit(def, existing, next, entries);
  }

  private commit(def: ResourceDefinition, previous: KubeObj | undefined, next: KubeObj, entries: Ownership): KubeObj {
    if (def.group === 'apiextensions.k8s.io' && def.plural === 'customresourcedefinitions') {
      // The real server accepts names and establishes a CRD within moments; here at once.
      const at = previous?.status?.conditions?.[0]?.lastTransitionTime ?? timestamp(this.now());
      next.status = {
        acceptedNames: next.spec?.names ?? {},
        storedVersions: ((next.spec?.versions ?? []) as KubeObj[]).filter((v) => v.storage).map((v) => v.name),
        conditions: [
          {
            type: 'NamesAccepted',
            status: 'True',
            reason: 'NoConflicts',
            message: 'no conflicts found',
            lastTransitionTime: at,
          },
          {
            type: 'Established',
            status: 'True',
            reason: 'InitialNamesAccepted',
            message: 'the initial names have been accepted',
            lastTransitionTime: at,
          },
        ],
      };
    }
    // etcd refuses values over 1.5 MiB; the API server passes its error on as a 500.
    if (Buffer.byteLength(JSON.stringify(next)) > MAX_STORED_BYTES)
      throw new ApiError(500, 'InternalError', 'etcdserver: request is too large');
    this.rv += 1;
    next.metadata.resourceVersion = String(this.rv);
    if (entries.length > 0) next.metadata.managedFields = managedFieldsOf(entries);
    else delete next.metadata.managedFields;
    const frozen = deepFreeze(next);
    const key = objectKey(frozen.metadata.namespace, frozen.metadata.name);
    this.bucket(def).set(key, frozen);
    this.ownership.set(`${resourceKey(def)}|${key}`, entries);
    this.emit({ rv: this.rv, key: resourceKey(def), type: previous ? 'MODIFIED' : 'ADDED', object: frozen, previous });
    if (def.group === 'apiextensions.k8s.io' && def.plural === 'customresourcedefinitions') this.registerCrd(frozen);
    return frozen;
  }

  private remove(def: ResourceDefinition, existing: KubeObj): KubeObj {
    this.rv += 1;
    const gone = deepFreeze({
      ...clone(existing),
      metadata: { ...clone(existing.metadata), resourceVersion: String(this.rv) },
    });
    const key = objectKey(existing.metadata.namespace, existing.metadata.name);
    this.bucket(def).delete(key);
    this.ownership.delete(`${resourceKey(def)}|${key}`);
    this.emit({ rv: this.rv, key: resourceKey(def), type: 'DELETED', object: gone, previous: existing });
    return gone;
  }

  private deleteNamespaceContents(namespace: string): void {
    for (const def of this.registry.all()) {
      if (!def.namespaced) continue;
      for (const obj of [...this.bucket(def).values()]) {
        if (obj.metadata.namespace === namespace) this.delete(def, namespace, obj.metadata.name);
      }
    }
  }

  private emit(event: StoredEvent): void {
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped[dropped.length - 1].rv;
    }
    for (const watcher of [...this.watchers]) {
      if (watcher.key === event.key) this.deliver(watcher, event);
    }
  }

  private deliver(watcher: Watcher, event: StoredEvent): void {
    const matches = (o: KubeObj | undefined) =>
      o !== undefined &&
      (!watcher.namespace || o.metadata.namespace === watcher.namespace) &&
      watcher.labels(o.metadata.labels) &&
      watcher.fields(o);
    const now = matches(event.object);
    const before = event.type === 'ADDED' ? false : matches(event.previous);
    if (event.type === 'DELETED') {
      if (before || now) watcher.sink.send('DELETED', event.object);
      return;
    }
    if (now && before) watcher.sink.send('MODIFIED', event.object);
    else if (now) watcher.sink.send('ADDED', event.object);
    else if (before) watcher.sink.send('DELETED', event.object);
  }
}

type SchemaNode = Record<string, unknown>;

/**
 * Drops fields the structural schema does not specify, in place, as the API server does for custom
 * resources: below `x-kubernetes-preserve-unknown-fields: true` unknown fields stay (specified ones are
 * still pruned recursively); `apiVersion`, `kind` and `metadata` stay at the root and in embedded resources.
 */
export function pruneUnknown(value: unknown, schema: unknown, root = false): void {
  if (!isPlainObject(schema)) return;
  const node = schema as SchemaNode;
  if (Array.isArray(value)) {
    for (const item of value) pruneUnknown(item, node.items);
    return;
  }
  if (!isPlainObject(value)) return;
  const obj = value as Record<string, unknown>;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = root || node['x-kubernetes-embedded-resource'] === true;
  const properties = isPlainObject(node.properties) ? (node.properties as Record<string, unknown>) : undefined;
  const additional = isPlainObject(node.additionalProperties) ? node.additionalProperties : undefined;
  for (const key of Object.keys(obj)) {
    if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    if (properties && key in properties) pruneUnknown(obj[key], properties[key]);
    else if (additional) pruneUnknown(obj[key], additional);
    else if (node.additionalProperties === true || preserve) continue;
    else delete obj[key];
  }
}

/**
 * The path (`.spec.list[0].field`) of the first field of `value` its structural schema does not declare, as
 * kube-apiserver names it when it refuses a server-side apply; undefined when every field is declared. Follows
 * the same rules as {@link pruneUnknown}.
 */
export function undeclaredField(value: unknown, schema: unknown, path = '', root = false): string | undefined {
  if (!isPlainObject(schema)) return undefined;
  const node = schema as SchemaNode;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = undeclaredField(item, node.items, `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  const obj = value as Record<string, unknown>;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = root || node['x-kubernetes-embedded-resource'] === true;
  const properties = isPlainObject(node.properties) ? (node.properties as Record<string, unknown>) : undefined;
  const additional = isPlainObject(node.additionalProperties) ? node.additionalProperties : undefined;
  for (const key of Object.keys(obj)) {
    if (embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const found =
      properties && key in properties
        ? undeclaredField(obj[key], properties[key], `${path}.${key}`)
        : additional
          ? undeclaredField(obj[key], additional, `${path}.${key}`)
          : node.additionalProperties === true || preserve
            ? undefined
            : `${path}.${key}`;
    if (found) return found;
  }
  return undefined;
}

/**
 * Stored objects are never modified in place (every write builds a new object), and nothing outside the
 * store gets a reference to one without copying; freezing the top two levels guards that cheaply.
 */
function deepFreeze<T>(value: T): T {
  const obj = value as KubeObj;
  Object.freeze(obj.metadata);
  return Object.freeze(value);
}
