/**
 * The Placement an OCM GitOpsCluster reads is rendered as that controller leaves it: with the
 * `unreachable` and `unavailable` tolerations it appends when a toleration of the same key and operator is
 * missing. The ACM GitOpsCluster adds none, and a Placement no OCM GitOpsCluster reads keeps what it declares.
 */
import { describe, expect, test } from '@jest/globals';
import { GitOpsCluster, HubFlavor, Placement, TaintEffect, TolerationOperator } from '../../src/constructs/index.js';
import { testFleet } from '../support/fleet-builder.js';
import type { Toleration } from '../../src/index.js';
import { schemaFindings } from '../../src/validate/schema.js';
import { find } from './helpers.js';

const UNREACHABLE = 'cluster.open-cluster-management.io/unreachable';
const UNAVAILABLE = 'cluster.open-cluster-management.io/unavailable';

function hubOf(flavor: HubFlavor, tolerations?: Toleration[]) {
  const { fleet, hub, sets } = testFleet({
    hub: { flavor },
    sets: ['edge'],
    spokes: [
      'e1',
      { name: 'e2', taints: [{ key: UNREACHABLE, effect: TaintEffect.NO_SELECT }] },
      { name: 'e3', taints: [{ key: UNAVAILABLE, effect: TaintEffect.NO_SELECT }] },
    ],
  });
  const placement = new Placement(hub, 'edge', { clusterSets: [sets.edge], ...(tolerations ? { tolerations } : {}) });
  return { fleet, hub, placement };
}

const names = (placement: Placement) => placement.selectedSpokes().map((s) => s.name);

describe('the Placement of an OCM GitOpsCluster', () => {
  test('GIVEN no tolerations THEN it renders both, in the controller order, and selects the unreachable and unavailable spokes', () => {
    const { fleet, hub, placement } = hubOf(HubFlavor.OCM);
    expect(names(placement)).toStrictEqual(['e1']);
    GitOpsCluster.ocm(hub, 'agents', { placement });
    const rendered = find(fleet, 'Placement', 'edge');
    expect((rendered.spec as { tolerations: unknown }).tolerations).toStrictEqual([
      { key: UNREACHABLE, operator: 'Exists' },
      { key: UNAVAILABLE, operator: 'Exists' },
    ]);
    expect(placement.spec.tolerations).toStrictEqual([
      { key: UNREACHABLE, operator: TolerationOperator.EXISTS },
      { key: UNAVAILABLE, operator: TolerationOperator.EXISTS },
    ]);
    expect(names(placement)).toStrictEqual(['e1', 'e2', 'e3']);
    expect(schemaFindings(rendered as never)).toStrictEqual([]);
  });

  test('GIVEN declared tolerations THEN they come first, one of the same key and operator counts as present whatever its effect or seconds, and one with another operator does not', () => {
    const declared: Toleration[] = [
      { key: 'gpu', operator: TolerationOperator.EXISTS },
      { key: UNREACHABLE, operator: TolerationOperator.EXISTS, tolerationSeconds: 300 },
      { key: UNAVAILABLE, value: 'x' },
    ];
    const { fleet, hub, placement } = hubOf(HubFlavor.OCM, declared);
    GitOpsCluster.ocm(hub, 'agents', { placement });
    expect((find(fleet, 'Placement', 'edge').spec as { tolerations: unknown }).tolerations).toStrictEqual([
      { key: 'gpu', operator: 'Exists' },
      { key: UNREACHABLE, operator: 'Exists', tolerationSeconds: 300 },
      { key: UNAVAILABLE, value: 'x' },
      { key: UNAVAILABLE, operator: 'Exists' },
    ]);
  });

  test('GIVEN both already declared THEN the rendered Placement is what was declared', () => {
    const declared: Toleration[] = [
      { key: UNAVAILABLE, operator: TolerationOperator.EXISTS },
      { key: UNREACHABLE, operator: TolerationOperator.EXISTS },
    ];
    const { fleet, hub, placement } = hubOf(HubFlavor.OCM, declared);
    GitOpsCluster.ocm(hub, 'agents', { placement });
    expect((find(fleet, 'Placement', 'edge').spec as { tolerations: unknown }).tolerations).toStrictEqual([
      { key: UNAVAILABLE, operator: 'Exists' },
      { key: UNREACHABLE, operator: 'Exists' },
    ]);
  });

  test('GIVEN an ACM GitOpsCluster, or none, THEN the Placement keeps only what it declares', () => {
    for (const withAcm of [true, false]) {
      const { fleet, hub, placement } = hubOf(HubFlavor.ACM);
      if (withAcm) GitOpsCluster.acm(hub, 'agents', { placement });
      expect(find(fleet, 'Placement', 'edge').spec).not.toHaveProperty('tolerations');
      expect(names(placement)).toStrictEqual(['e1']);
    }
  });
});
