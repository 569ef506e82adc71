/**
 * `npm run bench:server`: the controller as it ships, on a real kube-apiserver (v1.28.7 with etcd, the
 * envtest binaries), measured beside the server's own rate in the same run.
 *
 *   export KUBEBUILDER_ASSETS=$(../shared/envtest/setup)
 *   npm run bench:server                        # 500 clusters x 10 apps
 *   npm run bench:server -- 5000 10 --scale     # 50,000 apps: memory, resync, heartbeat storm, restart
 *   npm run bench:server -- 500 10 --controller-args="--workers=8"   # flags after the Deployment's args
 *   --sample=N: the server's own rate and the feedback burst use N apps (default 5,000, spread over the fleet)
 *   --requests: print the controller's requests by verb, resource and status after each phase
 *
 * 1. The server's own rate: 16 parallel clients (a ServiceAccount, so APF treats them as it treats the
 *    controller) server-side apply exactly the ManifestWorks the controller will write, delete them again,
 *    and merge-patch the status of every hub Application as the controller does.
 * 2. Propagation: the shipped controller (install rendered by ControllerInstall, its ServiceAccount, the
 *    Deployment's args) starts; time until every ManifestWork exists (from a watch), then until every app
 *    carries the cleanup finalizer and a status and the controller stops writing.
 * 3. Feedback burst: 16 parallel clients play the work agents and write feedback into every work's status;
 *    latency from each write to the hub Application showing it (from a watch), p50 / p99 / max.
 * 4. With --scale: steady-state memory, a full resync (writes counted), a ManagedCluster heartbeat storm
 *    (reconciles counted), and a restart (SIGTERM, new process) to leading and caught up.
 *
 * Requests per change come from the controller's own /metrics (pullfleet_api_requests_total).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { KubeClient, type KubeConfig } from '../src/kube/client.js';
import { APPLICATION, MANAGED_CLUSTER, MANIFEST_WORK, NAMESPACE, resourcePath } from '../src/kube/resources.js';
import {
  ARGOCD_API_VERSION,
  CLEANUP_FINALIZER,
  CLUSTERSET_API_VERSION,
  CLUSTERSET_LABEL,
  CLUSTER_API_VERSION,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
} from '../src/model/core/keys.js';
import type { Application, KubeObject, ManifestWork } from '../src/model/core/types.js';
import { buildManifestWork } from '../src/model/delivery/manifestwork.js';
import { serviceAccountKubeconfig, installCrds, loadKubeConfig } from '../test/support/envtest-cluster.js';
import { ENVTEST_SKIP_MESSAGE, startEnvtest, type Envtest } from '../test/support/envtest.js';
import { RawClient } from '../test/support/raw-client.js';
import { shippedReplicas, type ReplicaProcess } from '../test/support/shipped-controller.js';
import { KubeConfig as ClientNodeKubeConfig } from '@kubernetes/client-node';
import { cpuMs, sleep, until } from './support.js';

// ---------------------------------------------------------------------------------------------- options

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flag = (name: string) => process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const flagValue = (name: string) => flag(name)?.split('=').slice(1).join('=');
const CLUSTERS = Number(positional[0] ?? 500);
const APPS_PER_CLUSTER = Number(positional[1] ?? 10);
const SCALE = flag('scale') !== undefined;
const CLIENTS = Number(flagValue('clients') ?? 16);
const CONTROLLER_ARGS = (flagValue('controller-args') ?? '').split(/\s+/).filter(Boolean);
const ECHO = flag('echo') !== undefined;
const SHOW_REQUESTS = flag('requests') !== undefined;
/** How many objects the server's own rate is measured on, and how many feedback changes make the burst. */
const SAMPLE = Number(flagValue('sample') ?? 5000);
const NS = { controller: 'pullfleet-system', argo: 'argocd' };
const SET = 'bench';

// ---------------------------------------------------------------------------------------------- helpers

const seconds = (ms: number) => (ms / 1000).toFixed(2);
function say(line: string): void {
  process.stdout.write(`${line}\n`);
}
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
};

/** Runs `fn` over `items` with `concurrency` requests in flight; returns the wall time in ms. */
async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<void>) {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
  return performance.now() - started;
}

/** Retries a request answered 409 / 429 / 5xx or a transport error (the world setup must not fail on a hiccup). */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (attempt >= 8 || (status !== undefined && status !== 409 && status !== 429 && status < 500)) throw error;
      await sleep(100 * 2 ** attempt);
    }
  }
}

function memoryKiB(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0),
      hwm: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0),
    };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}
/** The etcd and kube-apiserver processes this benchmark started (children of this process). */
function serverPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && (comm === 'etcd' || comm === 'kube-apiserver')) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}
const serverCpuMs = () => serverPids().reduce((sum, pid) => sum + cpuMs(pid), 0);

/** The request counters of a metrics text, by verb, resource and code (for --requests). */
function requestBreakdown(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('pullfleet_api_requests_total{')) continue;
    counts.set(/\{([^}]*)\}/.exec(line)![1], Number(line.split(' ').pop()));
  }
  return counts;
}
function showRequests(what: string, now: Map<string, number>, before: Map<string, number> = new Map()): void {
  if (!SHOW_REQUESTS) return;
  say(`  requests ${what}:`);
  for (const [labels, count] of [...now].sort()) {
    const delta = count - (before.get(labels) ?? 0);
    if (delta > 0) say(`    ${labels}: ${delta}`);
  }
}

/** Prometheus text → sum of the samples of `name` whose labels contain every `match` pair. */
function metric(text: string, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = /\{([^}]*)\}/.exec(line)?.[1] ?? '';
    if (Object.entries(match).every(([k, v]) => labels.includes(`${k}="${v}"`))) sum += Number(line.split(' ').pop());
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------- world

function hubApp(name: string, cluster: string, a: number): Application {
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata: {
      name,
      namespace: NS.argo,
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: cluster, [SKIP_RECONCILE_ANNOTATION]: 'true' },
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: `app-${a}` },
      source: { repoURL: 'https://git.example.com/apps.git', path: `apps/app-${a}`, targetRevision: 'main' },
    },
  };
}

async function serviceAccountClient(admin: KubeConfig, name: string): Promise<KubeClient> {
  const raw = new RawClient(admin);
  await raw.apply(
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: NS.controller } },
    'pullfleet-bench',
  );
  await raw.apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `pullfleet-bench-${name}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pullfleet-bench' },
      subjects: [{ kind: 'ServiceAccount', name, namespace: NS.controller }],
    },
    'pullfleet-bench',
  );
  const kc = new ClientNodeKubeConfig();
  kc.loadFromString(await serviceAccountKubeconfig(admin, NS.controller, name, 7200));
  return new KubeClient(kc, { requestTimeoutMs: 120_000 });
}

// ---------------------------------------------------------------------------------------------- run

if (!process.env.KUBEBUILDER_ASSETS) {
  say(`bench:server needs a real API server: ${ENVTEST_SKIP_MESSAGE}`);
  process.exit(1);
}

const total = CLUSTERS * APPS_PER_CLUSTER;
const results: Array<[string, string]> = [];
const record = (what: string, value: string) => {
  results.push([what, value]);
  say(`  ${what}: ${value}`);
};
let envtest: Envtest | undefined;
let replicas: ReturnType<typeof shippedReplicas> | undefined;
const aborts: AbortController[] = [];

try {
  const setupStarted = performance.now();
  envtest = await startEnvtest({ readyTimeoutMs: 120_000 });
  const admin = loadKubeConfig(envtest.kubeconfigPath);
  await installCrds(admin);
  const adminClient = new KubeClient(admin, { requestTimeoutMs: 120_000 });
  const raw = new RawClient(admin);
  say(
    `pullfleet bench:server: ${CLUSTERS} clusters x ${APPS_PER_CLUSTER} apps = ${total} hub Applications on kube-apiserver ${envtest.server}; ${CLIENTS} parallel clients for the server's own rate`,
  );

  // The world: namespaces, a cluster set bound to the Argo CD namespace, clusters, apps.
  for (const ns of [NS.controller, NS.argo])
    await raw.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await raw.apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'pullfleet-bench' },
      rules: [
        {
          apiGroups: ['work.open-cluster-management.io'],
          resources: ['manifestworks', 'manifestworks/status'],
          verbs: ['create', 'delete', 'get', 'list', 'patch', 'watch'],
        },
        { apiGroups: ['argoproj.io'], resources: ['applications'], verbs: ['get', 'list', 'patch', 'watch'] },
        {
          apiGroups: ['cluster.open-cluster-management.io'],
          resources: ['managedclusters', 'managedclusters/status'],
          verbs: ['get', 'list', 'patch', 'watch'],
        },
      ],
    },
    'pullfleet-bench',
  );
  await raw.create({
    apiVersion: CLUSTERSET_API_VERSION,
    kind: 'ManagedClusterSet',
    metadata: { name: SET },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  });
  await raw.create({
    apiVersion: CLUSTERSET_API_VERSION,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: SET, namespace: NS.argo },
    spec: { clusterSet: SET },
  });
  const clusters = Array.from({ length: CLUSTERS }, (_, c) => `cluster-${String(c).padStart(4, '0')}`);
  await pool(clusters, CLIENTS, async (cluster) => {
    await retrying(() =>
      adminClient.create(NAMESPACE, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: cluster } }),
    );
    await retrying(() =>
      adminClient.create(MANAGED_CLUSTER, {
        apiVersion: CLUSTER_API_VERSION,
        kind: 'ManagedCluster',
        metadata: { name: cluster, labels: { [CLUSTERSET_LABEL]: SET } },
        spec: { hubAcceptsClient: true },
      } as KubeObject),
    );
  });
  const apps = clusters.flatMap((cluster) =>
    Array.from({ length: APPS_PER_CLUSTER }, (_, a) => hubApp(`${cluster}-app-${a}`, cluster, a)),
  );
  await pool(apps, CLIENTS, async (app) => {
    await retrying(() => adminClient.create(APPLICATION, app));
  });
  const works = apps.map((app) => buildManifestWork(app));
  // The server's own rate and the burst use a sample spread evenly over the fleet (all of it up to SAMPLE).
  const sampled = apps.map((_, i) => i).filter((i) => i % Math.max(1, Math.round(total / SAMPLE)) === 0);
  const sample = sampled.length;
  say(
    `world ready in ${seconds(performance.now() - setupStarted)} s (envtest, CRDs, ${CLUSTERS} clusters, ${total} apps)`,
  );

  const writer = await serviceAccountClient(admin, 'bench-writer');
  const agent = await serviceAccountClient(admin, 'bench-agent');

  // -------------------------------------------------------------------- 1. the server's own rate
  say(`\n1. the server's own rate (${CLIENTS} parallel clients, ServiceAccount bench-writer)`);
  let serverBefore = serverCpuMs();
  const ssaMs = await pool(sampled, CLIENTS, async (i) => {
    await retrying(() => writer.apply(MANIFEST_WORK, works[i]));
  });
  const ssaCpu = serverCpuMs() - serverBefore;
  const ssaRate = sample / (ssaMs / 1000);
  record(
    'server: ManifestWork server-side applies (create)',
    `${sample} in ${seconds(ssaMs)} s = ${ssaRate.toFixed(0)}/s (etcd + kube-apiserver CPU ${seconds(ssaCpu)} s)`,
  );
  const deleteMs = await pool(sampled, CLIENTS, async (i) => {
    await retrying(() => writer.delete(MANIFEST_WORK, works[i].metadata.namespace, works[i].metadata.name));
  });
  record(
    'server: ManifestWork deletes',
    `${sample} in ${seconds(deleteMs)} s = ${(sample / (deleteMs / 1000)).toFixed(0)}/s`,
  );
  serverBefore = serverCpuMs();
  const patchMs = await pool(sampled, CLIENTS, async (i) => {
    await retrying(() =>
      writer.mergePatch(APPLICATION, NS.argo, apps[i].metadata.name, {
        status: { sync: { status: 'Synced', revision: `server-${i}` }, health: { status: 'Healthy' } },
      }),
    );
  });
  const patchRate = sample / (patchMs / 1000);
  record(
    'server: Application status merge patches',
    `${sample} in ${seconds(patchMs)} s = ${patchRate.toFixed(0)}/s (CPU ${seconds(serverCpuMs() - serverBefore)} s)`,
  );

  // -------------------------------------------------------------------- 2. propagation
  say('\n2. propagation by the shipped controller');
  const workSeen = new Map<string, number>();
  const expected = new Set(works.map((w) => `${w.metadata.namespace}/${w.metadata.name}`));
  const appState = new Map<string, { finalizer: boolean; sync?: string; revision?: string }>();
  const workList = await adminClient.list(MANIFEST_WORK, {}, 500);
  const workWatch = new AbortController();
  aborts.push(workWatch);
  void adminClient
    .watch<ManifestWork>(
      MANIFEST_WORK,
      {},
      workList.resourceVersion,
      (event) => {
        const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
        if (event.type === 'ADDED' && expected.has(key) && !workSeen.has(key)) workSeen.set(key, performance.now());
      },
      workWatch.signal,
      3600,
    )
    .catch((error: unknown) => say(`work watch ended: ${String(error)}`));
  const pending = new Map<string, { revision: string; sentAt: number }>();
  const latencies: number[] = [];
  let lastSeenAt = 0;
  const appList = await adminClient.list<Application>(APPLICATION, { namespace: NS.argo }, 500);
  const appWatch = new AbortController();
  aborts.push(appWatch);
  void adminClient
    .watch<Application>(
      APPLICATION,
      { namespace: NS.argo },
      appList.resourceVersion,
      (event) => {
        const app = event.object;
        const revision = app.status?.sync?.revision;
        appState.set(app.metadata.name, {
          finalizer: (app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER),
          ...(app.status?.sync?.status ? { sync: app.status.sync.status } : {}),
          ...(revision ? { revision } : {}),
        });
        const want = pending.get(app.metadata.name);
        if (want && revision === want.revision) {
          const now = performance.now();
          latencies.push(now - want.sentAt);
          lastSeenAt = now;
          pending.delete(app.metadata.name);
        }
      },
      appWatch.signal,
      3600,
    )
    .catch((error: unknown) => say(`app watch ended: ${String(error)}`));

  replicas = shippedReplicas(admin, { namespace: NS.controller, argoNamespace: NS.argo });
  const controllerArgs = ['--log-level=warn', ...CONTROLLER_ARGS];
  say(
    `  Deployment args: ${replicas.install.args.join(' ')}${controllerArgs.length ? ` + ${controllerArgs.join(' ')}` : ''}`,
  );
  let controller: ReplicaProcess = await replicas.start({
    identity: 'bench-0',
    extraArgs: controllerArgs,
    waitReady: false,
    echo: ECHO,
  });
  const spawnedAt = performance.now();
  let peakHwm = 0;
  const memoryTimer = setInterval(() => (peakHwm = Math.max(peakHwm, memoryKiB(controller.pid).hwm)), 500);
  memoryTimer.unref();
  const metricsText = () => controller.metrics();
  const leading = async () => metric(await metricsText().catch(() => ''), 'pullfleet_leader') === 1;
  await until('the controller to lead', leading, 120_000, 50);
  const leadingAt = performance.now();
  serverBefore = serverCpuMs();
  const controllerCpuBefore = cpuMs(controller.pid);
  await until(`${total} ManifestWorks`, () => workSeen.size === total, 1_800_000, 50);
  const worksAt = Math.max(...workSeen.values());
  const propagationMs = worksAt - leadingAt;
  const workRate = total / (propagationMs / 1000);
  const propagationServerCpu = serverCpuMs() - serverBefore;
  const propagationControllerCpu = cpuMs(controller.pid) - controllerCpuBefore;
  record(
    'controller: every ManifestWork exists',
    `${seconds(worksAt - spawnedAt)} s after the process started, ${seconds(propagationMs)} s after it led = ${workRate.toFixed(0)} works/s`,
  );
  record(
    'ratio: controller works/s to server ManifestWork applies/s',
    `${(workRate / ssaRate).toFixed(2)} (goal >= 0.50)`,
  );
  record(
    'CPU during propagation',
    `controller ${seconds(propagationControllerCpu)} s, etcd + kube-apiserver ${seconds(propagationServerCpu)} s`,
  );
  // Settled: every app carries the finalizer and a status, and the controller stopped writing.
  await until(
    'every app to carry the finalizer and a status',
    () =>
      apps.every((app) => {
        const state = appState.get(app.metadata.name);
        return state?.finalizer && state.sync !== undefined;
      }),
    1_800_000,
    200,
  );
  const settledAt = performance.now();
  const writesNow = async () => metric(await metricsText(), 'pullfleet_api_writes_total');
  let lastWrites = -1;
  await until(
    'the controller to stop writing',
    async () => {
      const now = await writesNow();
      const stable = now === lastWrites;
      lastWrites = now;
      return stable;
    },
    600_000,
    2000,
  );
  let text = await metricsText();
  const propagationWrites = metric(text, 'pullfleet_api_writes_total');
  const propagationRequests = metric(text, 'pullfleet_api_requests_total');
  showRequests('during propagation', requestBreakdown(text));
  const requestsAfterPropagation = requestBreakdown(text);
  record('controller: every app has its finalizer and status', `${seconds(settledAt - leadingAt)} s after it led`);
  record(
    'controller writes per new app',
    `${(propagationWrites / total).toFixed(2)} (works ${metric(text, 'pullfleet_api_writes_total', { resource: 'manifestworks' })}, applications ${metric(text, 'pullfleet_api_writes_total', { resource: 'applications' })})` +
      (propagationRequests ? `; requests ${(propagationRequests / total).toFixed(2)} per app` : ''),
  );

  // -------------------------------------------------------------------- 3. feedback burst
  say(`\n3. feedback burst: ${sample} work status writes by ${CLIENTS} parallel work agents`);
  const writesBefore = propagationWrites;
  const requestsBefore = metric(text, 'pullfleet_api_requests_total');
  const reconcilesBefore = metric(text, 'pullfleet_reconcile_total', { controller: 'application' });
  serverBefore = serverCpuMs();
  const controllerCpuBurst = cpuMs(controller.pid);
  const burstStarted = performance.now();
  const agentMs = await pool(sampled, CLIENTS, async (i) => {
    const work = works[i];
    const app = apps[i];
    const revision = `rev-${i}`;
    const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const status = {
      conditions: [
        {
          type: 'Applied',
          status: 'True',
          reason: 'AppliedManifestWorkComplete',
          message: 'Apply manifest work complete',
          lastTransitionTime: at,
          observedGeneration: 1,
        },
        {
          type: 'Available',
          status: 'True',
          reason: 'ResourcesAvailable',
          message: 'All resources are available',
          lastTransitionTime: at,
          observedGeneration: 1,
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
              name: app.metadata.name,
              namespace: NS.argo,
              ordinal: 0,
            },
            statusFeedback: {
              values: [
                { name: 'healthStatus', fieldValue: { type: 'String', string: 'Healthy' } },
                { name: 'syncStatus', fieldValue: { type: 'String', string: 'Synced' } },
                { name: 'syncRevision', fieldValue: { type: 'String', string: revision } },
              ],
            },
            conditions: [
              {
                type: 'Applied',
                status: 'True',
                reason: 'AppliedManifestComplete',
                message: 'Apply manifest complete',
                lastTransitionTime: at,
              },
            ],
          },
        ],
      },
    };
    pending.set(app.metadata.name, { revision, sentAt: performance.now() });
    await retrying(() =>
      agent.request('PATCH', `${resourcePath(MANIFEST_WORK, work.metadata.namespace, work.metadata.name)}/status`, {
        body: { status },
        contentType: 'application/merge-patch+json',
      }),
    );
  });
  record(
    'agents: feedback writes',
    `${sample} in ${seconds(agentMs)} s = ${(sample / (agentMs / 1000)).toFixed(0)}/s (beside the controller)`,
  );
  await until('every change on its hub app', () => pending.size === 0, 1_800_000, 50);
  const drainMs = lastSeenAt - burstStarted;
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  record(
    'controller: feedback -> hub status',
    `p50 ${seconds(p50)} s, p99 ${seconds(p99)} s, max ${seconds(Math.max(...latencies))} s; burst drained ${seconds(drainMs)} s after its first write`,
  );
  record(
    'ratio: burst p99 to the server time for the same number of status patches',
    `${(p99 / patchMs).toFixed(2)} (p99 ${seconds(p99)} s, server ${seconds(patchMs)} s; goal <= 1.50)`,
  );
  lastWrites = -1;
  await until(
    'the controller to stop writing',
    async () => {
      const now = await writesNow();
      const stable = now === lastWrites;
      lastWrites = now;
      return stable;
    },
    600_000,
    2000,
  );
  text = await metricsText();
  showRequests('during the burst', requestBreakdown(text), requestsAfterPropagation);
  const burstWrites = metric(text, 'pullfleet_api_writes_total') - writesBefore;
  const burstRequests = metric(text, 'pullfleet_api_requests_total') - requestsBefore;
  record(
    'controller writes per feedback change',
    `${(burstWrites / sample).toFixed(2)} (${burstWrites} for ${sample})` +
      (burstRequests ? `; requests ${(burstRequests / sample).toFixed(2)} per change` : '') +
      `; reconciles ${((metric(text, 'pullfleet_reconcile_total', { controller: 'application' }) - reconcilesBefore) / sample).toFixed(2)} per change`,
  );
  record(
    'CPU during the burst',
    `controller ${seconds(cpuMs(controller.pid) - controllerCpuBurst)} s, etcd + kube-apiserver + agents' server side ${seconds(serverCpuMs() - serverBefore)} s`,
  );
  const throttled = metric(text, 'pullfleet_api_requests_total', { code: '429' });
  if (throttled) record('controller requests answered 429', String(throttled));

  // -------------------------------------------------------------------- 4. scale
  if (SCALE) {
    say('\n4. scale: memory, full resync, heartbeat storm, restart');
    await sleep(5000);
    const steady = memoryKiB(controller.pid);
    const heap = metric(await metricsText(), 'pullfleet_nodejs_heap_size_used_bytes');
    record(
      'controller memory, steady state',
      `VmRSS ${(steady.rss / 1024).toFixed(0)} MiB (JS heap used ${(heap / 2 ** 20).toFixed(0)} MiB), peak VmHWM ${(Math.max(peakHwm, steady.hwm) / 1024).toFixed(0)} MiB (${total} apps, ${total} works, ${CLUSTERS} clusters cached)`,
    );
    // A full resync with nothing changed: every key reconciled once more, no write.
    text = await metricsText();
    const resyncWrites = metric(text, 'pullfleet_api_writes_total');
    const resyncReconciles = metric(text, 'pullfleet_reconcile_total', { controller: 'application' });
    const resyncStarted = performance.now();
    await until(
      'one full resync',
      async () =>
        metric(await metricsText(), 'pullfleet_reconcile_total', { controller: 'application' }) >=
        resyncReconciles + total,
      1_800_000,
      1000,
    );
    text = await metricsText();
    record(
      'full resync with nothing changed',
      `${metric(text, 'pullfleet_api_writes_total') - resyncWrites} writes for ${metric(text, 'pullfleet_reconcile_total', { controller: 'application' }) - resyncReconciles} reconciles (waited ${seconds(performance.now() - resyncStarted)} s for it)`,
    );
    // Heartbeat storm: every ManagedCluster's status updated (conditions, capacity, a heartbeat claim).
    const allReconciles = async () => metric(await metricsText(), 'pullfleet_reconcile_total');
    const stormReconciles = await allReconciles();
    const stormWrites = await writesNow();
    const stormMs = await pool(clusters, CLIENTS, async (cluster, c) => {
      const beat = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      await retrying(() =>
        agent.request('PATCH', `${resourcePath(MANAGED_CLUSTER, undefined, cluster)}/status`, {
          contentType: 'application/merge-patch+json',
          body: {
            status: {
              conditions: [
                {
                  type: 'ManagedClusterConditionAvailable',
                  status: 'True',
                  reason: 'ManagedClusterAvailable',
                  message: 'Managed cluster is available',
                  lastTransitionTime: beat,
                },
                {
                  type: 'ManagedClusterJoined',
                  status: 'True',
                  reason: 'ManagedClusterJoined',
                  message: 'Managed cluster joined',
                  lastTransitionTime: beat,
                },
              ],
              allocatable: { cpu: `${8 + (c % 3)}`, memory: '32Gi' },
              capacity: { cpu: '16', memory: '64Gi' },
              version: { kubernetes: 'v1.30.2' },
              clusterClaims: [{ name: 'heartbeat.example.com', value: beat }],
            },
          },
        }),
      );
    });
    await sleep(3000);
    record(
      'ManagedCluster heartbeat storm',
      `${CLUSTERS} status updates in ${seconds(stormMs)} s: ${(await allReconciles()) - stormReconciles} reconciles, ${(await writesNow()) - stormWrites} writes`,
    );
    // Restart: graceful stop, then a new process lists everything, leads and reconciles every key once.
    const stopStarted = performance.now();
    await controller.stop();
    const stoppedAt = performance.now();
    clearInterval(memoryTimer);
    controller = await replicas.start({ identity: 'bench-1', extraArgs: controllerArgs, waitReady: false, echo: ECHO });
    const restartedAt = performance.now();
    await until('the new process to lead', leading, 300_000, 50);
    const ledAt = performance.now();
    await until(
      'the new process to catch up',
      async () => metric(await metricsText().catch(() => ''), 'pullfleet_caught_up') === 1,
      600_000,
      100,
    );
    const caughtUpAt = performance.now();
    text = await metricsText();
    showRequests('of the new process until caught up', requestBreakdown(text));
    record(
      'restart (cold start, list of everything)',
      `stopped in ${seconds(stoppedAt - stopStarted)} s; new process leading ${seconds(ledAt - restartedAt)} s and caught up ${seconds(caughtUpAt - restartedAt)} s after it started (goal <= 60 s); ${metric(text, 'pullfleet_api_writes_total')} writes, peak VmHWM ${(memoryKiB(controller.pid).hwm / 1024).toFixed(0)} MiB`,
    );
  }
  say(`\npeak controller memory (VmHWM): ${(Math.max(peakHwm, memoryKiB(controller.pid).hwm) / 1024).toFixed(0)} MiB`);
  say('\n| measure | value |\n|---|---|');
  for (const [what, value] of results) say(`| ${what} | ${value} |`);
  say(
    `\nnode ${process.version}, load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  for (const abort of aborts) abort.abort();
  await replicas?.stopAll().catch(() => undefined);
  await envtest?.stop();
}
process.exit(0);
