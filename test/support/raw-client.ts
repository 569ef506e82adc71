/**
 * A minimal JSON client for tests on a real API server. It sends objects exactly as given: client-node's
 * KubernetesObjectApi serializes built-in kinds through its typed models and silently drops keys those
 * models spell differently (a CRD's `x-kubernetes-int-or-string`, for one), which would test something
 * other than what was written. Resource paths come from the server's own discovery.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';

export interface RawObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** An API error with the server's status code and message. */
export class RawApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    what: string,
  ) {
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      // not JSON
    }
    super(`${what}: ${code} ${message}`);
  }
}

interface Resource {
  readonly plural: string;
  readonly namespaced: boolean;
}

export interface RawRequest {
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

export class RawClient {
  private readonly server: URL;
  private readonly discovery = new Map<string, Map<string, Resource>>();

  constructor(private readonly kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
  }

  /** One request; resolves with the parsed JSON body, rejects with RawApiError on a non-2xx answer. */
  async request<T = unknown>(method: string, path: string, options: RawRequest = {}): Promise<T> {
    const opts: RequestOptions = { method, headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) params.set(k, String(v));
    const url = new URL(
      this.server.pathname.replace(/\/$/, '') + path + (params.size ? `?${params.toString()}` : ''),
      this.server,
    );
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { ...(opts.headers as Record<string, string>), Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const req = send(url, { ...opts, method, headers, timeout: options.timeoutMs ?? 30_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) return reject(new RawApiError(code, text, `${method} ${path}`));
          try {
            resolve((text ? JSON.parse(text) : undefined) as T);
          } catch (e) {
            reject(e instanceof Error ? e : new Error(String(e)));
          }
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  /** The resource of `kind` in `apiVersion`, from discovery (cached; refreshed once on a miss). */
  async resource(apiVersion: string, kind: string): Promise<Resource> {
    for (let attempt = 0; attempt < 2; attempt++) {
      let kinds = this.discovery.get(apiVersion);
      if (!kinds || attempt === 1) {
        const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        const list = await this.request<{ resources: Array<{ name: string; kind: string; namespaced: boolean }> }>(
          'GET',
          path,
        );
        kinds = new Map();
        for (const r of list.resources)
          if (!r.name.includes('/')) kinds.set(r.kind, { plural: r.name, namespaced: r.namespaced });
        this.discovery.set(apiVersion, kinds);
      }
      const found = kinds.get(kind);
      if (found) return found;
    }
    throw new Error(`the server serves no ${kind} in ${apiVersion}`);
  }

  /** The path of an object (or of its collection when `name` is undefined). */
  async path(apiVersion: string, kind: string, namespace: string | undefined, name?: string): Promise<string> {
    const r = await this.resource(apiVersion, kind);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = r.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
    return `${base}${ns}/${r.plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
  }

  async get<T = RawObject>(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', await this.path(apiVersion, kind, namespace, name));
    } catch (e) {
      if (e instanceof RawApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  async list<T = RawObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
    labelSelector?: string,
  ): Promise<T[]> {
    const r = await this.resource(apiVersion, kind);
    const path = await this.path(apiVersion, kind, r.namespaced ? namespace : undefined);
    const collection = r.namespaced && namespace === undefined ? path.replace('/namespaces/default/', '/') : path;
    const items: T[] = [];
    let cont: string | undefined;
    do {
      const page = await this.request<{ items: T[]; metadata: { continue?: string } }>('GET', collection, {
        query: { labelSelector, limit: 500, continue: cont },
      });
      items.push(...page.items);
      cont = page.metadata.continue || undefined;
    } while (cont);
    return items;
  }

  async create<T = RawObject>(object: RawObject, query: RawRequest['query'] = {}): Promise<T> {
    const path = await this.path(object.apiVersion, object.kind, object.metadata.namespace);
    return this.request<T>('POST', path, { body: object, query });
  }

  /** Server-side apply (force); `dryRun` asks the server to validate and admit without storing. */
  async apply<T = RawObject>(object: RawObject, fieldManager: string, options: { dryRun?: boolean } = {}): Promise<T> {
    const path = await this.path(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name);
    return this.request<T>('PATCH', path, {
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager, force: true, dryRun: options.dryRun ? 'All' : undefined, fieldValidation: 'Strict' },
    });
  }

  async mergePatch<T = RawObject>(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    patch: object,
    subresource?: string,
  ): Promise<T> {
    const path = (await this.path(apiVersion, kind, namespace, name)) + (subresource ? `/${subresource}` : '');
    return this.request<T>('PATCH', path, { body: patch, contentType: 'application/merge-patch+json' });
  }

  async replace<T = RawObject>(object: RawObject, subresource?: string): Promise<T> {
    const path =
      (await this.path(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name)) +
      (subresource ? `/${subresource}` : '');
    return this.request<T>('PUT', path, { body: object });
  }

  /** Deletes; a missing object is fine. */
  async delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<void> {
    try {
      await this.request('DELETE', await this.path(apiVersion, kind, namespace, name));
    } catch (e) {
      if (!(e instanceof RawApiError && e.code === 404)) throw e;
    }
  }
}
