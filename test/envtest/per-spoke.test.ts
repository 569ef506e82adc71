/**
 * Values per spoke on a real API server: the ApplicationSet that reads spoke labels (a matrix of the
 * clusterDecisionResource and cluster generators), the cluster Secrets carrying the mirrored labels, and the
 * per-spoke hub Applications and payloads of a static app, dry-run against the Argo CD CRDs of every release
 * users run (2.14 to 3.5, each declared as the hub's release, which the feature table admits: the matrix reads
 * the first generator's parameters from 2.5). A hub declaring an older release is refused at synth.
 */
import { join } from 'node:path';
import { expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
  SpokeParam,
} from '../../src/constructs/index.js';
import type { Application } from '../../src/model/core/types.js';
import { buildPayloadApplication, isPullApplication } from '../../src/model/delivery/manifestwork.js';
import { loadKubeConfig } from '../support/envtest-cluster.js';
import { type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { checkReleases, dryRunServer, releases, UPSTREAM_VERSIONS, type Located } from '../support/version-matrix.js';

const RELEASES = join(UPSTREAM_VERSIONS, 'argo-cd');

/** The fleet, its hub declaring Argo CD `argoCD`. */
function fleetOn(argoCD: string): Fleet {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub', { versions: { argoCD } });
  const prod = new ClusterSet(hub, 'prod');
  const spokes = [
    new Spoke(hub, 'east', { clusterSet: prod, labels: { region: 'us-east', 'topology.example.com/zone': 'a' } }),
    new Spoke(hub, 'west', { clusterSet: prod, labels: { region: 'us-west', 'topology.example.com/zone': 'b' } }),
  ];
  new PullApplicationSet(hub, 'api', {
    sources: [
      AppSource.helm({
        repoURL: 'https://charts.example.com',
        chart: 'api',
        targetRevision: '1.0.0',
        valueFiles: [`$values/api/${SpokeParam.label('region')}.yaml`],
        values: { region: SpokeParam.label('region'), zone: SpokeParam.label('topology.example.com/zone') },
      }),
      AppSource.ref('values', { repoURL: 'https://git.example.com/values.git' }),
    ],
    destinationNamespace: 'api',
    placement: new Placement(hub, 'all', { clusterSets: [prod] }),
  });
  new PullApplication(hub, 'web', {
    source: AppSource.kustomize({ repoURL: 'https://git.example.com/web.git', path: 'base', images: ['nginx:1.25'] }),
    destinationNamespace: 'web',
    spokes,
    perSpoke: (spoke) => ({ namePrefix: `${spoke.name}-`, commonLabels: { region: spoke.labels.region } }),
  });
  return fleet;
}

function objectsOf(fleet: Fleet): Located[] {
  const out: Located[] = [];
  for (const [file, list] of fleet.renderObjects())
    for (const object of list as RawObject[]) {
      if (object.apiVersion === 'argoproj.io/v1alpha1' || object.kind === 'Secret')
        out.push({ object, where: `per-spoke fixture ${file}` });
      if (object.kind === 'Application' && isPullApplication(object))
        out.push({
          object: buildPayloadApplication(object as unknown as Application) as unknown as RawObject,
          where: `per-spoke fixture ${file} (payload)`,
        });
    }
  return out;
}

describeRealServer('values per spoke against every Argo CD release users run', () => {
  const versions = releases(RELEASES);
  const perRelease = new Map(versions.map((release) => [release, objectsOf(fleetOn(release))]));
  // Declaring another release changes nothing these objects carry: each distinct object is dry-run once per release.
  const seen = new Set<string>();
  const all = [...perRelease.values()].flat().filter((o) => {
    const key = JSON.stringify(o.object);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const server = dryRunServer(all);

  test('the fixture renders the matrix ApplicationSet, labelled cluster Secrets and per-spoke Applications', () => {
    expect(versions.length).toBeGreaterThanOrEqual(7);
    const objects = perRelease.get(versions[0])!;
    const appSet = objects.find((o) => o.object.kind === 'ApplicationSet')!.object as RawObject & {
      spec: { generators: Array<{ matrix?: unknown }> };
    };
    expect(appSet.spec.generators[0].matrix).toBeDefined();
    const secret = objects.find((o) => o.object.kind === 'Secret' && o.object.metadata.name === 'east-cluster-secret')!;
    expect(secret.object.metadata.labels).toMatchObject({
      'pullfleet.io/cluster': 'east',
      'spoke.pullfleet.io/region': 'us-east',
      'topology.example.com.spoke.pullfleet.io/zone': 'a',
    });
  });

  test('each release, declared as the hub release, synthesizes, and its CRDs accept every object', async () => {
    const result = await checkReleases(loadKubeConfig(server.kubeconfigPath), RELEASES, all, []);
    expect(result).toStrictEqual({ unexplained: [], unexpectedlyAccepted: [] });
    expect(all.some((o) => o.object.kind === 'ApplicationSet')).toBe(true);
  }, 600_000);

  test('a hub declaring Argo CD 2.4 is refused at synth through the feature table', () => {
    expect(() => fleetOn('2.4').renderObjects()).toThrow(
      /which needs hub Argo CD 2\.5 or later, but hub "hub" declares hub Argo CD 2\.4/,
    );
  });
});
