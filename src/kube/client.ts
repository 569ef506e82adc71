/**
 * A small Kubernetes REST client on node:http(s): list (paged), watch (streamed JSON lines), server-side
 * apply, merge patch, create, replace, delete. Credentials, TLS and the connection (direct, or through the
 * kubeconfig's `proxy-url`) come from a client-node KubeConfig (kubeconfig file or in-cluster service
 * account), afresh for every request, so rotated credentials are used at once; connections are kept alive
 * and reused while the TLS material stays the same. Every request has a timeout (watches: their
 * server-side timeout plus a grace period). Requests in flight are bounded by an adaptive limit
 * (src/kube/limiter.ts) that halves on throttling answers and grows back as the server accepts requests;
 * 429 answers (and 5xx ones with a Retry-After) are retried after their Retry-After, bounded, and hold
 * every other request back for that long too.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export type { KubeConfig };
import { FIELD_MANAGER } from '../model/core/keys.js';
import { type KubeObject } from '../model/core/types.js';
import { resourcePath, type ResourceKind, type WatchScope } from './resources.js';
import { AdaptiveLimiter, type LimiterState } from './limiter.js';
import { abortableSleep } from './timers.js';

/** Where {@link loadKubeConfig} looks for credentials. */
export interface LoadKubeConfigOptions {
  /** Kubeconfig file(s) (several joined by the path delimiter, as in $KUBECONFIG). */
  readonly path?: string;
  /** The kubeconfig context to use. @default the kubeconfig's current context */
  readonly context?: string;
  /** Inside a pod, use the pod's service account before $KUBECONFIG / ~/.kube/config. */
  readonly preferInCluster?: boolean;
  /** Environment to read KUBECONFIG, KUBERNETES_SERVICE_HOST and HOME from. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads credentials: the kubeconfig file at `path`; else, with `preferInCluster` inside a pod, the pod's
 * service account; else $KUBECONFIG, ~/.kube/config or the service account, in that order. Throws an
 * error naming the file, the context and the fix when they are unusable, and says so when there is no
 * kubeconfig at all (rather than falling back to an API server on localhost).
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const kubeConfig = new KubeConfig();
  const inPod = Boolean(env.KUBERNETES_SERVICE_HOST) && existsSync(SERVICE_ACCOUNT_TOKEN);
  const loadFiles = (list: string, what: string) => {
    const files = list.split(delimiter).filter(Boolean);
    files.forEach((file, i) => {
      try {
        if (i === 0) kubeConfig.loadFromFile(file);
        else {
          const more = new KubeConfig();
          more.loadFromFile(file);
          kubeConfig.mergeConfig(more);
        }
      } catch (error) {
        throw new Error(
          `cannot read kubeconfig ${file}${what}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    });
  };
  const home = env.HOME || env.USERPROFILE;
  const homeConfig = home ? join(home, '.kube', 'config') : undefined;
  if (options.path) loadFiles(options.path, '');
  else if (options.preferInCluster && inPod) kubeConfig.loadFromCluster();
  else if (env.KUBECONFIG) loadFiles(env.KUBECONFIG, ' (from $KUBECONFIG)');
  else if (homeConfig && existsSync(homeConfig)) loadFiles(homeConfig, '');
  else if (inPod) kubeConfig.loadFromCluster();
  else {
    throw new Error(
      `no kubeconfig found: --kubeconfig not given, $KUBECONFIG not set, ${homeConfig ?? '~/.kube/config'} does not exist and this is not a pod: pass --kubeconfig <file> or set KUBECONFIG`,
    );
  }
  if (options.context) {
    if (!kubeConfig.getContextObject(options.context)) {
      throw new Error(
        `context "${options.context}" is not in the kubeconfig (contexts: ${
          kubeConfig
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    }
    kubeConfig.setCurrentContext(options.context);
  }
  if (!kubeConfig.getCurrentCluster())
    throw new Error('the kubeconfig has no current cluster: pass --kubeconfig and --context');
  return kubeConfig;
}

/** A failed API call, carrying the HTTP status (409 conflict, 404 not found, 410 gone, 429 with its Retry-After, …). */
export class KubeApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly reason?: string,
    /** The server's Retry-After (429, 503), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** A request the API server did not answer in time (connected or not). */
export class KubeTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(
    message: string,
    readonly timeoutMs: number,
  ) {
    super(message);
    this.name = 'KubeTimeoutError';
  }
}

export function isTimeout(error: unknown): boolean {
  return error instanceof KubeTimeoutError;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A throttling answer: 429, or a 5xx that says when to come back (Retry-After), which is when client-go
 * retries too.
 */
export function isThrottled(error: unknown): error is KubeApiError {
  return (
    error instanceof KubeApiError &&
    (error.statusCode === 429 || (error.statusCode >= 500 && error.retryAfterMs !== undefined))
  );
}

export function isNotFound(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 404;
}

export function isConflict(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 409;
}

export function isGone(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 410;
}

export interface ListResult<T extends KubeObject = KubeObject> {
  readonly items: T[];
  readonly resourceVersion: string;
}

export interface WatchEvent<T extends KubeObject = KubeObject> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: T;
}

/** The writes the reconcilers make; injected so reconcile tests need no network. */
export interface KubeWriter {
  /** Server-side apply (fieldManager pullfleet-controller, force). Returns the object as stored. */
  apply<T extends KubeObject>(kind: ResourceKind, object: T, call?: CallOptions): Promise<T>;
  /** JSON merge patch on an object (not a subresource). */
  mergePatch<T extends KubeObject>(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    patch: object,
    call?: CallOptions,
  ): Promise<T>;
  /** Server-side apply of the status subresource (`object` carries apiVersion, kind, metadata name/namespace and status). */
  applyStatus?<T extends KubeObject>(kind: ResourceKind, object: T, call?: CallOptions): Promise<T>;
  /**
   * Delete; a missing object counts as deleted. `uid` and `resourceVersion` become preconditions: a replaced
   * object (other uid) counts as deleted; a changed one (other resourceVersion) is a 409 for the caller.
   */
  delete(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    options?: { uid?: string; resourceVersion?: string },
    call?: CallOptions,
  ): Promise<void>;
}

/** Per-call limits: a caller may shorten the timeout and cancel through a signal. */
export interface CallOptions {
  /** Timeout of each attempt. @default the client's requestTimeoutMs */
  readonly timeoutMs?: number;
  /** Aborts the request (and any Retry-After wait). */
  readonly signal?: AbortSignal;
  /** Not held back by the in-flight limit or a Retry-After pause (the leader Lease). @default false */
  readonly exempt?: boolean;
}

/** One answered request, for metrics. */
export interface ResponseInfo {
  /** create, get, list, update, apply, patch or delete. */
  readonly verb: string;
  /** Plural resource, with the subresource (`manifestworks/status`). */
  readonly resource: string;
  /** HTTP status; 0 when no answer came (timeout, connection error). */
  readonly code: number;
  readonly seconds: number;
  /** The answer carried API Priority and Fairness headers (X-Kubernetes-PF-FlowSchema-UID). */
  readonly apf: boolean;
}

/** The verb and resource of a request path, for metrics (`/apis/g/v/namespaces/ns/plural/name/status`). */
export function describeRequest(
  method: string,
  path: string,
  contentType?: string,
): Pick<ResponseInfo, 'verb' | 'resource'> {
  const parts = path.split('?')[0].split('/').filter(Boolean);
  let at = parts[0] === 'api' ? 2 : parts[0] === 'apis' ? 3 : parts.length;
  if (parts[at] === 'namespaces' && parts.length > at + 2) at += 2;
  const plural = parts[at] ?? 'unknown';
  const named = parts.length > at + 1;
  const sub = parts[at + 2];
  const resource = sub ? `${plural}/${sub}` : plural;
  const verb =
    method === 'GET'
      ? named
        ? 'get'
        : 'list'
      : method === 'POST'
        ? 'create'
        : method === 'PUT'
          ? 'update'
          : method === 'DELETE'
            ? 'delete'
            : contentType === 'application/apply-patch+yaml'
              ? 'apply'
              : 'patch';
  return { verb, resource };
}

interface RequestOptions extends CallOptions {
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: unknown;
  readonly contentType?: string;
}

export interface KubeClientOptions {
  /** Timeout of every request except watches (connect, headers and body). @default 30000 */
  readonly requestTimeoutMs?: number;
  /** Watches are given up this long after their server-side timeoutSeconds. @default 30000 */
  readonly watchGraceMs?: number;
  /** Retries of a request answered 429 Too Many Requests (waiting its Retry-After). @default 3 */
  readonly maxRetries?: number;
  /** Longest Retry-After honoured; a longer one is cut to this. @default 30000 */
  readonly maxRetryAfterMs?: number;
  /** Wait used for Retry-After (tests). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Most requests in flight (watches and exempt requests not counted); the adaptive limit starts here. @default 32 */
  readonly maxInFlight?: number;
  /** Called for every answered (or failed) request except watches. */
  readonly onResponse?: (info: ResponseInfo) => void;
}

type Pem = string | Buffer | Array<string | Buffer | { buf: string | Buffer }>;

/** One value of the TLS material, comparable as text. */
function pemText(value: Pem | undefined): string {
  if (value === undefined) return '';
  if (Array.isArray(value))
    return value
      .map((item) => (typeof item === 'object' && !Buffer.isBuffer(item) ? pemText(item.buf) : pemText(item)))
      .join('\n');
  return Buffer.isBuffer(value) ? value.toString('base64') : value;
}

/**
 * What an agent's connections depend on: the proxy and the TLS material and options client-node put on the
 * request options. Requests with the same key may share kept-alive connections; a rotated certificate
 * (exec plugin, rewritten file) or CA gives another key, so new connections.
 */
function transportKey(opts: https.RequestOptions, proxyUrl: string | undefined): string {
  const hash = createHash('sha256');
  const parts = [
    proxyUrl ?? '',
    pemText(opts.ca),
    pemText(opts.cert),
    pemText(opts.key as Pem | undefined),
    pemText(opts.pfx),
    opts.passphrase ?? '',
    opts.servername ?? '',
    String(opts.rejectUnauthorized),
  ];
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}

/** An agent whose TLS material was replaced: requests in flight finish, and no connection of it is kept. */
function retire(agent: http.Agent): void {
  (agent as http.Agent & { keepAlive: boolean }).keepAlive = false;
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}

/** A reader and writer for one API server. */
export class KubeClient implements KubeWriter {
  private readonly server: URL;
  /** The agent in use for requests and for watches, with the {@link transportKey} it was built for. */
  private readonly agents = new Map<'request' | 'watch', { key: string; agent: http.Agent }>();
  /** Number of write requests issued (apply, patch, create, replace, delete), for benchmarks and metrics. */
  writes = 0;

  readonly requestTimeoutMs: number;
  private readonly settings: Required<Omit<KubeClientOptions, 'requestTimeoutMs' | 'maxInFlight' | 'onResponse'>>;
  private readonly limiter: AdaptiveLimiter;
  private readonly maxInFlight: number;

  constructor(
    private readonly kubeConfig: KubeConfig,
    options: KubeClientOptions = {},
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster: pass --kubeconfig or run in a cluster');
    this.server = new URL(cluster.server);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30000;
    this.settings = {
      watchGraceMs: options.watchGraceMs ?? 30000,
      maxRetries: options.maxRetries ?? 3,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 30000,
      sleep: options.sleep ?? abortableSleep,
    };
    this.maxInFlight = options.maxInFlight ?? 32;
    this.limiter = new AdaptiveLimiter({ max: this.maxInFlight, sleep: this.settings.sleep });
    this.onResponse = options.onResponse;
  }

  private readonly onResponse?: (info: ResponseInfo) => void;

  /** The adaptive in-flight limit as it stands (metrics). */
  get limit(): LimiterState {
    return this.limiter.state;
  }

  /** The API server URL (for messages). */
  get serverUrl(): string {
    return this.server.toString();
  }

  /**
   * The agent for a request whose options client-node just filled in. client-node builds a new agent every
   * time (through the kubeconfig's `proxy-url` when set, with the credentials of this moment); the one in
   * use is kept while the TLS material and proxy are unchanged, so connections are reused, and replaced by
   * the new one when they change.
   */
  private agentFor(use: 'request' | 'watch', opts: https.RequestOptions): http.Agent {
    const fresh = opts.agent;
    if (!(fresh instanceof http.Agent)) throw new Error('the kubeconfig gave no HTTP agent for the API server');
    const key = transportKey(opts, this.kubeConfig.getCurrentCluster()?.proxyUrl);
    const current = this.agents.get(use);
    if (current?.key === key) return current.agent;
    // client-node's agents close every connection after one request: keep them (requests: one socket per
    // request the limiter lets through, plus room for exempt ones).
    (fresh as http.Agent & { keepAlive: boolean }).keepAlive = true;
    if (use === 'request') fresh.maxSockets = this.maxInFlight + 4;
    this.agents.set(use, { key, agent: fresh });
    if (current) retire(current.agent);
    return fresh;
  }

  private async options(method: string, path: string, watch: boolean): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = { method, headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const agent = this.agentFor(watch ? 'watch' : 'request', opts);
    const basePath = this.server.pathname.replace(/\/$/, '');
    return {
      protocol: this.server.protocol,
      hostname: this.server.hostname,
      port: this.server.port,
      path: basePath + path,
      method,
      headers: { ...(opts.headers as Record<string, string>), Accept: 'application/json' },
      ...(opts.auth ? { auth: opts.auth } : {}),
      agent,
    };
  }

  private static query(query: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {}))
      if (value !== undefined && value !== '') params.set(key, String(value));
    const text = params.toString();
    return text ? `?${text}` : '';
  }

  /**
   * One request; resolves with the parsed JSON body, rejects with KubeApiError on a non-2xx answer and
   * with KubeTimeoutError when no full answer arrives within the timeout. A throttling answer (429, or a
   * 5xx with Retry-After) halves the in-flight limit and is retried after its Retry-After (bounded by
   * maxRetryAfterMs, at most maxRetries times); other requests are held back as long.
   */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestOnce<T>(method, path, options, attempt > 0);
      } catch (error) {
        if (!isThrottled(error) || attempt >= this.settings.maxRetries || options.signal?.aborted) throw error;
        const wait = Math.min(this.settings.maxRetryAfterMs, error.retryAfterMs ?? 1000 * 2 ** attempt);
        await this.settings.sleep(wait, options.signal);
        if (options.signal?.aborted) throw error;
      }
    }
  }

  private async requestOnce<T>(method: string, path: string, options: RequestOptions, retry = false): Promise<T> {
    const opts = await this.options(method, path + KubeClient.query(options.query), false);
    const payload =
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body);
    if (payload !== undefined) {
      (opts.headers as Record<string, string>)['Content-Type'] = options.contentType ?? 'application/json';
      (opts.headers as Record<string, string>)['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    const transport = this.server.protocol === 'https:' ? https : http;
    // A retry has just waited out its Retry-After: it does not wait for the pause it caused a second time.
    const release = options.exempt ? () => undefined : await this.limiter.acquire(options.signal, { pastGate: retry });
    const started = performance.now();
    let code = 0;
    let apf = false;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = (error: Error | undefined, value?: T) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', abort);
        release();
        if (error === undefined) this.limiter.succeeded();
        else if (isThrottled(error))
          this.limiter.throttled(Math.min(this.settings.maxRetryAfterMs, error.retryAfterMs ?? 1000));
        if (this.onResponse) {
          const { verb, resource } = describeRequest(method, path, options.contentType);
          this.onResponse({ verb, resource, code, seconds: (performance.now() - started) / 1000, apf });
        }
        if (error) reject(error);
        else resolve(value as T);
      };
      let req: http.ClientRequest;
      try {
        req = transport.request(opts, (res) => {
          code = res.statusCode ?? 0;
          apf = res.headers['x-kubernetes-pf-flowschema-uid'] !== undefined;
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (error) => finish(error));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            let body: unknown;
            try {
              body = text ? JSON.parse(text) : undefined;
            } catch {
              body = text;
            }
            if (status >= 200 && status < 300) finish(undefined, body as T);
            else {
              const statusBody = body as { message?: string; reason?: string } | undefined;
              // A 429 with APF headers was refused by API Priority and Fairness (its queues for this flow
              // were full or the wait timed out); without them, by the server's max-in-flight filter.
              const why =
                status === 429
                  ? apf
                    ? ` (API Priority and Fairness: flow schema ${String(res.headers['x-kubernetes-pf-flowschema-uid'])}, priority level ${String(res.headers['x-kubernetes-pf-prioritylevel-uid'])})`
                    : ' (the server is at its max-in-flight limit)'
                  : '';
              finish(
                new KubeApiError(
                  status,
                  `${method} ${path}: ${status} ${statusBody?.message ?? text}${why}`,
                  statusBody?.reason,
                  parseRetryAfter(res.headers['retry-after']),
                ),
              );
            }
          });
        });
      } catch (error) {
        // Refused before anything was sent (a header value Node will not send): the slot is given back.
        settled = true;
        release();
        reject(error);
        return;
      }
      // The whole exchange (connect, headers, body) must finish in time: a server that accepts and never
      // answers must not hold a worker, a Lease renewal or `pullfleet status` forever.
      const timer = setTimeout(() => {
        const error = new KubeTimeoutError(
          `${method} ${path}: no answer from ${this.server.host} within ${timeoutMs / 1000}s`,
          timeoutMs,
        );
        finish(error);
        req.destroy(error);
      }, timeoutMs);
      timer.unref?.();
      const abort = () => {
        finish(new Error(`${method} ${path}: aborted`));
        req.destroy();
      };
      req.on('error', (error) => finish(error));
      if (options.signal) {
        if (options.signal.aborted) return abort();
        options.signal.addEventListener('abort', abort, { once: true });
      }
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** Lists every object in scope, following `continue` tokens. */
  async list<T extends KubeObject = KubeObject>(
    kind: ResourceKind,
    scope: WatchScope = {},
    pageSize = 500,
    call: CallOptions = {},
  ): Promise<ListResult<T>> {
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.request<{ items?: T[]; metadata?: { resourceVersion?: string; continue?: string } }>(
        'GET',
        resourcePath(kind, scope.namespace),
        {
          ...call,
          query: { labelSelector: scope.labelSelector, limit: pageSize, continue: token },
        },
      );
      for (const item of page.items ?? []) {
        item.apiVersion ??= kind.group ? `${kind.group}/${kind.version}` : kind.version;
        item.kind ??= kind.kind;
        items.push(item);
      }
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      token = page.metadata?.continue || undefined;
    } while (token);
    return { items, resourceVersion };
  }

  /**
   * Streams watch events from `resourceVersion` until the server closes the stream (resolve), the signal
   * aborts (resolve) or the request fails (reject; 410 Gone rejects with a KubeApiError of status 410).
   * The response headers must arrive within the request timeout, and the stream is given up (reject with
   * KubeTimeoutError) `watchGraceMs` after `timeoutSeconds`, when the server should have closed it.
   */
  async watch<T extends KubeObject = KubeObject>(
    kind: ResourceKind,
    scope: WatchScope,
    resourceVersion: string,
    onEvent: (event: WatchEvent<T>) => void,
    signal: AbortSignal,
    timeoutSeconds = 300,
  ): Promise<void> {
    const query = KubeClient.query({
      watch: 1,
      allowWatchBookmarks: true,
      resourceVersion,
      labelSelector: scope.labelSelector,
      timeoutSeconds,
    });
    const opts = await this.options('GET', resourcePath(kind, scope.namespace) + query, true);
    const transport = this.server.protocol === 'https:' ? https : http;
    await new Promise<void>((resolve, reject) => {
      if (signal.aborted) return resolve();
      let settled = false;
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(headerTimer);
        clearTimeout(streamTimer);
        signal.removeEventListener('abort', abort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- `error` is whatever onEvent threw
        if (error && !signal.aborted) reject(error);
        else resolve();
      };
      const giveUp = (what: string, ms: number) => () => {
        const error = new KubeTimeoutError(`watch ${kind.plural}: ${what} within ${ms / 1000}s`, ms);
        finish(error);
        req.destroy(error);
      };
      const headerTimer = setTimeout(
        giveUp(`no answer from ${this.server.host}`, this.requestTimeoutMs),
        this.requestTimeoutMs,
      );
      const streamMs = timeoutSeconds * 1000 + this.settings.watchGraceMs;
      const streamTimer = setTimeout(
        giveUp(`the server did not end the watch (timeoutSeconds ${timeoutSeconds})`, streamMs),
        streamMs,
      );
      headerTimer.unref?.();
      streamTimer.unref?.();
      let req: http.ClientRequest;
      try {
        req = transport.request(opts, (res) => {
          clearTimeout(headerTimer);
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              finish(
                new KubeApiError(
                  status,
                  `watch ${kind.plural}: ${status} ${Buffer.concat(chunks).toString('utf8')}`,
                  undefined,
                  parseRetryAfter(res.headers['retry-after']),
                ),
              ),
            );
            res.on('error', finish);
            return;
          }
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let newline = buffer.indexOf('\n');
            while (newline >= 0) {
              const line = buffer.slice(0, newline).trim();
              buffer = buffer.slice(newline + 1);
              newline = buffer.indexOf('\n');
              if (!line) continue;
              let event: WatchEvent<T>;
              try {
                event = JSON.parse(line) as WatchEvent<T>;
              } catch {
                continue;
              }
              if (event.type === 'ERROR') {
                const statusObject = event.object as unknown as { code?: number; message?: string; reason?: string };
                req.destroy();
                finish(
                  new KubeApiError(
                    statusObject.code ?? 500,
                    `watch ${kind.plural}: ${statusObject.message ?? 'error event'}`,
                    statusObject.reason,
                  ),
                );
                return;
              }
              try {
                onEvent(event);
              } catch (error) {
                req.destroy();
                finish(error);
                return;
              }
            }
          });
          res.on('end', () => finish());
          res.on('close', () => finish());
          res.on('error', (error) => finish(error));
        });
      } catch (error) {
        // Refused before anything was sent (a header value Node will not send).
        settled = true;
        clearTimeout(headerTimer);
        clearTimeout(streamTimer);
        reject(error);
        return;
      }
      const abort = () => {
        req.destroy();
        finish();
      };
      signal.addEventListener('abort', abort, { once: true });
      req.on('error', (error) => finish(error));
      req.end();
    });
  }

  async get<T extends KubeObject>(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    call: CallOptions = {},
  ): Promise<T> {
    return this.request<T>('GET', resourcePath(kind, namespace, name), call);
  }

  async create<T extends KubeObject>(kind: ResourceKind, object: T, call: CallOptions = {}): Promise<T> {
    this.writes++;
    return this.request<T>('POST', resourcePath(kind, object.metadata.namespace), {
      ...call,
      body: object,
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  async replace<T extends KubeObject>(kind: ResourceKind, object: T, call: CallOptions = {}): Promise<T> {
    this.writes++;
    return this.request<T>('PUT', resourcePath(kind, object.metadata.namespace, object.metadata.name), {
      ...call,
      body: object,
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  async apply<T extends KubeObject>(kind: ResourceKind, object: T, call: CallOptions = {}): Promise<T> {
    this.writes++;
    return this.request<T>('PATCH', resourcePath(kind, object.metadata.namespace, object.metadata.name), {
      ...call,
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }

  async applyStatus<T extends KubeObject>(kind: ResourceKind, object: T, call: CallOptions = {}): Promise<T> {
    this.writes++;
    return this.request<T>('PATCH', `${resourcePath(kind, object.metadata.namespace, object.metadata.name)}/status`, {
      ...call,
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }

  async mergePatch<T extends KubeObject>(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    patch: object,
    call: CallOptions = {},
  ): Promise<T> {
    this.writes++;
    return this.request<T>('PATCH', resourcePath(kind, namespace, name), {
      ...call,
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  async delete(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    options: { uid?: string; resourceVersion?: string } = {},
    call: CallOptions = {},
  ): Promise<void> {
    this.writes++;
    const preconditions = {
      ...(options.uid ? { uid: options.uid } : {}),
      ...(options.resourceVersion ? { resourceVersion: options.resourceVersion } : {}),
    };
    const body =
      Object.keys(preconditions).length > 0 ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions } : undefined;
    try {
      await this.request('DELETE', resourcePath(kind, namespace, name), { ...call, body });
    } catch (error) {
      if (isNotFound(error)) return;
      // A failed uid precondition means the object was replaced by a new one: nothing of ours is left to delete.
      // With a resourceVersion precondition the object may only have changed: the caller must look again.
      if (error instanceof KubeApiError && error.statusCode === 409 && options.uid && !options.resourceVersion) return;
      throw error;
    }
  }

  /** Closes kept-alive connections. */
  close(): void {
    for (const { agent } of this.agents.values()) agent.destroy();
  }
}
