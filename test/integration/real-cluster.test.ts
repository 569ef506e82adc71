/**
 * The end-to-end scenarios against a real API server, named by PULLFLEET_E2E_KUBECONFIG (a kubeconfig
 * file; its current context is used). The suite installs the upstream CRDs from ../shared/crds with
 * server-side apply (plus pullfleet's FleetReport CRD), plays the OCM work agent itself, and removes the
 * namespaces and cluster objects each scenario created. Scenarios that need fault injection run only
 * on the double. Without the variable the suite is skipped and says why.
 *
 * Needs: a cluster where the test user may create CRDs, namespaces, ManagedClusters and
 * ManagedClusterSets. No Argo CD or OCM installation is required (the test plays both).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { fleetReportCrd } from '../../src/model/report-crd.js';
import { realCluster, type TestCluster } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { WorkAgent } from '../support/work-agent.js';
import { SCENARIOS, controllerStarter, fleetFor, setUpFleet, tearDownFleet, type Fleet } from '../e2e/scenarios.js';
import { CHAOS_SCENARIOS } from '../e2e/chaos-scenarios.js';
import { PENDING_CONTROLLER_FIXES } from '../e2e/pending.js';

const KUBECONFIG = process.env.PULLFLEET_E2E_KUBECONFIG;
const SKIP_MESSAGE = 'skipped: set PULLFLEET_E2E_KUBECONFIG to run against a real cluster';

const CRD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'crds');
/** The CRDs the controller reads and writes (the two GitOpsCluster flavours share a name and are not needed). */
const CRD_FILES = [
  'argoproj.io/Application.yaml',
  'argoproj.io/ApplicationSet.yaml',
  'argoproj.io/AppProject.yaml',
  'cluster.open-cluster-management.io/ManagedCluster.yaml',
  'cluster.open-cluster-management.io/ManagedClusterSet.yaml',
  'cluster.open-cluster-management.io/ManagedClusterSetBinding.yaml',
  'cluster.open-cluster-management.io/Placement.yaml',
  'cluster.open-cluster-management.io/PlacementDecision.yaml',
  'work.open-cluster-management.io/ManifestWork.yaml',
];

/** Server-side applies every CRD and waits until each is Established. */
async function installCrds(kubeConfig: KubeConfig): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  const crds = CRD_FILES.map((file) => parseYaml(readFileSync(join(CRD_DIR, file), 'utf8')) as KubernetesObject);
  crds.push(fleetReportCrd() as unknown as KubernetesObject);
  for (const crd of crds) {
    await api.patch(crd, undefined, undefined, 'pullfleet-e2e', true, PatchStrategy.ServerSideApply);
  }
  for (const crd of crds) {
    await waitFor(`CRD ${crd.metadata!.name} to be Established`, async () => {
      const live = (await api.read({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crd.metadata!.name! } })) as {
        status?: { conditions?: Array<{ type: string; status: string }> };
      };
      return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { timeoutMs: 60_000, intervalMs: 250 });
  }
}

if (!KUBECONFIG) {
  process.stderr.write(`real-cluster suite ${SKIP_MESSAGE}\n`);
  describe('controller end to end on a real API server', () => {
    test.skip(SKIP_MESSAGE, () => undefined);
  });
} else {
  describe(`controller end to end on a real API server (${KUBECONFIG})`, () => {
    const kubeConfig = new KubeConfig();
    let cluster: TestCluster;
    let fleet: Fleet | undefined;
    let controllers: ReturnType<typeof controllerStarter> | undefined;
    const runId = `pf${Date.now().toString(36).slice(-6)}`;
    let counter = 0;

    beforeAll(async () => {
      kubeConfig.loadFromFile(KUBECONFIG);
      cluster = realCluster(kubeConfig);
      expect(readdirSync(CRD_DIR).length).toBeGreaterThan(0);
      await installCrds(kubeConfig);
    }, 120_000);

    afterEach(async () => {
      await controllers?.stopAll();
      if (fleet) await tearDownFleet(cluster, fleet);
      fleet = undefined;
    }, 120_000);

    afterAll(() => undefined);

    const runnable = [...SCENARIOS, ...CHAOS_SCENARIOS].filter((s) => !s.needsFaults);
    for (const scenario of runnable) {
      // Scenarios waiting for a controller fix are expected to fail here too (see test/e2e/pending.ts).
      const pending = PENDING_CONTROLLER_FIXES[scenario.name];
      (pending ? test.failing : test)(
        pending ? `${scenario.name} [pending: ${pending}]` : scenario.name,
        async () => {
          fleet = fleetFor(`${runId}-${counter++}`);
          controllers = controllerStarter(cluster);
          await setUpFleet(cluster, fleet);
          await scenario.run({ cluster, fleet, agent: new WorkAgent(cluster), startController: (config, options) => controllers!.start(config, options), timeoutMs: pending ? 15_000 : 60_000 });
        },
        180_000,
      );
    }
  });
}
