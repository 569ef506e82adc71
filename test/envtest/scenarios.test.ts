/**
 * The end-to-end scenarios on a real API server: the envtest server `npm run test:envtest` starts, or
 * the cluster PULLFLEET_E2E_KUBECONFIG names (its current context). The runner installed the upstream
 * CRDs and pullfleet's own; the suite plays the OCM work agent itself and removes the namespaces and
 * cluster objects each scenario created. Scenarios that need fault injection run only on the double.
 *
 * The controller runs as it ships: a separate process with the args and env of the Deployment its
 * install renders, as that install's ServiceAccount, with only the RBAC the install grants
 * (test/support/shipped-controller.ts).
 */
import { afterEach, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { realCluster, type TestCluster } from '../support/cluster.js';
import { describeRealServer } from '../support/real-server.js';
import { WorkAgent } from '../support/work-agent.js';
import { SCENARIOS, fleetFor, setUpFleet, tearDownFleet, type Fleet } from '../e2e/scenarios.js';
import { shippedControllerStarter } from '../support/shipped-controller.js';
import { CHAOS_SCENARIOS } from '../e2e/chaos-scenarios.js';
import { PENDING_CONTROLLER_FIXES } from '../e2e/pending.js';

describeRealServer('controller end to end', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const cluster: TestCluster = realCluster(kubeConfig);
  let fleet: Fleet | undefined;
  let controllers: ReturnType<typeof shippedControllerStarter> | undefined;
  const runId = `pf${Date.now().toString(36).slice(-6)}`;
  let counter = 0;

  afterEach(async () => {
    const stuck = (await controllers?.stopAll()) ?? [];
    const forbidden = controllers?.forbidden() ?? [];
    controllers = undefined;
    if (fleet) await tearDownFleet(cluster, fleet);
    fleet = undefined;
    // A controller that ignores SIGTERM is a defect of its own (the kubelet would kill it after the grace period).
    expect(stuck).toStrictEqual([]);
    // Every request the controller made was allowed by the RBAC its install ships.
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  const runnable = [...SCENARIOS, ...CHAOS_SCENARIOS].filter((s) => !s.needsFaults);
  for (const scenario of runnable) {
    // Scenarios waiting for a controller fix are expected to fail here too (see test/e2e/pending.ts).
    const pending = PENDING_CONTROLLER_FIXES[scenario.name];
    (pending ? test.failing : test)(
      pending ? `${scenario.name} [pending: ${pending}]` : scenario.name,
      async () => {
        fleet = fleetFor(`${runId}-${counter++}`);
        controllers = shippedControllerStarter(kubeConfig, {
          namespace: fleet.controllerNamespace,
          argoNamespace: fleet.argoNamespace,
        });
        await setUpFleet(cluster, fleet);
        await scenario.run({
          cluster,
          fleet,
          agent: new WorkAgent(cluster),
          startController: (config, options) => controllers!.start(config, options),
          timeoutMs: pending ? 15_000 : 60_000,
        });
      },
      180_000,
    );
  }
});
