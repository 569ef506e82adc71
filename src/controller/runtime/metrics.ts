/** Prometheus metrics of one controller instance (its own registry, so several instances can coexist). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Application } from '../../model/core/types.js';
import { ROLLOUT_HALTED_CONDITION } from '../../model/rollout/policy.js';
import {
  DELIVERY_ERROR_CONDITION,
  FEEDBACK_STALE_CONDITION,
  INVALID_FEEDBACK_CONDITION,
  OPERATION_PENDING_CONDITION,
} from '../../model/reconcile/status.js';

/**
 * The conditions `pullfleet_applications_with_condition` counts: those an operator acts on (delivery stopped,
 * feedback stale or refused, an operation the spoke never started, a halted rollout). Each is exported, 0
 * when no Application carries it, so alerts and dashboards always find the series.
 */
export const COUNTED_CONDITIONS: readonly string[] = [
  DELIVERY_ERROR_CONDITION,
  FEEDBACK_STALE_CONDITION,
  INVALID_FEEDBACK_CONDITION,
  OPERATION_PENDING_CONDITION,
  ROLLOUT_HALTED_CONDITION,
];

/** How many of `apps` carry each of {@link COUNTED_CONDITIONS} (an app counts once per type). */
export function countConditions(apps: Iterable<Pick<Application, 'status'>>): Map<string, number> {
  const counts = new Map(COUNTED_CONDITIONS.map((type) => [type, 0]));
  for (const app of apps) {
    const conditions = app.status?.conditions;
    if (!conditions?.length) continue;
    for (const type of new Set(conditions.map((condition) => condition.type)))
      if (counts.has(type)) counts.set(type, counts.get(type)! + 1);
  }
  return counts;
}

const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({
    name: 'pullfleet_reconcile_total',
    help: 'Reconciles by controller and result.',
    labelNames: ['controller', 'result'],
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: 'pullfleet_reconcile_errors_total',
    help: 'Failed reconciles by controller.',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'pullfleet_reconcile_duration_seconds',
    help: 'Time spent in one reconcile.',
    labelNames: ['controller'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'pullfleet_queue_depth',
    help: 'Keys waiting in the work queue.',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly propagationLatency = new Histogram({
    name: 'pullfleet_propagation_latency_seconds',
    help: 'From a hub Application change being queued to its ManifestWork being written.',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly statusLatency = new Histogram({
    name: 'pullfleet_status_latency_seconds',
    help: 'From a ManifestWork or Application change being queued to the hub Application status being written.',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly writes = new Counter({
    name: 'pullfleet_api_writes_total',
    help: 'Write requests sent to the API server.',
    labelNames: ['resource', 'verb'],
    registers: [this.registry],
  });
  readonly skippedWrites = new Counter({
    name: 'pullfleet_api_writes_skipped_total',
    help: 'Merge patches not sent because the cached object already had every value they set.',
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: 'pullfleet_api_requests_total',
    help: 'Requests sent to the API server (watches excepted) by verb, resource and HTTP status (0: no answer).',
    labelNames: ['verb', 'resource', 'code'],
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'pullfleet_api_request_duration_seconds',
    help: 'Time from sending a request to its answer (watches excepted), by verb.',
    labelNames: ['verb'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Source of the client limiter gauges (set by the manager). */
  clientState?: () => { limit: number; inFlight: number; waiting: number; throttled: number };
  readonly clientLimit = new Gauge({
    name: 'pullfleet_api_client_limit',
    help: 'Requests the client lets into flight at once now (adaptive: halved on 429, grows back on success).',
    registers: [this.registry],
    collect: () => {
      this.clientLimit.set(this.clientState?.().limit ?? 0);
    },
  });
  readonly clientInFlight = new Gauge({
    name: 'pullfleet_api_client_in_flight',
    help: 'Requests in flight (watches and Lease requests excepted).',
    registers: [this.registry],
    collect: () => {
      this.clientInFlight.set(this.clientState?.().inFlight ?? 0);
    },
  });
  readonly clientWaiting = new Gauge({
    name: 'pullfleet_api_client_waiting',
    help: 'Requests held back by the client (in-flight limit reached or a Retry-After pause).',
    registers: [this.registry],
    collect: () => {
      this.clientWaiting.set(this.clientState?.().waiting ?? 0);
    },
  });
  readonly caughtUp = new Gauge({
    name: 'pullfleet_caught_up',
    help: '1 once every key queued when this replica started leading (or took a shard) has been reconciled.',
    registers: [this.registry],
  });
  readonly shardsHeld = new Gauge({
    name: 'pullfleet_shards_held',
    help: 'Shards whose Lease this replica holds (with --shards > 1).',
    registers: [this.registry],
  });
  readonly shardLeader = new Gauge({
    name: 'pullfleet_shard_leader',
    help: '1 for each shard whose Lease this replica holds.',
    labelNames: ['shard'],
    registers: [this.registry],
  });
  readonly relists = new Counter({
    name: 'pullfleet_watch_relists_total',
    help: 'Full relists after a watch expired or failed.',
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'pullfleet_leader',
    help: '1 while this replica holds the leader Lease.',
    registers: [this.registry],
  });
  readonly leaderElectionErrors = new Counter({
    name: 'pullfleet_leader_election_errors_total',
    help: 'Lease requests that failed (error or timeout).',
    registers: [this.registry],
  });
  /** Source of the Lease age gauge (set by the manager when leader election runs). */
  leaseAge?: () => number;
  readonly leaseSecondsSinceSuccess = new Gauge({
    name: 'pullfleet_leader_election_seconds_since_success',
    help: 'Seconds since this replica last read or wrote the leader Lease successfully (0 without leader election).',
    registers: [this.registry],
    collect: () => {
      this.leaseSecondsSinceSuccess.set(this.leaseAge?.() ?? 0);
    },
  });
  /** Source of the condition counts (set by the manager): hub Applications carrying each condition type. */
  applicationConditions?: () => ReadonlyMap<string, number>;
  readonly applicationsWithCondition = new Gauge({
    name: 'pullfleet_applications_with_condition',
    help: 'Hub Applications in the cache carrying a condition the controller sets, by condition type (0 when none).',
    labelNames: ['type'],
    registers: [this.registry],
    collect: () => {
      for (const [type, count] of this.applicationConditions?.() ?? [])
        this.applicationsWithCondition.set({ type }, count);
    },
  });
  readonly cachedObjects = new Gauge({
    name: 'pullfleet_cached_objects',
    help: 'Objects in the informer cache by resource.',
    labelNames: ['resource'],
    registers: [this.registry],
  });

  constructor(defaultMetrics = true) {
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'pullfleet_' });
  }

  /** Sum of write requests so far (benchmarks use it to count writes per change). */
  async totalWrites(): Promise<number> {
    const metric = await this.writes.get();
    return metric.values.reduce((sum, value) => sum + value.value, 0);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
