/**
 * An ApplicationSet-generated app moving from basic to agent-managed delivery: the real controller against
 * the in-process API server hands its work off orphan-first (Orphan patch, then a guarded delete once the
 * work agent observed it), never deletes a work that could still remove the spoke Application, and never
 * writes the hub app the principal now owns. Plus the pure hand-off plan.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { startController, type RunningController } from '../../src/controller/runtime/manager.js';
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL } from '../../src/model/core/keys.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { DELIVERY_MODEL_LABEL } from '../../src/model/delivery/delivery-model.js';
import { isControllerWorkFor } from '../../src/model/reconcile/propagation.js';
import { computeAgentHandoff } from '../../src/model/reconcile/takeover.js';
import { kubeTime } from '../../src/model/core/time.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../double/fake-apiserver.js';
import type { FakeStore, WatchEventType } from '../double/fake/store.js';
import { waitFor } from '../support/wait.js';
import { applicationSet, generatedHubApp, NS } from '../model/report/fixtures.js';

const silent = pino({ level: 'silent' });
const WORK = { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork' };

function work(
  name: string,
  options: {
    managed?: boolean;
    static?: boolean;
    orphan?: boolean;
    generation?: number;
    observed?: number;
    terminating?: boolean;
    app?: string;
  } = {},
): ManifestWork {
  return {
    ...WORK,
    metadata: {
      name,
      namespace: 'east',
      uid: `${name}-uid`,
      resourceVersion: '7',
      ...(options.generation !== undefined ? { generation: options.generation } : {}),
      ...(options.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      labels: {
        ...(options.managed === false ? {} : { 'app.kubernetes.io/managed-by': 'pullfleet' }),
        ...(options.static ? { 'pullfleet.io/delivery': 'static' } : {}),
      },
      annotations: {
        'apps.open-cluster-management.io/hub-application-namespace': NS,
        'apps.open-cluster-management.io/hub-application-name': options.app ?? 'east-guestbook',
      },
    },
    spec: {
      workload: { manifests: [] },
      deleteOption: { propagationPolicy: options.orphan ? 'Orphan' : 'Foreground' },
    },
    ...(options.observed !== undefined
      ? {
          status: {
            conditions: [
              {
                type: 'Applied',
                status: 'True',
                reason: 'AppliedManifestWorkComplete',
                message: '',
                lastTransitionTime: '2026-01-01T00:00:00Z',
                observedGeneration: options.observed,
              },
            ],
          },
        }
      : {}),
  };
}

const APP = { metadata: { name: 'east-guestbook', namespace: NS } };
const own = (candidate: ManifestWork) => isControllerWorkFor(candidate, NS, 'east-guestbook');

/**
 * The API double with the hub namespace, the cluster namespace `east` and its ManagedCluster, started
 * before and closed after each test of the describe block it is called in (with any controller started).
 */
function hubWithEast(): { server: FakeApiServer; controller?: RunningController } {
  const hub = {} as { server: FakeApiServer; controller?: RunningController };
  beforeEach(async () => {
    hub.server = await startFakeApiServer();
    for (const name of [NS, 'east'])
      hub.server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    hub.server.store.create({
      apiVersion: 'cluster.open-cluster-management.io/v1',
      kind: 'ManagedCluster',
      metadata: { name: 'east' },
      spec: { hubAcceptsClient: true },
    });
  });
  afterEach(async () => {
    await hub.controller?.stop();
    hub.controller = undefined;
    await hub.server.close();
  });
  return hub;
}

describe('computeAgentHandoff', () => {
  test('GIVEN a Foreground work of the controller WHEN planned THEN it is orphaned, not deleted', () => {
    const plan = computeAgentHandoff(APP, [work('a', { generation: 1, observed: 1 })], own);
    expect(plan).toStrictEqual({
      orphan: [{ namespace: 'east', name: 'a', uid: 'a-uid', resourceVersion: '7' }],
      deletes: [],
      done: false,
    });
  });

  test('GIVEN an Orphan work the agent has not observed WHEN planned THEN nothing is written and the plan says what it waits for', () => {
    const plan = computeAgentHandoff(APP, [work('a', { orphan: true, generation: 2, observed: 1 })], own);
    expect(plan).toStrictEqual({
      orphan: [],
      deletes: [],
      done: false,
      waiting: `the work agent to observe deleteOption Orphan on ManifestWork east/a (hub Application ${NS}/east-guestbook)`,
    });
    // A work with no generation or no Applied condition counts as unobserved too.
    expect(computeAgentHandoff(APP, [work('a', { orphan: true })], own).deletes).toStrictEqual([]);
  });

  test('GIVEN an Orphan work the agent observed WHEN planned THEN it is deleted with uid and resourceVersion preconditions', () => {
    const plan = computeAgentHandoff(APP, [work('a', { orphan: true, generation: 2, observed: 2 })], own);
    expect(plan).toStrictEqual({
      orphan: [],
      deletes: [{ namespace: 'east', name: 'a', uid: 'a-uid', resourceVersion: '7' }],
      done: false,
    });
  });

  test("GIVEN static, foreign, other apps' and terminating works WHEN planned THEN none is touched and only a terminating own work keeps it from done", () => {
    const others = [
      work('static', { static: true }),
      work('foreign', { managed: false }),
      work('other', { app: 'west-guestbook' }),
    ];
    expect(computeAgentHandoff(APP, others, own)).toStrictEqual({ orphan: [], deletes: [], done: true });
    expect(
      computeAgentHandoff(
        APP,
        [...others, work('gone', { terminating: true, orphan: true, generation: 2, observed: 2 })],
        own,
      ),
    ).toStrictEqual({
      orphan: [],
      deletes: [],
      done: false,
      waiting: 'ManifestWork east/gone to finish terminating',
    });
  });
});

describe('an ApplicationSet-generated app moving from basic to agent-managed against the fake API server', () => {
  const hub = hubWithEast();

  /** What the work agent does: reports Applied at the work's current generation. */
  function agentObserves(namespace: string, name: string): ManifestWork {
    const current = hub.server.store.get<ManifestWork>('manifestworks', namespace, name);
    const conditions = [
      {
        type: 'Applied',
        status: 'True',
        reason: 'AppliedManifestWorkComplete',
        message: 'Apply manifest work complete',
        lastTransitionTime: kubeTime(new Date()),
        observedGeneration: current.metadata.generation,
      },
    ];
    return hub.server.store.updateStatus<ManifestWork>({ ...current, status: { conditions } });
  }

  test('GIVEN a delivered basic app WHEN its ApplicationSet relabels it agent-managed THEN its work is orphaned, deleted only once the agent observed that, and no non-Orphan work is ever deleted', async () => {
    // Every work deletion the server performs, with the work as it was last stored.
    const deleted: ManifestWork[] = [];
    const core = (hub.server.store as unknown as { store: FakeStore }).store;
    const watch = core.watch(
      hub.server.store.definition('manifestworks'),
      {},
      {
        send: (type: WatchEventType, object: KubeObj) => {
          if (type === 'DELETED') deleted.push(structuredClone(object) as unknown as ManifestWork);
        },
        close: () => undefined,
      },
    );
    if (watch.gone) throw new Error('watch refused');

    const appSet = hub.server.store.create<KubeObj>(applicationSet());
    hub.server.store.create(generatedHubApp('east', appSet.metadata.uid));
    hub.controller = await startController({
      kubeConfig: hub.server.kubeConfig(),
      config: { leaderElection: false, relaxTenancy: true },
      logger: silent,
    });
    await hub.controller.ready();
    const name = `${NS}-east-guestbook`;
    const delivered = await waitFor('the basic work', () =>
      hub.server.store.find<ManifestWork>('manifestworks', 'east', name),
    );
    expect(delivered.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
    agentObserves('east', name);
    await waitFor(
      'the cleanup finalizer',
      () =>
        (hub.server.store.get<Application>('applications', NS, 'east-guestbook').metadata.finalizers ?? []).length > 0,
    );

    // WHEN the applicationset-controller applies the agent-managed template (and the principal writes its status)
    const app = hub.server.store.get<Application>('applications', NS, 'east-guestbook');
    delete app.metadata.labels![PULL_LABEL];
    delete app.metadata.annotations![MANAGED_CLUSTER_ANNOTATION];
    app.metadata.labels![DELIVERY_MODEL_LABEL] = 'agent-managed';
    app.spec.destination = { name: 'east', namespace: 'guestbook' };
    const relabelled = hub.server.store.update<Application>(app);
    const principal = hub.server.store.update<Application>({
      ...relabelled,
      status: { sync: { status: 'Synced', revision: 'r1' }, health: { status: 'Healthy' } },
    });

    // THEN step 1: the work is switched to Orphan (a new generation the agent has not observed yet) and kept
    const orphaned = await waitFor('the Orphan work', () => {
      const found = hub.server.store.find<ManifestWork>('manifestworks', 'east', name);
      return found?.spec.deleteOption?.propagationPolicy === 'Orphan' ? found : undefined;
    });
    expect(orphaned.metadata.generation).toBeGreaterThan(delivered.metadata.generation!);
    expect(orphaned.spec.workload).toStrictEqual(delivered.spec.workload);
    expect(deleted).toStrictEqual([]);

    // WHEN the work agent observes it, THEN step 2: the work is deleted
    const observed = agentObserves('east', name);
    await waitFor('the work deleted', () => hub.server.store.find('manifestworks', 'east', name) === undefined);
    // (the one deletion: the Orphan version the agent had observed, so the spoke Application stays)
    expect(
      deleted.map((work) => [
        work.metadata.uid,
        work.metadata.generation,
        work.spec.deleteOption?.propagationPolicy,
        work.status?.conditions?.[0]?.observedGeneration,
      ]),
    ).toStrictEqual([[observed.metadata.uid, observed.metadata.generation, 'Orphan', observed.metadata.generation]]);
    // AND the hub app the principal owns was never written by the controller (same resourceVersion), and keeps the finalizer
    const after = hub.server.store.get<Application>('applications', NS, 'east-guestbook');
    expect(after.metadata.resourceVersion).toBe(principal.metadata.resourceVersion);
    expect(after.status).toStrictEqual(principal.status);
    watch.stop();
  });
});

describe('an ApplicationSet-generated app taken back from agent-managed to basic against the fake API server', () => {
  const hub = hubWithEast();

  test("GIVEN an agent-managed app WHEN step 1 relabels it basic but still routed to the agent THEN its work stands by (CreateOnly, Orphan, agent destination) and the hub app status stays the principal's; WHEN step 2 drops the routing THEN the same work switches to server-side apply and Foreground, and no work is ever deleted", async () => {
    const core = (hub.server.store as unknown as { store: FakeStore }).store;
    const deleted: ManifestWork[] = [];
    const appEvents: Application[] = [];
    const workWatch = core.watch(
      hub.server.store.definition('manifestworks'),
      {},
      {
        send: (type: WatchEventType, object: KubeObj) => {
          if (type === 'DELETED') deleted.push(structuredClone(object) as unknown as ManifestWork);
        },
        close: () => undefined,
      },
    );
    const appWatch = core.watch(
      hub.server.store.definition('applications'),
      {},
      {
        send: (type: WatchEventType, object: KubeObj) => {
          if (type === 'MODIFIED') appEvents.push(structuredClone(object) as unknown as Application);
        },
        close: () => undefined,
      },
    );
    if (workWatch.gone || appWatch.gone) throw new Error('watch refused');

    // GIVEN the app as the agent-managed template renders it, with the status the principal mirrors
    const appSet = hub.server.store.create<KubeObj>(applicationSet());
    const generated = generatedHubApp('east', appSet.metadata.uid);
    delete generated.metadata.labels![PULL_LABEL];
    delete generated.metadata.annotations![MANAGED_CLUSTER_ANNOTATION];
    delete generated.metadata.annotations!['argocd.argoproj.io/skip-reconcile'];
    generated.metadata.labels![DELIVERY_MODEL_LABEL] = 'agent-managed';
    generated.spec.destination = { name: 'east', namespace: 'guestbook' };
    const agentApp = hub.server.store.create<Application>(generated);
    const principalStatus = { sync: { status: 'Synced', revision: 'r1' }, health: { status: 'Healthy' } };
    hub.server.store.update<Application>({ ...agentApp, status: principalStatus });
    hub.controller = await startController({
      kubeConfig: hub.server.kubeConfig(),
      config: { leaderElection: false, relaxTenancy: true },
      logger: silent,
    });
    await hub.controller.ready();

    // WHEN the applicationset-controller applies the step-1 template (basic, still routed to the agent)
    const app = hub.server.store.get<Application>('applications', NS, 'east-guestbook');
    app.metadata.labels![PULL_LABEL] = 'true';
    app.metadata.labels![DELIVERY_MODEL_LABEL] = 'basic';
    app.metadata.annotations = {
      ...app.metadata.annotations,
      [MANAGED_CLUSTER_ANNOTATION]: 'east',
      'pullfleet.io/stand-by': 'true',
      'apps.open-cluster-management.io/destination-name': 'in-cluster',
    };
    app.operation = { sync: { revision: 'r2' } };
    hub.server.store.update<Application>(app);

    // THEN the work stands by: created only if missing, orphaning on delete, with the agent's destination
    const name = `${NS}-east-guestbook`;
    const standBy = await waitFor('the stand-by work', () =>
      hub.server.store.find<ManifestWork>('manifestworks', 'east', name),
    );
    expect(standBy.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
    expect(standBy.spec.manifestConfigs![0].updateStrategy).toStrictEqual({ type: 'CreateOnly' });
    const payload = standBy.spec.workload.manifests.at(-1) as unknown as Application;
    expect(payload.spec.destination).toStrictEqual({ name: 'in-cluster', namespace: 'guestbook' });
    // the principal forwards operations while the agent may hold the app: none goes through the work
    expect(payload.operation).toBeUndefined();
    // the spoke reports, as it does for any work
    const feedback = {
      ...standBy,
      status: {
        conditions: [
          {
            type: 'Applied',
            status: 'True',
            reason: 'AppliedManifestWorkComplete',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            observedGeneration: standBy.metadata.generation,
          },
        ],
        resourceStatus: {
          manifests: [
            {
              resourceMeta: {
                ordinal: standBy.spec.workload.manifests.length - 1,
                group: 'argoproj.io',
                resource: 'applications',
                kind: 'Application',
                version: 'v1alpha1',
                namespace: NS,
                name: 'east-guestbook',
              },
              statusFeedback: {
                values: [{ name: 'healthStatus', fieldValue: { type: 'String', string: 'Degraded' } }],
              },
              conditions: [],
            },
          ],
        },
      },
    };
    hub.server.store.updateStatus<ManifestWork>(feedback);
    await waitFor(
      'the cleanup finalizer',
      () =>
        (hub.server.store.get<Application>('applications', NS, 'east-guestbook').metadata.finalizers ?? []).length > 0,
    );

    // WHEN step 2: the normal basic template (skip-reconcile, in-cluster destination), the agent destination kept
    const step2 = hub.server.store.get<Application>('applications', NS, 'east-guestbook');
    const { ['pullfleet.io/stand-by']: _adopt, ...annotations } = step2.metadata.annotations!;
    step2.metadata.annotations = { ...annotations, 'argocd.argoproj.io/skip-reconcile': 'true' };
    step2.spec.destination = { server: 'https://kubernetes.default.svc', namespace: 'guestbook' };
    delete step2.operation;
    hub.server.store.update<Application>(step2);

    // THEN the same work is switched in place
    const switched = await waitFor('the Foreground work', () => {
      const found = hub.server.store.find<ManifestWork>('manifestworks', 'east', name);
      return found?.spec.deleteOption?.propagationPolicy === 'Foreground' ? found : undefined;
    });
    expect(switched.metadata.uid).toBe(standBy.metadata.uid);
    expect(switched.spec.manifestConfigs![0].updateStrategy!.type).toBe('ServerSideApply');
    expect((switched.spec.workload.manifests.at(-1) as unknown as Application).spec.destination).toStrictEqual({
      name: 'in-cluster',
      namespace: 'guestbook',
    });
    // AND the controller now writes the status from the work's feedback
    await waitFor(
      'the status from feedback',
      () =>
        hub.server.store.get<Application>('applications', NS, 'east-guestbook').status?.health?.status === 'Degraded',
    );
    // AND no work was ever deleted, and while the app was adopting, its status was only ever the principal's
    expect(deleted).toStrictEqual([]);
    const adopting = appEvents.filter((event) => event.metadata.annotations?.['pullfleet.io/stand-by'] === 'true');
    expect(adopting.length).toBeGreaterThan(0);
    for (const event of adopting) expect(event.status).toStrictEqual(principalStatus);
    // AND the operation on the hub app was left to the principal
    expect(adopting.every((event) => event.operation !== undefined)).toBe(true);
    workWatch.stop();
    appWatch.stop();
  });
});

describe('an ApplicationSet-generated app taken back from agent-autonomous to basic against the fake API server', () => {
  const hub = hubWithEast();

  test('GIVEN a standing-by app that is not routed to an agent THEN its work is CreateOnly and Orphan with the in-cluster server, and the controller writes the hub app status from the work feedback (no principal owns it)', async () => {
    const appSet = hub.server.store.create<KubeObj>(applicationSet());
    const generated = generatedHubApp('east', appSet.metadata.uid);
    generated.metadata.annotations = { ...generated.metadata.annotations, 'pullfleet.io/stand-by': 'true' };
    hub.server.store.create<Application>(generated);
    hub.controller = await startController({
      kubeConfig: hub.server.kubeConfig(),
      config: { leaderElection: false, relaxTenancy: true },
      logger: silent,
    });
    await hub.controller.ready();
    const name = `${NS}-east-guestbook`;
    const standBy = await waitFor('the stand-by work', () =>
      hub.server.store.find<ManifestWork>('manifestworks', 'east', name),
    );
    expect(standBy.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
    expect(standBy.spec.manifestConfigs![0].updateStrategy).toStrictEqual({ type: 'CreateOnly' });
    expect((standBy.spec.workload.manifests.at(-1) as unknown as Application).spec.destination).toStrictEqual({
      server: 'https://kubernetes.default.svc',
      namespace: 'guestbook',
    });
    const feedback = {
      ...standBy,
      status: {
        conditions: [
          {
            type: 'Applied',
            status: 'True',
            reason: 'AppliedManifestWorkComplete',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            observedGeneration: standBy.metadata.generation,
          },
        ],
        resourceStatus: {
          manifests: [
            {
              resourceMeta: {
                ordinal: standBy.spec.workload.manifests.length - 1,
                group: 'argoproj.io',
                resource: 'applications',
                kind: 'Application',
                version: 'v1alpha1',
                namespace: NS,
                name: 'east-guestbook',
              },
              statusFeedback: {
                values: [
                  { name: 'healthStatus', fieldValue: { type: 'String', string: 'Healthy' } },
                  { name: 'syncStatus', fieldValue: { type: 'String', string: 'Synced' } },
                ],
              },
              conditions: [],
            },
          ],
        },
      },
    };
    hub.server.store.updateStatus<ManifestWork>(feedback);
    const app = await waitFor('the status from feedback', () => {
      const found = hub.server.store.get<Application>('applications', NS, 'east-guestbook');
      return found.status?.health?.status === 'Healthy' ? found : undefined;
    });
    expect(app.status?.sync?.status).toBe('Synced');
  });
});
