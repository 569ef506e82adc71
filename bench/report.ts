/**
 * `npx tsx bench/report.ts [clusters] [changes]`: the fleet report at scale.
 *
 * 1. Pure aggregation: computeFleetReport for one ApplicationSet over 500 / 2,000 / 5,000 clusters, for
 *    basic (pull) clusters, agent-model clusters (rows from the hub Application status) and a 50/50 mix.
 * 2. End to end: the controller (in process) against the in-process fake API server with one pull
 *    ApplicationSet over CLUSTERS clusters (decisions split into PlacementDecisions of 100). Prints the
 *    time until the first complete report, p50/p95/max latency from a feedback change (written as the
 *    OCM work agent would) to the report row showing it, and FleetReport writes per change.
 * 1c. Rows of agent-autonomous spokes for `pullfleet status`: 2,000 spokes x 10 Applications, each
 *    spoke's expected list parsed from its ConfigMap, one Application in ten not mirrored (Missing).
 * 3. End to end, agent model: an agent-managed ApplicationSet over AGENT_CLUSTERS (default 2,000) hub
 *    Applications whose status changes as the argocd-agent principal would write it; time to the first
 *    complete report and latency from a status change to the row showing it.
 */
import { pino } from 'pino';
import { startController } from '../src/controller/runtime/manager.js';
import { manifestWorkName } from '../src/model/core/names.js';
import { fleetReportCrd } from '../src/model/report/report-crd.js';
import { agentApplicationRows, computeFleetReport, type FleetReport } from '../src/model/report/report.js';
import {
  buildExpectedApplicationsConfigMap,
  EXPECTED_APPLICATIONS_LABEL,
  parseExpectedApplications,
} from '../src/model/reconcile/expected-apps.js';
import { startFakeApiServer, type KubeObj } from '../test/double/fake-apiserver.js';
import { applicationSet, APPSET, decision, generatedHubApp, hubApp, NS, work } from '../test/model/report/fixtures.js';
import { agentApp, agentAppSet, mirrored } from '../test/model/report/agent-fixtures.js';
import { clusterName, iso, percentile, sleep } from './support.js';

const CLUSTERS = Number(process.argv[2] ?? 500);
const CHANGES = Number(process.argv[3] ?? 100);
const AGENT_CLUSTERS = Number(process.argv[4] ?? 2000);

async function until(what: string, check: () => boolean, timeoutMs: number, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------- 1. pure aggregation
for (const size of [500, 2000, 5000]) {
  const clusters = Array.from({ length: size }, (_, i) => clusterName(i));
  const decisions = Array.from({ length: Math.ceil(size / 100) }, (_, d) =>
    decision(`prod-decision-${d + 1}`, clusters.slice(d * 100, d * 100 + 100)),
  );
  const apps = clusters.map((c) => hubApp(c));
  const now = new Date();
  const works = clusters.map((c, i) =>
    work(
      c,
      { health: i % 10 === 0 ? 'Degraded' : 'Healthy', sync: 'Synced', revision: 'abc123', reconciledAt: iso(now) },
      { applied: 'True', available: 'True' },
    ),
  );
  const input = { applicationSet: applicationSet(), decisions, applications: apps, works, now };
  computeFleetReport(input); // warm up
  const runs = 20;
  const start = process.hrtime.bigint();
  let report: FleetReport | undefined;
  for (let r = 0; r < runs; r++) report = computeFleetReport(input)!.report;
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / runs;
  console.log(
    `computeFleetReport ${size} clusters: ${ms.toFixed(1)} ms per report, status ${(JSON.stringify(report!.status).length / 1024).toFixed(0)} KiB`,
  );
}

// ---------------------------------------------------------------- 1b. pure aggregation, agent model and mixed
for (const [label, size, agentShare] of [
  ['agent-model', 500, 1],
  ['agent-model', 2000, 1],
  ['agent-model', 5000, 1],
  ['mixed basic + agent', 2000, 0.5],
] as const) {
  const clusters = Array.from({ length: size }, (_, i) => clusterName(i));
  const now = new Date();
  const agentCount = Math.round(size * agentShare);
  const agentOnes = clusters.slice(0, agentCount);
  const basicOnes = clusters.slice(agentCount);
  const status = (i: number) =>
    mirrored({
      sync: 'Synced',
      health: i % 10 === 0 ? 'Degraded' : 'Healthy',
      revision: 'abc123',
      phase: 'Succeeded',
      reconciledAt: iso(now),
    });
  const apps = [
    ...agentOnes.map((c, i) => agentApp(c, status(i), { appSet: APPSET })),
    ...basicOnes.map((c) => hubApp(c)),
  ];
  const works = basicOnes.map((c, i) =>
    work(
      c,
      { health: i % 10 === 0 ? 'Degraded' : 'Healthy', sync: 'Synced', revision: 'abc123', reconciledAt: iso(now) },
      { applied: 'True', available: 'True' },
    ),
  );
  const appSet = agentShare === 1 ? agentAppSet(APPSET, 'prod') : applicationSet();
  const decisions = Array.from({ length: Math.ceil(size / 100) }, (_, d) =>
    decision(`prod-decision-${d + 1}`, clusters.slice(d * 100, d * 100 + 100)),
  );
  const input = { applicationSet: appSet, decisions, applications: apps, works, now };
  const check = computeFleetReport(input)!.report.status!.summary; // warm up
  if (check.clusters !== size || check.healthy + check.degraded !== size)
    throw new Error(`unexpected ${label} summary: ${JSON.stringify(check)}`);
  const runs = 20;
  const start = process.hrtime.bigint();
  let report: FleetReport | undefined;
  for (let r = 0; r < runs; r++) report = computeFleetReport(input)!.report;
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / runs;
  console.log(
    `computeFleetReport ${size} clusters (${label}): ${ms.toFixed(1)} ms per report, status ${(JSON.stringify(report!.status).length / 1024).toFixed(0)} KiB`,
  );
}

// ---------------------------------------------------------------- 1c. agent-autonomous rows with expected lists
{
  const spokes = 2000;
  const perSpoke = 10;
  const now = new Date();
  const lists = Array.from({ length: spokes }, (_, i) => {
    const spoke = `store-${String(i).padStart(4, '0')}`;
    return buildExpectedApplicationsConfigMap({
      spoke,
      namespace: NS,
      applications: Array.from({ length: perSpoke }, (_, a) => `app-${a}-${spoke}`),
      folder: `dist/hub/spokes/${spoke}`,
    });
  });
  const apps = lists.flatMap((list, i) =>
    list.data.applications
      .split('\n')
      .filter((name, a) => name && (i * perSpoke + a) % 10 !== 0)
      .map((name) => {
        const app = agentApp(
          String(i),
          mirrored({ sync: 'Synced', health: 'Healthy', revision: 'abc123', reconciledAt: iso(now) }),
          { model: 'agent-autonomous', namespace: list.metadata.labels![EXPECTED_APPLICATIONS_LABEL], owned: false },
        );
        app.metadata.name = name;
        return app;
      }),
  );
  const rowsOnce = () =>
    agentApplicationRows(
      apps,
      now,
      undefined,
      lists.map((list) => parseExpectedApplications(list).expected!),
    );
  const check = rowsOnce();
  const missing = check.filter((row) => row.state === 'Missing').length;
  if (check.length !== spokes * perSpoke || missing !== (spokes * perSpoke) / 10)
    throw new Error(`unexpected autonomous rows: ${check.length} rows, ${missing} missing`);
  const runs = 10;
  const start = process.hrtime.bigint();
  for (let r = 0; r < runs; r++) rowsOnce();
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / runs;
  console.log(
    `agent-autonomous rows, ${spokes} spokes x ${perSpoke} expected apps (${missing} missing): ${ms.toFixed(1)} ms (parse ${spokes} lists + rows)`,
  );
}

// ---------------------------------------------------------------- 2. end to end
const server = await startFakeApiServer({ implicitNamespaces: true });
const store = server.store;
store.create(fleetReportCrd());
const appSet = store.create<KubeObj>(applicationSet());
const clusters = Array.from({ length: CLUSTERS }, (_, i) => clusterName(i));
for (let d = 0; d * 100 < CLUSTERS; d++) {
  const created = store.create<KubeObj>(decision(`prod-decision-${d + 1}`, []));
  store.updateStatus({
    ...created,
    status: { decisions: clusters.slice(d * 100, d * 100 + 100).map((clusterName) => ({ clusterName, reason: '' })) },
  });
}
for (const cluster of clusters) {
  store.create({
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: cluster },
    spec: { hubAcceptsClient: true },
  });
  store.create(generatedHubApp(cluster, appSet.metadata.uid));
}

const report = () => store.find<FleetReport>({ apiVersion: 'pullfleet.io/v1alpha1', kind: 'FleetReport' }, NS, APPSET);
const workName = (cluster: string) => manifestWorkName(NS, `${cluster}-${APPSET}`);

/** Writes feedback into a work's status the way the work agent does. */
function feedback(cluster: string, revision: string): void {
  const stored = store.get<KubeObj>('manifestworks', cluster, workName(cluster));
  const reported = work(
    cluster,
    { health: 'Healthy', sync: 'Synced', revision, reconciledAt: iso(new Date()) },
    { applied: 'True', available: 'True' },
  );
  store.updateStatus({ ...stored, status: reported.status });
}

const started = Date.now();
const controller = await startController({
  kubeConfig: server.kubeConfig(),
  config: { leaderElection: false, relaxTenancy: true, clusterSecrets: false },
  logger: pino({ level: 'silent' }),
});
await controller.ready();
await until('every work', () => store.list('manifestworks').length === CLUSTERS, 300_000, 50);
for (const cluster of clusters) feedback(cluster, 'r0');
await until('a complete healthy report', () => report()?.status?.summary.healthy === CLUSTERS, 300_000, 20);
console.log(
  `end to end ${CLUSTERS} clusters: first complete report ${Date.now() - started} ms after start (includes propagating ${CLUSTERS} works)`,
);

const reportWrites = () =>
  server.writeCount('fleetreports.pullfleet.io') + server.writeCount('fleetreports.pullfleet.io/status');
const writesBefore = reportWrites();
const latencies: number[] = [];
for (let i = 1; i <= CHANGES; i++) {
  const cluster = clusters[(i * 7919) % CLUSTERS];
  const revision = `r${i}`;
  const t0 = process.hrtime.bigint();
  feedback(cluster, revision);
  // Cheap check first (a write happened), then the content (cloning the report is not free).
  const seen = reportWrites();
  await until(
    `row ${cluster} at ${revision}`,
    () =>
      reportWrites() > seen && report()?.status?.clusters.find((row) => row.cluster === cluster)?.revision === revision,
    30_000,
    1,
  );
  latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const writes = reportWrites() - writesBefore;
console.log(
  `feedback change -> report (${CHANGES} changes, one at a time): p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms; FleetReport writes per change ${(writes / CHANGES).toFixed(2)}`,
);

// ---------------------------------------------------------------- 3. end to end, agent model
{
  const agentNs = 'agents';
  const agentSet = agentAppSet('edge', 'edge');
  agentSet.metadata.namespace = agentNs;
  const storedSet = store.create<KubeObj>(agentSet);
  const agentClusters = Array.from({ length: AGENT_CLUSTERS }, (_, i) => `agent-${String(i).padStart(4, '0')}`);
  for (let d = 0; d * 100 < AGENT_CLUSTERS; d++) {
    const created = store.create<KubeObj>(decision(`edge-decision-${d + 1}`, [], 'edge', agentNs));
    store.updateStatus({
      ...created,
      status: {
        decisions: agentClusters.slice(d * 100, d * 100 + 100).map((clusterName) => ({ clusterName, reason: '' })),
      },
    });
  }
  const agentStarted = Date.now();
  for (const cluster of agentClusters) {
    const app = agentApp(
      cluster,
      mirrored({ sync: 'Synced', health: 'Healthy', revision: 'r0', reconciledAt: iso(new Date()) }),
      { appSet: 'edge', namespace: agentNs },
    );
    app.metadata.ownerReferences = [
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'ApplicationSet',
        name: 'edge',
        uid: storedSet.metadata.uid!,
        controller: true,
      },
    ];
    delete app.metadata.uid;
    delete app.metadata.creationTimestamp;
    store.create(app);
  }
  const agentReport = () =>
    store.find<FleetReport>({ apiVersion: 'pullfleet.io/v1alpha1', kind: 'FleetReport' }, agentNs, 'edge');
  await until('a complete agent report', () => agentReport()?.status?.summary.healthy === AGENT_CLUSTERS, 300_000, 20);
  console.log(
    `end to end ${AGENT_CLUSTERS} agent-model clusters: first complete report ${Date.now() - agentStarted} ms after the Applications were created; ManifestWorks written for them: ${store.count('manifestworks', {}, (work) => work.metadata.name?.endsWith('-edge') === true)}`,
  );
  const agentLatencies: number[] = [];
  const agentWritesBefore = reportWrites();
  for (let i = 1; i <= CHANGES; i++) {
    const cluster = agentClusters[(i * 7919) % AGENT_CLUSTERS];
    const revision = `a${i}`;
    const t0 = process.hrtime.bigint();
    const stored = store.get<KubeObj & { status?: object }>('applications', agentNs, `${cluster}-edge`);
    store.update({
      ...stored,
      status: mirrored({ sync: 'Synced', health: 'Healthy', revision, reconciledAt: iso(new Date()) }),
    });
    const seen = reportWrites();
    await until(
      `agent row ${cluster} at ${revision}`,
      () =>
        reportWrites() > seen &&
        agentReport()?.status?.clusters.find((row) => row.cluster === cluster)?.revision === revision,
      30_000,
      1,
    );
    agentLatencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(
    `agent status change -> report (${CHANGES} changes, one at a time): p50 ${percentile(agentLatencies, 50).toFixed(1)} ms, p95 ${percentile(agentLatencies, 95).toFixed(1)} ms, max ${Math.max(...agentLatencies).toFixed(1)} ms; FleetReport writes per change ${((reportWrites() - agentWritesBefore) / CHANGES).toFixed(2)}`,
  );
}

const metrics = await controller.metrics();
const sum = Number(
  /pullfleet_reconcile_duration_seconds_sum\{controller="fleet-report"\} ([\d.e+-]+)/.exec(metrics)?.[1] ?? NaN,
);
const count = Number(
  /pullfleet_reconcile_duration_seconds_count\{controller="fleet-report"\} (\d+)/.exec(metrics)?.[1] ?? NaN,
);
console.log(`fleet-report reconciles: ${count}, mean ${((sum / count) * 1000).toFixed(1)} ms`);
await controller.stop();
await server.close();
