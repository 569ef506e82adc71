import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
  type AcmGitOpsClusterProps,
  type OcmGitOpsClusterProps,
} from '../../src/constructs/index.js';
import { testFleet } from '../support/fleet-builder.js';
import { schemaFindings } from '../../src/validate/schema.js';
import { allObjects, find, synthError, type Obj } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });
const REPO = { repoURL: 'https://git.example.com/fleet.git' };

/** One hub, sets `edge` (spokes e1, e2) and `core` (c1); placements `edge` and `core` in the Argo CD namespace. */
function fleetOf(flavor: HubFlavor) {
  const { fleet, hub, sets, spokes } = testFleet({
    hub: { flavor },
    sets: ['edge', 'core'],
    spokes: ['e1', 'e2', { name: 'c1', set: 'core' }],
  });
  const [e1, e2, c1] = spokes;
  const edgePlacement = new Placement(hub, 'edge', { clusterSets: [sets.edge] });
  const corePlacement = new Placement(hub, 'core', { clusterSets: [sets.core] });
  return { fleet, hub, e1, e2, c1, edgePlacement, corePlacement };
}

const files = (fleet: Fleet) => [...fleet.renderObjects().keys()];
const ofKind = (fleet: Fleet, kind: string) => allObjects(fleet).filter(({ obj }) => obj.kind === kind);

describe('GitOpsCluster', () => {
  test('GIVEN an OCM hub and a GitOpsCluster with defaults THEN it renders v1alpha1 with the add-on defaults (managed, argocd, argocd-operator-system) and leaves the principal address and port to discovery', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.OCM);
    GitOpsCluster.ocm(hub, 'edge-agents', { placement: edgePlacement });
    const gc = find(fleet, 'GitOpsCluster', 'edge-agents');
    expect(gc.apiVersion).toBe('apps.open-cluster-management.io/v1alpha1');
    expect(gc.metadata.namespace).toBe('argocd');
    expect(gc.spec).toStrictEqual({
      placementRef: { apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'Placement', name: 'edge' },
      argoCDAgentAddon: { mode: 'managed', agentNamespace: 'argocd', operatorNamespace: 'argocd-operator-system' },
    });
    expect(schemaFindings(gc as never)).toStrictEqual([]);
    expect(files(fleet)).toContain('hub/hub/gitops-clusters.yaml');
  });

  test('GIVEN an ACM hub, agent-managed with a principal address THEN it renders v1beta1 with blank secrets and the gitops add-on running the agent', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.ACM);
    GitOpsCluster.acm(hub, 'edge-agents', {
      placement: edgePlacement,
      model: DeliveryModel.AGENT_MANAGED,
      principalServerAddress: 'principal.example.com',
      principalServerPort: 8443,
    });
    const gc = find(fleet, 'GitOpsCluster', 'edge-agents');
    expect(gc.apiVersion).toBe('apps.open-cluster-management.io/v1beta1');
    expect(gc.spec).toStrictEqual({
      argoServer: { argoNamespace: 'openshift-gitops' },
      placementRef: { apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'Placement', name: 'edge' },
      createBlankClusterSecrets: true,
      gitopsAddon: {
        enabled: true,
        overrideExistingConfigs: false,
        argoCDAgent: {
          enabled: true,
          mode: 'managed',
          serverAddress: 'principal.example.com',
          serverPort: '8443',
          propagateHubCA: true,
        },
      },
    });
    expect(schemaFindings(gc as never)).toStrictEqual([]);
  });

  test('GIVEN an ACM agent GitOpsCluster with propagateHubCA false THEN both the field (ACM 2.15, 2.16) and the skip annotation (ACM 2.17) say so; by default neither', () => {
    const { fleet, hub, edgePlacement, corePlacement } = fleetOf(HubFlavor.ACM);
    const agent: AcmGitOpsClusterProps = {
      placement: edgePlacement,
      model: DeliveryModel.AGENT_MANAGED,
      principalServerAddress: 'p.example.com',
      principalServerPort: 443,
    };
    GitOpsCluster.acm(hub, 'edge-agents', { ...agent, propagateHubCA: false });
    GitOpsCluster.acm(hub, 'core-agents', { ...agent, placement: corePlacement });
    const skipped = find(fleet, 'GitOpsCluster', 'edge-agents');
    expect(skipped.metadata.annotations?.['apps.open-cluster-management.io/skip-hub-ca-propagation']).toBe('true');
    expect(
      (skipped.spec as { gitopsAddon: { argoCDAgent: { propagateHubCA: boolean } } }).gitopsAddon.argoCDAgent
        .propagateHubCA,
    ).toBe(false);
    expect(schemaFindings(skipped as never)).toStrictEqual([]);
    expect(find(fleet, 'GitOpsCluster', 'core-agents').metadata.annotations).not.toHaveProperty(
      'apps.open-cluster-management.io/skip-hub-ca-propagation',
    );
  });

  test("fails when an OCM GitOpsCluster is outside the hub Argo CD namespace, where its controller would put the agents' Secrets", () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.OCM });
    const set = new ClusterSet(hub, 'edge', { bindings: ['agents'] });
    new Spoke(hub, 'e1', { clusterSet: set });
    const placement = new Placement(hub, 'edge', { clusterSets: [set], namespace: 'agents' });
    GitOpsCluster.ocm(hub, 'edge-agents', { placement, namespace: 'agents' });
    expect(synthError(fleet)).toContain(
      'namespace "agents" is not the hub Argo CD\'s ("argocd"): the OCM GitOpsCluster controller takes its own namespace for the Argo CD namespace and puts the agents\' cluster Secrets and the principal\'s certificates there, where a principal in "argocd" never looks; create the GitOpsCluster (and its placement) in "argocd"',
    );
  });

  test('GIVEN an ACM hub with the gitops add-on and no agent THEN the spokes stay basic and get no pullfleet cluster Secret', () => {
    const { fleet, hub, e1, c1, edgePlacement } = fleetOf(HubFlavor.ACM);
    GitOpsCluster.acm(hub, 'edge-gitops', { placement: edgePlacement, gitopsAddon: true });
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [e1, c1] });
    const gc = find(fleet, 'GitOpsCluster', 'edge-gitops');
    expect((gc.spec as { gitopsAddon: unknown }).gitopsAddon).toStrictEqual({
      enabled: true,
      overrideExistingConfigs: false,
    });
    expect(e1.deliveryModel).toBe(DeliveryModel.BASIC);
    expect(ofKind(fleet, 'Secret').map(({ obj }) => obj.metadata.name)).toStrictEqual(['c1-cluster-secret']);
    expect(
      ofKind(fleet, 'ManifestWork')
        .filter(({ obj }) => obj.metadata.name !== 'pullfleet-bootstrap')
        .map(({ obj }) => obj.metadata.namespace)
        .sort(),
    ).toStrictEqual(['c1', 'e1']);
  });

  test('fails when the placement is in another namespace, naming both constructs', () => {
    const { fleet, hub } = fleetOf(HubFlavor.OCM);
    const elsewhere = new Placement(hub, 'elsewhere', { namespace: 'team-a' });
    GitOpsCluster.ocm(hub, 'agents', { placement: elsewhere });
    const message = synthError(fleet);
    expect(message).toContain(
      'placement hub/Placement:elsewhere is in namespace "team-a", but GitOpsCluster hub/GitOpsCluster:agents is in "argocd"',
    );
  });

  test('fails when a spoke is in two GitOpsClusters with different modes, naming both', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.OCM);
    const all = new Placement(hub, 'all');
    GitOpsCluster.ocm(hub, 'managed', { placement: edgePlacement });
    GitOpsCluster.ocm(hub, 'autonomous', {
      placement: all,
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: REPO,
    });
    const message = synthError(fleet);
    expect(message).toContain(
      'spoke "e1" is selected by GitOpsCluster hub/GitOpsCluster:managed (agent-managed) and by hub/GitOpsCluster:autonomous (agent-autonomous)',
    );
  });

  test('fails when a hub mixes flavours, naming both GitOpsClusters', () => {
    const { fleet, hub, edgePlacement, corePlacement } = fleetOf(HubFlavor.ACM);
    GitOpsCluster.acm(hub, 'acm', { placement: edgePlacement });
    GitOpsCluster.ocm(hub, 'ocm', { placement: corePlacement });
    expect(synthError(fleet)).toContain(
      'GitOpsCluster hub/GitOpsCluster:ocm is OCM but GitOpsCluster hub/GitOpsCluster:acm is ACM',
    );
  });

  test('GIVEN an OCM hub WHEN its GitOpsCluster is made with GitOpsCluster.acm THEN synth names the factory to use', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.OCM);
    GitOpsCluster.acm(hub, 'agents', { placement: edgePlacement, model: DeliveryModel.AGENT_MANAGED });
    expect(synthError(fleet)).toContain(
      "GitOpsCluster hub/GitOpsCluster:agents is ACM but hub hub is OCM: a hub installs its own flavour's GitOpsCluster CRD; make it with GitOpsCluster.ocm",
    );
  });

  test('fails when a JavaScript caller gives an OCM GitOpsCluster ACM settings or BASIC, or an ACM one OCM settings', () => {
    const { fleet, hub, edgePlacement, corePlacement } = fleetOf(HubFlavor.OCM);
    // Props from JavaScript or JSON: the compiler would refuse them.
    GitOpsCluster.ocm(hub, 'a', { placement: edgePlacement, overrideExistingConfigs: true } as OcmGitOpsClusterProps);
    GitOpsCluster.ocm(hub, 'b', { placement: corePlacement, model: DeliveryModel.BASIC as never });
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/GitOpsCluster:a] overrideExistingConfigs is an ACM (v1beta1) setting, but GitOpsCluster.ocm renders the OCM (v1alpha1) GitOpsCluster: drop it',
    );
    expect(message).not.toContain('is not a prop of');
    expect(message).toContain('model BASIC needs no GitOpsCluster on an OCM hub');

    const acm = fleetOf(HubFlavor.ACM);
    GitOpsCluster.acm(acm.hub, 'c', {
      placement: acm.edgePlacement,
      agentNamespace: 'agents',
    } as AcmGitOpsClusterProps);
    expect(synthError(acm.fleet)).toContain(
      '[hub/GitOpsCluster:c] agentNamespace is an OCM (v1alpha1) setting, but GitOpsCluster.acm renders the ACM (v1beta1) GitOpsCluster: drop it',
    );
  });

  test('fails when an OCM GitOpsCluster is given a principal address without a port, or a port without an address, naming the construct, the prop and the fix', () => {
    const { fleet, hub, edgePlacement, corePlacement } = fleetOf(HubFlavor.OCM);
    GitOpsCluster.ocm(hub, 'address-only', {
      placement: edgePlacement,
      principalServerAddress: 'principal.example.com',
    });
    GitOpsCluster.ocm(hub, 'port-only', { placement: corePlacement, principalServerPort: 8443 });
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/GitOpsCluster:address-only] principalServerAddress "principal.example.com" is given without principalServerPort: the OCM GitOpsCluster controller discovers both from the principal\'s Service when either is empty and writes them into spec.argoCDAgentAddon, replacing the address given here, so the object drifts from Git: give principalServerPort too (for example 443), or neither to let the controller discover both',
    );
    expect(message).toContain(
      '[hub/GitOpsCluster:port-only] principalServerPort 8443 is given without principalServerAddress',
    );
  });

  test('fails when an ACM agent GitOpsCluster is given a principal address without a port', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.ACM);
    GitOpsCluster.acm(hub, 'edge-agents', {
      placement: edgePlacement,
      model: DeliveryModel.AGENT_MANAGED,
      principalServerAddress: 'principal.example.com',
    });
    expect(synthError(fleet)).toContain(
      '[hub/GitOpsCluster:edge-agents] principalServerAddress "principal.example.com" is given without principalServerPort: the ACM GitOpsCluster controller discovers both from the principal\'s Route or Service when either is empty and writes them into spec.gitopsAddon.argoCDAgent',
    );
  });

  test('fails when a GitOpsCluster is given an empty principal address, which the controller would overwrite', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.OCM);
    GitOpsCluster.ocm(hub, 'blank', {
      placement: edgePlacement,
      principalServerAddress: ' ',
      principalServerPort: 443,
    });
    expect(synthError(fleet)).toContain(
      '[hub/GitOpsCluster:blank] principalServerAddress is empty: leave it out (and principalServerPort too) to let the controller discover both, or give the address',
    );
  });

  test('GIVEN an OCM GitOpsCluster with both a principal address and port THEN both are rendered as given', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.OCM);
    GitOpsCluster.ocm(hub, 'edge-agents', {
      placement: edgePlacement,
      principalServerAddress: 'principal.example.com',
      principalServerPort: 8443,
    });
    const spec = find(fleet, 'GitOpsCluster', 'edge-agents').spec as { argoCDAgentAddon: Record<string, string> };
    expect(spec.argoCDAgentAddon).toMatchObject({
      principalServerAddress: 'principal.example.com',
      principalServerPort: '8443',
    });
  });

  test('fails when a principal port is not a port number', () => {
    const { fleet, hub, edgePlacement, corePlacement } = fleetOf(HubFlavor.OCM);
    GitOpsCluster.ocm(hub, 'zero', {
      placement: edgePlacement,
      principalServerAddress: 'principal.example.com',
      principalServerPort: 0,
    });
    GitOpsCluster.ocm(hub, 'fraction', {
      placement: corePlacement,
      principalServerAddress: 'principal.example.com',
      principalServerPort: 443.5,
    });
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/GitOpsCluster:zero] principalServerPort 0 is not a port number: give a whole number from 1 to 65535, for example 443',
    );
    expect(message).toContain('[hub/GitOpsCluster:fraction] principalServerPort 443.5 is not a port number');
  });

  test('an agent-autonomous GitOpsCluster needs a spoke folder repository (the compiler requires it; synth reports it missing for JavaScript callers), and no other model takes one', () => {
    const { fleet, hub, edgePlacement, corePlacement } = fleetOf(HubFlavor.OCM);
    // @ts-expect-error spokeFolderRepository is required with DeliveryModel.AGENT_AUTONOMOUS
    GitOpsCluster.ocm(hub, 'a', { placement: edgePlacement, model: DeliveryModel.AGENT_AUTONOMOUS });
    // @ts-expect-error spokeFolderRepository is only taken with DeliveryModel.AGENT_AUTONOMOUS
    GitOpsCluster.ocm(hub, 'b', { placement: corePlacement, spokeFolderRepository: REPO });
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/GitOpsCluster:a] an agent-autonomous spoke syncs its own folder from Git: give spokeFolderRepository',
    );
    expect(message).toContain(
      '[hub/GitOpsCluster:b] spokeFolderRepository is only used by agent-autonomous spokes, but the model is agent-managed: drop it',
    );
  });
});

describe('per-spoke delivery shapes', () => {
  test('GIVEN one static app on a basic, an agent-managed and an agent-autonomous spoke THEN each gets its own shape', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const set = new ClusterSet(hub, 'all');
    const basic = new Spoke(hub, 'basic', { clusterSet: set });
    const managed = new Spoke(hub, 'managed', { clusterSet: set, labels: { model: 'managed' } });
    const autonomous = new Spoke(hub, 'auto', { clusterSet: set, labels: { model: 'autonomous' } });
    GitOpsCluster.ocm(hub, 'managed', {
      placement: new Placement(hub, 'managed', { predicates: [{ labels: { model: 'managed' } }] }),
    });
    GitOpsCluster.ocm(hub, 'autonomous', {
      placement: new Placement(hub, 'autonomous', { predicates: [{ labels: { model: 'autonomous' } }] }),
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: REPO,
    });
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [basic, managed, autonomous] });
    expect([basic, managed, autonomous].map((s) => s.deliveryModel)).toStrictEqual([
      'basic',
      'agent-managed',
      'agent-autonomous',
    ]);

    const all = allObjects(fleet);
    const hubApps = all
      .filter(({ file, obj }) => obj.kind === 'Application' && file === 'hub/hub/applications.yaml')
      .map(({ obj }) => obj);
    expect(hubApps.map((a) => [a.metadata.name, a.metadata.labels?.['pullfleet.io/delivery-model']])).toStrictEqual([
      ['web-basic', 'basic'],
      ['web-managed', 'agent-managed'],
    ]);
    const managedApp = hubApps[1] as Obj & { spec: { destination: unknown } };
    expect(managedApp.spec.destination).toStrictEqual({ name: 'managed', namespace: 'web' });
    expect(managedApp.metadata.labels?.['apps.open-cluster-management.io/pull-to-ocm-managed-cluster']).toBeUndefined();
    expect(managedApp.metadata.annotations?.['argocd.argoproj.io/skip-reconcile']).toBeUndefined();

    const works = all
      .filter(({ obj }) => obj.kind === 'ManifestWork' && obj.metadata.name !== 'pullfleet-bootstrap')
      .map(({ obj }) => obj.metadata.namespace);
    expect(works).toStrictEqual(['basic']);

    const own = all
      .filter(({ file }) => file === 'hub/spokes/auto/applications.yaml')
      .map(({ obj }) => obj as Obj & { spec: { destination: unknown } });
    expect(own.map((o) => [o.kind, o.metadata.name, o.metadata.labels?.['pullfleet.io/delivery-model']])).toStrictEqual(
      [['Application', 'web-auto', 'agent-autonomous']],
    );
    expect(own[0].spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });

    const bootstrapApp = all.find(({ file, obj }) => file === 'hub/bootstrap/auto.yaml' && obj.kind === 'Application')!
      .obj as Obj & { spec: { source: unknown } };
    expect(bootstrapApp.metadata.name).toBe('pullfleet-spoke-apps');
    expect(bootstrapApp.spec.source).toStrictEqual({
      repoURL: 'https://git.example.com/fleet.git',
      targetRevision: 'HEAD',
      path: 'dist/hub/spokes/auto',
      directory: { recurse: true },
    });

    // OCM agent add-on registers agents: only the basic spoke gets a pullfleet cluster Secret.
    expect(all.filter(({ obj }) => obj.kind === 'Secret').map(({ obj }) => obj.metadata.name)).toStrictEqual([
      'basic-cluster-secret',
    ]);
  });

  test('GIVEN ApplicationSets on a managed and an autonomous placement THEN the managed template routes by {{name}} and the autonomous one renders per spoke', () => {
    const { fleet, hub, edgePlacement, corePlacement } = fleetOf(HubFlavor.OCM);
    GitOpsCluster.ocm(hub, 'edge', { placement: edgePlacement });
    GitOpsCluster.ocm(hub, 'core', {
      placement: corePlacement,
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: REPO,
    });
    new PullApplicationSet(hub, 'web', {
      source,
      destinationNamespace: 'web',
      placement: edgePlacement,
      project: 'web',
    });
    new PullApplicationSet(hub, 'api', { source, destinationNamespace: 'api', placement: corePlacement });
    const sets = ofKind(fleet, 'ApplicationSet').map(
      ({ obj }) => obj as Obj & { spec: { template: { metadata: Obj['metadata']; spec: { destination: unknown } } } },
    );
    expect(sets.map((s) => s.metadata.name)).toStrictEqual(['web']);
    const web = sets[0];
    expect(web.metadata.labels?.['pullfleet.io/delivery-model']).toBe('agent-managed');
    expect(web.spec.template.metadata.labels).toStrictEqual({
      'app.kubernetes.io/managed-by': 'pullfleet',
      'pullfleet.io/app': 'web',
      'pullfleet.io/delivery-model': 'agent-managed',
    });
    // No pull annotations; an Application the agent finds on a spoke (from a basic work) is updated in place, never recreated.
    expect(web.spec.template.metadata.annotations).toStrictEqual({
      'argocd.argoproj.io/source-uid-mismatch-policy': 'upsert',
    });
    expect(web.spec.template.spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'web' });
    expect(schemaFindings(web as never)).toStrictEqual([]);
    // The principal admits the project's apps to exactly the agents they target.
    const project = allObjects(fleet).find(
      ({ file, obj }) => file === 'hub/hub/agent-projects.yaml' && obj.kind === 'AppProject',
    )!.obj as Obj & { spec: unknown };
    expect(project.metadata.name).toBe('web');
    expect(project.spec).toStrictEqual({
      sourceRepos: ['https://git.example.com/apps.git'],
      destinations: [
        { name: 'e1', namespace: 'web' },
        { name: 'e2', namespace: 'web' },
      ],
    });
    const own = allObjects(fleet)
      .filter(({ file }) => file.startsWith('hub/spokes/'))
      .map(({ file, obj }) => [file, obj.metadata.name]);
    expect(own).toStrictEqual([['hub/spokes/c1/applications.yaml', 'c1-api']]);
  });

  test('fails when a basic and an agent-model app deliver the same Application to one spoke, naming both', () => {
    const { fleet, hub, edgePlacement } = fleetOf(HubFlavor.OCM);
    const all = new Placement(hub, 'all');
    GitOpsCluster.ocm(hub, 'edge', { placement: edgePlacement });
    new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement: edgePlacement });
    new PullApplicationSet(hub, 'web-basic', { name: 'web', source, destinationNamespace: 'web', placement: all });
    expect(synthError(fleet)).toContain(
      'delivers Application argocd/e1-web to spoke "e1" in the basic model, and hub/PullApplicationSet:web delivers the same Application there in the agent-managed model',
    );
  });
});
