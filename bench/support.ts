/**
 * What the benchmarks share: waiting and statistics, the fake hub they run against, and the controller
 * process they measure (started through bin/, its CPU time and peak memory read from /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Application } from '../src/model/core/types.js';
import { fleetReportCrd } from '../src/model/report/report-crd.js';
import { startFakeApiServer, type FakeApiServer, type StoreClient } from '../test/double/fake-apiserver.js';
import { seedClusterSet, seedManagedCluster, seedPullApplication } from '../test/double/hub-seed.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

// ---------------------------------------------------------------------------------------------- waiting

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks every `everyMs` until `check` holds; throws `timed out waiting for <what>` after `timeoutMs`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------- values

/** The `p`th percentile (nearest rank) of `values`. */
export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** The name of the `i`th spoke: `cluster-0000`, `cluster-0001`, ... */
export const clusterName = (i: number) => `cluster-${String(i).padStart(4, '0')}`;

/** `date` as Kubernetes writes times: RFC 3339 in UTC, whole seconds. */
export const iso = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

// ---------------------------------------------------------------------------------------------- the hub

/**
 * Starts the in-process fake API server with the FleetReport CRD, the ManagedClusterSet `bench` and its
 * binding in `argocd`. Namespaces exist implicitly: the benchmarks measure the controller, not namespace
 * admission.
 */
export async function startBenchApiServer(): Promise<FakeApiServer> {
  const server = await startFakeApiServer({ implicitNamespaces: true });
  server.store.registerCrd(fleetReportCrd());
  seedClusterSet(server.store, 'bench');
  return server;
}

/** Creates the ManagedCluster `name` in the set `bench`, accepted by the hub. */
export function createManagedCluster(store: StoreClient, name: string): void {
  seedManagedCluster(store, name, 'bench');
}

/**
 * Creates the pull hub Application `<cluster>-app-<index>` in `argocd` for `cluster` (destination namespace
 * `app-<index>`, path `apps/app-<index>` of one Git repository), which the hub's Argo CD skips.
 */
export function createHubApplication(store: StoreClient, cluster: string, index: number): Application {
  return seedPullApplication(store, {
    name: `${cluster}-app-${index}`,
    cluster,
    destinationNamespace: `app-${index}`,
    source: { repoURL: 'https://git.example.com/apps.git', path: `apps/app-${index}`, targetRevision: 'main' },
  });
}

/**
 * The writes (create, update, patch, delete) `server` has served on `resources`: by default the ManifestWorks,
 * Applications, Secrets and FleetReports the controller writes.
 */
export const writeCount = (
  server: FakeApiServer,
  resources: readonly string[] = ['manifestworks', 'applications', 'secrets', 'fleetreports'],
) => resources.reduce((sum, resource) => sum + server.writeCount(resource), 0);

// ---------------------------------------------------------------------------------------------- the controller

/** A controller process started by {@link spawnController}. */
export interface ControllerProcess {
  readonly child: ChildProcess;
  /** Stops the process (SIGTERM), waits for it to exit and removes its kubeconfig. */
  stop(): Promise<void>;
}

/**
 * Starts the real controller (bin/pullfleet-controller.js, its own process) against `server`, serving
 * probes and metrics on `port`, logging warnings only, as identity `bench` in namespace `pullfleet-system`.
 * Its kubeconfig goes to a new temporary directory named `<tmpPrefix>…`; `args` are added to its command line.
 */
export function spawnController(
  server: FakeApiServer,
  port: number,
  options: { readonly args?: readonly string[]; readonly tmpPrefix?: string } = {},
): ControllerProcess {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), options.tmpPrefix ?? 'pullfleet-bench-'));
  const kubeconfigPath = path.join(tmp, 'kubeconfig');
  fs.writeFileSync(kubeconfigPath, server.kubeConfigYaml());
  const child = spawn(
    process.execPath,
    [
      path.join(root, 'bin/pullfleet-controller.js'),
      `--kubeconfig=${kubeconfigPath}`,
      `--port=${port}`,
      '--log-level=warn',
      '--identity=bench',
      ...(options.args ?? []),
    ],
    {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, PULLFLEET_NAMESPACE: 'pullfleet-system' },
    },
  );
  return {
    child,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Waits up to a minute until the controller on `port` answers /readyz with success. */
export async function waitForReadyz(port: number): Promise<void> {
  await until(
    'readyz',
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).ok;
      } catch {
        return false;
      }
    },
    60_000,
  );
}

/** CPU time (user + system) of a process in ms, from /proc (clock ticks of 10 ms); 0 once it is gone. */
export function cpuMs(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Samples a process's peak memory (VmHWM in /proc) every 200 ms until `stop()`; `peakKiB()` is the highest seen. */
export function samplePeakMemory(pid: number | undefined): { peakKiB(): number; stop(): void } {
  let peakKiB = 0;
  const timer = setInterval(() => {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      peakKiB = Math.max(peakKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    } catch {
      // the process is gone
    }
  }, 200);
  return { peakKiB: () => peakKiB, stop: () => clearInterval(timer) };
}
