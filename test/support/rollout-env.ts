/**
 * The hub side of a rollout test on a real API server, made and removed the same way by every such test: an
 * Argo CD namespace, the controller's namespace, and ManagedClusters (each with its namespace) in one
 * ManagedClusterSet, all named after one run-unique id so tests sharing a server never meet.
 */
import {
  ARGOCD_API_VERSION,
  CLUSTER_API_VERSION,
  CLUSTERSET_API_VERSION,
  CLUSTERSET_LABEL,
  WORK_API_VERSION,
} from '../../src/model/core/keys.js';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject, ManifestWork } from '../../src/model/core/types.js';
import { realCluster, type TestCluster } from './cluster.js';
import { RawClient } from './raw-client.js';
import { shippedControllerStarter } from './shipped-controller.js';

/** The names of one test's hub. */
export interface RolloutEnv {
  readonly id: string;
  readonly argoNamespace: string;
  readonly controllerNamespace: string;
  readonly clusterSet: string;
  /** Short name (a1, b1, …) → ManagedCluster name. */
  readonly clusters: Readonly<Record<string, string>>;
}

/** The names for the hub of test `id` with the spokes `shortNames` (nothing is created yet). */
export function rolloutEnv(id: string, shortNames: readonly string[]): RolloutEnv {
  return {
    id,
    argoNamespace: `${id}-argocd`,
    controllerNamespace: `${id}-system`,
    clusterSet: `${id}-set`,
    clusters: Object.fromEntries(shortNames.map((s) => [s, `${id}-${s}`])),
  };
}

/** Creates `e`'s namespaces and its accepted ManagedClusters, labelled into its ManagedClusterSet. */
export async function createRolloutEnv(cluster: TestCluster, e: RolloutEnv): Promise<void> {
  for (const ns of [e.argoNamespace, e.controllerNamespace, ...Object.values(e.clusters)])
    await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const name of Object.values(e.clusters))
    await cluster.create({
      apiVersion: CLUSTER_API_VERSION,
      kind: 'ManagedCluster',
      metadata: { name, labels: { [CLUSTERSET_LABEL]: e.clusterSet } },
      spec: { hubAcceptsClient: true },
    });
}

/**
 * Removes what `e` made and what the test and the controller wrote: the Argo CD objects of `argoKinds` (finalizers
 * dropped first), every ManifestWork, the ManagedClusters, the ManagedClusterSet and the namespaces.
 */
export async function tearDownRolloutEnv(
  cluster: TestCluster,
  e: RolloutEnv,
  argoKinds: readonly string[] = ['Application'],
): Promise<void> {
  for (const kind of argoKinds) {
    for (const obj of await cluster.list<KubeObject>(ARGOCD_API_VERSION, kind, { namespace: e.argoNamespace })) {
      const ref = { apiVersion: ARGOCD_API_VERSION, kind, namespace: e.argoNamespace, name: obj.metadata.name };
      if (obj.metadata.finalizers?.length)
        await cluster.mergePatch(ref, { metadata: { finalizers: null } }).catch(() => undefined);
      await cluster.delete(ref);
    }
  }
  for (const ns of Object.values(e.clusters)) {
    for (const work of await cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: ns })) {
      const ref = { apiVersion: WORK_API_VERSION, kind: 'ManifestWork', namespace: ns, name: work.metadata.name };
      if (work.metadata.finalizers?.length)
        await cluster.mergePatch(ref, { metadata: { finalizers: null } }).catch(() => undefined);
      await cluster.delete(ref);
    }
    await cluster.delete({ apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name: ns });
  }
  await cluster.delete({ apiVersion: CLUSTERSET_API_VERSION, kind: 'ManagedClusterSet', name: e.clusterSet });
  for (const ns of [e.argoNamespace, e.controllerNamespace, ...Object.values(e.clusters)])
    await cluster.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
}

/** The shipped controller's starter for one hub. */
export type ShippedControllers = ReturnType<typeof shippedControllerStarter>;

/**
 * One rollout suite's clients and the hub of its running test: `given` makes a hub (names unique to the run
 * and the test) with the shipped controller's starter for it; after the test, `stopController` and
 * `tearDown` remove both.
 */
export class RolloutHub {
  readonly kubeConfig = new KubeConfig();
  readonly cluster: TestCluster;
  readonly raw: RawClient;
  /** The hub of the running test, once `given` made it. */
  env?: RolloutEnv;
  /** The shipped controller's starter of the running test (not started: the test starts it). */
  controllers?: ShippedControllers;
  private readonly runId: string;
  private counter = 0;

  /**
   * @param prefix the first letters of every name the suite creates
   * @param argoKinds the Argo CD kinds `tearDown` removes
   */
  constructor(
    kubeconfigPath: string,
    prefix: string,
    private readonly argoKinds: readonly string[] = ['Application'],
  ) {
    this.kubeConfig.loadFromFile(kubeconfigPath);
    this.cluster = realCluster(this.kubeConfig);
    this.raw = new RawClient(this.kubeConfig);
    this.runId = `${prefix}${Date.now().toString(36).slice(-5)}`;
  }

  /** Makes the next test's hub with the spokes `shortNames` and the controller's starter for it. */
  async given(shortNames: readonly string[]): Promise<RolloutEnv> {
    const made = rolloutEnv(`${this.runId}-${this.counter++}`, shortNames);
    this.env = made;
    await createRolloutEnv(this.cluster, made);
    this.controllers = this.controllerFor(made);
    return made;
  }

  /** A new starter of the shipped controller for `e` (in its controller namespace, watching its Argo CD namespace). */
  controllerFor(e: RolloutEnv): ShippedControllers {
    return shippedControllerStarter(this.kubeConfig, {
      namespace: e.controllerNamespace,
      argoNamespace: e.argoNamespace,
    });
  }

  /** Stops the controller; resolves with what it left running (`stuck`) and the requests its RBAC forbade. */
  async stopController(): Promise<{ stuck: string[]; forbidden: string[] }> {
    const stuck = (await this.controllers?.stopAll()) ?? [];
    const forbidden = this.controllers?.forbidden() ?? [];
    this.controllers = undefined;
    return { stuck, forbidden };
  }

  /** Removes the running test's hub (see {@link tearDownRolloutEnv}). */
  async tearDown(): Promise<void> {
    if (this.env) await tearDownRolloutEnv(this.cluster, this.env, this.argoKinds);
    this.env = undefined;
  }
}
