import { describe, expect, test } from '@jest/globals';
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import {
  AppSource,
  ClusterSet,
  FeedbackScrape,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  Prioritizer,
  PullApplication,
  PullApplicationSet,
  routeOutput,
  SelectorOperator,
  Spoke,
  TolerationOperator,
} from '../../src/constructs/index.js';
import { CONSTRUCT_PATH_ANNOTATION, MANAGED_BY_LABEL } from '../../src/model/core/keys.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import { allObjects, find, smallFleet, synthError } from './helpers.js';

const guestbook = AppSource.git({ repoURL: 'https://github.com/argoproj/argocd-example-apps.git', path: 'guestbook' });

describe('Hub', () => {
  test('GIVEN no props THEN OCM defaults are resolved once', () => {
    const hub = new Hub(new Fleet(), 'hub');
    expect([hub.flavor, hub.argoNamespace, hub.feedbackScrape, hub.workSizeBudget]).toStrictEqual([
      HubFlavor.OCM,
      'argocd',
      FeedbackScrape.POLL,
      512000,
    ]);
    expect(hub.applicationSetControllerServiceAccount).toBe('argocd-applicationset-controller');
    expect([
      hub.controller?.namespace,
      hub.controller?.argoNamespace,
      hub.controller?.image,
      hub.controller?.feedbackScrape,
    ]).toStrictEqual([
      'pullfleet-system',
      'argocd',
      'ghcr.io/pullfleet/pullfleet-controller:0.1.0',
      FeedbackScrape.POLL,
    ]);
  });

  test('ACM hubs default to OpenShift GitOps', () => {
    const hub = new Hub(new Fleet(), 'hub', { flavor: HubFlavor.ACM });
    expect([hub.argoNamespace, hub.applicationSetControllerServiceAccount]).toStrictEqual([
      'openshift-gitops',
      'openshift-gitops-applicationset-controller',
    ]);
    expect(hub.controller?.args()).toContain('--argo-namespace=openshift-gitops');
  });

  test('the controller install follows the hub: Argo CD namespace, feedback scrape type, and its own settings', () => {
    const fleet = new Fleet();
    new Hub(fleet, 'hub', {
      argoNamespace: 'gitops',
      feedbackScrape: FeedbackScrape.WATCH,
      controller: { namespace: 'fleet-ops', imageTag: '0.2.0', relaxTenancy: true },
    });
    const deployment = find(fleet, 'Deployment', 'pullfleet-controller') as unknown as {
      metadata: { namespace: string };
      spec: { template: { spec: { containers: { image: string; args: string[] }[] } } };
    };
    expect(deployment.metadata.namespace).toBe('fleet-ops');
    const container = deployment.spec.template.spec.containers[0];
    expect(container.image).toBe('ghcr.io/pullfleet/pullfleet-controller:0.2.0');
    expect(container.args).toEqual(
      expect.arrayContaining(['--argo-namespace=gitops', '--feedback-scrape-type=Watch', '--relax-tenancy=true']),
    );
    expect(find(fleet, 'Role', 'pullfleet-controller-cluster-secrets').metadata.namespace).toBe('gitops');
    expect(
      allObjects(fleet)
        .filter(({ obj }) => obj.kind === 'Deployment')
        .map(({ file }) => file),
    ).toEqual(['hub/hub/controller.yaml']);
  });

  test('controller.enabled=false leaves the controller out', () => {
    const fleet = new Fleet();
    const hub = new Hub(fleet, 'hub', { controller: { enabled: false } });
    expect(hub.controller).toBeUndefined();
    expect(
      allObjects(fleet).filter(({ obj }) => obj.kind === 'Deployment' || obj.kind === 'CustomResourceDefinition'),
    ).toEqual([]);
  });

  test('fails when workSizeBudget is not positive', () => {
    const fleet = new Fleet();
    new Hub(fleet, 'hub', { workSizeBudget: 0 });
    expect(synthError(fleet)).toContain(
      '[hub] workSizeBudget 0 must be a number of bytes above 0 and at most 1572864 (the etcd object limit)',
    );
  });

  test('fails when workSizeBudget is above the etcd object limit', () => {
    const fleet = new Fleet();
    new Hub(fleet, 'hub', { workSizeBudget: 2 * 1024 * 1024 });
    expect(synthError(fleet)).toContain(
      '[hub] workSizeBudget 2097152 must be a number of bytes above 0 and at most 1572864',
    );
  });

  test('Hub.of fails outside a hub', () => {
    const fleet = new Fleet();
    expect(() => new Spoke(fleet, 'east')).toThrow('is not inside a Hub');
  });
});

describe('Spoke', () => {
  test('GIVEN a spoke THEN its blank cluster Secret is rendered in the Argo CD namespace, without credentials', () => {
    const { fleet } = smallFleet();
    const secret = find(fleet, 'Secret', 'east-cluster-secret', 'argocd');
    expect(secret.stringData).toStrictEqual({ name: 'east', server: 'https://east-control-plane:6443' });
    expect(secret.metadata.labels).toMatchObject({ 'argocd.argoproj.io/secret-type': 'cluster' });
  });

  test('effective labels include the exclusive cluster-set label and the OpenShift vendor', () => {
    const { east, ocp } = smallFleet();
    expect(east.labels).toStrictEqual({ region: 'us-east', 'cluster.open-cluster-management.io/clusterset': 'prod' });
    expect(ocp.labels).toStrictEqual({ vendor: 'OpenShift' });
  });

  test('local-cluster may be in the inventory but gets no cluster Secret and no bootstrap', () => {
    const { fleet, hub } = smallFleet();
    new Spoke(hub, 'local-cluster');
    expect(
      allObjects(fleet).filter(
        ({ obj }) => obj.metadata.name.includes('local-cluster') || obj.metadata.namespace === 'local-cluster',
      ),
    ).toStrictEqual([]);
  });

  test('the spoke Argo CD service account follows the hub flavor unless set', () => {
    const hub = new Hub(new Fleet(), 'hub', { flavor: HubFlavor.ACM });
    expect(new Spoke(hub, 'a').argoControllerServiceAccount).toBe('openshift-gitops-argocd-application-controller');
    expect(
      new Spoke(hub, 'b', { argoControllerServiceAccount: 'gitops-controller' }).argoControllerServiceAccount,
    ).toBe('gitops-controller');
  });

  /** The subjects of the spoke Argo CD's RoleBinding in `namespace`, from the spoke's bootstrap YAML. */
  function controllerSubjects(fleet: Fleet, spoke: string, namespace: string): unknown {
    const binding = fleet
      .renderObjects()
      .get(`hub/bootstrap/${spoke}.yaml`)!
      .find((o) => o.kind === 'RoleBinding' && (o.metadata as { namespace?: string }).namespace === namespace);
    return (binding as { subjects?: unknown } | undefined)?.subjects;
  }

  test('GIVEN an ACM hub WHEN a GitOpsCluster with the gitops add-on selects a spoke THEN its bootstrap binds the add-on Argo CD controller (acm-openshift-gitops in openshift-gitops); other spokes bind OpenShift GitOps; props override', () => {
    const fleet = new Fleet();
    const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM, argoNamespace: 'gitops' });
    const retail = new ClusterSet(hub, 'retail');
    const addon = new Spoke(hub, 'retail-1', { clusterSet: retail });
    const plain = new Spoke(hub, 'branch-1');
    const custom = new Spoke(hub, 'retail-2', {
      clusterSet: retail,
      argoControllerServiceAccount: 'custom-controller',
      argoControllerNamespace: 'custom',
    });
    GitOpsCluster.acm(hub, 'retail', {
      placement: new Placement(hub, 'retail', { clusterSets: [retail] }),
      gitopsAddon: true,
    });
    new PullApplication(hub, 'web', {
      source: guestbook,
      destinationNamespace: 'web',
      spokes: [addon, plain, custom],
      resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
    });

    expect(controllerSubjects(fleet, 'retail-1', 'web')).toStrictEqual([
      {
        kind: 'ServiceAccount',
        name: 'acm-openshift-gitops-argocd-application-controller',
        namespace: 'openshift-gitops',
      },
    ]);
    expect(controllerSubjects(fleet, 'branch-1', 'web')).toStrictEqual([
      { kind: 'ServiceAccount', name: 'openshift-gitops-argocd-application-controller', namespace: 'gitops' },
    ]);
    expect(controllerSubjects(fleet, 'retail-2', 'web')).toStrictEqual([
      { kind: 'ServiceAccount', name: 'custom-controller', namespace: 'custom' },
    ]);
  });

  test('GIVEN an ACM hub WHEN an agent-model GitOpsCluster selects a spoke THEN the add-on is on and its Argo CD controller is bound', () => {
    const fleet = new Fleet();
    const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM });
    const retail = new ClusterSet(hub, 'retail');
    const spoke = new Spoke(hub, 'retail-1', { clusterSet: retail });
    GitOpsCluster.acm(hub, 'retail', {
      placement: new Placement(hub, 'retail', { clusterSets: [retail] }),
      model: DeliveryModel.AGENT_MANAGED,
    });
    expect([spoke.argoControllerServiceAccount, spoke.argoControllerNamespace]).toStrictEqual([
      'acm-openshift-gitops-argocd-application-controller',
      'openshift-gitops',
    ]);
  });

  test('GIVEN an OCM hub WHEN a GitOpsCluster (argocd-agent add-on) selects a spoke THEN its bootstrap binds the add-on Argo CD controller in the agent namespace; other spokes bind upstream Argo CD', () => {
    const fleet = new Fleet();
    const hub = new Hub(fleet, 'hub');
    const stores = new ClusterSet(hub, 'stores');
    const store = new Spoke(hub, 'store-1', { clusterSet: stores });
    const plain = new Spoke(hub, 'east');
    GitOpsCluster.ocm(hub, 'stores', {
      placement: new Placement(hub, 'stores', { clusterSets: [stores] }),
      model: DeliveryModel.AGENT_MANAGED,
      agentNamespace: 'argocd-agent',
    });
    new PullApplication(hub, 'web', {
      source: guestbook,
      destinationNamespace: 'web',
      spokes: [store, plain],
      resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
    });

    expect(controllerSubjects(fleet, 'store-1', 'web')).toStrictEqual([
      { kind: 'ServiceAccount', name: 'argocd-argocd-application-controller', namespace: 'argocd-agent' },
    ]);
    expect(controllerSubjects(fleet, 'east', 'web')).toStrictEqual([
      { kind: 'ServiceAccount', name: 'argocd-application-controller', namespace: 'argocd' },
    ]);
  });

  test('fails when two spokes share a name', () => {
    const { fleet, hub } = smallFleet();
    const group = new Construct(hub, 'group');
    new Spoke(group, 'east');
    expect(synthError(fleet)).toContain(
      '[hub/group/east] hub "hub" already has a spoke named "east" (hub/east): spoke names are ManagedCluster names and must be unique per hub',
    );
  });

  test('fails when an exclusive clusterSet selects by labels', () => {
    const { fleet, hub } = smallFleet();
    const byLabel = new ClusterSet(hub, 'by-label', { matchLabels: { env: 'prod' } });
    new Spoke(hub, 'x', { clusterSet: byLabel });
    expect(synthError(fleet)).toContain(
      '[hub/x] cluster set "by-label" selects members by labels, so it cannot be a spoke\'s exclusive clusterSet',
    );
  });
});

describe('ClusterSet', () => {
  test('GIVEN an exclusive set THEN a ManagedClusterSet and a binding into the Argo CD namespace are rendered', () => {
    const { fleet } = smallFleet();
    expect(find(fleet, 'ManagedClusterSet', 'prod').spec).toStrictEqual({
      clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' },
    });
    expect(find(fleet, 'ManagedClusterSetBinding', 'prod', 'argocd').spec).toStrictEqual({ clusterSet: 'prod' });
  });

  test('label-selected sets select by labels and count members by labels', () => {
    const { fleet, hub, ocp, east } = smallFleet();
    const set = new ClusterSet(hub, 'openshift', {
      matchLabels: { vendor: 'OpenShift' },
      bindings: ['argocd', 'team-a'],
    });
    expect(find(fleet, 'ManagedClusterSet', 'openshift').spec).toStrictEqual({
      clusterSelector: { selectorType: 'LabelSelector', labelSelector: { matchLabels: { vendor: 'OpenShift' } } },
    });
    expect(find(fleet, 'ManagedClusterSetBinding', 'openshift', 'team-a')).toBeDefined();
    expect([set.isMember(ocp), set.isMember(east)]).toStrictEqual([true, false]);
  });

  test('fails when bound twice to one namespace', () => {
    const { fleet, prod } = smallFleet();
    prod.bindTo('argocd');
    expect(synthError(fleet)).toContain(
      '[hub/ClusterSet:prod] cluster set "prod" is already bound to namespace "argocd": bind each namespace once',
    );
  });
});

describe('Placement', () => {
  test('GIVEN every option THEN the spec carries them in OCM field names', () => {
    const { fleet, hub, prod } = smallFleet();
    new Placement(hub, 'two', {
      clusterSets: [prod],
      numberOfClusters: 2,
      predicates: [
        {
          labels: { region: 'us-east' },
          claimExpressions: [{ key: 'platform', operator: SelectorOperator.IN, values: ['AWS'] }],
        },
      ],
      tolerations: [{ key: 'maintenance', operator: TolerationOperator.EXISTS }],
      prioritizers: [Prioritizer.builtIn('ResourceAllocatableMemory', 2), Prioritizer.addOn('score', 'cpu')],
    });
    expect(find(fleet, 'Placement', 'two', 'argocd').spec).toStrictEqual({
      clusterSets: ['prod'],
      numberOfClusters: 2,
      predicates: [
        {
          requiredClusterSelector: {
            labelSelector: { matchLabels: { region: 'us-east' } },
            claimSelector: { matchExpressions: [{ key: 'platform', operator: 'In', values: ['AWS'] }] },
          },
        },
      ],
      tolerations: [{ key: 'maintenance', operator: 'Exists' }],
      prioritizerPolicy: {
        mode: 'Additive',
        configurations: [
          { scoreCoordinate: { type: 'BuiltIn', builtIn: 'ResourceAllocatableMemory' }, weight: 2 },
          { scoreCoordinate: { type: 'AddOn', addOn: { resourceName: 'score', scoreName: 'cpu' } }, weight: 1 },
        ],
      },
    });
  });

  test('selectedSpokes evaluates the placement against the hub inventory', () => {
    const { hub, prod } = smallFleet();
    const all = new Placement(hub, 'all', { clusterSets: [prod] });
    const east = new Placement(hub, 'east-only', { predicates: [{ labels: { region: 'us-east' } }] });
    expect(all.selectedSpokes().map((s) => s.name)).toStrictEqual(['east', 'west']);
    expect(east.selectedSpokes().map((s) => s.name)).toStrictEqual(['east']);
  });

  test('fails when numberOfClusters is not a whole number', () => {
    const { fleet, hub } = smallFleet();
    new Placement(hub, 'p', { numberOfClusters: 1.5 });
    expect(synthError(fleet)).toContain('[hub/Placement:p] numberOfClusters 1.5 must be a whole number >= 0');
  });
});

describe('PullApplication', () => {
  test('GIVEN explicit spokes THEN one hub Application and one ManifestWork per spoke, the work built from that very app', () => {
    const { fleet, hub, east, ocp } = smallFleet({ feedbackScrape: FeedbackScrape.WATCH });
    new PullApplication(hub, 'guestbook', {
      source: guestbook,
      destinationNamespace: 'guestbook',
      spokes: [ocp, east],
    });
    const apps = allObjects(fleet).filter(({ obj }) => obj.kind === 'Application');
    expect(apps.map(({ file, obj }) => [file, obj.metadata.name])).toStrictEqual([
      ['hub/hub/applications.yaml', 'guestbook-east'],
      ['hub/hub/applications.yaml', 'guestbook-ocp'],
    ]);
    const hubApp = apps[0].obj as unknown as Application;
    const work = find(fleet, 'ManifestWork', 'argocd-guestbook-east', 'east');
    expect(work).toStrictEqual(
      JSON.parse(JSON.stringify(sortDeep(buildManifestWork(hubApp, { feedbackScrapeType: FeedbackScrape.WATCH })))),
    );
  });

  test('GIVEN a hub before OCM 1.0 (resourceSummaries false) THEN its works ask for no resource summary and its controller starts with the rule off', () => {
    const { fleet, hub, east } = smallFleet({ resourceSummaries: false });
    new PullApplication(hub, 'guestbook', { source: guestbook, destinationNamespace: 'guestbook', spokes: [east] });
    const work = find(fleet, 'ManifestWork', 'argocd-guestbook-east', 'east') as unknown as ManifestWork;
    expect(work.spec.manifestConfigs![0].feedbackRules).toBeDefined();
    expect(work.spec.manifestConfigs![0]).not.toHaveProperty('conditionRules');
    expect(hub.controller!.args()).toContain('--resource-summaries=false');
    // The default asks for it, and leaves the flag out.
    const { fleet: current, hub: currentHub, east: currentEast } = smallFleet();
    new PullApplication(currentHub, 'guestbook', {
      source: guestbook,
      destinationNamespace: 'guestbook',
      spokes: [currentEast],
    });
    const asked = find(current, 'ManifestWork', 'argocd-guestbook-east', 'east') as unknown as ManifestWork;
    expect(asked.spec.manifestConfigs![0]).toHaveProperty('conditionRules');
    expect(currentHub.controller!.args().some((arg) => arg.startsWith('--resource-summaries'))).toBe(false);
  });

  test('placement targets are evaluated offline and merged with explicit spokes', () => {
    const { hub, prod, east } = smallFleet();
    const placement = new Placement(hub, 'prod-all', { clusterSets: [prod] });
    const app = new PullApplication(hub, 'guestbook', {
      source: guestbook,
      destinationNamespace: 'guestbook',
      spokes: [east],
      placement,
    });
    expect(app.targets().map((s) => s.name)).toStrictEqual(['east', 'west']);
  });

  test('target spokes get the destination namespace and declared RBAC in their bootstrap', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'guestbook', {
      source: guestbook,
      destinationNamespace: 'guestbook',
      spokes: [east],
      resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
    });
    const files = fleet.renderObjects();
    const bootstrap = files
      .get('hub/bootstrap/east.yaml')!
      .map((o) => `${String(o.kind)}/${(o.metadata as { name: string }).name}`);
    expect(bootstrap).toStrictEqual([
      'ClusterRole/pullfleet-work-agent-argocd',
      'ClusterRoleBinding/pullfleet-work-agent-argocd',
      'Namespace/guestbook',
      'Role/pullfleet-argocd-apps',
      'RoleBinding/pullfleet-argocd-apps',
    ]);
    const work = files
      .get('hub/hub/works/east.yaml')!
      .find((o) => (o.metadata as { name: string }).name === 'pullfleet-bootstrap') as {
      spec: { workload: { manifests: unknown[] } };
    };
    expect(work.spec.workload.manifests).toStrictEqual(files.get('hub/bootstrap/east.yaml'));
  });

  test('sync policy, project and Helm values are rendered', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'podinfo', {
      source: AppSource.helm({
        repoURL: 'https://stefanprodan.github.io/podinfo',
        chart: 'podinfo',
        targetRevision: '6.7.1',
        values: { replicaCount: 2 },
      }),
      destinationNamespace: 'podinfo',
      project: 'apps',
      autoSync: false,
      syncOptions: ['ServerSideApply=true'],
      spokes: [east],
    });
    expect(find(fleet, 'Application', 'podinfo-east').spec).toStrictEqual({
      project: 'apps',
      source: {
        repoURL: 'https://stefanprodan.github.io/podinfo',
        chart: 'podinfo',
        targetRevision: '6.7.1',
        helm: { valuesObject: { replicaCount: 2 } },
      },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'podinfo' },
      syncPolicy: { syncOptions: ['ServerSideApply=true'] },
    });
  });

  test('fails when a spoke is added twice', () => {
    const { fleet, hub, east } = smallFleet();
    const app = new PullApplication(hub, 'guestbook', {
      source: guestbook,
      destinationNamespace: 'guestbook',
      spokes: [east],
    });
    app.deployTo(east);
    expect(synthError(fleet)).toContain(
      '[hub/PullApplication:guestbook] app "guestbook" already deploys to spoke "east": add each spoke once',
    );
  });

  test('fails when a resources grant uses a wildcard', () => {
    const { fleet, hub } = smallFleet();
    new PullApplication(hub, 'x', {
      source: guestbook,
      destinationNamespace: 'x',
      resources: [{ apiGroup: 'apps', resources: ['*'] }],
    });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplication:x] resources grant for API group "apps" lists ["*"]: name each resource (no "*", no empty list)',
    );
  });
});

describe('PullApplicationSet', () => {
  test('GIVEN two sets THEN the ApplicationSets share one generator ConfigMap and one placement-reader Role', () => {
    const { fleet, hub, prod } = smallFleet();
    const placement = new Placement(hub, 'prod-all', { clusterSets: [prod] });
    new PullApplicationSet(hub, 'podinfo', { source: guestbook, destinationNamespace: 'podinfo', placement });
    new PullApplicationSet(hub, 'other', {
      source: guestbook,
      destinationNamespace: 'other',
      placement,
      requeueAfterSeconds: 30,
    });
    const kinds = fleet
      .renderObjects()
      .get('hub/hub/application-sets.yaml')!
      .map((o) => `${String(o.kind)}/${(o.metadata as { name: string }).name}`);
    expect(kinds).toStrictEqual([
      'ApplicationSet/podinfo',
      'ConfigMap/ocm-placement-generator',
      'Role/pullfleet-appset-placement-reader',
      'RoleBinding/pullfleet-appset-placement-reader',
      'ApplicationSet/other',
    ]);
    expect(find(fleet, 'ApplicationSet', 'other')).toMatchObject({
      spec: {
        generators: [
          {
            clusterDecisionResource: {
              requeueAfterSeconds: 30,
              labelSelector: { matchLabels: { 'cluster.open-cluster-management.io/placement': 'prod-all' } },
            },
          },
        ],
      },
    });
  });

  test('spokes the placement selects offline get the namespace in their bootstrap; others do not', () => {
    const { fleet, hub, prod } = smallFleet();
    const placement = new Placement(hub, 'prod-all', { clusterSets: [prod] });
    new PullApplicationSet(hub, 'podinfo', { source: guestbook, destinationNamespace: 'podinfo', placement });
    const namespaces = (file: string) =>
      fleet
        .renderObjects()
        .get(file)!
        .filter((o) => o.kind === 'Namespace')
        .map((o) => (o.metadata as { name: string }).name);
    expect(namespaces('hub/bootstrap/east.yaml')).toStrictEqual(['podinfo']);
    expect(namespaces('hub/bootstrap/ocp.yaml')).toStrictEqual([]);
  });

  test('fails when requeueAfterSeconds is not positive', () => {
    const { fleet, hub } = smallFleet();
    const placement = new Placement(hub, 'p');
    new PullApplicationSet(hub, 'x', {
      source: guestbook,
      destinationNamespace: 'x',
      placement,
      requeueAfterSeconds: 0,
    });
    expect(synthError(fleet)).toContain(
      '[hub/PullApplicationSet:x] requeueAfterSeconds 0 must be a whole number of seconds > 0',
    );
  });
});

describe('Fleet output', () => {
  test('GIVEN a fleet THEN every object carries provenance naming its construct', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'guestbook', { source: guestbook, destinationNamespace: 'guestbook', spokes: [east] });
    for (const { obj } of allObjects(fleet)) {
      expect(obj.metadata.labels?.[MANAGED_BY_LABEL]).toBe('pullfleet');
      expect(obj.metadata.annotations?.[CONSTRUCT_PATH_ANNOTATION]).toMatch(/^hub\//);
    }
    expect(find(fleet, 'ManifestWork', 'argocd-guestbook-east').metadata.annotations?.[CONSTRUCT_PATH_ANNOTATION]).toBe(
      'hub/PullApplication:guestbook/east',
    );
  });

  test('objects of other constructs land in hub/hub.yaml unless routed, and get provenance', () => {
    const { fleet, hub } = smallFleet({ controller: { enabled: false } });
    const install = new Construct(hub, 'ControllerInstall');
    routeOutput(install, 'hub/controller.yaml');
    new ApiObject(install, 'sa', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'pullfleet-controller', namespace: 'argocd' },
    });
    new ApiObject(hub, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra', namespace: 'argocd' } });
    const files = fleet.renderObjects();
    expect(files.get('hub/hub/controller.yaml')).toStrictEqual([
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: {
          annotations: { [CONSTRUCT_PATH_ANNOTATION]: 'hub/ControllerInstall/sa' },
          labels: { [MANAGED_BY_LABEL]: 'pullfleet' },
          name: 'pullfleet-controller',
          namespace: 'argocd',
        },
      },
    ]);
    expect(files.get('hub/hub/hub.yaml')!.map((o) => o.kind)).toStrictEqual(['ConfigMap']);
  });

  test('fails when routeOutput points outside the hub folder', () => {
    const { hub } = smallFleet();
    expect(() => routeOutput(hub, '../etc/x.yaml')).toThrow(
      'must be a relative path under hub/, bootstrap/ or spokes/ ending in .yaml',
    );
  });

  test('the file layout separates what the hub syncs from spoke bootstrap', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'guestbook', { source: guestbook, destinationNamespace: 'guestbook', spokes: [east] });
    expect([...fleet.renderObjects().keys()]).toStrictEqual([
      'hub/bootstrap/east.yaml',
      'hub/bootstrap/ocp.yaml',
      'hub/bootstrap/west.yaml',
      'hub/hub/applications.yaml',
      'hub/hub/cluster-secrets.yaml',
      'hub/hub/cluster-sets.yaml',
      'hub/hub/controller.yaml',
      'hub/hub/works/east.yaml',
      'hub/hub/works/ocp.yaml',
      'hub/hub/works/west.yaml',
    ]);
  });
});

/** Recursively sorts object keys, as cdk8s does when serializing. */
function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortDeep((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
