/**
 * `npm run bench:rollout`: one new revision of a waved static app rolled out by the real controller (its
 * own process, started through bin/ with --kubeconfig) against the in-process fake API server. CLUSTERS
 * spokes in WAVES waves of equal size, each wave soaking SOAK seconds; every spoke already runs the old
 * revision. The bench plays the OCM work agent and the spoke Argo CD: one second after a work carries a
 * payload the spoke has not reported yet, it reports it Healthy and Synced (with the payload's spec hash).
 * Prints the time from the commit of the new revision to the last wave Healthy next to the sum of the soak
 * times that hold the rollout (every wave's but the last), the controller's CPU time and its writes per cluster.
 *
 *   npm run bench:rollout                     # 1,000 clusters, 5 waves, 60 s soak
 *   npm run bench:rollout -- 200 5 10         # smaller and faster
 */
import { Duration } from 'cdk8s';
import { AppSource, ClusterSet, Fleet, Hub, PullApplication, Rollout, Spoke } from '../src/constructs/index.js';
import { SPEC_HASH_ANNOTATION } from '../src/model/core/keys.js';
import type { Application, KubeObject } from '../src/model/core/types.js';
import { buildManifestWork } from '../src/model/delivery/manifestwork.js';
import { type KubeObj } from '../test/double/fake-apiserver.js';
import {
  clusterName,
  cpuMs,
  createManagedCluster,
  iso,
  sleep,
  spawnController,
  startBenchApiServer,
  until,
  waitForReadyz,
  writeCount,
} from './support.js';

const CLUSTERS = Number(process.argv[2] ?? 1000);
const WAVES = Number(process.argv[3] ?? 5);
const SOAK = Number(process.argv[4] ?? 60);
const AGENT_DELAY_MS = 1000;
const waveOf = (i: number) => Math.floor((i * WAVES) / CLUSTERS);

/** The hub objects synth renders for the app at `revision` (hub Applications and the policy ConfigMap). */
function render(revision: string): KubeObject[] {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub');
  const set = new ClusterSet(hub, 'bench');
  const spokes = Array.from(
    { length: CLUSTERS },
    (_, i) => new Spoke(hub, clusterName(i), { clusterSet: set, labels: { wave: `w${waveOf(i)}` } }),
  );
  new PullApplication(hub, 'web', {
    source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: revision }),
    destinationNamespace: 'web',
    spokes,
    rollout: Rollout.waves(
      Array.from({ length: WAVES }, (_, w) => ({
        name: `w${w}`,
        labels: { wave: `w${w}` },
        ...(SOAK > 0 ? { soak: Duration.seconds(SOAK) } : {}),
      })),
      { progressDeadline: Duration.minutes(30) },
    ),
  });
  const objects: KubeObject[] = [];
  for (const [file, list] of fleet.renderObjects())
    if (file.endsWith('hub/applications.yaml')) objects.push(...(list as unknown as KubeObject[]));
  return objects;
}

const server = await startBenchApiServer();
const store = server.store;
for (let i = 0; i < CLUSTERS; i++) createManagedCluster(store, clusterName(i));

/** The spoke reports the payload its work carries: Healthy, Synced, at its spec hash. */
function report(work: KubeObj): void {
  const payload = (work.spec.workload.manifests as Application[]).find((m) => m.kind === 'Application')!;
  const values = {
    specHash: payload.metadata.annotations![SPEC_HASH_ANNOTATION],
    healthStatus: 'Healthy',
    syncStatus: 'Synced',
    syncRevision: String(payload.spec.source?.targetRevision),
    reconciledAt: iso(new Date()),
  };
  const at = iso(new Date());
  work.status = {
    conditions: [
      {
        type: 'Applied',
        status: 'True',
        reason: 'AppliedManifestWorkComplete',
        message: 'applied',
        lastTransitionTime: at,
      },
    ],
    resourceStatus: {
      manifests: [
        {
          resourceMeta: {
            group: 'argoproj.io',
            version: 'v1alpha1',
            kind: 'Application',
            resource: 'applications',
            name: payload.metadata.name,
            namespace: payload.metadata.namespace,
            ordinal: (work.spec.workload.manifests as unknown[]).indexOf(payload),
          },
          statusFeedback: {
            values: Object.entries(values).map(([name, string]) => ({ name, fieldValue: { type: 'String', string } })),
          },
          conditions: [],
        },
      ],
    },
  };
  store.updateStatus(work);
}

const reported = (work: KubeObj): string | undefined =>
  (
    work.status?.resourceStatus?.manifests?.[0]?.statusFeedback?.values as
      Array<{ name: string; fieldValue: { string?: string } }> | undefined
  )?.find((v) => v.name === 'specHash')?.fieldValue.string;
const carried = (work: KubeObj): string | undefined =>
  (work.spec.workload.manifests as Application[]).find((m) => m.kind === 'Application')?.metadata.annotations?.[
    SPEC_HASH_ANNOTATION
  ];

// Every spoke runs v1 already: the hub objects as Argo CD applied them, and the works as the controller wrote them.
const v1 = render('v1');
for (const object of v1) store.create(object);
for (const app of v1.filter((o) => o.kind === 'Application') as Application[]) {
  const work = store.create(buildManifestWork(app));
  report(work);
}

// The work agent: one second after a work carries a payload its spoke has not reported, the spoke reports it.
const scheduled = new Set<string>();
let agentStop = false;
const agent = (async () => {
  while (!agentStop) {
    for (const work of store.list<KubeObj>('manifestworks')) {
      const key = `${work.metadata.namespace}/${work.metadata.name}`;
      if (scheduled.has(key) || carried(work) === undefined || carried(work) === reported(work)) continue;
      scheduled.add(key);
      setTimeout(() => {
        scheduled.delete(key);
        const live = store.get<KubeObj>('manifestworks', work.metadata.namespace, work.metadata.name);
        if (live) report(live);
      }, AGENT_DELAY_MS);
    }
    await sleep(100);
  }
})();

const port = 30000 + (process.pid % 20000);
const controller = spawnController(server, port, { tmpPrefix: 'pullfleet-bench-rollout-' });
const childCpuMs = () => cpuMs(controller.child.pid);
const writes = () => writeCount(server, ['manifestworks', 'applications', 'configmaps']);
const progress = () => {
  const state = store.find<KubeObj>('configmaps', 'argocd', 'pullfleet-rollout-web-state');
  return state ? (JSON.parse(state.data['progress.json'] as string) as { phase: string }) : undefined;
};

console.log(
  `rollout benchmark: ${CLUSTERS} clusters in ${WAVES} waves, soak ${SOAK} s, the spoke answering ${AGENT_DELAY_MS / 1000} s after its work changes`,
);
try {
  await waitForReadyz(port);
  // The controller takes stock of v1 (every cluster done, nothing written).
  await until('the v1 rollout to be recorded complete', () => progress()?.phase === 'complete', 120_000, 200);
  const writesBefore = writes();
  const cpuBefore = childCpuMs();

  // The commit: Argo CD applies the hub Applications of v2.
  const committed = Date.now();
  for (const object of render('v2'))
    if (object.kind === 'Application') {
      const live = store.get<KubeObj>('applications', 'argocd', object.metadata.name);
      store.update({ ...live, spec: (object as Application).spec });
    }
  const waveDone: number[] = [];
  const v2Reported = (i: number) => {
    const work = store.find<KubeObj>('manifestworks', clusterName(i), `argocd-web-${clusterName(i)}`);
    return work !== undefined && reported(work) === carried(work) && JSON.stringify(work.spec).includes('"v2"');
  };
  await until(
    'every wave Healthy at v2',
    () => {
      for (let w = waveDone.length; w < WAVES; w++) {
        const members = Array.from({ length: CLUSTERS }, (_, i) => i).filter((i) => waveOf(i) === w);
        if (!members.every(v2Reported)) return false;
        waveDone.push(Date.now());
      }
      return true;
    },
    (WAVES * SOAK + 600) * 1000,
    100,
  );
  const elapsed = (Date.now() - committed) / 1000;
  const soakSum = SOAK * (WAVES - 1);
  await until('the rollout to be recorded complete', () => progress()?.phase === 'complete', 60_000, 200);
  await sleep(1500);
  const rolloutWrites = writes() - writesBefore;
  console.log(
    `commit → last wave Healthy: ${elapsed.toFixed(1)} s; soak times that hold it: ${soakSum} s (${soakSum > 0 ? `${((elapsed / soakSum - 1) * 100).toFixed(1)} % over` : 'none'})`,
  );
  console.log(
    `  per wave (s after the commit): ${waveDone.map((t) => ((t - committed) / 1000).toFixed(1)).join(', ')}`,
  );
  console.log(
    `controller: ${((childCpuMs() - cpuBefore) / 1000).toFixed(1)} s CPU for the rollout; ${rolloutWrites} writes (${(rolloutWrites / CLUSTERS).toFixed(2)} per cluster: work, hub status, rollout state)`,
  );
} finally {
  agentStop = true;
  await agent;
  await controller.stop();
  await server.close();
}
