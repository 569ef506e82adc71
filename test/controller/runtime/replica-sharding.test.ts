/**
 * A replica's side of sharding: what it may write and which keys it reconciles given the shards it holds
 * (ManifestWorks by their namespace, hub Applications by the cluster they target as cached, other kinds
 * always), and what /readyz answers for its role.
 */
import { describe, expect, test } from '@jest/globals';
import type { CacheReader } from '../../../src/kube/cache.js';
import { APPLICATION, MANIFEST_WORK, SECRET } from '../../../src/kube/resources.js';
import { replicaSharding } from '../../../src/controller/runtime/shards.js';
import { readiness, type HealthView } from '../../../src/controller/runtime/http.js';
import { shardOf } from '../../../src/model/reconcile/shards.js';
import type { KubeObject } from '../../../src/model/core/types.js';

const SHARDS = 7;
// From the table of test/model/reconcile/shards.test.ts: spoke-west is shard 6 of 7, spoke-east shard 2.
const WEST = 'spoke-west';
const EAST = 'spoke-east';

/** A cache holding hub Applications by `<namespace>/<name>`. */
function cacheOf(apps: readonly KubeObject[]): CacheReader {
  const byKey = new Map(apps.map((app) => [`${app.metadata.namespace}/${app.metadata.name}`, app]));
  return {
    get: <T extends KubeObject>(kindId: string, key: string) =>
      (kindId === APPLICATION.id ? byKey.get(key) : undefined) as T | undefined,
    list: () => [],
    byIndex: () => [],
    synced: () => true,
  };
}

const app = (name: string, cluster: string): KubeObject => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: {
    name,
    namespace: 'apps',
    annotations: { 'apps.open-cluster-management.io/ocm-managed-cluster': cluster },
  },
});

describe('a replica holding shard 6 of 7', () => {
  const holds = (shard: number) => shard === 6;
  const sharding = replicaSharding(SHARDS, cacheOf([app('on-west', WEST), app('on-east', EAST)]), holds);

  test('writes the works of its clusters only', () => {
    expect(sharding.mayWrite(MANIFEST_WORK, WEST, 'w')).toBe(true);
    expect(sharding.mayWrite(MANIFEST_WORK, EAST, 'w')).toBe(false);
    expect(sharding.shardOfWrite(MANIFEST_WORK, EAST, 'w')).toBe(2);
  });

  test('writes a cached app by the cluster it targets, an uncached one by its key', () => {
    expect(sharding.mayWrite(APPLICATION, 'apps', 'on-west')).toBe(true);
    expect(sharding.mayWrite(APPLICATION, 'apps', 'on-east')).toBe(false);
    expect(sharding.shardOfWrite(APPLICATION, 'apps', 'on-east')).toBe(2);
    expect(sharding.mayWrite(APPLICATION, 'apps', 'gone')).toBe(shardOf('apps/gone', SHARDS) === 6);
    expect(sharding.shardOfWrite(APPLICATION, 'apps', 'gone')).toBeUndefined();
  });

  test('writes other kinds under no shard', () => {
    expect(sharding.mayWrite(SECRET, 'argocd', 'cluster-east')).toBe(true);
    expect(sharding.shardOfWrite(SECRET, 'argocd', 'cluster-east')).toBeUndefined();
  });

  test("reconciles a key when it holds one of the key's shards (by default the key's own)", () => {
    expect(sharding.owns({ shardsOf: () => [2, 6] }, 'k')).toBe(true);
    expect(sharding.owns({ shardsOf: () => [2] }, 'k')).toBe(false);
    expect(sharding.owns({}, WEST)).toBe(true);
    expect(sharding.owns({}, EAST)).toBe(false);
  });
});

test('one shard: everything is written and reconciled, and no write carries a shard', () => {
  const sharding = replicaSharding(1, cacheOf([app('on-east', EAST)]), (shard) => shard === 0);
  expect(sharding.mayWrite(MANIFEST_WORK, EAST, 'w')).toBe(true);
  expect(sharding.shardOfWrite(MANIFEST_WORK, EAST, 'w')).toBeUndefined();
  expect(sharding.owns({ shardsOf: () => [5] }, 'k')).toBe(true);
});

describe('/readyz', () => {
  const view = (over: Partial<HealthView> = {}): HealthView => ({
    stopping: () => false,
    cachesSynced: () => true,
    leaseHealth: () => undefined,
    heldShards: () => [],
    ...over,
  });
  const sharded = { leaderElection: true, shards: 3 };

  test('names the role: standby, the shards held, or leader', () => {
    expect(readiness(sharded, view())).toStrictEqual({ status: 200, text: 'ok (standby)\n' });
    expect(readiness(sharded, view({ heldShards: () => [0, 2] }))).toStrictEqual({
      status: 200,
      text: 'ok (shards 0, 2 of 3)\n',
    });
    expect(readiness({ leaderElection: true, shards: 1 }, view({ heldShards: () => [0] })).text).toBe('ok (leader)\n');
    expect(readiness({ leaderElection: false, shards: 1 }, view()).text).toBe('ok (leader)\n');
  });

  test('fails when stopping, before the caches synced, or when the Lease cannot be renewed', () => {
    expect(readiness(sharded, view({ stopping: () => true }))).toStrictEqual({ status: 503, text: 'stopping\n' });
    expect(readiness(sharded, view({ cachesSynced: () => false })).text).toBe('caches not synced\n');
    const unhealthy = { healthy: false, reason: 'Lease not renewed for 12 s', secondsSinceSuccess: 12 };
    expect(readiness(sharded, view({ leaseHealth: () => unhealthy }))).toStrictEqual({
      status: 503,
      text: 'Lease not renewed for 12 s\n',
    });
  });
});
