/**
 * The hub controller as it ships, on a real API server: its install (ServiceAccount, ClusterRole, Roles,
 * bindings) rendered by pullfleet's own ControllerInstall construct for the namespaces a test uses and
 * applied to the server, and the controller started as a separate process (`node bin/pullfleet-controller.js`)
 * with the container args and env of the Deployment that install renders, authenticated as its
 * ServiceAccount with a token from the TokenRequest API. Whatever the shipped RBAC does not grant, the
 * server refuses, as it would on a hub.
 *
 * The one departure from the Deployment is `--port`: each process gets a free loopback port (pods have
 * their own network; processes on one machine do not). A test's own settings (lease timings, an
 * identity) are passed as extra flags after the shipped ones, and the identity as POD_NAME, as the
 * Deployment's downward API would.
 *
 * `shippedControllerStarter` starts processes of the default install (what the shared scenarios use);
 * `shippedReplicas` those of an install with settings of its own (replicas, shards, workers), for the
 * sharding tests and `npm run bench:server`. Both start the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { ControllerInstall, type ControllerInstallProps } from '../../src/constructs/controller-install.js';
import type { ControllerConfig } from '../../src/controller/runtime/config.js';
import type { RunningController } from '../../src/controller/runtime/manager.js';
import { RawClient, type RawObject } from './raw-client.js';
import { serviceAccountKubeconfig } from './envtest-cluster.js';
import { freePort, probe } from './envtest.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONTROLLER_BIN = join(ROOT, 'bin', 'pullfleet-controller.js');

/** The namespaces an install is rendered for. */
export interface InstallNamespaces {
  /** The controller's own namespace (ServiceAccount, leader Lease). */
  readonly namespace: string;
  /** The hub Argo CD namespace (cluster Secrets). */
  readonly argoNamespace: string;
}

/** What the shipped Deployment runs: container args and env (downward API fields unresolved). */
export interface ShippedInstall {
  readonly objects: readonly RawObject[];
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  readonly args: readonly string[];
  readonly env: ReadonlyArray<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
}

/**
 * Renders the controller install with pullfleet's ControllerInstall construct: for the namespaces a test
 * uses, and any other settings of the install (replicas, shards, workers).
 */
export function renderInstall(props: InstallNamespaces & ControllerInstallProps): ShippedInstall {
  const app = Testing.app();
  const chart = new Chart(app, 'hub');
  new ControllerInstall(chart, 'Controller', props);
  const objects = Testing.synth(chart) as RawObject[];
  const deployment = objects.find((o) => o.kind === 'Deployment') as RawObject & {
    spec: {
      template: {
        spec: {
          serviceAccountName: string;
          containers: Array<{ args?: string[]; command?: string[]; env?: ShippedInstall['env'] }>;
        };
      };
    };
  };
  if (!deployment) throw new Error('the controller install renders no Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  if (container.command)
    throw new Error(
      `the Deployment overrides the image entrypoint (${container.command.join(' ')}); run that here too`,
    );
  return {
    objects,
    serviceAccount: { namespace: deployment.metadata.namespace!, name: pod.serviceAccountName },
    args: container.args ?? [],
    env: container.env ?? [],
  };
}

/** The kinds of the install that grant or identify (the rest is for a real cluster to run). */
const IDENTITY_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** Applies the install's ServiceAccount and RBAC (namespaces and CRDs are the test's to create). */
export async function applyInstall(admin: KubeConfig, install: ShippedInstall): Promise<void> {
  const client = new RawClient(admin);
  for (const object of install.objects) {
    if (IDENTITY_KINDS.has(object.kind)) await client.apply(object, 'pullfleet-test');
  }
}

/** Settings a test may pass, as the controller's own flags. */
const FLAGS: Partial<Record<keyof ControllerConfig, string>> = {
  argoNamespace: '--argo-namespace',
  namespace: '--namespace',
  feedbackScrapeType: '--feedback-scrape-type',
  staleAfterSeconds: '--stale-after',
  operationTimeoutSeconds: '--operation-timeout',
  relaxTenancy: '--relax-tenancy',
  resyncSeconds: '--resync',
  workers: '--workers',
  clusterSecrets: '--cluster-secrets',
  fleetReports: '--fleet-reports',
  multiclusterReports: '--multicluster-reports',
  resourceSummaries: '--resource-summaries',
  leaderElection: '--leader-elect',
  leaseName: '--lease-name',
  leaseDurationSeconds: '--lease-duration',
  renewDeadlineSeconds: '--renew-deadline',
  retryPeriodSeconds: '--retry-period',
  watchTimeoutSeconds: '--watch-timeout',
  requestTimeoutSeconds: '--request-timeout',
};

function flagsFor(config: Partial<ControllerConfig>): string[] {
  const flags: string[] = [];
  for (const [key, value] of Object.entries(config) as Array<[keyof ControllerConfig, unknown]>) {
    if (value === undefined || key === 'identity' || key === 'httpPort' || key === 'httpHost') continue;
    const flag = FLAGS[key];
    if (!flag) throw new Error(`no controller flag for the setting ${key}`);
    flags.push(`${flag}=${String(value)}`);
  }
  return flags;
}

/** A controller process: the RunningController interface, plus kill -9 and its output. */
export interface ControllerProcess extends RunningController {
  readonly identity: string;
  readonly pid: number;
  /** SIGKILL: no shutdown, no Lease release; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
  /** The last lines the process logged (pino JSON), for failure messages. */
  output(lines?: number): string;
}

export interface ProcessStartOptions {
  readonly waitReady?: boolean;
  /** Bound for ready(). @default 120 s */
  readonly readyTimeoutMs?: number;
}

/** A started process with its port (metrics) and pid (memory, CPU). */
export interface ReplicaProcess extends ControllerProcess {
  readonly port: number;
}

/** How one process of an install is started. */
interface LaunchOptions extends ProcessStartOptions {
  /** POD_NAME of the process. */
  readonly identity: string;
  /** Flags after the Deployment's args (the last occurrence of a flag wins, as on the command line). */
  readonly extraArgs: readonly string[];
  /** Pipe the output to this process's stderr as well (benchmarks). @default false */
  readonly echo?: boolean;
  /** Log lines kept for output() and forbidden(). @default 2,000 */
  readonly keepLines?: number;
}

let podCounter = 0;

/**
 * Processes of one rendered install, authenticated as its ServiceAccount: the install's RBAC is applied and a
 * token minted (valid for `tokenSeconds`) before the first start; `stopAll` stops what is still running.
 */
function installProcesses(admin: KubeConfig, install: ShippedInstall, tokenSeconds?: number) {
  const running: ReplicaProcess[] = [];
  const started: ReplicaProcess[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'pullfleet-shipped-'));
  let kubeconfigFile: string | undefined;

  async function kubeconfig(): Promise<string> {
    if (!kubeconfigFile) {
      await applyInstall(admin, install);
      const file = join(scratch, 'kubeconfig');
      writeFileSync(
        file,
        await serviceAccountKubeconfig(
          admin,
          install.serviceAccount.namespace,
          install.serviceAccount.name,
          ...(tokenSeconds !== undefined ? [tokenSeconds] : []),
        ),
        { mode: 0o600 },
      );
      kubeconfigFile = file;
    }
    return kubeconfigFile;
  }

  function podEnv(podName: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const entry of install.env) {
      if (entry.value !== undefined) env[entry.name] = entry.value;
      else if (entry.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[entry.name] = podName;
      else if (entry.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace')
        env[entry.name] = install.serviceAccount.namespace;
      else
        throw new Error(
          `the Deployment's env ${entry.name} comes from a source this harness does not resolve: ${JSON.stringify(entry.valueFrom)}`,
        );
    }
    return env;
  }

  async function launch(options: LaunchOptions): Promise<ReplicaProcess> {
    const file = await kubeconfig();
    const port = await freePort();
    const { identity } = options;
    const args = [
      ...install.args.filter((a) => !a.startsWith('--port=') && a !== '--port'),
      `--port=${port}`,
      ...options.extraArgs,
    ];
    // The environment of a pod: nothing of the test runner's own except what node needs to run.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      KUBECONFIG: file,
      ...podEnv(identity),
    };
    const child: ChildProcess = spawn(process.execPath, [CONTROLLER_BIN, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keepLines = options.keepLines ?? 2_000;
    const lines: string[] = [];
    const keep = (chunk: Buffer) => {
      if (options.echo) process.stderr.write(chunk);
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(line);
      if (lines.length > keepLines) lines.splice(0, lines.length - Math.ceil(keepLines / 2));
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
    );
    let gone = false;
    void exited.then(() => (gone = true));
    const output = (count = 40) => lines.slice(-count).join('\n');
    const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;

    const ready = async (): Promise<void> => {
      const deadline = Date.now() + readyTimeoutMs;
      for (;;) {
        if (gone) throw new Error(`controller ${identity} exited before it was ready:\n${output()}`);
        try {
          if ((await probe(`http://127.0.0.1:${port}/readyz`)).status === 200) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline)
          throw new Error(`controller ${identity} was not ready within ${readyTimeoutMs} ms:\n${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const signalAndWait = async (signal: NodeJS.Signals, boundMs: number): Promise<void> => {
      if (gone) return;
      child.kill(signal);
      const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), boundMs).unref());
      if ((await Promise.race([exited, timer])) === 'late') {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`controller ${identity} did not exit within ${boundMs} ms of ${signal}:\n${output()}`);
      }
    };
    const started_: ReplicaProcess = {
      identity,
      pid: child.pid!,
      port,
      exited,
      output,
      ready,
      stop: () => signalAndWait('SIGTERM', 25_000),
      kill: () => signalAndWait('SIGKILL', 10_000),
      httpPort: () => port,
      async metrics() {
        const result = await probe(`http://127.0.0.1:${port}/metrics`, { timeoutMs: 10_000 });
        if (result.status !== 200) throw new Error(`GET /metrics answered ${result.status}`);
        return result.body;
      },
    };
    running.push(started_);
    started.push(started_);
    if (options.waitReady !== false) await ready();
    return started_;
  }

  return {
    launch,
    /**
     * Log lines of every process started here that report a request the API server refused as
     * forbidden (403): the shipped RBAC lacks something the controller does.
     */
    forbidden(): string[] {
      return started.flatMap((c) =>
        c
          .output(Number.MAX_SAFE_INTEGER)
          .split('\n')
          .filter((line) => /\b403\b|forbidden/i.test(line))
          .map((line) => `${c.identity}: ${line}`),
      );
    },
    /** Stops every process started here (SIGTERM, then SIGKILL past the bound); returns those that needed SIGKILL. */
    async stopAll(): Promise<string[]> {
      const stuck: string[] = [];
      await Promise.all(running.splice(0).map((c) => c.stop().catch(() => void stuck.push(c.identity))));
      rmSync(scratch, { recursive: true, force: true });
      return stuck;
    },
  };
}

/**
 * Starts controller processes of the default install for `namespaces`, each with a test's settings as
 * the controller's own flags: tokens are minted once per starter, processes are stopped by `stopAll`.
 */
export function shippedControllerStarter(admin: KubeConfig, namespaces: InstallNamespaces) {
  const install = renderInstall(namespaces);
  const processes = installProcesses(admin, install);
  return {
    install,
    start: (config: Partial<ControllerConfig> = {}, options: ProcessStartOptions = {}): Promise<ControllerProcess> =>
      processes.launch({
        ...options,
        identity: config.identity ?? `pullfleet-controller-${process.pid}-${++podCounter}`,
        extraArgs: flagsFor(config),
      }),
    forbidden: processes.forbidden,
    stopAll: processes.stopAll,
  };
}

export interface ReplicaStartOptions extends ProcessStartOptions {
  /** POD_NAME of the replica. @default a unique name */
  readonly identity?: string;
  /** Flags appended after the Deployment's args (they win). */
  readonly extraArgs?: readonly string[];
  /** Pipe the replica's output to this process's stderr as well (benchmarks). @default false */
  readonly echo?: boolean;
}

/**
 * Replicas of an install with settings of its own (replicas, shards, workers), for sharding tests and
 * benchmarks: tokens last two hours, and each replica keeps up to 200,000 log lines.
 */
export function shippedReplicas(admin: KubeConfig, props: InstallNamespaces & ControllerInstallProps) {
  const install = renderInstall(props);
  const processes = installProcesses(admin, install, 7200);
  return {
    install,
    start: (options: ReplicaStartOptions = {}): Promise<ReplicaProcess> =>
      processes.launch({
        ...options,
        identity: options.identity ?? `pullfleet-controller-${process.pid}-r${++podCounter}`,
        extraArgs: options.extraArgs ?? [],
        keepLines: 200_000,
      }),
    forbidden: processes.forbidden,
    stopAll: processes.stopAll,
  };
}
