/** The read side the reconcilers see: objects by kind, with optional secondary indexes. */
import type { KubeObject } from '../model/core/types.js';

export function objectKey(object: Pick<KubeObject, 'metadata'>): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Read-only view of cached objects. */
export interface CacheReader {
  get<T extends KubeObject = KubeObject>(kindId: string, key: string): T | undefined;
  list<T extends KubeObject = KubeObject>(kindId: string): T[];
  /** Objects of `kindId` whose index `indexName` yields `value`. */
  byIndex<T extends KubeObject = KubeObject>(kindId: string, indexName: string, value: string): T[];
  /** Whether the first list of `kindId` has completed. */
  synced(kindId: string): boolean;
}

type IndexFn = (object: KubeObject) => string[];
/** What of an object the cache keeps (fields no reconciler reads are dropped to save memory). */
export type TrimFn = (object: KubeObject) => KubeObject;

/** An in-memory store of objects per kind with indexes kept up to date on every change. */
export class ObjectCache implements CacheReader {
  private readonly stores = new Map<string, Map<string, KubeObject>>();
  private readonly indexFns = new Map<string, Map<string, IndexFn>>();
  private readonly indexes = new Map<string, Map<string, Map<string, Set<string>>>>();
  private readonly syncedKinds = new Set<string>();
  private readonly trims = new Map<string, TrimFn>();

  /** Registers what to keep of each object of `kindId`; must be called before objects of that kind arrive. */
  setTrim(kindId: string, fn: TrimFn): void {
    if (this.trims.has(kindId) && this.trims.get(kindId) !== fn) throw new Error(`two trims for ${kindId}`);
    this.trims.set(kindId, fn);
  }

  private store(kindId: string): Map<string, KubeObject> {
    let store = this.stores.get(kindId);
    if (!store) this.stores.set(kindId, (store = new Map()));
    return store;
  }

  /** Registers a secondary index; must be called before objects of that kind arrive. */
  addIndex(kindId: string, indexName: string, fn: IndexFn): void {
    let fns = this.indexFns.get(kindId);
    if (!fns) this.indexFns.set(kindId, (fns = new Map()));
    if (fns.has(indexName)) return;
    fns.set(indexName, fn);
    const index = new Map<string, Set<string>>();
    let kindIndexes = this.indexes.get(kindId);
    if (!kindIndexes) this.indexes.set(kindId, (kindIndexes = new Map()));
    kindIndexes.set(indexName, index);
    for (const [key, object] of this.store(kindId)) for (const value of fn(object)) addTo(index, value, key);
  }

  markSynced(kindId: string): void {
    this.syncedKinds.add(kindId);
  }

  synced(kindId: string): boolean {
    return this.syncedKinds.has(kindId);
  }

  /** Stores `object` (managedFields dropped to save memory); returns the previous version. */
  upsert(kindId: string, input: KubeObject): KubeObject | undefined {
    if (input.metadata.managedFields) delete input.metadata.managedFields;
    const trim = this.trims.get(kindId);
    const object = trim ? trim(input) : input;
    const key = objectKey(object);
    const store = this.store(kindId);
    const previous = store.get(key);
    if (previous) this.unindex(kindId, key, previous);
    store.set(key, object);
    this.index(kindId, key, object);
    return previous;
  }

  remove(kindId: string, key: string): KubeObject | undefined {
    const store = this.store(kindId);
    const previous = store.get(key);
    if (!previous) return undefined;
    this.unindex(kindId, key, previous);
    store.delete(key);
    return previous;
  }

  keys(kindId: string): string[] {
    return [...this.store(kindId).keys()];
  }

  get<T extends KubeObject = KubeObject>(kindId: string, key: string): T | undefined {
    return this.store(kindId).get(key) as T | undefined;
  }

  list<T extends KubeObject = KubeObject>(kindId: string): T[] {
    return [...this.store(kindId).values()] as T[];
  }

  byIndex<T extends KubeObject = KubeObject>(kindId: string, indexName: string, value: string): T[] {
    const keys = this.indexes.get(kindId)?.get(indexName)?.get(value);
    if (!keys) return [];
    const store = this.store(kindId);
    return [...keys].map((key) => store.get(key)).filter((object): object is T => object !== undefined);
  }

  private index(kindId: string, key: string, object: KubeObject): void {
    const fns = this.indexFns.get(kindId);
    if (!fns) return;
    for (const [name, fn] of fns)
      for (const value of fn(object)) addTo(this.indexes.get(kindId)!.get(name)!, value, key);
  }

  private unindex(kindId: string, key: string, object: KubeObject): void {
    const fns = this.indexFns.get(kindId);
    if (!fns) return;
    for (const [name, fn] of fns) {
      const index = this.indexes.get(kindId)!.get(name)!;
      for (const value of fn(object)) {
        const set = index.get(value);
        set?.delete(key);
        if (set && set.size === 0) index.delete(value);
      }
    }
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let set = index.get(value);
  if (!set) index.set(value, (set = new Set()));
  set.add(key);
}
