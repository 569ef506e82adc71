/**
 * Sharding by cluster across replicas, as the controller applies it. Which shard owns what (the hash, a
 * cluster's, hub Application's, ManifestWork's and key's shard, the Lease name per shard) is decided in
 * the model (src/model/reconcile/shards.ts); this module holds a replica's side of it: what it may write and
 * reconcile given the shards it holds ({@link replicaSharding}), and the Leases it holds them through
 * ({@link ShardElection}).
 *
 * Each shard has a Lease of its own (`<lease name>-shard-<i>`), and a replica acts only on the shards whose
 * Lease it holds. Each Lease is run by a LeaderElector, so everything leader election guarantees holds per
 * shard: a replica that cannot renew a shard's Lease stops before another may take it, and only then may
 * another take it.
 *
 * Replicas spread the shards between them: a replica holding k shards takes a free shard only after
 * seeing it free for 2k retry periods, so one holding fewer (a standby holds none), which tries every retry
 * period, gets it first; a replica tries one free shard at a time. A replica that stops releases its Leases
 * (others take them at once); one that dies leaves them to expire (others take them a Lease duration after its
 * last renew).
 */
import type { Logger } from 'pino';
import type { CacheReader } from '../../kube/cache.js';
import { APPLICATION, MANIFEST_WORK, type ResourceKind } from '../../kube/resources.js';
import { applicationShard, shardLeaseName, shardOf, workShard } from '../../model/reconcile/shards.js';
import { LeaderElector, type ElectionClock, type LeaderElectionHealth, type LeaseClient } from './leader.js';
import type { Reconciler, Sharding } from './reconciler.js';

/** A replica's sharding as the manager uses it: the reconcilers' view, the write log's and the workers'. */
export interface ReplicaSharding extends Sharding {
  /** The shard a write is logged under: undefined unsharded, for other kinds, and for an app not cached. */
  shardOfWrite(kind: ResourceKind, namespace: string | undefined, name: string): number | undefined;
  /** Whether this replica reconciles `key` of `reconciler` now: it holds one of the shards the key concerns. */
  owns(reconciler: Pick<Reconciler, 'shardsOf'>, key: string): boolean;
}

/**
 * Sharding among `count` shards for a replica that holds the shards `holds` says. A ManifestWork belongs to
 * the shard of its cluster (its namespace); a hub Application to the shard of the cluster it targets (as
 * cached; by its own key when not cached). Anything else may be written by the replica that reconciles its
 * key, which is the one that {@link ReplicaSharding.owns} it.
 */
export function replicaSharding(count: number, cache: CacheReader, holds: (shard: number) => boolean): ReplicaSharding {
  const cachedAppShard = (namespace: string | undefined, name: string): number | undefined => {
    const app = cache.get(APPLICATION.id, namespace ? `${namespace}/${name}` : name);
    return app ? applicationShard(app, count) : undefined;
  };
  return {
    count,
    shardOfCluster: (cluster) => shardOf(cluster, count),
    shardOfKey: (key) => shardOf(key, count),
    holds,
    mayWrite: (kind, namespace, name) => {
      if (count <= 1) return true;
      if (kind.id === MANIFEST_WORK.id) return holds(workShard(namespace, count));
      if (kind.id === APPLICATION.id)
        return holds(cachedAppShard(namespace, name) ?? shardOf(namespace ? `${namespace}/${name}` : name, count));
      return true;
    },
    shardOfWrite: (kind, namespace, name) => {
      if (count <= 1) return undefined;
      if (kind.id === MANIFEST_WORK.id) return workShard(namespace, count);
      return kind.id === APPLICATION.id ? cachedAppShard(namespace, name) : undefined;
    },
    owns: (reconciler, key) => count <= 1 || (reconciler.shardsOf?.(key) ?? [shardOf(key, count)]).some(holds),
  };
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
