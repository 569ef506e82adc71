/**
 * List and watch on the API double through client-node: selectors, list resourceVersion, paging,
 * watch replay from a resourceVersion, selector transitions, 410 Gone for expired resourceVersions,
 * timeoutSeconds, bookmarks, and an informer that relists after its watch expires.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { Watch, makeInformer, type KubernetesObject } from '@kubernetes/client-node';
import { waitFor } from '../support/wait.js';
import { APPS, application, harness, merge, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.server.close();
});

const APPS_PATH = '/apis/argoproj.io/v1alpha1/applications';
const names = (list: { items: Array<{ metadata?: { name?: string } }> }) =>
  list.items.map((i) => i.metadata!.name).sort();

function seed(): void {
  h.server.store.create(application('a', 'team-a', { metadata: { labels: { tier: 'web', env: 'prod' } } }));
  h.server.store.create(application('b', 'team-a', { metadata: { labels: { tier: 'db', env: 'prod' } } }));
  h.server.store.create(application('c', 'team-b', { metadata: { labels: { tier: 'web' } } }));
}

interface Seen {
  type: string;
  name?: string;
  rv?: string;
  code?: number;
}

/** Opens a raw watch with client-node's Watch; events land in `seen`, `ended` flips when the stream closes. */
async function openWatch(path: string, query: Record<string, string>) {
  const seen: Seen[] = [];
  const state = { ended: false, error: undefined as unknown };
  const controller = await new Watch(h.kc).watch(
    path,
    query,
    (type: string, object: { metadata?: { name?: string; resourceVersion?: string }; code?: number }) =>
      seen.push({ type, name: object.metadata?.name, rv: object.metadata?.resourceVersion, code: object.code }),
    (err: unknown) => {
      state.ended = true;
      state.error = err;
    },
  );
  return { seen, state, stop: () => controller.abort() };
}

describe('list', () => {
  test('GIVEN apps in two namespaces WHEN listed cluster-wide and per namespace THEN each list holds the right items and the current resourceVersion', async () => {
    seed();

    const all = await h.custom.listClusterCustomObject({ ...APPS });
    const teamA = await h.custom.listNamespacedCustomObject({ ...APPS, namespace: 'team-a' });

    expect(names(all)).toStrictEqual(['a', 'b', 'c']);
    expect(names(teamA)).toStrictEqual(['a', 'b']);
    expect(all.kind).toBe('ApplicationList');
    expect(all.metadata.resourceVersion).toBe(h.server.store.resourceVersion);
  });

  test.each([
    ['tier=web', ['a', 'c']],
    ['tier==web,env=prod', ['a']],
    ['tier!=web', ['b']],
    ['tier in (db,cache)', ['b']],
    ['tier notin (db)', ['a', 'c']],
    ['env', ['a', 'b']],
    ['!env', ['c']],
  ])(
    'GIVEN labelled apps WHEN listed with labelSelector %s THEN only matching apps return',
    async (labelSelector, expected) => {
      seed();

      const list = await h.custom.listClusterCustomObject({ ...APPS, labelSelector });

      expect(names(list)).toStrictEqual(expected);
    },
  );

  test.each([
    ['metadata.name=b', ['b']],
    ['metadata.namespace=team-b', ['c']],
    ['metadata.namespace!=team-b', ['a', 'b']],
  ])('GIVEN apps WHEN listed with fieldSelector %s THEN only matching apps return', async (fieldSelector, expected) => {
    seed();

    const list = await h.custom.listClusterCustomObject({ ...APPS, fieldSelector });

    expect(names(list)).toStrictEqual(expected);
  });

  test('GIVEN three apps WHEN listed with limit 2 THEN a continue token fetches the rest at the same resourceVersion', async () => {
    seed();

    const first = await h.custom.listClusterCustomObject({ ...APPS, limit: 2 });
    h.server.store.create(application('d', 'team-b'));
    const second = await h.custom.listClusterCustomObject({ ...APPS, limit: 2, _continue: first.metadata.continue });

    expect(first.items).toHaveLength(2);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect([...names(first), ...names(second)].sort()).toStrictEqual(['a', 'b', 'c', 'd']);
    expect(second.metadata.continue).toBeUndefined();
  });
});

describe('watch', () => {
  test('GIVEN a list resourceVersion WHEN watching from it THEN later ADDED, MODIFIED and DELETED events arrive in order with their resourceVersions', async () => {
    seed();
    const list = await h.custom.listClusterCustomObject({ ...APPS });
    const w = await openWatch(APPS_PATH, { resourceVersion: list.metadata.resourceVersion });

    h.server.store.create(application('d', 'team-b'));
    await h.custom.patchNamespacedCustomObject(
      { ...APPS, namespace: 'team-a', name: 'a', body: { spec: { project: 'p' } } },
      merge,
    );
    await h.custom.deleteNamespacedCustomObject({ ...APPS, namespace: 'team-a', name: 'b' });
    await waitFor('three events', () => w.seen.length >= 3);
    w.stop();

    expect(w.seen.map((e) => [e.type, e.name])).toStrictEqual([
      ['ADDED', 'd'],
      ['MODIFIED', 'a'],
      ['DELETED', 'b'],
    ]);
    const rvs = w.seen.map((e) => Number(e.rv));
    expect(rvs[0]).toBeGreaterThan(Number(list.metadata.resourceVersion));
    expect(rvs[1]).toBeGreaterThan(rvs[0]);
    expect(rvs[2]).toBeGreaterThan(rvs[1]);
  });

  test('GIVEN events already happened WHEN a watch resumes from an older resourceVersion THEN the missed events are replayed', async () => {
    const start = h.server.store.resourceVersion;
    h.server.store.create(application('a', 'team-a'));
    h.server.store.create(application('b', 'team-a'));

    const w = await openWatch(APPS_PATH, { resourceVersion: start });
    await waitFor('two replayed events', () => w.seen.length >= 2);
    w.stop();

    expect(w.seen.map((e) => [e.type, e.name])).toStrictEqual([
      ['ADDED', 'a'],
      ['ADDED', 'b'],
    ]);
  });

  test('GIVEN no resourceVersion WHEN watching THEN existing objects arrive first as synthetic ADDED events', async () => {
    seed();

    const w = await openWatch('/apis/argoproj.io/v1alpha1/namespaces/team-a/applications', {});
    await waitFor('two ADDED events', () => w.seen.length >= 2);
    w.stop();

    expect(w.seen.map((e) => [e.type, e.name]).sort()).toStrictEqual([
      ['ADDED', 'a'],
      ['ADDED', 'b'],
    ]);
  });

  test('GIVEN a label-selected watch WHEN an object gains and loses the label THEN it is seen as ADDED then DELETED', async () => {
    h.server.store.create(application('a', 'team-a'));
    const w = await openWatch(APPS_PATH, {
      resourceVersion: h.server.store.resourceVersion,
      labelSelector: 'pull=true',
    });

    h.server.store.patch('applications', 'team-a', 'a', 'merge', { metadata: { labels: { pull: 'true' } } });
    h.server.store.patch('applications', 'team-a', 'a', 'merge', { spec: { project: 'x' } });
    h.server.store.patch('applications', 'team-a', 'a', 'merge', { metadata: { labels: { pull: null } } });
    await waitFor('three events', () => w.seen.length >= 3);
    w.stop();

    expect(w.seen.map((e) => e.type)).toStrictEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  test('fails when resuming from an expired resourceVersion: an ERROR event with a 410 Status, then the stream ends', async () => {
    h.server.store.create(application('a', 'team-a'));
    const old = h.server.store.resourceVersion;
    h.server.expireWatches();

    const w = await openWatch(APPS_PATH, { resourceVersion: old });
    await waitFor('the stream to end', () => w.state.ended);

    expect(w.seen).toStrictEqual([{ type: 'ERROR', name: undefined, rv: undefined, code: 410 }]);
  });

  test('GIVEN a small event history WHEN a watcher falls further behind than it THEN its resume gets 410 Gone', async () => {
    await h.server.close();
    h = await harness({ historyLimit: 2 });
    h.server.store.create(application('first', 'team-a'));
    const old = h.server.store.resourceVersion;
    for (const n of ['a', 'b', 'c']) h.server.store.create(application(n, 'team-a'));

    const w = await openWatch(APPS_PATH, { resourceVersion: old });
    await waitFor('the stream to end', () => w.state.ended);

    expect(w.seen.map((e) => [e.type, e.code])).toStrictEqual([['ERROR', 410]]);
  });

  test('GIVEN timeoutSeconds WHEN no event arrives THEN the server ends the watch', async () => {
    const w = await openWatch(APPS_PATH, { resourceVersion: h.server.store.resourceVersion, timeoutSeconds: '1' });

    await waitFor('the watch to end', () => w.state.ended);

    expect(w.state.error).toBeNull();
    expect(h.server.watchCount()).toBe(0);
  });

  test('GIVEN allowWatchBookmarks WHEN the server sends bookmarks THEN only that watch gets a BOOKMARK with the current resourceVersion', async () => {
    const withBookmarks = await openWatch(APPS_PATH, {
      resourceVersion: h.server.store.resourceVersion,
      allowWatchBookmarks: 'true',
    });
    const without = await openWatch(APPS_PATH, { resourceVersion: h.server.store.resourceVersion });
    h.server.store.create(application('a', 'team-a'));
    await waitFor('both watches to see the add', () => withBookmarks.seen.length >= 1 && without.seen.length >= 1);

    h.server.sendBookmarks();
    await waitFor('a bookmark', () => withBookmarks.seen.length >= 2);
    withBookmarks.stop();
    without.stop();

    expect(withBookmarks.seen[1]).toStrictEqual({
      type: 'BOOKMARK',
      name: undefined,
      rv: h.server.store.resourceVersion,
      code: undefined,
    });
    expect(without.seen.map((e) => e.type)).toStrictEqual(['ADDED']);
  });

  test('GIVEN a client-node informer WHEN its watch expires mid-stream THEN it relists and ends with the exact current set', async () => {
    seed();
    const informer = makeInformer(h.kc, APPS_PATH, () => h.custom.listClusterCustomObject({ ...APPS }) as never);
    const cached = new Map<string, KubernetesObject>();
    const key = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;
    informer.on('add', (o) => cached.set(key(o), o));
    informer.on('update', (o) => cached.set(key(o), o));
    informer.on('delete', (o) => cached.delete(key(o)));
    await informer.start();
    await waitFor('the informer to watch', () => h.server.watchCount() === 1);
    const listsBefore = h.server.requestCount({ verb: 'list', resource: 'applications' });

    h.server.expireWatches();
    h.server.store.delete('applications', 'team-a', 'b');
    h.server.store.create(application('d', 'team-b'));
    await waitFor(
      'the informer to relist and watch again',
      () =>
        h.server.requestCount({ verb: 'list', resource: 'applications' }) > listsBefore && h.server.watchCount() === 1,
    );
    h.server.store.patch('applications', 'team-a', 'a', 'merge', { spec: { project: 'after' } });
    await waitFor(
      'the cache to follow',
      () => (cached.get('team-a/a') as { spec?: { project?: string } } | undefined)?.spec?.project === 'after',
    );
    await informer.stop();

    expect([...cached.keys()].sort()).toStrictEqual(['team-a/a', 'team-b/c', 'team-b/d']);
  });
});
