/**
 * What the real-server suites need from a cluster, whether the envtest server the runner started
 * (scripts/test-envtest.ts) or any cluster PULLFLEET_E2E_KUBECONFIG names: the CRDs pullfleet generates
 * from (../shared/crds) and its own (from dist/), ServiceAccount identities minted through the
 * TokenRequest API, and, on envtest only, control of the API server process for restart scenarios.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'node:http';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { RawClient, type RawObject } from './raw-client.js';
import { parse as parseYaml, parseAllDocuments } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** ../shared/crds beside the repository. */
export const SHARED_CRDS = join(ROOT, '..', 'shared', 'crds');

/** The upstream CRDs every real-server suite can rely on. The two GitOpsCluster flavours share one name: the ACM one is installed. */
export const UPSTREAM_CRD_FILES = [
  'argoproj.io/Application.yaml',
  'argoproj.io/ApplicationSet.yaml',
  'argoproj.io/AppProject.yaml',
  'cluster.open-cluster-management.io/ManagedCluster.yaml',
  'cluster.open-cluster-management.io/ManagedClusterSet.yaml',
  'cluster.open-cluster-management.io/ManagedClusterSetBinding.yaml',
  'cluster.open-cluster-management.io/Placement.yaml',
  'cluster.open-cluster-management.io/PlacementDecision.yaml',
  'work.open-cluster-management.io/ManifestWork.yaml',
  'apps.open-cluster-management.io/GitOpsCluster.yaml',
] as const;

/** GitOpsCluster files by served version (one at a time on a server). */
export const GITOPSCLUSTER_CRD_FILES = {
  v1beta1: 'apps.open-cluster-management.io/GitOpsCluster.yaml',
  v1alpha1: 'apps.open-cluster-management.io/GitOpsCluster-v1alpha1-argocd-agent.yaml',
} as const;

/** Where the real-server suites find their cluster, or undefined when they must skip. */
export function realServerKubeconfig(): string | undefined {
  return process.env.PULLFLEET_E2E_KUBECONFIG || undefined;
}

export function loadKubeConfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** The project's own CRDs, as synth renders them into dist/. */
export function projectCrds(): RawObject[] {
  const text = readFileSync(join(ROOT, 'dist', 'hub', 'hub', 'controller.yaml'), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as RawObject | null)
    .filter((o): o is RawObject => o?.kind === 'CustomResourceDefinition');
}

export function readCrd(file: string): RawObject {
  return parseYaml(readFileSync(join(SHARED_CRDS, file), 'utf8')) as RawObject;
}

/** Server-side applies `crds` (field manager pullfleet-test) and waits until each is Established. */
export async function applyCrds(kc: KubeConfig, crds: readonly RawObject[], timeoutMs = 60_000): Promise<void> {
  const api = new RawClient(kc);
  for (const crd of crds) await api.apply(crd, 'pullfleet-test');
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const live = await api.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        undefined,
        crd.metadata.name,
      );
      if (live?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} was not Established within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Installs `crd` in place of a CRD of the same name with other versions (the two GitOpsCluster
 * flavours): the old one is deleted, with every object of it, and the new one applied once it is gone.
 */
export async function replaceCrd(kc: KubeConfig, crd: RawObject, timeoutMs = 60_000): Promise<void> {
  const api = new RawClient(kc);
  const name = crd.metadata.name;
  await api.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', undefined, name);
  const deadline = Date.now() + timeoutMs;
  while (await api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', undefined, name)) {
    if (Date.now() > deadline) throw new Error(`CRD ${name} was not deleted within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await applyCrds(kc, [crd], timeoutMs);
}

/** The upstream CRDs and the project's own, installed and Established. */
export async function installCrds(kc: KubeConfig): Promise<void> {
  await applyCrds(kc, [...UPSTREAM_CRD_FILES.map(readCrd), ...projectCrds()]);
}

/**
 * A kubeconfig (YAML) that authenticates as ServiceAccount `namespace/name` with a token from the
 * TokenRequest API, against the server and CA of `admin`. The ServiceAccount must exist.
 */
export async function serviceAccountKubeconfig(
  admin: KubeConfig,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<string> {
  const core = admin.makeApiClient(CoreV1Api);
  const res = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds },
    },
  });
  const token = res.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const ca = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${cluster.server}`,
    ...(ca
      ? [`    certificate-authority-data: ${ca}`]
      : cluster.skipTLSVerify
        ? ['    insecure-skip-tls-verify: true']
        : []),
    'users:',
    `- name: ${namespace}-${name}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: test',
    '  context:',
    '    cluster: test',
    `    user: ${namespace}-${name}`,
    `    namespace: ${namespace}`,
    'current-context: test',
    '',
  ].join('\n');
}

/** Control of the envtest API server process, when the runner started one (not on external clusters). */
export interface ApiServerControl {
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

function controlCall(base: string, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'POST', timeout: 120_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`envtest control ${path}: ${res.statusCode} ${body}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`envtest control ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** The runner's control endpoint (PULLFLEET_ENVTEST_CONTROL), or undefined on an external cluster. */
export function apiServerControl(): ApiServerControl | undefined {
  const base = process.env.PULLFLEET_ENVTEST_CONTROL;
  if (!base) return undefined;
  return {
    restart: () => controlCall(base, '/apiserver/restart'),
    stop: () => controlCall(base, '/apiserver/stop'),
    start: () => controlCall(base, '/apiserver/start'),
  };
}
