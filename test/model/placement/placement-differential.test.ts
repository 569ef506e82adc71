/**
 * The differences test/ocm/placement-differential.test.ts found between the offline placement evaluation
 * and OCM v1.3.1's placement controller, and what the offline evaluation now knows it cannot know. Each
 * case is one the real controller decided as asserted here.
 */
import { describe, expect, test } from '@jest/globals';
import { CLUSTERSET_LABEL } from '../../../src/model/core/keys.js';
import { inventoryFromHub } from '../../../src/model/placement/inventory.js';
import {
  evaluatePlacement,
  explainPlacement,
  placementMisconfiguration,
  TaintEffect,
  type InventoryCluster,
  type PlacementSpec,
} from '../../../src/model/placement/placement.js';
import { tenancyProblem } from '../../../src/model/placement/tenancy.js';

const spoke = (name: string, extra: Partial<InventoryCluster> = {}): InventoryCluster => ({
  name,
  labels: {},
  clusterSets: ['all'],
  ...extra,
});

describe('a LabelSelector ManagedClusterSet without a labelSelector', () => {
  // Seeds 11 and 19: OCM built the set's selector with LabelSelectorAsSelector(nil), which is Nothing.
  const sets = [
    { metadata: { name: 'ls-nil' }, spec: { clusterSelector: { selectorType: 'LabelSelector' } } },
    { metadata: { name: 'all' }, spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector: {} } } },
  ];
  const clusters = [{ metadata: { name: 'c1', labels: { env: 'prod' } } }];

  test('has no members in the inventory, so no placement selects through it', () => {
    const inventory = inventoryFromHub('hub', clusters, sets);
    expect(inventory.clusters[0].clusterSets).toStrictEqual(['all']);
    expect(evaluatePlacement({ clusterSets: ['ls-nil'] }, inventory.clusters, ['ls-nil', 'all'])).toStrictEqual([]);
    expect(evaluatePlacement({}, inventory.clusters, ['ls-nil', 'all'])).toStrictEqual(['c1']);
  });

  test('admits no cluster to a namespace it is bound to (tenancy)', () => {
    const problem = tenancyProblem('team', 'c1', {
      clusters: new Map([
        ['c1', { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', ...clusters[0] }],
      ]),
      clusterSets: [
        {
          apiVersion: 'cluster.open-cluster-management.io/v1beta2',
          kind: 'ManagedClusterSet',
          metadata: { name: 'ls-nil' },
          spec: { clusterSelector: { selectorType: 'LabelSelector' } },
        },
      ],
      bindings: [
        {
          apiVersion: 'cluster.open-cluster-management.io/v1beta2',
          kind: 'ManagedClusterSetBinding',
          metadata: { name: 'ls-nil', namespace: 'team' },
          spec: { clusterSet: 'ls-nil' },
        },
      ],
    });
    expect(problem).toContain('bound sets [ls-nil] do not contain it');
  });
});

describe('a spec OCM refuses (PlacementMisconfigured=True) selects nothing', () => {
  const inventory = [spoke('c1', { taints: [{ key: 'gpu', effect: TaintEffect.NO_SELECT }] }), spoke('c2')];
  test.each<[string, PlacementSpec]>([
    ['a toleration without a key and operator Equal', { tolerations: [{ value: 'true' }] }],
    [
      'a toleration with operator Exists and a value',
      { tolerations: [{ key: 'gpu', operator: 'Exists', value: 'x' }] },
    ],
    [
      'NotIn without values',
      {
        predicates: [
          { requiredClusterSelector: { labelSelector: { matchExpressions: [{ key: 'env', operator: 'NotIn' }] } } },
        ],
      },
    ],
    [
      'Exists with values in a claim selector',
      {
        predicates: [
          {
            requiredClusterSelector: {
              claimSelector: { matchExpressions: [{ key: 'p', operator: 'Exists', values: ['a'] }] },
            },
          },
        ],
      },
    ],
    [
      'a built-in prioritizer v1.3.1 does not have, weighted',
      { prioritizerPolicy: { configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Spread' } }] } },
    ],
  ])('%s', (_, spec) => {
    const result = explainPlacement(spec, inventory, ['all']);
    expect(result.misconfigured).toBeDefined();
    expect(result.selected).toStrictEqual([]);
  });

  test('an unknown prioritizer with weight 0 is not read, so the spec is fine', () => {
    const spec: PlacementSpec = {
      prioritizerPolicy: { configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Spread' }, weight: 0 }] },
    };
    expect(placementMisconfiguration(spec)).toBeUndefined();
    expect(evaluatePlacement(spec, inventory, ['all'])).toStrictEqual(['c2']);
  });
});

describe('numberOfClusters', () => {
  test('counts the hub itself, which pullfleet then does not deliver to', () => {
    const inventory = [spoke('local-cluster'), spoke('a', { labels: { 'local-cluster': 'true' } }), spoke('b')];
    const result = explainPlacement({ numberOfClusters: 2, prioritizerPolicy: { mode: 'Exact' } }, inventory, ['all']);
    expect(result.decisions).toStrictEqual(['a', 'b']);
    expect(result.selected).toStrictEqual(['b']);
    expect(
      evaluatePlacement(
        { numberOfClusters: 1 },
        [spoke('a-hub', { labels: { 'local-cluster': 'true' } }), spoke('b')],
        ['all'],
      ),
    ).toStrictEqual([]);
  });

  test('Steady keeps the clusters decided now ahead of new ones that sort first', () => {
    const inventory = [spoke('a-new'), spoke('b'), spoke('c')];
    const steady: PlacementSpec = {
      numberOfClusters: 2,
      prioritizerPolicy: {
        mode: 'Exact',
        configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Steady' } }],
      },
    };
    expect(evaluatePlacement(steady, inventory, ['all'], { currentDecisions: ['b', 'c'] })).toStrictEqual(['b', 'c']);
    expect(evaluatePlacement(steady, inventory, ['all'])).toStrictEqual(['a-new', 'b']);
    const negative: PlacementSpec = {
      ...steady,
      prioritizerPolicy: {
        mode: 'Exact',
        configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Steady' }, weight: -1 }],
      },
    };
    expect(evaluatePlacement(negative, inventory, ['all'], { currentDecisions: ['a-new', 'b'] })).toStrictEqual([
      'a-new',
      'c',
    ]);
    // Seeds 33, 64 and 80: every decision update re-schedules the Placement, and a negative Steady weight
    // then ranks the clusters just decided last, so the hub alternates between two choices.
    expect(explainPlacement(negative, inventory, ['all']).unknowns).toStrictEqual([
      expect.stringContaining('negative weight (-1)'),
    ]);
  });

  test('names what only the hub knows when prioritizers other than Steady choose', () => {
    const inventory = [spoke('a'), spoke('b'), spoke('c')];
    const defaults = explainPlacement({ numberOfClusters: 2 }, inventory, ['all']);
    expect(defaults.unknowns).toStrictEqual([expect.stringContaining('Balance')]);
    expect(defaults.feasible).toStrictEqual(['a', 'b', 'c']);
    expect(explainPlacement({ numberOfClusters: 3 }, inventory, ['all']).unknowns).toStrictEqual([]);
    expect(
      explainPlacement({ numberOfClusters: 2, prioritizerPolicy: { mode: 'Exact' } }, inventory, ['all']).unknowns,
    ).toStrictEqual([]);
    const addOn = explainPlacement(
      {
        numberOfClusters: 1,
        prioritizerPolicy: {
          mode: 'Exact',
          configurations: [
            { scoreCoordinate: { type: 'AddOn', addOn: { resourceName: 'demo', scoreName: 'cpu' } } },
            { scoreCoordinate: { type: 'BuiltIn', builtIn: 'ResourceAllocatableMemory' } },
          ],
        },
      },
      inventory,
      ['all'],
    );
    expect(addOn.unknowns).toStrictEqual([
      expect.stringContaining('add-on score demo/cpu'),
      expect.stringContaining('ResourceAllocatableMemory'),
    ]);
  });
});

describe('taints', () => {
  test('NoSelectIfNew keeps a cluster decided now, and repels it otherwise', () => {
    const inventory = [spoke('a', { taints: [{ key: 'drain', effect: TaintEffect.NO_SELECT_IF_NEW }] }), spoke('b')];
    expect(evaluatePlacement({}, inventory, ['all'], { currentDecisions: ['a'] })).toStrictEqual(['a', 'b']);
    expect(evaluatePlacement({}, inventory, ['all'])).toStrictEqual(['b']);
  });

  test('a toleration bounded by tolerationSeconds is an unknown: the inventory has no timeAdded', () => {
    const inventory = [spoke('a', { taints: [{ key: 'gpu', effect: TaintEffect.NO_SELECT }] })];
    const result = explainPlacement(
      { tolerations: [{ key: 'gpu', operator: 'Exists', tolerationSeconds: 60 }] },
      inventory,
      ['all'],
    );
    expect(result.selected).toStrictEqual(['a']);
    expect(result.unknowns).toStrictEqual([expect.stringContaining('60s after its taint gpu appeared')]);
  });
});

test('a claim selector reads only matchExpressions, as OCM’s ClusterClaimSelector has no matchLabels', () => {
  const spec = {
    predicates: [{ requiredClusterSelector: { claimSelector: { matchLabels: { p: 'x' } } } }],
  } as unknown as PlacementSpec;
  expect(evaluatePlacement(spec, [spoke('a', { claims: { p: 'y' } })], ['all'])).toStrictEqual(['a']);
  void CLUSTERSET_LABEL;
});
