/**
 * Sharding by cluster across replicas. A cluster belongs to shard `fnv1a32(cluster name) % shards`: pullfleet's
 * own assignment, stable because a ManagedCluster's name never changes. (Argo CD's legacy distribution uses the
 * same hash on another input, the cluster Secret's UID, so its shard numbers differ from these and change when
 * the Secret is re-created; docs/reference/upstream-contract.md.) Each shard has a Lease
 * of its own (`<lease name>-shard-<i>`), and a replica acts only on the shards whose Lease it holds. Each
 * Lease is run by a LeaderElector, so everything leader election guarantees holds per shard: a replica
 * that cannot renew a shard's Lease stops before another may take it, and only then may another take it.
 *
 * Replicas spread the shards between them: a replica holding k shards takes a free shard only after
 * seeing it free for 2k retry periods, so one holding fewer (a standby holds none), which tries every retry
 * period, gets it first; a replica tries one free shard at a time. A replica that stops releases its Leases (others take them at once);
 * one that dies leaves them to expire (others take them a Lease duration after its last renew).
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../../model/core/types.js';
import { targetCluster } from '../../model/delivery/manifestwork.js';
import type { PropagationPlan } from '../../model/runtime/propagation.js';
import { LeaderElector, type ElectionClock, type LeaderElectionHealth, type LeaseClient } from './leader.js';

/** 32-bit FNV-1a of the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The shard of a value (a cluster name, a key) among `count` shards. */
export function shardOf(value: string, count: number): number {
  return count <= 1 ? 0 : fnv1a32(value) % count;
}

/**
 * The shard of a hub Application: the shard of the cluster it targets, so an app and its ManifestWork are
 * handled by one shard; an app that names no cluster goes by its own `<namespace>/<name>`.
 */
export function applicationShard(app: Pick<KubeObject, 'metadata'>, count: number): number {
  const cluster = targetCluster(app);
  return shardOf(cluster ?? `${app.metadata.namespace ?? ''}/${app.metadata.name}`, count);
}

/**
 * The part of a propagation plan this replica may carry out: writes to ManifestWorks of clusters of other
 * shards are left out (their shard's replica carries them out from the same plan).
 */
export function writablePlan(
  plan: PropagationPlan,
  mayWrite: (ref: { readonly namespace: string; readonly name: string }) => boolean,
): PropagationPlan {
  const apply = plan.apply?.metadata.namespace
    ? mayWrite({ namespace: plan.apply.metadata.namespace, name: plan.apply.metadata.name })
    : true;
  const { apply: _apply, adopt, orphan, ...rest } = plan;
  return {
    ...rest,
    ...(plan.apply && apply ? { apply: plan.apply } : {}),
    ...(adopt && mayWrite(adopt) ? { adopt } : {}),
    ...(orphan ? { orphan: orphan.filter(mayWrite) } : {}),
    deletes: plan.deletes.filter(mayWrite),
  };
}

/** Name of the Lease of `shard` (one shard: the plain Lease name, as without sharding). */
export function shardLeaseName(leaseName: string, shard: number, count: number): string {
  return count <= 1 ? leaseName : `${leaseName}-shard-${shard}`;
}

export interface ShardElectionOptions {
  readonly namespace: string;
  readonly leaseName: string;
  readonly count: number;
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineSeconds: number;
  readonly retryPeriodSeconds: number;
  readonly requestTimeoutSeconds?: number;
}

/** One LeaderElector per shard Lease, and which shards this replica holds. */
export class ShardElection {
  private readonly held = new Set<number>();
  private readonly trying = new Set<number>();
  private readonly electors: LeaderElector[] = [];

  constructor(
    client: LeaseClient,
    private readonly options: ShardElectionOptions,
    logger: Logger,
    deps: { clock?: ElectionClock; onError?: (error: unknown) => void; random?: () => number } = {},
  ) {
    const retryMs = options.retryPeriodSeconds * 1000;
    for (let shard = 0; shard < options.count; shard++) {
      const gate = {
        shouldAcquire: (freeForMs: number) => {
          if (this.trying.size > 0) return false;
          if (freeForMs < 2 * this.held.size * retryMs) return false;
          this.trying.add(shard);
          return true;
        },
        // Held-ness comes from the elector alone (it leads, it renews, it gives up in time): a create that
        // landed after its request timed out must not count, or the fence would let writes through for a Lease
        // nobody renews.
        attemptDone: () => {
          this.trying.delete(shard);
        },
      };
      this.electors.push(
        new LeaderElector(
          client,
          {
            namespace: options.namespace,
            name: shardLeaseName(options.leaseName, shard, options.count),
            identity: options.identity,
            leaseDurationSeconds: options.leaseDurationSeconds,
            renewDeadlineSeconds: options.renewDeadlineSeconds,
            retryPeriodSeconds: options.retryPeriodSeconds,
            ...(options.requestTimeoutSeconds !== undefined
              ? { requestTimeoutSeconds: options.requestTimeoutSeconds }
              : {}),
          },
          logger.child({ shard }),
          { ...deps, ...(options.count > 1 ? { gate } : {}) },
        ),
      );
    }
  }

  get count(): number {
    return this.options.count;
  }

  holds(shard: number): boolean {
    return this.held.has(shard);
  }

  /** The shards this replica leads, ascending. */
  get shards(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }

  /** Healthy while every shard's Lease can be read and written. */
  health(): LeaderElectionHealth {
    const all = this.electors.map((elector) => elector.health());
    const worst = all.reduce((a, b) => (b.secondsSinceSuccess > a.secondsSinceSuccess ? b : a));
    return all.find((h) => !h.healthy) ?? worst;
  }

  /** `onAcquired(shard)` when this replica starts leading a shard, `onLost(shard)` when it lost one. */
  start(onAcquired: (shard: number) => void, onLost: (shard: number) => void): void {
    this.electors.forEach((elector, shard) =>
      elector.start(
        () => {
          this.held.add(shard);
          onAcquired(shard);
        },
        () => {
          this.held.delete(shard);
          onLost(shard);
        },
      ),
    );
  }

  /** Stops every elector; `release` empties the holder of each Lease held (see LeaderElector.stop). */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    await Promise.all(this.electors.map((elector) => elector.stop(options)));
    this.held.clear();
  }
}
