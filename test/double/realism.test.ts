/**
 * The realistic mode of the double and its fault helpers, through client-node: asynchronous watch
 * delivery (in order per stream, interleaved across streams), disconnects, 410 on resume, 429 with
 * Retry-After, hung requests (injected and random), client partitions, an outage on the same port, and
 * determinism per seed.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import { Watch } from '@kubernetes/client-node';
import type { RealismOptions } from './fake-apiserver.js';
import { waitFor } from '../support/wait.js';
import { APPS, application, failure, harness, manifestWork, type Harness } from './helpers.js';

const open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.server.close()));
});

/** A realistic double where only the faults a test names happen. */
async function realistic(realism: Partial<RealismOptions> & { seed?: number }): Promise<Harness> {
  const h = await harness({
    realism: { seed: 7, goneOnResume: 0, tooManyRequests: 0, hang: 0, watchLifetimeMs: [60_000, 60_000], ...realism },
  });
  open.push(h);
  return h;
}

interface Seen {
  stream: string;
  type: string;
  name?: string;
  rv?: string;
  code?: number;
}

async function watch(h: Harness, path: string, stream: string, into: Seen[], query: Record<string, string> = {}) {
  const state = { ended: false };
  const controller = await new Watch(h.kc).watch(
    path,
    query,
    (type: string, object: { metadata?: { name?: string; resourceVersion?: string }; code?: number }) =>
      into.push({ stream, type, name: object.metadata?.name, rv: object.metadata?.resourceVersion, code: object.code }),
    () => {
      state.ended = true;
    },
  );
  return { state, stop: () => controller.abort() };
}

const APPS_PATH = '/apis/argoproj.io/v1alpha1/applications';
const WORKS_PATH = '/apis/work.open-cluster-management.io/v1/manifestworks';

describe('asynchronous watch delivery', () => {
  test('GIVEN a realistic double WHEN an object is written THEN its event is not delivered with the write, but arrives soon after', async () => {
    const h = await realistic({ maxWatchDelayMs: 30 });
    const seen: Seen[] = [];
    const w = await watch(h, APPS_PATH, 'apps', seen, { resourceVersion: h.server.store.resourceVersion });

    h.server.store.create(application('a'));
    const pendingAtWrite = h.server.pendingWatchEvents();

    await waitFor('the ADDED event', () => seen.length === 1);
    expect(pendingAtWrite).toBe(1);
    expect(h.server.pendingWatchEvents()).toBe(0);
    expect(seen[0]).toMatchObject({ type: 'ADDED', name: 'a' });
    w.stop();
  });

  test('GIVEN two watches of different kinds WHEN writes alternate THEN each stream keeps resourceVersion order while arrival interleaves differently from the writes', async () => {
    const h = await realistic({ seed: 11, maxWatchDelayMs: 25 });
    const seen: Seen[] = [];
    const from = h.server.store.resourceVersion;
    const wa = await watch(h, APPS_PATH, 'apps', seen, { resourceVersion: from });
    const ww = await watch(h, WORKS_PATH, 'works', seen, { resourceVersion: from });
    const written: string[] = [];

    for (let i = 0; i < 20; i++) {
      h.server.store.create(application(`a${i}`));
      written.push('apps');
      h.server.store.create(manifestWork(`w${i}`));
      written.push('works');
    }

    await waitFor('all 40 events', () => seen.length === 40);
    for (const stream of ['apps', 'works']) {
      const rvs = seen.filter((e) => e.stream === stream).map((e) => Number(e.rv));
      expect(rvs).toStrictEqual([...rvs].sort((a, b) => a - b));
    }
    expect(seen.map((e) => e.stream)).not.toStrictEqual(written);
    expect(h.server.injectedFaults().delayedWatchEvents).toBe(40);
    wa.stop();
    ww.stop();
  });

  test('GIVEN the plain double WHEN an object is written THEN its event is written to the stream with the write (the default stays synchronous)', async () => {
    const h = await harness();
    open.push(h);
    const seen: Seen[] = [];
    const w = await watch(h, APPS_PATH, 'apps', seen, { resourceVersion: h.server.store.resourceVersion });
    h.server.store.create(application('a'));
    expect(h.server.pendingWatchEvents()).toBe(0);
    await waitFor('the ADDED event', () => seen.length === 1);
    expect(h.server.injectedFaults().delayedWatchEvents).toBe(0);
    w.stop();
  });
});

describe('watch disconnects and 410 on resume', () => {
  test('GIVEN a watch lifetime WHEN it passes THEN the server ends the stream and counts the disconnect', async () => {
    const h = await realistic({ watchLifetimeMs: [50, 50] });
    const w = await watch(h, APPS_PATH, 'apps', [], { resourceVersion: h.server.store.resourceVersion });

    await waitFor('the stream to end', () => w.state.ended);

    expect(h.server.injectedFaults().watchDisconnects).toBe(1);
    expect(h.server.watchCount()).toBe(0);
  });

  test('fails when a watch resumes from a resourceVersion and the dice say Gone: ERROR with a 410 Expired Status, then the stream ends', async () => {
    const h = await realistic({ goneOnResume: 1 });
    h.server.store.create(application('a'));
    const seen: Seen[] = [];

    const w = await watch(h, APPS_PATH, 'apps', seen, { resourceVersion: h.server.store.resourceVersion });

    await waitFor('the stream to end', () => w.state.ended);
    expect(seen).toStrictEqual([{ stream: 'apps', type: 'ERROR', name: undefined, rv: undefined, code: 410 }]);
    expect(h.server.injectedFaults().goneOnResume).toBe(1);
  });

  test('GIVEN goneOnResume WHEN a watch starts without a resourceVersion (a fresh list+watch) THEN it is never Gone', async () => {
    const h = await realistic({ goneOnResume: 1 });
    h.server.store.create(application('a'));
    const seen: Seen[] = [];
    const w = await watch(h, APPS_PATH, 'apps', seen);
    await waitFor('the synthetic ADDED', () => seen.length === 1);
    expect(seen[0]).toMatchObject({ type: 'ADDED', name: 'a' });
    w.stop();
  });
});

describe('429 Too Many Requests', () => {
  test('fails when the dice say 429: Status TooManyRequests with retryAfterSeconds and a Retry-After header', async () => {
    const h = await realistic({ tooManyRequests: 1, retryAfterSeconds: 3 });
    const response = await fetch(`${h.server.url}/apis/argoproj.io/v1alpha1/namespaces/argocd/applications`);

    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      code: 429,
      details: { retryAfterSeconds: 3 },
    });
    expect(h.server.injectedFaults().tooManyRequests).toBe(1);
  });

  test('GIVEN a write answered 429 WHEN looked at afterwards THEN nothing was written', async () => {
    const h = await realistic({ tooManyRequests: 1 });
    const { code } = await failure(
      h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('a') }),
    );
    expect(code).toBe(429);
    expect(h.server.store.list('applications')).toStrictEqual([]);
  });
});

describe('hung requests', () => {
  test('GIVEN hangNext for a verb and resource WHEN such a request comes THEN it is held unanswered until released, then answered', async () => {
    const h = await harness();
    open.push(h);
    h.server.hangNext({ verb: 'create', resource: 'applications' });
    let settled = false;
    const call = h.custom
      .createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('a') })
      .finally(() => (settled = true));

    await waitFor(
      'the request to be held',
      () => h.server.heldCount({ verb: 'create', resource: 'applications' }) === 1,
    );
    // Other requests are not affected.
    await h.custom.listNamespacedCustomObject({ ...APPS, namespace: 'argocd' });
    expect(settled).toBe(false);
    expect(h.server.store.list('applications')).toStrictEqual([]);

    h.server.releaseHung();

    await call;
    expect(h.server.store.find('applications', 'argocd', 'a')).toBeDefined();
  });

  test('GIVEN a held request WHEN its client gives up (aborts) THEN releasing it applies nothing', async () => {
    const h = await harness();
    open.push(h);
    h.server.hangNext({ verb: 'create' });
    const abort = new AbortController();
    const call = fetch(`${h.server.url}/apis/argoproj.io/v1alpha1/namespaces/argocd/applications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(application('a')),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    await waitFor('the request to be held', () => h.server.heldCount() === 1);

    abort.abort();
    await call;
    await waitFor('the server to see the client leave', () => h.server.heldCount() === 0);
    h.server.releaseHung();

    expect(h.server.store.list('applications')).toStrictEqual([]);
  });

  test('GIVEN a realistic double with random hangs WHEN requests come THEN they are held for a while and then answered', async () => {
    const h = await realistic({ hang: 1, hangMs: [20, 40] });

    await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('a') });

    expect(h.server.injectedFaults().randomHangs).toBe(1);
    expect(h.server.store.find('applications', 'argocd', 'a')).toBeDefined();
  });
});

describe('partitions and outages', () => {
  test('GIVEN a client partitioned with refuse WHEN it sends a request THEN the connection is reset, other clients are served, and after heal it is served again', async () => {
    const h = await harness();
    open.push(h);
    const urlA = `${h.server.url}/apis/argoproj.io/v1alpha1/namespaces/argocd/applications`;
    const as = (client: string) => ({ headers: { authorization: `Bearer fake-token.${client}` } });
    h.server.partition('replica-a', 'refuse');

    const refused = await fetch(urlA, as('replica-a')).then(
      () => 'answered',
      () => 'reset',
    );
    const other = await fetch(urlA, as('replica-b'));

    expect(refused).toBe('reset');
    expect(other.status).toBe(200);
    expect(h.server.injectedFaults().refusedRequests).toBe(1);
    h.server.heal('replica-a');
    expect((await fetch(urlA, as('replica-a'))).status).toBe(200);
    expect(h.server.requestCount({ client: 'replica-a' })).toBe(1);
    expect(h.server.requestCount({ client: 'replica-b' })).toBe(1);
  });

  test('GIVEN a client partitioned with hang WHEN it writes THEN the write is held, and heal applies it while the client still waits', async () => {
    const h = await harness();
    open.push(h);
    const custom = h.server
      .kubeConfig({ client: 'replica-a' })
      .makeApiClient((await import('@kubernetes/client-node')).CustomObjectsApi);
    h.server.partition('replica-a', 'hang');

    const call = custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('a') });
    await waitFor('the write to be held', () => h.server.heldCount({ client: 'replica-a' }) === 1);
    expect(h.server.store.list('applications')).toStrictEqual([]);

    h.server.heal('replica-a');

    await call;
    expect(h.server.writeCount('applications', 'replica-a')).toBe(1);
  });

  test('GIVEN the server goes down WHEN a client connects THEN it is refused; after comeBack the same URL serves the same objects', async () => {
    const h = await harness();
    open.push(h);
    h.server.store.create(application('kept'));
    const url = `${h.server.url}/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/kept`;

    await h.server.goDown();
    const down = await fetch(url).then(
      () => 'answered',
      () => 'refused',
    );
    await h.server.comeBack();
    const back = await fetch(url);

    expect(down).toBe('refused');
    expect(back.status).toBe(200);
    expect(((await back.json()) as { metadata: { name: string } }).metadata.name).toBe('kept');
  });
});

describe('determinism', () => {
  async function pattern(seed: number): Promise<number[]> {
    const h = await realistic({ seed, tooManyRequests: 0.3 });
    const codes: number[] = [];
    for (let i = 0; i < 30; i++)
      codes.push((await fetch(`${h.server.url}/apis/argoproj.io/v1alpha1/namespaces/argocd/applications`)).status);
    return codes;
  }

  test('GIVEN the same seed WHEN the same requests are made THEN the same ones are faulted; another seed faults others', async () => {
    const first = await pattern(42);
    const again = await pattern(42);
    const other = await pattern(43);

    expect(again).toStrictEqual(first);
    expect(first).toContain(429);
    expect(other).not.toStrictEqual(first);
  });
});

describe('watches that end at once, and the request log', () => {
  test('GIVEN endWatchesAtOnce WHEN a watch opens THEN it ends at once with no event; switched off, watches stream again', async () => {
    const h = await harness();
    open.push(h);
    h.server.store.create(application('a'));
    h.server.endWatchesAtOnce(true);
    const seen: Seen[] = [];

    const first = await watch(h, APPS_PATH, 'apps', seen);
    await waitFor('the stream to end', () => first.state.ended);
    expect(seen).toStrictEqual([]);

    h.server.endWatchesAtOnce(false);
    const second = await watch(h, APPS_PATH, 'apps', seen);
    await waitFor('the synthetic ADDED', () => seen.length === 1);
    second.stop();
  });

  test('GIVEN requests of two clients, one answered 429 WHEN the log is read THEN it lists verb, resource, client and code in order', async () => {
    const h = await harness();
    open.push(h);
    h.server.failNext({ verb: 'list', resource: 'applications', code: 429 });
    const as = (client: string) => ({ headers: { authorization: `Bearer fake-token.${client}` } });
    const url = `${h.server.url}/apis/argoproj.io/v1alpha1/namespaces/argocd/applications`;

    await fetch(url, as('one'));
    await fetch(url, as('two'));

    const log = h.server.requestLog({ resource: 'applications' });
    expect(log.map(({ verb, resource, client, code }) => ({ verb, resource, client, code }))).toStrictEqual([
      { verb: 'list', resource: 'applications.argoproj.io', client: 'one', code: 429 },
      { verb: 'list', resource: 'applications.argoproj.io', client: 'two', code: 200 },
    ]);
    expect(log[1].at).toBeGreaterThanOrEqual(log[0].at);
    expect(h.server.requestLog({ client: 'two' })).toHaveLength(1);
  });
});
