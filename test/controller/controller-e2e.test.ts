/**
 * The real controller (HTTP client, informers, queue, leader election) against the in-process fake API
 * server: apps become works, feedback becomes hub status, watches expire, replicas take turns, restarts
 * lose nothing.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { destination, pino } from 'pino';
import { startController, type RunningController } from '../../src/controller/runtime/manager.js';
import { CLEANUP_FINALIZER } from '../../src/model/core/keys.js';
import { fleetReportCrd } from '../../src/model/report/report-crd.js';
import { kubeMicroTime } from '../../src/model/core/time.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../double/fake-apiserver.js';
import { seedClusterSet, seedManagedCluster, seedPullApplication, seedWorkFeedback } from '../double/hub-seed.js';
import { waitFor } from '../support/wait.js';

const silent = pino({ level: process.env.E2E_LOG ?? 'silent' }, destination(2));
const FAST = { retryPeriodSeconds: 0.1, leaseDurationSeconds: 2, renewDeadlineSeconds: 1 };

function seedHub(server: FakeApiServer, clusters: string[]): void {
  const store = server.store;
  // The controller's install ships this CRD; the fake serves it once registered.
  store.registerCrd(fleetReportCrd());
  seedClusterSet(store, 'prod');
  for (const name of clusters) seedManagedCluster(store, name, 'prod');
}

function createApp(server: FakeApiServer, name: string, cluster: string): void {
  seedPullApplication(server.store, { name, cluster });
}

/** Plays the OCM work agent: writes feedback into the work status. */
function agentReports(server: FakeApiServer, cluster: string, app: string, health: string): void {
  seedWorkFeedback(server.store, cluster, app, { healthStatus: health, syncStatus: 'Synced' });
}

const health = (server: FakeApiServer, app: string) =>
  server.store.find<KubeObj>('applications', 'argocd', app)?.status?.health?.status as string | undefined;

describe('controller against the fake API server', () => {
  let server: FakeApiServer;
  const running: RunningController[] = [];

  beforeEach(async () => {
    server = await startFakeApiServer({ implicitNamespaces: true });
    seedHub(server, ['spoke1', 'spoke2']);
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((controller) => controller.stop()));
    await server.close();
  });

  async function start(config: Record<string, unknown> = {}): Promise<RunningController> {
    const controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { ...FAST, ...config },
      logger: silent,
    });
    running.push(controller);
    return controller;
  }

  test('GIVEN pull apps WHEN the controller runs THEN works appear and feedback reaches the hub status', async () => {
    createApp(server, 'a', 'spoke1');
    createApp(server, 'b', 'spoke2');
    const controller = await start();
    await controller.ready();
    await waitFor(
      'both works',
      () =>
        server.store.find('manifestworks', 'spoke1', 'argocd-a') &&
        server.store.find('manifestworks', 'spoke2', 'argocd-b'),
    );
    agentReports(server, 'spoke1', 'a', 'Healthy');
    await waitFor('hub status of a', () => health(server, 'a') === 'Healthy');
    expect(server.store.get<KubeObj>('applications', 'argocd', 'a').metadata.finalizers).toStrictEqual([
      CLEANUP_FINALIZER,
    ]);
    expect(await controller.metrics()).toMatch(
      /pullfleet_reconcile_total\{controller="application",result="success"\} \d+/,
    );
  });

  test('GIVEN a watch that expires (410 Gone) WHEN apps change afterwards THEN the controller relists and keeps up', async () => {
    const controller = await start({ leaderElection: false });
    await controller.ready();
    server.expireWatches();
    createApp(server, 'late', 'spoke1');
    await waitFor('work after expiry', () => server.store.find('manifestworks', 'spoke1', 'argocd-late'));
  });

  test('GIVEN a controller stopped mid-stream WHEN things change and a new one starts THEN nothing is lost or duplicated', async () => {
    createApp(server, 'a', 'spoke1');
    const first = await start();
    await first.ready();
    await waitFor('work a', () => server.store.find('manifestworks', 'spoke1', 'argocd-a'));
    await first.stop();
    createApp(server, 'b', 'spoke2');
    agentReports(server, 'spoke1', 'a', 'Degraded');
    server.store.delete('manifestworks', 'spoke1', 'argocd-a');
    {
      const second = await start();
      await second.ready();
      await waitFor(
        'work b and recreated work a',
        () =>
          server.store.find('manifestworks', 'spoke2', 'argocd-b') &&
          server.store.find('manifestworks', 'spoke1', 'argocd-a'),
      );
    }
    expect(
      server.store
        .list<KubeObj>('manifestworks')
        .map((work) => `${work.metadata.namespace}/${work.metadata.name}`)
        .sort(),
    ).toStrictEqual(['spoke1/argocd-a', 'spoke2/argocd-b']);
    agentReports(server, 'spoke2', 'b', 'Healthy');
    await waitFor('status of b', () => health(server, 'b') === 'Healthy');
  });

  test('GIVEN two replicas WHEN both run THEN one leads; WHEN it stops THEN the other takes over', async () => {
    const one = await start({ identity: 'one' });
    await one.ready();
    const two = await start({ identity: 'two' });
    createApp(server, 'a', 'spoke1');
    await waitFor('work a', () => server.store.find('manifestworks', 'spoke1', 'argocd-a'));
    expect(server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller').spec.holderIdentity).toBe(
      'one',
    );
    expect(await two.metrics()).toMatch(/pullfleet_leader 0/);
    await one.stop();
    await two.ready();
    createApp(server, 'b', 'spoke2');
    await waitFor('work b from the second replica', () => server.store.find('manifestworks', 'spoke2', 'argocd-b'));
    expect(server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller').spec.holderIdentity).toBe(
      'two',
    );
  });

  test('GIVEN a leader WHEN another holder takes its Lease THEN it stops reconciling and reports the loss', async () => {
    let lost = false;
    const controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { ...FAST, identity: 'one' },
      logger: silent,
      onLeadershipLost: () => (lost = true),
    });
    running.push(controller);
    await controller.ready();
    const lease = server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller');
    const steal = () => {
      const current = server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller');
      server.store.update({
        ...current,
        spec: {
          ...current.spec,
          holderIdentity: 'intruder',
          renewTime: kubeMicroTime(new Date()),
          leaseDurationSeconds: 60,
        },
      });
    };
    expect(lease.spec.holderIdentity).toBe('one');
    steal();
    await waitFor('leadership loss', () => lost);
    expect(await controller.metrics()).toMatch(/pullfleet_leader 0/);
    expect(server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller').spec.holderIdentity).toBe(
      'intruder',
    );
  });

  test('GIVEN a settled fleet WHEN a full resync runs THEN nothing is written', async () => {
    for (let i = 0; i < 20; i++) createApp(server, `app${i}`, i % 2 ? 'spoke1' : 'spoke2');
    const controller = await start({ leaderElection: false, resyncSeconds: 0.3 });
    await controller.ready();
    await waitFor('20 works with status', () =>
      server.store.list<KubeObj>('applications').every((app) => app.status?.health?.status === 'Unknown'),
    );
    const writes = () => server.writeCount('manifestworks') + server.writeCount('applications');
    const settled = writes();
    const resyncs = async () =>
      Number(
        /pullfleet_reconcile_total\{controller="application",result="success"\} (\d+)/.exec(
          await controller.metrics(),
        )?.[1] ?? 0,
      );
    const before = await resyncs();
    await waitFor('two more resync rounds', async () => (await resyncs()) >= before + 40);
    expect(writes()).toBe(settled);
  });

  test('GIVEN an HTTP port WHEN probed THEN /healthz, /readyz and /metrics answer', async () => {
    // Port 0: the system picks a free one (a fixed port can be taken by another process on a busy machine).
    const controller = await start({ leaderElection: false, httpPort: 0, httpHost: '127.0.0.1' });
    await controller.ready();
    const port = controller.httpPort()!;
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return [response.status, await response.text()] as const;
    };
    expect(await get('/healthz')).toStrictEqual([200, 'ok\n']);
    expect(await get('/readyz')).toStrictEqual([200, 'ok (leader)\n']);
    const [status, body] = await get('/metrics');
    expect(status).toBe(200);
    expect(body).toContain('pullfleet_queue_depth');
    expect(body).toContain('pullfleet_status_latency_seconds_bucket');
  });
});
