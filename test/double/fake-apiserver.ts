/**
 * An in-process Kubernetes API server for tests: plain HTTP on 127.0.0.1 speaking enough of the REST
 * API (CRUD, list, watch, status subresource, merge / JSON / apply patches, finalizers, validation
 * against the imported CRD schemas) that the real @kubernetes/client-node works against it unchanged.
 *
 * Tests act as other actors (Argo CD, the applicationset-controller, the OCM work agent) through
 * `server.store`, which writes through the same code path as HTTP (resourceVersion bumps, watch events).
 * Faults: `expireWatches()` (resumes get 410 Gone), `closeWatches()`, `failNext(...)`, `hangNext(...)`,
 * `partition(client, 'hang' | 'refuse')`, `goDown()` / `comeBack()`, `endWatchesAtOnce(...)`.
 * `requestCount(...)` counts HTTP requests per verb, resource and client; `requestLog(...)` keeps the last ones.
 * With `realism: { seed }` it behaves like a server under load (see {@link RealismOptions}).
 *
 * As the real server: a namespaced create (or apply) into a namespace that does not exist is 404
 * `namespaces "x" not found` (`implicitNamespaces: true` turns that off); custom resources lose fields
 * their structural schema does not specify (x-kubernetes-preserve-unknown-fields respected), except that a
 * server-side apply carrying one is refused (500 "field not declared in schema", no reason).
 * Choices: deleting a Namespace deletes its contents (honouring finalizers) and the Namespace at once;
 * strategic merge patch on core kinds is treated as a merge patch and refused with 415 for custom
 * resources, as the real server does; CRD objects are validated and defaulted against their OpenAPI
 * schema but CEL rules (x-kubernetes-validations) are not evaluated.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { SeededRandom } from './fake/random.js';
import { apiVersionOf, qualifiedName, type ResourceDefinition } from './fake/registry.js';
import {
  ApiError,
  FakeStore,
  MAX_REQUEST_BYTES,
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
export { SeededRandom } from './fake/random.js';
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

/** Which requests a hang applies to; every field left out matches everything. */
export interface HangSpec {
  verb?: Verb | readonly Verb[];
  /** As in {@link FaultSpec.resource}. */
  resource?: string;
  /** The client (see `kubeConfig({ client })`). */
  client?: string;
  /** How many matching requests hang. @default 1 */
  times?: number;
}

/**
 * How the realistic mode misbehaves. Every random choice comes from one seeded PRNG (one stream per
 * concern), so a run replays its faults from the seed; the event loop's own timing still varies.
 */
export interface RealismOptions {
  /** Seed of the PRNG. */
  seed: number;
  /** Each watch event is delivered after up to this many milliseconds (in order per stream). @default 20 */
  maxWatchDelayMs?: number;
  /** A watch stream is cut after a random time in this range (ms); undelivered events are lost, as on a real disconnect. @default [100, 2000] */
  watchLifetimeMs?: readonly [number, number];
  /** Probability that a watch resuming from a resourceVersion gets 410 Gone. @default 0.15 */
  goneOnResume?: number;
  /** Probability that a request (other than a watch) gets 429 Too Many Requests with Retry-After. @default 0.02 */
  tooManyRequests?: number;
  /** Retry-After seconds sent with a random 429. @default 1 */
  retryAfterSeconds?: number;
  /** Probability that a request (other than a watch) is held before it is answered. @default 0.01 */
  hang?: number;
  /** How long a random hang lasts (ms). @default [100, 1000] */
  hangMs?: readonly [number, number];
}

export interface FakeApiServerOptions extends StoreOptions {
  /** Send a BOOKMARK to watches that allow bookmarks every this many milliseconds. @default - only on `store.bookmark()` */
  bookmarkIntervalMs?: number;
  /** Behave like a real server under load (asynchronous watch delivery, disconnects, 410s, 429s, hangs). @default - none of that */
  realism?: RealismOptions;
}

/** Counts of what the realistic mode and the fault helpers injected. */
export interface InjectedFaults {
  delayedWatchEvents: number;
  watchDisconnects: number;
  goneOnResume: number;
  tooManyRequests: number;
  randomHangs: number;
  hungRequests: number;
  refusedRequests: number;
}

/** One served request, as `server.requestLog()` returns it. */
export interface RequestRecord {
  /** Milliseconds on the server's monotonic clock (performance.now()). */
  readonly at: number;
  readonly verb: Verb;
  /** `plural.group[/sub]` */
  readonly resource: string;
  readonly client: string;
  /** HTTP status answered (200 for a watch that started). */
  readonly code: number;
}

/** How many requests the log keeps (the oldest go first). */
const REQUEST_LOG_LIMIT = 5_000;

/** The client a request comes from: `kubeConfig({ client })` sends the bearer token `fake-token.<client>`. */
function clientOf(req: IncomingMessage): string {
  const auth = req.headers.authorization ?? '';
  const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
  return token.startsWith('fake-token.') ? token.slice('fake-token.'.length) : 'default';
}

interface HeldRequest {
  readonly client: string;
  readonly verb: Verb | undefined;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly serve: () => void;
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

  patch<T = KubeObj>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: WriteOptions = {},
  ): T {
    return copy(this.store.patch(this.definition(ref), namespace, name, type, patch, opts)) as T;
  }

  /** Server-side apply of a whole object with a field manager. */
  apply<T = KubeObj>(obj: KubeObj, fieldManager: string, opts: Omit<WriteOptions, 'fieldManager'> = {}): T {
    const def = this.definition({ apiVersion: obj.apiVersion, kind: obj.kind });
    return copy(
      this.store.patch(def, obj.metadata?.namespace, obj.metadata?.name, 'apply', obj, { ...opts, fieldManager }),
    ) as T;
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
  client: string;
  /** While the client is partitioned with 'hang', nothing reaches it. */
  muted: boolean;
  /** Events waiting for their delivery delay (realistic mode). */
  pending: string[];
  end: () => void;
}

interface Realism {
  readonly seed: number;
  readonly maxWatchDelayMs: number;
  readonly watchLifetimeMs: readonly [number, number];
  readonly goneOnResume: number;
  readonly tooManyRequests: number;
  readonly retryAfterSeconds: number;
  readonly hang: number;
  readonly hangMs: readonly [number, number];
  readonly watchRandom: SeededRandom;
  readonly requestRandom: SeededRandom;
}

export class FakeApiServer {
  readonly store: StoreClient;
  private readonly counts = new Map<string, number>();
  private readonly faults: Array<Required<Omit<FaultSpec, 'message'>> & { message?: string }> = [];
  private readonly openWatches = new Set<OpenWatch>();
  private readonly clientCounts = new Map<string, number>();
  private readonly hangs: Array<HangSpec & { times: number }> = [];
  private readonly held = new Set<HeldRequest>();
  private readonly partitions = new Map<string, 'hang' | 'refuse'>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly injected: InjectedFaults = {
    delayedWatchEvents: 0,
    watchDisconnects: 0,
    goneOnResume: 0,
    tooManyRequests: 0,
    randomHangs: 0,
    hungRequests: 0,
    refusedRequests: 0,
  };
  private readonly realism?: Realism;
  private bookmarkTimer?: NodeJS.Timeout;
  private url_ = '';
  private port = 0;
  private down = false;
  private watchesEndAtOnce = false;
  private readonly log: RequestRecord[] = [];

  private constructor(
    private readonly server: Server,
    private readonly core: FakeStore,
    realism?: RealismOptions,
  ) {
    this.store = new StoreClient(core);
    if (realism) {
      const root = new SeededRandom(realism.seed);
      this.realism = {
        seed: realism.seed,
        maxWatchDelayMs: realism.maxWatchDelayMs ?? 20,
        watchLifetimeMs: realism.watchLifetimeMs ?? [100, 2000],
        goneOnResume: realism.goneOnResume ?? 0.15,
        tooManyRequests: realism.tooManyRequests ?? 0.02,
        retryAfterSeconds: realism.retryAfterSeconds ?? 1,
        hang: realism.hang ?? 0.01,
        hangMs: realism.hangMs ?? [100, 1000],
        watchRandom: root.fork('watch'),
        requestRandom: root.fork('request'),
      };
    }
  }

  static async start(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const core = new FakeStore(opts);
    // Requests arrive only once the server listens below, after `instance` is set.
    const server = createServer((req, res) => instance.handle(req, res));
    server.keepAliveTimeout = 60_000;
    const instance = new FakeApiServer(server, core, opts.realism);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    instance.port = (server.address() as AddressInfo).port;
    instance.url_ = `http://127.0.0.1:${instance.port}`;
    if (opts.bookmarkIntervalMs) {
      instance.bookmarkTimer = setInterval(() => instance.sendBookmarks(), opts.bookmarkIntervalMs);
      instance.bookmarkTimer.unref();
    }
    return instance;
  }

  get url(): string {
    return this.url_;
  }

  /** The seed of the realistic mode, or undefined when the server is not realistic. */
  get seed(): number | undefined {
    return this.realism?.seed;
  }

  /**
   * A KubeConfig pointing at this server (plain HTTP, a dummy bearer token). With `client`, requests carry
   * that name, so counters, hangs and partitions can single out one process (e.g. one controller replica).
   */
  kubeConfig(opts: { client?: string } = {}): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url_, skipTLSVerify: true }],
      users: [{ name: 'fake', token: opts.client ? `fake-token.${opts.client}` : 'fake-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** The same KubeConfig as YAML, for code that takes a kubeconfig file. */
  kubeConfigYaml(): string {
    return this.kubeConfig().exportConfig();
  }

  /** The same KubeConfig as YAML, for one client. */
  kubeConfigYamlFor(client: string): string {
    return this.kubeConfig({ client }).exportConfig();
  }

  async close(): Promise<void> {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.partitions.clear();
    this.dropHung();
    this.core.closeWatches();
    for (const w of [...this.openWatches]) w.end();
    if (this.down) return;
    this.down = true;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ------------------------------------------------------------ outages, partitions and hangs

  /** The API server goes away: the listener closes (new connections are refused) and every open connection is cut. */
  async goDown(): Promise<void> {
    if (this.down) return;
    this.down = true;
    this.dropHung();
    this.core.closeWatches();
    for (const w of [...this.openWatches]) w.end();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** The API server is back on the same address, with the same objects and history. */
  async comeBack(): Promise<void> {
    if (!this.down) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.down = false;
  }

  /**
   * Cuts one client off. 'refuse': its open connections are destroyed and every new request is reset
   * (the process is gone, as after kill -9). 'hang': its requests are accepted and never answered and its
   * watches go silent (a network partition, or a process stuck in I/O).
   */
  partition(client: string, mode: 'hang' | 'refuse'): void {
    this.partitions.set(client, mode);
    for (const w of [...this.openWatches]) {
      if (w.client !== client) continue;
      if (mode === 'refuse') {
        w.res.socket?.destroy();
        w.end();
      } else w.muted = true;
    }
    if (mode === 'refuse') for (const h of [...this.held]) if (h.client === client) this.dropOne(h);
  }

  /**
   * Ends a partition. Requests held meanwhile are answered now if their client still waits (one that gave
   * up, e.g. on a timeout, closed its connection and its request is dropped unanswered, never applied);
   * muted watches are closed so the client resumes them.
   */
  heal(client: string): void {
    this.partitions.delete(client);
    for (const w of [...this.openWatches]) if (w.client === client && w.muted) w.end();
    for (const h of [...this.held]) if (h.client === client) this.releaseOne(h);
  }

  /** The next `times` requests matching `spec` are accepted and never answered (until {@link releaseHung} or {@link dropHung}). */
  hangNext(spec: HangSpec = {}): void {
    this.hangs.push({ ...spec, times: spec.times ?? 1 });
  }

  /** Requests being held (hung) now, optionally only those matching `filter`. */
  heldCount(filter: Omit<HangSpec, 'times'> = {}): number {
    return [...this.held].filter((h) => this.matchesHang(filter, h.client, h.verb, h.req)).length;
  }

  /** Answers every held request whose client still waits (see {@link heal}). */
  releaseHung(): void {
    for (const h of [...this.held]) this.releaseOne(h);
  }

  /** Drops every held request: the connection is cut and the request never takes effect. */
  dropHung(): void {
    for (const h of [...this.held]) this.dropOne(h);
  }

  /**
   * While on, every new watch is accepted and ends at once without a single event (as a proxy or a
   * server under pressure may do); a client must treat that as a failure and back off.
   */
  endWatchesAtOnce(on: boolean): void {
    this.watchesEndAtOnce = on;
  }

  /** Watch events accepted but not yet written to their streams (always 0 in the plain mode). */
  pendingWatchEvents(): number {
    let n = 0;
    for (const w of this.openWatches) n += w.pending.length;
    return n;
  }

  /** The last requests served (up to 5,000), oldest first, optionally filtered. */
  requestLog(filter: { verb?: Verb | readonly Verb[]; resource?: string; client?: string } = {}): RequestRecord[] {
    const verbs = filter.verb === undefined ? undefined : ([] as Verb[]).concat(filter.verb as Verb[]);
    return this.log.filter(
      (r) =>
        (!verbs || verbs.includes(r.verb)) &&
        (filter.resource === undefined || resourceMatches(filter.resource, r.resource)) &&
        (filter.client === undefined || r.client === filter.client),
    );
  }

  /** What the realistic mode and the fault helpers injected so far. */
  injectedFaults(): InjectedFaults {
    return { ...this.injected };
  }

  /** Holds a request; a client that gives up (closes its connection) takes its request with it. */
  private hold(h: HeldRequest): void {
    this.held.add(h);
    h.res.once('close', () => this.held.delete(h));
  }

  private releaseOne(h: HeldRequest): void {
    this.held.delete(h);
    if (h.req.socket.destroyed || h.res.writableEnded || h.res.destroyed) return;
    h.serve();
  }

  private dropOne(h: HeldRequest): void {
    this.held.delete(h);
    h.req.socket.destroy();
  }

  private matchesHang(
    spec: Omit<HangSpec, 'times'>,
    client: string,
    verb: Verb | undefined,
    req: IncomingMessage,
  ): boolean {
    if (spec.client !== undefined && spec.client !== client) return false;
    if (spec.verb !== undefined && (verb === undefined || !([] as Verb[]).concat(spec.verb as Verb[]).includes(verb)))
      return false;
    if (spec.resource !== undefined) {
      const counted = this.countedResource(req);
      if (!counted || !resourceMatches(spec.resource, counted)) return false;
    }
    return true;
  }

  /** `plural.group[/sub]` of a request, or undefined for discovery and unknown paths. */
  private countedResource(req: IncomingMessage): string | undefined {
    const url = new URL(req.url ?? '/', this.url_);
    const route = this.route(url.pathname.split('/').filter(Boolean).map(decodeURIComponent));
    return route ? `${qualifiedName(route.def)}${route.subresource ? `/${route.subresource}` : ''}` : undefined;
  }

  private verbOf(req: IncomingMessage): Verb | undefined {
    const url = new URL(req.url ?? '/', this.url_);
    const route = this.route(url.pathname.split('/').filter(Boolean).map(decodeURIComponent));
    if (!route) return undefined;
    const q = url.searchParams;
    switch (req.method) {
      case 'GET':
        return q.get('watch') === 'true' || q.get('watch') === '1' ? 'watch' : route.name ? 'get' : 'list';
      case 'POST':
        return 'create';
      case 'PUT':
        return 'update';
      case 'PATCH':
        return 'patch';
      case 'DELETE':
        return 'delete';
      default:
        return undefined;
    }
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
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
  requestCount(filter: { verb?: Verb | readonly Verb[]; resource?: string; client?: string } = {}): number {
    const verbs = filter.verb === undefined ? undefined : ([] as Verb[]).concat(filter.verb as Verb[]);
    let total = 0;
    const source = filter.client === undefined ? this.counts : this.clientCounts;
    for (const [key, n] of source) {
      const [verb, resource, client] = key.split(' ') as [Verb, string, string | undefined];
      if (filter.client !== undefined && client !== filter.client) continue;
      if (verbs && !verbs.includes(verb)) continue;
      if (filter.resource !== undefined && !resourceMatches(filter.resource, resource)) continue;
      total += n;
    }
    return total;
  }

  /** Writes (create, update, patch, delete) served, optionally for one resource and one client. */
  writeCount(resource?: string, client?: string): number {
    return this.requestCount({ verb: WRITE_VERBS, resource, client });
  }

  /** A snapshot of all counters as `{ "verb plural.group[/sub]": n }`. */
  requestCounts(): Record<string, number> {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
  }

  resetCounts(): void {
    this.counts.clear();
    this.clientCounts.clear();
  }

  // ------------------------------------------------------------ HTTP

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const serve = () => {
        try {
          this.serve(req, res, Buffer.concat(chunks));
        } catch (e) {
          this.fail(res, e);
        }
      };
      const client = clientOf(req);
      const partition = this.partitions.get(client);
      if (partition === 'refuse') {
        this.injected.refusedRequests += 1;
        req.socket.destroy();
        return;
      }
      const verb = this.verbOf(req);
      const hang = this.hangs.find((h) => this.matchesHang(h, client, verb, req));
      if (partition === 'hang' || hang) {
        if (hang) {
          hang.times -= 1;
          if (hang.times <= 0) this.hangs.splice(this.hangs.indexOf(hang), 1);
        }
        this.injected.hungRequests += 1;
        this.hold({ client, verb, req, res, serve });
        return;
      }
      const r = this.realism;
      if (r && verb !== undefined && verb !== 'watch' && r.requestRandom.chance(r.hang)) {
        // Held for a short while, then answered if the client still waits (like a slow etcd or a stalled proxy).
        this.injected.randomHangs += 1;
        const held: HeldRequest = { client, verb, req, res, serve };
        this.hold(held);
        this.later(r.requestRandom.int(r.hangMs[0], r.hangMs[1]), () => {
          if (this.held.has(held)) this.releaseOne(held);
        });
        return;
      }
      serve();
    });
  }

  private fail(res: ServerResponse, e: unknown): void {
    const err =
      e instanceof ApiError
        ? e
        : new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error)?.message ?? String(e)}`);
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
    const clientKey = `${verb} ${counted} ${clientOf(req)}`;
    this.clientCounts.set(clientKey, (this.clientCounts.get(clientKey) ?? 0) + 1);
    const record = { at: performance.now(), verb, resource: counted, client: clientOf(req) };
    const logIt = () => {
      this.log.push({ ...record, code: res.statusCode });
      if (this.log.length > REQUEST_LOG_LIMIT) this.log.splice(0, this.log.length - REQUEST_LOG_LIMIT);
    };
    if (verb === 'watch') logIt();
    else res.once('finish', logIt);

    const r = this.realism;
    if (r && verb !== 'watch' && r.requestRandom.chance(r.tooManyRequests)) {
      this.injected.tooManyRequests += 1;
      const err = new ApiError(
        429,
        'TooManyRequests',
        'the server has received too many requests and has asked us to try again later',
        { retryAfterSeconds: r.retryAfterSeconds },
      );
      this.send(res, 429, err.toStatus(), { 'Retry-After': String(r.retryAfterSeconds) });
      return;
    }

    const fault = this.faults.find((f) => f.verb === verb && resourceMatches(f.resource, counted));
    if (fault) {
      fault.times -= 1;
      if (fault.times <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      const reason =
        { 409: 'Conflict', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 404: 'NotFound' }[
          fault.code
        ] ?? 'Unknown';
      const err = new ApiError(
        fault.code,
        reason,
        fault.message ?? `injected ${fault.code} for ${verb} ${counted}`,
        fault.code === 429 ? { retryAfterSeconds: 1 } : {},
      );
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
    if (raw.length > MAX_REQUEST_BYTES)
      throw new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_REQUEST_BYTES}`);
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
        const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim();
        const type = PATCH_CONTENT_TYPES[contentType];
        if (!type) {
          throw new ApiError(
            415,
            'UnsupportedMediaType',
            `the body of the request was in an unknown format - accepted media types include: ${Object.keys(PATCH_CONTENT_TYPES).join(', ')}`,
          );
        }
        if (type !== 'apply') opts.fieldManager ??= managerFromAgent(req);
        const existed = this.core.find(def, route.namespace, route.name) !== undefined;
        const result = this.core.patch(def, route.namespace, route.name, type, raw.toString('utf8'), opts);
        this.send(res, existed ? 200 : 201, result);
        return;
      }
      case 'delete': {
        if (!route.name)
          throw new ApiError(405, 'MethodNotAllowed', 'deletecollection is not supported by the fake API server');
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
    const r = this.realism;
    const pending: string[] = [];
    const open: OpenWatch = {
      res,
      bookmarks: q.get('allowWatchBookmarks') === 'true',
      client: clientOf(req),
      muted: false,
      pending,
      end: () => undefined,
    };
    let ended = false;
    let stop: () => void = () => undefined;
    let timer: NodeJS.Timeout | undefined;
    let lifetime: NodeJS.Timeout | undefined;
    let flushTimer: NodeJS.Timeout | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      stop();
      if (timer) clearTimeout(timer);
      if (lifetime) clearTimeout(lifetime);
      if (flushTimer) clearTimeout(flushTimer);
      pending.length = 0;
      this.openWatches.delete(open);
      res.end();
    };
    open.end = end;
    // Realistic delivery: events queue per stream and leave after a random delay, a few at a time, so
    // streams of different kinds interleave in any order while each stream stays in order.
    const flush = () => {
      flushTimer = undefined;
      if (ended) return;
      const n = r!.watchRandom.int(1, 4);
      for (const line of pending.splice(0, n)) if (!open.muted) res.write(line);
      if (pending.length > 0) schedule();
    };
    const schedule = () => {
      if (flushTimer || ended) return;
      flushTimer = setTimeout(flush, r!.watchRandom.int(0, r!.maxWatchDelayMs));
    };
    const sink = {
      bookmarks: open.bookmarks,
      send: (type: WatchEventType, object: KubeObj) => {
        if (ended) return;
        const line = `${JSON.stringify({ type, object })}\n`;
        if (!r || type === 'ERROR') {
          if (!open.muted) res.write(line);
          return;
        }
        this.injected.delayedWatchEvents += 1;
        pending.push(line);
        schedule();
      },
      close: end,
    };
    if (this.watchesEndAtOnce) {
      end();
      return;
    }
    const from = q.get('resourceVersion');
    if (r && from && from !== '0' && r.watchRandom.chance(r.goneOnResume)) {
      this.injected.goneOnResume += 1;
      sink.send(
        'ERROR',
        new ApiError(410, 'Expired', `too old resource version: ${from} (${this.core.resourceVersion})`).toStatus(),
      );
      end();
      return;
    }
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
    if (r) {
      lifetime = setTimeout(
        () => {
          this.injected.watchDisconnects += 1;
          end();
        },
        r.watchRandom.int(r.watchLifetimeMs[0], r.watchLifetimeMs[1]),
      );
    }
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
      const def = reg.byPath(group, version, rest[2]);
      if (def && def.namespaced) {
        if (rest.length > 5) return undefined;
        return { def, namespace: rest[1], name: rest[3], subresource: rest[4] };
      }
    }
    const def = reg.byPath(group, version, rest[0]);
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
          {
            name: d.plural,
            singularName: d.kind.toLowerCase(),
            namespaced: d.namespaced,
            kind: d.kind,
            verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
          },
          ...d.subresources.map((s) => ({
            name: `${d.plural}/${s}`,
            singularName: '',
            namespaced: d.namespaced,
            kind: d.kind,
            verbs: ['get', 'patch', 'update'],
          })),
        ]),
    });
    if (parts.length === 1 && parts[0] === 'api')
      return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    if (parts.length === 2 && parts[0] === 'api') return resources('', parts[1]);
    if (parts.length === 3 && parts[0] === 'apis') return resources(parts[1], parts[2]);
    if (parts.length === 1 && parts[0] === 'apis') {
      const groups = new Map<string, string[]>();
      for (const d of reg.all())
        if (d.group) groups.set(d.group, [...new Set([...(groups.get(d.group) ?? []), d.version])]);
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [...groups].map(([name, versions]) => ({
          name,
          versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
          preferredVersion: {
            groupVersion: `${name}/${versions[versions.length - 1]}`,
            version: versions[versions.length - 1],
          },
        })),
      };
    }
    if (parts.length === 1 && parts[0] === 'version')
      return { major: '1', minor: '31', gitVersion: 'v1.31.0-pullfleet-fake' };
    return undefined;
  }
}

function resourceMatches(filter: string, counted: string): boolean {
  if (filter === counted) return true;
  const [fRes, fSub] = filter.split('/');
  const [cRes, cSub] = counted.split('/');
  if (fSub !== cSub) return false;
  return cRes === fRes || cRes.split('.')[0] === fRes;
}

/** The API server names an unnamed writer after its user agent (up to the first '/'). */
function managerFromAgent(req: IncomingMessage): string {
  const agent = req.headers['user-agent'];
  return agent ? agent.split('/')[0] : 'unknown';
}

/** Starts a fake API server on a random local port. */
export function startFakeApiServer(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  return FakeApiServer.start(opts);
}
