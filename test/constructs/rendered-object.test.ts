/** `renderedObject(query)`: the one escape hatch of every construct that renders objects (src/constructs/rendered.ts). */
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
  type IRendersObjects,
  type RenderedObjectQuery,
} from '../../src/index.js';
import { allObjects, synthError } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'guestbook' });

/** A hub with one of every construct that renders objects; nothing here changes another's output. */
function world() {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub', { controller: { monitoring: {} } });
  const prod = new ClusterSet(hub, 'prod');
  const east = new Spoke(hub, 'east', { clusterSet: prod });
  const placement = new Placement(hub, 'prod', { clusterSets: [prod] });
  const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
  const appSet = new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });
  // Its placement selects no spoke, so every spoke stays on the basic model.
  const agents = GitOpsCluster.ocm(hub, 'agents', {
    placement: new Placement(hub, 'agents', { clusterSets: [prod], predicates: [{ labels: { agents: 'yes' } }] }),
  });
  return { fleet, hub, prod, east, placement, app, appSet, agents, install: hub.controller! };
}
type World = ReturnType<typeof world>;

interface Row {
  readonly construct: string;
  readonly query: RenderedObjectQuery;
  readonly of: (w: World) => IRendersObjects;
  /** What the construct's old hatch (or `ApiObject.of`) returns for the same object. */
  readonly old: (w: World) => ApiObject | undefined;
  /** Ask once the fleet rendered (the object exists only then). */
  readonly afterRender?: boolean;
}

const ROWS: Row[] = [
  {
    construct: 'PullApplication',
    query: { kind: 'Application', spoke: 'east' },
    of: (w) => w.app,
    old: (w) => w.app.hubApplication('east'),
  },
  {
    construct: 'PullApplication',
    query: { kind: 'ManifestWork', spoke: 'east' },
    of: (w) => w.app,
    old: (w) => w.app.manifestWork(w.east),
  },
  {
    construct: 'PullApplicationSet',
    query: { kind: 'ApplicationSet' },
    of: (w) => w.appSet,
    old: (w) => w.appSet.applicationSet,
  },
  { construct: 'Spoke', query: { kind: 'Secret' }, of: (w) => w.east, old: (w) => w.east.clusterSecret },
  { construct: 'Spoke', query: { kind: 'ManifestWork' }, of: (w) => w.east, old: (w) => w.east.bootstrapWork },
  {
    construct: 'Spoke',
    query: { kind: 'Namespace', name: 'guestbook' },
    of: (w) => w.east,
    old: (w) => w.east.bootstrapObjects.find((o) => o.kind === 'Namespace' && o.metadata.name === 'guestbook'),
    afterRender: true,
  },
  {
    construct: 'ClusterSet',
    query: { kind: 'ManagedClusterSet' },
    of: (w) => w.prod,
    old: (w) => ApiObject.of(w.prod),
  },
  {
    construct: 'ClusterSet',
    query: { kind: 'ManagedClusterSetBinding', namespace: 'argocd' },
    of: (w) => w.prod,
    old: (w) => w.prod.bindingFor('argocd'),
  },
  {
    construct: 'Placement',
    query: { kind: 'Placement' },
    of: (w) => w.placement,
    old: (w) => ApiObject.of(w.placement),
  },
  {
    construct: 'GitOpsCluster',
    query: { kind: 'GitOpsCluster' },
    of: (w) => w.agents,
    old: (w) => ApiObject.of(w.agents),
  },
  {
    construct: 'ControllerInstall',
    query: { kind: 'Deployment' },
    of: (w) => w.install,
    old: (w) => ApiObject.of(w.install),
  },
  {
    construct: 'ControllerInstall',
    query: { kind: 'ServiceMonitor' },
    of: (w) => w.install,
    old: (w) => w.install.serviceMonitor,
  },
  {
    construct: 'ControllerInstall',
    query: { kind: 'Role', name: 'pullfleet-controller-cluster-secrets' },
    of: (w) => w.install,
    old: (w) =>
      w.install.apiObjects.find((o) => o.kind === 'Role' && o.metadata.name === 'pullfleet-controller-cluster-secrets'),
  },
  {
    construct: 'Hub',
    query: { kind: 'ConfigMap' },
    of: (w) => w.hub,
    old: (w) => ApiObject.of(w.hub.node.findChild('ApplicationSetSupport').node.findChild('GeneratorConfigMap')),
  },
];

describe('renderedObject: one escape hatch for every object pullfleet renders', () => {
  test.each(ROWS.map((row) => [`${row.construct} ${JSON.stringify(row.query)}`, row] as const))(
    'GIVEN %s THEN it is the old hatch object, and a label and a JSON patch added through it reach the output',
    (_name, row) => {
      const w = world();
      if (row.afterRender) expect(w.fleet.problems()).toStrictEqual([]);
      // WHEN the object is asked for, and edited
      const obj = row.of(w).renderedObject(row.query);
      obj.metadata.addLabel('example.com/via', 'rendered-object');
      obj.addJsonPatch(JsonPatch.add('/metadata/labels/example.com~1patched', 'yes'));
      // THEN it is the object the old hatch returns
      expect(obj).toBe(row.old(w));
      expect(obj.kind).toBe(row.query.kind);
      // AND the edits are in the output, on exactly one object of that identity
      expect(w.fleet.problems()).toStrictEqual([]);
      const rendered = allObjects(w.fleet).filter(
        ({ obj: o }) =>
          o.kind === row.query.kind &&
          o.metadata.name === obj.metadata.name &&
          o.metadata.namespace === obj.metadata.namespace,
      );
      expect(rendered.map(({ obj: o }) => o.metadata.labels)).toStrictEqual([
        expect.objectContaining({ 'example.com/via': 'rendered-object', 'example.com/patched': 'yes' }),
      ]);
    },
  );

  test('GIVEN every object asked for before the rest of the fleet is declared THEN the output is as without asking', () => {
    const render = (ask: boolean) => {
      const w = world();
      if (ask) for (const row of ROWS.filter((r) => !r.afterRender)) row.of(w).renderedObject(row.query);
      new Spoke(w.hub, 'west', { clusterSet: w.prod });
      new PullApplication(w.hub, 'late', { source, destinationNamespace: 'late', spokes: [w.east] });
      return w.fleet.renderFiles();
    };
    expect(render(true)).toStrictEqual(render(false));
  });

  test('GIVEN the app delivers to a spoke declared after the ask THEN the edit lands on its ManifestWork', () => {
    const w = world();
    w.app.renderedObject({ kind: 'ManifestWork', spoke: 'west' }).metadata.addLabel('example.com/tier', 'gold');
    w.app.deployTo(new Spoke(w.hub, 'west', { clusterSet: w.prod }));
    const work = allObjects(w.fleet).find(
      ({ obj }) =>
        obj.kind === 'ManifestWork' &&
        obj.metadata.namespace === 'west' &&
        obj.metadata.name === 'argocd-guestbook-west',
    );
    expect(work?.obj.metadata.labels?.['example.com/tier']).toBe('gold');
  });
});

describe('renderedObject fails with the construct and the kinds it renders', () => {
  test('fails for a kind the construct does not render, listing the kinds it does', () => {
    const w = world();
    expect(() => w.placement.renderedObject({ kind: 'Deployment' })).toThrow(
      `hub/Placement:prod: renderedObject({ kind: 'Deployment' }): placement "argocd/prod" renders no Deployment: it renders Placement`,
    );
    expect(() => w.prod.renderedObject({ kind: 'Placement' })).toThrow(
      `hub/ClusterSet:prod: renderedObject({ kind: 'Placement' }): cluster set "prod" renders no Placement: it renders ManagedClusterSet, ManagedClusterSetBinding`,
    );
    expect(() => w.install.renderedObject({ kind: 'ApplicationSet' })).toThrow(
      /^hub\/Controller: renderedObject\(\{ kind: 'ApplicationSet' \}\): controller install "hub\/Controller" renders no ApplicationSet: it renders .*Deployment.*ServiceMonitor/,
    );
    expect(() => w.agents.renderedObject({ kind: 'Placement' })).toThrow(
      `renderedObject({ kind: 'Placement' }): GitOpsCluster "agents" renders no Placement: it renders GitOpsCluster`,
    );
  });

  test('fails before the fleet renders for an object that exists only then, saying when it does', () => {
    const w = world();
    expect(() => w.east.renderedObject({ kind: 'Namespace', name: 'guestbook' })).toThrow(
      `hub/east: renderedObject({ kind: 'Namespace', name: 'guestbook' }): spoke "east" renders no Namespace: it renders Secret, ManifestWork; its plain bootstrap objects (dist/hub/bootstrap/east.yaml) exist once the fleet renders: edit them with editBootstrapObjects((objects) => ...), which runs when they are rendered`,
    );
    expect(() => w.hub.renderedObject({ kind: 'AppProject' })).toThrow(
      `renderedObject({ kind: 'AppProject' }): hub "hub" renders no AppProject that matches (it renders none now); its agent AppProjects, expected-Applications ConfigMaps and leftover ManifestWorks exist once the fleet renders: read them after synth`,
    );
  });

  test('fails when more than one object matches, listing them', () => {
    const w = world();
    expect(() => w.install.renderedObject({ kind: 'Role' })).toThrow(
      /renderedObject\(\{ kind: 'Role' \}\): controller install "hub\/Controller" renders 2 Role objects that match \(Role .+, Role .+\): give name, namespace or spoke to choose one/,
    );
  });

  test('fails when a PullApplication is asked for a per-spoke object without the spoke, before the fleet renders', () => {
    const w = world();
    expect(() => w.app.renderedObject({ kind: 'ManifestWork' })).toThrow(
      `hub/PullApplication:guestbook: renderedObject({ kind: 'ManifestWork' }): app "guestbook" renders its ManifestWork per spoke, and the spokes it delivers to are known once the whole hub is declared: give the spoke, as in renderedObject({ kind: 'ManifestWork', spoke })`,
    );
    expect(() => w.app.renderedObject({ kind: 'ManifestWork', spoke: 'east', name: 'other' })).toThrow(
      `renderedObject({ kind: 'ManifestWork', spoke: 'east', name: 'other' }): the ManifestWork app "guestbook" renders for spoke "east" is east/argocd-guestbook-east: give that name and namespace, or leave them out`,
    );
  });

  test('fails for a spoke asked for another spoke, and for a binding of a namespace the set is not bound to', () => {
    const w = world();
    expect(() => w.east.renderedObject({ kind: 'Secret', spoke: 'west' })).toThrow(
      `hub/east: renderedObject({ kind: 'Secret', spoke: 'west' }): spoke "east" renders objects for itself only: leave spoke out, or ask spoke "west"`,
    );
    expect(() => w.prod.renderedObject({ kind: 'ManagedClusterSetBinding', namespace: 'team-a' })).toThrow(
      `hub/ClusterSet:prod: cluster set "prod" renders no binding into namespace "team-a" (rendered: ["argocd"]): bind it with bindTo('team-a')`,
    );
  });

  test('GIVEN agent-autonomous spokes WHEN the fleet rendered THEN their spoke-folder Applications are reachable, and an ApplicationSet asked for before is reported by the call that asked', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const stores = new ClusterSet(hub, 'stores');
    const store = new Spoke(hub, 'store-1', { clusterSet: stores });
    const placement = new Placement(hub, 'stores', { clusterSets: [stores] });
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [store] });
    const appSet = new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement });
    appSet.renderedObject({ kind: 'ApplicationSet' });
    GitOpsCluster.ocm(hub, 'stores', {
      placement,
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: { repoURL: 'https://git.example.com/fleet.git' },
    });
    expect(synthError(fleet)).toContain(
      `[hub/PullApplicationSet:web] renderedObject({ kind: 'ApplicationSet' }): the placement's GitOpsCluster runs the agent-autonomous model, so app "web" renders no ApplicationSet (each spoke's own folder holds its Application) and the edits made through renderedObject({ kind: 'ApplicationSet' }) would be lost: remove the use of renderedObject({ kind: 'ApplicationSet' })`,
    );
    expect(app.renderedObject({ kind: 'Application', spoke: 'store-1' }).node.path).toBe(
      'hub/PullApplication:guestbook/store-1/SpokeApplication/Application',
    );
    expect(appSet.renderedObject({ kind: 'Application', spoke: store }).node.path).toBe(
      'hub/PullApplicationSet:web/store-1/Application',
    );
  });

  test('fails synth naming renderedObject when a GitOpsCluster registers the cluster whose Secret it handed out', () => {
    const w = world();
    w.east.renderedObject({ kind: 'Secret' }).metadata.addLabel('example.com/tier', 'gold');
    GitOpsCluster.ocm(w.hub, 'east-agent', {
      placement: new Placement(w.hub, 'east-agent', { clusterSets: [w.prod] }),
    });
    expect(synthError(w.fleet)).toContain(
      `[hub/east] renderedObject({ kind: 'Secret' }): GitOpsCluster hub/GitOpsCluster:east-agent selects spoke "east" and registers the cluster with the hub Argo CD itself, so the fleet renders no cluster Secret for it and the edits made through renderedObject({ kind: 'Secret' }) would be lost: remove the use of renderedObject({ kind: 'Secret' }) for this spoke`,
    );
  });

  test('fails for a query without a kind', () => {
    const w = world();
    expect(() => w.placement.renderedObject({} as RenderedObjectQuery)).toThrow(
      `hub/Placement:prod: renderedObject({}): give the kind of the object, for example renderedObject({ kind: 'Placement' })`,
    );
  });

  test('fails synth naming renderedObject when the object it handed out is not rendered in the spoke model', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const prod = new ClusterSet(hub, 'prod');
    const east = new Spoke(hub, 'east', { clusterSet: prod });
    const app = new PullApplication(hub, 'guestbook', { source, destinationNamespace: 'guestbook', spokes: [east] });
    app.renderedObject({ kind: 'ManifestWork', spoke: east }).metadata.addLabel('example.com/tier', 'gold');
    GitOpsCluster.ocm(hub, 'agents', {
      placement: new Placement(hub, 'agents', { clusterSets: [prod] }),
      model: DeliveryModel.AGENT_MANAGED,
    });
    expect(synthError(fleet)).toContain(
      `[hub/PullApplication:guestbook] renderedObject({ kind: 'ManifestWork', spoke: 'east' }): spoke "east" runs the agent-managed model, so the argocd-agent principal delivers app "guestbook" from its hub Application and no ManifestWork renders: edit renderedObject({ kind: 'Application', spoke: 'east' }) instead, or remove the use of renderedObject({ kind: 'ManifestWork', spoke: 'east' }) for this spoke`,
    );
  });
});
