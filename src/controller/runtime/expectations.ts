/**
 * Write expectations: after the controller writes an object, the informer cache lags until the watch
 * delivers that write. A reconcile that ran on the stale copy would compute the same change again and
 * write it twice. Recording the resourceVersion each write returned lets a reconcile tell that its cache
 * is behind its own writes and wait for the watch event (which enqueues the key again) instead.
 */
import type { KubeObject } from '../../model/core/types.js';

function newer(a: string, b: string): boolean {
  // resourceVersions are opaque, but every real and fake server hands out increasing integers;
  // when they are not integers only equality is trusted.
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return a.length !== b.length ? a.length > b.length : a > b;
  return false;
}

export class WriteExpectations {
  private readonly expected = new Map<string, { resourceVersion: string; at: number }>();
  private readonly deleting = new Map<string, { uid?: string; at: number }>();

  /** @param maxWaitMs how long to trust an expectation before reconciling on the cache anyway. */
  constructor(private readonly maxWaitMs = 5000) {}

  /** Records the object a write returned. */
  wrote(kindId: string, object: KubeObject | undefined): void {
    const rv = object?.metadata?.resourceVersion;
    if (!object || !rv) return;
    const key = `${kindId}:${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    this.expected.set(key, { resourceVersion: rv, at: Date.now() });
  }

  /** Called for every informer event: once the cache holds the written version (or newer), stop waiting. */
  observe(kindId: string, object: KubeObject): void {
    const key = `${kindId}:${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    const expectation = this.expected.get(key);
    const rv = object.metadata.resourceVersion;
    if (
      expectation &&
      rv !== undefined &&
      (rv === expectation.resourceVersion || newer(rv, expectation.resourceVersion))
    )
      this.expected.delete(key);
  }

  /** The watch reported the object gone (or a write of it no longer needs waiting for). */
  forget(kindId: string, namespace: string | undefined, name: string): void {
    const key = `${kindId}:${namespace ?? ''}/${name}`;
    this.expected.delete(key);
    this.deleting.delete(key);
  }

  /**
   * Records a delete the server accepted: until the watch reports it gone, the cache still holds the object,
   * and a reconcile on that copy would delete it again (and log a deletion that did not happen).
   */
  deleted(kindId: string, namespace: string | undefined, name: string, uid: string | undefined): void {
    const key = `${kindId}:${namespace ?? ''}/${name}`;
    this.expected.delete(key);
    this.deleting.set(key, { ...(uid !== undefined ? { uid } : {}), at: Date.now() });
  }

  /**
   * Whether this object (the one with `uid`, when known) was deleted by the controller and the cache has not
   * heard of it yet. After `maxWaitMs` the cache is trusted again (a delete sent once more carries the uid
   * precondition, so it can only remove the object it meant to).
   */
  deletionPending(kindId: string, namespace: string | undefined, name: string, uid: string | undefined): boolean {
    const key = `${kindId}:${namespace ?? ''}/${name}`;
    const pending = this.deleting.get(key);
    if (!pending) return false;
    const another = pending.uid !== undefined && uid !== undefined && pending.uid !== uid;
    if (another || Date.now() - pending.at > this.maxWaitMs) {
      this.deleting.delete(key);
      return false;
    }
    return true;
  }

  /** Whether the cached copy is older than the controller's own last write of it. */
  lagging(kindId: string, namespace: string | undefined, name: string, cached: KubeObject | undefined): boolean {
    const key = `${kindId}:${namespace ?? ''}/${name}`;
    const expectation = this.expected.get(key);
    if (!expectation) return false;
    const rv = cached?.metadata.resourceVersion;
    if (rv !== undefined && (rv === expectation.resourceVersion || newer(rv, expectation.resourceVersion))) {
      this.expected.delete(key);
      return false;
    }
    if (Date.now() - expectation.at > this.maxWaitMs) {
      this.expected.delete(key);
      return false;
    }
    return true;
  }

  get size(): number {
    return this.expected.size + this.deleting.size;
  }
}
