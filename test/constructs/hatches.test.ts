import { describe, expect, test } from '@jest/globals';
import { ApiObject, JsonPatch } from 'cdk8s';
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
import { allObjects, find, smallFleet, synthError, type Obj } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'guestbook' });

const annotation = (obj: Obj) => obj.metadata.annotations?.['example.com/owner'];

function workOf(fleet: Fleet, app: string, spoke: string): Obj {
  return find(fleet, 'ManifestWork', `argocd-${app}-${spoke}`, spoke);
}

describe('escape hatches never render', () => {
  test('GIVEN every hatch read before the rest of the fleet is declared THEN the later constructs render and every edit lands', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const prod = new ClusterSet(hub, 'prod');
    const east = new Spoke(hub, 'east', { clusterSet: prod });
    const placement = new Placement(hub, 'prod', { clusterSets: [prod] });
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', placement });
    const appSet = new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });

    // Spoke west is declared only below: the app reaches it through its placement.
    app.hubApplication('west').metadata.addAnnotation('example.com/owner', 'team-hub-app');
    app.manifestWork('west').addJsonPatch(JsonPatch.add('/spec/deleteOption', { propagationPolicy: 'Orphan' }));
    app.manifestWork('east').metadata.addLabel('example.com/tier', 'gold');
    east.bootstrapWork.metadata.addAnnotation('example.com/owner', 'team-bootstrap');
    east.clusterSecret.metadata.addAnnotation('example.com/owner', 'team-secret');
    appSet.applicationSet!.metadata.addAnnotation('example.com/owner', 'team-appset');
    ApiObject.of(appSet).metadata.addLabel('example.com/tier', 'gold');
    ApiObject.of(placement).metadata.addAnnotation('example.com/owner', 'team-placement');
    prod.bindingFor('argocd').metadata.addAnnotation('example.com/owner', 'team-binding');
    hub.controller!.apiObjects[0].metadata.addAnnotation('example.com/owner', 'team-controller');
    east.editBootstrapObjects((objects) =>
      objects.forEach((o) => o.metadata.addAnnotation('example.com/owner', 'team-bootstrap-yaml')),
    );

    const west = new Spoke(hub, 'west', { clusterSet: prod });
    new PullApplication(hub, 'late', { source, destinationNamespace: 'late', spokes: [east, west] });

    expect(fleet.problems()).toStrictEqual([]);
    expect(annotation(find(fleet, 'Application', 'guestbook-west', 'argocd'))).toBe('team-hub-app');
    expect((workOf(fleet, 'guestbook', 'west').spec as { deleteOption: unknown }).deleteOption).toStrictEqual({
      propagationPolicy: 'Orphan',
    });
    expect(workOf(fleet, 'guestbook', 'east').metadata.labels?.['example.com/tier']).toBe('gold');
    // The model's metadata is filled in under the edits.
    expect(workOf(fleet, 'guestbook', 'east').metadata.labels?.['app.kubernetes.io/managed-by']).toBe('pullfleet');
    expect(workOf(fleet, 'late', 'west').metadata.namespace).toBe('west');
    const bootstrapWork = find(fleet, 'ManifestWork', 'pullfleet-bootstrap', 'east');
    expect(annotation(bootstrapWork)).toBe('team-bootstrap');
    // The bootstrap carries the namespace of the app declared after the hatch was read.
    const manifests = (bootstrapWork.spec as { workload: { manifests: Obj[] } }).workload.manifests;
    expect(manifests.filter((m) => m.kind === 'Namespace').map((m) => m.metadata.name)).toStrictEqual([
      'guestbook',
      'late',
      'web',
    ]);
    const secret = allObjects(fleet).find(
      ({ obj }) => obj.kind === 'Secret' && (obj as { stringData?: { name?: string } }).stringData?.name === 'east',
    );
    expect(annotation(secret!.obj)).toBe('team-secret');
    const applicationSet = find(fleet, 'ApplicationSet', 'web', 'argocd');
    expect(annotation(applicationSet)).toBe('team-appset');
    expect(applicationSet.metadata.labels?.['example.com/tier']).toBe('gold');
    expect(annotation(find(fleet, 'Placement', 'prod', 'argocd'))).toBe('team-placement');
    expect(annotation(find(fleet, 'ManagedClusterSetBinding', 'prod', 'argocd'))).toBe('team-binding');
    const bootstrapYaml = allObjects(fleet).filter(({ file }) => file === 'hub/bootstrap/east.yaml');
    expect(bootstrapYaml.length).toBeGreaterThan(2);
    expect(bootstrapYaml.every(({ obj }) => annotation(obj) === 'team-bootstrap-yaml')).toBe(true);
    expect(allObjects(fleet).filter(({ obj }) => annotation(obj) === 'team-controller')).toHaveLength(1);
  });

  test('GIVEN hatches read for spokes in reverse order THEN every file is as without them', () => {
    const build = (readHatches: boolean) => {
      const { fleet, hub, prod, east, west } = smallFleet();
      const placement = new Placement(hub, 'prod', { clusterSets: [prod] });
      const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', placement });
      if (readHatches) {
        app.manifestWork(west);
        app.hubApplication(west);
        expect(east.bootstrapWork.kind).toBe('ManifestWork');
      }
      return fleet.renderFiles();
    };
    expect(build(true)).toStrictEqual(build(false));
  });

  test('GIVEN spoke.deliveryModel read before its GitOpsCluster is declared THEN the GitOpsCluster still decides the model', () => {
    const { fleet, hub, prod, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    expect(east.deliveryModel).toBe(DeliveryModel.BASIC);
    GitOpsCluster.ocm(hub, 'agents', { placement: new Placement(hub, 'agents', { clusterSets: [prod] }) });
    expect(fleet.problems()).toStrictEqual([]);
    expect(east.deliveryModel).toBe(DeliveryModel.AGENT_MANAGED);
    expect(app.hubApplication(east).toJson().spec.destination).toStrictEqual({ name: 'east', namespace: 'guestbook' });
  });

  test('spoke.bootstrapObjects throws before the fleet renders, pointing to editBootstrapObjects, and lists them after', () => {
    const { fleet, east } = smallFleet();
    expect(() => east.bootstrapObjects).toThrow(
      'hub/east: spoke.bootstrapObjects exist once the fleet renders (they depend on every app delivered to spoke "east"): change them with spoke.editBootstrapObjects((objects) => ...), which runs when they are rendered',
    );
    fleet.problems();
    expect(east.bootstrapObjects.map((o) => o.kind)).toStrictEqual(['ClusterRole', 'ClusterRoleBinding']);
  });
});

describe('equal parts held once', () => {
  test('GIVEN two spokes with the same app, whose equal RBAC the fleet holds once, WHEN one spoke bootstrap is patched THEN the other spoke and both bootstrap works stay as they were', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const prod = new ClusterSet(hub, 'prod');
    const east = new Spoke(hub, 'east', { clusterSet: prod });
    const west = new Spoke(hub, 'west', { clusterSet: prod });
    new PullApplication(hub, 'guestbook', {
      source,
      destinationNamespace: 'guestbook',
      spokes: [east, west],
      resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
    });
    east.editBootstrapObjects((objects) => {
      const role = objects.find((o) => o.kind === 'Role')!;
      role.addJsonPatch(JsonPatch.add('/rules/0/resources/-', 'statefulsets'));
    });

    const roles = allObjects(fleet)
      .filter(({ obj }) => obj.kind === 'Role' && obj.metadata.namespace === 'guestbook')
      .map(({ obj }) => obj);
    const resources = (o: Obj) => (o as unknown as { rules: Array<{ resources: string[] }> }).rules[0].resources;
    expect(roles.map(resources)).toStrictEqual([['deployments', 'statefulsets'], ['deployments']]);
    for (const spoke of ['east', 'west']) {
      const work = find(fleet, 'ManifestWork', 'pullfleet-bootstrap', spoke);
      const role = (work.spec as { workload: { manifests: Obj[] } }).workload.manifests.find((m) => m.kind === 'Role')!;
      expect(resources(role)).toStrictEqual(['deployments']);
    }
  });
});

describe('escape hatches whose object the fleet does not render', () => {
  test('fails synth when clusterSecret was used and a GitOpsCluster registers the cluster', () => {
    const { fleet, hub, prod, east } = smallFleet();
    east.clusterSecret.metadata.addAnnotation('example.com/owner', 'team-secret');
    GitOpsCluster.ocm(hub, 'agents', { placement: new Placement(hub, 'agents', { clusterSets: [prod] }) });
    expect(synthError(fleet)).toContain(
      '[hub/east] clusterSecret: GitOpsCluster hub/GitOpsCluster:agents selects spoke "east" and registers the cluster with the hub Argo CD itself, so the fleet renders no cluster Secret for it and the edits made through clusterSecret would be lost: remove the use of clusterSecret for this spoke',
    );
    expect(() => east.clusterSecret).toThrow('hub/east: spoke "east" renders no cluster Secret');
  });

  test('fails synth when manifestWork was used for a spoke of the agent-managed model', () => {
    const { fleet, hub, prod, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    app.manifestWork(east);
    app.hubApplication(east).metadata.addAnnotation('example.com/owner', 'team-hub-app');
    GitOpsCluster.ocm(hub, 'agents', { placement: new Placement(hub, 'agents', { clusterSets: [prod] }) });
    const message = synthError(fleet);
    expect(message).toContain(
      `[hub/PullApplication:guestbook] manifestWork('east'): spoke "east" runs the agent-managed model, so the argocd-agent principal delivers app "guestbook" from its hub Application and no ManifestWork renders: edit hubApplication('east') instead, or remove the use of manifestWork for this spoke`,
    );
    expect(message).not.toContain("hubApplication('east'):");
  });

  test('fails synth when applicationSet or hubApplication was used for an agent-autonomous app', () => {
    const { fleet, hub, prod, east } = smallFleet();
    const placement = new Placement(hub, 'stores', { clusterSets: [prod] });
    const appSet = new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    appSet.applicationSet!.metadata.addAnnotation('example.com/owner', 'team-appset');
    app.hubApplication(east);
    GitOpsCluster.ocm(hub, 'stores', {
      placement,
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: { repoURL: 'https://git.example.com/fleet.git' },
    });
    const message = synthError(fleet);
    expect(message).toContain(
      `[hub/PullApplicationSet:web] applicationSet: the placement's GitOpsCluster runs the agent-autonomous model, so app "web" renders no ApplicationSet (each spoke's own folder holds its Application) and the edits made through applicationSet would be lost: remove the use of applicationSet`,
    );
    expect(message).toContain(
      `[hub/PullApplication:guestbook] hubApplication('east'): spoke "east" runs the agent-autonomous model, so app "guestbook" renders its Application into the spoke's own folder (spokes/east/applications.yaml) and the hub gets no hub Application: remove the use of hubApplication for this spoke`,
    );
    expect(appSet.applicationSet).toBeUndefined();
  });

  test('an object no hatch handed out is dropped without a word', () => {
    const { fleet, hub, prod } = smallFleet();
    const placement = new Placement(hub, 'stores', { clusterSets: [prod] });
    const appSet = new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });
    GitOpsCluster.ocm(hub, 'stores', {
      placement,
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: { repoURL: 'https://git.example.com/fleet.git' },
    });
    expect(fleet.problems()).toStrictEqual([]);
    expect(appSet.node.tryFindChild('ApplicationSet')).toBeUndefined();
    expect(allObjects(fleet).some(({ obj }) => obj.kind === 'ApplicationSet')).toBe(false);
  });
});

describe('after the fleet rendered', () => {
  test('declaring a construct or changing one throws, naming the call and saying to make it before synth', () => {
    const { fleet, hub, prod, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    fleet.problems();
    const after =
      'after the fleet rendered (synth, renderFiles, renderObjects, problems, warnings or findings ran): declare every construct and make every call before synthesizing or validating the fleet';
    expect(() => new Spoke(hub, 'north')).toThrow(`hub/north: Spoke "north" declared ${after}`);
    expect(() => new Hub(fleet, 'second')).toThrow(`second: Hub "second" declared ${after}`);
    expect(() => app.deployTo(east)).toThrow(`hub/PullApplication:guestbook: deployTo(...) called ${after}`);
    expect(() => east.moveTo(DeliveryModel.AGENT_MANAGED)).toThrow(`hub/east: moveTo("agent-managed") called ${after}`);
    expect(() => east.editBootstrapObjects(() => undefined)).toThrow(
      `hub/east: editBootstrapObjects(...) called ${after}`,
    );
    expect(() => prod.bindTo('team-a')).toThrow(`hub/ClusterSet:prod: bindTo("team-a") called ${after}`);
  });
});
