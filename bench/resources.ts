/**
 * `npm run bench:resources [-- clusters apps resources changes]` (default 2,000 clusters x 5 apps x 200 resources,
 * 200 changes; 0 changes skips part 4): resource summaries at fleet scale.
 *
 * 1. The summary message the work agent builds (the rule's CEL evaluated with @bufbuild/cel), for apps of 10, 100,
 *    200 and 1,000 resources: characters, resources listed, what was left out.
 * 2. Pure: computeApplicationStatus for one app with a summary (parse, Argo CD entries, digest) and the size of the
 *    hub Application status it writes (status.resources + status.summary.images), per app and for every app.
 * 3. Pure: computeFleetReport for one ApplicationSet over every cluster, each row with its summary (one in ten
 *    Degraded), time per report and status size, and for all ApplicationSets.
 * 4. End to end, in process: the controller against the in-process API double with `apps` pull ApplicationSets over
 *    `clusters` clusters; the bench plays the work agent (summary condition on the manifest and, as newer agents
 *    do, on the work). After every row is reported, `changes` times one app on one cluster turns one resource
 *    Degraded: latency from the work status write to the hub Application listing it and to the FleetReport row
 *    naming it (p50 / p99 / max), and API writes per change.
 */
import { pino } from 'pino';
import { startController } from '../src/controller/runtime/manager.js';
import { manifestWorkName } from '../src/model/core/names.js';
import { type Application, type ManifestWork } from '../src/model/core/types.js';
import { buildManifestWork } from '../src/model/delivery/manifestwork.js';
import { fleetReportCrd } from '../src/model/report/report-crd.js';
import { computeFleetReport, type FleetReport } from '../src/model/report/report.js';
import {
  RESOURCE_SUMMARY_CONDITION,
  parseResourceSummary,
  resourceSummaryExpression,
} from '../src/model/reconcile/resource-summary.js';
import { computeApplicationStatus } from '../src/model/reconcile/status.js';
import { startFakeApiServer, type KubeObj } from '../test/double/fake-apiserver.js';
import { evaluateCel } from '../test/support/cel.js';
import { spokeApplication, type SpokeAppOptions } from '../test/support/spoke-apps.js';
import { applicationSet, decision, generatedHubApp, NS } from '../test/model/report/fixtures.js';
import { clusterName, iso, percentile, sleep } from './support.js';

const CLUSTERS = Number(process.argv[2] ?? 2000);
const APPS = Number(process.argv[3] ?? 5);
const RESOURCES = Number(process.argv[4] ?? 200);
const CHANGES = Number(process.argv[5] ?? 200);
const IMAGES = ['registry.example.com/shop/cart:1.4.2', 'registry.example.com/shop/web:2.0.1'];

const appSetName = (a: number) => `app-${a + 1}`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

async function until(what: string, check: () => boolean, timeoutMs: number, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

const summaries = new Map<string, string>();
/** The message the work agent reports for a spoke app like `options` (evaluated once per shape). */
function summaryOf(options: SpokeAppOptions): string {
  const key = JSON.stringify(options);
  let message = summaries.get(key);
  if (message === undefined) {
    const value = evaluateCel(resourceSummaryExpression(), { object: spokeApplication(options).object, result: true });
    if (typeof value !== 'string') throw new Error(`the summary expression failed: ${String(value)}`);
    message = value;
    summaries.set(key, message);
  }
  return message;
}

/** A work's status as a work agent of OCM 1.0 or later reports it: feedback plus the summary condition, twice. */
function reportedStatus(work: ManifestWork, health: string, message: string): NonNullable<ManifestWork['status']> {
  const config = work.spec.manifestConfigs![0].resourceIdentifier;
  const at = iso(new Date());
  const generation = work.metadata.generation;
  const summary = {
    type: RESOURCE_SUMMARY_CONDITION,
    status: 'True' as const,
    reason: 'ConditionRuleEvaluated',
    message,
    lastTransitionTime: at,
    ...(generation ? { observedGeneration: generation } : {}),
  };
  const condition = (type: string) => ({
    type,
    status: 'True' as const,
    reason: type,
    message: type,
    lastTransitionTime: at,
    ...(generation ? { observedGeneration: generation } : {}),
  });
  return {
    conditions: [condition('Applied'), condition('Available'), { ...summary, reason: 'ConditionRulesAggregated' }],
    resourceStatus: {
      manifests: [
        {
          resourceMeta: {
            group: config.group,
            version: 'v1alpha1',
            kind: 'Application',
            resource: config.resource,
            name: config.name,
            namespace: config.namespace,
            ordinal: 0,
          },
          statusFeedback: {
            values: [
              { name: 'healthStatus', fieldValue: { type: 'String', string: health } },
              { name: 'syncStatus', fieldValue: { type: 'String', string: 'Synced' } },
              { name: 'syncRevision', fieldValue: { type: 'String', string: 'abc123' } },
              { name: 'reconciledAt', fieldValue: { type: 'String', string: at } },
            ],
          },
          conditions: [condition('Applied'), condition('Available'), summary],
        },
      ],
    },
  };
}

console.log(`node ${process.version}; ${CLUSTERS} clusters x ${APPS} apps x ${RESOURCES} resources`);

// ---------------------------------------------------------------- 1. message size
for (const [count, degraded, missing, outOfSync] of [
  [10, 1, 1, 0],
  [100, 3, 1, 5],
  [200, 2, 1, 4],
  [1000, 12, 4, 40],
]) {
  const start = process.hrtime.bigint();
  const message = summaryOf({ resources: count, degraded, missing, outOfSync, images: IMAGES });
  const evalMs = ms(start);
  const parsed = parseResourceSummary(message)!;
  console.log(
    `summary of ${count} resources: ${message.length} characters, ${parsed.resources.length} listed, ${parsed.omitted} left out; ${(message.length / Math.max(1, parsed.resources.length)).toFixed(1)} characters per resource (CEL in JS ${evalMs.toFixed(0)} ms)`,
  );
}

// ---------------------------------------------------------------- 2. hub Application status
{
  const app = generatedHubApp(clusterName(0), 'uid-1', appSetName(0));
  const work = buildManifestWork(app);
  work.metadata.generation = 1;
  work.status = reportedStatus(work, 'Degraded', summaryOf({ resources: RESOURCES, degraded: 1, images: IMAGES }));
  const input = { app, work, now: new Date(), staleAfterMs: 0 };
  computeApplicationStatus(input);
  const runs = 200;
  const start = process.hrtime.bigint();
  let result = computeApplicationStatus(input);
  for (let r = 1; r < runs; r++) result = computeApplicationStatus(input);
  const status = result.patch!.status;
  const bytes = Buffer.byteLength(JSON.stringify({ resources: status.resources, summary: status.summary }));
  const whole = Buffer.byteLength(JSON.stringify(status));
  console.log(
    `hub Application status of one app (${RESOURCES} resources): computeApplicationStatus ${(ms(start) / runs).toFixed(2)} ms; status.resources + summary.images ${kib(bytes)} (whole status patch ${kib(whole)}); for ${CLUSTERS * APPS} apps ${((bytes * CLUSTERS * APPS) / 1024 / 1024).toFixed(0)} MiB`,
  );
}

// ---------------------------------------------------------------- 3. pure aggregation
{
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => clusterName(i));
  const healthy = summaryOf({ resources: RESOURCES, images: IMAGES });
  const degraded = summaryOf({ resources: RESOURCES, degraded: 2, outOfSync: 3, images: IMAGES });
  const decisions = Array.from({ length: Math.ceil(CLUSTERS / 100) }, (_, d) =>
    decision(`app-1-decision-${d + 1}`, clusters.slice(d * 100, d * 100 + 100), 'app-1'),
  );
  const apps = clusters.map((c) => generatedHubApp(c, 'app-1-uid', 'app-1'));
  const works = apps.map((app, i) => {
    const work = buildManifestWork(app);
    work.metadata.generation = 1;
    work.status = reportedStatus(work, i % 10 === 0 ? 'Degraded' : 'Healthy', i % 10 === 0 ? degraded : healthy);
    return work;
  });
  const input = {
    applicationSet: applicationSet({ name: 'app-1', placement: 'app-1' }),
    decisions,
    applications: apps,
    works,
    now: new Date(),
  };
  // Cold: every summary parsed (a controller start); warm: parsed summaries reused (each later recompute, where
  // only the changed work carries a new message).
  const cold = process.hrtime.bigint();
  computeFleetReport(input);
  const coldMs = ms(cold);
  const runs = 10;
  const start = process.hrtime.bigint();
  let report: FleetReport | undefined;
  for (let r = 0; r < runs; r++) report = computeFleetReport(input)!.report;
  const perReport = ms(start) / runs;
  const status = report!.status!;
  console.log(
    `computeFleetReport ${CLUSTERS} clusters with summaries: ${coldMs.toFixed(0)} ms parsing every summary, then ${perReport.toFixed(1)} ms per report (x${APPS} ApplicationSets: ${(perReport * APPS).toFixed(0)} ms); status ${kib(Buffer.byteLength(JSON.stringify(status)))}, ${status.clusters.length} rows kept, ${status.omittedRows ?? 0} rows and ${status.omittedResourceDetails ?? 0} rows' details left out`,
  );
}

// ---------------------------------------------------------------- 4. end to end, in process (changes = 0 skips it)
if (CHANGES > 0) {
  const server = await startFakeApiServer({ implicitNamespaces: true });
  const store = server.store;
  store.create(fleetReportCrd());
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => clusterName(i));
  for (const cluster of clusters)
    store.create({
      apiVersion: 'cluster.open-cluster-management.io/v1',
      kind: 'ManagedCluster',
      metadata: { name: cluster },
      spec: { hubAcceptsClient: true },
    });
  for (let a = 0; a < APPS; a++) {
    const name = appSetName(a);
    const set = store.create<KubeObj>(applicationSet({ name, placement: name }));
    for (let d = 0; d * 100 < CLUSTERS; d++) {
      const created = store.create<KubeObj>(decision(`${name}-decision-${d + 1}`, [], name));
      store.updateStatus({
        ...created,
        status: {
          decisions: clusters.slice(d * 100, d * 100 + 100).map((clusterName) => ({ clusterName, reason: '' })),
        },
      });
    }
    for (const cluster of clusters) store.create(generatedHubApp(cluster, set.metadata.uid, name));
  }
  const appName = (cluster: string, a: number) => `${cluster}-${appSetName(a)}`;
  const workOf = (cluster: string, a: number) =>
    store.get<ManifestWork & KubeObj>('manifestworks', cluster, manifestWorkName(NS, appName(cluster, a)));
  const REPORT = { apiVersion: 'pullfleet.io/v1alpha1', kind: 'FleetReport' };
  const APPLICATION = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application' };
  // find() copies the object: poll with count() (no copy), and copy one object only after a write to its kind.
  const report = (a: number) => store.find<FleetReport>(REPORT, NS, appSetName(a));
  const hubApp = (cluster: string, a: number) => store.find<Application>(APPLICATION, NS, appName(cluster, a));

  const started = Date.now();
  const controller = await startController({
    kubeConfig: server.kubeConfig(),
    config: { leaderElection: false, relaxTenancy: true, clusterSecrets: false },
    logger: pino({ level: 'silent' }),
  });
  await controller.ready();
  const total = CLUSTERS * APPS;
  await until('every work', () => store.count('manifestworks') === total, 1_800_000, 500);
  const propagated = Date.now() - started;
  const healthy = summaryOf({ resources: RESOURCES, images: IMAGES });
  for (let a = 0; a < APPS; a++)
    for (const cluster of clusters) {
      const work = workOf(cluster, a);
      store.updateStatus({ ...work, status: reportedStatus(work, 'Healthy', healthy) });
    }
  await until(
    'every report complete, with resources',
    () =>
      store.count(REPORT, { namespace: NS }, (object) => {
        const status = (object as unknown as FleetReport).status;
        return (
          status?.summary.healthy === CLUSTERS && status.clusters.every((row) => row.resources?.total === RESOURCES)
        );
      }) === APPS,
    1_800_000,
    500,
  );
  await until(
    'every hub Application listing its resources',
    () =>
      store.count(
        APPLICATION,
        { namespace: NS },
        (object) =>
          ((object as unknown as Application).status?.resources as unknown[] | undefined)?.length === RESOURCES,
      ) === total,
    1_800_000,
    500,
  );
  const complete = Date.now() - started;
  const appStatusBytes = Buffer.byteLength(JSON.stringify(hubApp(clusters[0], 0)!.status));
  console.log(
    `end to end (in process): ${total} works ${propagated} ms after start, every report and hub Application complete with resources ${complete} ms after start; one hub Application status ${kib(appStatusBytes)}`,
  );

  const appWrites = () => server.writeCount('applications.argoproj.io');
  const reportWrites = () =>
    server.writeCount('fleetreports.pullfleet.io') + server.writeCount('fleetreports.pullfleet.io/status');
  const appWritesBefore = appWrites();
  const reportWritesBefore = reportWrites();
  const toApp: number[] = [];
  const toReport: number[] = [];
  for (let i = 1; i <= CHANGES; i++) {
    const cluster = clusters[(i * 7919) % CLUSTERS];
    const a = i % APPS;
    // Component 4k is the k-th Deployment: make a different one Degraded each time (degraded: k marks the first k).
    const k = 1 + (i % 20);
    const message = summaryOf({ resources: RESOURCES, degraded: k, images: IMAGES });
    const want = `component-${4 * (k - 1)}`;
    const work = workOf(cluster, a);
    let appChecked = appWrites();
    let reportChecked = reportWrites();
    const t0 = process.hrtime.bigint();
    store.updateStatus({ ...work, status: reportedStatus(work, 'Degraded', message) });
    let appSeen = false;
    let reportSeen = false;
    await until(
      `${cluster} ${appSetName(a)} with ${want} Degraded`,
      () => {
        if (!appSeen && appWrites() > appChecked) {
          appChecked = appWrites();
          const listed = hubApp(cluster, a)?.status?.resources as Array<{ name: string; health?: { status: string } }>;
          if (listed?.some((r) => r.name === want && r.health?.status === 'Degraded')) {
            toApp.push(ms(t0));
            appSeen = true;
          }
        }
        if (!reportSeen && reportWrites() > reportChecked) {
          reportChecked = reportWrites();
          const row = report(a)?.status?.clusters.find((r) => r.cluster === cluster);
          if (row?.resources?.degraded === k) {
            toReport.push(ms(t0));
            reportSeen = true;
          }
        }
        return appSeen && reportSeen;
      },
      60_000,
      1,
    );
  }
  const stats = (values: number[]) =>
    `p50 ${percentile(values, 50).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;
  console.log(
    `feedback change -> hub Application status.resources (${CHANGES} changes, one at a time): ${stats(toApp)}`,
  );
  console.log(`feedback change -> FleetReport row (${CHANGES} changes, one at a time): ${stats(toReport)}`);
  console.log(
    `writes per change: hub Application ${((appWrites() - appWritesBefore) / CHANGES).toFixed(2)}, FleetReport ${((reportWrites() - reportWritesBefore) / CHANGES).toFixed(2)}`,
  );
  await controller.stop();
  await server.close();
}
console.log(`peak memory of the process (maxRSS) ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
