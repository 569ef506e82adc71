/**
 * A hub whose ManifestWork CRD predates condition rules (a cluster manager before OCM 1.0), on a real API
 * server: the suite installs the ManifestWork CRD without `manifestConfigs[].conditionRules`, so the server
 * refuses a server-side apply of a work that carries the rule ("field not declared in schema"), and runs the
 * controller as it ships. The controller must notice, deliver every work without the rule, not rewrite them
 * at each resync, and say why on the hub Applications. The CRD is put back as it was afterwards.
 */
import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import {
  ARGOCD_API_VERSION,
  CLUSTERSET_API_VERSION,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  WORK_API_VERSION,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import { RESOURCE_SUMMARY_WARNING_CONDITION } from '../../src/model/reconcile/resource-summary.js';
import { realCluster, type TestCluster } from '../support/cluster.js';
import { applyCrds, readCrd } from '../support/envtest-cluster.js';
import { RawClient, type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { shippedControllerStarter } from '../support/shipped-controller.js';
import { waitFor } from '../support/wait.js';
import { fleetFor, setUpFleet, tearDownFleet, type Fleet } from '../e2e/scenarios.js';

const TIMEOUT_MS = 90_000;
const CRD_FILE = 'work.open-cluster-management.io/ManifestWork.yaml';

type Schema = { properties?: Record<string, Schema>; items?: Schema };

/** The ManifestWork CRD as a cluster manager before OCM 1.0 installs it: no conditionRules in manifestConfigs. */
function crdWithoutConditionRules(): RawObject {
  const crd = structuredClone(readCrd(CRD_FILE)) as RawObject & {
    spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
  };
  let removed = 0;
  for (const version of crd.spec.versions) {
    const config = version.schema.openAPIV3Schema.properties?.spec?.properties?.manifestConfigs?.items;
    if (config?.properties?.conditionRules) {
      delete config.properties.conditionRules;
      removed++;
    }
  }
  if (removed === 0) throw new Error(`${CRD_FILE} has no manifestConfigs[].conditionRules to remove`);
  return crd;
}

/** The value of a counter of the controller's /metrics with these labels (0 when absent). */
function counter(metrics: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

describeRealServer('a hub whose ManifestWork CRD drops conditionRules', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const cluster: TestCluster = realCluster(kubeConfig);
  const raw = new RawClient(kubeConfig);
  const runId = `oc${Date.now().toString(36).slice(-6)}`;
  let fleet: Fleet | undefined;
  let controllers: ReturnType<typeof shippedControllerStarter> | undefined;

  beforeAll(async () => {
    await applyCrds(kubeConfig, [crdWithoutConditionRules()]);
  }, 120_000);

  afterAll(async () => {
    await applyCrds(kubeConfig, [readCrd(CRD_FILE)]);
  }, 120_000);

  afterEach(async () => {
    await controllers?.stopAll();
    const forbidden = controllers?.forbidden() ?? [];
    controllers = undefined;
    if (fleet) await tearDownFleet(cluster, fleet);
    fleet = undefined;
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  test('the controller delivers every work without the rule, resyncs without rewriting them, and every app says why it has no resource summary', async () => {
    // GIVEN two clusters bound to the Argo CD namespace, and a server that prunes the rule from stored works
    fleet = fleetFor(`${runId}-0`);
    await setUpFleet(cluster, fleet);
    const { argoNamespace, clusters, clusterSet } = fleet;
    await cluster.create({
      apiVersion: CLUSTERSET_API_VERSION,
      kind: 'ManagedClusterSetBinding',
      metadata: { name: clusterSet, namespace: argoNamespace },
      spec: { clusterSet },
    });
    const apps: Application[] = clusters.map((target) => ({
      apiVersion: ARGOCD_API_VERSION,
      kind: 'Application',
      metadata: {
        name: `${target}-shop`,
        namespace: argoNamespace,
        labels: { [PULL_LABEL]: 'true' },
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: target, [SKIP_RECONCILE_ANNOTATION]: 'true' },
      },
      spec: {
        project: 'default',
        source: { repoURL: 'https://git.example/apps.git', path: 'shop' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' },
      },
    }));
    // The CRD change has reached the server: a server-side apply of a work with the rule is refused.
    const probe = buildManifestWork({
      ...apps[0],
      metadata: { ...apps[0].metadata, name: 'probe' },
    });
    const refusal = await waitFor(
      'the server to refuse conditionRules',
      async () => {
        try {
          await raw.apply<ManifestWork>(probe as unknown as RawObject, 'pullfleet-test');
          await raw.delete(WORK_API_VERSION, 'ManifestWork', probe.metadata.namespace, probe.metadata.name);
          return undefined;
        } catch (error) {
          return (error as Error).message;
        }
      },
      { timeoutMs: TIMEOUT_MS, intervalMs: 200 },
    );
    expect(refusal).toContain('conditionRules: field not declared in schema');
    for (const app of apps) await cluster.create(app);

    // WHEN the shipped controller runs, with a resync every 2 seconds
    controllers = shippedControllerStarter(kubeConfig, { namespace: fleet.controllerNamespace, argoNamespace });
    const controller = await controllers.start({ resyncSeconds: 2 });
    for (const app of apps)
      await waitFor(
        `the work of ${app.metadata.name}`,
        () =>
          cluster.get<ManifestWork>({
            apiVersion: WORK_API_VERSION,
            kind: 'ManifestWork',
            namespace: app.metadata.annotations![MANAGED_CLUSTER_ANNOTATION],
            name: manifestWorkName(argoNamespace, app.metadata.name),
          }),
        { timeoutMs: TIMEOUT_MS },
      );
    // THEN every hub app says why there is no resource summary
    for (const app of apps)
      await waitFor(
        `${app.metadata.name} with the warning`,
        async () => {
          const live = await cluster.get<Application>({
            apiVersion: ARGOCD_API_VERSION,
            kind: 'Application',
            namespace: argoNamespace,
            name: app.metadata.name,
          });
          return live?.status?.conditions?.find(
            (c) =>
              c.type === RESOURCE_SUMMARY_WARNING_CONDITION &&
              c.message?.includes("the hub's ManifestWork CRD has no manifestConfigs[].conditionRules"),
          );
        },
        { timeoutMs: TIMEOUT_MS },
      );
    // AND the works carry the feedback rules but not the summary rule
    for (const target of clusters) {
      const stored = await cluster.get<ManifestWork>({
        apiVersion: WORK_API_VERSION,
        kind: 'ManifestWork',
        namespace: target,
        name: manifestWorkName(argoNamespace, `${target}-shop`),
      });
      expect(stored!.spec.manifestConfigs![0].feedbackRules).toBeDefined();
      expect(stored!.spec.manifestConfigs![0]).not.toHaveProperty('conditionRules');
    }
    // AND over several full resyncs (counted by the controller's own reconciles) no work is written again
    const settled = await controller.metrics();
    const workWrites = counter(settled, 'pullfleet_api_writes_total', { resource: 'manifestworks' });
    const reconciles = counter(settled, 'pullfleet_reconcile_total', { controller: 'application' });
    await waitFor(
      'three more resyncs of every app',
      async () =>
        counter(await controller.metrics(), 'pullfleet_reconcile_total', { controller: 'application' }) >=
        reconciles + 3 * apps.length,
      { timeoutMs: TIMEOUT_MS, intervalMs: 500 },
    );
    const after = await controller.metrics();
    expect(counter(after, 'pullfleet_api_writes_total', { resource: 'manifestworks' })).toBe(workWrites);
  }, 240_000);
});
