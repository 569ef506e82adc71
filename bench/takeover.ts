/**
 * `npm run bench:takeover`: the real controller (its own process, started through bin/) against the
 * in-process fake API server, twice with the same CLUSTERS x APPS_PER_CLUSTER hub Applications:
 *
 * 1. fresh: no works on the hub; pullfleet propagates every app;
 * 2. takeover: every app is already delivered by a work argocd-pull-integration left (`<app>-<uid5>`,
 *    Foreground, applied on the spoke); pullfleet hands every one over (orphan, agent observes, own work,
 *    agent applies, legacy work deleted).
 *
 * A work agent double in this process reports Applied (with the work's generation) on every new generation
 * of every work, as the klusterlet does. Converged = every app carried by exactly pullfleet's work, Applied.
 * Also counted from the watch: deletions of a work whose deleteOption was not Orphan (must be 0), and
 * moments when an app was carried by no work at all (must be 0).
 *
 *   npm run bench:takeover                  # 500 clusters x 10 apps = 5,000
 *   npm run bench:takeover -- 100 10        # smaller
 */
import { KubeClient } from '../src/kube/client.js';
import { MANIFEST_WORK } from '../src/kube/resources.js';
import {
  HUB_APP_NAME_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_CLUSTER_ANNOTATION,
  WORK_API_VERSION,
} from '../src/model/core/keys.js';
import { manifestWorkName } from '../src/model/core/names.js';
import { type Application, type ManifestWork } from '../src/model/core/types.js';
import { freePort } from '../test/support/envtest.js';
import { legacyWork } from '../test/support/takeover-legacy.js';
import {
  clusterName,
  cpuMs,
  createHubApplication,
  createManagedCluster,
  iso,
  samplePeakMemory,
  sleep,
  spawnController,
  startBenchApiServer,
  until,
  writeCount,
} from './support.js';

const CLUSTERS = Number(process.argv[2] ?? 500);
const APPS_PER_CLUSTER = Number(process.argv[3] ?? 10);

function appliedStatus(work: ManifestWork): ManifestWork['status'] {
  const generation = work.metadata.generation;
  const now = iso(new Date());
  const condition = (type: string) => ({
    type,
    status: 'True' as const,
    reason: `${type}ManifestWorkComplete`,
    message: 'ok',
    lastTransitionTime: now,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  });
  const app = work.spec.workload.manifests.find((manifest) => manifest.kind === 'Application')!;
  const meta = app.metadata as { name: string; namespace: string };
  return {
    conditions: [condition('Applied'), condition('Available')],
    resourceStatus: {
      manifests: [
        {
          resourceMeta: {
            group: 'argoproj.io',
            version: 'v1alpha1',
            kind: 'Application',
            resource: 'applications',
            name: meta.name,
            namespace: meta.namespace,
            ordinal: work.spec.workload.manifests.indexOf(app),
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
  };
}

interface Result {
  seconds: number;
  ownWorksSeconds: number;
  writes: number;
  harmfulDeletions: number;
  gaps: number;
  legacyLeft: number;
  peakMiB: number;
  counts: Record<string, number>;
  controllerCpu: number;
  serverCpu: number;
}

async function run(scenario: 'fresh' | 'takeover'): Promise<Result> {
  const server = await startBenchApiServer();
  const store = server.store;
  const apps: Application[] = [];
  for (let c = 0; c < CLUSTERS; c++) {
    const cluster = clusterName(c);
    createManagedCluster(store, cluster);
    for (let a = 0; a < APPS_PER_CLUSTER; a++) {
      const app = createHubApplication(store, cluster, a);
      apps.push(app);
      if (scenario === 'takeover') {
        const work = store.create<ManifestWork>(legacyWork(app, 'argocd-pull-integration'));
        store.updateStatus({ ...work, status: appliedStatus(work) });
      }
    }
  }

  // The spoke: the work agent reports on every new generation; deletions and uncarried apps are recorded.
  const client = new KubeClient(server.kubeConfig());
  const abort = new AbortController();
  const carriers = new Map<string, number>();
  const appOf = (work: ManifestWork) =>
    `${work.metadata.namespace}/${work.metadata.annotations?.[HUB_APP_NAME_ANNOTATION] ?? ''}`;
  for (const work of store.list<ManifestWork>('manifestworks'))
    carriers.set(appOf(work), (carriers.get(appOf(work)) ?? 0) + 1);
  let harmfulDeletions = 0;
  let gaps = 0;
  const pending = new Set<string>();
  const watchDone = client
    .watch<ManifestWork>(
      MANIFEST_WORK,
      {},
      store.resourceVersion,
      (event) => {
        const work = event.object;
        const key = `${work.metadata.namespace}/${work.metadata.name}`;
        if (event.type === 'ADDED') carriers.set(appOf(work), (carriers.get(appOf(work)) ?? 0) + 1);
        if (event.type === 'DELETED') {
          if (work.spec.deleteOption?.propagationPolicy !== 'Orphan') harmfulDeletions++;
          const left = (carriers.get(appOf(work)) ?? 1) - 1;
          carriers.set(appOf(work), left);
          if (left === 0) gaps++;
          return;
        }
        const applied = work.status?.conditions?.find((condition) => condition.type === 'Applied');
        if (!work.metadata.deletionTimestamp && applied?.observedGeneration !== work.metadata.generation)
          pending.add(key);
      },
      abort.signal,
      3600,
    )
    .catch(() => undefined);
  let agentRunning = true;
  const agent = (async () => {
    while (agentRunning) {
      for (const key of [...pending]) {
        pending.delete(key);
        const [namespace, name] = key.split('/') as [string, string];
        const work = store.find<ManifestWork>({ apiVersion: WORK_API_VERSION, kind: 'ManifestWork' }, namespace, name);
        if (!work) continue;
        try {
          store.updateStatus({ ...work, status: appliedStatus(work) });
        } catch {
          pending.add(key);
        }
      }
      await sleep(5);
    }
  })();

  // Other processes on the machine may hold a fixed port: let the OS pick a free one.
  const port = await freePort();
  const started = Date.now();
  const controller = spawnController(server, port);
  const cpuStart = process.cpuUsage();
  const memory = samplePeakMemory(controller.child.pid);
  try {
    const own = new Set(
      apps.map(
        (app) =>
          `${app.metadata.annotations![MANAGED_CLUSTER_ANNOTATION]}/${manifestWorkName('argocd', app.metadata.name)}`,
      ),
    );
    const ownWorks = () =>
      store.count('manifestworks', {}, (work) => own.has(`${work.metadata.namespace}/${work.metadata.name}`));
    const progress = process.env.BENCH_PROGRESS
      ? setInterval(() => {
          const orphanedLegacy = store.count(
            'manifestworks',
            {},
            (work) =>
              work.metadata.labels?.[MANAGED_BY_LABEL] !== 'pullfleet' &&
              (work.spec as ManifestWork['spec']).deleteOption?.propagationPolicy === 'Orphan',
          );
          const legacyLeft = store.count(
            'manifestworks',
            {},
            (work) => work.metadata.labels?.[MANAGED_BY_LABEL] !== 'pullfleet',
          );
          console.log(
            `  ${((Date.now() - started) / 1000).toFixed(1)} s: legacy ${legacyLeft} (orphaned ${orphanedLegacy}), pullfleet works ${ownWorks()}, agent queue ${pending.size}`,
          );
        }, 1000)
      : undefined;
    await until(
      'pullfleet works',
      () =>
        server.requestCount({ verb: 'patch', resource: 'manifestworks' }) >= apps.length && ownWorks() === apps.length,
      600_000,
      50,
    );
    const ownWorksAt = Date.now();
    const converged = () =>
      store.count('manifestworks') === apps.length &&
      store.count(
        'manifestworks',
        {},
        (work) =>
          work.metadata.labels?.[MANAGED_BY_LABEL] === 'pullfleet' &&
          (work.status as ManifestWork['status'])?.conditions?.some(
            (c) => c.type === 'Applied' && c.status === 'True',
          ) === true,
      ) === apps.length;
    await until('convergence', converged, 600_000, 50);
    if (progress) clearInterval(progress);
    if (process.env.BENCH_VERBOSE) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      console.log(
        text
          .split('\n')
          .filter((line) => /^pullfleet_(reconcile_total|reconcile_errors_total|api_writes_total)/.test(line))
          .join('\n'),
      );
    }
    const seconds = (Date.now() - started) / 1000;
    const benchCpu = process.cpuUsage(cpuStart);
    return {
      seconds,
      ownWorksSeconds: (ownWorksAt - started) / 1000,
      writes: writeCount(server),
      harmfulDeletions,
      gaps,
      legacyLeft: store.count('manifestworks', {}, (work) => work.metadata.labels?.[MANAGED_BY_LABEL] !== 'pullfleet'),
      peakMiB: memory.peakKiB() / 1024,
      controllerCpu: cpuMs(controller.child.pid) / 1000,
      serverCpu: (benchCpu.user + benchCpu.system) / 1e6,
      counts: Object.fromEntries(
        Object.entries(server.requestCounts()).filter(
          ([key]) =>
            (/^(create|update|patch|delete) /.test(key) && !/status/.test(key)) || /^patch applications/.test(key),
        ),
      ),
    };
  } finally {
    memory.stop();
    await controller.stop();
    agentRunning = false;
    await agent;
    abort.abort();
    await watchDone;
    client.close();
    await server.close();
  }
}

const total = CLUSTERS * APPS_PER_CLUSTER;
console.log(
  `pullfleet takeover benchmark: ${CLUSTERS} clusters x ${APPS_PER_CLUSTER} apps = ${total} hub Applications`,
);
for (const scenario of ['fresh', 'takeover'] as const) {
  const result = await run(scenario);
  console.log(
    `${scenario.padEnd(8)}: converged ${result.seconds.toFixed(2)} s after start (pullfleet works all written at ${result.ownWorksSeconds.toFixed(2)} s), ` +
      `${result.writes} controller writes (${(result.writes / total).toFixed(2)} per app), deletions of a non-Orphan work: ${result.harmfulDeletions}, ` +
      `apps left without a work: ${result.gaps}, legacy works left: ${result.legacyLeft}, controller peak memory ${result.peakMiB.toFixed(0)} MiB, ` +
      `CPU: controller ${result.controllerCpu.toFixed(1)} s, fake API server + work agent double ${result.serverCpu.toFixed(1)} s`,
  );
  if (process.env.BENCH_VERBOSE) console.log(result.counts);
}
