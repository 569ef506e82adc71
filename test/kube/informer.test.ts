/**
 * The informer's list/watch loop against a scripted client: a watch the server ends at once without events
 * backs off like any failure (no hot loop), a 429 waits its Retry-After, and a normal watch end reopens at once.
 */
import { describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { ObjectCache } from '../../src/kube/cache.js';
import { Informer } from '../../src/kube/informer.js';
import { KubeApiError, type KubeClient, type WatchEvent } from '../../src/kube/client.js';
import { MANAGED_CLUSTER } from '../../src/kube/resources.js';

type WatchScript = (onEvent: (event: WatchEvent) => void, clock: { now: number }) => Promise<void>;

/** A client whose list returns one cluster and whose n-th watch runs `scripts[n]` (the last one repeats). */
function scriptedClient(scripts: WatchScript[], clock: { now: number }) {
  const calls = { list: 0, watch: 0 };
  const client: Pick<KubeClient, 'list' | 'watch'> = {
    list: (async () => {
      calls.list++;
      return {
        items: [
          {
            apiVersion: 'cluster.open-cluster-management.io/v1',
            kind: 'ManagedCluster',
            metadata: { name: 'c1', resourceVersion: '1' },
          },
        ],
        resourceVersion: '1',
      };
    }) as KubeClient['list'],
    watch: (async (_kind: unknown, _scope: unknown, _rv: string, onEvent: (event: WatchEvent) => void) => {
      const script = scripts[Math.min(calls.watch, scripts.length - 1)];
      calls.watch++;
      await script(onEvent, clock);
    }) as KubeClient['watch'],
  };
  return { client, calls };
}

function run(scripts: WatchScript[], stopAfterSleeps: number) {
  const clock = { now: 0 };
  const { client, calls } = scriptedClient(scripts, clock);
  const sleeps: number[] = [];
  let informer!: Informer;
  const done = new Promise<void>((resolve) => {
    informer = new Informer({
      kind: MANAGED_CLUSTER,
      client,
      cache: new ObjectCache(),
      logger: pino({ level: 'silent' }),
      now: () => clock.now,
      random: () => 1,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock.now += ms;
        if (sleeps.length >= stopAfterSleeps) {
          void informer.stop();
          resolve();
        }
      },
    });
    informer.start();
  });
  return { done, sleeps, calls };
}

const endsAtOnce: WatchScript = async () => undefined;
const endsAfterTimeout: WatchScript = async (onEvent, clock) => {
  onEvent({
    type: 'MODIFIED',
    object: {
      apiVersion: 'cluster.open-cluster-management.io/v1',
      kind: 'ManagedCluster',
      metadata: { name: 'c1', resourceVersion: '2' },
    },
  });
  clock.now += 300_000;
};

describe('Informer backoff', () => {
  test('GIVEN a server that ends every watch at once without events THEN each reopen waits a growing backoff, never a hot loop', async () => {
    const { done, sleeps, calls } = run([endsAtOnce], 6);
    await done;
    expect(sleeps).toStrictEqual([400, 800, 1600, 3200, 6400, 12800]);
    expect(calls.watch).toBe(6);
    // After repeated failures it relists, as after any error.
    expect(calls.list).toBeGreaterThan(1);
  });

  test('GIVEN a watch that ends after its timeout with events THEN it is reopened without waiting', async () => {
    const { done, sleeps, calls } = run([endsAfterTimeout, endsAfterTimeout, endsAfterTimeout, endsAtOnce], 1);
    await done;
    expect(calls.watch).toBe(4);
    expect(sleeps).toStrictEqual([400]);
    expect(calls.list).toBe(1);
  });

  test('GIVEN a watch refused with 429 and Retry-After 20 s THEN the informer waits at least that long', async () => {
    const tooMany: WatchScript = async () => {
      throw new KubeApiError(429, 'watch managedclusters: 429 Too Many Requests', 'TooManyRequests', 20_000);
    };
    const { done, sleeps } = run([tooMany], 2);
    await done;
    expect(sleeps).toStrictEqual([20_000, 20_000]);
  });
});
