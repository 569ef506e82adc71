import { describe, expect, test } from '@jest/globals';
import { ApiObject, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  Placement,
  Prioritizer,
  PullApplication,
  PullApplicationSet,
  SelectorOperator,
  Spoke,
  TaintEffect,
  TolerationOperator,
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
    Spoke.fromSpokeName(hub, 'Legacy', 'legacy');
    const spokes: ISpoke[] = hub.spokes;
    expect(spokes.map((s) => s.name)).toStrictEqual(['east', 'west', 'ocp']);
  });
});

describe('Spoke.fromSpokeName', () => {
  test('GIVEN an imported spoke WHEN an app deploys to it THEN the app renders, but no cluster Secret and no bootstrap', () => {
    const { fleet, hub } = smallFleet();
    const legacy = Spoke.fromSpokeName(hub, 'Legacy', 'legacy', { labels: { region: 'eu' } });
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
    const legacy = Spoke.fromSpokeName(hub, 'Legacy', 'legacy', { labels: { region: 'us-east' }, openshift: true });
    const placement = new Placement(hub, 'east', { predicates: [{ labels: { region: 'us-east' } }] });
    new ClusterSet(hub, 'all', { matchLabels: {} });

    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['east']);
    expect(legacy.labels).toStrictEqual({ region: 'us-east', vendor: 'OpenShift' });
    expect(legacy.inventoryEntry().clusterSets).toStrictEqual(['all']);
    expect(fleet.problems()).toStrictEqual([]);
  });

  test('the import is the construct `id` under `scope`, which may be any construct inside the hub', () => {
    const { hub } = smallFleet();
    const imports = new Construct(hub, 'Imports');
    const legacy = Spoke.fromSpokeName(imports, 'Legacy', 'legacy');
    expect(legacy.node.path).toBe('hub/Imports/Legacy');
    expect(legacy.name).toBe('legacy');
    expect(legacy.hub).toBe(hub);
    expect(() => Spoke.fromSpokeName(imports, 'Legacy', 'other')).toThrow(
      "There is already a Construct with name 'Legacy'",
    );
  });

  test('fails when a spoke is imported twice, naming the first import', () => {
    const { fleet, hub } = smallFleet();
    Spoke.fromSpokeName(hub, 'Legacy', 'legacy', { labels: { a: 'b' } });
    Spoke.fromSpokeName(new Construct(hub, 'Team'), 'Legacy', 'legacy', { labels: { a: 'b' } });
    expect(synthError(fleet)).toContain(
      '[hub/Team/Legacy] spoke "legacy" is already imported (hub/Legacy): import each spoke once and reuse the result',
    );
  });

  test('fails when the imported name is also declared, or is not a DNS label', () => {
    const { fleet, hub } = smallFleet();
    Spoke.fromSpokeName(hub, 'ImportedEast', 'east');
    Spoke.fromSpokeName(hub, 'Bad', 'Bad_Name');
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/ImportedEast] spoke "east" is imported with Spoke.fromSpokeName, but the fleet also declares it (hub/east): use the declared Spoke',
    );
    expect(message).toContain('[hub/Bad]');
  });
});

describe('ClusterSet.fromClusterSetName', () => {
  test("GIVEN OCM's global set WHEN bound and placed THEN no ManagedClusterSet renders, the binding does (under the import's path), and the placement selects every spoke", () => {
    const { fleet, hub } = smallFleet();
    const global = ClusterSet.fromClusterSetName(hub, 'Global', 'global');
    global.bindTo('argocd');
    const placement = new Placement(hub, 'everywhere', { clusterSets: [global] });

    const sets = allObjects(fleet)
      .filter(({ obj }) => obj.kind === 'ManagedClusterSet')
      .map(({ obj }) => obj.metadata.name);
    expect(sets).toStrictEqual(['prod']);
    const binding = find(fleet, 'ManagedClusterSetBinding', 'global', 'argocd');
    expect(binding.spec).toStrictEqual({ clusterSet: 'global' });
    expect(binding.metadata.annotations?.['pullfleet.io/construct-path']).toBe('hub/Global/Binding-argocd');
    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['east', 'ocp', 'west']);
    expect(fleet.problems()).toStrictEqual([]);
  });

  test("GIVEN OCM's default set THEN its members are the spokes without an exclusive set", () => {
    const { hub } = smallFleet();
    const defaultSet = ClusterSet.fromClusterSetName(hub, 'Default', 'default', { existingBindings: ['argocd'] });
    const placement = new Placement(hub, 'leftovers', { clusterSets: [defaultSet] });
    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['ocp']);
  });

  test('GIVEN existing bindings THEN placements in that namespace may use the set and nothing is rendered for them', () => {
    const { fleet, hub } = smallFleet();
    const shared = ClusterSet.fromClusterSetName(hub, 'Shared', 'shared', {
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
    new Placement(hub, 'p', { clusterSets: [ClusterSet.fromClusterSetName(hub, 'Global', 'global')] });
    expect(synthError(fleet)).toContain(
      `cluster set "global" is not bound to namespace "argocd", so this placement would select nothing from it: add "argocd" to the set's bindings (clusterSet.bindTo('argocd'))`,
    );
  });

  test('fails when the fleet also declares the imported set, or imports it twice', () => {
    const { fleet, hub } = smallFleet();
    ClusterSet.fromClusterSetName(hub, 'ImportedProd', 'prod');
    ClusterSet.fromClusterSetName(hub, 'ImportedStaging', 'staging');
    new ClusterSet(hub, 'staging');
    ClusterSet.fromClusterSetName(hub, 'Global', 'global');
    ClusterSet.fromClusterSetName(hub, 'GlobalAgain', 'global');
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/ImportedProd] cluster set "prod" is imported with ClusterSet.fromClusterSetName, but the fleet also declares it (hub/ClusterSet:prod): use the declared ClusterSet',
    );
    expect(message).toContain(
      '[hub/ImportedStaging] cluster set "staging" is imported with ClusterSet.fromClusterSetName, but the fleet also declares it (hub/ClusterSet:staging)',
    );
    expect(message).toContain(
      '[hub/GlobalAgain] cluster set "global" is already imported (hub/Global): import each cluster set once and reuse the result',
    );
    expect(message).not.toContain('[hub/Global] ');
  });
});

describe('Placement.fromPlacementName', () => {
  test('GIVEN an imported placement WHEN a PullApplicationSet uses it THEN the ApplicationSet renders against it and no Placement renders', () => {
    const { fleet, hub } = smallFleet();
    const existing = Placement.fromPlacementName(hub, 'TeamA', 'team-a');
    new PullApplicationSet(hub, 'guestbook', { source, destinationNamespace: 'guestbook', placement: existing });

    expect(existing.namespace).toBe('argocd');
    expect(existing.evaluatedOffline).toBe(false);
    expect(existing.node.path).toBe('hub/TeamA');
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
      placement: Placement.fromPlacementName(hub, 'TeamA', 'team-a'),
    });
    expect(synthError(fleet)).toContain(
      'app "guestbook" cannot deliver statically through placement "argocd/team-a": it is imported (hub/TeamA), so synth cannot tell which spokes it selects: use a PullApplicationSet with this placement, or give the app spokes',
    );
  });

  test('fails when the fleet also declares the imported placement, or imports it twice; the same name in another namespace is another placement', () => {
    const { fleet, hub } = smallFleet();
    new Placement(hub, 'team-a');
    Placement.fromPlacementName(hub, 'TeamA', 'team-a');
    Placement.fromPlacementName(hub, 'OtherTeamA', 'team-a', { namespace: 'other' });
    Placement.fromPlacementName(hub, 'OtherTeamAAgain', 'team-a', { namespace: 'other' });
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/TeamA] placement "argocd/team-a" is imported with Placement.fromPlacementName, but the fleet also declares it (hub/Placement:team-a): use the declared Placement',
    );
    expect(message).toContain(
      '[hub/OtherTeamAAgain] placement "other/team-a" is already imported (hub/OtherTeamA): import each placement once and reuse the result',
    );
    expect(message).not.toContain('[hub/OtherTeamA] ');
  });

  test('selectedSpokes throws for an imported placement, naming the alternative', () => {
    const { hub } = smallFleet();
    const p = Placement.fromPlacementName(hub, 'TeamA', 'team-a', { namespace: 'team-a' });
    expect(p.namespace).toBe('team-a');
    expect(() => p.selectedSpokes()).toThrow(
      'hub/TeamA: placement "team-a/team-a" is imported (Placement.fromPlacementName), so synth cannot evaluate it offline: deliver through it with PullApplicationSet, or give PullApplication spokes',
    );
  });
});

describe('getters return copies', () => {
  test('GIVEN the objects a getter returns WHEN a caller changes them THEN neither the construct nor what it renders changes', () => {
    const { fleet, hub, east, prod } = smallFleet();
    const labelled = new ClusterSet(hub, 'east-coast', { matchLabels: { region: 'us-east' } });
    const placement = new Placement(hub, 'p', {
      clusterSets: [prod],
      predicates: [{ labels: { region: 'us-east' } }],
      prioritizers: [Prioritizer.builtIn('Steady')],
    });
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    const steady = Prioritizer.builtIn('Steady', 2);

    placement.spec.predicates!.length = 0;
    (placement.spec as { clusterSets: string[] }).clusterSets.push('other');
    labelled.matchLabels!.region = 'eu-west';
    (app.definition as { destinationNamespace: string }).destinationNamespace = 'elsewhere';
    (app.definition.labels as Record<string, string>).team = 'changed';
    (steady.configuration as { weight: number }).weight = 9;

    expect(placement.spec.predicates).toHaveLength(1);
    expect(placement.spec.clusterSets).toStrictEqual(['prod']);
    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['east']);
    expect(labelled.matchLabels).toStrictEqual({ region: 'us-east' });
    expect(labelled.isMember(east)).toBe(true);
    expect(app.definition.destinationNamespace).toBe('guestbook');
    expect(app.definition.labels).toStrictEqual({});
    expect(steady.configuration.weight).toBe(2);
    expect(find(fleet, 'ManagedClusterSet', 'east-coast').spec).toMatchObject({
      clusterSelector: { labelSelector: { matchLabels: { region: 'us-east' } } },
    });
    expect(workIn(fleet, 'east').metadata.name).toBe('argocd-guestbook-east');
  });

  test("GIVEN a spoke's claims and taints WHEN a caller changes what the getters return THEN placement still sees the declared values", () => {
    const { hub, prod } = smallFleet();
    const spoke = new Spoke(hub, 'edge', {
      clusterSet: prod,
      claims: { 'platform.open-cluster-management.io': 'AWS' },
      taints: [{ key: 'maintenance', effect: TaintEffect.NO_SELECT }],
    });
    const placement = new Placement(hub, 'aws', {
      clusterSets: [prod],
      predicates: [
        {
          claimExpressions: [
            { key: 'platform.open-cluster-management.io', operator: SelectorOperator.IN, values: ['AWS'] },
          ],
        },
      ],
      tolerations: [{ key: 'maintenance', operator: TolerationOperator.EXISTS }],
    });

    spoke.claims['platform.open-cluster-management.io'] = 'GCP';
    spoke.taints[0].key = 'other';
    spoke.taints.length = 0;

    expect(spoke.claims).toStrictEqual({ 'platform.open-cluster-management.io': 'AWS' });
    expect(spoke.taints).toStrictEqual([{ key: 'maintenance', effect: TaintEffect.NO_SELECT }]);
    expect(placement.selectedSpokes().map((s) => s.name)).toStrictEqual(['edge']);
  });

  test('GIVEN an agent-autonomous GitOpsCluster THEN its spokeFolderSource is a copy', () => {
    const { hub, prod } = smallFleet();
    const stores = GitOpsCluster.ocm(hub, 'stores', {
      placement: new Placement(hub, 'stores', { clusterSets: [prod] }),
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: { repoURL: 'https://git.example.com/fleet.git' },
    });
    (stores.spokeFolderSource as { repoURL: string }).repoURL = 'https://elsewhere.example.com/fleet.git';
    expect(stores.spokeFolderSource).toStrictEqual({
      repoURL: 'https://git.example.com/fleet.git',
      targetRevision: 'HEAD',
      outputPath: 'dist',
    });
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
    east.editBootstrapObjects((objects) =>
      objects[0].metadata.addAnnotation('example.com/owner', 'team-bootstrap-yaml'),
    );

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

  test('GIVEN a hatch read before the last declaration THEN an app declared after it renders, and so does the edit', () => {
    const { fleet, hub, east, west } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    app.manifestWork(east).metadata.addAnnotation('example.com/owner', 'team-work');
    new PullApplication(hub, 'late', { source, destinationNamespace: 'late', spokes: [west] });
    expect(fleet.problems()).toStrictEqual([]);
    expect(workIn(fleet, 'east').metadata.annotations?.['example.com/owner']).toBe('team-work');
    expect(workIn(fleet, 'west').metadata.name).toBe('argocd-late-west');
  });

  test('throws when an app is declared after the fleet rendered, saying to declare it before synth', () => {
    const { fleet, hub, west } = smallFleet();
    fleet.problems();
    expect(() => new PullApplication(hub, 'late', { source, destinationNamespace: 'late', spokes: [west] })).toThrow(
      'hub/PullApplication:late: PullApplication "late" declared after the fleet rendered (synth, renderFiles, renderObjects, problems, warnings or findings ran): declare every construct and make every call before synthesizing or validating the fleet',
    );
  });

  test('fails synth when a hatch asks for a spoke the app does not deliver to, naming the spokes it does', () => {
    const { fleet, hub, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    app.hubApplication('west').metadata.addAnnotation('example.com/owner', 'team-west');
    expect(synthError(fleet)).toContain(
      `[hub/PullApplication:guestbook] hubApplication('west') asks for the hub Application of a spoke the app does not deliver to: app "guestbook" renders nothing for spoke "west" (it delivers to "east"): deploy it there first, or use one of those spokes`,
    );
    // Once the fleet rendered, the answer is known: the hatch throws.
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
