import { describe, expect, test } from '@jest/globals';
import { ApiObject, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
  type IHub,
  type InventoryCluster,
  type ISpoke,
} from '../../src/index.js';
import { allObjects, find, smallFleet, synthError } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'guestbook' });

function yamlOf(fleet: Fleet, file: string): string {
  const text = fleet.renderFiles().get(file);
  if (text === undefined) throw new Error(`no file ${file}`);
  return text;
}

/** The one app ManifestWork (not the bootstrap work) in a spoke's namespace. */
function workIn(fleet: Fleet, spoke: string) {
  const works = allObjects(fleet).filter(
    ({ obj }) =>
      obj.kind === 'ManifestWork' &&
      obj.metadata.namespace === spoke &&
      obj.metadata.annotations?.['apps.open-cluster-management.io/hub-application-name'] !== undefined,
  );
  if (works.length !== 1) throw new Error(`${works.length} app works in ${spoke}`);
  return works[0].obj;
}

describe('interfaces', () => {
  test('GIVEN a spoke of another implementation WHEN an app deploys to it THEN its hub Application and ManifestWork render', () => {
    const { fleet, hub } = smallFleet();
    // Satisfies ISpoke without being a Spoke: the library must not downcast.
    class OtherSpoke extends Construct implements ISpoke {
      public readonly name = 'edge-1';
      public readonly openshift = false;
      public readonly labels = { tier: 'edge' };
      constructor(public readonly hub: IHub) {
        super(hub, 'OtherSpoke');
      }
      public inventoryEntry(): InventoryCluster {
        return { name: this.name, labels: this.labels, claims: {}, clusterSets: [], taints: [] };
      }
    }
    const edge = new OtherSpoke(hub);
    new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [edge] });

    expect(workIn(fleet, 'edge-1').metadata.namespace).toBe('edge-1');
    expect(
      find(fleet, 'Application', 'guestbook-edge-1', 'argocd').metadata.annotations?.[
        'apps.open-cluster-management.io/ocm-managed-cluster'
      ],
    ).toBe('edge-1');
  });

  test('Hub.isHub recognises a hub by its Symbol.for marker, not by class', () => {
    const { hub } = smallFleet();
    const foreign = { [Symbol.for('pullfleet.Hub')]: true };
    expect(Hub.isHub(hub)).toBe(true);
    expect(Hub.isHub(foreign)).toBe(true);
    expect(Hub.isHub({})).toBe(false);
    expect(Hub.isHub(undefined)).toBe(false);
  });

  test('hub.spokes and hub.clusterSets are typed by the interfaces and hold declared spokes only', () => {
    const { hub } = smallFleet();
    Spoke.fromName(hub, 'legacy');
    const spokes: ISpoke[] = hub.spokes;
    expect(spokes.map((s) => s.name)).toStrictEqual(['east', 'west', 'ocp']);
  });
});

describe('Spoke.fromName', () => {
  test('GIVEN an imported spoke WHEN an app deploys to it THEN the app renders, but no cluster Secret and no bootstrap', () => {
    const { fleet, hub } = smallFleet();
    const legacy = Spoke.fromName(hub, 'legacy', { labels: { region: 'eu' } });
    new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [legacy] });

    const files = [...fleet.renderFiles().keys()];
    expect(files).toContain('hub/hub/works/legacy.yaml');
    expect(files).not.toContain('hub/bootstrap/legacy.yaml');
    expect(files).toContain('hub/bootstrap/east.yaml');
    const work = workIn(fleet, 'legacy');
    expect(work.metadata.namespace).toBe('legacy');
    const secrets = allObjects(fleet)
      .filter(({ obj }) => obj.kind === 'Secret')
      .map(({ obj }) => (obj as unknown as { stringData: { name: string } }).stringData.name);
    expect(secrets.sort()).toStrictEqual(['east', 'ocp', 'west']);
    expect(
      allObjects(fleet).filter(({ obj }) => obj.kind === 'ManifestWork' && obj.metadata.namespace === 'legacy'),
    ).toHaveLength(1);
  });

  test('GIVEN an imported spoke THEN placements do not select it offline, and it reports its labels', () => {
    const { fleet, hub } = smallFleet();
    const legacy = Spoke.fromName(hub, 'legacy', { labels: { region: 'us-east' }, openshift: true });
    const placement = new Placement(hub, 'east', { predicates: [{ labels: { region: 'us-east' } }] });
    new ClusterSet(hub, 'all', { matchLabels: {} });

    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['east']);
    expect(legacy.labels).toStrictEqual({ region: 'us-east', vendor: 'OpenShift' });
    expect(legacy.inventoryEntry().clusterSets).toStrictEqual(['all']);
    expect(fleet.problems()).toStrictEqual([]);
  });

  test('importing the same name twice returns the first import; other options throw', () => {
    const { hub } = smallFleet();
    const first = Spoke.fromName(hub, 'legacy', { labels: { a: 'b' } });
    expect(Spoke.fromName(hub, 'legacy', { labels: { a: 'b' } })).toBe(first);
    expect(() => Spoke.fromName(hub, 'legacy', { labels: { a: 'c' } })).toThrow(
      'hub: spoke "legacy" is already imported (hub/ImportedSpoke:legacy) with other options: import each spoke once and reuse the result',
    );
  });

  test('fails when the imported name is also declared, or is not a DNS label', () => {
    const { fleet, hub } = smallFleet();
    Spoke.fromName(hub, 'east');
    Spoke.fromName(hub, 'Bad_Name');
    const message = synthError(fleet);
    expect(message).toContain(
      'spoke "east" is imported with Spoke.fromName, but the fleet also declares it (hub/east): use the declared Spoke',
    );
    expect(message).toContain('[hub/ImportedSpoke:Bad_Name]');
  });
});

describe('ClusterSet.fromName', () => {
  test("GIVEN OCM's global set WHEN bound and placed THEN no ManagedClusterSet renders, the binding does, and the placement selects every spoke", () => {
    const { fleet, hub } = smallFleet();
    const global = ClusterSet.fromName(hub, 'global');
    global.bindTo('argocd');
    const placement = new Placement(hub, 'everywhere', { clusterSets: [global] });

    const sets = allObjects(fleet)
      .filter(({ obj }) => obj.kind === 'ManagedClusterSet')
      .map(({ obj }) => obj.metadata.name);
    expect(sets).toStrictEqual(['prod']);
    const binding = find(fleet, 'ManagedClusterSetBinding', 'global', 'argocd');
    expect(binding.spec).toStrictEqual({ clusterSet: 'global' });
    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['east', 'ocp', 'west']);
    expect(fleet.problems()).toStrictEqual([]);
  });

  test("GIVEN OCM's default set THEN its members are the spokes without an exclusive set", () => {
    const { hub } = smallFleet();
    const defaultSet = ClusterSet.fromName(hub, 'default', { existingBindings: ['argocd'] });
    const placement = new Placement(hub, 'leftovers', { clusterSets: [defaultSet] });
    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['ocp']);
  });

  test('GIVEN existing bindings THEN placements in that namespace may use the set and nothing is rendered for them', () => {
    const { fleet, hub } = smallFleet();
    const shared = ClusterSet.fromName(hub, 'shared', {
      matchLabels: { region: 'us-west' },
      existingBindings: ['argocd'],
    });
    new Placement(hub, 'west', { clusterSets: [shared] });

    expect(shared.bindings).toStrictEqual(['argocd']);
    expect(allObjects(fleet).filter(({ obj }) => obj.metadata.name === 'shared')).toStrictEqual([]);
    expect(fleet.problems()).toStrictEqual([]);
  });

  test('fails when a placement uses an imported set that is not bound to its namespace', () => {
    const { fleet, hub } = smallFleet();
    new Placement(hub, 'p', { clusterSets: [ClusterSet.fromName(hub, 'global')] });
    expect(synthError(fleet)).toContain(
      `cluster set "global" is not bound to namespace "argocd", so this placement would select nothing from it: add "argocd" to the set's bindings (clusterSet.bindTo('argocd'))`,
    );
  });

  test('fails when the fleet also declares the imported set', () => {
    const { fleet, hub } = smallFleet();
    ClusterSet.fromName(hub, 'prod');
    ClusterSet.fromName(hub, 'staging');
    new ClusterSet(hub, 'staging');
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/ImportedClusterSet:prod] cluster set "prod" is imported with ClusterSet.fromName, but the fleet also declares it (hub/ClusterSet:prod): use the declared ClusterSet',
    );
    expect(message).toContain(
      '[hub/ImportedClusterSet:staging] cluster set "staging" is imported with ClusterSet.fromName, but the fleet also declares it (hub/ClusterSet:staging)',
    );
  });
});

describe('Placement.fromName', () => {
  test('GIVEN an imported placement WHEN a PullApplicationSet uses it THEN the ApplicationSet renders against it and no Placement renders', () => {
    const { fleet, hub } = smallFleet();
    const existing = Placement.fromName(hub, 'team-a');
    new PullApplicationSet(hub, 'guestbook', { source, destinationNamespace: 'guestbook', placement: existing });

    expect(existing.namespace).toBe('argocd');
    expect(existing.evaluatedOffline).toBe(false);
    expect(allObjects(fleet).filter(({ obj }) => obj.kind === 'Placement')).toStrictEqual([]);
    const appSet = find(fleet, 'ApplicationSet', 'guestbook', 'argocd') as unknown as {
      spec: {
        generators: Array<{ clusterDecisionResource: { labelSelector: { matchLabels: Record<string, string> } } }>;
      };
    };
    expect(appSet.spec.generators[0].clusterDecisionResource.labelSelector.matchLabels).toStrictEqual({
      'cluster.open-cluster-management.io/placement': 'team-a',
    });
    expect(fleet.warnings().map((w) => w.message)).toContainEqual(
      expect.stringContaining('placement "argocd/team-a" is imported, so synth cannot tell which spokes it selects'),
    );
  });

  test('fails when a PullApplication delivers through an imported placement', () => {
    const { fleet, hub } = smallFleet();
    new PullApplication(hub, 'guestbook', {
      source,
      destinationNamespace: 'guestbook',
      placement: Placement.fromName(hub, 'team-a'),
    });
    expect(synthError(fleet)).toContain(
      'app "guestbook" cannot deliver statically through placement "argocd/team-a": it is imported (hub/ImportedPlacement:argocd.team-a), so synth cannot tell which spokes it selects: use a PullApplicationSet with this placement, or give the app spokes',
    );
  });

  test('fails when the fleet also declares the imported placement', () => {
    const { fleet, hub } = smallFleet();
    new Placement(hub, 'team-a');
    Placement.fromName(hub, 'team-a');
    Placement.fromName(hub, 'team-a', { namespace: 'other' });
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/ImportedPlacement:argocd.team-a] placement "argocd/team-a" is imported with Placement.fromName, but the fleet also declares it (hub/Placement:team-a): use the declared Placement',
    );
    expect(message).not.toContain('ImportedPlacement:other.team-a]');
  });

  test('selectedSpokes throws for an imported placement, naming the alternative', () => {
    const { hub } = smallFleet();
    const p = Placement.fromName(hub, 'team-a', { namespace: 'team-a' });
    expect(p.namespace).toBe('team-a');
    expect(() => p.selectedSpokes()).toThrow(
      'synth cannot evaluate it offline: deliver through it with PullApplicationSet, or give PullApplication spokes',
    );
    expect(Placement.fromName(hub, 'team-a', { namespace: 'team-a' })).toBe(p);
  });
});

describe('escape hatches', () => {
  test('GIVEN annotations added through every hatch WHEN synthesized THEN each lands in its YAML file', () => {
    const { fleet, hub, east, prod } = smallFleet();
    const placement = new Placement(hub, 'prod', { clusterSets: [prod] });
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    const appSet = new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });

    app.hubApplication(east).metadata.addAnnotation('example.com/owner', 'team-hub-app');
    app.manifestWork('east').metadata.addAnnotation('example.com/owner', 'team-work');
    east.bootstrapWork.metadata.addAnnotation('example.com/owner', 'team-bootstrap');
    east.clusterSecret.metadata.addAnnotation('example.com/owner', 'team-secret');
    appSet.applicationSet!.metadata.addAnnotation('example.com/owner', 'team-appset');
    ApiObject.of(placement).metadata.addAnnotation('example.com/owner', 'team-placement');
    ApiObject.of(prod).metadata.addAnnotation('example.com/owner', 'team-set');
    prod.bindingFor('argocd').metadata.addAnnotation('example.com/owner', 'team-binding');
    ApiObject.of(hub.controller!).metadata.addAnnotation('example.com/owner', 'team-controller');
    east.bootstrapObjects[0].metadata.addAnnotation('example.com/owner', 'team-bootstrap-yaml');

    expect(yamlOf(fleet, 'hub/hub/applications.yaml')).toContain('example.com/owner: team-hub-app');
    expect(yamlOf(fleet, 'hub/hub/works/east.yaml')).toContain('example.com/owner: team-work');
    expect(yamlOf(fleet, 'hub/hub/works/east.yaml')).toContain('example.com/owner: team-bootstrap');
    expect(yamlOf(fleet, 'hub/hub/cluster-secrets.yaml')).toContain('example.com/owner: team-secret');
    expect(yamlOf(fleet, 'hub/hub/application-sets.yaml')).toContain('example.com/owner: team-appset');
    expect(yamlOf(fleet, 'hub/hub/placements.yaml')).toContain('example.com/owner: team-placement');
    expect(yamlOf(fleet, 'hub/hub/cluster-sets.yaml')).toContain('example.com/owner: team-set');
    expect(yamlOf(fleet, 'hub/hub/cluster-sets.yaml')).toContain('example.com/owner: team-binding');
    expect(yamlOf(fleet, 'hub/hub/controller.yaml')).toContain('example.com/owner: team-controller');
    expect(yamlOf(fleet, 'hub/bootstrap/east.yaml')).toContain('example.com/owner: team-bootstrap-yaml');
    expect(find(fleet, 'Deployment', 'pullfleet-controller').metadata.annotations?.['example.com/owner']).toBe(
      'team-controller',
    );
    expect(workIn(fleet, 'east').metadata.annotations?.['example.com/owner']).toBe('team-work');
  });

  test('addJsonPatch through a hatch reaches the output', () => {
    const { fleet, hub, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    app.manifestWork(east).addJsonPatch(JsonPatch.add('/spec/deleteOption', { propagationPolicy: 'Orphan' }));
    expect((workIn(fleet, 'east').spec as Record<string, unknown>).deleteOption).toStrictEqual({
      propagationPolicy: 'Orphan',
    });
  });

  test('fails when a patch made through a hatch breaks a Kubernetes rule (validation runs on the patched object)', () => {
    const { fleet, hub, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    app.manifestWork(east).metadata.addLabel('team', 'not a valid label value!');
    expect(synthError(fleet)).toContain('not a valid label value!');
  });

  test('fails when an app is declared after a hatch rendered the hub, naming the hatch', () => {
    const { fleet, hub, east, west } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    app.manifestWork(east);
    new PullApplication(hub, 'late', { source, destinationNamespace: 'late', spokes: [west] });
    expect(synthError(fleet)).toContain(
      `[hub/PullApplication:late] declared after hub "hub" rendered its apps and bootstraps (the escape hatch hub/PullApplication:guestbook.manifestWork('east') renders them): use escape hatches after the last declaration of the hub, just before fleet.synth()`,
    );
  });

  test('a hatch for a spoke the app does not deliver to throws, naming the spokes it does', () => {
    const { hub, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    expect(() => app.hubApplication('west')).toThrow(
      'hub/PullApplication:guestbook: app "guestbook" renders nothing for spoke "west" (it delivers to "east"): deploy it there first, or use one of those spokes',
    );
  });

  test('a spoke that renders no bootstrap says so', () => {
    const { hub } = smallFleet();
    const local = new Spoke(hub, 'local-cluster');
    expect(() => local.bootstrapWork).toThrow('hub/local-cluster: spoke "local-cluster" renders no bootstrap');
    expect(() => local.clusterSecret).toThrow('renders no cluster Secret');
  });
});
