/**
 * This replica's standing in leader election: whether it may write at all (the fence), which shards it
 * holds, and the start of the shard Leases' election once the caches have synced.
 */
import type { Logger } from 'pino';
import type { ControllerConfig } from './config.js';
import type { ElectionClock, LeaseClient } from './leader.js';
import type { ControllerMetrics } from './metrics.js';
import { ShardElection } from './shards.js';

const NO_LEASE = 'this replica does not hold the leader Lease';

/** Whether this replica may write, and which shards it holds (read by the writer on every write). */
export class Leadership {
  /** The shard Leases' election; undefined until it started (never, without leader election). */
  election: ShardElection | undefined;
  private lostLease = false;
  private writesClosed = false;

  constructor(private readonly leaderElection: boolean) {}

  /** Whether this replica holds the Lease of `shard` now (always, without leader election). */
  readonly holds = (shard: number): boolean =>
    !this.leaderElection || (!this.lostLease && (this.election?.holds(shard) ?? false));

  /** Why no write may be sent now (no Lease, a lost Lease, stopped); undefined when writes may go. */
  readonly fenced = (): string | undefined =>
    this.writesClosed
      ? 'the controller stopped'
      : this.lostLease
        ? NO_LEASE
        : !this.leaderElection || (this.election?.shards.length ?? 0) > 0
          ? undefined
          : NO_LEASE;

  /** A shard Lease was lost: from now on nothing is held and every write is refused. */
  loseLease(): void {
    this.lostLease = true;
  }

  /** The controller stopped: every write is refused from now on. */
  closeWrites(): void {
    this.writesClosed = true;
  }
}

/** What the shard election needs of the controller it runs in. */
export interface ElectionParts {
  readonly config: ControllerConfig;
  readonly client: LeaseClient;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  readonly electionClock?: ElectionClock;
  /** Aborted the moment a Lease is lost: nothing this replica sent may land after that. */
  readonly writer: { abortInFlight(): void };
}

/**
 * Starts electing this replica for every shard Lease (`config.shards` of them). `acquired` runs each time it
 * starts leading a shard; when it loses one, writes are refused and aborted at once and `lost` runs (the
 * controller then stops: another replica may lead that shard soon).
 */
export function startShardElection(
  leadership: Leadership,
  parts: ElectionParts,
  on: { acquired(): void; lost(): void },
): void {
  const { config, metrics, logger } = parts;
  const election = new ShardElection(
    parts.client,
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
      ...(parts.electionClock ? { clock: parts.electionClock } : {}),
      onError: () => metrics.leaderElectionErrors.inc(),
    },
  );
  leadership.election = election;
  metrics.leaseAge = () => election.health().secondsSinceSuccess;
  election.start(
    (shard) => {
      metrics.shardsHeld.set(election.shards.length);
      if (config.shards > 1) {
        metrics.shardLeader.set({ shard: String(shard) }, 1);
        logger.info({ shard, shards: election.shards }, 'leading shard');
      }
      on.acquired();
    },
    (shard) => {
      // Another replica may lead this shard soon: the writer refuses from this moment, then everything
      // stops (the other shards' Leases are released once in-flight reconciles have finished).
      leadership.loseLease();
      parts.writer.abortInFlight();
      metrics.leader.set(0);
      if (config.shards > 1) metrics.shardLeader.set({ shard: String(shard) }, 0);
      on.lost();
    },
  );
}
