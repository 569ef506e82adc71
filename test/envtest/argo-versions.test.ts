/**
 * Every Argo CD object pullfleet writes, against the Application, ApplicationSet and AppProject CRDs of every
 * Argo CD release users run (the latest patch of 2.14 to 3.5), on a real API server of its own
 * (test/support/version-matrix.ts): the example fleet's hub Applications, ApplicationSets and AppProjects
 * (the hub's Argo CD holds them), the Applications inside its ManifestWorks and the payload the controller
 * writes for each hub Application (a spoke's Argo CD holds those), and a fleet with both rollout paths.
 */
import { join } from 'node:path';
import { expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  DeletionOrder,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Rollout,
  Spoke,
} from '../../src/constructs/index.js';
import type { Application } from '../../src/model/core/types.js';
import { buildPayloadApplication, isPullApplication } from '../../src/model/delivery/manifestwork.js';
import { loadKubeConfig } from '../support/envtest-cluster.js';
import { type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import {
  checkReleases,
  dryRunServer,
  distObjects,
  releases,
  UPSTREAM_VERSIONS,
  type Located,
  type Requirement,
} from '../support/version-matrix.js';

const RELEASES = join(UPSTREAM_VERSIONS, 'argo-cd');

/** What pullfleet renders only when a fleet asks for it, with the first Argo CD release that has it. */
const REQUIRES: readonly Requirement[] = [
  { key: 'deletionOrder', refusal: '.spec.strategy.deletionOrder', since: 'v3.2' },
];

const ARGO = 'argoproj.io/v1alpha1';

/** The Argo CD objects of dist/ and of its works, and the payload of each pull hub Application. */
function argoObjects(): Located[] {
  return distObjects()
    .filter(({ object }) => object.apiVersion === ARGO)
    .flatMap((located) =>
      located.object.kind === 'Application' && isPullApplication(located.object as unknown as Application)
        ? [
            located,
            {
              object: buildPayloadApplication(located.object as unknown as Application) as unknown as RawObject,
              where: `${located.where} (the payload the controller writes)`,
            },
          ]
        : [located],
    );
}

/** A fleet with both rollout paths (a waved static app, a RollingSync ApplicationSet deleted in reverse). */
function rolloutObjects(): Located[] {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub');
  const set = new ClusterSet(hub, 'prod');
  const spokes = ['canary', 'east-1', 'west-1'].map(
    (name) => new Spoke(hub, name, { clusterSet: set, labels: { ring: name === 'canary' ? 'canary' : 'main' } }),
  );
  const waves = [
    { name: 'canary', labels: { ring: 'canary' } },
    { name: 'rest', rest: true },
  ];
  new PullApplication(hub, 'payments', {
    source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'payments' }),
    destinationNamespace: 'payments',
    spokes,
    rollout: Rollout.waves(waves),
  });
  new PullApplicationSet(hub, 'podinfo', {
    source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'podinfo' }),
    destinationNamespace: 'podinfo',
    placement: new Placement(hub, 'all', { clusterSets: [set] }),
    rollout: Rollout.waves(waves, { deletionOrder: DeletionOrder.REVERSE }),
  });
  const out: Located[] = [];
  for (const [file, list] of fleet.renderObjects())
    for (const object of list as RawObject[])
      if (object.apiVersion === ARGO) out.push({ object, where: `rollout fixture ${file}` });
  return out;
}

describeRealServer('every Argo CD release users run', () => {
  const objects = [...argoObjects(), ...rolloutObjects()];
  const server = dryRunServer(objects);

  test('the objects cover hub Applications, ApplicationSets, AppProjects, spoke Applications and each requirement', () => {
    const kinds = new Set(objects.map((o) => `${o.object.kind} ${o.where.includes('(in work') ? 'spoke' : 'hub'}`));
    for (const kind of ['Application hub', 'ApplicationSet hub', 'AppProject hub', 'Application spoke'])
      expect(kinds).toContain(kind);
    for (const { key } of REQUIRES)
      expect(objects.some((o) => JSON.stringify(o.object).includes(`"${key}"`))).toBe(true);
    expect(releases(RELEASES).length).toBeGreaterThanOrEqual(7);
  });

  test('each release accepts every object, but for the fields the fleet asks for that the release lacks', async () => {
    const result = await checkReleases(loadKubeConfig(server.kubeconfigPath), RELEASES, objects, REQUIRES);
    expect(result).toStrictEqual({ unexplained: [], unexpectedlyAccepted: [] });
  }, 600_000);
});
