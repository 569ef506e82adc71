/**
 * Regression tests of the Application reconciler: operations forwarded until taken, retargets that never lose
 * delivery, removed fields reaching works, no leaks, no churn, conditions for what retrying cannot fix,
 * and events that only wake the apps they affect.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { SPEC_HASH_ANNOTATION } from '../../../src/model/core/keys.js';
import { createApplicationReconciler, LAGGING_REQUEUE_MS } from '../../../src/controller/reconcilers/application.js';
import type { Reconciler, ReconcileResult } from '../../../src/controller/runtime/reconciler.js';
import {
  APPLICATION_SET_LABEL,
  HOSTING_APPSET_ANNOTATION,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
} from '../../../src/model/core/keys.js';
import { FeedbackScrape, type Application, type FieldValue, type ManifestWork } from '../../../src/model/core/types.js';
import { FORWARDED_OPERATION_ANNOTATION } from '../../../src/model/reconcile/propagation.js';
import {
  DELIVERY_ERROR_CONDITION,
  FEEDBACK_STALE_CONDITION,
  INVALID_FEEDBACK_CONDITION,
  OPERATION_PENDING_CONDITION,
  SKIP_RECONCILE_CONDITION,
} from '../../../src/model/reconcile/status.js';
import { pullApplication, World } from '../../support/world.js';
import { applicationFeedback, workStatus } from '../../support/work-status.js';
import { RESOURCES_DIGEST_FIELD } from '../../../src/model/reconcile/resource-summary.js';

const NS = 'argocd';
const KEY = `${NS}/guestbook`;
const WORK1 = 'spoke1/argocd-guestbook';
const WORK2 = 'spoke2/argocd-guestbook';

function app(
  overrides: { cluster?: string | null; name?: string; annotations?: Record<string, string>; owner?: string } = {},
): Application {
  const { owner, ...rest } = overrides;
  return pullApplication({
    namespace: NS,
    workload: 'guestbook',
    ...rest,
    ...(owner
      ? {
          metadata: {
            ownerReferences: [
              { apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: owner, uid: 'appset-uid' },
            ],
          },
        }
      : {}),
  });
}

function cluster(world: World, name: string, set = 'prod', extra: Record<string, unknown> = {}): void {
  world.addCluster(name, { clusterSet: set, extra });
}

const S = (string: string): FieldValue => ({ type: 'String', string });

/** Writes feedback into a work as the OCM work agent would. */
function report(
  world: World,
  workKey: string,
  values: Record<string, FieldValue>,
  applied: 'True' | 'False' = 'True',
): void {
  const work = world.get<ManifestWork>('ManifestWork', workKey)!;
  // The spoke runs what the work delivered: its spec hash comes back unless the test says otherwise.
  values = { ...deliveredSpecHash(work), ...values };
  work.status = workStatus([applicationFeedback({ name: 'guestbook', namespace: NS, ordinal: 0, values })], {
    type: 'Applied',
    status: applied,
    reason: 'x',
    message: applied === 'True' ? 'applied' : 'refused',
  });
  world.put('ManifestWork', work);
}

const hubApp = (world: World) => world.get<Application>('Application', KEY)!;
const condition = (world: World, type: string) => hubApp(world).status?.conditions?.find((c) => c.type === type);
const payload = (world: World, key = WORK1) =>
  world.get<ManifestWork>('ManifestWork', key)!.spec.workload.manifests.at(-1)!;

function retarget(world: World, to: string): void {
  const current = hubApp(world);
  current.metadata.annotations![MANAGED_CLUSTER_ANNOTATION] = to;
  world.put('Application', current);
}

describe('reconcile hardening', () => {
  let world: World;
  let reconciler: Reconciler;

  beforeEach(() => {
    world = World.hub({ clusters: ['spoke1', 'spoke2'], namespace: NS });
    reconciler = world.reconciler(createApplicationReconciler);
  });

  describe('a forwarded operation survives until the spoke takes it', () => {
    async function forward(): Promise<void> {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      report(world, WORK1, {
        healthStatus: S('Healthy'),
        operationStatePhase: S('Succeeded'),
        operationStateStartedAt: S('2026-03-01T10:00:00Z'),
      });
      await world.settle(reconciler, KEY);
      const current = hubApp(world);
      current.operation = { sync: { revision: 'v2' } };
      world.put('Application', current);
      await world.settle(reconciler, KEY);
    }

    test('GIVEN a forwarded operation WHEN the spoke has not started it THEN it stays in the payload over later reconciles and a controller restart', async () => {
      await forward();
      // The work agent merged updates / was offline: the spoke still reports the old operation.
      report(world, WORK1, {
        healthStatus: S('Healthy'),
        operationStatePhase: S('Succeeded'),
        operationStateStartedAt: S('2026-03-01T10:00:00Z'),
      });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v2' } }));
      // A new controller process (nothing in memory) keeps forwarding it.
      const restarted = world.reconciler(createApplicationReconciler);
      await world.settle(restarted, KEY);
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v2' } }));
      expect(hubApp(world).operation).toStrictEqual({ sync: { revision: 'v2' } });
      expect(JSON.parse(hubApp(world).metadata.annotations![FORWARDED_OPERATION_ANNOTATION])).toMatchObject({
        at: '2026-03-01T12:00:00Z',
        after: '2026-03-01T10:00:00Z',
      });
      // Not started on the spoke: the hub keeps the operation state the spoke reported, as it was.
      expect(hubApp(world).status!.operationState).toMatchObject({
        phase: 'Succeeded',
        startedAt: '2026-03-01T10:00:00Z',
      });
    });

    test('GIVEN a forwarded operation WHEN the spoke reports a new startedAt THEN it leaves the hub app, and the payload once the phase ends', async () => {
      await forward();
      report(world, WORK1, {
        healthStatus: S('Progressing'),
        operationStatePhase: S('Running'),
        operationStateStartedAt: S('2026-03-01T12:00:30Z'),
      });
      await world.settle(reconciler, KEY);
      expect(hubApp(world).operation).toBeUndefined();
      expect(hubApp(world).metadata.annotations?.[FORWARDED_OPERATION_ANNOTATION]).toBeUndefined();
      // Running: Argo CD goes on with the sync only while `.operation` is on the spoke Application.
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v2' } }));
      expect(hubApp(world).status!.operationState).toMatchObject({
        phase: 'Running',
        startedAt: '2026-03-01T12:00:30Z',
      });
      report(world, WORK1, {
        healthStatus: S('Healthy'),
        operationStatePhase: S('Succeeded'),
        operationStateStartedAt: S('2026-03-01T12:00:30Z'),
      });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toBeUndefined();
    });

    test('GIVEN an operation forwarded before any feedback WHEN the spoke first reports an older operation THEN it is not mistaken for this one', async () => {
      world.put('Application', { ...app(), operation: { sync: { revision: 'v2' } } });
      await world.settle(reconciler, KEY);
      expect(JSON.parse(hubApp(world).metadata.annotations![FORWARDED_OPERATION_ANNOTATION])).toMatchObject({
        after: '',
      });
      report(world, WORK1, { operationStatePhase: S('Succeeded'), operationStateStartedAt: S('2026-03-01T10:00:00Z') });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v2' } }));
      report(world, WORK1, { operationStatePhase: S('Running'), operationStateStartedAt: S('2026-03-01T11:59:30Z') });
      await world.settle(reconciler, KEY);
      expect(hubApp(world).operation).toBeUndefined();
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v2' } }));
      report(world, WORK1, { operationStatePhase: S('Failed'), operationStateStartedAt: S('2026-03-01T11:59:30Z') });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toBeUndefined();
    });

    test('GIVEN the spoke runs a forwarded operation WHEN a new one lands on the hub app THEN it waits for the phase to end, then reaches the spoke', async () => {
      await forward();
      report(world, WORK1, { operationStatePhase: S('Running'), operationStateStartedAt: S('2026-03-01T12:00:30Z') });
      await world.settle(reconciler, KEY);
      const running = payload(world).operation;
      // WHEN the applicationset-controller writes the next operation while the spoke still runs the first
      const current = hubApp(world);
      current.operation = { sync: { revision: 'v3' } };
      world.put('Application', current);
      await world.settle(reconciler, KEY);
      // THEN the payload keeps the running one (Argo CD would resume the running state and drop the new one)
      expect(payload(world).operation).toStrictEqual(running);
      expect(hubApp(world).operation).toStrictEqual({ sync: { revision: 'v3' } });
      // recorded (a restart keeps it, the operation timeout counts from now), not forwarded
      expect(JSON.parse(hubApp(world).metadata.annotations![FORWARDED_OPERATION_ANNOTATION])).toMatchObject({
        after: '2026-03-01T12:00:30Z',
      });
      // WHEN the spoke's phase ends THEN the new operation is forwarded
      report(world, WORK1, { operationStatePhase: S('Succeeded'), operationStateStartedAt: S('2026-03-01T12:00:30Z') });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v3' } }));
      expect(JSON.parse(hubApp(world).metadata.annotations![FORWARDED_OPERATION_ANNOTATION])).toMatchObject({
        after: '2026-03-01T12:00:30Z',
      });
    });

    test('GIVEN the spoke runs an operation of its own WHEN the hub app gets one THEN it is not forwarded until the phase ends', async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      report(world, WORK1, { operationStatePhase: S('Running'), operationStateStartedAt: S('2026-03-01T11:00:00Z') });
      await world.settle(reconciler, KEY);
      world.put('Application', { ...hubApp(world), operation: { sync: { revision: 'v2' } } });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toBeUndefined();
      // held behind a spoke that stays Running past the operation timeout: said on the hub app, as held (not
      // forwarded), naming the phase it waits for
      world.clock = new Date('2026-03-01T12:10:01Z');
      await world.settle(reconciler, KEY);
      expect(condition(world, OPERATION_PENDING_CONDITION)!.message).toContain(
        'the operation requested at 2026-03-01T12:00:00Z has waited more than 600 s for the spoke to end the operation it runs (phase Running); it is forwarded once that phase ends',
      );
      report(world, WORK1, {
        operationStatePhase: S('Terminating'),
        operationStateStartedAt: S('2026-03-01T11:00:00Z'),
      });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toBeUndefined();
      report(world, WORK1, { operationStatePhase: S('Failed'), operationStateStartedAt: S('2026-03-01T11:00:00Z') });
      await world.settle(reconciler, KEY);
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v2' } }));
    });

    test('fails when the spoke does not take the operation within the timeout: OperationPendingWarning, scheduled by the reconcile itself, operation still forwarded', async () => {
      await forward();
      const result = (await reconciler.reconcile(KEY, { enqueuedAt: Date.now() })) as ReconcileResult;
      expect(result.requeueAfterMs).toBe(600_001);
      expect(condition(world, OPERATION_PENDING_CONDITION)).toBeUndefined();
      world.clock = new Date('2026-03-01T12:10:01Z');
      await world.settle(reconciler, KEY);
      expect(condition(world, OPERATION_PENDING_CONDITION)!.message).toContain(
        'the operation forwarded at 2026-03-01T12:00:00Z has not been started by the spoke within 600 s',
      );
      expect(payload(world).operation).toStrictEqual(forwarded({ sync: { revision: 'v2' } }));
      // Taken late: the warning goes.
      report(world, WORK1, {
        healthStatus: S('Healthy'),
        operationStatePhase: S('Succeeded'),
        operationStateStartedAt: S('2026-03-01T12:10:05Z'),
      });
      await world.settle(reconciler, KEY);
      expect(condition(world, OPERATION_PENDING_CONDITION)).toBeUndefined();
    });
  });

  describe('a failed retarget never deletes what is delivered', () => {
    beforeEach(async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      report(world, WORK1, { healthStatus: S('Healthy') });
    });

    test('fails when a foreign work is in the way at the new target: the old work stays', async () => {
      const foreign = {
        apiVersion: 'work.open-cluster-management.io/v1',
        kind: 'ManifestWork',
        metadata: { name: 'argocd-guestbook', namespace: 'spoke2' },
        spec: { workload: { manifests: [] } },
      };
      world.put('ManifestWork', foreign);
      retarget(world, 'spoke2');
      await world.settle(reconciler, KEY);
      expect(world.get('ManifestWork', WORK1)).toBeDefined();
      expect(world.get<ManifestWork>('ManifestWork', WORK2)!.spec.workload.manifests).toStrictEqual([]);
      expect(condition(world, DELIVERY_ERROR_CONDITION)!.message).toContain(
        'ManifestWork spoke2/argocd-guestbook already exists and it is not managed by pullfleet',
      );
    });

    test.each([403, 422])('fails when the new work is rejected with %i: the old work stays', async (status) => {
      retarget(world, 'spoke2');
      world.failNext = { verb: 'apply', status };
      await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      expect(world.cache.keys('ManifestWork')).toStrictEqual([WORK1]);
      expect(world.writes.filter((write) => write.verb === 'delete')).toHaveLength(0);
      expect(condition(world, DELIVERY_ERROR_CONDITION)!.message).toContain(`injected ${status}`);
      // The write succeeds later: the new work exists first, then the old one goes.
      await world.settle(reconciler, KEY);
      expect(world.cache.keys('ManifestWork')).toStrictEqual([WORK2]);
    });

    test('fails when tenancy refuses the new cluster: the old work stays', async () => {
      cluster(world, 'dev1', 'dev');
      retarget(world, 'dev1');
      await world.settle(reconciler, KEY);
      expect(world.cache.keys('ManifestWork')).toStrictEqual([WORK1]);
      expect(condition(world, DELIVERY_ERROR_CONDITION)!.message).toContain('may not deliver to ManagedCluster "dev1"');
    });

    test('fails when the new work would be too large: the old work stays', async () => {
      const current = hubApp(world);
      current.metadata.annotations![MANAGED_CLUSTER_ANNOTATION] = 'spoke2';
      current.metadata.annotations!['example.com/blob'] = 'x'.repeat(600 * 1024);
      world.put('Application', current);
      await world.settle(reconciler, KEY);
      expect(world.cache.keys('ManifestWork')).toStrictEqual([WORK1]);
      expect(condition(world, DELIVERY_ERROR_CONDITION)!.message).toContain('the limit is 512000');
    });

    test('GIVEN the new work exists but the spoke refused it (Applied=False) WHEN reconciled THEN the old work stays until it applies', async () => {
      retarget(world, 'spoke2');
      await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      report(world, WORK2, {}, 'False');
      await world.settle(reconciler, KEY);
      expect(world.cache.keys('ManifestWork').sort()).toStrictEqual([WORK1, WORK2]);
      report(world, WORK2, { healthStatus: S('Healthy') });
      await world.settle(reconciler, KEY);
      expect(world.cache.keys('ManifestWork')).toStrictEqual([WORK2]);
    });
  });

  describe('removed fields reach existing works', () => {
    test('GIVEN a work written with feedbackScrapeType Watch WHEN the hub switches back to Poll THEN the field leaves the work', async () => {
      world.put('Application', app());
      const watch = world.reconciler(createApplicationReconciler, { feedbackScrapeType: FeedbackScrape.WATCH });
      await world.settle(watch, KEY);
      expect(world.get<ManifestWork>('ManifestWork', WORK1)!.spec.manifestConfigs![0].feedbackScrapeType).toBe('Watch');
      await world.settle(reconciler, KEY);
      expect(
        world.get<ManifestWork>('ManifestWork', WORK1)!.spec.manifestConfigs![0].feedbackScrapeType,
      ).toBeUndefined();
    });

    test('GIVEN an app owned by an ApplicationSet WHEN it leaves the ApplicationSet THEN the work loses the application-set label and hosting annotation, and other writers keep theirs', async () => {
      world.put('Application', app({ owner: 'guestbook-set' }));
      await world.settle(reconciler, KEY);
      const work = world.get<ManifestWork>('ManifestWork', WORK1)!;
      expect(work.metadata.labels?.[APPLICATION_SET_LABEL]).toBe('true');
      expect(work.metadata.annotations?.[HOSTING_APPSET_ANNOTATION]).toBe('argocd/guestbook-set');
      work.metadata.labels!['team.example.com/owner'] = 'payments';
      world.put('ManifestWork', work);
      const current = hubApp(world);
      delete current.metadata.ownerReferences;
      world.put('Application', current);
      await world.settle(reconciler, KEY);
      const after = world.get<ManifestWork>('ManifestWork', WORK1)!;
      expect(after.metadata.labels?.[APPLICATION_SET_LABEL]).toBeUndefined();
      expect(after.metadata.annotations?.[HOSTING_APPSET_ANNOTATION]).toBeUndefined();
      expect(after.metadata.labels?.['team.example.com/owner']).toBe('payments');
    });

    test('GIVEN a work the server defaulted (Poll, Update, work-agent, Foreground) WHEN reconciled THEN it counts as up to date', async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      const work = world.get<ManifestWork>('ManifestWork', WORK1)!;
      const config = work.spec.manifestConfigs![0];
      config.feedbackScrapeType = FeedbackScrape.POLL;
      (config.updateStrategy as { serverSideApply: Record<string, unknown> }).serverSideApply.fieldManager =
        'work-agent';
      world.put('ManifestWork', work);
      const before = world.writes.length;
      await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      expect(world.writes.length).toBe(before);
    });
  });

  describe('no leaks, no waiting for the resync', () => {
    test('GIVEN a write the watch never confirmed WHEN the object is deleted (the event carrying an older cached copy) THEN the expectation is forgotten', async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      const stats = reconciler as unknown as { pendingExpectations(): number };
      const changed = hubApp(world);
      changed.spec.source = { repoURL: 'https://git.example/apps', path: 'guestbook-v2' };
      world.put('Application', changed);
      const staleApp = hubApp(world);
      const staleWork = world.get<ManifestWork>('ManifestWork', WORK1)!;
      // The controller rewrites the work; its watch event never arrives (the object is deleted right after).
      world.muted = true;
      await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      world.muted = false;
      expect(stats.pendingExpectations()).toBeGreaterThan(0);
      const workWatch = reconciler.watches.find((watch) => watch.kind.id === 'ManifestWork')!;
      const appWatch = reconciler.watches.find((watch) => watch.kind.id === 'Application')!;
      workWatch.keysFor(staleWork, undefined, 'delete');
      appWatch.keysFor(staleApp, undefined, 'delete');
      expect(stats.pendingExpectations()).toBe(0);
    });

    test("GIVEN a cache behind the controller's own write WHEN reconciled THEN it requeues itself shortly instead of waiting for the resync", async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      const old = structuredClone(world.cache.get<Application>('Application', KEY)!);
      report(world, WORK1, { healthStatus: S('Healthy') });
      await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      // The informer has not delivered that status write yet.
      world.cache.upsert('Application', old);
      const result = await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      expect(result).toStrictEqual({ requeueAfterMs: LAGGING_REQUEUE_MS });
    });
  });

  describe('no periodic churn', () => {
    test("GIVEN stale feedback WHEN time passes THEN the hub app is not rewritten, and the recheck comes from the reconcile's own requeue", async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      report(world, WORK1, { healthStatus: S('Healthy'), reconciledAt: S('2026-03-01T11:55:00Z') });
      const result = (await reconciler.reconcile(KEY, { enqueuedAt: Date.now() })) as ReconcileResult;
      // Stale at 12:10:00 (+1 ms): the reconcile asks to come back exactly then.
      expect(result.requeueAfterMs).toBe(10 * 60_000 + 1);
      world.clock = new Date('2026-03-01T12:10:01Z');
      await world.settle(reconciler, KEY);
      expect(condition(world, FEEDBACK_STALE_CONDITION)).toBeDefined();
      const writes = world.writes.length;
      for (const minute of [11, 12, 30, 59]) {
        world.clock = new Date(`2026-03-01T12:${minute}:00Z`);
        await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      }
      expect(world.writes.length).toBe(writes);
    });
  });

  describe('failures retrying cannot fix become conditions and recover by themselves', () => {
    test('fails when the cluster namespace does not exist yet (404): a condition, no retry loop, and the namespace appearing wakes the app', async () => {
      world.put('Application', app());
      world.failNext = { verb: 'apply', status: 404 };
      await expect(reconciler.reconcile(KEY, { enqueuedAt: Date.now() })).resolves.not.toThrow();
      expect(condition(world, DELIVERY_ERROR_CONDITION)!.message).toContain(
        'namespace "spoke1" does not exist on the hub yet',
      );
      world.enqueued.length = 0;
      world.put('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'spoke1' } });
      world.put('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'unrelated' } });
      expect(world.enqueued).toStrictEqual([KEY]);
      await world.settle(reconciler, KEY);
      expect(world.get('ManifestWork', WORK1)).toBeDefined();
      expect(condition(world, DELIVERY_ERROR_CONDITION)).toBeUndefined();
    });

    test('GIVEN operationStateStartedAt reported as an Integer WHEN written back THEN it is converted to an RFC 3339 time and a condition names the field', async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      report(world, WORK1, {
        healthStatus: S('Healthy'),
        operationStatePhase: S('Succeeded'),
        operationStateStartedAt: { type: 'Integer', integer: 1772366400 },
      });
      await world.settle(reconciler, KEY);
      expect(hubApp(world).status!.operationState!.startedAt).toBe('2026-03-01T12:00:00Z');
      expect(condition(world, INVALID_FEEDBACK_CONDITION)!.message).toContain(
        'converted from a Unix timestamp: operationStateStartedAt "1772366400" written as 2026-03-01T12:00:00Z',
      );
    });

    test('fails when a feedback value cannot be a time: it is left out, the rest is written, a condition names the field', async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      report(world, WORK1, {
        healthStatus: S('Healthy'),
        syncStatus: S('Synced'),
        operationStatePhase: S('Succeeded'),
        operationStateStartedAt: { type: 'JsonRaw', jsonRaw: '{"not":"a time"}' },
      });
      await world.settle(reconciler, KEY);
      const status = hubApp(world).status!;
      expect([status.health!.status, status.sync!.status]).toStrictEqual(['Healthy', 'Synced']);
      // No startedAt the spoke did not give: the operation state is left out rather than invented.
      expect(status.operationState).toBeUndefined();
      expect(condition(world, INVALID_FEEDBACK_CONDITION)!.message).toContain(
        'operationStateStartedAt "{\\"not\\":\\"a time\\"}"',
      );
    });

    test('fails when the API server still rejects the status (422): conditions are written, no retry loop', async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      report(world, WORK1, { healthStatus: S('Healthy') });
      world.failNext = { verb: 'patch', status: 422 };
      await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
      expect(condition(world, INVALID_FEEDBACK_CONDITION)!.message).toContain(
        'the API server rejected the status write-back',
      );
    });

    test.each([
      ['missing', null],
      ['empty', '  '],
    ])(
      'fails when an opted-in app has a %s cluster annotation: a condition, and delivered work is kept',
      async (_case, value) => {
        world.put('Application', app());
        await world.settle(reconciler, KEY);
        const current = hubApp(world);
        if (value === null) delete current.metadata.annotations![MANAGED_CLUSTER_ANNOTATION];
        else current.metadata.annotations![MANAGED_CLUSTER_ANNOTATION] = value;
        world.put('Application', current);
        await world.settle(reconciler, KEY);
        expect(world.cache.keys('ManifestWork')).toStrictEqual([WORK1]);
        expect(condition(world, DELIVERY_ERROR_CONDITION)!.message).toContain(
          `annotation ${MANAGED_CLUSTER_ANNOTATION} is ${_case}`,
        );
      },
    );

    test('fails when an opted-in app lacks skip-reconcile "true": it is delivered and a condition says the hub Argo CD reconciles it too', async () => {
      const noSkip = app();
      delete noSkip.metadata.annotations![SKIP_RECONCILE_ANNOTATION];
      world.put('Application', noSkip);
      await world.settle(reconciler, KEY);
      expect(world.get('ManifestWork', WORK1)).toBeDefined();
      expect(condition(world, SKIP_RECONCILE_CONDITION)!.message).toContain(
        `annotation ${SKIP_RECONCILE_ANNOTATION} is not "true"`,
      );
    });
  });

  describe('the cache keeps only what pullfleet acts on', () => {
    const bulky = {
      resources: Array.from({ length: 200 }, (_, i) => ({
        kind: 'ConfigMap',
        name: `cm-${i}`,
        namespace: 'guestbook',
        status: 'Synced',
      })),
      history: [{ id: 1, revision: 'abc', deployedAt: '2026-03-01T11:00:00Z' }],
      sync: { status: 'Synced' },
      health: { status: 'Healthy' },
      operationState: {
        operation: { sync: {} },
        phase: 'Succeeded',
        startedAt: '2026-03-01T11:00:00Z',
        syncResult: { resources: [{ name: 'cm-0' }] },
      },
    };

    test('GIVEN a push-mode Application WHEN cached THEN only its metadata is kept (without the last-applied copy); WHEN it opts in THEN all of it is', async () => {
      const push = app({ annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(10_000) } });
      delete push.metadata.labels![PULL_LABEL];
      world.put('Application', { ...push, status: bulky });
      expect(world.cache.get('Application', KEY)).toStrictEqual({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: {
          ...push.metadata,
          annotations: { [SKIP_RECONCILE_ANNOTATION]: 'true', [MANAGED_CLUSTER_ANNOTATION]: 'spoke1' },
          resourceVersion: expect.any(String),
          uid: expect.any(String),
        },
      });
      await world.settle(reconciler, KEY);
      expect(world.cache.list('ManifestWork')).toHaveLength(0);
      world.put('Application', { ...app(), status: bulky });
      const cached = world.cache.get<Application>('Application', KEY)!;
      expect(cached.spec).toStrictEqual(app().spec);
      expect(cached.status).toStrictEqual({
        sync: { status: 'Synced' },
        health: { status: 'Healthy' },
        operationState: { operation: { sync: {} }, phase: 'Succeeded', startedAt: '2026-03-01T11:00:00Z' },
        // The resource list is kept as a digest only (to skip unchanged resource write-backs).
        [RESOURCES_DIGEST_FIELD]: expect.any(String),
      });
    });

    test('GIVEN a delivered app WHEN its pull label is removed THEN the trimmed copy still lets the controller delete its work and release the finalizer', async () => {
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      const current = hubApp(world);
      delete current.metadata.labels![PULL_LABEL];
      world.put('Application', current);
      await world.settle(reconciler, KEY);
      expect(world.cache.list('ManifestWork')).toHaveLength(0);
      expect(hubApp(world).metadata.finalizers).toBeUndefined();
    });
  });

  describe('events do not fan out', () => {
    beforeEach(async () => {
      world.put('Application', app());
      world.put('Application', app({ name: 'other', cluster: 'spoke2' }));
      await world.settle(reconciler, KEY);
      await world.settle(reconciler, `${NS}/other`);
      world.enqueued.length = 0;
    });

    test('GIVEN a ManagedCluster status update WHEN nothing tenancy reads changed THEN no app is enqueued', () => {
      for (let i = 0; i < 5; i++)
        cluster(world, 'spoke1', 'prod', {
          status: {
            conditions: [
              {
                type: 'ManagedClusterConditionAvailable',
                status: 'True',
                lastTransitionTime: `2026-03-01T12:0${i}:00Z`,
              },
            ],
          },
        });
      expect(world.enqueued).toStrictEqual([]);
    });

    test('GIVEN a ManagedCluster label change WHEN routed THEN only the apps targeting it are enqueued', () => {
      cluster(world, 'spoke1', 'dev');
      expect(world.enqueued).toStrictEqual([KEY]);
    });

    test('GIVEN a binding change WHEN routed THEN only the pull apps of its namespace are enqueued; a no-op update enqueues nothing', () => {
      const binding = {
        apiVersion: 'cluster.open-cluster-management.io/v1beta2',
        kind: 'ManagedClusterSetBinding',
        metadata: { name: 'prod', namespace: NS },
        spec: { clusterSet: 'prod' },
      };
      world.put('ManagedClusterSetBinding', {
        ...binding,
        metadata: { ...binding.metadata, labels: { touched: 'yes' } },
      });
      expect(world.enqueued).toStrictEqual([]);
      world.put('ManagedClusterSetBinding', {
        ...binding,
        metadata: { name: 'dev', namespace: 'elsewhere' },
        spec: { clusterSet: 'dev' },
      });
      expect(world.enqueued).toStrictEqual([]);
      world.remove('ManagedClusterSetBinding', `${NS}/prod`);
      expect(world.enqueued.sort()).toStrictEqual([KEY, `${NS}/other`]);
    });
  });
});

/** The spec hash feedback of the payload a work delivered, as the spoke Application would report it. */
function deliveredSpecHash(work: ManifestWork): Record<string, FieldValue> {
  const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application') as
    { metadata?: { annotations?: Record<string, string> } } | undefined;
  const hash = payload?.metadata?.annotations?.[SPEC_HASH_ANNOTATION];
  return hash ? { specHash: { type: 'String', string: hash } } : {};
}

/** An operation as forwarded in the payload: with the controller's forwarding mark in its info. */
function forwarded(operation: Record<string, unknown>): Record<string, unknown> {
  return { ...operation, info: [{ name: 'pullfleet.io/forwarded', value: expect.stringMatching(/^[0-9a-f]{12}$/) }] };
}
