import { describe, expect, test } from '@jest/globals';
import { matchesSelector, SelectorOperator } from '../../../src/model/core/selectors.js';
import {
  evaluatePlacement,
  TaintEffect,
  TolerationOperator,
  type InventoryCluster,
  type PlacementSpec,
} from '../../../src/model/placement/placement.js';

const inventory: InventoryCluster[] = [
  {
    name: 'west',
    labels: { env: 'prod', region: 'us-west' },
    claims: { 'platform.open-cluster-management.io': 'AWS' },
    clusterSets: ['prod'],
  },
  {
    name: 'east',
    labels: { env: 'prod', region: 'us-east' },
    claims: { 'platform.open-cluster-management.io': 'GCP' },
    clusterSets: ['prod'],
  },
  { name: 'dev', labels: { env: 'dev' }, clusterSets: ['dev'] },
  {
    name: 'tainted',
    labels: { env: 'prod' },
    clusterSets: ['prod'],
    taints: [{ key: 'maintenance', effect: TaintEffect.NO_SELECT }],
  },
  { name: 'local-cluster', labels: { env: 'prod' }, clusterSets: ['prod'] },
];

describe('matchesSelector', () => {
  test('matchLabels and every expression operator', () => {
    const labels = { env: 'prod', tier: 'web' };
    expect(matchesSelector({ matchLabels: { env: 'prod' } }, labels)).toBe(true);
    expect(matchesSelector({ matchLabels: { env: 'dev' } }, labels)).toBe(false);
    expect(
      matchesSelector({ matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] }, labels),
    ).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, labels)).toBe(
      false,
    );
    expect(matchesSelector({ matchExpressions: [{ key: 'gpu', operator: 'NotIn', values: ['x'] }] }, labels)).toBe(
      true,
    );
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels)).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels)).toBe(false);
    expect(matchesSelector(undefined, labels)).toBe(true);
  });
});

describe('evaluatePlacement', () => {
  test('GIVEN no predicates THEN every untainted cluster of the bound sets is selected, sorted, without local-cluster', () => {
    expect(evaluatePlacement({}, inventory, ['prod'])).toStrictEqual(['east', 'west']);
  });

  test('only sets bound to the namespace count, even when listed', () => {
    expect(evaluatePlacement({ clusterSets: ['prod', 'dev'] }, inventory, ['dev'])).toStrictEqual(['dev']);
    expect(evaluatePlacement({ clusterSets: ['prod'] }, inventory, [])).toStrictEqual([]);
  });

  test('predicates are ORed; label and claim selectors inside one predicate are ANDed', () => {
    const spec: PlacementSpec = {
      predicates: [
        { requiredClusterSelector: { labelSelector: { matchLabels: { region: 'us-east' } } } },
        { requiredClusterSelector: { labelSelector: { matchLabels: { env: 'dev' } } } },
      ],
    };
    expect(evaluatePlacement(spec, inventory, ['prod', 'dev'])).toStrictEqual(['dev', 'east']);
    const anded = {
      predicates: [
        {
          requiredClusterSelector: {
            labelSelector: { matchLabels: { env: 'prod' } },
            claimSelector: {
              matchExpressions: [
                { key: 'platform.open-cluster-management.io', operator: SelectorOperator.IN, values: ['AWS'] },
              ],
            },
          },
        },
      ],
    };
    expect(evaluatePlacement(anded, inventory, ['prod'])).toStrictEqual(['west']);
  });

  test('NoSelect taints exclude a cluster unless tolerated', () => {
    expect(
      evaluatePlacement({ tolerations: [{ key: 'maintenance', operator: TolerationOperator.EXISTS }] }, inventory, [
        'prod',
      ]),
    ).toStrictEqual(['east', 'tainted', 'west']);
    expect(
      evaluatePlacement(
        { tolerations: [{ key: 'maintenance', operator: TolerationOperator.EQUAL, value: 'other' }] },
        inventory,
        ['prod'],
      ),
    ).toStrictEqual(['east', 'west']);
  });

  test('numberOfClusters keeps the first clusters by name', () => {
    expect(evaluatePlacement({ numberOfClusters: 1 }, inventory, ['prod'])).toStrictEqual(['east']);
  });
});
