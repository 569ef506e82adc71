/**
 * Resource summaries on a real API server, with the controller as it ships (its own process, its ServiceAccount's
 * RBAC): the test plays three work agents — one that evaluates the works' condition rule (with CEL, as OCM 1.0 and
 * later do), one that rejects it, and one that returns nothing (an agent before OCM 1.0) — and checks what reaches
 * the hub Applications (status.resources, status.summary.images, conditions), the FleetReport rows, and
 * `pullfleet status --cluster` run as users run it (`node bin/pullfleet.js`).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from '@jest/globals';
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
import { type FleetReport } from '../../src/model/report/report.js';
import { RESOURCE_SUMMARY_WARNING_CONDITION } from '../../src/model/reconcile/resource-summary.js';
import { kubeTime } from '../../src/model/core/time.js';
import { realCluster, type TestCluster } from '../support/cluster.js';
import {
  createPlacementDecision,
  placementApplicationSet,
  placementDecision,
  pullTemplate,
} from '../support/appsets.js';
import { describeRealServer } from '../support/real-server.js';
import { shippedControllerStarter } from '../support/shipped-controller.js';
import { spokeApplication } from '../support/spoke-apps.js';
import { waitFor } from '../support/wait.js';
import { WorkAgent } from '../support/work-agent.js';
import { fleetFor, setUpFleet, tearDownFleet, type Fleet } from '../e2e/scenarios.js';

const TIMEOUT_MS = 90_000;
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'pullfleet.js');

describeRealServer('resource summaries with the shipped controller', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const cluster: TestCluster = realCluster(kubeConfig);
  const runId = `rs${Date.now().toString(36).slice(-6)}`;
  let fleet: Fleet | undefined;
  let controllers: ReturnType<typeof shippedControllerStarter> | undefined;

  afterEach(async () => {
    await controllers?.stopAll();
    const forbidden = controllers?.forbidden() ?? [];
    controllers = undefined;
    if (fleet) await tearDownFleet(cluster, fleet);
    fleet = undefined;
    // Every request the controller made was allowed by the RBAC its install ships.
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  function hubApp(namespace: string, name: string, target: string, appSetUid?: string): Application {
    return {
      apiVersion: ARGOCD_API_VERSION,
      kind: 'Application',
      metadata: {
        name,
        namespace,
        labels: { [PULL_LABEL]: 'true' },
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: target, [SKIP_RECONCILE_ANNOTATION]: 'true' },
        ...(appSetUid
          ? {
              ownerReferences: [
                {
                  apiVersion: ARGOCD_API_VERSION,
                  kind: 'ApplicationSet',
                  name: 'shop',
                  uid: appSetUid,
                  controller: true,
                },
              ],
            }
          : {}),
      },
      spec: {
        project: 'default',
        source: { repoURL: 'https://git.example/apps.git', path: 'shop' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' },
      },
    };
  }

  test('the summary an agent reports reaches the hub Application and the FleetReport; an agent that rejects the rule or returns nothing leaves scalar status flowing and is named', async () => {
    // GIVEN an ApplicationSet on both clusters (its apps on c1 and c2) and a standalone app on c1, delivered by
    // the shipped controller
    fleet = fleetFor(`${runId}-0`);
    await setUpFleet(cluster, fleet);
    const { argoNamespace, clusters, clusterSet } = fleet;
    const [c1, c2] = clusters;
    await cluster.create({
      apiVersion: CLUSTERSET_API_VERSION,
      kind: 'ManagedClusterSetBinding',
      metadata: { name: clusterSet, namespace: argoNamespace },
      spec: { clusterSet },
    });
    const appSet = await cluster.create<{ metadata: { uid: string } }>(
      placementApplicationSet({
        name: 'shop',
        namespace: argoNamespace,
        placement: 'prod',
        template: pullTemplate('shop'),
      }),
    );
    await createPlacementDecision(cluster, placementDecision('prod', clusters, { namespace: argoNamespace }));
    const apps = [
      hubApp(argoNamespace, `${c1}-shop`, c1, appSet.metadata.uid),
      hubApp(argoNamespace, `${c2}-shop`, c2, appSet.metadata.uid),
      hubApp(argoNamespace, 'web', c1),
    ];
    for (const app of apps) await cluster.create(app);
    controllers = shippedControllerStarter(kubeConfig, { namespace: fleet.controllerNamespace, argoNamespace });
    await controllers.start();
    const workOf = (target: string, name: string) => ({
      apiVersion: WORK_API_VERSION,
      kind: 'ManifestWork',
      namespace: target,
      name: manifestWorkName(argoNamespace, name),
    });
    for (const app of apps)
      await waitFor(
        `the work of ${app.metadata.name}`,
        () =>
          cluster.get<ManifestWork>(workOf(app.metadata.annotations![MANAGED_CLUSTER_ANNOTATION], app.metadata.name)),
        {
          timeoutMs: TIMEOUT_MS,
        },
      );

    // WHEN the agents report: c1's evaluates the rule against a spoke app with a Degraded Deployment, c2's rejects
    // the rule, and c1's app `web` comes from an agent that returns no rule conditions at all
    const agent = new WorkAgent(cluster);
    const now = kubeTime(new Date());
    const spoke = spokeApplication({
      resources: 8,
      degraded: 1,
      outOfSync: 1,
      images: ['registry.example.com/shop/cart:1.4.2'],
    });
    await agent.report(
      c1,
      manifestWorkName(argoNamespace, `${c1}-shop`),
      { healthStatus: 'Degraded', syncStatus: 'OutOfSync', reconciledAt: now },
      { spokeApplication: spoke.object },
    );
    await agent.report(
      c2,
      manifestWorkName(argoNamespace, `${c2}-shop`),
      { healthStatus: 'Healthy', syncStatus: 'Synced', reconciledAt: now },
      { ruleError: "ERROR: <input>:1:1: undeclared reference to 'join'" },
    );
    await agent.report(c1, manifestWorkName(argoNamespace, 'web'), {
      healthStatus: 'Progressing',
      syncStatus: 'Synced',
      reconciledAt: now,
    });

    // THEN c1's hub app lists the resources, problems first, and the images
    const appRef = (name: string) => ({
      apiVersion: ARGOCD_API_VERSION,
      kind: 'Application',
      namespace: argoNamespace,
      name,
    });
    const shop1 = await waitFor(
      `${c1}-shop with status.resources`,
      async () => {
        const live = await cluster.get<Application>(appRef(`${c1}-shop`));
        return Array.isArray(live?.status?.resources) ? live : undefined;
      },
      { timeoutMs: TIMEOUT_MS, describe: () => cluster.get(appRef(`${c1}-shop`)) },
    );
    const resources = shop1.status!.resources as Array<{
      kind: string;
      name: string;
      status?: string;
      health?: { status: string };
    }>;
    expect(resources.map((r) => `${r.kind}/${r.name} ${r.health?.status} ${r.status}`).slice(0, 2)).toStrictEqual([
      'Deployment/component-0 Degraded Synced',
      'Service/component-1 Healthy OutOfSync',
    ]);
    expect(resources).toHaveLength(8);
    expect(shop1.status!.summary).toStrictEqual({ images: ['registry.example.com/shop/cart:1.4.2'] });
    expect(shop1.status!.health?.status).toBe('Degraded');
    expect(shop1.status!.conditions ?? []).toStrictEqual([]);

    // AND the agent that rejects the rule and the one that returns nothing: scalar status arrives, a warning names why
    const warned = async (name: string, health: string) =>
      waitFor(
        `${name} with ${health} and a resource summary warning`,
        async () => {
          const live = await cluster.get<Application>(appRef(name));
          const warning = live?.status?.conditions?.find((c) => c.type === RESOURCE_SUMMARY_WARNING_CONDITION);
          return live?.status?.health?.status === health && warning ? { live, warning } : undefined;
        },
        { timeoutMs: TIMEOUT_MS, describe: () => cluster.get(appRef(name)) },
      );
    const rejected = await warned(`${c2}-shop`, 'Healthy');
    expect(rejected.warning.message).toContain(
      "could not build the resource summary (condition pullfleet.io/ResourceSummary): ERROR: <input>:1:1: undeclared reference to 'join'",
    );
    expect(rejected.live.status!.resources).toBeUndefined();
    const silent = await warned('web', 'Progressing');
    expect(silent.warning.message).toContain('work agents before OCM 1.0 do not evaluate conditionRules');

    // AND the FleetReport rows carry the counts and first problems, or say why there are none
    const reportRef = {
      apiVersion: 'pullfleet.io/v1alpha1',
      kind: 'FleetReport',
      namespace: argoNamespace,
      name: 'shop',
    };
    const report = await waitFor(
      'a FleetReport with resource counts',
      async () => {
        const live = await cluster.get<FleetReport>(reportRef);
        const rows = live?.status?.clusters ?? [];
        return rows.find((r) => r.cluster === c1)?.resources && rows.find((r) => r.cluster === c2)?.resourceMessage
          ? live
          : undefined;
      },
      { timeoutMs: TIMEOUT_MS, describe: () => cluster.get(reportRef) },
    );
    const [row1, row2] = report.status!.clusters;
    expect(row1).toMatchObject({
      cluster: c1,
      state: 'Degraded',
      resources: { total: 8, healthy: 7, degraded: 1, outOfSync: 1 },
      problemResources: [
        { kind: 'Deployment', namespace: 'shop', name: 'component-0', health: 'Degraded' },
        { kind: 'Service', namespace: 'shop', name: 'component-1', sync: 'OutOfSync' },
      ],
      images: ['registry.example.com/shop/cart:1.4.2'],
    });
    expect(row2).toMatchObject({ cluster: c2, state: 'Healthy' });
    expect(row2.resourceMessage).toContain('the work agent could not build the resource summary');

    // AND `pullfleet status --cluster c1` (the binary, the admin's kubeconfig) shows both apps of c1, problems first,
    // and exits 1 for the Degraded Deployment
    const cli = spawnSync(
      process.execPath,
      [BIN, 'status', '--kubeconfig', kubeconfigPath, '--cluster', c1, '-o', 'json'],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(1);
    const doc = JSON.parse(cli.stdout) as {
      rows: Array<{ application: string; kind?: string; name?: string; health?: string; message?: string }>;
    };
    expect(doc.rows[0]).toMatchObject({
      application: `${c1}-shop`,
      kind: 'Deployment',
      name: 'component-0',
      health: 'Degraded',
    });
    expect(doc.rows.find((row) => row.application === 'web')?.message).toContain('no resource summary');
  }, 240_000);
});
