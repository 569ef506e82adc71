import { describe, expect, test } from '@jest/globals';
import {
  CLUSTER_SECRETS_KEY,
  GITOPS_CLUSTER_ABSENT_TTL_MS,
  apiGitOpsClusterLister,
  createClusterSecretReconciler,
  type GitOpsClusterLike,
} from '../../../src/controller/reconcilers/cluster-secret.js';
import { KubeApiError } from '../../../src/kube/client.js';
import type { ResourceKind } from '../../../src/kube/resources.js';
import { CONTROLLER_OWNED_LABEL, PULL_LABEL } from '../../../src/model/core/keys.js';
import { type KubeObject } from '../../../src/model/core/types.js';
import { World } from '../../support/world.js';
import { placementApplicationSet, placementDecision } from '../../support/appsets.js';

function pullAppSet(placement: string): KubeObject {
  return placementApplicationSet({
    name: `apps-${placement}`,
    placement,
    template: { metadata: { labels: { [PULL_LABEL]: 'true' } } },
  });
}

const decision = (placement: string, clusters: string[], namespace = 'argocd'): KubeObject =>
  placementDecision(placement, clusters, { namespace });

const acm = (
  placement: string,
  spec: Record<string, unknown> = { createBlankClusterSecrets: true },
  namespace = 'argocd',
): GitOpsClusterLike => ({
  apiVersion: 'apps.open-cluster-management.io/v1beta1',
  kind: 'GitOpsCluster',
  metadata: { name: `gitops-${placement}`, namespace },
  spec: {
    argoServer: { argoNamespace: 'argocd' },
    placementRef: { kind: 'Placement', apiVersion: 'cluster.open-cluster-management.io/v1beta1', name: placement },
    ...spec,
  } as GitOpsClusterLike['spec'],
});

const ocmAgent = (placement: string): GitOpsClusterLike => ({
  apiVersion: 'apps.open-cluster-management.io/v1alpha1',
  kind: 'GitOpsCluster',
  metadata: { name: `agents-${placement}`, namespace: 'argocd' },
  spec: { placementRef: { kind: 'Placement', name: placement }, argoCDAgentAddon: { mode: 'managed' } },
});

function world(gitOpsClusters: GitOpsClusterLike[] | undefined) {
  const w = new World();
  for (const name of ['spoke1', 'spoke2', 'spoke3']) w.addCluster(name);
  const reconciler = w.reconciler((context) =>
    createClusterSecretReconciler(context, { listGitOpsClusters: async () => gitOpsClusters }),
  );
  return { w, reconciler };
}

describe('cluster Secrets and GitOpsCluster', () => {
  test.each([
    ['an ACM v1beta1 GitOpsCluster with createBlankClusterSecrets', acm('agents')],
    [
      'an ACM v1beta1 GitOpsCluster with the agent enabled',
      acm('agents', { gitopsAddon: { enabled: true, argoCDAgent: { enabled: true, mode: 'managed' } } }),
    ],
    ['an OCM v1alpha1 GitOpsCluster with the agent add-on', ocmAgent('agents')],
  ])(
    'GIVEN %s serving spoke2 WHEN a pull placement also selects it THEN only the other clusters get a pullfleet Secret',
    async (_case, gitOpsCluster) => {
      const { w, reconciler } = world([gitOpsCluster]);
      w.put('ApplicationSet', pullAppSet('prod'));
      w.put('PlacementDecision', decision('prod', ['spoke1', 'spoke2']));
      w.put('PlacementDecision', decision('agents', ['spoke2']));
      await w.settle(reconciler, CLUSTER_SECRETS_KEY);
      expect(w.cache.keys('Secret').sort()).toStrictEqual(['argocd/spoke1-cluster-secret']);
    },
  );

  test('GIVEN a GitOpsCluster whose Placement decisions live in another namespace WHEN reconciled THEN it serves nothing there (it only reads its own namespace)', async () => {
    const { w, reconciler } = world([acm('agents', { createBlankClusterSecrets: true }, 'gitops')]);
    w.put('ApplicationSet', pullAppSet('agents'));
    w.put('PlacementDecision', decision('agents', ['spoke2']));
    await w.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(w.cache.keys('Secret')).toStrictEqual(['argocd/spoke2-cluster-secret']);
  });

  test('GIVEN no GitOpsCluster CRD on the hub WHEN reconciled THEN Secrets are written as before', async () => {
    const { w, reconciler } = world(undefined);
    w.put('ApplicationSet', pullAppSet('prod'));
    w.put('PlacementDecision', decision('prod', ['spoke1', 'spoke2']));
    await w.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(w.cache.keys('Secret').sort()).toStrictEqual([
      'argocd/spoke1-cluster-secret',
      'argocd/spoke2-cluster-secret',
    ]);
  });

  test('GIVEN a pullfleet Secret written before a GitOpsCluster took the cluster over WHEN reconciled THEN it is kept, unchanged, and nothing is deleted', async () => {
    const gitOpsClusters: GitOpsClusterLike[] = [];
    const w = new World();
    for (const name of ['spoke1', 'spoke2']) w.addCluster(name);
    const reconciler = w.reconciler((context) =>
      createClusterSecretReconciler(context, { listGitOpsClusters: async () => gitOpsClusters }),
    );
    w.put('ApplicationSet', pullAppSet('prod'));
    w.put('PlacementDecision', decision('prod', ['spoke2']));
    await w.settle(reconciler, CLUSTER_SECRETS_KEY);
    const before = w.get('Secret', 'argocd/spoke2-cluster-secret');
    expect(before?.metadata.labels?.[CONTROLLER_OWNED_LABEL]).toBe('true');
    gitOpsClusters.push(ocmAgent('prod'));
    const writes = w.writes.length;
    await w.settle(reconciler, CLUSTER_SECRETS_KEY);
    expect(w.writes.slice(writes)).toStrictEqual([]);
    expect(w.get('Secret', 'argocd/spoke2-cluster-secret')).toStrictEqual(before);
  });

  test('fails when GitOpsClusters cannot be read: no Secret is written and the reconcile is retried', async () => {
    const w = new World();
    w.addCluster('spoke1');
    const reconciler = w.reconciler((context) =>
      createClusterSecretReconciler(context, {
        listGitOpsClusters: async () => {
          throw new Error('request timed out after 30000 ms');
        },
      }),
    );
    w.put('ApplicationSet', pullAppSet('prod'));
    w.put('PlacementDecision', decision('prod', ['spoke1']));
    await expect(reconciler.reconcile(CLUSTER_SECRETS_KEY, { enqueuedAt: Date.now() })).rejects.toThrow(
      'request timed out after 30000 ms',
    );
    expect(w.cache.list('Secret')).toHaveLength(0);
  });
});

describe('reading GitOpsClusters from the API', () => {
  function fakeReader(answers: Record<string, () => GitOpsClusterLike[]>) {
    const calls: string[] = [];
    const timeouts: Array<number | undefined> = [];
    return {
      calls,
      timeouts,
      reader: {
        list: async <T extends KubeObject>(
          kind: ResourceKind,
          _scope?: unknown,
          _pageSize?: number,
          call?: { timeoutMs?: number },
        ) => {
          calls.push(kind.version);
          timeouts.push(call?.timeoutMs);
          const answer = answers[kind.version];
          if (!answer) throw new KubeApiError(404, 'the server could not find the requested resource');
          return { items: answer() as unknown as T[], resourceVersion: '1' };
        },
      },
    };
  }

  test('GIVEN an OCM hub (only v1alpha1 served) WHEN listed THEN both versions are asked, each with the timeout, and the served one answers', async () => {
    const fake = fakeReader({ v1alpha1: () => [ocmAgent('agents')] });
    const list = apiGitOpsClusterLister(fake.reader, 5000);
    expect(await list()).toStrictEqual([ocmAgent('agents')]);
    expect(fake.calls).toStrictEqual(['v1beta1', 'v1alpha1']);
    expect(fake.timeouts).toStrictEqual([5000, 5000]);
  });

  test('GIVEN a server that answers the unserved version with an empty list WHEN listed THEN the GitOpsClusters of the served one are still found', async () => {
    const fake = fakeReader({ v1beta1: () => [], v1alpha1: () => [ocmAgent('agents')] });
    expect(await apiGitOpsClusterLister(fake.reader, 5000)()).toStrictEqual([ocmAgent('agents')]);
  });

  test('GIVEN no GitOpsCluster CRD WHEN listed THEN undefined, and the API is asked again only after the TTL', async () => {
    const fake = fakeReader({});
    let clock = 1_000_000;
    const list = apiGitOpsClusterLister(fake.reader, 5000, () => clock);
    expect(await list()).toBeUndefined();
    expect(await list()).toBeUndefined();
    expect(fake.calls).toStrictEqual(['v1beta1', 'v1alpha1']);
    clock += GITOPS_CLUSTER_ABSENT_TTL_MS;
    expect(await list()).toBeUndefined();
    expect(fake.calls).toHaveLength(4);
  });

  test('fails when the controller may not list gitopsclusters (403): the message names the fix', async () => {
    const list = apiGitOpsClusterLister(
      {
        list: async () => {
          throw new KubeApiError(403, 'gitopsclusters.apps.open-cluster-management.io is forbidden');
        },
      },
      5000,
    );
    await expect(list()).rejects.toThrow(
      "apply this hub's controller install again (its ClusterRole grants get/list/watch on gitopsclusters)",
    );
  });
});
