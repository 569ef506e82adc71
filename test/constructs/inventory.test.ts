import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Inventory,
  Placement,
  PullApplication,
  Spoke,
} from '../../src/constructs/index.js';
import { inventoryFromHub, renderInventory } from '../../src/model/placement/inventory.js';
import { allObjects, synthError } from './helpers.js';
import { smallHub } from '../model/placement/inventory-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'pullfleet-hub-inventory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function inventoryFile(name = 'hub.yaml', hub = 'hub'): string {
  const { clusters, sets } = smallHub();
  const path = join(dir, name);
  writeFileSync(path, renderInventory(inventoryFromHub(hub, clusters, sets)));
  return path;
}

function hub(): { fleet: Fleet; hub: Hub } {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  return { fleet, hub: new Hub(fleet, 'hub') };
}

const guestbook = AppSource.git({ repoURL: 'https://github.com/argoproj/argocd-example-apps.git', path: 'guestbook' });

describe('Hub.addInventory', () => {
  test('GIVEN an inventory file THEN every cluster becomes a Spoke with its labels, claims, taints and OpenShift flag', () => {
    const { hub: h } = hub();
    const spokes = h.addInventory(Inventory.fromFile(inventoryFile()));
    expect(spokes.map((s) => s.node.path)).toStrictEqual([
      'hub/Inventory/edge-1',
      'hub/Inventory/ocp-east',
      'hub/Inventory/prod-west',
    ]);
    const ocp = h.spokes.find((s) => s.name === 'ocp-east')!;
    expect(ocp.openshift).toBe(true);
    // the vendor label follows from openshift, as for a hand-written spoke
    expect(ocp.labels).toStrictEqual({
      'cluster.open-cluster-management.io/clusterset': 'prod',
      region: 'us-east-1',
      vendor: 'OpenShift',
    });
    expect(ocp.claims).toStrictEqual({ 'product.open-cluster-management.io': 'OpenShift' });
    expect(h.spokes.find((s) => s.name === 'edge-1')!.taints).toStrictEqual([
      { key: 'cluster.open-cluster-management.io/unreachable', effect: 'NoSelect' },
      { key: 'edge', value: 'true', effect: 'PreferNoSelect' },
    ]);
  });

  test('GIVEN inventory spokes and a placement THEN synth delivers to the clusters the placement selects', () => {
    const { fleet, hub: h } = hub();
    const prod = new ClusterSet(h, 'prod');
    h.addInventory(Inventory.fromFile(inventoryFile()));
    const east = new Placement(h, 'east', { clusterSets: [prod], predicates: [{ labels: { region: 'us-east-1' } }] });
    new PullApplication(h, 'guestbook', { source: guestbook, destinationNamespace: 'guestbook', placement: east });
    const works = allObjects(fleet).filter(
      ({ obj }) => obj.kind === 'ManifestWork' && obj.metadata.name.includes('guestbook'),
    );
    expect(works.map(({ obj }) => obj.metadata.namespace)).toStrictEqual(['ocp-east']);
    const secrets = allObjects(fleet)
      .filter(({ obj }) => obj.kind === 'Secret')
      .map(({ obj }) => (obj as unknown as { stringData: { name: string } }).stringData.name);
    expect(secrets.sort()).toStrictEqual(['edge-1', 'ocp-east', 'prod-west']);
  });

  test('GIVEN overrides THEN labels and claims merge over the entry and taints are replaced', () => {
    const { hub: h } = hub();
    h.addInventory(Inventory.fromFile(inventoryFile()), {
      overrides: { 'edge-1': { labels: { tier: 'edge' }, taints: [] } },
    });
    const edge = h.spokes.find((s) => s.name === 'edge-1')!;
    expect(edge.labels).toStrictEqual({
      'cluster.open-cluster-management.io/clusterset': 'default',
      tier: 'edge',
      vendor: 'OpenShift',
    });
    expect(edge.taints).toStrictEqual([]);
  });

  test('GIVEN an excluded entry THEN a hand-written Spoke of that name stands in for it', () => {
    const { hub: h } = hub();
    new Spoke(h, 'prod-west', { labels: { region: 'us-west-2', tier: 'gold' } });
    h.addInventory(Inventory.fromFile(inventoryFile()), { exclude: ['prod-west'] });
    expect(h.spokes.map((s) => s.node.path)).toStrictEqual([
      'hub/prod-west',
      'hub/Inventory/edge-1',
      'hub/Inventory/ocp-east',
    ]);
    expect(h.spokes[0].labels).toStrictEqual({ region: 'us-west-2', tier: 'gold' });
  });

  test('GIVEN a hand-written spoke of a new cluster THEN it sits beside the inventory spokes', () => {
    const { fleet, hub: h } = hub();
    h.addInventory(Inventory.fromFile(inventoryFile()));
    new Spoke(h, 'lab-1');
    expect(h.spokes.map((s) => s.name)).toStrictEqual(['edge-1', 'ocp-east', 'prod-west', 'lab-1']);
    expect(fleet.problems()).toStrictEqual([]);
  });

  test('fails when a hand-written spoke duplicates an inventory entry without override, naming both', () => {
    const { fleet, hub: h } = hub();
    new Spoke(h, 'ocp-east');
    const file = inventoryFile();
    expect(h.addInventory(Inventory.fromFile(file))).toStrictEqual([]);
    // nothing was declared from the inventory, and synth reports the clash with every other problem
    expect(h.spokes.map((s) => s.name)).toStrictEqual(['ocp-east']);
    expect(synthError(fleet)).toContain(
      `[hub] inventory ${file}: cluster "ocp-east" is already declared as hub/ocp-east: change the entry with addInventory(..., { overrides: { '<name>': {...} } }) or replace it with addInventory(..., { exclude: ['<name>'] }) and keep the hand-written Spoke`,
    );
  });

  test('fails when a spoke is declared after the inventory with a name it already has, naming both', () => {
    const { fleet, hub: h } = hub();
    h.addInventory(Inventory.fromFile(inventoryFile()));
    new Spoke(h, 'edge-1');
    // reported with every other problem of the fleet (one report), not thrown one at a time
    expect(synthError(fleet)).toContain(
      '[hub/edge-1] hub "hub" already has a spoke named "edge-1" (hub/Inventory/edge-1)',
    );
  });

  test('fails when an override or exclusion names no inventory entry', () => {
    const { fleet, hub: h } = hub();
    const file = inventoryFile();
    h.addInventory(Inventory.fromFile(file), { overrides: { gone: {} }, exclude: ['also-gone'] });
    expect(synthError(fleet)).toContain(
      `[hub] inventory ${file}: overrides names "gone", exclude names "also-gone", which is not in the inventory: remove it, or pull the inventory again if the cluster is new`,
    );
  });

  test('fails when the inventory belongs to another hub', () => {
    const { fleet, hub: h } = hub();
    const file = inventoryFile('other.yaml', 'other');
    h.addInventory(Inventory.fromFile(file));
    expect(synthError(fleet)).toContain(
      `[hub] inventory ${file} is for hub "other", not "hub": load inventory/hub.yaml (pullfleet inventory pull --hub hub)`,
    );
    expect(h.spokes).toStrictEqual([]);
  });

  test('fails when the file is missing, saying how to create it', () => {
    const path = join(dir, 'missing.yaml');
    expect(() => Inventory.fromFile(path)).toThrow(
      new RegExp(
        `^cannot read inventory ${path}: .*ENOENT.*: run \`pullfleet inventory pull --hub <name> -o ${path}\` to create it$`,
      ),
    );
  });

  test('an override that gives an invalid label is a synth problem on the spoke', () => {
    const { fleet, hub: h } = hub();
    h.addInventory(Inventory.fromFile(inventoryFile()), { overrides: { 'edge-1': { labels: { tier: 'not valid' } } } });
    expect(synthError(fleet)).toContain('[hub/Inventory/edge-1] spoke label tier="not valid"');
  });
});
