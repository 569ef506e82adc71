/**
 * Reconciler hardening through the real controller (manager, informers, queue) against the fake API
 * server: an operation survives a controller restart until the spoke starts it, and a ManagedCluster
 * leaving the app's set keeps what is delivered and says why. (That ManagedCluster status updates wake
 * nothing is measured by `npm run bench:controller` and checked on the routing itself in
 * reconcilers/application-hardening.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { destination, pino } from 'pino';
import { startController, type RunningController } from '../../src/controller/runtime/manager.js';
import { fleetReportCrd } from '../../src/model/report/report-crd.js';
import { FORWARDED_OPERATION_ANNOTATION } from '../../src/model/reconcile/propagation.js';
import { DELIVERY_ERROR_CONDITION } from '../../src/model/reconcile/status.js';
import { kubeTime } from '../../src/model/core/time.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../double/fake-apiserver.js';
import {
  seedClusterSet,
  seedManagedCluster,
  seedNamespaces,
  seedPullApplication,
  seedWorkFeedback,
} from '../double/hub-seed.js';
import { waitFor } from '../support/wait.js';

const silent = pino({ level: process.env.E2E_LOG ?? 'silent' }, destination(2));
const CLUSTER = { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster' };

function seedHub(server: FakeApiServer): void {
  const store = server.store;
  store.registerCrd(fleetReportCrd());
  // As on a real hub: the Argo CD namespace and each accepted cluster's namespace exist.
  seedNamespaces(store, ['argocd', 'spoke1', 'spoke2']);
  seedClusterSet(store, 'prod');
  for (const name of ['spoke1', 'spoke2']) seedManagedCluster(store, name, 'prod');
}

function createApp(server: FakeApiServer, name: string, cluster: string, extra: Record<string, unknown> = {}): void {
  seedPullApplication(server.store, { name, cluster, extra });
}

/** Plays the OCM work agent: writes the spoke Application's operation state into the work's feedback. */
function agentReports(server: FakeApiServer, cluster: string, app: string, startedAt: string): void {
  seedWorkFeedback(server.store, cluster, app, {
    healthStatus: 'Healthy',
    operationStatePhase: 'Succeeded',
    operationStateStartedAt: startedAt,
  });
}

const hubApp = (server: FakeApiServer, name: string) => server.store.find<KubeObj>('applications', 'argocd', name);
const payloadOperation = (server: FakeApiServer, cluster: string, name: string) =>
  (
    server.store.find<KubeObj>('manifestworks', cluster, `argocd-${name}`)?.spec?.workload?.manifests?.at(-1) as
      { operation?: unknown } | undefined
  )?.operation;

describe('reconcile hardening through the real controller', () => {
  let server: FakeApiServer;
  const running: RunningController[] = [];

  beforeEach(async () => {
    server = await startFakeApiServer();
    seedHub(server);
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((controller) => controller.stop()));
    await server.close();
  });

  async function start(): Promise<RunningController> {
    const controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { leaderElection: false },
      logger: silent,
    });
    running.push(controller);
    await controller.ready();
    return controller;
  }

  test('GIVEN a forwarded operation WHEN the controller restarts before the spoke starts it THEN it is still forwarded, and leaves once the spoke starts it', async () => {
    createApp(server, 'a', 'spoke1', { operation: { sync: { revision: 'v2' } } });
    const first = await start();
    await waitFor(
      'operation recorded and in the work',
      () =>
        hubApp(server, 'a')?.metadata.annotations?.[FORWARDED_OPERATION_ANNOTATION] &&
        payloadOperation(server, 'spoke1', 'a'),
    );
    await first.stop();
    running.splice(running.indexOf(first), 1);

    // Nobody touches anything while the controller is down; a new process must carry on from the hub app alone.
    await start();
    expect(hubApp(server, 'a')!.operation).toStrictEqual({ sync: { revision: 'v2' } });
    // Forwarded with the controller's mark, which the spoke's operation state echoes back.
    expect(payloadOperation(server, 'spoke1', 'a')).toStrictEqual({
      sync: { revision: 'v2' },
      info: [{ name: 'pullfleet.io/forwarded', value: expect.stringMatching(/^[0-9a-f]{12}$/) }],
    });

    agentReports(server, 'spoke1', 'a', kubeTime(new Date()));
    await waitFor(
      'operation taken',
      () => hubApp(server, 'a')!.operation === undefined && payloadOperation(server, 'spoke1', 'a') === undefined,
      {
        describe: () => hubApp(server, 'a'),
      },
    );
    expect(hubApp(server, 'a')!.metadata.annotations?.[FORWARDED_OPERATION_ANNOTATION]).toBeUndefined();
  });

  test('GIVEN a delivered app WHEN its cluster leaves the bound set THEN the work stays and the app says why; WHEN it comes back THEN the condition goes', async () => {
    createApp(server, 'a', 'spoke1');
    await start();
    await waitFor('work a', () => server.store.find('manifestworks', 'spoke1', 'argocd-a'));
    const cluster = server.store.get<KubeObj>(CLUSTER, undefined, 'spoke1');
    server.store.update({
      ...cluster,
      metadata: { ...cluster.metadata, labels: { 'cluster.open-cluster-management.io/clusterset': 'dev' } },
    });
    await waitFor('DeliveryError', () =>
      hubApp(server, 'a')?.status?.conditions?.find((c: { type: string }) => c.type === DELIVERY_ERROR_CONDITION),
    );
    expect(server.store.find('manifestworks', 'spoke1', 'argocd-a')).toBeDefined();
    const back = server.store.get<KubeObj>(CLUSTER, undefined, 'spoke1');
    server.store.update({
      ...back,
      metadata: { ...back.metadata, labels: { 'cluster.open-cluster-management.io/clusterset': 'prod' } },
    });
    await waitFor(
      'condition gone',
      () =>
        !hubApp(server, 'a')?.status?.conditions?.some((c: { type: string }) => c.type === DELIVERY_ERROR_CONDITION),
    );
  });
});
