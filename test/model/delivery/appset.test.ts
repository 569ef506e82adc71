import { describe, expect, test } from '@jest/globals';
import {
  buildGeneratorConfigMap,
  buildPlacementReaderRole,
  buildPullApplicationSet,
} from '../../../src/model/delivery/appset.js';
import {
  buildStaticHubApplication,
  staticHubApplicationName,
  type AppDefinition,
} from '../../../src/model/delivery/hub-application.js';

const def: AppDefinition = {
  name: 'podinfo',
  project: 'default',
  sources: [{ repoURL: 'https://stefanprodan.github.io/podinfo', chart: 'podinfo', targetRevision: '6.7.1' }],
  destinationNamespace: 'podinfo',
};

describe('ApplicationSet for pull', () => {
  test('GIVEN an app and a placement THEN the generator follows the placement and the template carries the pull keys', () => {
    const set = buildPullApplicationSet(def, {
      name: 'podinfo',
      namespace: 'argocd',
      placement: 'all-prod',
      requeueAfterSeconds: 180,
      constructPath: 'hub/podinfo/ApplicationSet',
    });
    expect(set.spec.generators).toStrictEqual([
      {
        clusterDecisionResource: {
          configMapRef: 'ocm-placement-generator',
          labelSelector: { matchLabels: { 'cluster.open-cluster-management.io/placement': 'all-prod' } },
          requeueAfterSeconds: 180,
        },
      },
    ]);
    expect(set.spec.template).toStrictEqual({
      metadata: {
        name: '{{name}}-podinfo',
        labels: {
          'app.kubernetes.io/managed-by': 'pullfleet',
          'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'true',
          'pullfleet.io/app': 'podinfo',
          'pullfleet.io/delivery-model': 'basic',
        },
        annotations: {
          'apps.open-cluster-management.io/ocm-managed-cluster': '{{name}}',
          'argocd.argoproj.io/skip-reconcile': 'true',
          'pullfleet.io/delivery': 'dynamic',
        },
        // Kept by the applicationset-controller on every update, so the controller need not add it.
        finalizers: ['pullfleet.io/manifestwork-cleanup'],
      },
      spec: {
        project: 'default',
        source: { repoURL: 'https://stefanprodan.github.io/podinfo', chart: 'podinfo', targetRevision: '6.7.1' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'podinfo' },
      },
    });
    // The applicationset-controller keeps these annotations the controller writes on generated Applications.
    expect(set.spec.preservedFields).toStrictEqual({
      annotations: ['pullfleet.io/forwarded-operation', 'pullfleet.io/legacy-controller-seen'],
    });
  });

  test('the generator ConfigMap points at placement decisions', () => {
    expect(buildGeneratorConfigMap('argocd').data).toStrictEqual({
      apiVersion: 'cluster.open-cluster-management.io/v1beta1',
      kind: 'placementdecisions',
      matchKey: 'clusterName',
      statusListKey: 'decisions',
    });
  });

  test('the applicationset-controller may only read placements and decisions', () => {
    expect(buildPlacementReaderRole('argocd').rules).toStrictEqual([
      {
        apiGroups: ['cluster.open-cluster-management.io'],
        resources: ['placementdecisions', 'placements'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
  });
});

describe('static hub Application', () => {
  test('carries the pull label, cluster, skip-reconcile, static delivery and provenance', () => {
    const app = buildStaticHubApplication(
      { ...def, pruneOnDelete: true },
      { cluster: 'east', namespace: 'argocd', constructPath: 'hub/podinfo/east' },
    );
    expect(app.metadata).toStrictEqual({
      name: 'podinfo-east',
      namespace: 'argocd',
      labels: {
        'app.kubernetes.io/managed-by': 'pullfleet',
        'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'true',
        'pullfleet.io/app': 'podinfo',
        'pullfleet.io/delivery-model': 'basic',
      },
      annotations: {
        'apps.open-cluster-management.io/ocm-managed-cluster': 'east',
        'argocd.argoproj.io/skip-reconcile': 'true',
        'pullfleet.io/construct-path': 'hub/podinfo/east',
        'pullfleet.io/delivery': 'static',
      },
      finalizers: ['resources-finalizer.argocd.argoproj.io'],
    });
  });

  test('long app and cluster names fit 63 characters with a hash', () => {
    const name = staticHubApplicationName('a'.repeat(40), 'b'.repeat(40));
    expect(name).toHaveLength(63);
    expect(staticHubApplicationName('a'.repeat(40), 'c'.repeat(40))).not.toBe(name);
  });
});
