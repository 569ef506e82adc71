import { beforeEach, describe, expect, test } from '@jest/globals';
import {
  CLUSTER_SECRETS_KEY,
  createClusterSecretReconciler,
} from '../../../src/controller/reconcilers/cluster-secret.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { CONTROLLER_OWNED_LABEL, PULL_LABEL } from '../../../src/model/core/keys.js';
import { type KubeObject } from '../../../src/model/core/types.js';
import { World } from '../../support/world.js';
import { placementApplicationSet, placementDecision } from '../../support/appsets.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

function appSet(name: string, placement: string, pull = true): KubeObject {
  return placementApplicationSet({
    name,
    placement,
    matrixWith: { list: { elements: [] } },
    template: { metadata: { labels: pull ? { [PULL_LABEL]: 'true' } : {} } },
  });
}

const decision = (placement: string, clusters: string[]): KubeObject => placementDecision(placement, clusters);

describe('cluster secret reconciler', () => {
  let world: World;
  let reconciler: Reconciler;

  beforeEach(() => {
    world = new World();
    for (const name of ['spoke1', 'spoke2', 'spoke3', 'local-cluster']) world.addCluster(name);
    reconciler = world.reconciler(createClusterSecretReconciler);
  });

  test('GIVEN a pull ApplicationSet placement selecting two clusters WHEN reconciled THEN each gets a blank, labelled cluster Secret', async () => {
    world.put('ApplicationSet', appSet('guestbook', 'prod'));
    world.put('PlacementDecision', decision('prod', ['spoke1', 'spoke2', 'local-cluster', 'unregistered']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(world.cache.keys('Secret').sort()).toStrictEqual([
      'argocd/spoke1-cluster-secret',
      'argocd/spoke2-cluster-secret',
    ]);
    const secret = world.get<KubeObject & { data: Record<string, string> }>('Secret', 'argocd/spoke1-cluster-secret')!;
    expect(secret.data).toStrictEqual({ name: b64('spoke1'), server: b64('https://spoke1-control-plane:6443') });
    expect(secret.metadata.labels).toStrictEqual({
      'app.kubernetes.io/managed-by': 'pullfleet',
      'argocd.argoproj.io/secret-type': 'cluster',
      [CONTROLLER_OWNED_LABEL]: 'true',
    });
  });

  test('GIVEN the hub imported under another name (labelled local-cluster: "true") in the decisions THEN it gets no Secret', async () => {
    world.addCluster('hub-east', { labels: { 'local-cluster': 'true' } });
    world.put('ApplicationSet', appSet('guestbook', 'prod'));
    world.put('PlacementDecision', decision('prod', ['spoke1', 'hub-east']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(world.cache.keys('Secret')).toStrictEqual(['argocd/spoke1-cluster-secret']);
  });

  test('GIVEN a non-pull ApplicationSet WHEN reconciled THEN no Secret is written', async () => {
    world.put('ApplicationSet', appSet('push', 'prod', false));
    world.put('PlacementDecision', decision('prod', ['spoke1']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(world.cache.list('Secret')).toHaveLength(0);
  });

  test('GIVEN a Secret someone else made for a cluster WHEN reconciled THEN it is left alone and no duplicate is made', async () => {
    world.put('Secret', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'mine', namespace: 'argocd', labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
      data: { name: b64('spoke1'), server: b64('https://real:6443'), config: b64('{}') },
    } as KubeObject);
    world.put('ApplicationSet', appSet('guestbook', 'prod'));
    world.put('PlacementDecision', decision('prod', ['spoke1']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(world.writes).toHaveLength(0);
    expect(world.cache.keys('Secret')).toStrictEqual(['argocd/mine']);
  });

  test('GIVEN a controller Secret WHEN its cluster leaves the placement THEN it stays; WHEN the ManagedCluster is gone THEN it is deleted', async () => {
    world.put('ApplicationSet', appSet('guestbook', 'prod'));
    world.put('PlacementDecision', decision('prod', ['spoke1']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    world.put('PlacementDecision', decision('prod', []));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(world.cache.keys('Secret')).toStrictEqual(['argocd/spoke1-cluster-secret']);
    world.cache.remove('ManagedCluster', 'spoke1');
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(world.cache.list('Secret')).toHaveLength(0);
  });

  test('GIVEN nothing changed WHEN reconciled again THEN no write is made', async () => {
    world.put('ApplicationSet', appSet('guestbook', 'prod'));
    world.put('PlacementDecision', decision('prod', ['spoke1', 'spoke3']));
    await world.settle(reconciler, CLUSTER_SECRETS_KEY);
    const before = world.writes.length;
    await reconciler.reconcile(CLUSTER_SECRETS_KEY, { enqueuedAt: Date.now() });
    expect(world.writes.length).toBe(before);
  });
});
