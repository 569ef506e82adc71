/**
 * Sharding by cluster: the stable hash, which shard an app and its writes belong to, and replicas sharing
 * out shard Leases on a manual clock and in-memory Leases (a standby takes a free shard before a replica
 * that already leads one; a released or expired shard goes to another replica).
 */
import { describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { KubeApiError, type CallOptions } from '../../../src/kube/client.js';
import type { LeaseClient, LeaseObject } from '../../../src/controller/runtime/leader.js';
import { ShardElection } from '../../../src/controller/runtime/shards.js';
import {
  applicationShard,
  fnv1a32,
  shardLeaseName,
  shardOf,
  writablePlan,
} from '../../../src/model/reconcile/shards.js';
import type { KubeObject, ManifestWork } from '../../../src/model/core/types.js';
import { ManualClock } from '../../support/clock.js';

const silent = pino({ level: 'silent' });

describe('the shard of a value', () => {
  test('fnv1a32 is the 32-bit FNV-1a hash (reference vectors)', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  test('a cluster keeps its shard; one shard holds everything; Lease names carry the shard', () => {
    expect(shardOf('cluster-0042', 3)).toBe(fnv1a32('cluster-0042') % 3);
    expect(shardOf('cluster-0042', 1)).toBe(0);
    expect(shardLeaseName('pullfleet-controller', 2, 3)).toBe('pullfleet-controller-shard-2');
    expect(shardLeaseName('pullfleet-controller', 0, 1)).toBe('pullfleet-controller');
  });

  test('an app goes by the cluster it targets, and by its own name when it targets none', () => {
    const app = (annotations: Record<string, string>) => ({
      metadata: { name: 'guestbook', namespace: 'apps', annotations },
    });
    expect(applicationShard(app({ 'apps.open-cluster-management.io/ocm-managed-cluster': 'east' }), 5)).toBe(
      shardOf('east', 5),
    );
    expect(applicationShard(app({}), 5)).toBe(shardOf('apps/guestbook', 5));
  });

  test('a plan keeps only the work writes of clusters this replica may write', () => {
    const work = (namespace: string) =>
      ({
        apiVersion: 'work.open-cluster-management.io/v1',
        kind: 'ManifestWork',
        metadata: { namespace, name: 'w' },
      }) as ManifestWork;
    const mine = (ref: { namespace: string }) => ref.namespace === 'east';
    expect(
      writablePlan(
        {
          apply: work('west'),
          deletes: [
            { namespace: 'east', name: 'old' },
            { namespace: 'west', name: 'other' },
          ],
          orphan: [{ namespace: 'west', name: 'legacy' }],
          finalizer: 'add',
        },
        mine,
      ),
    ).toStrictEqual({ deletes: [{ namespace: 'east', name: 'old' }], orphan: [], finalizer: 'add' });
    expect(writablePlan({ apply: work('east'), deletes: [] }, mine)).toStrictEqual({
      apply: work('east'),
      deletes: [],
    });
  });
});

const manualClock = () => new ManualClock({ start: 1_000_000 });

/** Leases in memory by name, with resourceVersion checks. */
function leases() {
  const store = new Map<string, LeaseObject>();
  let version = 1;
  const client: LeaseClient = {
    get: <T extends KubeObject>(_kind: unknown, _ns: unknown, name: string, _call?: CallOptions) => {
      const lease = store.get(name);
      return lease
        ? Promise.resolve(structuredClone(lease) as unknown as T)
        : Promise.reject(new KubeApiError(404, 'not found'));
    },
    create: <T extends KubeObject>(_kind: unknown, object: T) => {
      if (store.has(object.metadata.name)) return Promise.reject(new KubeApiError(409, 'exists'));
      const stored = {
        ...structuredClone(object),
        metadata: { ...object.metadata, resourceVersion: String(++version) },
      };
      store.set(object.metadata.name, stored);
      return Promise.resolve(structuredClone(stored));
    },
    replace: <T extends KubeObject>(_kind: unknown, object: T) => {
      const current = store.get(object.metadata.name);
      if (!current || current.metadata.resourceVersion !== object.metadata.resourceVersion)
        return Promise.reject(new KubeApiError(409, 'conflict'));
      const stored = {
        ...structuredClone(object),
        metadata: { ...object.metadata, resourceVersion: String(++version) },
      };
      store.set(object.metadata.name, stored);
      return Promise.resolve(structuredClone(stored));
    },
  };
  const holder = (shard: number) => store.get(shardLeaseName('pullfleet-controller', shard, 2))?.spec?.holderIdentity;
  return { client, holder };
}

describe('replicas sharing shard Leases', () => {
  const options = (identity: string) => ({
    namespace: 'platform',
    leaseName: 'pullfleet-controller',
    count: 2,
    identity,
    leaseDurationSeconds: 15,
    renewDeadlineSeconds: 10,
    retryPeriodSeconds: 2,
    requestTimeoutSeconds: 5,
  });

  function replica(identity: string, client: LeaseClient, clock: ReturnType<typeof manualClock>) {
    const election = new ShardElection(client, options(identity), silent, { clock, random: () => 0.5 });
    const events: string[] = [];
    election.start(
      (shard) => events.push(`+${shard}`),
      (shard) => events.push(`-${shard}`),
    );
    return { election, events };
  }

  test('GIVEN two replicas starting together THEN each leads one shard', async () => {
    const clock = manualClock();
    const { client, holder } = leases();
    const a = replica('a', client, clock);
    const b = replica('b', client, clock);
    await clock.advance(10_000);
    expect([a.election.shards.length, b.election.shards.length]).toStrictEqual([1, 1]);
    expect(new Set([holder(0), holder(1)])).toStrictEqual(new Set(['a', 'b']));
    await a.election.stop({ release: true });
    await b.election.stop({ release: true });
  });

  test('GIVEN one replica alone THEN it leads every shard, one at a time', async () => {
    const clock = manualClock();
    const { client, holder } = leases();
    const a = replica('a', client, clock);
    await clock.advance(1);
    expect(a.election.shards).toHaveLength(1);
    await clock.advance(10_000);
    expect(a.election.shards).toStrictEqual([0, 1]);
    expect([holder(0), holder(1)]).toStrictEqual(['a', 'a']);
    await a.election.stop({ release: true });
  });

  test('GIVEN a replica leading both shards WHEN a standby starts and the leader stops THEN the standby leads them', async () => {
    const clock = manualClock();
    const { client, holder } = leases();
    const a = replica('a', client, clock);
    await clock.advance(10_000);
    const b = replica('b', client, clock);
    await clock.advance(10_000);
    expect(b.election.shards).toStrictEqual([]);
    await a.election.stop({ release: true });
    await clock.advance(10_000);
    expect(b.election.shards).toStrictEqual([0, 1]);
    expect([holder(0), holder(1)]).toStrictEqual(['b', 'b']);
    await b.election.stop({ release: true });
  });

  test('GIVEN a leader of one shard and a standby WHEN a shard falls free THEN the standby takes it first', async () => {
    const clock = manualClock();
    const { client, holder } = leases();
    const a = replica('a', client, clock);
    const b = replica('b', client, clock);
    await clock.advance(10_000);
    const c = replica('c', client, clock);
    await clock.advance(10_000);
    const [stopping, staying] = holder(0) === 'a' ? [a, b] : [b, a];
    const freed = stopping.election.shards[0];
    await stopping.election.stop({ release: true });
    await clock.advance(10_000);
    expect(holder(freed)).toBe('c');
    expect(staying.election.shards).toHaveLength(1);
    await staying.election.stop({ release: true });
    await c.election.stop({ release: true });
  });
  test('GIVEN two replicas WHEN one dies (its Lease not released) THEN the other takes its shard once the Lease expired, not before', async () => {
    const clock = manualClock();
    const { client, holder } = leases();
    const a = replica('a', client, clock);
    const b = replica('b', client, clock);
    await clock.advance(10_000);
    const dead = holder(0) === 'a' ? a : b;
    const survivor = dead === a ? b : a;
    const orphaned = dead.election.shards[0];
    await dead.election.stop({ release: false });
    await clock.advance(10_000);
    expect(holder(orphaned)).toBe(dead === a ? 'a' : 'b');
    await clock.advance(20_000);
    expect(survivor.election.shards).toStrictEqual([0, 1]);
    await survivor.election.stop({ release: true });
  });

  test('GIVEN a Lease create that lands after the request timed out THEN the replica does not count the shard as held until its elector leads it', async () => {
    const clock = manualClock();
    const { client } = leases();
    // The create is stored at once, but its answer comes 6 s later, after the 5 s request timeout.
    const slow: LeaseClient = {
      ...client,
      create: <T extends KubeObject>(kind: unknown, object: T, call?: CallOptions) =>
        client
          .create<T>(kind as never, object, call)
          .then((stored) => new Promise<T>((resolve) => clock.setTimeout(() => resolve(stored), 6_000))),
    };
    const a = replica('a', slow, clock);
    await clock.advance(6_100);
    // Holding a shard lets the replica write; only a Lease its elector renews may.
    expect(a.election.shards).toStrictEqual([]);
    expect(a.events).toStrictEqual([]);
    await clock.advance(10_000);
    expect(a.election.shards.length).toBeGreaterThan(0);
    expect(a.events.length).toBe(a.election.shards.length);
    await a.election.stop({ release: true });
  });
});
