/**
 * The simulated applicationset-controller (progressive-sync-sim.ts) against the in-process API double, with
 * the test playing the Argo CD that writes each generated Application's status. It checks that the
 * simulator follows the released semantics the real-server suite relies on (../shared/upstream-audit.md),
 * one pass at a time on the test's clock.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { startFakeApiServer, type FakeApiServer } from '../double/fake-apiserver.js';
import { fakeCluster, type TestCluster } from './cluster.js';
import {
  mergePatchOf,
  ProgressiveSyncSim,
  releaseSemantics,
  shouldRequeueForApplication,
} from './progressive-sync-sim.js';
import { waitFor } from './wait.js';

const NS = 'argocd';
const APPSET = 'web';
const CLUSTER_LABEL = 'pullfleet.io/rollout-cluster';
const ARGO = 'argoproj.io/v1alpha1';

function applicationSet(targetRevision: string) {
  return {
    apiVersion: ARGO,
    kind: 'ApplicationSet',
    metadata: { name: APPSET, namespace: NS },
    spec: {
      generators: [{ list: { elements: [] } }],
      template: {
        metadata: { name: `{{name}}-${APPSET}`, labels: { [CLUSTER_LABEL]: '{{name}}' } },
        spec: {
          project: 'default',
          source: {
            repoURL: 'https://git.example.com/apps.git',
            path: APPSET,
            targetRevision,
          },
          destination: { server: 'https://kubernetes.default.svc', namespace: APPSET },
          syncPolicy: { automated: { prune: true } },
        },
      },
      strategy: {
        type: 'RollingSync',
        rollingSync: {
          steps: [
            { matchExpressions: [{ key: CLUSTER_LABEL, operator: 'In', values: ['a'] }] },
            { matchExpressions: [{ key: CLUSTER_LABEL, operator: 'NotIn', values: ['a'] }] },
          ],
        },
      },
    },
  };
}

interface LiveApp {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  spec: { syncPolicy?: { automated?: { enabled?: boolean; prune?: boolean } } };
  operation?: { sync?: Record<string, unknown>; initiatedBy?: { username?: string } };
}

describe('the simulated applicationset-controller (released Argo CD semantics)', () => {
  let server: FakeApiServer;
  let cluster: TestCluster;
  let sim: ProgressiveSyncSim | undefined;
  let now = Date.parse('2026-11-28T03:00:00Z');
  const clock = () => now;
  const tick = () => {
    now += 1000;
  };

  beforeEach(async () => {
    server = await startFakeApiServer({});
    cluster = fakeCluster(server);
    await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  afterEach(async () => {
    sim?.stop();
    sim = undefined;
    await server.close();
  });

  const ref = (name: string) => ({ apiVersion: ARGO, kind: 'Application', namespace: NS, name });
  const app = (name: string) => cluster.get<LiveApp>(ref(name));

  async function start(release: string) {
    await cluster.create(applicationSet('v1'));
    sim = new ProgressiveSyncSim(cluster, cluster.kubeConfig('appset-controller'), {
      namespace: NS,
      name: APPSET,
      clusters: ['a', 'b'],
      release,
      clock,
    });
    await sim.start();
    return sim;
  }

  /** Waits until the simulator's watch delivered the current version of every object (so `queued` is final). */
  async function seen(s: ProgressiveSyncSim) {
    await waitFor('the simulator to see every current version', async () => {
      const appSet = await cluster.get<{ metadata: { resourceVersion?: string } }>({
        apiVersion: ARGO,
        kind: 'ApplicationSet',
        namespace: NS,
        name: APPSET,
      });
      if (s.seenVersion() !== appSet?.metadata.resourceVersion) return false;
      const apps = await cluster.list<LiveApp>(ARGO, 'Application', { namespace: NS });
      return apps.every((a) => s.seenVersion(a.metadata.name) === a.metadata.resourceVersion);
    });
  }

  /**
   * The Argo CD of `name` reports (the status is written on the object: Application has no status
   * subresource); one that reports an operation state took the operation off the Application, as Argo CD does.
   */
  async function report(name: string, status: Record<string, unknown>) {
    await cluster.mergePatch(ref(name), { status, ...('operationState' in status ? { operation: null } : {}) });
  }

  /** The Argo CD of `name` reports `status`; once the simulator saw it, a second on, it runs a pass. */
  async function reportThenPass(s: ProgressiveSyncSim, name: string, status: Record<string, unknown>) {
    await report(name, status);
    await seen(s);
    tick();
    await s.pass();
  }

  const synced = (revision: string, startedAt?: string) => ({
    sync: { status: 'Synced', revision },
    health: { status: 'Healthy' },
    reconciledAt: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(startedAt ? { operationState: { operation: { sync: {} }, phase: 'Succeeded', startedAt } } : {}),
  });
  const outOfSync = (revision: string) => ({
    sync: { status: 'OutOfSync', revision },
    health: { status: 'Healthy' },
    reconciledAt: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
  const at = (offsetSeconds: number) => new Date(now + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

  /** Plays a whole rollout of `revision` in step order: each app compares, is synced when asked, and reports. */
  async function rollOut(s: ProgressiveSyncSim, revision: string) {
    for (const name of ['a-web', 'b-web']) {
      tick();
      await reportThenPass(s, name, outOfSync(revision));
      expect((await app(name))?.operation).toBeDefined();
      tick();
      await reportThenPass(s, name, synced(revision, at(0)));
      tick();
      await s.pass();
      expect(s.statusOf(name)?.status).toBe('Healthy');
    }
  }

  test('maps releases to how a spec change is seen, and refuses releases it does not model', () => {
    const table = Object.fromEntries(
      ['3.3.0', '3.3.6', '3.3.7', '3.3.14', '3.4.0', '3.4.6', '3.4.7', '3.5.0', '3.5.1'].map((r) => [
        r,
        releaseSemantics(r).specComparison,
      ]),
    );
    expect(table).toStrictEqual({
      '3.3.0': 'none',
      '3.3.6': 'none',
      '3.3.7': 'raw',
      '3.3.14': 'raw',
      '3.4.0': 'raw',
      '3.4.6': 'raw',
      '3.4.7': 'normalized',
      '3.5.0': 'raw',
      '3.5.1': 'normalized',
    });
    expect(
      ['2.14', '2.14.21', '3.0', '3.0.23', '3.1.16', '3.2', '3.2.12', '3.3.0'].map((r) => releaseSemantics(r).machine),
    ).toStrictEqual(['2.14', '2.14', '3.0', '3.0', '3.0', '3.0', '3.0', '3.3']);
    expect(() => releaseSemantics('2.13.0')).toThrow(/not modelled: give 2\.14, 3\.0 to 3\.2, or 3\.3\.0 to 3\.5\.1/);
    expect(() => releaseSemantics('3.4')).toThrow(/MAJOR\.MINOR\.PATCH/);
    expect(() => releaseSemantics('3.6.0')).toThrow(/up to 3\.5\.1/);
    expect(() => releaseSemantics('latest')).toThrow(/MAJOR\.MINOR\.PATCH/);
  });

  test('computes merge patches as the controller sends them: removed keys null, arrays replaced', () => {
    expect(
      mergePatchOf(
        { metadata: { annotations: { a: '1', b: '2' }, finalizers: ['x'] }, spec: { n: 1 } },
        { metadata: { annotations: { a: '1', c: '3' }, finalizers: ['x', 'y'] }, spec: { n: 1 } },
      ),
    ).toStrictEqual({ metadata: { annotations: { b: null, c: '3' }, finalizers: ['x', 'y'] } });
    expect(mergePatchOf({ spec: { n: 1 } }, { spec: { n: 1 } })).toBeUndefined();
  });

  test('a reconciledAt change alone queues no pass; a sync status change does', () => {
    const base = { metadata: { name: 'a' }, spec: {}, status: { sync: { status: 'Synced' }, reconciledAt: at(0) } };
    expect(shouldRequeueForApplication(base, { ...base, status: { ...base.status, reconciledAt: at(5) } })).toBe(false);
    expect(
      shouldRequeueForApplication(base, { ...base, status: { ...base.status, sync: { status: 'OutOfSync' } } }),
    ).toBe(true);
  });

  test('3.5.1: steps sync in order; Pending moves on only on a startedAt in a later second; no refresh annotation, no pinned revision', async () => {
    // GIVEN the ApplicationSet on 3.5.1, its Applications created by a first pass
    const s = await start('3.5.1');
    await s.pass();
    const created = await app('a-web');
    expect(created?.spec.syncPolicy?.automated).toStrictEqual({ prune: true, enabled: false });
    expect(created?.operation).toBeUndefined();

    // WHEN both Argo CDs compare v1 (OutOfSync, a new revision) and a pass runs
    tick();
    await report('a-web', outOfSync('r1'));
    await report('b-web', outOfSync('r1'));
    await seen(s);
    expect(s.queued.length).toBeGreaterThan(0);
    tick();
    await s.pass();

    // THEN only the first step is Pending and has an operation, with no revision pinned
    expect([s.statusOf('a-web')?.status, s.statusOf('b-web')?.status]).toStrictEqual(['Pending', 'Waiting']);
    const operation = (await app('a-web'))?.operation;
    expect(operation?.initiatedBy?.username).toBe('applicationset-controller');
    expect(operation?.sync).toStrictEqual({ prune: true });
    expect((await app('b-web'))?.operation).toBeUndefined();

    // WHEN a's sync is reported with a startedAt in the second of its Pending transition
    const pendingSince = s.statusOf('a-web')!.lastTransitionTime;
    tick();
    await reportThenPass(s, 'a-web', synced('r1', pendingSince));
    // THEN it stays Pending (startedAt must be strictly later)
    expect(s.statusOf('a-web')?.status).toBe('Pending');

    // WHEN the sync is reported a second later
    await report('a-web', synced('r1', at(0)));
    await seen(s);
    tick();
    await s.pass();
    tick();
    await s.pass();
    // THEN a is Healthy, and only then b goes Pending
    expect([s.statusOf('a-web')?.status, s.statusOf('b-web')?.status]).toStrictEqual(['Healthy', 'Pending']);

    // AND nothing ever carried the refresh annotation
    for (const name of ['a-web', 'b-web'])
      expect((await app(name))?.metadata.annotations?.['argocd.argoproj.io/refresh']).toBeUndefined();
  });

  test.each(['2.14', '3.0', '3.2'])(
    '%s: automated sync removed; the operation only on an OutOfSync Pending app of a step that may sync',
    async (release) => {
      const s = await start(release);
      await s.pass();
      expect((await app('a-web'))?.spec.syncPolicy?.automated).toBeUndefined();
      tick();
      await report('a-web', outOfSync('r1'));
      await report('b-web', outOfSync('r1'));
      await seen(s);
      tick();
      await s.pass();
      expect([s.statusOf('a-web')?.status, s.statusOf('b-web')?.status]).toStrictEqual(['Pending', 'Waiting']);
      expect((await app('a-web'))?.operation?.sync).toStrictEqual({ prune: true });
      expect((await app('b-web'))?.operation).toBeUndefined();
    },
  );

  test('2.14: Pending moves on after a Succeeded sync only when syncResult.revision equals the target revisions; without a syncResult the pass fails', async () => {
    const s = await start('2.14');
    await s.pass();
    tick();
    await reportThenPass(s, 'a-web', outOfSync('r1'));
    expect(s.statusOf('a-web')?.status).toBe('Pending');
    // A Succeeded sync of another revision does not count
    const succeeded = (revision?: string) => ({
      ...synced('r1', at(0)),
      operationState: {
        operation: { sync: {} },
        phase: 'Succeeded',
        startedAt: at(0),
        syncResult: revision !== undefined ? { revision } : null,
      },
    });
    tick();
    await reportThenPass(s, 'a-web', succeeded('r0'));
    expect(s.statusOf('a-web')?.status).toBe('Pending');
    // No syncResult at all: upstream dereferences a nil pointer
    tick();
    await report('a-web', succeeded());
    await seen(s);
    await expect(s.pass()).rejects.toThrow(/nil pointer/);
    // The target revision: Progressing, then Healthy in the same pass
    tick();
    await reportThenPass(s, 'a-web', succeeded('r1'));
    expect(s.statusOf('a-web')?.status).toBe('Healthy');
  });

  test('3.0: Pending moves on after a Succeeded sync while not OutOfSync, whatever the revision', async () => {
    const s = await start('3.0');
    await s.pass();
    tick();
    await reportThenPass(s, 'a-web', outOfSync('r1'));
    expect(s.statusOf('a-web')?.status).toBe('Pending');
    tick();
    await reportThenPass(s, 'a-web', {
      ...outOfSync('r1'),
      operationState: { operation: { sync: {} }, phase: 'Succeeded', startedAt: at(0) },
    });
    expect(s.statusOf('a-web')?.status).toBe('Pending');
    tick();
    await reportThenPass(s, 'a-web', synced('r1', at(0)));
    expect(s.statusOf('a-web')?.status).toBe('Healthy');
  });

  test('3.5.1: a later step whose new revision is compared first is synced first (argo-cd #29347: no release up to 3.5.1 waits)', async () => {
    // GIVEN v1 rolled out on 3.5.1
    const s = await start('3.5.1');
    await s.pass();
    await rollOut(s, 'r1');

    // WHEN the template moves to v2: the spec change is seen while both are still Synced, so both count as
    // Healthy at once; then b's Argo CD compares v2 before a's does
    tick();
    await cluster.mergePatch(
      { apiVersion: ARGO, kind: 'ApplicationSet', namespace: NS, name: APPSET },
      { spec: { template: { spec: { source: { targetRevision: 'v2' } } } } },
    );
    await seen(s);
    tick();
    await s.pass();
    expect([s.statusOf('a-web')?.status, s.statusOf('b-web')?.status]).toStrictEqual(['Healthy', 'Healthy']);
    tick();
    await reportThenPass(s, 'b-web', outOfSync('r2'));

    // THEN b, of the second step, is asked to sync while a has not even compared v2
    expect(s.statusOf('b-web')?.status).toBe('Pending');
    expect((await app('b-web'))?.operation).toBeDefined();
    expect((await app('a-web'))?.operation).toBeUndefined();
  });

  test('3.3.0: a spec-only change never makes an Application Waiting, so it is never synced (audit W2)', async () => {
    // GIVEN v1 rolled out on 3.3.0
    const s = await start('3.3.0');
    await s.pass();
    await rollOut(s, 'r1');
    const transitions = s.transitions.length;

    // WHEN only the values change (the same revision), and the Argo CDs report OutOfSync at that revision
    tick();
    await cluster.mergePatch(
      { apiVersion: ARGO, kind: 'ApplicationSet', namespace: NS, name: APPSET },
      { spec: { template: { spec: { source: { helm: { releaseName: 'web-3' } } } } } },
    );
    await seen(s);
    tick();
    await s.pass();
    for (const name of ['a-web', 'b-web']) await report(name, outOfSync('r1'));
    await seen(s);
    tick();
    await s.pass();

    // THEN nothing moved: both stay Healthy and no operation is written
    expect(s.transitions.length).toBe(transitions);
    expect([(await app('a-web'))?.operation, (await app('b-web'))?.operation]).toStrictEqual([undefined, undefined]);
  });

  test('3.4.0: with an automated template every pass sees a spec change and queues another (argo-cd #27577)', async () => {
    // GIVEN v1 rolled out on 3.4.0 (raw spec comparison)
    const s = await start('3.4.0');
    await s.pass();
    await rollOut(s, 'r1');

    // WHEN passes run with nothing else changing
    const before = s.transitions.length;
    for (let i = 0; i < 3; i++) {
      tick();
      await s.pass();
      // THEN each one changes the status again, which queues the next
      expect(s.queued).toContain('status.applicationStatus changed');
    }
    expect(s.transitions.length - before).toBe(3 * 2 * 2);
  });
});
