/**
 * The error rule (docs/reference/errors.md): mistakes in how the construct tree is built throw at once;
 * everything about the fleet's content is reported together, as one FleetValidationError; a construct
 * with a problem renders nothing.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  Fleet,
  FleetValidationError,
  Hub,
  Inventory,
  PullApplication,
  Placement,
  routeOutput,
  Spoke,
} from '../../src/index.js';
import { smallFleet } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'guestbook' });

/** The FleetValidationError synth throws, or a failure when synth succeeds. */
function validationError(fleet: Fleet): FleetValidationError {
  try {
    fleet.renderObjects();
  } catch (error) {
    if (error instanceof FleetValidationError) return error;
    throw error;
  }
  throw new Error('expected the fleet to fail validation');
}

describe('problems of the fleet are reported together', () => {
  test('GIVEN bad controller settings and a bad spoke THEN one error lists every problem, and the install renders nothing', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { controller: { replicas: 0, logLevel: 'loud', imageTag: 'latest' } });
    new Spoke(hub, 'east', { labels: { tier: 'not valid' } });
    const error = validationError(fleet);
    expect(error.problems.map((p) => `[${p.path}] ${p.message}`)).toEqual(
      expect.arrayContaining([
        '[hub/Controller] imageTag "latest" makes the install unreproducible: pin a version such as "0.1.0"',
        '[hub/Controller] replicas 0 must be an integer >= 1: use 1 or more (the default is 2)',
        '[hub/Controller] logLevel "loud" must be one of trace, debug, info, warn, error: use one of them',
        expect.stringMatching(/^\[hub\/east\] spoke label tier="not valid"/),
      ]),
    );
    expect(hub.controller!.apiObjects).toStrictEqual([]);
  });

  test('GIVEN an inventory of another hub and a bad spoke THEN both are in one report, and nothing is declared from the inventory', () => {
    const { fleet, hub } = smallFleet();
    const inventory = Inventory.fromText(
      'apiVersion: pullfleet.io/v1alpha1\nkind: Inventory\nhub: other\nclusterSets: []\nclusters:\n  - name: north\n',
      'inventory/other.yaml',
    );
    expect(hub.addInventory(inventory)).toStrictEqual([]);
    new Spoke(hub, 'Bad_Name');
    const messages = validationError(fleet).problems.map((p) => `[${p.path}] ${p.message}`);
    expect(messages).toContain(
      '[hub] inventory inventory/other.yaml is for hub "other", not "hub": load inventory/hub.yaml (pullfleet inventory pull --hub hub)',
    );
    expect(messages.some((m) => m.startsWith('[hub/Bad_Name] spoke name "Bad_Name"'))).toBe(true);
    expect(hub.spokes.map((s) => s.name)).not.toContain('north');
  });

  test('GIVEN an app with a problem THEN none of its objects is checked or reported again: the construct renders nothing', () => {
    const { fleet, hub, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'Bad_NS', spokes: [east] });
    app.manifestWork(east).metadata.addLabel('team', 'not a valid label value!');
    const problems = validationError(fleet).problems;
    expect(problems.map((p) => p.path)).toStrictEqual(['hub/PullApplication:guestbook']);
    expect(problems[0].message).toContain('destinationNamespace "Bad_NS"');
  });
});

describe('mistakes in how the construct tree is built throw at once', () => {
  test('routeOutput with a file outside the hub folder throws, naming the construct path, the file and the fix', () => {
    const { hub } = smallFleet();
    expect(() => routeOutput(hub, '../etc/x.yaml')).toThrow(
      'hub: routeOutput: file "../etc/x.yaml" must be a relative path under hub/, bootstrap/ or spokes/ ending in .yaml, for example "hub/extras.yaml"',
    );
  });

  test('a construct outside a hub throws, naming itself, its scope and the call that works', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    expect(() => new Spoke(fleet, 'east')).toThrow(
      `Spoke "east" is made in the Fleet itself, which is not inside a Hub: give a Hub (or one of its constructs) as its scope, for example new Spoke(hub, 'east')`,
    );
    expect(() => Placement.fromPlacementName(fleet, 'Shared', 'shared')).toThrow(
      'Placement "Shared" is made in the Fleet itself, which is not inside a Hub',
    );
  });
});
