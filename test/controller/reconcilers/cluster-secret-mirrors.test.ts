/**
 * The cluster-Secret duty keeps the spoke-label mirrors of the Secrets it owns in line with the live
 * ManagedClusters (issue 28): a pull ApplicationSet whose template reads `SpokeParam.label('region')` (the matrix
 * of its placement's decisions and the cluster generator) reaches clusters the fleet does not declare.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import {
  CLUSTER_SECRETS_KEY,
  createClusterSecretReconciler,
} from '../../../src/controller/reconcilers/cluster-secret.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { CONTROLLER_OWNED_LABEL } from '../../../src/model/core/keys.js';
import { type KubeObject } from '../../../src/model/core/types.js';
import { buildPullApplicationSet } from '../../../src/model/delivery/appset.js';
import { buildClusterSecret } from '../../../src/model/delivery/cluster-secret.js';
import { spokeLabelParam } from '../../../src/model/delivery/per-spoke.js';
import { managedCluster as clusterObject, World } from '../../support/world.js';
import { placementDecision } from '../../support/appsets.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A pull ApplicationSet on placement `placement` whose Helm values read the spoke labels `keys`. */
function appSet(name: string, placement: string, keys: string[]): KubeObject {
  return buildPullApplicationSet(
    {
      name,
      project: 'default',
      destinationNamespace: name,
      sources: [
        {
          repoURL: 'https://charts.example.com',
          chart: name,
          targetRevision: '1.0.0',
          helm: { valuesObject: Object.fromEntries(keys.map((key) => [key, spokeLabelParam(key)])) },
        },
      ],
    },
    {
      name,
      namespace: 'argocd',
      placement,
      requeueAfterSeconds: 180,
      constructPath: `fleet/hub/${name}`,
      spokeLabels: keys.length > 0,
    },
  );
}

const decision = (placement: string, clusters: string[]): KubeObject => placementDecision(placement, clusters);

function managedCluster(name: string, labels: Record<string, string>, status?: unknown): KubeObject {
  return clusterObject(name, { labels, ...(status ? { extra: { status } } : {}) });
}

type Secret = KubeObject & { data?: Record<string, string> };

const OWNED_BASE = {
  'app.kubernetes.io/managed-by': 'pullfleet',
  'argocd.argoproj.io/secret-type': 'cluster',
  [CONTROLLER_OWNED_LABEL]: 'true',
};

describe('cluster secret reconciler: spoke-label mirrors', () => {
  let world: World;
  let reconciler: Reconciler;
  const secretOf = (cluster: string) => world.get<Secret>('Secret', `argocd/${cluster}-cluster-secret`);

  beforeEach(() => {
    world = new World();
    reconciler = world.reconciler(createClusterSecretReconciler);
  });

  test('GIVEN an undeclared cluster with region=eu decided for an ApplicationSet reading region WHEN reconciled THEN its new Secret mirrors the label and is selectable, in one write', async () => {
    world.put('ManagedCluster', managedCluster('c1', { region: 'eu' }));
    world.put('ApplicationSet', appSet('api', 'prod', ['region']));
    world.put('PlacementDecision', decision('prod', ['c1']));

    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(world.writes.map((w) => [w.verb, w.key])).toStrictEqual([['apply', 'argocd/c1-cluster-secret']]);
    const secret = secretOf('c1')!;
    expect(secret.metadata.labels).toStrictEqual({
      ...OWNED_BASE,
      'pullfleet.io/cluster': 'c1',
      'spoke.pullfleet.io/region': 'eu',
    });
    expect(secret.data).toStrictEqual({ name: b64('c1'), server: b64('https://c1-control-plane:6443') });
  });

  test('GIVEN a mirrored Secret WHEN the ManagedCluster is relabelled region=us THEN the change enqueues the duty and the Secret follows with one patch; a status update enqueues nothing', async () => {
    world.put('ManagedCluster', managedCluster('c1', { region: 'eu' }));
    world.put('ApplicationSet', appSet('api', 'prod', ['region']));
    world.put('PlacementDecision', decision('prod', ['c1']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    world.enqueued.length = 0;

    world.put('ManagedCluster', managedCluster('c1', { region: 'eu' }, { conditions: [{ type: 'Available' }] }));
    expect(world.enqueued).toStrictEqual([]);
    world.put('ManagedCluster', managedCluster('c1', { region: 'us' }));
    expect(world.enqueued).toStrictEqual([CLUSTER_SECRETS_KEY]);
    const before = world.writes.length;
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(world.writes.slice(before).map((w) => [w.verb, w.key, w.body])).toStrictEqual([
      ['patch', 'argocd/c1-cluster-secret', { metadata: { labels: { 'spoke.pullfleet.io/region': 'us' } } }],
    ]);
    expect(secretOf('c1')!.metadata.labels).toMatchObject({
      'pullfleet.io/cluster': 'c1',
      'spoke.pullfleet.io/region': 'us',
    });
  });

  test('GIVEN a Secret of ours made before mirrors existed WHEN reconciled THEN it is patched to carry them, data untouched', async () => {
    const old = buildClusterSecret('c1', 'argocd', { [CONTROLLER_OWNED_LABEL]: 'true' });
    const { stringData: _s, ...rest } = old;
    world.put('Secret', { ...rest, data: { name: b64('c1'), server: b64(old.stringData.server) } } as KubeObject);
    world.put('ManagedCluster', managedCluster('c1', { region: 'eu', 'topology.kubernetes.io/zone': 'a' }));
    world.put('ApplicationSet', appSet('api', 'prod', ['region', 'topology.kubernetes.io/zone']));
    world.put('PlacementDecision', decision('prod', ['c1']));

    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(world.writes.map((w) => w.verb)).toStrictEqual(['patch']);
    expect(secretOf('c1')!.metadata.labels).toStrictEqual({
      ...OWNED_BASE,
      'pullfleet.io/cluster': 'c1',
      'spoke.pullfleet.io/region': 'eu',
      'topology.kubernetes.io.spoke.pullfleet.io/zone': 'a',
    });
  });

  test('GIVEN a cluster Secret synth rendered (not ours) whose ManagedCluster label changed WHEN reconciled THEN it is left exactly as it was', async () => {
    const declared = buildClusterSecret('east', 'argocd', {
      'pullfleet.io/cluster': 'east',
      'spoke.pullfleet.io/region': 'us-east',
    });
    const stored = world.put('Secret', declared);
    world.put('ManagedCluster', managedCluster('east', { region: 'eu-west' }));
    world.put('ApplicationSet', appSet('api', 'prod', ['region']));
    world.put('PlacementDecision', decision('prod', ['east']));

    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(world.writes).toStrictEqual([]);
    expect(world.get('Secret', 'argocd/east-cluster-secret')).toStrictEqual(stored);
  });

  test('GIVEN a selectable Secret WHEN the ManagedCluster loses the label THEN the mirror keeps its last value and nothing is written', async () => {
    world.put('ManagedCluster', managedCluster('c1', { region: 'eu' }));
    world.put('ApplicationSet', appSet('api', 'prod', ['region']));
    world.put('PlacementDecision', decision('prod', ['c1']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    const before = world.writes.length;

    world.put('ManagedCluster', managedCluster('c1', {}));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(world.writes.length).toBe(before);
    expect(secretOf('c1')!.metadata.labels).toMatchObject({
      'pullfleet.io/cluster': 'c1',
      'spoke.pullfleet.io/region': 'eu',
    });
  });

  test('GIVEN a held mirror WHEN reconciled twice THEN one warning names the cluster and the label, not one per run', async () => {
    const lines: Array<{ msg: string; cluster?: string; labels?: string[] }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    reconciler = world.reconciler((context) => createClusterSecretReconciler({ ...context, logger }));
    world.put('ManagedCluster', managedCluster('c1', { region: 'eu' }));
    world.put('ApplicationSet', appSet('api', 'prod', ['region']));
    world.put('PlacementDecision', decision('prod', ['c1']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(lines).toStrictEqual([]);

    world.put('ManagedCluster', managedCluster('c1', {}));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    await reconciler.reconcile(CLUSTER_SECRETS_KEY, { enqueuedAt: Date.now() });

    expect(lines.map((l) => [l.cluster, l.labels])).toStrictEqual([['c1', ['region']]]);
    expect(lines[0].msg).toMatch(/keep the last value .* give the cluster the labels again, or stop reading them/);
  });

  test('GIVEN a decided cluster lacking the label WHEN reconciled THEN its Secret is blank and not selectable; WHEN the label arrives THEN it is mirrored and selectable', async () => {
    world.put('ManagedCluster', managedCluster('c1', {}));
    world.put('ApplicationSet', appSet('api', 'prod', ['region']));
    world.put('PlacementDecision', decision('prod', ['c1']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(secretOf('c1')!.metadata.labels).toStrictEqual(OWNED_BASE);

    world.put('ManagedCluster', managedCluster('c1', { region: 'eu' }));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(secretOf('c1')!.metadata.labels).toStrictEqual({
      ...OWNED_BASE,
      'pullfleet.io/cluster': 'c1',
      'spoke.pullfleet.io/region': 'eu',
    });
  });

  test('GIVEN two ApplicationSets WHEN only one reading zone decides c2 THEN c1 (decided by the region reader only) is selectable without zone, and zone is mirrored where the cluster has it', async () => {
    world.put('ManagedCluster', managedCluster('c1', { region: 'eu', zone: 'a' }));
    world.put('ManagedCluster', managedCluster('c2', { region: 'us' }));
    world.put('ApplicationSet', appSet('api', 'prod', ['region']));
    world.put('ApplicationSet', appSet('gpu', 'gpu', ['zone']));
    world.put('PlacementDecision', decision('prod', ['c1', 'c2']));
    world.put('PlacementDecision', decision('gpu', ['c2']));

    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(secretOf('c1')!.metadata.labels).toStrictEqual({
      ...OWNED_BASE,
      'pullfleet.io/cluster': 'c1',
      'spoke.pullfleet.io/region': 'eu',
      'spoke.pullfleet.io/zone': 'a',
    });
    // c2 lacks zone, which the gpu ApplicationSet deciding it reads: not selectable, so that matrix skips it.
    expect(secretOf('c2')!.metadata.labels).toStrictEqual({ ...OWNED_BASE, 'spoke.pullfleet.io/region': 'us' });
  });

  test('GIVEN no pull ApplicationSet reads spoke labels WHEN reconciled THEN Secrets carry no mirror and no cluster label', async () => {
    world.put('ManagedCluster', managedCluster('c1', { region: 'eu' }));
    world.put('ApplicationSet', appSet('api', 'prod', []));
    world.put('PlacementDecision', decision('prod', ['c1']));

    await world.settle(reconciler, CLUSTER_SECRETS_KEY);

    expect(secretOf('c1')!.metadata.labels).toStrictEqual(OWNED_BASE);
  });
});
