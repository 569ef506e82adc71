/** The contract every reconciler plugs into the manager with (one per root kind). */
import type { Logger } from 'pino';
import type { KubeObject } from '../../model/core/types.js';
import type { CacheReader } from '../../kube/cache.js';
import type { ControllerConfig } from './config.js';
import type { KubeClient, KubeWriter } from '../../kube/client.js';
import type { ControllerMetrics } from './metrics.js';
import type { ResourceKind, WatchScope } from '../../kube/resources.js';
import type { WorkQueue } from './queue.js';

/**
 * Which shards this replica handles (`--shards`): a cluster belongs to shard `fnv1a32(name) % count`, a hub
 * Application to the shard of the cluster it targets, a ManifestWork to the shard of its cluster
 * (namespace). With one shard everything is this replica's while it leads.
 */
export interface Sharding {
  /** Number of shards (1: not sharded). */
  readonly count: number;
  shardOfCluster(cluster: string): number;
  /** The shard of a reconcile key that names no cluster (an ApplicationSet, the cluster Secrets). */
  shardOfKey(key: string): number;
  /** Whether this replica holds the Lease of `shard` now. */
  holds(shard: number): boolean;
  /** Whether this replica may write the object now (a ManifestWork or hub Application of a shard it holds). */
  mayWrite(kind: ResourceKind, namespace: string | undefined, name: string): boolean;
}

export interface ReconcilerContext {
  readonly cache: CacheReader;
  readonly writer: KubeWriter;
  /**
   * Direct reads: of kinds that may be absent from the hub (no informer for them), and of an object the
   * cache has not seen yet (a create refused because it exists); undefined in pure tests.
   */
  readonly reader?: Pick<KubeClient, 'list'> & Partial<Pick<KubeClient, 'get'>>;
  readonly config: ControllerConfig;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  /** Current time (injected so tests control it). */
  now(): Date;
  /** The shards this replica handles; undefined in pure tests (everything is theirs). */
  readonly sharding?: Sharding;
}

/** What happened to an informed object. */
export type WatchEventType = 'add' | 'update' | 'delete';

/** One informed kind a reconciler reads, and which of its keys an event of that kind touches. */
export interface WatchSpec {
  readonly kind: ResourceKind;
  readonly scope?: WatchScope;
  /**
   * What the cache keeps of each object of this kind (a label selector cannot always exclude objects the
   * controller never acts on; this drops their bulk instead). Event handlers still see whole objects.
   */
  readonly trim?: (object: KubeObject) => KubeObject;
  /** Secondary cache indexes on this kind. */
  readonly indexes?: Readonly<Record<string, (object: KubeObject) => string[]>>;
  /**
   * Keys of this reconciler to enqueue when an object of this kind changes (`previous` is the version
   * before an update; `type` says whether it was added, updated or deleted, and is taken as add or update
   * from `previous` when left out). Return only the keys whose
   * result can change, so frequent unrelated updates (ManagedCluster status) cost nothing; 'all' enqueues
   * every resync key (debounced by the manager).
   */
  keysFor(object: KubeObject, previous: KubeObject | undefined, type?: WatchEventType): string[] | 'all';
}

/** What a reconcile run learns about its key; the manager retries a reconcile that throws with backoff. */
export interface ReconcileInfo {
  /** When the key was queued (ms epoch), for latency metrics. */
  readonly enqueuedAt: number;
  /** Keys of this reconciler waiting (event-driven and resync; not those waiting for idle), when the manager knows. */
  readonly backlog?: number;
}

/** What a reconcile may ask of the manager afterwards. */
export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds (time-driven changes, such as feedback going stale). */
  readonly requeueAfterMs?: number;
  /** Reconcile this key again once no other key of this reconciler waits (work a burst may delay). */
  readonly whenIdle?: boolean;
  /**
   * The key failed in a way retrying cannot fix (an invalid object, a refused tenancy): only a change of
   * its objects can, and their watch events bring the key back. The manager does not retry it with
   * backoff, counts it (`pullfleet_reconcile_total{result="terminal"}` and `pullfleet_reconcile_errors_total`)
   * and logs the reason once per key, until the reason changes or the key succeeds. `requeueAfterMs` and
   * `whenIdle` still apply when set beside it.
   */
  readonly terminal?: string;
}

/** Remembers, per reconciler and key, the terminal reason last logged, so each is logged once. */
export class TerminalRecord {
  private readonly reasons = new Map<string, string>();

  /** Keys whose last reconcile ended terminal. */
  get size(): number {
    return this.reasons.size;
  }

  /** Records a terminal `reason` for `key`: true when it is news (a first, or a different, reason). */
  note(reconciler: string, key: string, reason: string): boolean {
    const id = `${reconciler}\0${key}`;
    if (this.reasons.get(id) === reason) return false;
    // Keys of objects that went while terminal never succeed again: a bound keeps the record small.
    if (this.reasons.size >= TERMINAL_RECORD_BOUND) this.reasons.clear();
    this.reasons.set(id, reason);
    return true;
  }

  /** Forgets `key` (it succeeded): a later terminal result is logged again. */
  clear(reconciler: string, key: string): void {
    this.reasons.delete(`${reconciler}\0${key}`);
  }
}

/** Keys a TerminalRecord holds before it starts afresh. */
const TERMINAL_RECORD_BOUND = 100_000;

/** What the manager makes of a reconcile that returned (rather than threw). */
export interface SettledReconcile {
  /** The `result` label of `pullfleet_reconcile_total`. */
  readonly result: 'success' | 'terminal';
  /** Queue the key again once no other key of the reconciler waits. */
  readonly whenIdle: boolean;
  /** A terminal reason not logged for this key yet: the manager logs it. */
  readonly logTerminal?: string;
}

/**
 * Settles a returned reconcile on its queue: the key's backoff is forgotten (a terminal result is not a
 * failure to retry), a requested requeue is scheduled, and a terminal reason is recorded.
 */
export function settleReconcile(
  reconciler: string,
  key: string,
  result: void | ReconcileResult,
  queue: Pick<WorkQueue, 'forget' | 'addAfter'>,
  terminals: TerminalRecord,
): SettledReconcile {
  queue.forget(key);
  if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
  const whenIdle = result?.whenIdle === true;
  if (result?.terminal === undefined) {
    terminals.clear(reconciler, key);
    return { result: 'success', whenIdle };
  }
  const news = terminals.note(reconciler, key, result.terminal);
  return { result: 'terminal', whenIdle, ...(news ? { logTerminal: result.terminal } : {}) };
}

export interface Reconciler {
  /** Metric and log label; unique. */
  readonly name: string;
  readonly watches: readonly WatchSpec[];
  /** Concurrent reconciles. */
  readonly workers: number;
  /** Every key that exists now (periodic resync and start-up). */
  resyncKeys(): string[];
  /**
   * The shards a key concerns (sharded replicas reconcile it when they hold any of them); by default the
   * shard of the key itself.
   */
  shardsOf?(key: string): readonly number[];
  /**
   * Brings the world in line for `key`; throws to be retried with backoff, returns `{ terminal }` when it
   * failed in a way retrying cannot fix.
   */
  reconcile(key: string, info: ReconcileInfo): Promise<void | ReconcileResult>;
}

export type ReconcilerFactory = (context: ReconcilerContext) => Reconciler | undefined;
