/**
 * `npm run bench:controller`: the real controller (its own process, started through bin/ with
 * --kubeconfig) against the in-process fake API server with CLUSTERS x APPS_PER_CLUSTER hub Applications.
 * Prints: time until every ManifestWork exists, p50/p99 latency from a feedback change (written as the
 * OCM work agent would) to the hub Application status, API writes per real change, API writes during a
 * full resync with nothing changed, reconciles caused by ManagedCluster status updates (every cluster's
 * agent updates its ManagedCluster once a minute on a real hub; here all of them within STATUS_WINDOW_MS,
 * with nothing else changing), and the controller's peak memory (VmHWM).
 *
 *   npm run bench:controller                  # 1,000 clusters x 10 apps
 *   npm run bench:controller -- 100 10        # smaller
 */
import { APPLICATION } from '../src/kube/resources.js';
import { KubeClient } from '../src/kube/client.js';
import { manifestWorkName } from '../src/model/core/names.js';
import { type Application } from '../src/model/core/types.js';
import { type KubeObj } from '../test/double/fake-apiserver.js';
import { seedWorkFeedback } from '../test/double/hub-seed.js';
import {
  clusterName,
  cpuMs,
  createHubApplication,
  createManagedCluster,
  iso,
  percentile,
  samplePeakMemory,
  sleep,
  spawnController,
  startBenchApiServer,
  until,
  waitForReadyz,
  writeCount,
} from './support.js';

const CLUSTERS = Number(process.argv[2] ?? 1000);
const APPS_PER_CLUSTER = Number(process.argv[3] ?? 10);
const CHANGES = 500;
const CHANGE_INTERVAL_MS = 20;
const RESYNC_SECONDS = 30;
/** Every ManagedCluster's status update of one real minute, compressed into this window. */
const STATUS_WINDOW_MS = 10_000;

const server = await startBenchApiServer();
const store = server.store;
const apps: Array<{ name: string; cluster: string }> = [];
for (let c = 0; c < CLUSTERS; c++) {
  const cluster = clusterName(c);
  createManagedCluster(store, cluster);
  for (let a = 0; a < APPS_PER_CLUSTER; a++) {
    apps.push({ name: createHubApplication(store, cluster, a).metadata.name, cluster });
  }
}
const total = apps.length;
const port = 30000 + (process.pid % 20000);
const controllerWrites = () => writeCount(server);

console.log(
  `pullfleet-controller benchmark: ${CLUSTERS} clusters x ${APPS_PER_CLUSTER} apps = ${total} hub Applications`,
);
const started = Date.now();
const controller = spawnController(server, port, { args: [`--resync=${RESYNC_SECONDS}`] });
/** User + system CPU of the controller process so far, in ms. */
const childCpuMs = () => cpuMs(controller.child.pid);
const memory = samplePeakMemory(controller.child.pid);

try {
  await waitForReadyz(port);
  const readyAt = Date.now();
  const cpuAtReady = { server: process.cpuUsage(), controller: childCpuMs() };
  const expected = new Set(apps.map((app) => `${app.cluster}/${manifestWorkName('argocd', app.name)}`));
  // Cheap trigger first (request counters), then confirm against the store itself.
  await until(
    `${total} work applies`,
    () => server.requestCount({ verb: 'patch', resource: 'manifestworks' }) >= total,
    120000,
    20,
  );
  await until(
    `${total} works`,
    () =>
      store
        .list<KubeObj>('manifestworks')
        .filter((work) => expected.has(`${work.metadata.namespace}/${work.metadata.name}`)).length === total,
    120000,
    20,
  );
  const worksAt = Date.now();
  console.log(
    `all ${total} works exist: ${((worksAt - started) / 1000).toFixed(2)} s after start (${((worksAt - readyAt) / 1000).toFixed(2)} s after ready)`,
  );
  const serverCpu = process.cpuUsage(cpuAtReady.server);
  console.log(
    `  CPU meanwhile: fake API server + bench ${((serverCpu.user + serverCpu.system) / 1e6).toFixed(1)} s, controller ${((childCpuMs() - cpuAtReady.controller) / 1000).toFixed(1)} s`,
  );

  // Settled: every app shows status and the controller has stopped writing.
  await until(
    'hub status on every app',
    () => store.list<KubeObj>('applications').every((app) => app.status?.sync?.status),
    120000,
    250,
  );
  let last = -1;
  await until(
    'writes to stop',
    () => {
      const now = controllerWrites();
      const stable = now === last;
      last = now;
      return stable;
    },
    60000,
    1000,
  );
  const initialWrites = controllerWrites();
  console.log(
    `initial propagation: ${initialWrites} writes for ${total} apps (${(initialWrites / total).toFixed(2)} per app: finalizer, work, status)`,
  );

  // Feedback changes: the "work agent" writes a new revision into one work's feedback; time until the hub app shows it.
  const client = new KubeClient(server.kubeConfig());
  const pending = new Map<string, { revision: string; at: number }>();
  const latencies: number[] = [];
  const abort = new AbortController();
  const watchDone = client
    .watch<Application>(
      APPLICATION,
      { namespace: 'argocd' },
      store.resourceVersion,
      (event) => {
        const app = event.object;
        const want = pending.get(app.metadata.name);
        if (want && app.status?.sync?.revision === want.revision) {
          latencies.push(performance.now() - want.at);
          pending.delete(app.metadata.name);
        }
      },
      abort.signal,
      3600,
    )
    .catch(() => undefined);
  await sleep(200);
  const beforeChanges = controllerWrites();
  for (let i = 0; i < CHANGES; i++) {
    const app = apps[(i * 7919) % total];
    const revision = `rev-${i}`;
    pending.set(app.name, { revision, at: performance.now() });
    seedWorkFeedback(store, app.cluster, app.name, {
      healthStatus: 'Healthy',
      syncStatus: 'Synced',
      syncRevision: revision,
    });
    await sleep(CHANGE_INTERVAL_MS);
  }
  await until('every change on its hub app', () => pending.size === 0, 60000, 50);
  await sleep(1500);
  const changeWrites = controllerWrites() - beforeChanges;
  console.log(
    `feedback -> hub status over ${CHANGES} changes (${1000 / CHANGE_INTERVAL_MS}/s): p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
  );
  console.log(
    `writes per real change: ${(changeWrites / CHANGES).toFixed(2)} (${changeWrites} writes for ${CHANGES} changes)`,
  );
  abort.abort();
  await watchDone;
  client.close();

  // A full resync with nothing changed must write nothing.
  const metricsText = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const successes = async () =>
    Number(
      /pullfleet_reconcile_total\{controller="application",result="success"\} (\d+)/.exec(await metricsText())?.[1] ??
        0,
    );
  const beforeResync = controllerWrites();
  const reconcilesBefore = await successes();
  await until(
    'one full resync',
    async () => (await successes()) >= reconcilesBefore + total,
    (RESYNC_SECONDS + 60) * 1000,
    500,
  );
  console.log(
    `writes during a full resync with no change: ${controllerWrites() - beforeResync} (${(await successes()) - reconcilesBefore} reconciles)`,
  );

  // ManagedCluster status updates (cluster agents' heartbeats and conditions) while nothing else changes:
  // they change nothing tenancy or delivery reads, so they must cause (about) no reconcile and no write.
  const allReconciles = async () =>
    [...(await metricsText()).matchAll(/^pullfleet_reconcile_total\{[^}]*\} (\d+)/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
  await sleep(1000);
  const reconcilesBeforeStatus = await allReconciles();
  const writesBeforeStatus = controllerWrites();
  const statusStart = performance.now();
  for (let c = 0; c < CLUSTERS; c++) {
    const name = clusterName(c);
    const cluster = store.get<KubeObj>(
      { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster' },
      undefined,
      name,
    );
    const beat = iso(new Date(Date.now()));
    cluster.status = {
      conditions: [
        {
          type: 'ManagedClusterConditionAvailable',
          status: 'True',
          reason: 'ManagedClusterAvailable',
          message: 'Managed cluster is available',
          lastTransitionTime: '2026-03-01T12:00:00Z',
        },
        {
          type: 'ManagedClusterJoined',
          status: 'True',
          reason: 'ManagedClusterJoined',
          message: 'Managed cluster joined',
          lastTransitionTime: '2026-03-01T12:00:00Z',
        },
      ],
      allocatable: { cpu: `${8 + (c % 3)}`, memory: '32Gi' },
      capacity: { cpu: '16', memory: '64Gi' },
      version: { kubernetes: 'v1.30.2' },
      clusterClaims: [{ name: 'heartbeat.example.com', value: beat }],
    };
    store.updateStatus(cluster);
    // Spread evenly over the window, as a real hub sees them over a minute.
    const due = statusStart + ((c + 1) * STATUS_WINDOW_MS) / CLUSTERS;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
  }
  await sleep(2000);
  const statusSeconds = (performance.now() - statusStart) / 1000;
  const statusReconciles = (await allReconciles()) - reconcilesBeforeStatus;
  console.log(
    `ManagedCluster status updates: ${CLUSTERS} in ${(STATUS_WINDOW_MS / 1000).toFixed(0)} s (${(CLUSTERS / (STATUS_WINDOW_MS / 1000)).toFixed(0)}/s): ` +
      `${statusReconciles} reconciles (${(statusReconciles / statusSeconds).toFixed(2)}/s over ${statusSeconds.toFixed(1)} s), ${controllerWrites() - writesBeforeStatus} writes`,
  );
  console.log(`controller peak memory (VmHWM): ${(memory.peakKiB() / 1024).toFixed(0)} MiB`);
} finally {
  memory.stop();
  await controller.stop();
  await server.close();
}
