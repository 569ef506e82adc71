/**
 * Construct ids are a public contract (they are the `pullfleet.io/construct-path` of every object): they
 * depend on a construct's kind and name only, never on what was declared before it.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'prod' });

/** One hub where a ClusterSet, a Placement, a GitOpsCluster and two apps are all called `prod`, declared in `order`. */
function fleetIn(order: readonly string[]): { fleet: Fleet; paths: Record<string, string> } {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written', onProgress: () => undefined });
  const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
  const made: Record<string, { node: { path: string } }> = {};
  const set = () => (made.ClusterSet ??= new ClusterSet(hub, 'prod')) as ClusterSet;
  const placement = () => (made.Placement ??= new Placement(hub, 'prod', { clusterSets: [set()] })) as Placement;
  const declare: Record<string, () => void> = {
    ClusterSet: () => set(),
    Spoke: () => (made.Spoke ??= new Spoke(hub, 'prod', { clusterSet: set() })),
    Placement: () => placement(),
    GitOpsCluster: () =>
      (made.GitOpsCluster ??= GitOpsCluster.ocm(hub, 'prod', {
        placement: placement(),
        model: DeliveryModel.AGENT_MANAGED,
      })),
    PullApplication: () =>
      (made.PullApplication ??= new PullApplication(hub, 'prod', {
        source,
        destinationNamespace: 'prod',
        placement: placement(),
      })),
    PullApplicationSet: () =>
      (made.PullApplicationSet ??= new PullApplicationSet(hub, 'prod', {
        name: 'prod-set',
        source,
        destinationNamespace: 'prod-set',
        placement: placement(),
      })),
  };
  for (const kind of order) declare[kind]();
  return { fleet, paths: Object.fromEntries(Object.entries(made).map(([kind, c]) => [kind, c.node.path])) };
}

describe('construct ids', () => {
  test('GIVEN six constructs called prod WHEN declared in opposite orders THEN the construct paths and every rendered file are byte-identical', () => {
    const forward = fleetIn([
      'ClusterSet',
      'Spoke',
      'Placement',
      'GitOpsCluster',
      'PullApplication',
      'PullApplicationSet',
    ]);
    const backward = fleetIn([
      'PullApplicationSet',
      'PullApplication',
      'GitOpsCluster',
      'Placement',
      'Spoke',
      'ClusterSet',
    ]);
    expect(forward.fleet.problems()).toStrictEqual([]);
    expect(backward.fleet.problems()).toStrictEqual([]);
    expect(forward.paths).toStrictEqual({
      ClusterSet: 'hub/ClusterSet:prod',
      Spoke: 'hub/prod',
      Placement: 'hub/Placement:prod',
      GitOpsCluster: 'hub/GitOpsCluster:prod',
      PullApplication: 'hub/PullApplication:prod',
      PullApplicationSet: 'hub/PullApplicationSet:prod',
    });
    expect(backward.paths).toStrictEqual(forward.paths);
    expect(backward.fleet.renderFiles()).toStrictEqual(forward.fleet.renderFiles());
  });

  test('GIVEN a Placement declared before the ClusterSet of its name THEN its path is the same as when declared after', () => {
    const placementFirst = new Fleet({ outdir: '/nonexistent/never-written' });
    const hubA = new Hub(placementFirst, 'hub', { controller: { enabled: false } });
    const a = new Placement(hubA, 'prod');
    new ClusterSet(hubA, 'prod');
    const setFirst = new Fleet({ outdir: '/nonexistent/never-written' });
    const hubB = new Hub(setFirst, 'hub', { controller: { enabled: false } });
    new ClusterSet(hubB, 'prod');
    const b = new Placement(hubB, 'prod');
    expect([a.node.path, b.node.path]).toStrictEqual(['hub/Placement:prod', 'hub/Placement:prod']);
  });

  test('fails when two constructs of one kind share a name, whatever else shares it', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
    new ClusterSet(hub, 'prod');
    new Placement(hub, 'prod');
    new Placement(hub, 'prod');
    expect(fleet.problems().map((p) => `[${p.path}] ${p.message}`)).toContain(
      '[hub/Placement:prod] "hub" already has a Placement with the id "prod" (hub/Placement:prod): give each Placement its own name',
    );
  });
});
