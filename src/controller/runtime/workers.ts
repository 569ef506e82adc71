/**
 * The reconcilers the manager runs, each with its queue and workers: informer events become keys, workers
 * reconcile the keys of the shards this replica holds, and failures are retried with backoff.
 */
import type { Logger } from 'pino';
import { KubeApiError, isConflict } from '../../kube/client.js';
import type { Informer } from '../../kube/informer.js';
import type { KubeObject } from '../../model/core/types.js';
import type { ControllerMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import {
  settleReconcile,
  TerminalRecord,
  type Reconciler,
  type ReconcilerContext,
  type ReconcilerFactory,
} from './reconciler.js';
import type { ReplicaSharding } from './shards.js';

/** A reconciler the manager runs: its queue and its workers. */
interface Running {
  readonly reconciler: Reconciler;
  readonly queue: WorkQueue;
  readonly workers: Array<Promise<void>>;
  allPending: boolean;
}

/** What the workers need of the controller they run in. */
export interface WorkerParts {
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly sharding: ReplicaSharding;
  /** The shards this replica holds, for the log (undefined before leader election started). */
  heldShards(): readonly number[] | undefined;
}

/** The reconcilers `factories` make for `context` (a factory may make none); their names are unique. */
export function createReconcilers(factories: readonly ReconcilerFactory[], context: ReconcilerContext): Reconciler[] {
  const reconcilers: Reconciler[] = [];
  for (const factory of factories) {
    const reconciler = factory(context);
    if (!reconciler) continue;
    if (reconcilers.some((other) => other.name === reconciler.name))
      throw new Error(`two reconcilers are named "${reconciler.name}"`);
    reconcilers.push(reconciler);
  }
  return reconcilers;
}

/** The queues and workers of every reconciler. Workers run from {@link start} until {@link shutdown}. */
export class Workers {
  /** Whether the workers run (from the first time this replica led). */
  started = false;
  private stopping = false;
  private readonly running: Running[];
  /** Keys queued when this replica started leading (or took a shard) and not reconciled since: "caught up" at 0. */
  private readonly catchingUp = new Set<string>();
  /** Terminal reasons already logged, per reconciler and key (each is logged once). */
  private readonly terminals = new TerminalRecord();

  constructor(
    reconcilers: readonly Reconciler[],
    private readonly parts: WorkerParts,
  ) {
    this.running = reconcilers.map((reconciler) => ({
      reconciler,
      queue: new WorkQueue(),
      workers: [],
      allPending: false,
    }));
  }

  /** Routes each event of `informers` (by kind id) to the keys of every reconciler watching that kind. */
  listen(informers: ReadonlyMap<string, Informer>): void {
    for (const entry of this.running) {
      for (const watch of entry.reconciler.watches) {
        informers.get(watch.kind.id)!.on((type, object: KubeObject, previous?: KubeObject) => {
          if (!this.started) return; // the start-up resync covers everything listed before
          const keys = watch.keysFor(object, previous, type);
          if (keys === 'all') this.enqueueAll(entry);
          else for (const key of keys) entry.queue.add(key);
        });
      }
    }
  }

  /** Starts the workers (once, and never after shutdown): every key is queued first. */
  start(): void {
    if (this.started || this.stopping) return;
    this.started = true;
    this.queueEverything();
    for (const entry of this.running)
      for (let i = 0; i < entry.reconciler.workers; i++) entry.workers.push(this.worker(entry));
    this.parts.metrics.leader.set(1);
  }

  /** Queues every key of every reconciler, and counts them as not caught up until reconciled once. */
  queueEverything(): void {
    for (const entry of this.running) {
      for (const key of entry.reconciler.resyncKeys()) {
        entry.queue.add(key, { background: true });
        this.catchingUp.add(`${entry.reconciler.name}\0${key}`);
      }
    }
    this.parts.metrics.caughtUp.set(this.catchingUp.size === 0 ? 1 : 0);
  }

  /** The periodic resync: every key again, in the background (only once the workers run). */
  resync(): void {
    if (!this.started) return;
    for (const entry of this.running)
      for (const key of entry.reconciler.resyncKeys()) entry.queue.add(key, { background: true });
  }

  /** Sets the queue depth gauge of each reconciler. */
  reportDepth(): void {
    for (const entry of this.running)
      this.parts.metrics.queueDepth.set({ controller: entry.reconciler.name }, entry.queue.depth);
  }

  /**
   * Shuts the queues and waits for in-flight reconciles to finish, at most `limitMs`; whether they finished
   * in time.
   */
  async shutdown(limitMs: number): Promise<boolean> {
    this.stopping = true;
    for (const entry of this.running) entry.queue.shutdown();
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      Promise.all(this.running.flatMap((entry) => entry.workers)).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), limitMs))),
    ]);
    clearTimeout(timer);
    return finished;
  }

  /** 'all' of a watch: every resync key, debounced. */
  private enqueueAll(entry: Running): void {
    if (entry.allPending) return;
    entry.allPending = true;
    setTimeout(() => {
      entry.allPending = false;
      for (const key of entry.reconciler.resyncKeys()) entry.queue.add(key, { background: true });
    }, 50).unref();
  }

  private reconciled(entry: Running, key: string): void {
    if (this.catchingUp.size === 0) return;
    this.catchingUp.delete(`${entry.reconciler.name}\0${key}`);
    if (this.catchingUp.size === 0) {
      this.parts.metrics.caughtUp.set(1);
      this.parts.logger.info({ shards: this.parts.heldShards() }, 'caught up: every key reconciled once since leading');
    }
  }

  private async worker(entry: Running): Promise<void> {
    const { queue, reconciler } = entry;
    const { metrics } = this.parts;
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      if (!this.parts.sharding.owns(reconciler, key)) {
        // Another replica's shard: nothing to do here (the key comes back if this replica takes that shard).
        queue.forget(key);
        queue.done(key);
        this.reconciled(entry, key);
        metrics.reconciles.inc({ controller: reconciler.name, result: 'other-shard' });
        continue;
      }
      const enqueuedAt = queue.enqueuedAt(key) ?? Date.now();
      const end = metrics.duration.startTimer({ controller: reconciler.name });
      let later = false;
      try {
        const result = await reconciler.reconcile(key, { enqueuedAt, backlog: queue.busyDepth });
        const settled = settleReconcile(reconciler.name, key, result, queue, this.terminals);
        later = settled.whenIdle;
        metrics.reconciles.inc({ controller: reconciler.name, result: settled.result });
        if (settled.result === 'terminal') metrics.errors.inc({ controller: reconciler.name });
        if (settled.logTerminal !== undefined)
          this.parts.logger.warn(
            { controller: reconciler.name, key, reason: settled.logTerminal },
            'reconcile failed permanently: not retried until its objects change',
          );
      } catch (error) {
        this.failed(entry, key, error);
      } finally {
        end();
        queue.done(key);
        if (later) queue.add(key, { idle: true });
        this.reconciled(entry, key);
      }
      // A reconcile that writes nothing never waits on I/O; without this, a resync of thousands of keys
      // would run as one chain of microtasks and starve the watch streams (and with them fresh events).
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** A failed reconcile: counted, logged, and retried with backoff (or when the server says). */
  private failed(entry: Running, key: string, error: unknown): void {
    const { metrics, logger } = this.parts;
    const controller = entry.reconciler.name;
    metrics.errors.inc({ controller });
    metrics.reconciles.inc({ controller, result: isConflict(error) ? 'conflict' : 'error' });
    const delay = entry.queue.addRateLimited(key, error instanceof KubeApiError ? error.retryAfterMs : undefined);
    const log = isConflict(error) ? logger.debug.bind(logger) : logger.warn.bind(logger);
    log(
      { controller, key, err: error instanceof Error ? error.message : String(error), retryInMs: Math.round(delay) },
      'reconcile failed: retrying',
    );
  }
}
