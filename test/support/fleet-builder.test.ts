/**
 * The test fleet builder renders exactly what the same constructs declared by hand render, and says which
 * name it does not know.
 */
import { describe, expect, test } from '@jest/globals';
import { ClusterSet, Fleet, Hub, HubFlavor, Placement, Spoke, TaintEffect } from '../../src/constructs/index.js';
import { NEVER_WRITTEN, testFleet } from './fleet-builder.js';

describe('testFleet', () => {
  test('GIVEN sets and spokes THEN the fleet renders byte for byte what hand-declared constructs render', () => {
    const byHand = new Fleet({ outdir: NEVER_WRITTEN });
    const hub = new Hub(byHand, 'hub', { flavor: HubFlavor.ACM });
    const edge = new ClusterSet(hub, 'edge');
    const core = new ClusterSet(hub, 'core', { matchLabels: { tier: 'core' } });
    new Spoke(hub, 'e1', { clusterSet: edge });
    new Spoke(hub, 'e2', {
      clusterSet: edge,
      labels: { ring: 'canary' },
      taints: [{ key: 'maintenance', effect: TaintEffect.NO_SELECT }],
    });
    new Spoke(hub, 'c1', { labels: { tier: 'core' }, openshift: true });
    new Placement(hub, 'everywhere', { clusterSets: [edge, core] });

    const built = testFleet({
      hub: { flavor: HubFlavor.ACM },
      sets: ['edge', { name: 'core', props: { matchLabels: { tier: 'core' } } }],
      spokes: [
        'e1',
        { name: 'e2', labels: { ring: 'canary' }, taints: [{ key: 'maintenance', effect: TaintEffect.NO_SELECT }] },
        { name: 'c1', set: null, labels: { tier: 'core' }, openshift: true },
      ],
    });
    new Placement(built.hub, 'everywhere', { clusterSets: [built.sets.edge, built.sets.core] });

    expect(built.fleet.renderFiles()).toStrictEqual(byHand.renderFiles());
    expect(built.spokes.map((s) => s.name)).toStrictEqual(['e1', 'e2', 'c1']);
    expect(built.spoke('c1')).toBe(built.spokes[2]);
  });

  test('GIVEN a spoke naming a set the spec does not declare THEN it fails naming the spoke and the set', () => {
    expect(() => testFleet({ sets: ['prod'], spokes: [{ name: 'east', set: 'pord' }] })).toThrow(
      'testFleet: spoke east names set pord, which the spec does not declare',
    );
  });

  test('GIVEN a name no spoke has THEN spoke() fails listing the declared spokes', () => {
    expect(() => testFleet({ spokes: ['east', 'west'] }).spoke('north')).toThrow(
      'testFleet: no spoke north; the spec declares east, west',
    );
  });
});
