/**
 * OCM's real work agent (v1.3.1, `../shared/ocm`) between two real API servers, for the suites of
 * `npm run test:ocm` (test/ocm/). The hub is the envtest server the runner started
 * (scripts/test-envtest.ts, PULLFLEET_E2E_KUBECONFIG); each test file starts a spoke of its own, a second
 * etcd + kube-apiserver (test/support/envtest.ts), and one `work agent` process per spoke cluster name.
 *
 * What the harness sets up (../shared/ocm/README.md, "CRDs: which go where"):
 * - hub: the ManifestWork and cluster CRDs (already there from the runner, applied again as no-ops) and
 *   OCM's AddOnPlacementScore, and the cluster namespace of each spoke cluster name;
 * - spoke: OCM's AppliedManifestWork and Argo CD's Application CRD (server-side), the payload namespaces
 *   and the agent's own namespace (its events).
 *
 * Each agent runs with `--status-sync-interval` 1 s unless the suite or PULLFLEET_OCM_STATUS_SYNC_INTERVAL
 * says otherwise (OCM's default 10 s makes every feedback wait 10 to 19 s), leader election off, a free
 * loopback `--listen` port, `TMPDIR` in the harness's folder (it writes self-signed serving certificates
 * there) and `--agent-id` set to its cluster name. Several agents share the one spoke server. An agent signs
 * in to both servers as admin (`system:masters`), not with the RBAC a klusterlet grants.
 *
 * An agent is ready when a canary work it is given (a ConfigMap in its namespace) is Applied; the canary is
 * then deleted and its removal awaited, so tests start from an empty cluster namespace. An agent that exits
 * before that fails the start at once.
 *
 * Logs (agents, spoke etcd and kube-apiserver) go to files in one folder, removed by `stop()` unless a
 * test failed (see `track`), the start failed, or PULLFLEET_OCM_KEEP=1; the folder is printed when kept.
 * Every process is stopped by pid: SIGTERM, then SIGKILL after 10 s; also on exit or interrupt of the
 * test process.
 */
import { mkdirSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { freePort, startEnvtest, type Envtest } from './envtest.js';
import { applyCrds, readCrd, realServerKubeconfig } from './envtest-cluster.js';
import { CLUSTER_CRDS, ensureNamespace, readOcmCrd } from './ocm-process.js';
import { installExitHooks, spawnOcm, stopOcm, tailOf } from './ocm-process.js';
import { RawClient, type RawObject } from './raw-client.js';
import { waitFor } from './wait.js';

export { SHARED_OCM } from './ocm-process.js';

/** The line printed when the real-agent suites cannot run, and what enables them. */
export const OCM_SKIP_MESSAGE =
  'real OCM agent suites skipped: run them with OCM_ASSETS=$(../shared/ocm/setup) KUBEBUILDER_ASSETS=$(../shared/envtest/setup) npm run test:ocm';

/** The namespace the agents run "in" on the spoke (their events). */
export const AGENT_NAMESPACE = 'open-cluster-management-agent';
/** The work agent's field manager on the spoke (its server-side applies). */
export const WORK_AGENT_FIELD_MANAGER = 'work-agent';
/** The finalizer the agent puts on every ManifestWork it applies. */
export const WORK_CLEANUP_FINALIZER = 'cluster.open-cluster-management.io/manifest-work-cleanup';

const WORK_API = 'work.open-cluster-management.io/v1';
const CANARY_WORK = 'pullfleet-ocm-canary';

/** Hub CRDs (beyond what the runner installs, which is applied again as a no-op). */
const HUB_CRDS = ['work.open-cluster-management.io/ManifestWork.yaml', ...CLUSTER_CRDS] as const;

/** The folder with the `work` binary (OCM_ASSETS), or undefined. */
export function ocmAssets(): string | undefined {
  return process.env.OCM_ASSETS || undefined;
}

/**
 * Declares a suite that runs OCM's work agent against the runner's hub, or one skipped test saying how
 * to enable it (`npm run test:ocm` fails a CI run with a skipped test).
 */
export function describeRealOcm(name: string, body: (hubKubeconfigPath: string) => void): void {
  const hub = realServerKubeconfig();
  if (!hub || !ocmAssets()) {
    describe(name, () => test.skip(OCM_SKIP_MESSAGE, () => undefined));
    return;
  }
  describe(`${name} (real OCM work agent)`, () => body(hub));
}

export interface OcmSpokeOptions {
  /** The spoke cluster names: one agent each, serving that cluster namespace of the hub. */
  readonly clusters: readonly string[];
  /** Namespaces created on the spoke for the payloads. @default ['argocd'] */
  readonly spokeNamespaces?: readonly string[];
  /**
   * The agent's `--status-sync-interval` (its feedback poll period).
   * @default process.env.PULLFLEET_OCM_STATUS_SYNC_INTERVAL, else '1s'
   */
  readonly statusSyncInterval?: string;
  /** More `work agent` flags. */
  readonly agentArgs?: readonly string[];
  /** Bound for each start step (servers, CRDs, canaries). @default 120000 */
  readonly timeoutMs?: number;
}

/** One running `work agent` process. */
export interface OcmAgent {
  readonly cluster: string;
  readonly pid: number;
  readonly logFile: string;
  /** Milliseconds from spawn to its canary work being Applied. */
  readonly readyMs: number;
  /** The last lines of its log (without the harmless client-CA errors every agent on envtest logs). */
  tail(lines?: number): string;
  /** SIGTERM, then SIGKILL after `boundMs`; resolves with how long it took to exit and whether it had to be killed. */
  stop(boundMs?: number): Promise<{ ms: number; killed: boolean }>;
}

/** A spoke API server with the real work agent for one or more cluster names. */
export interface OcmSpoke {
  readonly hub: RawClient;
  readonly hubConfig: KubeConfig;
  readonly spoke: RawClient;
  readonly spokeConfig: KubeConfig;
  readonly spokeServer: Envtest;
  readonly agents: ReadonlyMap<string, OcmAgent>;
  /** The folder holding the logs. */
  readonly logDir: string;
  /** The agents' `--status-sync-interval`. */
  readonly statusSyncInterval: string;
  /** Startup timings, in milliseconds. */
  readonly timings: { readonly spokeReadyMs: number; readonly crdsMs: number; readonly agentsReadyMs: number };
  /** Runs `fn`; a throw marks the run failed (logs are kept) and is rethrown with the agents' last log lines. */
  track<T>(fn: () => Promise<T>): Promise<T>;
  /** The last lines of every agent's log, for failure messages. */
  agentTails(lines?: number): string;
  /** Stops the agents, then the spoke server; removes the logs unless something failed. Idempotent. */
  stop(): Promise<void>;
}

/** Log lines every agent on envtest writes and that mean nothing (envtest has no client CA configmap). */
const HARMLESS = /extension-apiserver-authentication/;

function canaryWork(cluster: string): RawObject {
  return {
    apiVersion: WORK_API,
    kind: 'ManifestWork',
    metadata: { name: CANARY_WORK, namespace: cluster },
    spec: {
      workload: {
        manifests: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `canary-${cluster}`, namespace: AGENT_NAMESPACE },
            data: { cluster },
          },
        ],
      },
    },
  };
}

interface WorkStatusView {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** Starts a spoke API server and the real work agent for `options.clusters` against the hub `hubKubeconfigPath`. */
export async function startOcmSpoke(hubKubeconfigPath: string, options: OcmSpokeOptions): Promise<OcmSpoke> {
  const assets = ocmAssets();
  if (!assets) throw new Error(OCM_SKIP_MESSAGE);
  if (!existsSync(join(assets, 'work')))
    throw new Error(`OCM_ASSETS=${assets} has no work binary; run ../shared/ocm/setup`);
  if (options.clusters.length === 0)
    throw new Error('startOcmSpoke: clusters is empty; give at least one cluster name');
  installExitHooks();
  const timeoutMs = options.timeoutMs ?? 120_000;
  const statusSyncInterval = options.statusSyncInterval ?? process.env.PULLFLEET_OCM_STATUS_SYNC_INTERVAL ?? '1s';
  const logDir = mkdtempSync(join(tmpdir(), 'pullfleet-ocm-'));
  const agentTmp = join(logDir, 'tmp');
  mkdirSync(agentTmp);
  const hubConfig = new KubeConfig();
  hubConfig.loadFromFile(hubKubeconfigPath);
  const hub = new RawClient(hubConfig);
  const agents = new Map<string, OcmAgent>();
  let spokeServer: Envtest | undefined;
  let failed = false;
  let stopped: Promise<void> | undefined;

  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      for (const agent of [...agents.values()].reverse()) await agent.stop();
      await spokeServer?.stop();
      if (failed || process.env.PULLFLEET_OCM_KEEP === '1') {
        process.stderr.write(`real-ocm: logs kept in ${logDir}${spokeServer ? ` and ${spokeServer.dir}` : ''}\n`);
      } else {
        rmSync(logDir, { recursive: true, force: true });
        if (spokeServer) rmSync(spokeServer.dir, { recursive: true, force: true });
      }
    })());

  const agentTails = (lines = 30): string =>
    [...agents.values()].map((a) => `--- work agent ${a.cluster} (${a.logFile}):\n${a.tail(lines)}`).join('\n');

  try {
    const t0 = Date.now();
    // The spoke server's folder is kept by envtest and removed here, so a failure can keep it.
    spokeServer = await startEnvtest({ keep: true, readyTimeoutMs: timeoutMs });
    const spokeReadyMs = Date.now() - t0;
    const spokeConfig = new KubeConfig();
    spokeConfig.loadFromFile(spokeServer.kubeconfigPath);
    const spoke = new RawClient(spokeConfig);

    const t1 = Date.now();
    await Promise.all([
      applyCrds(hubConfig, [...HUB_CRDS.map(readCrd), readOcmCrd('hub/AddOnPlacementScore.yaml')], timeoutMs),
      applyCrds(
        spokeConfig,
        [readOcmCrd('spoke/AppliedManifestWork.yaml'), readCrd('argoproj.io/Application.yaml')],
        timeoutMs,
      ),
    ]);
    for (const ns of [...(options.spokeNamespaces ?? ['argocd']), AGENT_NAMESPACE]) await ensureNamespace(spoke, ns);
    for (const cluster of options.clusters) await ensureNamespace(hub, cluster);
    const crdsMs = Date.now() - t1;

    const t2 = Date.now();
    for (const cluster of options.clusters) {
      const port = await freePort();
      const logFile = join(logDir, `work-agent-${cluster}.log`);
      const args = [
        `--spoke-cluster-name=${cluster}`,
        `--kubeconfig=${spokeServer.kubeconfigPath}`,
        '--workload-source-driver=kube',
        `--workload-source-config=${hubKubeconfigPath}`,
        `--agent-id=${cluster}`,
        '--disable-leader-election',
        `--namespace=${AGENT_NAMESPACE}`,
        `--listen=127.0.0.1:${port}`,
        `--status-sync-interval=${statusSyncInterval}`,
        ...(options.agentArgs ?? []),
      ];
      const spawnedAt = Date.now();
      const agentProcess = spawnOcm(join(assets, 'work'), ['agent', ...args], logFile, agentTmp);
      let exitedAt: number | undefined;
      void agentProcess.exited.then(() => (exitedAt = Date.now()));
      const agent: OcmAgent & { readyMs: number } = {
        cluster,
        pid: agentProcess.child.pid!,
        logFile,
        readyMs: 0,
        tail: (lines = 30) => tailOf(logFile, lines, HARMLESS),
        async stop(boundMs = 10_000) {
          const started = Date.now();
          if (exitedAt !== undefined) return { ms: 0, killed: false };
          const killed = await stopOcm(agentProcess, boundMs);
          return { ms: Date.now() - started, killed };
        },
      };
      agents.set(cluster, agent);
      await hub.create(canaryWork(cluster));
      const outcome = await waitFor(
        `the work agent of ${cluster} to apply its canary work`,
        async () => {
          if (exitedAt !== undefined) return 'exited';
          const work = await hub.get<WorkStatusView>(WORK_API, 'ManifestWork', cluster, CANARY_WORK);
          return work?.status?.conditions?.some((c) => c.type === 'Applied' && c.status === 'True') && 'applied';
        },
        { timeoutMs, intervalMs: 100, describe: () => agent.tail(15) },
      );
      if (outcome === 'exited') throw new Error(`the work agent of ${cluster} exited before it was ready`);
      agent.readyMs = Date.now() - spawnedAt;
      await hub.delete(WORK_API, 'ManifestWork', cluster, CANARY_WORK);
      await waitFor(
        `the canary work of ${cluster} to be gone`,
        async () => !(await hub.get(WORK_API, 'ManifestWork', cluster, CANARY_WORK)),
        { timeoutMs, intervalMs: 100, describe: () => agent.tail(15) },
      );
    }
    const agentsReadyMs = Date.now() - t2;

    return {
      hub,
      hubConfig,
      spoke,
      spokeConfig,
      spokeServer,
      agents,
      logDir,
      statusSyncInterval,
      timings: { spokeReadyMs, crdsMs, agentsReadyMs },
      async track<T>(fn: () => Promise<T>): Promise<T> {
        try {
          return await fn();
        } catch (error) {
          failed = true;
          if (error instanceof Error) error.message += `\n${agentTails(20)}\n(logs kept in ${logDir})`;
          throw error;
        }
      },
      agentTails,
      stop,
    };
  } catch (error) {
    failed = true;
    const tails = agentTails(20);
    await stop();
    throw new Error(`${(error as Error).message ?? String(error)}${tails ? `\n${tails}` : ''}`, { cause: error });
  }
}
