/**
 * A waved static app's hub Applications are wrapped into works by the controller, which applies OCM's tenancy
 * rule: a spoke in no cluster set bound to the Argo CD namespace is refused, and the rollout stops at its wave.
 * Synth foretells it with a warning naming the spokes and the fixes (found by the plan oracle, seed 14).
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  Rollout,
  Spoke,
  type HubProps,
} from '../../src/constructs/index.js';

function fleetWith(options: {
  waved?: boolean;
  bindOut?: 'none' | 'existing' | 'declared';
  hub?: Partial<HubProps>;
}): Fleet {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub', options.hub ?? {});
  const blue = new ClusterSet(hub, 'blue');
  new Placement(hub, 'all', { clusterSets: [blue] }); // binds blue to argocd
  const c1 = new Spoke(hub, 'c1', { clusterSet: blue, labels: { ring: 'canary' } });
  const c2 = new Spoke(hub, 'c2', { clusterSet: blue, labels: { ring: 'main' } });
  const outside = new Spoke(hub, 'c3', { labels: { ring: 'main' } });
  if (options.bindOut === 'existing')
    ClusterSet.fromClusterSetName(hub, 'Global', 'global', { existingBindings: ['argocd'] });
  if (options.bindOut === 'declared') ClusterSet.fromClusterSetName(hub, 'Global', 'global').bindTo('argocd');
  new PullApplication(hub, 'web', {
    source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: 'v1' }),
    destinationNamespace: 'web',
    spokes: [c1, c2, outside],
    ...(options.waved === false
      ? {}
      : {
          rollout: Rollout.waves([
            { name: 'canary', labels: { ring: 'canary' } },
            { name: 'rest', rest: true },
          ]),
        }),
  });
  return fleet;
}

const tenancyWarnings = (fleet: Fleet) =>
  fleet
    .warnings()
    .map((w) => w.message)
    .filter((m) => m.includes('no cluster set bound'));

describe('a waved static app on a spoke outside the bound cluster sets', () => {
  test('synth warns, naming the app, the spoke, the namespace and the fixes', () => {
    const warnings = tenancyWarnings(fleetWith({}));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('rollout of app "web"');
    expect(warnings[0]).toContain('spoke "c3"');
    expect(warnings[0]).not.toContain('"c1"');
    expect(warnings[0]).toContain('namespace "argocd"');
    expect(warnings[0]).toContain("existingBindings: ['argocd']");
    expect(warnings[0]).toContain('relaxTenancy: true');
  });

  test('a binding the fleet declares or knows the hub has, or relaxed tenancy, silences it', () => {
    expect(tenancyWarnings(fleetWith({ bindOut: 'existing' }))).toEqual([]);
    expect(tenancyWarnings(fleetWith({ bindOut: 'declared' }))).toEqual([]);
    expect(tenancyWarnings(fleetWith({ hub: { controller: { relaxTenancy: true } } }))).toEqual([]);
  });

  test('an app without waves is delivered by synth itself, and gets no warning', () => {
    expect(tenancyWarnings(fleetWith({ waved: false }))).toEqual([]);
  });
});
