/**
 * What the cluster-Secret duty writes (`planClusterSecrets`) and what it warns about a Secret's spoke-label mirrors
 * (`spokeLabelMirrorWarnings`): pure cases over hub objects, no reconciler.
 */
import { describe, expect, test } from '@jest/globals';
import { CONTROLLER_OWNED_LABEL, PULL_LABEL } from '../../../src/model/core/keys.js';
import { buildClusterSecret, mirrorSpokeLabels } from '../../../src/model/delivery/cluster-secret.js';
import {
  planClusterSecrets,
  spokeLabelMirrorWarnings,
  type ClusterSecretLike,
  type ClusterSecretWorld,
  type GitOpsClusterLike,
} from '../../../src/model/delivery/cluster-secret-plan.js';
import { placementApplicationSet, placementDecision } from '../../support/appsets.js';
import { managedCluster } from '../../support/world.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

const OWNED_LABELS = {
  'app.kubernetes.io/managed-by': 'pullfleet',
  'argocd.argoproj.io/secret-type': 'cluster',
  [CONTROLLER_OWNED_LABEL]: 'true',
};

/** The blank Secret of `cluster` as the controller applies it (data, not stringData). */
function ownedSecret(cluster: string, labels: Record<string, string> = OWNED_LABELS): ClusterSecretLike {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${cluster}-cluster-secret`, namespace: 'argocd', labels },
    type: 'Opaque',
    data: { name: b64(cluster), server: b64(`https://${cluster}-control-plane:6443`) },
  } as ClusterSecretLike;
}

/** A hub with a pull ApplicationSet on Placement `prod` deciding `decided`, and the ManagedClusters `clusters`. */
function hub(decided: string[], clusters: string[], more: Partial<ClusterSecretWorld> = {}): ClusterSecretWorld {
  return {
    argoNamespace: 'argocd',
    managedClusters: clusters.map((name) => managedCluster(name)),
    applicationSets: [
      placementApplicationSet({
        name: 'guestbook',
        placement: 'prod',
        template: { metadata: { labels: { [PULL_LABEL]: 'true' } } },
      }),
    ],
    decisions: [placementDecision('prod', decided)],
    gitOpsClusters: [],
    secrets: [],
    ...more,
  };
}

describe('planClusterSecrets', () => {
  test('GIVEN a decided cluster with no Secret WHEN planned THEN its blank Secret is applied, and decided clusters that do not exist get none', () => {
    const plan = planClusterSecrets(hub(['c1', 'gone'], ['c1']));
    expect(plan.steps).toStrictEqual([
      {
        kind: 'apply',
        cluster: 'c1',
        secret: ownedSecret('c1'),
        mirror: { labels: OWNED_LABELS, selectable: false, held: [], missing: [] },
      },
    ]);
    expect(plan.deletes).toStrictEqual([]);
    expect(plan.mirrors(new Map())).toStrictEqual([]);
  });

  test('GIVEN the hub itself is decided THEN it gets no Secret', () => {
    const plan = planClusterSecrets(hub(['local-cluster'], ['local-cluster']));
    expect(plan.steps).toStrictEqual([]);
  });

  test('GIVEN an up-to-date Secret of ours THEN nothing is applied and its mirrors need no patch', () => {
    const secret = ownedSecret('c1');
    const plan = planClusterSecrets(hub(['c1'], ['c1'], { secrets: [secret] }));
    expect(plan.steps).toStrictEqual([]);
    expect(plan.mirrors(new Map())).toStrictEqual([
      { cluster: 'c1', secret, mirror: { labels: OWNED_LABELS, selectable: false, held: [], missing: [] } },
    ]);
  });

  test('GIVEN a Secret of ours without a label of the blank Secret THEN it is applied again with them', () => {
    const stale = ownedSecret('c1', { [CONTROLLER_OWNED_LABEL]: 'true' });
    const plan = planClusterSecrets(hub(['c1'], ['c1'], { secrets: [stale] }));
    expect(plan.steps.map((step) => step.kind)).toStrictEqual(['apply']);
  });

  test('GIVEN a decided cluster THEN the Secret applied carries the metadata of the model blank Secret', () => {
    const blank = buildClusterSecret('c1', 'argocd', { [CONTROLLER_OWNED_LABEL]: 'true' });
    const [step] = planClusterSecrets(hub(['c1'], ['c1'])).steps;
    expect(step?.kind === 'apply' && step.secret.metadata).toStrictEqual(blank.metadata);
  });

  test('GIVEN a Secret of another name registering the cluster that is not ours THEN the cluster is left to it', () => {
    const foreign = { ...ownedSecret('c1', {}), metadata: { name: 'by-hand', namespace: 'argocd', labels: {} } };
    const plan = planClusterSecrets(hub(['c1'], ['c1'], { secrets: [foreign] }));
    expect(plan.steps).toStrictEqual([]);
    expect(plan.deletes).toStrictEqual([]);
  });

  test('GIVEN a Secret of the blank Secret name that is not ours and registers another cluster THEN it is left alone and said so', () => {
    const taken = { ...ownedSecret('other', {}), metadata: { name: 'c1-cluster-secret', namespace: 'argocd' } };
    const plan = planClusterSecrets(hub(['c1'], ['c1'], { secrets: [taken] }));
    expect(plan.steps).toStrictEqual([{ kind: 'name-taken', cluster: 'c1', secret: 'argocd/c1-cluster-secret' }]);
  });

  test('GIVEN a GitOpsCluster registering the placement THEN no Secret is written, and an old one of ours is kept', () => {
    const gitOpsCluster: GitOpsClusterLike = {
      apiVersion: 'apps.open-cluster-management.io/v1beta1',
      kind: 'GitOpsCluster',
      metadata: { name: 'gitops', namespace: 'argocd' },
      spec: { placementRef: { name: 'prod', kind: 'Placement' } },
    };
    const fresh = planClusterSecrets(hub(['c1'], ['c1'], { gitOpsClusters: [gitOpsCluster] }));
    expect(fresh.steps).toStrictEqual([]);
    const old = planClusterSecrets(
      hub(['c1'], ['c1'], { gitOpsClusters: [gitOpsCluster], secrets: [ownedSecret('c1')] }),
    );
    expect(old.steps).toStrictEqual([{ kind: 'kept', cluster: 'c1', gitOpsCluster: 'argocd/gitops' }]);
    expect(old.deletes).toStrictEqual([]);
  });

  test('GIVEN Secrets of ours whose ManagedCluster is gone THEN only those are deleted, and other namespaces are ignored', () => {
    const gone = ownedSecret('gone');
    const elsewhere = { ...ownedSecret('gone2'), metadata: { ...ownedSecret('gone2').metadata, namespace: 'other' } };
    const notOurs = ownedSecret('gone3', {});
    const plan = planClusterSecrets(hub([], ['c1'], { secrets: [gone, elsewhere, notOurs, ownedSecret('c1')] }));
    expect(plan.deletes).toStrictEqual([{ cluster: 'gone', secret: gone }]);
  });

  test('GIVEN a Secret applied in the run WHEN its mirrors are planned THEN they are judged on the labels the server stored', () => {
    const secret = ownedSecret('c1', { [CONTROLLER_OWNED_LABEL]: 'true' });
    const plan = planClusterSecrets(hub(['c1'], ['c1'], { secrets: [secret] }));
    const [step] = plan.mirrors(new Map([[secret.metadata.name, { ...OWNED_LABELS, 'spoke.pullfleet.io/old': 'x' }]]));
    expect(step?.mirror.patch).toStrictEqual({ 'spoke.pullfleet.io/old': null });
  });
});

describe('spokeLabelMirrorWarnings', () => {
  const base = { cluster: 'c1', secretLabels: OWNED_LABELS, readKeys: ['region'] };

  test('GIVEN mirrors in line THEN there is nothing to warn about', () => {
    const mirror = mirrorSpokeLabels({ ...base, clusterLabels: { region: 'eu' }, requiredKeys: ['region'] });
    expect(spokeLabelMirrorWarnings(mirror)).toStrictEqual({ warnings: [] });
  });

  test('GIVEN a selectable Secret whose cluster lost a label THEN the held mirror is warned about with its key', () => {
    const mirror = mirrorSpokeLabels({
      ...base,
      secretLabels: { ...OWNED_LABELS, 'pullfleet.io/cluster': 'c1', 'spoke.pullfleet.io/region': 'eu' },
      clusterLabels: {},
      requiredKeys: ['region'],
    });
    const { state, warnings } = spokeLabelMirrorWarnings(mirror);
    expect(state).toBeDefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.labels).toStrictEqual(['region']);
    expect(warnings[0]?.message).toMatch(/keep the last value/);
  });

  test('GIVEN a cluster missing a label an ApplicationSet deciding it reads THEN the Secret is not made selectable and that is said', () => {
    const mirror = mirrorSpokeLabels({ ...base, clusterLabels: {}, requiredKeys: ['region'] });
    const { state, warnings } = spokeLabelMirrorWarnings(mirror);
    expect(warnings.map((warning) => warning.labels)).toStrictEqual([['region']]);
    expect(warnings[0]?.message).toMatch(/not made selectable/);
    // The same mirrors give the same state (so the reconciler logs them once).
    expect(spokeLabelMirrorWarnings(mirror).state).toBe(state);
  });

  test('GIVEN a cluster name that is no label value THEN the problem is warned about without labels', () => {
    const name = 'x'.repeat(64);
    const mirror = mirrorSpokeLabels({
      ...base,
      cluster: name,
      clusterLabels: { region: 'eu' },
      requiredKeys: ['region'],
    });
    const { warnings } = spokeLabelMirrorWarnings(mirror);
    expect(warnings).toStrictEqual([{ message: mirror.problem }]);
  });
});
