/**
 * Replicas of the controller as it ships, for an install with settings of its own (replicas, shards,
 * workers): the install is rendered by pullfleet's ControllerInstall construct with those props, its
 * ServiceAccount and RBAC are applied, and every replica is `node bin/pullfleet-controller.js` with the
 * container args and env of the rendered Deployment, authenticated as the ServiceAccount with a
 * TokenRequest token (test/support/shipped-controller.ts does the same for the default install and is
 * what the shared scenarios use).
 *
 * The departures from a pod are those of shipped-controller.ts: `--port` is a free loopback port, the
 * identity (POD_NAME) is given per replica, and a caller may append flags after the shipped ones
 * (`extraArgs`, e.g. short Lease timings); the last occurrence of a flag wins, as on the command line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { ControllerInstall, type ControllerInstallProps } from '../../src/constructs/controller-install.js';
import type { RawObject } from './raw-client.js';
import { serviceAccountKubeconfig } from './envtest-cluster.js';
import { freePort, probe } from './envtest.js';
import { applyInstall, type ControllerProcess, type ShippedInstall } from './shipped-controller.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONTROLLER_BIN = join(ROOT, 'bin', 'pullfleet-controller.js');

/** Renders the controller install with `props` (namespaces included) through ControllerInstall. */
export function renderInstallWith(props: ControllerInstallProps): ShippedInstall {
  const app = Testing.app();
  const chart = new Chart(app, 'hub');
  new ControllerInstall(chart, 'Controller', props);
  const objects = Testing.synth(chart) as RawObject[];
  const deployment = objects.find((o) => o.kind === 'Deployment') as
    | (RawObject & {
        spec: {
          template: {
            spec: {
              serviceAccountName: string;
              containers: Array<{ args?: string[]; command?: string[]; env?: ShippedInstall['env'] }>;
            };
          };
        };
      })
    | undefined;
  if (!deployment) throw new Error('the controller install renders no Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  if (container.command)
    throw new Error(`the Deployment overrides the image entrypoint (${container.command.join(' ')})`);
  return {
    objects,
    serviceAccount: { namespace: deployment.metadata.namespace!, name: pod.serviceAccountName },
    args: container.args ?? [],
    env: container.env ?? [],
  };
}

/** A started replica: the process interface plus its port (metrics) and pid (memory, CPU). */
export interface ReplicaProcess extends ControllerProcess {
  readonly port: number;
}

export interface ReplicaStartOptions {
  /** POD_NAME of the replica. @default a unique name */
  readonly identity?: string;
  /** Flags appended after the Deployment's args (they win). */
  readonly extraArgs?: readonly string[];
  /** Wait until /readyz answers 200. @default true */
  readonly waitReady?: boolean;
  /** Bound for ready(). @default 120 s */
  readonly readyTimeoutMs?: number;
  /** Pipe the replica's output to this process's stderr as well (benchmarks). @default false */
  readonly echo?: boolean;
}

let replicaCounter = 0;

/** Starts replicas of one rendered install; `stopAll` stops them. */
export function shippedReplicas(admin: KubeConfig, props: ControllerInstallProps) {
  const install = renderInstallWith(props);
  const running: ReplicaProcess[] = [];
  const started: ReplicaProcess[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'pullfleet-replicas-'));
  let kubeconfigFile: string | undefined;

  async function kubeconfig(): Promise<string> {
    if (!kubeconfigFile) {
      await applyInstall(admin, install);
      const file = join(scratch, 'kubeconfig');
      writeFileSync(
        file,
        await serviceAccountKubeconfig(admin, install.serviceAccount.namespace, install.serviceAccount.name, 7200),
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
      else throw new Error(`the Deployment's env ${entry.name} comes from a source this harness does not resolve`);
    }
    return env;
  }

  async function start(options: ReplicaStartOptions = {}): Promise<ReplicaProcess> {
    const file = await kubeconfig();
    const port = await freePort();
    const identity = options.identity ?? `pullfleet-controller-${process.pid}-r${++replicaCounter}`;
    const args = [
      ...install.args.filter((a) => !a.startsWith('--port=') && a !== '--port'),
      `--port=${port}`,
      ...(options.extraArgs ?? []),
    ];
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
    const lines: string[] = [];
    const keep = (chunk: Buffer) => {
      if (options.echo) process.stderr.write(chunk);
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(line);
      if (lines.length > 200_000) lines.splice(0, lines.length - 100_000);
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
    const replica: ReplicaProcess = {
      identity,
      pid: child.pid!,
      port,
      exited,
      output,
      ready,
      stop: () => signalAndWait('SIGTERM', 25_000),
      kill: () => signalAndWait('SIGKILL', 10_000),
      async metrics() {
        const result = await probe(`http://127.0.0.1:${port}/metrics`, { timeoutMs: 10_000 });
        if (result.status !== 200) throw new Error(`GET /metrics answered ${result.status}`);
        return result.body;
      },
    };
    running.push(replica);
    started.push(replica);
    if (options.waitReady !== false) await ready();
    return replica;
  }

  return {
    install,
    start,
    /** Log lines of every replica started here that report a request refused as forbidden (403). */
    forbidden(): string[] {
      return started.flatMap((c) =>
        c
          .output(Number.MAX_SAFE_INTEGER)
          .split('\n')
          .filter((line) => /\b403\b|forbidden/i.test(line))
          .map((line) => `${c.identity}: ${line}`),
      );
    },
    /** Stops every replica still running (SIGTERM, SIGKILL past the bound); returns those that needed SIGKILL. */
    async stopAll(): Promise<string[]> {
      const stuck: string[] = [];
      await Promise.all(running.splice(0).map((c) => c.stop().catch(() => void stuck.push(c.identity))));
      rmSync(scratch, { recursive: true, force: true });
      return stuck;
    },
  };
}
