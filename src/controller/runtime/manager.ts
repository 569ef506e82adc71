/**
 * Wires informers, caches, queues, workers, leader election, metrics and the HTTP endpoints together.
 * To add a reconciler (one root kind), append its factory to {@link RECONCILERS}: the manager starts the
 * informers it declares, routes their events to its queue and runs its workers while leading.
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { Application, KubeObject } from '../../model/core/types.js';
import { createApplicationReconciler } from '../reconcilers/application.js';
import { createRolloutReconciler } from '../reconcilers/rollout.js';
import { ObjectCache } from '../../kube/cache.js';
import { createClusterSecretReconciler } from '../reconcilers/cluster-secret.js';
import { resolveConfig, type ControllerConfig } from './config.js';
import { Informer } from '../../kube/informer.js';
import { KubeApiError, KubeClient, isConflict, type CallOptions, type KubeWriter } from '../../kube/client.js';
import type { ElectionClock } from './leader.js';
import { ControllerMetrics, countConditions } from './metrics.js';
import { WorkQueue } from './queue.js';
import type { Reconciler, ReconcilerContext, ReconcilerFactory, Sharding } from './reconciler.js';
import { APPLICATION, MANIFEST_WORK, type ResourceKind } from '../../kube/resources.js';
import { canonicalJson } from '../../model/core/canonical-json.js';
import { applicationShard, ShardElection, shardOf } from './shards.js';
import { createReportReconciler } from '../reconcilers/report.js';

/**
 * Every reconciler the controller runs. Add one more root kind (for example the fleet report) here, in
 * this one place; a factory may return undefined when its duty is switched off by configuration.
 */
export const RECONCILERS: ReconcilerFactory[] = [
  createApplicationReconciler,
  createClusterSecretReconciler,
  createReportReconciler,
  createRolloutReconciler,
];

export interface StartOptions {
  readonly kubeConfig: KubeConfig;
  readonly config?: Partial<ControllerConfig>;
  readonly logger?: Logger;
  /** Extra reconcilers for this instance only (tests); production ones belong in {@link RECONCILERS}. */
  readonly reconcilers?: readonly ReconcilerFactory[];
  /** Clock (tests). @default () => new Date() */
  readonly now?: () => Date;
  /** Called after the controller stopped itself because another replica may lead now. */
  readonly onLeadershipLost?: () => void;
  /** Longest wait in stop() for in-flight reconciles; past it the Lease is left to expire. @default 20000 */
  readonly stopTimeoutMs?: number;
  /** Monotonic clock and timers of leader election (tests). */
  readonly electionClock?: ElectionClock;
}

/** A started controller. */
export interface RunningController {
  /** Resolves once every cache has synced and this replica leads (workers are running). */
  ready(): Promise<void>;
  /** Stops workers (in-flight reconciles finish), watches, the HTTP server, and releases the Lease. */
  stop(): Promise<void>;
  /** Prometheus text exposition of the controller's metrics. */
  metrics(): Promise<string>;
  /**
   * The port /metrics, /healthz and /readyz are served on (the one the system chose when `httpPort` is 0), or
   * undefined without an HTTP server.
   */
  httpPort(): number | undefined;
}

/**
 * A writer that counts every write in the metrics, refuses writes while `fenced()` gives a reason (no
 * Lease, a lost Lease, shutting down) or the object belongs to a shard this replica does not hold, can
 * abort the writes already in flight (after a lost Lease nothing this replica sent may still land), and
 * does not send a merge patch that would change nothing in the cached object.
 */
interface GuardedWriter extends KubeWriter {
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

function guardedWriter(
  inner: KubeWriter,
  metrics: ControllerMetrics,
  cache: ObjectCache,
  sharding: Sharding,
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
        { write: verb, kind: kind.kind, namespace, name, shard: shardOfObject(kind, namespace, name) },
        'write',
      );
    return { signal: inFlight.signal };
  };
  /** The shard an object is written under (sharded replicas), for the write log. */
  const shardOfObject = (kind: ResourceKind, namespace: string | undefined, name: string): number | undefined => {
    if (sharding.count <= 1) return undefined;
    if (kind.id === MANIFEST_WORK.id) return sharding.shardOfCluster(namespace ?? '');
    if (kind.id !== APPLICATION.id) return undefined;
    const app = cache.get(APPLICATION.id, namespace ? `${namespace}/${name}` : name);
    return app ? applicationShard(app, sharding.count) : undefined;
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

interface Running {
  readonly reconciler: Reconciler;
  readonly queue: WorkQueue;
  workers: Array<Promise<void>>;
  allPending: boolean;
}

export async function startController(options: StartOptions): Promise<RunningController> {
  const config = resolveConfig(options.config);
  const logger = options.logger ?? pino({ name: 'pullfleet-controller' });
  const now = options.now ?? (() => new Date());
  const metrics = new ControllerMetrics();
  const client = new KubeClient(options.kubeConfig, {
    requestTimeoutMs: config.requestTimeoutSeconds * 1000,
    // Every worker may have one request in flight; the rest is room for lists and the other duties.
    maxInFlight: config.workers + 8,
    onResponse: (info) => {
      metrics.requests.inc({ verb: info.verb, resource: info.resource, code: String(info.code) });
      metrics.requestDuration.observe({ verb: info.verb }, info.seconds);
    },
  });
  metrics.clientState = () => client.limit;
  const cache = new ObjectCache();
  metrics.applicationConditions = () => countConditions(cache.list<Application>(APPLICATION.id));
  // Set below; the writer checks them on every write.
  let election: ShardElection | undefined;
  let lostLease = false;
  let stopping = false;
  let writesClosed = false;
  const holds = (shard: number) => !config.leaderElection || (!lostLease && (election?.holds(shard) ?? false));
  const sharding: Sharding = {
    count: config.shards,
    shardOfCluster: (cluster) => shardOf(cluster, config.shards),
    shardOfKey: (key) => shardOf(key, config.shards),
    holds,
    mayWrite: (kind, namespace, name) => {
      if (config.shards <= 1) return true;
      // A ManifestWork belongs to the shard of its cluster (its namespace); a hub Application to the shard
      // of the cluster it targets. Everything else is written under the shard of its reconcile key.
      if (kind.id === MANIFEST_WORK.id) return holds(shardOf(namespace ?? '', config.shards));
      if (kind.id === APPLICATION.id) {
        const key = namespace ? `${namespace}/${name}` : name;
        const app = cache.get(APPLICATION.id, key);
        return holds(app ? applicationShard(app, config.shards) : shardOf(key, config.shards));
      }
      return true;
    },
  };
  const fenced = () =>
    writesClosed
      ? 'the controller stopped'
      : lostLease
        ? 'this replica does not hold the leader Lease'
        : !config.leaderElection || (election?.shards.length ?? 0) > 0
          ? undefined
          : 'this replica does not hold the leader Lease';
  const writer = guardedWriter(client, metrics, cache, sharding, logger, fenced);
  const context: ReconcilerContext = { cache, writer, reader: client, config, logger, metrics, now, sharding };

  const running: Running[] = [];
  for (const factory of [...RECONCILERS, ...(options.reconcilers ?? [])]) {
    const reconciler = factory(context);
    if (!reconciler) continue;
    if (running.some((other) => other.reconciler.name === reconciler.name))
      throw new Error(`two reconcilers are named "${reconciler.name}"`);
    running.push({ reconciler, queue: new WorkQueue(), workers: [], allPending: false });
  }

  // One informer per kind, shared by every reconciler that reads it.
  const informers = new Map<string, { informer: Informer; scopeText: string }>();
  for (const { reconciler } of running) {
    for (const watch of reconciler.watches) {
      for (const [indexName, fn] of Object.entries(watch.indexes ?? {})) cache.addIndex(watch.kind.id, indexName, fn);
      if (watch.trim) cache.setTrim(watch.kind.id, watch.trim);
      const scopeText = JSON.stringify(watch.scope ?? {});
      const existing = informers.get(watch.kind.id);
      if (existing) {
        if (existing.scopeText !== scopeText)
          throw new Error(
            `${reconciler.name} watches ${watch.kind.kind} with scope ${scopeText}, another reconciler with ${existing.scopeText}`,
          );
        continue;
      }
      const informer = new Informer({
        kind: watch.kind,
        ...(watch.scope ? { scope: watch.scope } : {}),
        client,
        cache,
        logger,
        watchTimeoutSeconds: config.watchTimeoutSeconds,
        onRelist: () => metrics.relists.inc({ resource: watch.kind.plural }),
      });
      informers.set(watch.kind.id, { informer, scopeText });
    }
  }

  // Route each event to the keys of every reconciler watching that kind. 'all' is debounced.
  function enqueueAll(entry: Running): void {
    if (entry.allPending) return;
    entry.allPending = true;
    setTimeout(() => {
      entry.allPending = false;
      for (const key of entry.reconciler.resyncKeys()) entry.queue.add(key, { background: true });
    }, 50).unref();
  }
  for (const entry of running) {
    for (const watch of entry.reconciler.watches) {
      informers.get(watch.kind.id)!.informer.on((type, object: KubeObject, previous?: KubeObject) => {
        if (!workersStarted) return; // the start-up resync covers everything listed before
        const keys = watch.keysFor(object, previous, type);
        if (keys === 'all') enqueueAll(entry);
        else for (const key of keys) entry.queue.add(key);
      });
    }
  }

  /** Keys queued when this replica started leading (or took a shard) and not reconciled since: "caught up" at 0. */
  const catchingUp = new Set<string>();
  function queueEverything(): void {
    for (const entry of running) {
      for (const key of entry.reconciler.resyncKeys()) {
        entry.queue.add(key, { background: true });
        catchingUp.add(`${entry.reconciler.name}\0${key}`);
      }
    }
    metrics.caughtUp.set(catchingUp.size === 0 ? 1 : 0);
  }
  function reconciled(entry: Running, key: string): void {
    if (catchingUp.size === 0) return;
    catchingUp.delete(`${entry.reconciler.name}\0${key}`);
    if (catchingUp.size === 0) {
      metrics.caughtUp.set(1);
      logger.info({ shards: election?.shards }, 'caught up: every key reconciled once since leading');
    }
  }
  /** Whether this replica holds a shard of the key (always, unsharded). */
  function mine(entry: Running, key: string): boolean {
    if (config.shards <= 1) return true;
    const shards = entry.reconciler.shardsOf?.(key) ?? [sharding.shardOfKey(key)];
    return shards.some(holds);
  }

  async function worker(entry: Running): Promise<void> {
    const { queue, reconciler } = entry;
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      if (!mine(entry, key)) {
        // Another replica's shard: nothing to do here (the key comes back if this replica takes that shard).
        queue.forget(key);
        queue.done(key);
        reconciled(entry, key);
        metrics.reconciles.inc({ controller: reconciler.name, result: 'other-shard' });
        continue;
      }
      const enqueuedAt = queue.enqueuedAt(key) ?? Date.now();
      const end = metrics.duration.startTimer({ controller: reconciler.name });
      let later = false;
      try {
        const result = await reconciler.reconcile(key, { enqueuedAt, backlog: queue.busyDepth });
        queue.forget(key);
        if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
        later = result?.whenIdle === true;
        metrics.reconciles.inc({ controller: reconciler.name, result: 'success' });
      } catch (error) {
        metrics.errors.inc({ controller: reconciler.name });
        metrics.reconciles.inc({ controller: reconciler.name, result: isConflict(error) ? 'conflict' : 'error' });
        const delay = queue.addRateLimited(key, error instanceof KubeApiError ? error.retryAfterMs : undefined);
        const log = isConflict(error) ? logger.debug.bind(logger) : logger.warn.bind(logger);
        log(
          {
            controller: reconciler.name,
            key,
            err: error instanceof Error ? error.message : String(error),
            retryInMs: Math.round(delay),
          },
          'reconcile failed: retrying',
        );
      } finally {
        end();
        queue.done(key);
        if (later) queue.add(key, { idle: true });
        reconciled(entry, key);
      }
      // A reconcile that writes nothing never waits on I/O; without this, a resync of thousands of keys
      // would run as one chain of microtasks and starve the watch streams (and with them fresh events).
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  let workersStarted = false;
  function startWorkers(): void {
    if (workersStarted || stopping) return;
    workersStarted = true;
    queueEverything();
    for (const entry of running) for (let i = 0; i < entry.reconciler.workers; i++) entry.workers.push(worker(entry));
    metrics.leader.set(1);
  }

  const resyncTimer = setInterval(() => {
    if (!workersStarted) return;
    for (const entry of running)
      for (const key of entry.reconciler.resyncKeys()) entry.queue.add(key, { background: true });
  }, config.resyncSeconds * 1000);
  resyncTimer.unref();

  const gaugeTimer = setInterval(() => {
    for (const entry of running) metrics.queueDepth.set({ controller: entry.reconciler.name }, entry.queue.depth);
    for (const { informer } of informers.values())
      metrics.cachedObjects.set({ resource: informer.kind.plural }, cache.keys(informer.kind.id).length);
  }, 1000);
  gaugeTimer.unref();

  for (const { informer } of informers.values()) informer.start();
  const synced = Promise.all([...informers.values()].map(({ informer }) => informer.synced));

  let resolveReady!: () => void;
  const readyPromise = new Promise<void>((resolve) => (resolveReady = resolve));
  let cachesSynced = false;

  void synced.then(() => {
    cachesSynced = true;
    if (stopping) return;
    logger.info({ kinds: [...informers.keys()] }, 'caches synced');
    if (!config.leaderElection) {
      startWorkers();
      resolveReady();
      return;
    }
    election = new ShardElection(
      client,
      {
        namespace: config.namespace,
        leaseName: config.leaseName,
        count: config.shards,
        identity: config.identity,
        leaseDurationSeconds: config.leaseDurationSeconds,
        renewDeadlineSeconds: config.renewDeadlineSeconds,
        retryPeriodSeconds: config.retryPeriodSeconds,
        requestTimeoutSeconds: config.requestTimeoutSeconds,
      },
      logger,
      {
        ...(options.electionClock ? { clock: options.electionClock } : {}),
        onError: () => metrics.leaderElectionErrors.inc(),
      },
    );
    const current = election;
    metrics.leaseAge = () => current.health().secondsSinceSuccess;
    election.start(
      (shard) => {
        metrics.shardsHeld.set(current.shards.length);
        if (config.shards > 1) {
          metrics.shardLeader.set({ shard: String(shard) }, 1);
          logger.info({ shard, shards: current.shards }, 'leading shard');
        }
        if (workersStarted) queueEverything();
        else startWorkers();
        resolveReady();
      },
      (shard) => {
        // Another replica may lead this shard soon: the writer refuses from this moment, then everything
        // stops (the other shards' Leases are released once in-flight reconciles have finished).
        lostLease = true;
        writer.abortInFlight();
        metrics.leader.set(0);
        if (config.shards > 1) metrics.shardLeader.set({ shard: String(shard) }, 0);
        void stop().then(() => options.onLeadershipLost?.());
      },
    );
  });

  let server: http.Server | undefined;
  if (config.httpPort !== undefined) {
    server = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/metrics') {
        metrics
          .text()
          .then((text) => {
            res.writeHead(200, { 'Content-Type': metrics.contentType });
            res.end(text);
          })
          .catch((error: unknown) => {
            res.writeHead(500);
            res.end(String(error));
          });
        return;
      }
      if (path === '/healthz') {
        res.writeHead(stopping ? 503 : 200, { 'Content-Type': 'text/plain' });
        res.end(stopping ? 'stopping\n' : 'ok\n');
        return;
      }
      if (path === '/readyz') {
        // A standby replica is ready (it serves metrics and can take over); it just does not reconcile.
        // One that cannot read or write the Lease is not: it could never take over.
        const health = election?.health();
        const why = stopping
          ? 'stopping'
          : !cachesSynced
            ? 'caches not synced'
            : health && !health.healthy
              ? health.reason
              : undefined;
        const held = election?.shards ?? [];
        const role = !config.leaderElection
          ? 'ok (leader)'
          : held.length === 0
            ? 'ok (standby)'
            : config.shards > 1
              ? `ok (shards ${held.join(', ')} of ${config.shards})`
              : 'ok (leader)';
        res.writeHead(why ? 503 : 200, { 'Content-Type': 'text/plain' });
        res.end(why ? `${why}\n` : `${role}\n`);
        return;
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.httpPort, config.httpHost, () => resolve());
    });
    const address = server.address();
    logger.info({ address }, 'serving /metrics, /healthz and /readyz');
  }

  let stopped: Promise<void> | undefined;
  function stop(): Promise<void> {
    stopped ??= (async () => {
      stopping = true;
      clearInterval(resyncTimer);
      clearInterval(gaugeTimer);
      for (const entry of running) entry.queue.shutdown();
      // In-flight reconciles get a bounded time to finish their writes (after a lost Lease the writer
      // already refuses them). Past it every write is refused, and the Leases are not released: they
      // expire, and only then may another replica lead.
      const limitMs = options.stopTimeoutMs ?? 20000;
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        Promise.all(running.flatMap((entry) => entry.workers)).then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), limitMs))),
      ]);
      clearTimeout(timer);
      writesClosed = true;
      writer.abortInFlight();
      if (!finished)
        logger.warn({ waitedMs: limitMs }, 'in-flight reconciles did not finish in time: the Lease is left to expire');
      await Promise.all([...informers.values()].map(({ informer }) => informer.stop()));
      await election?.stop({ release: finished });
      metrics.leader.set(0);
      metrics.shardsHeld.set(0);
      if (server) {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
      }
      client.close();
      logger.info('controller stopped');
    })();
    return stopped;
  }

  return {
    ready: () => readyPromise,
    stop,
    metrics: () => metrics.text(),
    httpPort: () => {
      const address = server?.address();
      return address && typeof address === 'object' ? address.port : undefined;
    },
  };
}

/** Exposed for tests that need the kind list without starting anything. */
export function watchedKinds(context: ReconcilerContext): ResourceKind[] {
  const kinds = new Map<string, ResourceKind>();
  for (const factory of RECONCILERS)
    for (const watch of factory(context)?.watches ?? []) kinds.set(watch.kind.id, watch.kind);
  return [...kinds.values()];
}
