/**
 * Spoke-label mirrors on a real API server, kept by the controller as it ships (issue 28): a ManagedCluster the
 * fleet does not declare, labelled region=eu and decided for a PullApplicationSet that reads
 * `SpokeParam.label('region')`, gets a controller-owned cluster Secret carrying `spoke.pullfleet.io/region: eu`;
 * relabelled region=us, the Secret follows; the cluster Secret synth rendered for a declared spoke is not touched,
 * though its live ManagedCluster's label differs. The ApplicationSet and the declared Secret are those synth
 * renders; the test writes the PlacementDecision as OCM's placement controller would.
 */
import { afterEach, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplicationSet,
  Spoke,
  SpokeParam,
} from '../../src/constructs/index.js';
import { CLUSTER_API_VERSION } from '../../src/model/core/keys.js';
import { realCluster, type TestCluster } from '../support/cluster.js';
import { createPlacementDecision, placementDecision } from '../support/appsets.js';
import { describeRealServer } from '../support/real-server.js';
import { shippedControllerStarter } from '../support/shipped-controller.js';
import { waitFor } from '../support/wait.js';

const TIMEOUT_MS = 90_000;

interface SecretObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** What synth renders for a hub whose Argo CD namespace is `argoNamespace`: the ApplicationSet and every Secret. */
function rendered(argoNamespace: string, declared: string) {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub', { argoNamespace });
  const prod = new ClusterSet(hub, 'prod');
  new Spoke(hub, declared, { clusterSet: prod, labels: { region: 'us-east' } });
  new PullApplicationSet(hub, 'api', {
    source: AppSource.helm({
      repoURL: 'https://charts.example.com',
      chart: 'api',
      targetRevision: '1.0.0',
      values: { region: SpokeParam.label('region') },
    }),
    destinationNamespace: 'api',
    placement: new Placement(hub, 'all', { clusterSets: [prod] }),
  });
  const objects = [...fleet.renderObjects().values()].flat() as Array<{
    kind: string;
    metadata: { name: string; namespace?: string };
    spec?: { generators?: Array<{ matrix?: { generators: Array<Record<string, unknown>> } }> };
  }>;
  const appSet = objects.find((o) => o.kind === 'ApplicationSet')!;
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === `${declared}-cluster-secret`)!;
  return { appSet, secret };
}

describeRealServer('spoke-label mirrors on controller-owned cluster Secrets', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const cluster: TestCluster = realCluster(kubeConfig);
  const id = `slm${Date.now().toString(36).slice(-6)}`;
  const argoNamespace = `${id}-argocd`;
  const controllerNamespace = `${id}-system`;
  const undeclared = `${id}-c1`;
  const declared = `${id}-east`;
  let controllers: ReturnType<typeof shippedControllerStarter> | undefined;

  afterEach(async () => {
    await controllers?.stopAll();
    const forbidden = controllers?.forbidden() ?? [];
    for (const name of [undeclared, declared])
      await cluster.delete({ apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name });
    for (const name of [argoNamespace, controllerNamespace])
      await cluster.delete({ apiVersion: 'v1', kind: 'Namespace', name });
    // Every request the controller made was allowed by the RBAC its install ships.
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  test('an undeclared cluster gets a Secret mirroring region=eu, which follows the relabel to us; the Secret synth rendered stays as it was', async () => {
    // GIVEN the rendered ApplicationSet (a matrix reading region) and the declared spoke's rendered Secret,
    // an undeclared ManagedCluster with region=eu, the declared one relabelled live to eu-west, and a
    // PlacementDecision deciding both
    const { appSet, secret } = rendered(argoNamespace, declared);
    expect(appSet.spec?.generators?.[0].matrix?.generators[1]).toStrictEqual({
      clusters: {
        selector: {
          matchLabels: { 'pullfleet.io/cluster': '{{name}}' },
          matchExpressions: [{ key: 'spoke.pullfleet.io/region', operator: 'Exists' }],
        },
      },
    });
    for (const name of [argoNamespace, controllerNamespace])
      await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await cluster.create({
      apiVersion: CLUSTER_API_VERSION,
      kind: 'ManagedCluster',
      metadata: { name: undeclared, labels: { region: 'eu' } },
      spec: { hubAcceptsClient: true },
    });
    await cluster.create({
      apiVersion: CLUSTER_API_VERSION,
      kind: 'ManagedCluster',
      metadata: { name: declared, labels: { region: 'eu-west' } },
      spec: { hubAcceptsClient: true },
    });
    await cluster.apply(appSet, 'argocd-sync');
    const declaredSecret = await cluster.apply<SecretObject>(secret, 'argocd-sync');
    await createPlacementDecision(
      cluster,
      placementDecision('all', [undeclared, declared], { namespace: argoNamespace }),
    );
    const ownedRef = {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: argoNamespace,
      name: `${undeclared}-cluster-secret`,
    };

    // WHEN the shipped controller runs its cluster-Secret duty
    controllers = shippedControllerStarter(kubeConfig, { namespace: controllerNamespace, argoNamespace });
    await controllers.start({ clusterSecrets: true, argoNamespace });

    // THEN the undeclared cluster's Secret is ours, selectable by the matrix and mirrors region=eu
    const owned = await waitFor(
      'the undeclared cluster Secret carrying region=eu',
      async () => {
        const live = await cluster.get<SecretObject>(ownedRef);
        return live?.metadata.labels?.['spoke.pullfleet.io/region'] === 'eu' ? live : undefined;
      },
      { timeoutMs: TIMEOUT_MS, describe: () => cluster.get(ownedRef) },
    );
    expect(owned.metadata.labels).toStrictEqual({
      'app.kubernetes.io/managed-by': 'pullfleet',
      'argocd.argoproj.io/secret-type': 'cluster',
      'pullfleet.io/cluster': undeclared,
      'pullfleet.io/controller': 'true',
      'spoke.pullfleet.io/region': 'eu',
    });
    expect(Object.keys(owned.data ?? {}).sort()).toStrictEqual(['name', 'server']);

    // WHEN the ManagedCluster is relabelled region=us
    await cluster.mergePatch(
      { apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name: undeclared },
      { metadata: { labels: { region: 'us' } } },
    );

    // THEN the Secret follows
    await waitFor(
      'the undeclared cluster Secret to carry region=us',
      async () => (await cluster.get<SecretObject>(ownedRef))?.metadata.labels?.['spoke.pullfleet.io/region'] === 'us',
      { timeoutMs: TIMEOUT_MS, describe: () => cluster.get(ownedRef) },
    );

    // AND the Secret synth rendered (not the controller's) is exactly as applied: same resourceVersion, its
    // declared region, though the live ManagedCluster says eu-west
    const after = await cluster.get<SecretObject>({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: argoNamespace,
      name: `${declared}-cluster-secret`,
    });
    expect(after?.metadata.resourceVersion).toBe(declaredSecret.metadata.resourceVersion);
    expect(after?.metadata.labels?.['spoke.pullfleet.io/region']).toBe('us-east');
    expect(after?.metadata.labels?.['pullfleet.io/controller']).toBeUndefined();
    // And no second Secret was made for the declared cluster.
    const all = await cluster.list<SecretObject>('v1', 'Secret', {
      namespace: argoNamespace,
      labelSelector: 'argocd.argoproj.io/secret-type=cluster',
    });
    expect(all.map((s) => s.metadata.name).sort()).toStrictEqual(
      [`${declared}-cluster-secret`, `${undeclared}-cluster-secret`].sort(),
    );
  }, 180_000);
});
