/**
 * The controller as it ships, on a real API server, for what the shared scenarios do not reach: the
 * fleet report of a pull ApplicationSet, a replica killed with SIGKILL in the middle of a burst, the API
 * server itself restarted in the middle of one, and the reach of the ServiceAccount the install grants.
 * Each test runs in namespaces of its own (test/e2e/scenarios.ts fleetFor); the test plays the
 * applicationset-controller and the OCM work agent.
 */
import { afterEach, expect, test } from '@jest/globals';
import { AuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import {
  ARGOCD_API_VERSION,
  CLUSTERSET_API_VERSION,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type FleetReport } from '../../src/model/report/report.js';
import { kubeTime } from '../../src/model/core/time.js';
import { realCluster, type TestCluster } from '../support/cluster.js';
import {
  createPlacementDecision,
  placementApplicationSet,
  placementDecision,
  pullTemplate,
} from '../support/appsets.js';
import { apiServerControl, serviceAccountKubeconfig } from '../support/envtest-cluster.js';
import { describeRealServer } from '../support/real-server.js';
import { shippedControllerStarter } from '../support/shipped-controller.js';
import { waitFor } from '../support/wait.js';
import { WorkAgent } from '../support/work-agent.js';
import { fleetFor, setUpFleet, tearDownFleet, type Fleet, type ScenarioContext } from '../e2e/scenarios.js';
import { burst } from '../e2e/chaos-scenarios.js';
import { assertFleetInvariants } from '../e2e/invariants.js';

const TIMEOUT_MS = 90_000;

describeRealServer('the shipped controller', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const cluster: TestCluster = realCluster(kubeConfig);
  const runId = `sc${Date.now().toString(36).slice(-6)}`;
  let counter = 0;
  let fleet: Fleet | undefined;
  let controllers: ReturnType<typeof shippedControllerStarter> | undefined;
  /** Refusals the controller logged before this many lines are a test's own business (see the restart test). */
  let forbiddenBefore = 0;

  afterEach(async () => {
    await controllers?.stopAll();
    const forbidden = (controllers?.forbidden() ?? []).slice(forbiddenBefore);
    controllers = undefined;
    forbiddenBefore = 0;
    if (fleet) await tearDownFleet(cluster, fleet);
    fleet = undefined;
    // Every request the controller made was allowed by the RBAC its install ships.
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  async function given(): Promise<{
    fleet: Fleet;
    ctx: ScenarioContext;
    starter: ReturnType<typeof shippedControllerStarter>;
  }> {
    fleet = fleetFor(`${runId}-${counter++}`);
    await setUpFleet(cluster, fleet);
    const starter = shippedControllerStarter(kubeConfig, {
      namespace: fleet.controllerNamespace,
      argoNamespace: fleet.argoNamespace,
    });
    controllers = starter;
    const ctx: ScenarioContext = {
      cluster,
      fleet,
      agent: new WorkAgent(cluster),
      startController: (config, options) => starter.start(config, options),
      timeoutMs: TIMEOUT_MS,
    };
    return { fleet, ctx, starter };
  }

  test('a pull ApplicationSet gets a FleetReport with a row per decided cluster, following the feedback the work agent reports', async () => {
    // GIVEN an ApplicationSet in the hub Argo CD namespace on a placement deciding both clusters, and
    // the hub app the applicationset-controller generated for the first one only
    const { fleet, ctx } = await given();
    const { argoNamespace, clusters, clusterSet } = fleet;
    await cluster.create({
      apiVersion: CLUSTERSET_API_VERSION,
      kind: 'ManagedClusterSetBinding',
      metadata: { name: clusterSet, namespace: argoNamespace },
      spec: { clusterSet },
    });
    const appSet = await cluster.create<{ metadata: { uid: string } }>(
      placementApplicationSet({
        name: 'guestbook',
        namespace: argoNamespace,
        placement: 'prod',
        requeueAfterSeconds: 180,
        template: pullTemplate('guestbook'),
      }),
    );
    await createPlacementDecision(cluster, placementDecision('prod', clusters, { namespace: argoNamespace }));
    await cluster.create({
      apiVersion: ARGOCD_API_VERSION,
      kind: 'Application',
      metadata: {
        name: `${clusters[0]}-guestbook`,
        namespace: argoNamespace,
        labels: { [PULL_LABEL]: 'true' },
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: clusters[0], [SKIP_RECONCILE_ANNOTATION]: 'true' },
        ownerReferences: [
          {
            apiVersion: ARGOCD_API_VERSION,
            kind: 'ApplicationSet',
            name: 'guestbook',
            uid: appSet.metadata.uid,
            controller: true,
          },
        ],
      },
      spec: {
        project: 'default',
        source: { repoURL: 'https://git.example/apps.git', path: 'guestbook' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
      },
    });

    // WHEN the shipped controller runs and the spoke reports the app healthy
    await ctx.startController();
    const workName = manifestWorkName(argoNamespace, `${clusters[0]}-guestbook`);
    await waitFor(
      'the work of the generated app',
      () =>
        cluster.get({
          apiVersion: 'work.open-cluster-management.io/v1',
          kind: 'ManifestWork',
          namespace: clusters[0],
          name: workName,
        }),
      { timeoutMs: TIMEOUT_MS },
    );
    const now = kubeTime(new Date());
    await ctx.agent.report(clusters[0], workName, {
      healthStatus: 'Healthy',
      syncStatus: 'Synced',
      syncRevision: 'abc123',
      operationStatePhase: 'Succeeded',
      operationStateStartedAt: now,
      reconciledAt: now,
    });

    // THEN the FleetReport has the first cluster Healthy and the second Missing, with integer counts
    const reportRef = {
      apiVersion: 'pullfleet.io/v1alpha1',
      kind: 'FleetReport',
      namespace: argoNamespace,
      name: 'guestbook',
    };
    const report = await waitFor(
      'a FleetReport with the first cluster Healthy',
      async () => {
        const live = await cluster.get<FleetReport>(reportRef);
        return live?.status?.clusters.find((r) => r.cluster === clusters[0])?.state === 'Healthy' ? live : undefined;
      },
      { timeoutMs: TIMEOUT_MS, describe: () => cluster.get(reportRef) },
    );
    expect(report.status!.clusters.map((r) => [r.cluster, r.state, r.revision ?? '-'])).toStrictEqual([
      [clusters[0], 'Healthy', 'abc123'],
      [clusters[1], 'Missing', '-'],
    ]);
    expect(report.status!.summary).toMatchObject({ clusters: 2, healthy: 1, missing: 1, synced: 1 });
    expect(report.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'ApplicationSet',
      name: 'guestbook',
      uid: appSet.metadata.uid,
    });
  }, 180_000);

  test('kill -9 of the leader mid-burst: the successor takes the Lease once it expires and converges with nothing lost or duplicated', async () => {
    // GIVEN the shipped controller leading, with a short Lease so its successor need not wait 15 s
    const { ctx, starter } = await given();
    const election = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5 };
    const killed = await starter.start({ ...election, identity: 'killed' });

    // WHEN it is killed (no Lease release, no cleanup) halfway through a burst of hub changes
    await burst(ctx, 'k', 16, () => killed.kill());
    expect(await killed.exited).toBe(-1);
    // The successor runs with the shipped Lease timings: a replica that loses its Lease exits, and here no
    // kubelet would start it again.
    await ctx.startController({ identity: 'successor' });

    // THEN every opted-in app has exactly its work, and the successor holds the Lease
    await assertFleetInvariants(cluster, ctx.fleet, TIMEOUT_MS);
    const lease = await cluster.get<{ spec?: { holderIdentity?: string } }>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: ctx.fleet.controllerNamespace,
      name: 'pullfleet-controller',
    });
    expect(lease?.spec?.holderIdentity).toBe('successor');
  }, 180_000);

  const control = apiServerControl();
  (control ? test : test.skip)(
    'the API server restarts mid-burst: the controller reconnects, catches up, and feedback written afterwards still reaches the hub',
    async () => {
      // GIVEN the shipped controller running
      const { ctx, starter } = await given();
      const controller = await ctx.startController();

      // WHEN the API server process is restarted halfway through a burst of hub changes
      await burst(ctx, 'r', 12, () => control!.restart());

      // THEN the fleet converges, the same process still runs, and new feedback reaches the hub app
      await assertFleetInvariants(cluster, ctx.fleet, TIMEOUT_MS);
      // A restarted kube-apiserver answers 403 for a moment, until its RBAC cache is filled again: the
      // controller retried those; refusals from here on would be real.
      forbiddenBefore = starter.forbidden().length;
      const { hubNamespace } = ctx.fleet;
      const app = 'r-05';
      const target = ctx.fleet.clusters[1];
      const now = kubeTime(new Date());
      await ctx.agent.report(target, manifestWorkName(hubNamespace, app), {
        healthStatus: 'Degraded',
        syncStatus: 'Synced',
        syncRevision: 'after-restart',
        reconciledAt: now,
      });
      await waitFor(
        'the feedback written after the restart on the hub app',
        async () => {
          const live = await cluster.get<{ status?: { health?: { status?: string }; sync?: { revision?: string } } }>({
            apiVersion: ARGOCD_API_VERSION,
            kind: 'Application',
            namespace: hubNamespace,
            name: app,
          });
          return live?.status?.health?.status === 'Degraded' && live.status.sync?.revision === 'after-restart';
        },
        { timeoutMs: TIMEOUT_MS },
      );
      await controller.ready();
    },
    240_000,
  );

  test('the ServiceAccount the install ships may do what the controller does and no more', async () => {
    const { fleet, starter } = await given();
    await starter.start({}, { waitReady: false }).then((c) => c.stop());
    const asController = new KubeConfig();
    asController.loadFromString(
      await serviceAccountKubeconfig(kubeConfig, fleet.controllerNamespace, starter.install.serviceAccount.name),
    );
    const authz = asController.makeApiClient(AuthorizationV1Api);
    const may = async (verb: string, group: string, resource: string, namespace?: string): Promise<boolean> =>
      (
        await authz.createSelfSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { verb, group, resource, namespace } },
          },
        })
      ).status?.allowed ?? false;

    const allowed: Array<[string, string, string, string?]> = [
      ['patch', 'argoproj.io', 'applications', fleet.hubNamespace],
      ['create', 'work.open-cluster-management.io', 'manifestworks', fleet.clusters[0]],
      ['delete', 'work.open-cluster-management.io', 'manifestworks', fleet.clusters[0]],
      ['create', '', 'secrets', fleet.argoNamespace],
      ['update', 'coordination.k8s.io', 'leases', fleet.controllerNamespace],
    ];
    const refused: Array<[string, string, string, string?]> = [
      ['delete', 'argoproj.io', 'applications', fleet.hubNamespace],
      ['create', 'argoproj.io', 'applications', fleet.hubNamespace],
      ['get', '', 'secrets', fleet.hubNamespace],
      ['create', '', 'secrets', fleet.controllerNamespace],
      ['update', 'coordination.k8s.io', 'leases', fleet.hubNamespace],
      ['update', 'cluster.open-cluster-management.io', 'managedclusters'],
      ['create', 'rbac.authorization.k8s.io', 'clusterrolebindings'],
      ['create', '', 'pods', fleet.controllerNamespace],
    ];
    const answers = async (list: typeof allowed) =>
      Promise.all(
        list.map(
          async ([verb, group, resource, ns]) =>
            `${verb} ${group || 'core'}/${resource}${ns ? ` in ${ns}` : ''}: ${await may(verb, group, resource, ns)}`,
        ),
      );
    expect(await answers(allowed)).toStrictEqual(
      allowed.map(
        ([verb, group, resource, ns]) => `${verb} ${group || 'core'}/${resource}${ns ? ` in ${ns}` : ''}: true`,
      ),
    );
    expect(await answers(refused)).toStrictEqual(
      refused.map(
        ([verb, group, resource, ns]) => `${verb} ${group || 'core'}/${resource}${ns ? ` in ${ns}` : ''}: false`,
      ),
    );
  }, 120_000);
});
