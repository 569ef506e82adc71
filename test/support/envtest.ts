/**
 * A real kube-apiserver and etcd for tests, started the way controller-runtime's envtest starts them:
 * from the binaries in `KUBEBUILDER_ASSETS` (`../shared/envtest/setup` prints that folder), on free
 * loopback ports, with a data folder, serving certificate, service-account signing key and admin token of
 * its own. RBAC authorization is on, so a client authenticated as a ServiceAccount (a token from the
 * TokenRequest API) gets exactly the permissions bound to it.
 *
 * There is no controller-manager and no scheduler: nothing finalizes namespaces, garbage-collects owned
 * objects or runs pods. Tests that need those behaviours play them.
 *
 * The processes are stopped by pid when `stop()` is called, and also when the test process exits or is
 * interrupted (SIGINT / SIGTERM), so a failed or aborted run leaves nothing behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a running environment offers its tests. */
export interface Envtest {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** The serving certificate (PEM), to trust in clients. */
  readonly caPem: string;
  /** A token of `system:masters`. */
  readonly adminToken: string;
  /** A kubeconfig file for the admin user. */
  readonly kubeconfigPath: string;
  /** The folder holding data, certificates, logs and the kubeconfig. */
  readonly dir: string;
  /** A kubeconfig (YAML text) authenticating with `token` against this server. */
  kubeconfigFor(token: string, user?: string): string;
  /** Stops kube-apiserver (SIGKILL) and starts it again on the same port and data; resolves when ready. */
  restartApiServer(): Promise<void>;
  /** Stops kube-apiserver, leaving etcd; `startApiServer` brings it back. */
  stopApiServer(): Promise<void>;
  startApiServer(): Promise<void>;
  /** Stops both processes and removes the folder. Idempotent. */
  stop(): Promise<void>;
}

export interface EnvtestOptions {
  /** Folder with `etcd` and `kube-apiserver`. @default process.env.KUBEBUILDER_ASSETS */
  readonly assets?: string;
  /** Extra kube-apiserver flags. */
  readonly apiServerFlags?: readonly string[];
  /** How long each process may take to become ready. @default 60000 */
  readonly readyTimeoutMs?: number;
  /** Keep the folder after stop (for a look at the logs). @default process.env.PULLFLEET_ENVTEST_KEEP === '1' */
  readonly keep?: boolean;
}

/** The line printed when the real-server suites cannot run, and what enables them. */
export const ENVTEST_SKIP_MESSAGE =
  'real-server suites skipped: set KUBEBUILDER_ASSETS=$(../shared/envtest/setup) (or PULLFLEET_E2E_KUBECONFIG=<kubeconfig>) to run them';

/** A free TCP port on the loopback interface (bound, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One GET, bounded; resolves with status and body, or rejects on a transport error or timeout. */
export function probe(
  url: string,
  opts: { ca?: string; token?: string; timeoutMs?: number } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const parsed = new URL(url);
    const request = parsed.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(
      url,
      {
        method: 'GET',
        timeout: opts.timeoutMs ?? 2_000,
        headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {},
        ...(parsed.protocol === 'https:' ? { ca: opts.ca, rejectUnauthorized: opts.ca !== undefined } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Every process started here, so an exit or interrupt can stop them. */
const live = new Set<ChildProcess>();
let hooksInstalled = false;
function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const killAll = (): void => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

function startProcess(binary: string, args: readonly string[], logFile: string): ChildProcess {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(binary, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

async function stopProcess(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const bound = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 10_000).unref());
  if ((await Promise.race([exited, bound])) === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Polls `check` until it is true or the deadline passes; `child` exiting early fails at once. */
async function waitReady(
  what: string,
  child: ChildProcess,
  logFile: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${what} exited (${child.exitCode ?? child.signalCode}) before it was ready; its log ends:\n${tail(logFile)}`,
      );
    }
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`${what} was not ready within ${timeoutMs} ms; its log ends:\n${tail(logFile)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Starts etcd and kube-apiserver; resolves when `/readyz` answers ok. */
export async function startEnvtest(options: EnvtestOptions = {}): Promise<Envtest> {
  const assets = options.assets ?? process.env.KUBEBUILDER_ASSETS;
  if (!assets) throw new Error(ENVTEST_SKIP_MESSAGE);
  for (const binary of ['etcd', 'kube-apiserver']) {
    if (!existsSync(join(assets, binary)))
      throw new Error(`KUBEBUILDER_ASSETS=${assets} has no ${binary}; run ../shared/envtest/setup`);
  }
  installExitHooks();
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const keep = options.keep ?? process.env.PULLFLEET_ENVTEST_KEEP === '1';
  const dir = mkdtempSync(join(tmpdir(), 'pullfleet-envtest-'));
  const certDir = join(dir, 'certs');
  mkdirSync(certDir);

  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const adminToken = randomBytes(24).toString('hex');
  writeFileSync(join(dir, 'tokens.csv'), `${adminToken},admin,admin-uid,system:masters\n`, { mode: 0o600 });

  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const etcdLog = join(dir, 'etcd.log');
  const etcd = startProcess(
    join(assets, 'etcd'),
    [
      '--data-dir',
      join(dir, 'etcd'),
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-cluster',
      `default=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
    ],
    etcdLog,
  );

  const server = `https://127.0.0.1:${apiPort}`;
  const apiLog = join(dir, 'kube-apiserver.log');
  const apiArgs = [
    `--etcd-servers=${etcdUrl}`,
    `--secure-port=${apiPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--cert-dir=${certDir}`,
    '--authorization-mode=RBAC',
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
    '--api-audiences=https://kubernetes.default.svc',
    '--service-cluster-ip-range=10.96.0.0/12',
    '--runtime-config=admissionregistration.k8s.io/v1beta1=true',
    '--allow-privileged=true',
    ...(options.apiServerFlags ?? []),
  ];
  let apiServer: ChildProcess | undefined;
  let caPem = '';
  let stopped = false;

  const startApiServer = async (): Promise<void> => {
    apiServer = startProcess(join(assets, 'kube-apiserver'), apiArgs, apiLog);
    const child = apiServer;
    await waitReady('kube-apiserver', child, apiLog, readyTimeoutMs, async () => {
      const certFile = join(certDir, 'apiserver.crt');
      if (!existsSync(certFile)) return false;
      caPem = readFileSync(certFile, 'utf8');
      const res = await probe(`${server}/readyz`, { ca: caPem, token: adminToken });
      return res.status === 200 && res.body.trim() === 'ok';
    });
  };
  const stopApiServer = async (): Promise<void> => {
    await stopProcess(apiServer, 'SIGKILL');
    apiServer = undefined;
  };
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await stopProcess(apiServer);
    await stopProcess(etcd);
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitReady('etcd', etcd, etcdLog, readyTimeoutMs, async () => {
      const res = await probe(`${etcdUrl}/health`);
      return res.status === 200 && /"health":\s*"true"/.test(res.body);
    });
    await startApiServer();
  } catch (error) {
    await stop();
    throw error;
  }

  const kubeconfigFor = (token: string, user = 'admin'): string =>
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: envtest',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
      'users:',
      `- name: ${user}`,
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: envtest',
      '  context:',
      '    cluster: envtest',
      `    user: ${user}`,
      'current-context: envtest',
      '',
    ].join('\n');
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfigFor(adminToken), { mode: 0o600 });

  return {
    server,
    get caPem() {
      return caPem;
    },
    adminToken,
    kubeconfigPath,
    dir,
    kubeconfigFor,
    restartApiServer: async () => {
      await stopApiServer();
      await startApiServer();
    },
    stopApiServer,
    startApiServer,
    stop,
  };
}
