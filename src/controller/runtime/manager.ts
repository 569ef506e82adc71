/**
 * Wires informers, caches, queues, workers, leader election, metrics and the HTTP endpoints together.
 * To add a reconciler (one root kind), append its factory to {@link RECONCILERS}: the manager starts the
 * informers it declares, routes their events to its queue and runs its workers while leading.
 *
 * {@link startController} is a sequence of parts: connect (client, cache, metrics), wire (sharding, the
 * writer, reconcilers, informers, workers), lead once the caches have synced (the shard Leases), serve
 * HTTP, and stop.
 */
import type http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { Application } from '../../model/core/types.js';
import { createApplicationReconciler } from '../reconcilers/application.js';
import { createRolloutReconciler } from '../reconcilers/rollout.js';
import { ObjectCache } from '../../kube/cache.js';
import { createClusterSecretReconciler } from '../reconcilers/cluster-secret.js';
import { resolveConfig, type ControllerConfig } from './config.js';
import type { Informer } from '../../kube/informer.js';
import { KubeClient } from '../../kube/client.js';
import type { ElectionClock } from './leader.js';
import { ControllerMetrics, countConditions } from './metrics.js';
import type { ReconcilerContext, ReconcilerFactory } from './reconciler.js';
import { APPLICATION, type ResourceKind } from '../../kube/resources.js';
import { replicaSharding } from './shards.js';
import { createReportReconciler } from '../reconcilers/report.js';
import { guardedWriter, type GuardedWriter } from './writer.js';
import { Leadership, startShardElection } from './leadership.js';
import { createReconcilers, Workers } from './workers.js';
import { createInformers } from './informers.js';
import { closeServer, createHttpServer, listen, listeningPort } from './http.js';

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

/** The parts of a started controller, as {@link startController} wires them. */
interface Parts {
  readonly options: StartOptions;
  readonly config: ControllerConfig;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  readonly client: KubeClient;
  readonly cache: ObjectCache;
  readonly leadership: Leadership;
  readonly writer: GuardedWriter;
  readonly workers: Workers;
  /** By kind id. */
  readonly informers: ReadonlyMap<string, Informer>;
  /** Where the controller is in its life (read by the health endpoints). */
  readonly state: { stopping: boolean; cachesSynced: boolean };
}

/** The API client (its requests counted in the metrics) and the cache the informers fill. */
function connect(kubeConfig: KubeConfig, config: ControllerConfig, metrics: ControllerMetrics) {
  const client = new KubeClient(kubeConfig, {
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
  return { client, cache };
}

/**
 * Everything between the API and the reconcilers, nothing started: sharding and the leadership it is
 * judged by, the guarded writer, the reconcilers with their queues and workers, and their informers
 * (whose events already route to the queues).
 */
function wire(options: StartOptions): Parts {
  const config = resolveConfig(options.config);
  const logger = options.logger ?? pino({ name: 'pullfleet-controller' });
  const now = options.now ?? (() => new Date());
  const metrics = new ControllerMetrics();
  const { client, cache } = connect(options.kubeConfig, config, metrics);
  const leadership = new Leadership(config.leaderElection);
  const sharding = replicaSharding(config.shards, cache, leadership.holds);
  const writer = guardedWriter(client, metrics, cache, sharding, logger, leadership.fenced);
  const context: ReconcilerContext = { cache, writer, reader: client, config, logger, metrics, now, sharding };
  const reconcilers = createReconcilers([...RECONCILERS, ...(options.reconcilers ?? [])], context);
  const heldShards = () => leadership.election?.shards;
  const workers = new Workers(reconcilers, { metrics, logger, sharding, heldShards });
  const informers = createInformers(reconcilers, {
    client,
    cache,
    logger,
    metrics,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
  });
  workers.listen(informers);
  const state = { stopping: false, cachesSynced: false };
  return { options, config, logger, metrics, client, cache, leadership, writer, workers, informers, state };
}

/** The periodic resync and the gauges read once a second; returns what stops them. */
function startTimers({ config, metrics, cache, workers, informers }: Parts): () => void {
  const resyncTimer = setInterval(() => workers.resync(), config.resyncSeconds * 1000);
  resyncTimer.unref();
  const gaugeTimer = setInterval(() => {
    workers.reportDepth();
    for (const informer of informers.values())
      metrics.cachedObjects.set({ resource: informer.kind.plural }, cache.keys(informer.kind.id).length);
  }, 1000);
  gaugeTimer.unref();
  return () => {
    clearInterval(resyncTimer);
    clearInterval(gaugeTimer);
  };
}

/**
 * Once every cache has synced: without leader election the workers start at once; with it, the shard
 * election starts, and the workers start (or queue everything again) each time this replica takes a shard.
 * `ready` runs when the workers run; `stop` when a Lease was lost.
 */
function leadWhenSynced(parts: Parts, ready: () => void, stop: () => void): void {
  const { config, logger, informers, workers, state } = parts;
  void Promise.all([...informers.values()].map((informer) => informer.synced)).then(() => {
    state.cachesSynced = true;
    if (state.stopping) return;
    logger.info({ kinds: [...informers.keys()] }, 'caches synced');
    if (!config.leaderElection) {
      workers.start();
      ready();
      return;
    }
    const { client, metrics, writer, leadership } = parts;
    const electionClock = parts.options.electionClock;
    startShardElection(
      leadership,
      { config, client, logger, metrics, writer, ...(electionClock ? { electionClock } : {}) },
      {
        acquired: () => {
          if (workers.started) workers.queueEverything();
          else workers.start();
          ready();
        },
        lost: stop,
      },
    );
  });
}

/**
 * Stops the controller: workers first (in-flight reconciles get a bounded time to finish their writes;
 * after a lost Lease the writer already refuses them), then every write is refused, the watches stop, the
 * Leases are released (left to expire when the reconciles did not finish), the HTTP server closes.
 */
async function shutdown(parts: Parts, stopTimers: () => void, server: http.Server | undefined): Promise<void> {
  const { logger, metrics, workers, leadership, writer } = parts;
  parts.state.stopping = true;
  stopTimers();
  const limitMs = parts.options.stopTimeoutMs ?? 20000;
  const finished = await workers.shutdown(limitMs);
  leadership.closeWrites();
  writer.abortInFlight();
  if (!finished)
    logger.warn({ waitedMs: limitMs }, 'in-flight reconciles did not finish in time: the Lease is left to expire');
  await Promise.all([...parts.informers.values()].map((informer) => informer.stop()));
  await leadership.election?.stop({ release: finished });
  metrics.leader.set(0);
  metrics.shardsHeld.set(0);
  await closeServer(server);
  parts.client.close();
  logger.info('controller stopped');
}

export async function startController(options: StartOptions): Promise<RunningController> {
  const parts = wire(options);
  const { config, metrics, leadership, state } = parts;
  const stopTimers = startTimers(parts);
  for (const informer of parts.informers.values()) informer.start();
  const server = createHttpServer(config, metrics, {
    stopping: () => state.stopping,
    cachesSynced: () => state.cachesSynced,
    leaseHealth: () => leadership.election?.health(),
    heldShards: () => leadership.election?.shards ?? [],
  });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= shutdown(parts, stopTimers, server));
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));
  leadWhenSynced(parts, resolveReady, () => void stop().then(() => options.onLeadershipLost?.()));
  if (server) await listen(server, config, parts.logger);
  return { ready: () => ready, stop, metrics: () => metrics.text(), httpPort: () => listeningPort(server) };
}

/** Exposed for tests that need the kind list without starting anything. */
export function watchedKinds(context: ReconcilerContext): ResourceKind[] {
  const kinds = new Map<string, ResourceKind>();
  for (const factory of RECONCILERS)
    for (const watch of factory(context)?.watches ?? []) kinds.set(watch.kind.id, watch.kind);
  return [...kinds.values()];
}
