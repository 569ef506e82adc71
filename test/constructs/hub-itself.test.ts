/**
 * ACM can import the hub under another name and tells it by the label `local-cluster: "true"`. Such a spoke
 * is the hub itself: placements never select it offline, a static app refuses it, and it gets neither a
 * cluster Secret nor a bootstrap, as `local-cluster` by name.
 */
import { describe, expect, test } from '@jest/globals';
import { AppSource, Placement, PullApplication, Spoke } from '../../src/constructs/index.js';
import { allObjects, smallFleet, synthError } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });

describe('a spoke labelled local-cluster: "true"', () => {
  test('GIVEN the hub imported as hub-east THEN a placement of its set leaves it out, and nothing is rendered for it', () => {
    const { fleet, hub, prod } = smallFleet();
    new Spoke(hub, 'hub-east', { clusterSet: prod, labels: { 'local-cluster': 'true' } });
    const placement = new Placement(hub, 'prod', { clusterSets: [prod] });
    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['east', 'west']);
    const mentions = allObjects(fleet).filter(
      ({ file, obj }) => file.includes('hub-east') || obj.metadata.name.includes('hub-east'),
    );
    expect(mentions).toStrictEqual([]);
  });

  test('fails when a static app names it, saying it is the hub itself', () => {
    const { fleet, hub, prod } = smallFleet();
    const self = new Spoke(hub, 'hub-east', { clusterSet: prod, labels: { 'local-cluster': 'true' } });
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [self] });
    expect(synthError(fleet)).toContain(
      'app "web" is delivered to "hub-east", which is labelled local-cluster: "true" and so is the hub itself, never a pull-delivery target: remove it from the app\'s spokes',
    );
  });
});
