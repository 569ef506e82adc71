import { SPEC_HASH_ANNOTATION } from '../../../src/model/core/keys.js';
import { beforeEach, describe, expect, test } from '@jest/globals';
import { createApplicationReconciler } from '../../../src/controller/reconcilers/application.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import {
  CLEANUP_FINALIZER,
  DELIVERY_ANNOTATION,
  DELIVERY_LABEL,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  REFRESH_ANNOTATION,
} from '../../../src/model/core/keys.js';
import { type Application, type FieldValue, type ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import { FORWARDED_OPERATION_ANNOTATION } from '../../../src/model/reconcile/propagation.js';
import { DELIVERY_ERROR_CONDITION, FEEDBACK_STALE_CONDITION } from '../../../src/model/reconcile/status.js';
import { pullApplication, World } from '../../support/world.js';
import { applicationFeedback, workStatus } from '../../support/work-status.js';
import { RESOURCE_SUMMARY_CONDITION, RESOURCE_SUMMARY_HEADER } from '../../../src/model/reconcile/resource-summary.js';

const NS = 'argocd';
const KEY = `${NS}/guestbook`;

function app(
  overrides: {
    cluster?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    name?: string;
  } = {},
): Application {
  return pullApplication({ namespace: NS, workload: 'guestbook', ...overrides });
}

function cluster(world: World, name: string, set = 'prod'): void {
  world.addCluster(name, { clusterSet: set });
}

function feedbackValues(values: Record<string, FieldValue>) {
  return Object.entries(values).map(([name, fieldValue]) => ({ name, fieldValue }));
}

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
  work.status = workStatus(
    [
      // A spoke Namespace first: matching must use resourceMeta, not the position.
      {
        resourceMeta: {
          group: '',
          version: 'v1',
          kind: 'Namespace',
          resource: 'namespaces',
          name: 'guestbook',
          ordinal: 0,
        },
        statusFeedback: { values: feedbackValues({ healthStatus: { type: 'String', string: 'Wrong' } }) },
      },
      applicationFeedback({
        name: 'guestbook',
        namespace: NS,
        ordinal: 1,
        values,
        // An agent that evaluates conditionRules (OCM 1.0 and later): an app without resources yet.
        conditions: [
          {
            type: RESOURCE_SUMMARY_CONDITION,
            status: 'True',
            reason: 'ConditionRuleEvaluated',
            message: `${RESOURCE_SUMMARY_HEADER} resources=0 images=0\nimages \n\nend`,
          },
        ],
      }),
    ],
    {
      type: 'Applied',
      status: applied,
      reason: applied === 'True' ? 'AppliedManifestWorkComplete' : 'AppliedManifestWorkFailed',
      message: applied === 'True' ? 'applied' : 'namespace argocd not found',
    },
  );
  world.put('ManifestWork', work);
}

const S = (string: string): FieldValue => ({ type: 'String', string });

describe('application reconciler', () => {
  let world: World;
  let reconciler: Reconciler;

  beforeEach(() => {
    world = World.hub({ clusters: ['spoke1', 'spoke2'], namespace: NS });
    reconciler = world.reconciler(createApplicationReconciler);
  });

  test('GIVEN an opted-in app WHEN reconciled THEN its work equals the synth-built work and the app carries the cleanup finalizer', async () => {
    const stored = world.put('Application', app());
    await world.settle(reconciler, KEY);
    const work = world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!;
    const expected = buildManifestWork(stored);
    expect({
      metadata: { labels: work.metadata.labels, annotations: work.metadata.annotations },
      spec: work.spec,
    }).toStrictEqual({
      metadata: { labels: expected.metadata.labels, annotations: expected.metadata.annotations },
      spec: expected.spec,
    });
    expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([CLEANUP_FINALIZER]);
  });

  test('GIVEN a delivered app WHEN reconciled again with nothing changed THEN no write is made', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    const before = world.writes.length;
    await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    expect(world.writes.length).toBe(before);
  });

  test.each([
    ['the cluster does not exist', 'ghost', 'ManagedCluster "ghost" does not exist'],
    ['the cluster is the hub itself', 'local-cluster', 'local-cluster is the hub itself'],
  ])('fails when %s: no work, DeliveryError condition', async (_case, target, message) => {
    world.put('Application', app({ cluster: target }));
    await world.settle(reconciler, KEY);
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
    const conditions = world.get<Application>('Application', KEY)!.status?.conditions ?? [];
    expect(conditions).toHaveLength(1);
    expect(conditions[0].type).toBe(DELIVERY_ERROR_CONDITION);
    expect(conditions[0].message).toContain(message);
  });

  test('fails when the namespace has no binding to a set containing the cluster', async () => {
    cluster(world, 'dev1', 'dev');
    world.put('Application', app({ cluster: 'dev1' }));
    await world.settle(reconciler, KEY);
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
    expect(world.get<Application>('Application', KEY)!.status?.conditions?.[0]?.message).toContain(
      'namespace "argocd" may not deliver to ManagedCluster "dev1": bound sets [prod] do not contain it',
    );
  });

  test('GIVEN relaxed tenancy WHEN the cluster is in an unbound set THEN the work is delivered', async () => {
    cluster(world, 'dev1', 'dev');
    const relaxed = world.reconciler(createApplicationReconciler, { relaxTenancy: true });
    world.put('Application', app({ cluster: 'dev1' }));
    await world.settle(relaxed, KEY);
    expect(world.get('ManifestWork', 'dev1/argocd-guestbook')).toBeDefined();
  });

  test('GIVEN a delivered app WHEN it is retargeted THEN the old work is deleted and the new one exists', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    const current = world.get<Application>('Application', KEY)!;
    current.metadata.annotations![MANAGED_CLUSTER_ANNOTATION] = 'spoke2';
    world.put('Application', current);
    await world.settle(reconciler, KEY);
    expect(world.cache.keys('ManifestWork')).toStrictEqual(['spoke2/argocd-guestbook']);
  });

  test.each([
    ['the pull label is removed', (a: Application) => delete a.metadata.labels![PULL_LABEL]],
    ['the pull label is set to false', (a: Application) => (a.metadata.labels![PULL_LABEL] = 'false')],
  ])('GIVEN a delivered app WHEN %s THEN its work is deleted and the finalizer released', async (_case, change) => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    const current = world.get<Application>('Application', KEY)!;
    change(current);
    world.put('Application', current);
    await world.settle(reconciler, KEY);
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
    expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toBeUndefined();
  });

  test('GIVEN a delivered app WHEN it is deleted THEN its work goes first and the finalizer is released after', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    // The work agent holds the work for a moment (its own finalizer) while it cleans the spoke.
    const work = world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!;
    world.put('ManifestWork', {
      ...work,
      metadata: { ...work.metadata, finalizers: ['cluster.open-cluster-management.io/manifest-work-cleanup'] },
    });
    world.remove('Application', KEY);
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([CLEANUP_FINALIZER]);
    expect(
      world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!.metadata.deletionTimestamp,
    ).toBeDefined();
    // The agent finishes: the work disappears, then the app is released.
    world.cache.remove('ManifestWork', 'spoke1/argocd-guestbook');
    await world.settle(reconciler, KEY);
    expect(world.get('Application', KEY)).toBeUndefined();
  });

  test.each([
    ['resources-finalizer.argocd.argoproj.io'],
    ['resources-finalizer.argocd.argoproj.io/foreground'],
    ['resources-finalizer.argocd.argoproj.io/background'],
  ])(
    'GIVEN a delivered app with %s WHEN it is deleted THEN its work goes first and the Argo CD finalizer is released with the cleanup finalizer',
    async (argoFinalizer) => {
      world.put('Application', {
        ...app(),
        metadata: { ...app().metadata, finalizers: [argoFinalizer, 'example.com/keep'] },
      });
      await world.settle(reconciler, KEY);
      expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([
        argoFinalizer,
        'example.com/keep',
        CLEANUP_FINALIZER,
      ]);
      const work = world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!;
      world.put('ManifestWork', {
        ...work,
        metadata: { ...work.metadata, finalizers: ['cluster.open-cluster-management.io/manifest-work-cleanup'] },
      });
      world.remove('Application', KEY);
      await world.settle(reconciler, KEY);
      // While the work agent still cleans the spoke, every finalizer stays.
      expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([
        argoFinalizer,
        'example.com/keep',
        CLEANUP_FINALIZER,
      ]);
      expect(
        world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!.metadata.deletionTimestamp,
      ).toBeDefined();
      world.cache.remove('ManifestWork', 'spoke1/argocd-guestbook');
      await world.settle(reconciler, KEY);
      // Only finalizers of others are left: Argo CD's and pullfleet's are gone.
      expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual(['example.com/keep']);
    },
  );

  test('GIVEN a deleted pull app with the Argo CD finalizer and no work left WHEN reconciled THEN the app is gone', async () => {
    world.put('Application', {
      ...app(),
      metadata: { ...app().metadata, finalizers: ['resources-finalizer.argocd.argoproj.io'] },
    });
    world.remove('Application', KEY);
    await world.settle(reconciler, KEY);
    expect(world.get('Application', KEY)).toBeUndefined();
  });

  test('GIVEN a deleted static app with the Argo CD finalizer WHEN its synth work is still there THEN the finalizer stays until the work is gone', async () => {
    const staticApp = app({ annotations: { [DELIVERY_ANNOTATION]: 'static' } });
    world.put('Application', {
      ...staticApp,
      metadata: { ...staticApp.metadata, finalizers: ['resources-finalizer.argocd.argoproj.io'] },
    });
    world.put('ManifestWork', buildManifestWork(staticApp));
    world.remove('Application', KEY);
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([
      'resources-finalizer.argocd.argoproj.io',
    ]);
    expect(world.writes.filter((write) => write.resource === 'manifestworks')).toHaveLength(0);
    world.cache.remove('ManifestWork', 'spoke1/argocd-guestbook');
    await world.settle(reconciler, KEY);
    expect(world.get('Application', KEY)).toBeUndefined();
  });

  test.each([
    ['without the pull label', app({ labels: {} })],
    ['with the pull label false', app({ labels: { [PULL_LABEL]: 'false' } })],
    [
      'without skip-reconcile (the hub Argo CD processes it)',
      app({ annotations: { 'argocd.argoproj.io/skip-reconcile': 'false' } }),
    ],
    ['of the agent model', app({ labels: { [PULL_LABEL]: 'true', 'pullfleet.io/delivery-model': 'agent-managed' } })],
  ])(
    'GIVEN a deleted app %s with the Argo CD finalizer WHEN reconciled THEN the finalizer is left to Argo CD',
    async (_case, base) => {
      world.put('Application', {
        ...base,
        metadata: { ...base.metadata, finalizers: ['resources-finalizer.argocd.argoproj.io'] },
      });
      world.remove('Application', KEY);
      await world.settle(reconciler, KEY);
      expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([
        'resources-finalizer.argocd.argoproj.io',
      ]);
      expect(world.writes.filter((write) => write.resource === 'applications')).toHaveLength(0);
    },
  );

  test('GIVEN a delivered app WHEN it vanishes without the finalizer THEN the sweep deletes its work', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    world.cache.remove('Application', KEY);
    expect(reconciler.resyncKeys()).toContain(KEY);
    await world.settle(reconciler, KEY);
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
  });

  test('GIVEN a delivered app WHEN its work is deleted by hand THEN it is recreated', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    world.cache.remove('ManifestWork', 'spoke1/argocd-guestbook');
    await world.settle(reconciler, KEY);
    expect(world.get('ManifestWork', 'spoke1/argocd-guestbook')).toBeDefined();
  });

  test('GIVEN a static app and its synth-rendered work WHEN reconciled THEN the work is never written but status is', async () => {
    const staticApp = world.put('Application', app({ annotations: { [DELIVERY_ANNOTATION]: 'static' } }));
    world.put('ManifestWork', buildManifestWork(staticApp));
    report(world, 'spoke1/argocd-guestbook', { healthStatus: S('Healthy'), syncStatus: S('Synced') });
    await world.settle(reconciler, KEY);
    expect(world.writes.filter((write) => write.resource === 'manifestworks')).toHaveLength(0);
    expect(world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!.metadata.labels?.[DELIVERY_LABEL]).toBe(
      'static',
    );
    expect(world.get<Application>('Application', KEY)!.status?.health?.status).toBe('Healthy');
  });

  test('fails when another app owns the work at the target: refuses to take it over', async () => {
    const other = buildManifestWork(app({ name: 'other' }));
    other.metadata.name = 'argocd-guestbook';
    world.put('ManifestWork', other);
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    expect(
      world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!.metadata.annotations?.[
        'apps.open-cluster-management.io/hub-application-name'
      ],
    ).toBe('other');
    expect(world.get<Application>('Application', KEY)!.status?.conditions?.[0]?.message).toContain(
      'already exists and it belongs to Application argocd/other: refusing to take it over',
    );
  });

  test('GIVEN a delivered app WHEN the spoke has reported nothing THEN sync and health are Unknown', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    const status = world.get<Application>('Application', KEY)!.status!;
    expect({ sync: status.sync, health: status.health, operationState: status.operationState }).toStrictEqual({
      sync: { status: 'Unknown' },
      health: { status: 'Unknown' },
      operationState: undefined,
    });
  });

  test('GIVEN feedback of every value type WHEN reconciled THEN the hub status carries them as text', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    report(world, 'spoke1/argocd-guestbook', {
      healthStatus: { type: 'JsonRaw', jsonRaw: '"Healthy"' },
      syncStatus: S('Synced'),
      syncRevision: { type: 'Integer', integer: 42 },
      operationStatePhase: S('Succeeded'),
      operationStateStartedAt: S('2026-03-01T11:59:00Z'),
      operationStateMessage: { type: 'Boolean', boolean: true },
    });
    await world.settle(reconciler, KEY);
    const status = world.get<Application>('Application', KEY)!.status!;
    expect({ sync: status.sync, health: status.health, operationState: status.operationState }).toStrictEqual({
      sync: { status: 'Synced', revision: '42' },
      health: { status: 'Healthy' },
      operationState: {
        operation: {},
        phase: 'Succeeded',
        startedAt: '2026-03-01T11:59:00Z',
        message: 'true',
        syncResult: { revision: '' },
      },
    });
  });

  test('GIVEN partial feedback without startedAt WHEN reconciled THEN no operation state is invented; WHEN the spoke reports its startedAt THEN it is copied as it is', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    report(world, 'spoke1/argocd-guestbook', { healthStatus: S('Progressing'), operationStatePhase: S('Running') });
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.status!.operationState).toBeUndefined();
    world.clock = new Date('2026-03-01T12:30:00Z');
    report(world, 'spoke1/argocd-guestbook', {
      healthStatus: S('Healthy'),
      operationStatePhase: S('Succeeded'),
      operationStateStartedAt: S('2026-03-01T11:58:07Z'),
    });
    await world.settle(reconciler, KEY);
    const status = world.get<Application>('Application', KEY)!.status!;
    expect(status.operationState).toStrictEqual({
      operation: {},
      phase: 'Succeeded',
      startedAt: '2026-03-01T11:58:07Z',
      syncResult: { revision: '' },
    });
    expect(status.sync).toStrictEqual({ status: 'Unknown' });
    expect(status.health).toStrictEqual({ status: 'Healthy' });
  });

  test('GIVEN feedback older than the threshold WHEN reconciled THEN a stale warning appears whose transition time then holds', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    report(world, 'spoke1/argocd-guestbook', { healthStatus: S('Healthy'), reconciledAt: S('2026-03-01T11:00:00Z') });
    await world.settle(reconciler, KEY);
    const first = world.get<Application>('Application', KEY)!.status!.conditions!;
    expect(first.map((c) => [c.type, c.lastTransitionTime])).toStrictEqual([
      [FEEDBACK_STALE_CONDITION, '2026-03-01T12:00:00Z'],
    ]);
    expect(first[0].message).toBe(
      'spoke feedback is stale: the spoke Application last reconciled at 2026-03-01T11:00:00Z, more than 900 s before the hub last checked; check the work agent and Argo CD on cluster spoke1',
    );
    world.clock = new Date('2026-03-01T12:10:00Z');
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.status!.conditions![0].lastTransitionTime).toBe(
      '2026-03-01T12:00:00Z',
    );
    report(world, 'spoke1/argocd-guestbook', { healthStatus: S('Healthy'), reconciledAt: S('2026-03-01T12:09:00Z') });
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.status!.conditions).toBeUndefined();
  });

  test('fails when the work is not applied on the spoke: DeliveryError names the agent message', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    report(world, 'spoke1/argocd-guestbook', {}, 'False');
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.status!.conditions![0].message).toBe(
      'ManifestWork spoke1/argocd-guestbook is not applied on the spoke: namespace argocd not found',
    );
  });

  test('fails when the work is not applied, as OCM’s agent reports it: DeliveryError names the manifest and the spoke’s reason, not the agent’s fixed sentence', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    const work = world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!;
    // OCM v1.3.1's work agent: the cause on the manifest's Applied condition, a fixed message on the work's.
    world.put('ManifestWork', {
      ...work,
      status: {
        conditions: [
          {
            type: 'Applied',
            status: 'False',
            reason: 'AppliedManifestWorkFailed',
            message: 'Failed to apply manifest work',
          },
        ],
        resourceStatus: {
          manifests: [
            {
              resourceMeta: {
                group: 'argoproj.io',
                kind: 'Application',
                name: 'guestbook',
                namespace: 'argocd',
                ordinal: 0,
              },
              conditions: [
                {
                  type: 'Applied',
                  status: 'False',
                  reason: 'AppliedManifestFailed',
                  message: 'Failed to apply manifest: namespaces "argocd" not found',
                },
              ],
            },
          ],
        },
      },
    });
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.status!.conditions![0].message).toBe(
      'ManifestWork spoke1/argocd-guestbook is not applied on the spoke: Application argocd/guestbook: Failed to apply manifest: namespaces "argocd" not found',
    );
  });

  test('fails when a write conflicts (409): the reconcile throws for a retry and the retry converges', async () => {
    world.put('Application', app());
    world.failNext = { verb: 'patch', status: 409 };
    await expect(reconciler.reconcile(KEY, { enqueuedAt: Date.now() })).rejects.toThrow('patch: injected 409');
    await world.settle(reconciler, KEY);
    expect(world.get('ManifestWork', 'spoke1/argocd-guestbook')).toBeDefined();
  });

  test('fails when the API server rejects the work (422): a condition, not an endless retry', async () => {
    world.put('Application', app());
    world.failNext = { verb: 'apply', status: 422 };
    await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    expect(world.get<Application>('Application', KEY)!.status!.conditions![0].message).toContain(
      'the API server rejected ManifestWork spoke1/argocd-guestbook: apply: injected 422',
    );
  });

  test('GIVEN an operation and a refresh on the hub app WHEN reconciled THEN the refresh is forwarded once, the operation until the spoke takes it, and the hub shows only the operation states the spoke reported', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    report(world, 'spoke1/argocd-guestbook', {
      healthStatus: S('Healthy'),
      syncStatus: S('Synced'),
      operationStatePhase: S('Succeeded'),
      operationStateStartedAt: S('2026-03-01T10:00:00Z'),
    });
    await world.settle(reconciler, KEY);
    const current = world.get<Application>('Application', KEY)!;
    current.operation = { sync: { revision: 'HEAD' } };
    current.metadata.annotations![REFRESH_ANNOTATION] = 'hard';
    world.put('Application', current);
    await world.settle(reconciler, KEY);
    const payload = () =>
      world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!.spec.workload.manifests.at(-1)!;
    const hub = world.get<Application>('Application', KEY)!;
    expect(hub.metadata.annotations?.[REFRESH_ANNOTATION]).toBeUndefined();
    expect(hub.operation).toStrictEqual({ sync: { revision: 'HEAD' } });
    expect(payload().operation).toStrictEqual(forwarded({ sync: { revision: 'HEAD' } }));
    // Forwarded, not started yet: the hub shows what the spoke last reported, never a sync it did not run.
    expect([
      hub.status!.health!.status,
      hub.status!.operationState!.phase,
      hub.status!.operationState!.startedAt,
    ]).toStrictEqual(['Healthy', 'Succeeded', '2026-03-01T10:00:00Z']);
    report(world, 'spoke1/argocd-guestbook', {
      healthStatus: S('Healthy'),
      syncStatus: S('Synced'),
      operationStatePhase: S('Succeeded'),
      operationStateStartedAt: S('2026-03-01T12:00:05Z'),
    });
    await world.settle(reconciler, KEY);
    const done = world.get<Application>('Application', KEY)!;
    expect(done.operation).toBeUndefined();
    expect(done.metadata.annotations?.[FORWARDED_OPERATION_ANNOTATION]).toBeUndefined();
    expect(payload().operation).toBeUndefined();
    expect([
      done.status!.health!.status,
      done.status!.operationState!.phase,
      done.status!.operationState!.startedAt,
    ]).toStrictEqual(['Healthy', 'Succeeded', '2026-03-01T12:00:05Z']);
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
