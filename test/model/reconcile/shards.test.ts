/**
 * Shard assignment in the model: the table of keys → shards was computed with the controller's
 * `fnv1a32` / `shardOf` before they moved here, so a change of the hash or of the modulo shows up as a
 * changed row (every running install would split its clusters another way).
 */
import { describe, expect, test } from '@jest/globals';
import {
  applicationShard,
  fnv1a32,
  isShardCount,
  MAX_SHARDS,
  shardLeaseName,
  shardOf,
  workShard,
} from '../../../src/model/reconcile/shards.js';

/** key, its FNV-1a hash, and its shard among 1, 2, 3, 4, 7 and 64 shards. */
const TABLE: ReadonlyArray<readonly [string, number, readonly number[]]> = [
  ['', 2166136261, [0, 1, 1, 1, 2, 5]],
  ['a', 3826002220, [0, 0, 1, 0, 5, 44]],
  ['foobar', 3214735720, [0, 0, 1, 0, 0, 40]],
  ['local-cluster', 284871151, [0, 1, 1, 3, 5, 47]],
  ['cluster-0042', 1998612650, [0, 0, 2, 2, 6, 42]],
  ['cluster-1', 2181689027, [0, 1, 2, 3, 0, 3]],
  ['spoke-east', 292648463, [0, 1, 2, 3, 2, 15]],
  ['spoke-west', 2774713157, [0, 1, 2, 1, 6, 5]],
  ['argocd/guestbook', 888769877, [0, 1, 2, 1, 2, 21]],
  ['team-a/app', 2931352446, [0, 0, 0, 2, 1, 62]],
  ['élan', 3608215812, [0, 0, 0, 0, 5, 4]],
  ['集群', 3510841584, [0, 0, 0, 0, 5, 48]],
];
const COUNTS = [1, 2, 3, 4, 7, 64];

describe('shard assignment', () => {
  test.each(TABLE)('%j hashes to %i and keeps its shard for every shard count', (key, hash, shards) => {
    expect(fnv1a32(key)).toBe(hash);
    expect(COUNTS.map((count) => shardOf(key, count))).toStrictEqual(shards);
  });

  test('a ManifestWork goes by its namespace (its cluster), a hub Application by the cluster it targets', () => {
    expect(workShard('spoke-west', 7)).toBe(6);
    expect(workShard(undefined, 7)).toBe(shardOf('', 7));
    const app = (annotations: Record<string, string>) => ({
      metadata: { name: 'guestbook', namespace: 'argocd', annotations },
    });
    expect(applicationShard(app({ 'apps.open-cluster-management.io/ocm-managed-cluster': 'spoke-east' }), 64)).toBe(15);
    expect(applicationShard(app({}), 64)).toBe(21);
  });

  test('the shard count is a whole number from 1 to 64, and each shard has its own Lease', () => {
    expect(MAX_SHARDS).toBe(64);
    expect([0, 1, 2.5, 64, 65, Number.NaN].map(isShardCount)).toStrictEqual([false, true, false, true, false, false]);
    expect(shardLeaseName('pullfleet-controller', 0, 1)).toBe('pullfleet-controller');
    expect(shardLeaseName('pullfleet-controller', 2, 3)).toBe('pullfleet-controller-shard-2');
  });
});
