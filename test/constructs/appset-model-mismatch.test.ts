/**
 * An ApplicationSet takes the delivery model of the GitOpsCluster on its own placement. When its placement
 * also selects spokes that another GitOpsCluster puts on an agent model, it still delivers to them its own
 * way: synth says so, naming the spokes, their model and GitOpsCluster, and the fix.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  HubFlavor,
  Placement,
  PullApplicationSet,
} from '../../src/constructs/index.js';
import { testFleet } from '../support/fleet-builder.js';
import { find } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });

function fleetWithAgents() {
  const { fleet, hub, sets } = testFleet({
    hub: { flavor: HubFlavor.OCM },
    sets: ['all'],
    spokes: ['b1', 'e1', 'e2'].map((name) => ({ name, labels: { tier: name[0] } })),
  });
  const all = sets.all;
  const agents = new Placement(hub, 'agents', { predicates: [{ labels: { tier: 'e' } }] });
  GitOpsCluster.ocm(hub, 'edge', { placement: agents, model: DeliveryModel.AGENT_MANAGED });
  return { fleet, hub, all, agents };
}

const messages = (fleet: Fleet) => fleet.warnings().map((w) => `[${w.path}] ${w.message}`);

describe('an ApplicationSet whose placement is not its spokes’ GitOpsCluster placement', () => {
  test('GIVEN a placement of every spoke, two of them agent-managed through another placement THEN synth warns once, naming both spokes, their GitOpsCluster and the fix, and renders the basic ApplicationSet it says', () => {
    const { fleet, hub, all } = fleetWithAgents();
    const everyone = new Placement(hub, 'everyone', { clusterSets: [all] });
    new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement: everyone });
    const found = messages(fleet).filter((m) => m.includes('an ApplicationSet takes the model'));
    expect(found).toStrictEqual([
      '[hub/PullApplicationSet:web] placement "everyone" selects 2 spokes on the agent-managed model (GitOpsCluster hub/GitOpsCluster:edge): e1, e2; an ApplicationSet takes the model of the GitOpsCluster on its own placement (basic here), so it delivers to them the basic way, not the agent-managed way: give the ApplicationSet the placement of hub/GitOpsCluster:edge, or leave those spokes out of placement "everyone"',
    ]);
    const appset = find(fleet, 'ApplicationSet', 'web');
    expect(JSON.stringify(appset)).toContain('"pullfleet.io/delivery-model":"basic"');
  });

  test('GIVEN the ApplicationSet on the GitOpsCluster placement, or on a placement of basic spokes only, THEN there is no such warning', () => {
    const { fleet, hub, agents } = fleetWithAgents();
    const basic = new Placement(hub, 'branches', { predicates: [{ labels: { tier: 'b' } }] });
    new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement: agents });
    new PullApplicationSet(hub, 'api', { source, destinationNamespace: 'api', placement: basic });
    expect(messages(fleet).filter((m) => m.includes('an ApplicationSet takes the model'))).toStrictEqual([]);
  });
});
