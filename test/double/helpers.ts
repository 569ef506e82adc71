/** Shared set-up for the API double's conformance tests: the real client-node against the double. */
import {
  CoreV1Api,
  CoordinationV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { expect } from '@jest/globals';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions, type KubeObj } from './fake-apiserver.js';

export interface Harness {
  server: FakeApiServer;
  kc: KubeConfig;
  custom: CustomObjectsApi;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
}

/** Namespaces the conformance tests write into (the double, like the real server, needs them to exist). */
export const TEST_NAMESPACES = [
  'argocd',
  'cluster1',
  'cluster2',
  'team-a',
  'team-b',
  'pullfleet-system',
  'ns',
  'guestbook',
  'default',
];

export async function harness(opts: FakeApiServerOptions & { namespaces?: readonly string[] } = {}): Promise<Harness> {
  const { namespaces = TEST_NAMESPACES, ...serverOptions } = opts;
  const server = await startFakeApiServer(serverOptions);
  for (const name of namespaces) server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const kc = server.kubeConfig();
  return {
    server,
    kc,
    custom: kc.makeApiClient(CustomObjectsApi),
    core: kc.makeApiClient(CoreV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
  };
}

export const APPS = { group: 'argoproj.io', version: 'v1alpha1', plural: 'applications' } as const;
export const WORKS = { group: 'work.open-cluster-management.io', version: 'v1', plural: 'manifestworks' } as const;

export const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
export const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
export const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

export function application(name: string, namespace = 'argocd', extra: KubeObj = {}): KubeObj {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name, namespace, ...(extra.metadata ?? {}) },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
      source: { repoURL: 'https://example.com/repo.git', path: 'guestbook' },
      ...(extra.spec ?? {}),
    },
  };
}

export function manifestWork(name: string, namespace = 'cluster1', extra: KubeObj = {}): KubeObj {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name, namespace, ...(extra.metadata ?? {}) },
    spec: {
      workload: {
        manifests: [
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, data: { a: '1' } },
        ],
      },
      ...(extra.spec ?? {}),
    },
  };
}

/** The Status object of a client-node ApiException (its body may arrive as a string). */
export function statusOf(error: unknown): KubeObj {
  const body = (error as { body?: unknown }).body;
  if (typeof body === 'string') return JSON.parse(body) as KubeObj;
  return body as KubeObj;
}

/** Awaits a call that must fail and returns the answer's HTTP code and Status object. */
export async function failure(call: Promise<unknown>): Promise<{ code: number; status: KubeObj }> {
  try {
    await call;
  } catch (error) {
    const code = (error as { code?: number }).code;
    expect(typeof code).toBe('number');
    return { code: code!, status: statusOf(error) };
  }
  throw new Error('expected the call to fail, it succeeded');
}
