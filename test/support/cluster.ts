/**
 * A "cluster" the end-to-end scenarios run against: the in-process double (other actors write through
 * its store, so their writes are not counted as controller requests) or a real API server reached with
 * client-node. Both expose the same small async API.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { RawClient, type RawObject } from './raw-client.js';
import type { FakeApiServer, KubeObj } from '../double/fake-apiserver.js';

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

/** A real API server named by a kubeconfig; objects are sent verbatim (see raw-client.ts). */
export function realCluster(kubeConfig: KubeConfig): TestCluster {
  const client = new RawClient(kubeConfig);
  const raw = (obj: KubeObj): RawObject => obj as unknown as RawObject;
  return {
    description: `the API server at ${kubeConfig.getCurrentCluster()?.server ?? '?'}`,
    kubeConfig: () => kubeConfig,
    get: <T>(ref: ObjectRef) => client.get<T>(ref.apiVersion, ref.kind, ref.namespace, ref.name),
    list: <T>(apiVersion: string, kind: string, query: ListQuery = {}) =>
      client.list<T>(apiVersion, kind, query.namespace, query.labelSelector),
    create: <T>(obj: KubeObj) => client.create<T>(raw(obj)),
    apply: <T>(obj: KubeObj, fieldManager: string) => client.apply<T>(raw(obj), fieldManager),
    mergePatch: <T>(ref: ObjectRef, patch: object) =>
      client.mergePatch<T>(ref.apiVersion, ref.kind, ref.namespace, ref.name, patch),
    replaceStatus: <T>(obj: KubeObj) => client.replace<T>(raw(obj), 'status'),
    delete: (ref: ObjectRef) => client.delete(ref.apiVersion, ref.kind, ref.namespace, ref.name),
  };
}
