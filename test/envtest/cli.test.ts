/**
 * The cluster-facing commands, run the way users run them (`node bin/pullfleet.js …` with a kubeconfig
 * file), against a real API server: `inventory pull` pages through 1,000 ManagedClusters, `inventory diff`
 * sees a label change made on the hub, and `status` reads FleetReports and exits by what they say, names a
 * pull ApplicationSet without its report, and says which list a user without the RBAC for it could not read.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { describeRealServer } from '../support/real-server.js';
import { loadKubeConfig, serviceAccountKubeconfig } from '../support/envtest-cluster.js';
import { RawApiError, RawClient, type RawObject } from '../support/raw-client.js';
import { fleetCluster, fleetSets } from '../model/placement/inventory-fixtures.js';
import { applicationSet, decision, hubApp, work, type Feedback } from '../model/report/fixtures.js';
import { computeFleetReport } from '../../src/model/report/report.js';
import { buildExpectedApplicationsConfigMap } from '../../src/model/reconcile/expected-apps.js';
import { parseInventory } from '../../src/model/placement/inventory.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'pullfleet.js');
const CLUSTERS = 1000;

function pullfleet(args: readonly string[]): { code: number; out: string; err: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (result.error) throw result.error;
  return { code: result.status ?? -1, out: result.stdout, err: result.stderr };
}

/** Runs `fn` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

describeRealServer('pullfleet inventory and status through the binary', (kubeconfigPath) => {
  const client = new RawClient(loadKubeConfig(kubeconfigPath));
  const dir = mkdtempSync(join(tmpdir(), 'pullfleet-envtest-cli-'));
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => fleetCluster(i));
  const sets = fleetSets();

  beforeAll(async () => {
    for (const set of sets) await client.apply(set as unknown as RawObject, 'pullfleet-test');
    await inParallel(clusters, 16, async (cluster) => {
      const created = await client.create<RawObject>(cluster as unknown as RawObject);
      // OCM's registration controller writes status; the test plays it.
      await client.replace({ ...(cluster as unknown as RawObject), metadata: created.metadata }, 'status');
    });
  }, 300_000);

  afterAll(async () => {
    await inParallel(clusters, 16, (c) =>
      client.delete('cluster.open-cluster-management.io/v1', 'ManagedCluster', undefined, c.metadata.name),
    );
    for (const set of sets)
      await client.delete(
        'cluster.open-cluster-management.io/v1beta2',
        'ManagedClusterSet',
        undefined,
        set.metadata.name,
      );
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  test('inventory pull pages through 1,000 ManagedClusters into a file with every cluster, its sets, claims and taints (add-on status labels left out)', async () => {
    const output = join(dir, 'inventory', 'hub.yaml');
    const result = pullfleet([
      'inventory',
      'pull',
      '--kubeconfig',
      kubeconfigPath,
      '--hub',
      'hub',
      '-o',
      output,
      '--page-size',
      '100',
    ]);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(
      new RegExp(
        `^wrote ${output} \\(${CLUSTERS} clusters, ${sets.length} cluster sets\\) from https://127\\.0\\.0\\.1:\\d+/?\\n$`,
      ),
    );
    const inventory = parseInventory(readFileSync(output, 'utf8'), output);
    expect(inventory.clusters.map((c) => c.name)).toEqual(clusters.map((c) => c.metadata.name));
    expect(inventory.clusters[0]).toStrictEqual({
      name: 'cluster-00000',
      openshift: true,
      kubernetesVersion: '1.30',
      clusterSets: ['global', 'openshift', 'prod'],
      labels: {
        'cluster.open-cluster-management.io/clusterset': 'prod',
        env: 'prod',
        // feature.open-cluster-management.io/addon-work-manager is on the hub but volatile: not recorded
        region: 'us-east-1',
        vendor: 'OpenShift',
      },
      claims: {
        'id.k8s.io': 'id-0',
        'kubeversion.open-cluster-management.io': 'v1.30.2',
        'product.open-cluster-management.io': 'OpenShift',
      },
      taints: [{ key: 'maintenance', value: 'planned', effect: 'NoSelect' }],
    });
  });

  test('inventory diff is clean right after a pull, and names a cluster whose labels changed on the hub (exit 1)', async () => {
    const output = join(dir, 'diff', 'hub.yaml');
    expect(pullfleet(['inventory', 'pull', '--kubeconfig', kubeconfigPath, '--hub', 'hub', '-o', output]).code).toBe(0);
    const clean = pullfleet(['inventory', 'diff', '--kubeconfig', kubeconfigPath, '--file', output]);
    expect({ code: clean.code, err: clean.err }).toEqual({ code: 0, err: '' });

    await client.mergePatch('cluster.open-cluster-management.io/v1', 'ManagedCluster', undefined, 'cluster-00007', {
      metadata: { labels: { region: 'eu-west-1' } },
    });
    const changed = pullfleet(['inventory', 'diff', '--kubeconfig', kubeconfigPath, '--file', output]);
    expect(changed.code).toBe(1);
    expect(changed.out + changed.err).toContain('cluster-00007');
  });

  test('status reads the FleetReports on the hub and exits 1 when a cluster is degraded, 0 when all are healthy', async () => {
    const namespace = 'cli-status';
    try {
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    } catch (e) {
      if (!(e instanceof RawApiError && e.code === 409)) throw e;
    }
    const now = new Date();
    const recent = new Date(now.getTime() - 30_000).toISOString();
    const healthy: Feedback = { health: 'Healthy', sync: 'Synced', revision: 'abc123', reconciledAt: recent };
    const reportOf = (feedback: Record<string, Feedback>): RawObject => {
      const clusterNames = Object.keys(feedback);
      const computed = computeFleetReport({
        applicationSet: applicationSet({ name: 'guestbook' }),
        decisions: [decision('d', clusterNames)],
        applications: clusterNames.map((c) => hubApp(c, 'guestbook')),
        works: clusterNames.map((c) => work(c, feedback[c], { appSet: 'guestbook' })),
        now,
      })!.report as unknown as RawObject;
      return { ...computed, metadata: { ...computed.metadata, namespace } };
    };
    const write = async (report: RawObject): Promise<void> => {
      const { status, ...rest } = report as RawObject & { status?: unknown };
      const stored = await client.apply<RawObject>(rest, 'pullfleet-test');
      await client.replace({ ...report, metadata: stored.metadata }, 'status');
    };

    await write(
      reportOf({
        'cluster-00001': healthy,
        'cluster-00002': { ...healthy, health: 'Degraded', message: 'Deployment guestbook-ui is not available' },
      }),
    );
    const degraded = pullfleet([
      'status',
      '--kubeconfig',
      kubeconfigPath,
      '-n',
      namespace,
      '--no-static',
      '-o',
      'json',
    ]);
    expect(degraded.err).toBe('');
    expect(degraded.code).toBe(1);
    expect(degraded.out).toContain('cluster-00002');
    expect(degraded.out).toContain('Degraded');

    await write(reportOf({ 'cluster-00001': healthy, 'cluster-00002': healthy }));
    const ok = pullfleet(['status', '--kubeconfig', kubeconfigPath, '-n', namespace, '--no-static']);
    expect({ code: ok.code, err: ok.err }).toEqual({ code: 0, err: '' });
    expect(ok.out).toContain('cluster-00001');
  });

  test('status as a user who may not list ConfigMaps says the Missing rows of autonomous spokes are not shown, with the 403; a pull ApplicationSet without its report is Unknown', async () => {
    // GIVEN a namespace with a pull ApplicationSet that has no FleetReport, an autonomous spoke's expected
    // list, and a ServiceAccount that may list FleetReports, ApplicationSets and Applications, not ConfigMaps
    const namespace = 'cli-rbac';
    const admin = loadKubeConfig(kubeconfigPath);
    const ensure = async (object: RawObject) => {
      try {
        await client.create(object);
      } catch (e) {
        if (!(e instanceof RawApiError && e.code === 409)) throw e;
      }
    };
    await ensure({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await ensure({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'status-viewer', namespace } });
    await ensure({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'pullfleet-test-status-viewer' },
      rules: [
        { apiGroups: ['pullfleet.io'], resources: ['fleetreports'], verbs: ['list'] },
        { apiGroups: ['argoproj.io'], resources: ['applications', 'applicationsets'], verbs: ['list'] },
      ],
    });
    await ensure({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'pullfleet-test-status-viewer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pullfleet-test-status-viewer' },
      subjects: [{ kind: 'ServiceAccount', name: 'status-viewer', namespace }],
    });
    const appSet = applicationSet({ name: 'metrics' }) as unknown as RawObject;
    await ensure({ ...appSet, metadata: { name: 'metrics', namespace } });
    await ensure(
      buildExpectedApplicationsConfigMap({
        spoke: 'store-001',
        namespace,
        applications: ['api-store-001'],
        folder: 'dist/hub/spokes/store-001',
      }) as unknown as RawObject,
    );
    const viewer = join(dir, 'viewer.kubeconfig');
    writeFileSync(viewer, await serviceAccountKubeconfig(admin, namespace, 'status-viewer'));

    // WHEN status runs as that user
    const result = pullfleet(['status', '--kubeconfig', viewer, '-n', namespace]);

    // THEN the ApplicationSet is Unknown (exit 1) and stderr names the ConfigMaps the server refused
    expect(result.code).toBe(1);
    expect(result.out).toContain(`ApplicationSet ${namespace}/metrics (placement prod)`);
    expect(result.out).toContain(`Unknown: no FleetReport for ApplicationSet ${namespace}/metrics`);
    expect(result.err).toContain(
      'pullfleet status: the Missing rows of agent-autonomous spokes (expected Applications the principal does not mirror) are not shown',
    );
    expect(result.err).toContain(
      'not allowed to list ConfigMaps labelled pullfleet.io/expected-applications-for on the hub at https://127.0.0.1:',
    );
    expect(result.err).toContain(
      `(403 Forbidden): GET /api/v1/configmaps: 403 configmaps is forbidden: User "system:serviceaccount:${namespace}:status-viewer" cannot list resource "configmaps" in API group "" at the cluster scope`,
    );
    expect(result.err.split('\n').filter(Boolean)).toHaveLength(1);
  });

  test('status against an API server that is not there exits 2 with a message naming it', () => {
    const kubeconfig = join(dir, 'nowhere.kubeconfig');
    const text = readFileSync(kubeconfigPath, 'utf8').replace(
      /server: https:\/\/127\.0\.0\.1:\d+/,
      'server: https://127.0.0.1:1',
    );
    writeFileSync(kubeconfig, text);
    const result = pullfleet(['status', '--kubeconfig', kubeconfig, '--timeout', '5']);
    expect(result.code).toBe(2);
    expect(result.out + result.err).toContain('127.0.0.1:1');
  });
});
