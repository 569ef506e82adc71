/**
 * The example fleet: an OCM hub with three basic spokes (one OpenShift), guestbook delivered statically,
 * payments statically in waves, and podinfo through an ApplicationSet in waves (RollingSync), plus an
 * agent-autonomous store group; and an ACM hub whose
 * GitOpsClusters run argocd-agent in managed mode for retail clusters and keep branches on the basic model.
 * `npm run synth` type-checks it and renders it into dist/. Edit it freely: the tests render fleets of
 * their own (test/fixtures/), and CI checks that dist/ is what synth makes of this file.
 */
import { pathToFileURL } from 'node:url';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  FleetValidationError,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Rollout,
  Spoke,
  SyncOption,
  WaveLimit,
  type FleetProps,
} from 'pullfleet';
import { Duration } from 'cdk8s';

/** Builds the example fleet (without writing anything; `synth()` writes it). */
export function buildFleet(props: FleetProps = {}): Fleet {
  const fleet = new Fleet(props);
  const hub = new Hub(fleet, 'hub', { argoNamespace: 'argocd' });

  // Production clusters join `prod` through the exclusive cluster-set label; `openshift` collects
  // every OpenShift cluster by its vendor label.
  const prod = new ClusterSet(hub, 'prod');
  const openshift = new ClusterSet(hub, 'openshift', { matchLabels: { vendor: 'OpenShift' } });

  const prodEast = new Spoke(hub, 'prod-east', { clusterSet: prod, labels: { region: 'us-east-1', env: 'prod' } });
  const prodWest = new Spoke(hub, 'prod-west', { clusterSet: prod, labels: { region: 'us-west-2', env: 'prod' } });
  const ocpEdge = new Spoke(hub, 'ocp-edge', { openshift: true, labels: { region: 'eu-central-1', env: 'prod' } });

  const east = new Placement(hub, 'prod-us-east', {
    clusterSets: [prod],
    predicates: [{ labels: { region: 'us-east-1' } }],
  });
  const allProd = new Placement(hub, 'all-prod', {
    clusterSets: [prod, openshift],
    predicates: [{ labels: { env: 'prod' } }],
  });

  // Static delivery: synth renders the hub Application and the ManifestWork for each selected spoke.
  new PullApplication(hub, 'guestbook', {
    source: AppSource.git({
      repoURL: 'https://github.com/argoproj/argocd-example-apps.git',
      path: 'guestbook',
      targetRevision: 'HEAD',
    }),
    destinationNamespace: 'guestbook',
    placement: east,
    resources: [
      { apiGroup: '', resources: ['services'] },
      { apiGroup: 'apps', resources: ['deployments'] },
    ],
  });

  // Static delivery in waves: the controller writes each spoke's work when its wave comes, halting on a failure.
  new PullApplication(hub, 'payments', {
    source: AppSource.git({
      repoURL: 'https://github.com/argoproj/argocd-example-apps.git',
      path: 'helm-guestbook',
      targetRevision: 'HEAD',
    }),
    destinationNamespace: 'payments',
    spokes: [prodEast, prodWest, ocpEdge],
    resources: [
      { apiGroup: '', resources: ['services'] },
      { apiGroup: 'apps', resources: ['deployments'] },
    ],
    rollout: Rollout.waves(
      [
        { name: 'canary', spokes: [ocpEdge], soak: Duration.minutes(15) },
        { name: 'us', rest: true, maxInFlight: WaveLimit.count(1), soak: Duration.minutes(5) },
      ],
      { progressDeadline: Duration.minutes(10) },
    ),
  });

  // Dynamic delivery: the ApplicationSet follows the placement's decisions at runtime.
  new PullApplicationSet(hub, 'podinfo', {
    source: AppSource.helm({
      repoURL: 'https://stefanprodan.github.io/podinfo',
      chart: 'podinfo',
      targetRevision: '6.7.1',
      values: { replicaCount: 2 },
    }),
    destinationNamespace: 'podinfo',
    placement: allProd,
    syncOptions: [SyncOption.SERVER_SIDE_APPLY],
    // Argo CD's RollingSync: the edge cluster first, then the US clusters one at a time.
    rollout: Rollout.waves([
      { name: 'edge', labels: { region: 'eu-central-1' } },
      { name: 'us', rest: true, maxInFlight: WaveLimit.count(1) },
    ]),
    resources: [
      { apiGroup: '', resources: ['configmaps', 'services'] },
      { apiGroup: 'apps', resources: ['deployments'] },
      { apiGroup: 'autoscaling', resources: ['horizontalpodautoscalers'] },
    ],
  });

  // agent-autonomous: store clusters own their Applications; each syncs dist/hub/spokes/<spoke>/ with
  // its own Argo CD, and the hub shows the status argocd-agent mirrors.
  const stores = new ClusterSet(hub, 'stores');
  new Spoke(hub, 'store-001', { clusterSet: stores, labels: { region: 'us-east-1', env: 'stores' } });
  new Spoke(hub, 'store-002', { clusterSet: stores, labels: { region: 'us-west-2', env: 'stores' } });
  const storePlacement = new Placement(hub, 'stores', { clusterSets: [stores] });
  GitOpsCluster.ocm(hub, 'stores', {
    placement: storePlacement,
    model: DeliveryModel.AGENT_AUTONOMOUS,
    principalServerAddress: 'argocd-agent-principal.hub.example.com',
    principalServerPort: 443,
    spokeFolderRepository: { repoURL: 'https://github.com/example/fleet.git' },
  });
  new PullApplication(hub, 'store-api', {
    source: AppSource.git({
      repoURL: 'https://github.com/argoproj/argocd-example-apps.git',
      path: 'helm-guestbook',
      targetRevision: 'HEAD',
    }),
    destinationNamespace: 'store-api',
    placement: storePlacement,
    resources: [
      { apiGroup: '', resources: ['services'] },
      { apiGroup: 'apps', resources: ['deployments'] },
    ],
  });

  // A second hub on ACM: GitOpsCluster v1beta1 registers every cluster (blank cluster Secrets); the
  // retail placement runs argocd-agent in managed mode, the branch placement keeps the basic model with
  // the spoke Argo CD installed by the gitops add-on.
  const acm = new Hub(fleet, 'acm-hub', { flavor: HubFlavor.ACM });
  const retail = new ClusterSet(acm, 'retail');
  const branches = new ClusterSet(acm, 'branches');
  new Spoke(acm, 'retail-eu-1', { clusterSet: retail, openshift: true });
  new Spoke(acm, 'retail-us-1', { clusterSet: retail, openshift: true });
  new Spoke(acm, 'branch-nyc', { clusterSet: branches, openshift: true });
  const retailPlacement = new Placement(acm, 'retail', { clusterSets: [retail] });
  const branchPlacement = new Placement(acm, 'branches', { clusterSets: [branches] });
  GitOpsCluster.acm(acm, 'retail-agents', {
    placement: retailPlacement,
    model: DeliveryModel.AGENT_MANAGED,
    principalServerAddress: 'openshift-gitops-agent-principal.apps.acm.example.com',
    principalServerPort: 443,
  });
  GitOpsCluster.acm(acm, 'branch-gitops', {
    placement: branchPlacement,
    model: DeliveryModel.BASIC,
    gitopsAddon: true,
  });
  const podinfoSource = AppSource.helm({
    repoURL: 'https://stefanprodan.github.io/podinfo',
    chart: 'podinfo',
    targetRevision: '6.7.1',
  });
  const podinfoGrants = [
    { apiGroup: '', resources: ['configmaps', 'services'] },
    { apiGroup: 'apps', resources: ['deployments'] },
  ];
  // agent-managed: the ApplicationSet template routes each Application to its agent by destination name.
  // Project `retail` gets a hub AppProject listing the agents as destinations.
  new PullApplicationSet(acm, 'podinfo', {
    source: podinfoSource,
    destinationNamespace: 'podinfo',
    placement: retailPlacement,
    project: 'retail',
    resources: podinfoGrants,
  });
  // basic: a hub Application and a ManifestWork per branch cluster.
  new PullApplication(acm, 'branch-podinfo', {
    source: podinfoSource,
    destinationNamespace: 'podinfo',
    placement: branchPlacement,
    resources: podinfoGrants,
  });

  return fleet;
}

// `cdk8s synth` runs this file: validate the whole fleet, then write it (nothing is written on a problem).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    buildFleet().synth();
  } catch (error) {
    if (!(error instanceof FleetValidationError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  }
}
