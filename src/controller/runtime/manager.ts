/**
 * Wires informers, caches, queues, workers, leader election, metrics and the HTTP endpoints together.
 * To add a reconciler (one root kind), append its factory to {@link RECONCILERS}: the manager starts the
 * informers it declares, routes their events to its queue and runs its workers while leading.
 */
import http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { KubeObject } from '../../model/core/types.js';
import { createApplicationReconciler } from '../reconcilers/application.js';
import { ObjectCache } from '../../kube/cache.js';
import { createClusterSecretReconciler } from '../reconcilers/cluster-secret.js';
import { resolveConfig, type ControllerConfig } from './config.js';
import { Informer } from '../../kube/informer.js';
import { KubeApiError, KubeClient, isConflict, type CallOptions, type KubeWriter } from '../../kube/client.js';
import { LeaderElector, type ElectionClock } from './leader.js';
import { ControllerMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import type { Reconciler, ReconcilerContext, ReconcilerFactory } from './reconciler.js';
import type { ResourceKind } from '../../kube/resources.js';
import { createReportReconciler } from '../reconcilers/report.js';

/**
 * Every reconciler the controller runs. Add one more root kind (for example the fleet report) here, in
 * this one place; a factory may return undefined when its duty is switched off by configuration.
 */
export const RECONCILERS: ReconcilerFactory[] = [
  createApplicationReconciler,
  createClusterSecretReconciler,
  createReportReconciler,
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
}

/**
 * A writer that counts every write in the metrics and refuses every write once `fenced()` says this
 * replica may no longer act (leadership lost or shutting down), so an in-flight reconcile cannot write
 * after another replica may have started leading.
 */
interface GuardedWriter extends KubeWriter {
  /** Aborts every write still in flight (a hung request must never land after this replica stopped leading). */
  abortInFlight(): void;
}

/**
 * A writer that counts every write in the metrics, refuses writes while `fenced()` gives a reason, and
 * can abort the writes already in flight: after a lost Lease nothing this replica sent may still land.
 */
function guardedWriter(inner: KubeWriter, metrics: ControllerMetrics, fenced: () => string | undefined): GuardedWriter {
  let inFlight = new AbortController();
  const call = (): CallOptions => {
    const why = fenced();
    if (why) throw new Error(`write refused: ${why}`);
    return { signal: inFlight.signal };
  };
  return {
    apply: async (kind, object) => {
      const options = call();
      metrics.writes.inc({ resource: kind.plural, verb: 'apply' });
      return inner.apply(kind, object, options);
    },
    mergePatch: async (kind, namespace, name, patch) => {
      const options = call();
      metrics.writes.inc({ resource: kind.plural, verb: 'patch' });
      return inner.mergePatch(kind, namespace, name, patch, options);
    },
    applyStatus: async (kind, object) => {
      const options = call();
      metrics.writes.inc({ resource: `${kind.plural}/status`, verb: 'apply' });
      return inner.applyStatus!(kind, object, options);
    },
    delete: async (kind, namespace, name, options) => {
      const callOptions = call();
      metrics.writes.inc({ resource: kind.plural, verb: 'delete' });
      return inner.delete(kind, namespace, name, options, callOptions);
    },
    abortInFlight: () => {
      inFlight.abort(new Error('write aborted: this replica stopped leading'));
      inFlight = new AbortController();
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
  const client = new KubeClient(options.kubeConfig, { requestTimeoutMs: config.requestTimeoutSeconds * 1000 });
  const cache = new ObjectCache();
  const metrics = new ControllerMetrics();
  // Set below; the writer checks them on every write.
  let leading = !config.leaderElection;
  let stopping = false;
  let writesClosed = false;
  const fenced = () =>
    writesClosed ? 'the controller stopped' : leading ? undefined : 'this replica does not hold the leader Lease';
  const writer = guardedWriter(client, metrics, fenced);
  const context: ReconcilerContext = { cache, writer, reader: client, config, logger, metrics, now };

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

  async function worker(entry: Running): Promise<void> {
    const { queue, reconciler } = entry;
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      const enqueuedAt = queue.enqueuedAt(key) ?? Date.now();
      const end = metrics.duration.startTimer({ controller: reconciler.name });
      try {
        const result = await reconciler.reconcile(key, { enqueuedAt });
        queue.forget(key);
        if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
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
    for (const entry of running) {
      for (const key of entry.reconciler.resyncKeys()) entry.queue.add(key, { background: true });
      for (let i = 0; i < entry.reconciler.workers; i++) entry.workers.push(worker(entry));
    }
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
  let elector: LeaderElector | undefined;

  void synced.then(() => {
    cachesSynced = true;
    if (stopping) return;
    logger.info({ kinds: [...informers.keys()] }, 'caches synced');
    if (!config.leaderElection) {
      startWorkers();
      resolveReady();
      return;
    }
    elector = new LeaderElector(
      client,
      {
        namespace: config.namespace,
        name: config.leaseName,
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
    const current = elector;
    metrics.leaseAge = () => current.health().secondsSinceSuccess;
    elector.start(
      () => {
        leading = true;
        startWorkers();
        resolveReady();
      },
      () => {
        // Another replica may lead soon: the writer refuses from this moment, then everything stops.
        leading = false;
        writer.abortInFlight();
        metrics.leader.set(0);
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
        const election = elector?.health();
        const why = stopping
          ? 'stopping'
          : !cachesSynced
            ? 'caches not synced'
            : election && !election.healthy
              ? election.reason
              : undefined;
        res.writeHead(why ? 503 : 200, { 'Content-Type': 'text/plain' });
        res.end(why ? `${why}\n` : leading ? 'ok (leader)\n' : 'ok (standby)\n');
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
      // already refuses them). Past it every write is refused, and the Lease is not released: it
      // expires, and only then may another replica lead.
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
      await elector?.stop({ release: finished });
      metrics.leader.set(0);
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
  };
}

/** Exposed for tests that need the kind list without starting anything. */
export function watchedKinds(context: ReconcilerContext): ResourceKind[] {
  const kinds = new Map<string, ResourceKind>();
  for (const factory of RECONCILERS)
    for (const watch of factory(context)?.watches ?? []) kinds.set(watch.kind.id, watch.kind);
  return [...kinds.values()];
}
