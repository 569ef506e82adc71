/**
 * The manager's writer: every write the reconcilers make goes through it. It counts writes in the metrics,
 * refuses them while the replica may not write (fence and shard), aborts them when it stops leading, and
 * does not send merge patches that change nothing.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { ObjectCache } from '../../kube/cache.js';
import type { CallOptions, KubeWriter } from '../../kube/client.js';
import { APPLICATION, type ResourceKind } from '../../kube/resources.js';
import { canonicalJson } from '../../model/core/canonical-json.js';
import type { KubeObject } from '../../model/core/types.js';
import type { ControllerMetrics } from './metrics.js';
import type { ReplicaSharding } from './shards.js';

/**
 * A writer that counts every write in the metrics, refuses writes while `fenced()` gives a reason (no
 * Lease, a lost Lease, shutting down) or the object belongs to a shard this replica does not hold, can
 * abort the writes already in flight (after a lost Lease nothing this replica sent may still land), and
 * does not send a merge patch that would change nothing in the cached object.
 */
export interface GuardedWriter extends KubeWriter {
  /** Aborts every write still in flight (a hung request must never land after this replica stopped leading). */
  abortInFlight(): void;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether a JSON merge patch would leave `target` as it is: every value it sets is already there (objects
 * compared by content, whatever their key order) and it removes nothing (a `null` always counts as a
 * change: the cache may have dropped fields the server still has). `metadata.resourceVersion` is a
 * precondition, not a change.
 */
export function patchChangesNothing(target: unknown, patch: Record<string, unknown>, path = ''): boolean {
  if (!isPlainObject(target)) return false;
  for (const [key, value] of Object.entries(patch)) {
    if (path === '' && key === 'metadata' && isPlainObject(value)) {
      const { resourceVersion: _precondition, ...rest } = value;
      if (!patchChangesNothing(target.metadata, rest, 'metadata')) return false;
      continue;
    }
    if (value === null || value === undefined) return false;
    if (isPlainObject(value)) {
      if (!patchChangesNothing(target[key], value, `${path}.${key}`)) return false;
    } else if (canonicalJson(value) !== canonicalJson(target[key])) return false;
  }
  return true;
}

/** The {@link GuardedWriter} over `inner`, judging shards with `sharding` and the fence with `fenced`. */
export function guardedWriter(
  inner: KubeWriter,
  metrics: ControllerMetrics,
  cache: ObjectCache,
  sharding: ReplicaSharding,
  logger: Logger,
  fenced: () => string | undefined,
): GuardedWriter {
  // Every write in flight listens on one signal (a stop aborts them all): more than Node's default of 10 is normal.
  const freshSignal = () => {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    return controller;
  };
  let inFlight = freshSignal();
  const call = (kind: ResourceKind, namespace: string | undefined, name: string, verb: string): CallOptions => {
    const why = fenced();
    if (why) throw new Error(`write refused: ${why}`);
    if (!sharding.mayWrite(kind, namespace, name))
      throw new Error(
        `write refused: ${kind.kind} ${namespace ? `${namespace}/` : ''}${name} belongs to a shard this replica does not hold`,
      );
    // The write log (debug): which replica wrote what, and under which shard.
    if (logger.isLevelEnabled('debug'))
      logger.debug(
        { write: verb, kind: kind.kind, namespace, name, shard: sharding.shardOfWrite(kind, namespace, name) },
        'write',
      );
    return { signal: inFlight.signal };
  };
  return {
    apply: async (kind, object) => {
      const options = call(kind, object.metadata.namespace, object.metadata.name, 'apply');
      metrics.writes.inc({ resource: kind.plural, verb: 'apply' });
      return inner.apply(kind, object, options);
    },
    mergePatch: async <T extends KubeObject>(
      kind: ResourceKind,
      namespace: string | undefined,
      name: string,
      patch: object,
    ): Promise<T> => {
      const cached = cache.get<T>(kind.id, namespace ? `${namespace}/${name}` : name);
      if (cached && patchChangesNothing(cached, patch as Record<string, unknown>)) {
        const why = fenced();
        if (why) throw new Error(`write refused: ${why}`);
        metrics.skippedWrites.inc({ resource: kind.plural });
        return cached;
      }
      const options = call(kind, namespace, name, 'patch');
      // Sharded, a hub Application is written only in the version this replica judged it by: if its
      // target (and with it its shard) changed meanwhile, the server refuses the patch (409) and the next
      // reconcile looks again.
      let sent = patch as Record<string, unknown>;
      const metadata = isPlainObject(sent.metadata) ? sent.metadata : {};
      if (sharding.count > 1 && kind.id === APPLICATION.id && cached && metadata.resourceVersion === undefined)
        sent = { ...sent, metadata: { ...metadata, resourceVersion: cached.metadata.resourceVersion } };
      metrics.writes.inc({ resource: kind.plural, verb: 'patch' });
      return inner.mergePatch<T>(kind, namespace, name, sent, options);
    },
    applyStatus: async (kind, object) => {
      const options = call(kind, object.metadata.namespace, object.metadata.name, 'apply-status');
      metrics.writes.inc({ resource: `${kind.plural}/status`, verb: 'apply' });
      return inner.applyStatus!(kind, object, options);
    },
    delete: async (kind, namespace, name, options) => {
      const callOptions = call(kind, namespace, name, 'delete');
      metrics.writes.inc({ resource: kind.plural, verb: 'delete' });
      return inner.delete(kind, namespace, name, options, callOptions);
    },
    abortInFlight: () => {
      inFlight.abort(new Error('write aborted: this replica stopped leading'));
      inFlight = freshSignal();
    },
  };
}
