/**
 * A small Kubernetes REST client on node:http(s): list (paged), watch (streamed JSON lines), server-side
 * apply, merge patch, create, replace, delete. Credentials and TLS come from a client-node KubeConfig
 * (kubeconfig file or in-cluster service account); connections are kept alive and reused.
 */
import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER, type KubeObject } from '../model/index.js';
import { resourcePath, type ResourceKind, type WatchScope } from './resources.js';

/** A failed API call, carrying the HTTP status (409 conflict, 404 not found, 410 gone, …). */
/**
 * Loads credentials: the kubeconfig file at `path`; else, with `preferInCluster` inside a pod, the pod's
 * service account; else $KUBECONFIG, ~/.kube/config or the service account, in that order. Throws an
 * error naming the file, the context and the fix when they are unusable.
 */
export function loadKubeConfig(options: { path?: string; context?: string; preferInCluster?: boolean } = {}): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    if (options.path) kubeConfig.loadFromFile(options.path);
    else if (options.preferInCluster && process.env.KUBERNETES_SERVICE_HOST) kubeConfig.loadFromCluster();
    else kubeConfig.loadFromDefault();
  } catch (error) {
    throw new Error(`cannot read kubeconfig${options.path ? ` ${options.path}` : ''}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (options.context) {
    if (!kubeConfig.getContextObject(options.context)) {
      throw new Error(`context "${options.context}" is not in the kubeconfig (contexts: ${kubeConfig.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    }
    kubeConfig.setCurrentContext(options.context);
  }
  if (!kubeConfig.getCurrentCluster()) throw new Error('the kubeconfig has no current cluster: pass --kubeconfig and --context');
  return kubeConfig;
}

export class KubeApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
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
  apply<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T>;
  /** JSON merge patch on an object (not a subresource). */
  mergePatch<T extends KubeObject>(kind: ResourceKind, namespace: string | undefined, name: string, patch: object): Promise<T>;
  /** Server-side apply of the status subresource (`object` carries apiVersion, kind, metadata name/namespace and status). */
  applyStatus?<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T>;
  /** Delete; a missing object counts as deleted. `uid` becomes a precondition. */
  delete(kind: ResourceKind, namespace: string | undefined, name: string, options?: { uid?: string }): Promise<void>;
}

interface RequestOptions {
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

/** A reader and writer for one API server. */
export class KubeClient implements KubeWriter {
  private readonly server: URL;
  private agent?: http.Agent;
  private watchAgent?: http.Agent;
  /** Number of write requests issued (apply, patch, create, replace, delete), for benchmarks and metrics. */
  writes = 0;

  constructor(private readonly kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster: pass --kubeconfig or run in a cluster');
    this.server = new URL(cluster.server);
  }

  private async options(method: string, path: string, watch: boolean): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = { method, headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const secure = this.server.protocol === 'https:';
    const agentOptions = {
      keepAlive: true,
      ...(watch ? {} : { maxSockets: 32 }),
      ...(secure ? { ca: opts.ca, cert: opts.cert, key: opts.key, servername: opts.servername, rejectUnauthorized: opts.rejectUnauthorized } : {}),
    };
    if (watch) this.watchAgent ??= secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    else this.agent ??= secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    const basePath = this.server.pathname.replace(/\/$/, '');
    return {
      protocol: this.server.protocol,
      hostname: this.server.hostname,
      port: this.server.port,
      path: basePath + path,
      method,
      headers: { ...(opts.headers as Record<string, string>), Accept: 'application/json' },
      ...(opts.auth ? { auth: opts.auth } : {}),
      agent: watch ? this.watchAgent : this.agent,
    };
  }

  private static query(query: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined && value !== '') params.set(key, String(value));
    const text = params.toString();
    return text ? `?${text}` : '';
  }

  /** One request; resolves with the parsed JSON body, rejects with KubeApiError on a non-2xx answer. */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const opts = await this.options(method, path + KubeClient.query(options.query), false);
    const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    if (payload !== undefined) {
      (opts.headers as Record<string, string>)['Content-Type'] = options.contentType ?? 'application/json';
      (opts.headers as Record<string, string>)['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const transport = this.server.protocol === 'https:' ? https : http;
    return new Promise<T>((resolve, reject) => {
      const req = transport.request(opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = text;
          }
          if (status >= 200 && status < 300) resolve(body as T);
          else {
            const statusBody = body as { message?: string; reason?: string } | undefined;
            reject(new KubeApiError(status, `${method} ${path}: ${status} ${statusBody?.message ?? text}`, statusBody?.reason));
          }
        });
      });
      req.on('error', reject);
      if (options.signal) {
        if (options.signal.aborted) req.destroy(new Error('aborted'));
        options.signal.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
      }
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** Lists every object in scope, following `continue` tokens. */
  async list<T extends KubeObject = KubeObject>(kind: ResourceKind, scope: WatchScope = {}, pageSize = 500): Promise<ListResult<T>> {
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.request<{ items?: T[]; metadata?: { resourceVersion?: string; continue?: string } }>('GET', resourcePath(kind, scope.namespace), {
        query: { labelSelector: scope.labelSelector, limit: pageSize, continue: token },
      });
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
   */
  async watch<T extends KubeObject = KubeObject>(
    kind: ResourceKind,
    scope: WatchScope,
    resourceVersion: string,
    onEvent: (event: WatchEvent<T>) => void,
    signal: AbortSignal,
    timeoutSeconds = 300,
  ): Promise<void> {
    const query = KubeClient.query({ watch: 1, allowWatchBookmarks: true, resourceVersion, labelSelector: scope.labelSelector, timeoutSeconds });
    const opts = await this.options('GET', resourcePath(kind, scope.namespace) + query, true);
    const transport = this.server.protocol === 'https:' ? https : http;
    await new Promise<void>((resolve, reject) => {
      if (signal.aborted) return resolve();
      let settled = false;
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', abort);
        if (error && !signal.aborted) reject(error);
        else resolve();
      };
      const req = transport.request(opts, (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => finish(new KubeApiError(status, `watch ${kind.plural}: ${status} ${Buffer.concat(chunks).toString('utf8')}`)));
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
              finish(new KubeApiError(statusObject.code ?? 500, `watch ${kind.plural}: ${statusObject.message ?? 'error event'}`, statusObject.reason));
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
      const abort = () => {
        req.destroy();
        finish();
      };
      signal.addEventListener('abort', abort, { once: true });
      req.on('error', (error) => finish(error));
      req.end();
    });
  }

  async get<T extends KubeObject>(kind: ResourceKind, namespace: string | undefined, name: string): Promise<T> {
    return this.request<T>('GET', resourcePath(kind, namespace, name));
  }

  async create<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    this.writes++;
    return this.request<T>('POST', resourcePath(kind, object.metadata.namespace), { body: object, query: { fieldManager: FIELD_MANAGER } });
  }

  async replace<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    this.writes++;
    return this.request<T>('PUT', resourcePath(kind, object.metadata.namespace, object.metadata.name), { body: object, query: { fieldManager: FIELD_MANAGER } });
  }

  async apply<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    this.writes++;
    return this.request<T>('PATCH', resourcePath(kind, object.metadata.namespace, object.metadata.name), {
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }

  async applyStatus<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    this.writes++;
    return this.request<T>('PATCH', `${resourcePath(kind, object.metadata.namespace, object.metadata.name)}/status`, {
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }

  async mergePatch<T extends KubeObject>(kind: ResourceKind, namespace: string | undefined, name: string, patch: object): Promise<T> {
    this.writes++;
    return this.request<T>('PATCH', resourcePath(kind, namespace, name), {
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  async delete(kind: ResourceKind, namespace: string | undefined, name: string, options: { uid?: string } = {}): Promise<void> {
    this.writes++;
    const body = options.uid ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: options.uid } } : undefined;
    try {
      await this.request('DELETE', resourcePath(kind, namespace, name), { body });
    } catch (error) {
      if (isNotFound(error)) return;
      // A failed uid precondition means the object was replaced by a new one: nothing of ours is left to delete.
      if (error instanceof KubeApiError && error.statusCode === 409 && options.uid) return;
      throw error;
    }
  }

  /** Closes kept-alive connections. */
  close(): void {
    this.agent?.destroy();
    this.watchAgent?.destroy();
  }
}
