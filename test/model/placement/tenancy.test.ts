import { describe, expect, test } from '@jest/globals';
import { SelectorOperator } from '../../../src/model/core/selectors.js';
import {
  tenancyProblem,
  type ManagedCluster,
  type ManagedClusterSet,
  type ManagedClusterSetBinding,
  type TenancyInventory,
} from '../../../src/model/placement/tenancy.js';

const cluster = (name: string, labels: Record<string, string> = {}): ManagedCluster => ({
  apiVersion: 'cluster.open-cluster-management.io/v1',
  kind: 'ManagedCluster',
  metadata: { name, labels },
});
const set = (name: string, spec?: ManagedClusterSet['spec']): ManagedClusterSet => ({
  apiVersion: 'cluster.open-cluster-management.io/v1beta2',
  kind: 'ManagedClusterSet',
  metadata: { name },
  ...(spec ? { spec } : {}),
});
const binding = (namespace: string, clusterSet: string): ManagedClusterSetBinding => ({
  apiVersion: 'cluster.open-cluster-management.io/v1beta2',
  kind: 'ManagedClusterSetBinding',
  metadata: { name: clusterSet, namespace },
  spec: { clusterSet },
});

const inventory: TenancyInventory = {
  clusters: new Map([
    ['prod-1', cluster('prod-1', { 'cluster.open-cluster-management.io/clusterset': 'prod', region: 'eu' })],
    ['dev-1', cluster('dev-1', { 'cluster.open-cluster-management.io/clusterset': 'dev', region: 'us' })],
    ['local-cluster', cluster('local-cluster')],
  ]),
  clusterSets: [
    set('prod'),
    set('dev', { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } }),
    set('eu', {
      clusterSelector: {
        selectorType: 'LabelSelector',
        labelSelector: { matchExpressions: [{ key: 'region', operator: SelectorOperator.IN, values: ['eu'] }] },
      },
    }),
    set('global', { clusterSelector: { selectorType: 'LabelSelector', labelSelector: {} } }),
  ],
  bindings: [
    binding('team-a', 'prod'),
    binding('team-eu', 'eu'),
    binding('platform', 'global'),
    binding('team-ghost', 'missing-set'),
  ],
};

describe('tenancyProblem', () => {
  test.each([
    ['team-a', 'prod-1', 'the exclusive-label set bound to the namespace contains it'],
    ['team-eu', 'prod-1', 'a label-selector set bound to the namespace selects it'],
    ['platform', 'dev-1', 'the global set (empty selector) contains every cluster'],
  ])('GIVEN namespace %s WHEN it targets %s THEN it is allowed (%s)', (namespace, target) => {
    expect(tenancyProblem(namespace, target, inventory)).toBeUndefined();
  });

  test.each([
    [
      'team-a',
      'dev-1',
      'namespace "team-a" may not deliver to ManagedCluster "dev-1": bound sets [prod] do not contain it',
    ],
    ['team-eu', 'dev-1', 'bound sets [eu] do not contain it'],
    [
      'nobody',
      'prod-1',
      'namespace "nobody" may not deliver to ManagedCluster "prod-1": no ManagedClusterSet is bound to it; add a ManagedClusterSetBinding in "nobody"',
    ],
    ['team-ghost', 'prod-1', 'bound sets [missing-set] do not contain it'],
    ['platform', 'local-cluster', 'local-cluster is the hub itself and never a pull-delivery target'],
    ['team-a', 'ghost', 'ManagedCluster "ghost" does not exist on this hub'],
  ])('fails when namespace %s targets %s', (namespace, target, message) => {
    expect(tenancyProblem(namespace, target, inventory)).toContain(message);
  });

  test('GIVEN relaxed tenancy WHEN any namespace targets an existing spoke THEN it is allowed, but never local-cluster or a missing cluster', () => {
    expect(tenancyProblem('nobody', 'dev-1', inventory, { relaxed: true })).toBeUndefined();
    expect(tenancyProblem('nobody', 'local-cluster', inventory, { relaxed: true })).toContain(
      'never a pull-delivery target',
    );
    expect(tenancyProblem('nobody', 'ghost', inventory, { relaxed: true })).toContain('does not exist');
  });
});

describe('the hub itself under another name', () => {
  test('GIVEN a ManagedCluster labelled local-cluster: "true" THEN it is never a pull target, even relaxed and in a bound set', () => {
    const hubSelf = cluster('hub-east', {
      'cluster.open-cluster-management.io/clusterset': 'prod',
      'local-cluster': 'true',
    });
    const withHub: TenancyInventory = { ...inventory, clusters: new Map([['hub-east', hubSelf]]) };
    for (const relaxed of [false, true])
      expect(tenancyProblem('team-a', 'hub-east', withHub, { relaxed })).toBe(
        'ManagedCluster "hub-east" is labelled local-cluster: "true", so it is the hub itself and never a pull-delivery target: choose a spoke cluster',
      );
    const notHub = cluster('hub-east', {
      'cluster.open-cluster-management.io/clusterset': 'prod',
      'local-cluster': 'false',
    });
    expect(
      tenancyProblem(
        'team-a',
        'hub-east',
        { ...inventory, clusters: new Map([['hub-east', notHub]]) },
        { relaxed: true },
      ),
    ).toBeUndefined();
  });
});
