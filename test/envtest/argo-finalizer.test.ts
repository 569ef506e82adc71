/**
 * Argo CD's resources finalizer on a pull-delivered hub Application, on a real API server. The hub Argo CD
 * never processes an app annotated `skip-reconcile` (and no controller-manager runs here), so once the
 * app is deleted the finalizers are the only thing keeping it: the controller deletes the work first,
 * then releases its own finalizer and Argo CD's together, and the server removes the app.
 */
import { afterEach, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { ARGOCD_API_VERSION, CLEANUP_FINALIZER, WORK_API_VERSION } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { realCluster, type TestCluster } from '../support/cluster.js';
import { describeRealServer } from '../support/real-server.js';
import { waitFor } from '../support/wait.js';
import { WorkAgent } from '../support/work-agent.js';
import {
  WORK_AGENT_FINALIZER,
  controllerStarter,
  fleetFor,
  hubApp,
  setUpFleet,
  tearDownFleet,
  type Fleet,
} from '../e2e/scenarios.js';

const TIMEOUT_MS = 60_000;

describeRealServer('Argo CD resources finalizer on deleted hub Applications', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const cluster: TestCluster = realCluster(kubeConfig);
  const runId = `pfa${Date.now().toString(36).slice(-6)}`;
  let counter = 0;
  let fleet: Fleet | undefined;
  let controllers: ReturnType<typeof controllerStarter> | undefined;

  afterEach(async () => {
    await controllers?.stopAll();
    if (fleet) await tearDownFleet(cluster, fleet);
    fleet = undefined;
  }, 120_000);

  test.each([['resources-finalizer.argocd.argoproj.io'], ['resources-finalizer.argocd.argoproj.io/foreground']])(
    'GIVEN a delivered hub app with %s WHEN it is deleted THEN its work goes first and then the app is gone from the server',
    async (argoFinalizer) => {
      fleet = fleetFor(`${runId}-${counter++}`);
      const { hubNamespace, clusters } = fleet;
      await setUpFleet(cluster, fleet);
      controllers = controllerStarter(cluster);
      await controllers.start();
      const agent = new WorkAgent(cluster);
      const appRef = {
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        namespace: hubNamespace,
        name: 'guestbook',
      };
      const workRef = {
        apiVersion: WORK_API_VERSION,
        kind: 'ManifestWork',
        namespace: clusters[0],
        name: manifestWorkName(hubNamespace, 'guestbook'),
      };
      const readApp = () => cluster.get<Application>(appRef);
      const readWork = () => cluster.get<ManifestWork>(workRef);

      const app = hubApp('guestbook', hubNamespace, clusters[0]);
      await cluster.create({ ...app, metadata: { ...app.metadata, finalizers: [argoFinalizer] } });
      await waitFor(
        'the work and the cleanup finalizer',
        async () => (await readWork()) && (await readApp())?.metadata.finalizers?.includes(CLEANUP_FINALIZER),
        { timeoutMs: TIMEOUT_MS, describe: readApp },
      );
      // The hub side of OCM holds the work until the spoke has cleaned up.
      await agent.addFinalizer(workRef.namespace, workRef.name, WORK_AGENT_FINALIZER);

      await cluster.delete(appRef);

      await waitFor('the work to be terminating', async () => (await readWork())?.metadata.deletionTimestamp, {
        timeoutMs: TIMEOUT_MS,
        describe: readWork,
      });
      const waiting = await readApp();
      expect(waiting?.metadata.deletionTimestamp).toBeDefined();
      expect(waiting?.metadata.finalizers).toEqual(expect.arrayContaining([argoFinalizer, CLEANUP_FINALIZER]));

      // The spoke finished: the work goes, then the app, with nothing else on this server to finalize it.
      await agent.removeFinalizer(workRef.namespace, workRef.name, WORK_AGENT_FINALIZER);
      await waitFor('the work to be gone', async () => (await readWork()) === undefined, {
        timeoutMs: TIMEOUT_MS,
        describe: readWork,
      });
      await waitFor('the hub app to be gone', async () => (await readApp()) === undefined, {
        timeoutMs: TIMEOUT_MS,
        describe: readApp,
      });
    },
    180_000,
  );
});
