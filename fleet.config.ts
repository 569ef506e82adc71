/**
 * The example fleet: one OCM hub, three spokes (one OpenShift), two cluster sets, two placements,
 * guestbook delivered statically and podinfo through an ApplicationSet.
 * `npm run synth` type-checks it and renders it into dist/. Edit it freely: the tests render fleets of
 * their own (test/fixtures/), and CI checks that dist/ is what synth makes of this file.
 */
import { pathToFileURL } from 'node:url';
import { AppSource, ClusterSet, Fleet, FleetValidationError, Hub, Placement, PullApplication, PullApplicationSet, Spoke, type FleetProps } from 'pullfleet';

/** Builds the example fleet (without writing anything; `synth()` writes it). */
export function buildFleet(props: FleetProps = {}): Fleet {
  const fleet = new Fleet(props);
  const hub = new Hub(fleet, 'hub', { argoNamespace: 'argocd' });

  // Production clusters join `prod` through the exclusive cluster-set label; `openshift` collects
  // every OpenShift cluster by its vendor label.
  const prod = new ClusterSet(hub, 'prod');
  const openshift = new ClusterSet(hub, 'openshift', { matchLabels: { vendor: 'OpenShift' } });

  new Spoke(hub, 'prod-east', { clusterSet: prod, labels: { region: 'us-east-1', env: 'prod' } });
  new Spoke(hub, 'prod-west', { clusterSet: prod, labels: { region: 'us-west-2', env: 'prod' } });
  new Spoke(hub, 'ocp-edge', { openshift: true, labels: { region: 'eu-central-1', env: 'prod' } });

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
    syncOptions: ['ServerSideApply=true'],
    resources: [
      { apiGroup: '', resources: ['configmaps', 'services'] },
      { apiGroup: 'apps', resources: ['deployments'] },
      { apiGroup: 'autoscaling', resources: ['horizontalpodautoscalers'] },
    ],
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
