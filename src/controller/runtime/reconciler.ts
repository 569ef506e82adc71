/** The contract every reconciler plugs into the manager with (one per root kind). */
import type { Logger } from 'pino';
import type { KubeObject } from '../../model/core/types.js';
import type { CacheReader } from '../../kube/cache.js';
import type { ControllerConfig } from './config.js';
import type { KubeClient, KubeWriter } from '../../kube/client.js';
import type { ControllerMetrics } from './metrics.js';
import type { ResourceKind, WatchScope } from '../../kube/resources.js';

export interface ReconcilerContext {
  readonly cache: CacheReader;
  readonly writer: KubeWriter;
  /** Direct reads of kinds that may be absent from the hub (no informer for them); undefined in pure tests. */
  readonly reader?: Pick<KubeClient, 'list'>;
  readonly config: ControllerConfig;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  /** Current time (injected so tests control it). */
  now(): Date;
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

/** What a reconcile run learns about its key; the manager retries `retry` with backoff. */
export interface ReconcileInfo {
  /** When the key was queued (ms epoch), for latency metrics. */
  readonly enqueuedAt: number;
}

/** What a reconcile may ask of the manager afterwards. */
export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds (time-driven changes, such as feedback going stale). */
  readonly requeueAfterMs?: number;
}

export interface Reconciler {
  /** Metric and log label; unique. */
  readonly name: string;
  readonly watches: readonly WatchSpec[];
  /** Concurrent reconciles. */
  readonly workers: number;
  /** Every key that exists now (periodic resync and start-up). */
  resyncKeys(): string[];
  /** Brings the world in line for `key`; throws to be retried with backoff. */
  reconcile(key: string, info: ReconcileInfo): Promise<void | ReconcileResult>;
}

export type ReconcilerFactory = (context: ReconcilerContext) => Reconciler | undefined;
