/**
 * A "cluster" the end-to-end scenarios run against: the in-process double (other actors write through
 * its store, so their writes are not counted as controller requests) or a real API server reached with
 * client-node. Both expose the same small async API.
 */
import { KubeConfig, KubernetesObjectApi, CustomObjectsApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { Registry } from './fake/registry.js';
import type { FakeApiServer, KubeObj } from './fake-apiserver.js';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface ListQuery {
  namespace?: string;
  labelSelector?: string;
}

export interface TestCluster {
  /** Shown in test names and messages. */
  readonly description: string;
  /** A kubeConfig for one client; on the double, `client` names the process in counters, hangs and partitions. */
  kubeConfig(client?: string): KubeConfig;
  get<T = KubeObj>(ref: ObjectRef): Promise<T | undefined>;
  list<T = KubeObj>(apiVersion: string, kind: string, query?: ListQuery): Promise<T[]>;
  create<T = KubeObj>(obj: KubeObj): Promise<T>;
  /** Server-side apply with `fieldManager`, force. */
  apply<T = KubeObj>(obj: KubeObj, fieldManager: string): Promise<T>;
  mergePatch<T = KubeObj>(ref: ObjectRef, patch: object): Promise<T>;
  /** PUT to the status subresource (optimistic: the object's resourceVersion must be current). */
  replaceStatus<T = KubeObj>(obj: KubeObj): Promise<T>;
  /** Deletes; a missing object is fine. */
  delete(ref: ObjectRef): Promise<void>;
  /** Faults only the double can inject; undefined on a real cluster. */
  readonly faults?: {
    /** Every watch closes; resumes get 410 Gone and must relist. */
    expireWatches(): void;
    /** The double itself, for outages, partitions, hangs and per-client counters. */
    readonly server: FakeApiServer;
  };
}

/** An HTTP status carried by either client's errors. */
export function errorCode(error: unknown): number | undefined {
  const e = error as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

/** The double, driven through its in-process store. */
export function fakeCluster(server: FakeApiServer): TestCluster {
  const store = server.store;
  const wrap = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  };
  return {
    description: 'the in-process API double',
    kubeConfig: (client) => server.kubeConfig(client ? { client } : {}),
    get: (ref) => wrap(() => store.find(ref, ref.namespace, ref.name)),
    list: (apiVersion, kind, query = {}) => wrap(() => store.list({ apiVersion, kind }, query)),
    create: (obj) => wrap(() => store.create(obj)),
    apply: (obj, fieldManager) => wrap(() => store.apply(obj, fieldManager, { force: true })),
    mergePatch: (ref, patch) => wrap(() => store.patch(ref, ref.namespace, ref.name, 'merge', patch)),
    replaceStatus: (obj) => wrap(() => store.updateStatus(obj)),
    delete: (ref) =>
      wrap(() => {
        if (store.find(ref, ref.namespace, ref.name)) store.delete(ref, ref.namespace, ref.name);
      }),
    faults: { expireWatches: () => server.expireWatches(), server },
  };
}

/** A real API server named by a kubeconfig. */
export function realCluster(kubeConfig: KubeConfig): TestCluster {
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const registry = new Registry();
  const spec = (ref: ObjectRef) => ({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) } });
  return {
    description: `the API server at ${kubeConfig.getCurrentCluster()?.server ?? '?'}`,
    kubeConfig: () => kubeConfig,
    async get<T>(ref: ObjectRef) {
      try {
        return (await objects.read(spec(ref))) as T;
      } catch (e) {
        if (errorCode(e) === 404) return undefined;
        throw e;
      }
    },
    async list<T>(apiVersion: string, kind: string, query: ListQuery = {}) {
      const result = await objects.list(apiVersion, kind, query.namespace, undefined, undefined, undefined, undefined, query.labelSelector);
      return result.items as T[];
    },
    async create<T>(obj: KubeObj) {
      return (await objects.create(obj as KubernetesObject)) as T;
    },
    async apply<T>(obj: KubeObj, fieldManager: string) {
      return (await objects.patch(obj as KubernetesObject, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply)) as T;
    },
    async mergePatch<T>(ref: ObjectRef, patch: object) {
      const metadata = { ...((patch as { metadata?: object }).metadata ?? {}), ...spec(ref).metadata };
      return (await objects.patch({ ...spec(ref), ...patch, metadata } as KubernetesObject, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch)) as T;
    },
    async replaceStatus<T>(obj: KubeObj) {
      const def = registry.resolve({ apiVersion: obj.apiVersion, kind: obj.kind });
      const common = { group: def.group, version: def.version, plural: def.plural, name: obj.metadata.name, body: obj };
      const result = def.namespaced
        ? await custom.replaceNamespacedCustomObjectStatus({ ...common, namespace: obj.metadata.namespace })
        : await custom.replaceClusterCustomObjectStatus(common);
      return result as T;
    },
    async delete(ref: ObjectRef) {
      try {
        await objects.delete(spec(ref));
      } catch (e) {
        if (errorCode(e) !== 404) throw e;
      }
    },
  };
}

