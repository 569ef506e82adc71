/**
 * An in-process Kubernetes API server for tests: plain HTTP on 127.0.0.1 speaking enough of the REST
 * API (CRUD, list, watch, status subresource, merge / JSON / apply patches, finalizers, validation
 * against the imported CRD schemas) that the real @kubernetes/client-node works against it unchanged.
 *
 * Tests act as other actors (Argo CD, the applicationset-controller, the OCM work agent) through
 * `server.store`, which writes through the same code path as HTTP (resourceVersion bumps, watch events).
 * Faults: `expireWatches()` (resumes get 410 Gone), `closeWatches()`, `failNext(...)`.
 * `requestCount(...)` counts HTTP requests per verb and resource.
 *
 * As the real server: a namespaced create (or apply) into a namespace that does not exist is 404
 * `namespaces "x" not found` (`implicitNamespaces: true` turns that off); custom resources lose fields
 * their structural schema does not specify (x-kubernetes-preserve-unknown-fields respected).
 * Choices: deleting a Namespace deletes its contents (honouring finalizers) and the Namespace at once;
 * strategic merge patch on core kinds is treated as a merge patch and refused with 415 for custom
 * resources, as the real server does; CRD objects are validated and defaulted against their OpenAPI
 * schema but CEL rules (x-kubernetes-validations) are not evaluated.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { apiVersionOf, qualifiedName, type ResourceDefinition } from './fake/registry.js';
import {
  ApiError,
  FakeStore,
  PATCH_CONTENT_TYPES,
  type DeleteOptions,
  type KubeObj,
  type ListOptions,
  type PatchType,
  type StoreOptions,
  type WatchEventType,
  type WriteOptions,
} from './fake/store.js';

export { ApiError } from './fake/store.js';
export type { KubeObj, PatchType } from './fake/store.js';
export type { ResourceDefinition } from './fake/registry.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
export const WRITE_VERBS: readonly Verb[] = ['create', 'update', 'patch', 'delete'];

/** A resource reference: `plural`, `plural.group`, `group/version/plural`, or an object's apiVersion + kind. */
export type ResourceRef = string | { apiVersion: string; kind: string };

export interface FaultSpec {
  verb: Verb;
  /** Plural (`manifestworks`), `plural.group`, optionally with a subresource suffix (`manifestworks/status`). */
  resource: string;
  /** HTTP status to answer with: 409, 429, 500, ... */
  code: number;
  /** How many matching requests fail. @default 1 */
  times?: number;
  message?: string;
}

export interface FakeApiServerOptions extends StoreOptions {
  /** Send a BOOKMARK to watches that allow bookmarks every this many milliseconds. @default - only on `store.bookmark()` */
  bookmarkIntervalMs?: number;
}

/** A deep copy of stored JSON (faster than structuredClone for these plain objects). */
function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Direct store access for tests acting as other actors; same semantics (and errors) as HTTP. Results are copies. */
export class StoreClient {
  constructor(private readonly store: FakeStore) {}

  definition(ref: ResourceRef): ResourceDefinition {
    return this.store.registry.resolve(ref);
  }

  get<T = KubeObj>(ref: ResourceRef, namespace: string | undefined, name: string): T {
    return copy(this.store.get(this.definition(ref), namespace, name)) as T;
  }

  /** The object, or undefined when it does not exist. */
  find<T = KubeObj>(ref: ResourceRef, namespace: string | undefined, name: string): T | undefined {
    const found = this.store.find(this.definition(ref), namespace, name);
    return found ? (copy(found) as T) : undefined;
  }

  /** How many objects match, without copying them (cheap enough to poll). */
  count(ref: ResourceRef, opts: ListOptions = {}, predicate: (obj: Readonly<KubeObj>) => boolean = () => true): number {
    return this.store.list(this.definition(ref), opts).items.filter(predicate).length;
  }

  list<T = KubeObj>(ref: ResourceRef, opts: ListOptions = {}): T[] {
    return this.store.list(this.definition(ref), opts).items.map((o) => copy(o) as T);
  }

  create<T = KubeObj>(obj: KubeObj, opts: WriteOptions & { resource?: ResourceRef } = {}): T {
    const def = this.definition(opts.resource ?? { apiVersion: obj.apiVersion, kind: obj.kind });
    return copy(this.store.create(def, obj.metadata?.namespace, obj, opts)) as T;
  }

  /** PUT semantics: a stale metadata.resourceVersion is a 409 Conflict. */
  update<T = KubeObj>(obj: KubeObj, opts: WriteOptions & { resource?: ResourceRef } = {}): T {
    const def = this.definition(opts.resource ?? { apiVersion: obj.apiVersion, kind: obj.kind });
    return copy(this.store.update(def, obj.metadata?.namespace, obj.metadata?.name, obj, opts)) as T;
  }

  /** PUT to the status subresource. */
  updateStatus<T = KubeObj>(obj: KubeObj, opts: WriteOptions = {}): T {
    return this.update<T>(obj, { ...opts, subresource: 'status' });
  }

  patch<T = KubeObj>(ref: ResourceRef, namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions = {}): T {
    return copy(this.store.patch(this.definition(ref), namespace, name, type, patch, opts)) as T;
  }

  /** Server-side apply of a whole object with a field manager. */
  apply<T = KubeObj>(obj: KubeObj, fieldManager: string, opts: Omit<WriteOptions, 'fieldManager'> = {}): T {
    const def = this.definition({ apiVersion: obj.apiVersion, kind: obj.kind });
    return copy(this.store.patch(def, obj.metadata?.namespace, obj.metadata?.name, 'apply', obj, { ...opts, fieldManager })) as T;
  }

  /** Deletes (or, with finalizers, marks for deletion); returns the object as last stored. */
  delete<T = KubeObj>(ref: ResourceRef, namespace: string | undefined, name: string, opts: DeleteOptions = {}): T {
    return copy(this.store.delete(this.definition(ref), namespace, name, opts)) as T;
  }

  registerCrd(crd: KubeObj): ResourceDefinition[] {
    return this.store.registerCrd(crd);
  }

  registerDefinition(def: ResourceDefinition): void {
    this.store.registerDefinition(def);
  }

  get resourceVersion(): string {
    return this.store.resourceVersion;
  }
}

interface Route {
  def: ResourceDefinition;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface OpenWatch {
  res: ServerResponse;
  bookmarks: boolean;
  end: () => void;
}

export class FakeApiServer {
  readonly store: StoreClient;
  private readonly counts = new Map<string, number>();
  private readonly faults: Array<Required<Omit<FaultSpec, 'message'>> & { message?: string }> = [];
  private readonly openWatches = new Set<OpenWatch>();
  private bookmarkTimer?: NodeJS.Timeout;
  private url_ = '';

  private constructor(
    private readonly server: Server,
    private readonly core: FakeStore,
  ) {
    this.store = new StoreClient(core);
  }

  static async start(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const core = new FakeStore(opts);
    let instance: FakeApiServer | undefined;
    const server = createServer((req, res) => instance!.handle(req, res));
    server.keepAliveTimeout = 60_000;
    instance = new FakeApiServer(server, core);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    instance.url_ = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (opts.bookmarkIntervalMs) {
      instance.bookmarkTimer = setInterval(() => instance!.sendBookmarks(), opts.bookmarkIntervalMs);
      instance.bookmarkTimer.unref();
    }
    return instance;
  }

  get url(): string {
    return this.url_;
  }

  /** A KubeConfig pointing at this server (plain HTTP, a dummy bearer token). */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url_, skipTLSVerify: true }],
      users: [{ name: 'fake', token: 'fake-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** The same KubeConfig as YAML, for code that takes a kubeconfig file. */
  kubeConfigYaml(): string {
    return this.kubeConfig().exportConfig();
  }

  async close(): Promise<void> {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.core.closeWatches();
    for (const w of [...this.openWatches]) w.end();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ------------------------------------------------------------ faults and counters

  /** Expire all watches: every open watch closes and any resume from an earlier resourceVersion gets 410 Gone. */
  expireWatches(): void {
    this.core.expireWatches();
  }

  /** Close all open watches (clients resume from their last resourceVersion). */
  closeWatches(): void {
    this.core.closeWatches();
  }

  /** Send a BOOKMARK with the current resourceVersion to every watch opened with allowWatchBookmarks. */
  sendBookmarks(): void {
    this.core.bookmark((sink) => (sink as unknown as { bookmarks?: boolean }).bookmarks === true);
  }

  /** Fail the next `times` HTTP requests matching verb and resource with `code`. */
  failNext(spec: FaultSpec): void {
    this.faults.push({ times: 1, ...spec });
  }

  /** Open watches (all, or for one resource). */
  watchCount(ref?: ResourceRef): number {
    return this.core.watchCount(ref === undefined ? undefined : this.store.definition(ref));
  }

  /**
   * HTTP requests served, filtered by verb and/or resource (`plural`, `plural.group`, `plural/status`).
   * Faulted requests count too.
   */
  requestCount(filter: { verb?: Verb | readonly Verb[]; resource?: string } = {}): number {
    const verbs = filter.verb === undefined ? undefined : ([] as Verb[]).concat(filter.verb as Verb[]);
    let total = 0;
    for (const [key, n] of this.counts) {
      const [verb, resource] = key.split(' ') as [Verb, string];
      if (verbs && !verbs.includes(verb)) continue;
      if (filter.resource !== undefined && !resourceMatches(filter.resource, resource)) continue;
      total += n;
    }
    return total;
  }

  /** Writes (create, update, patch, delete) served, optionally for one resource. */
  writeCount(resource?: string): number {
    return this.requestCount({ verb: WRITE_VERBS, resource });
  }

  /** A snapshot of all counters as `{ "verb plural.group[/sub]": n }`. */
  requestCounts(): Record<string, number> {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
  }

  resetCounts(): void {
    this.counts.clear();
  }

  // ------------------------------------------------------------ HTTP

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        this.serve(req, res, Buffer.concat(chunks));
      } catch (e) {
        this.fail(res, e);
      }
    });
  }

  private fail(res: ServerResponse, e: unknown): void {
    const err = e instanceof ApiError ? e : new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error)?.message ?? String(e)}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    this.send(res, err.code, err.toStatus());
  }

  private send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  private serve(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const url = new URL(req.url ?? '/', this.url_);
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const discovery = this.discovery(parts);
    if (discovery) {
      this.send(res, 200, discovery);
      return;
    }
    const route = this.route(parts);
    if (!route) {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    const verb: Verb =
      method === 'GET'
        ? q.get('watch') === 'true' || q.get('watch') === '1'
          ? 'watch'
          : route.name
            ? 'get'
            : 'list'
        : method === 'POST'
          ? 'create'
          : method === 'PUT'
            ? 'update'
            : method === 'PATCH'
              ? 'patch'
              : method === 'DELETE'
                ? 'delete'
                : ('unsupported' as Verb);
    const counted = `${qualifiedName(route.def)}${route.subresource ? `/${route.subresource}` : ''}`;
    this.counts.set(`${verb} ${counted}`, (this.counts.get(`${verb} ${counted}`) ?? 0) + 1);

    const fault = this.faults.find((f) => f.verb === verb && resourceMatches(f.resource, counted));
    if (fault) {
      fault.times -= 1;
      if (fault.times <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      const reason = { 409: 'Conflict', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 404: 'NotFound' }[fault.code] ?? 'Unknown';
      const err = new ApiError(fault.code, reason, fault.message ?? `injected ${fault.code} for ${verb} ${counted}`, fault.code === 429 ? { retryAfterSeconds: 1 } : {});
      this.send(res, fault.code, err.toStatus(), fault.code === 429 ? { 'Retry-After': '1' } : {});
      return;
    }

    const def = route.def;
    const opts: WriteOptions = {
      subresource: route.subresource,
      fieldManager: q.get('fieldManager') ?? undefined,
      force: q.get('force') === 'true',
    };
    if (q.get('dryRun')) throw new ApiError(400, 'BadRequest', 'the fake API server does not support dryRun');
    const body = (): KubeObj => {
      try {
        return JSON.parse(raw.toString('utf8') || 'null') as KubeObj;
      } catch (e) {
        throw new ApiError(400, 'BadRequest', `error decoding request body: ${(e as Error).message}`);
      }
    };
    switch (verb) {
      case 'watch':
        this.watch(req, res, route, q);
        return;
      case 'get': {
        const obj = this.core.get(def, route.namespace, route.name!);
        if (route.subresource && !(route.subresource === 'status' && def.subresources.includes('status'))) {
          throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
        }
        this.send(res, 200, obj);
        return;
      }
      case 'list': {
        const limit = q.get('limit');
        const result = this.core.list(def, {
          namespace: route.namespace,
          labelSelector: q.get('labelSelector') ?? undefined,
          fieldSelector: q.get('fieldSelector') ?? undefined,
          limit: limit ? Number(limit) : undefined,
          continue: q.get('continue') ?? undefined,
        });
        const metadata: KubeObj = { resourceVersion: result.resourceVersion };
        if (result.continue) metadata.continue = result.continue;
        this.send(res, 200, { apiVersion: apiVersionOf(def), kind: `${def.kind}List`, metadata, items: result.items });
        return;
      }
      case 'create': {
        if (route.name) throw new ApiError(405, 'MethodNotAllowed', 'POST is not allowed on a named resource');
        opts.fieldManager ??= managerFromAgent(req);
        this.send(res, 201, this.core.create(def, route.namespace, body(), opts));
        return;
      }
      case 'update': {
        if (!route.name) throw new ApiError(405, 'MethodNotAllowed', 'PUT is not allowed on a collection');
        opts.fieldManager ??= managerFromAgent(req);
        this.send(res, 200, this.core.update(def, route.namespace, route.name, body(), opts));
        return;
      }
      case 'patch': {
        if (!route.name) throw new ApiError(405, 'MethodNotAllowed', 'PATCH is not allowed on a collection');
        const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
        const type = PATCH_CONTENT_TYPES[contentType];
        if (!type) {
          throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${Object.keys(PATCH_CONTENT_TYPES).join(', ')}`);
        }
        if (type !== 'apply') opts.fieldManager ??= managerFromAgent(req);
        const existed = this.core.find(def, route.namespace, route.name) !== undefined;
        const result = this.core.patch(def, route.namespace, route.name, type, raw.toString('utf8'), opts);
        this.send(res, existed ? 200 : 201, result);
        return;
      }
      case 'delete': {
        if (!route.name) throw new ApiError(405, 'MethodNotAllowed', 'deletecollection is not supported by the fake API server');
        const options = raw.length > 0 ? (body() as DeleteOptions) : {};
        const propagation = q.get('propagationPolicy');
        if (propagation) options.propagationPolicy = propagation;
        const result = this.core.delete(def, route.namespace, route.name, options);
        const stillThere = this.core.find(def, route.namespace, route.name) !== undefined;
        if (stillThere || def.custom) this.send(res, 200, result);
        else {
          this.send(res, 200, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            details: { name: route.name, group: def.group, kind: def.plural, uid: result.metadata.uid },
          });
        }
        return;
      }
      default:
        throw new ApiError(405, 'MethodNotAllowed', `method ${method} is not supported`);
    }
  }

  private watch(req: IncomingMessage, res: ServerResponse, route: Route, q: URLSearchParams): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const open: OpenWatch = { res, bookmarks: q.get('allowWatchBookmarks') === 'true', end: () => undefined };
    let ended = false;
    let stop: () => void = () => undefined;
    let timer: NodeJS.Timeout | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      stop();
      if (timer) clearTimeout(timer);
      this.openWatches.delete(open);
      res.end();
    };
    open.end = end;
    const sink = {
      bookmarks: open.bookmarks,
      send: (type: WatchEventType, object: KubeObj) => {
        if (!ended) res.write(`${JSON.stringify({ type, object })}\n`);
      },
      close: end,
    };
    this.openWatches.add(open);
    void req;
    res.on('close', end);
    const started = this.core.watch(
      route.def,
      {
        namespace: route.namespace,
        labelSelector: q.get('labelSelector') ?? undefined,
        fieldSelector: q.get('fieldSelector') ?? undefined,
        resourceVersion: q.get('resourceVersion') ?? undefined,
      },
      sink,
    );
    if (started.gone) {
      sink.send('ERROR', started.status);
      end();
      return;
    }
    stop = started.stop;
    const timeout = Number(q.get('timeoutSeconds') ?? '0');
    if (timeout > 0) timer = setTimeout(end, timeout * 1000);
  }

  private route(parts: string[]): Route | undefined {
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === 'api' && parts.length >= 3) {
      group = '';
      version = parts[1]!;
      rest = parts.slice(2);
    } else if (parts[0] === 'apis' && parts.length >= 4) {
      group = parts[1]!;
      version = parts[2]!;
      rest = parts.slice(3);
    } else {
      return undefined;
    }
    const reg = this.core.registry;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      const def = reg.byPath(group, version, rest[2]!);
      if (def && def.namespaced) {
        if (rest.length > 5) return undefined;
        return { def, namespace: rest[1], name: rest[3], subresource: rest[4] };
      }
    }
    const def = reg.byPath(group, version, rest[0]!);
    if (!def || rest.length > 3) return undefined;
    if (def.namespaced && rest.length > 1) return undefined;
    return { def, name: rest[1], subresource: rest[2] };
  }

  private discovery(parts: string[]): KubeObj | undefined {
    const reg = this.core.registry;
    const resources = (group: string, version: string) => ({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources: reg
        .all()
        .filter((d) => d.group === group && d.version === version)
        .flatMap((d) => [
          { name: d.plural, singularName: d.kind.toLowerCase(), namespaced: d.namespaced, kind: d.kind, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
          ...d.subresources.map((s) => ({ name: `${d.plural}/${s}`, singularName: '', namespaced: d.namespaced, kind: d.kind, verbs: ['get', 'patch', 'update'] })),
        ]),
    });
    if (parts.length === 1 && parts[0] === 'api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    if (parts.length === 2 && parts[0] === 'api') return resources('', parts[1]!);
    if (parts.length === 3 && parts[0] === 'apis') return resources(parts[1]!, parts[2]!);
    if (parts.length === 1 && parts[0] === 'apis') {
      const groups = new Map<string, string[]>();
      for (const d of reg.all()) if (d.group) groups.set(d.group, [...new Set([...(groups.get(d.group) ?? []), d.version])]);
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [...groups].map(([name, versions]) => ({
          name,
          versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
          preferredVersion: { groupVersion: `${name}/${versions[versions.length - 1]}`, version: versions[versions.length - 1] },
        })),
      };
    }
    if (parts.length === 1 && parts[0] === 'version') return { major: '1', minor: '31', gitVersion: 'v1.31.0-pullfleet-fake' };
    return undefined;
  }
}

function resourceMatches(filter: string, counted: string): boolean {
  if (filter === counted) return true;
  const [fRes, fSub] = filter.split('/');
  const [cRes, cSub] = counted.split('/');
  if (fSub !== cSub) return false;
  return cRes === fRes || cRes!.split('.')[0] === fRes;
}

/** The API server names an unnamed writer after its user agent (up to the first '/'). */
function managerFromAgent(req: IncomingMessage): string {
  const agent = req.headers['user-agent'];
  return agent ? agent.split('/')[0]! : 'unknown';
}

/** Starts a fake API server on a random local port. */
export function startFakeApiServer(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  return FakeApiServer.start(opts);
}
