/**
 * Every OCM and ACM object pullfleet writes, against the CRDs of every release users run, on a real API
 * server of its own (test/support/version-matrix.ts): OCM v0.16 to v1.3 (ManifestWork, Placement,
 * ManagedClusterSet, ManagedClusterSetBinding, …) and ACM 2.13 to 2.17 (GitOpsCluster v1beta1,
 * MulticlusterApplicationSetReport). The example fleet's objects, and its works without the resource summary
 * rule (what `resourceSummaries: false` renders for a hub before OCM 1.0).
 */
import { join } from 'node:path';
import { expect, test } from '@jest/globals';
import { loadKubeConfig } from '../support/envtest-cluster.js';
import { type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import {
  checkReleases,
  dryRunServer,
  distObjects,
  UPSTREAM_VERSIONS,
  type Located,
  type Requirement,
} from '../support/version-matrix.js';

const OCM_GROUPS = ['work.open-cluster-management.io/', 'cluster.open-cluster-management.io/'];
const ACM_GITOPS = 'apps.open-cluster-management.io/v1beta1';

/** Fields only newer OCM releases have: the resource summary rule (OCM 1.0; `resourceSummaries: false` leaves it out). */
const OCM_REQUIRES: readonly Requirement[] = [{ key: 'conditionRules', refusal: 'conditionRules', since: 'v1.0' }];

/** The gitops add-on settings (and with them the agent models) of an ACM GitOpsCluster: ACM 2.15. */
const ACM_REQUIRES: readonly Requirement[] = [{ key: 'gitopsAddon', refusal: '.spec.gitopsAddon', since: '2.15' }];

const ofGroup = (groups: readonly string[]) => (l: Located) =>
  groups.some((g) => String(l.object.apiVersion).startsWith(g));

/** The example fleet's works without the summary rule (what `resourceSummaries: false` renders for a hub before OCM 1.0). */
function worksWithoutSummaries(dist: readonly Located[]): Located[] {
  return dist
    .filter((l) => l.object.kind === 'ManifestWork' && JSON.stringify(l.object).includes('"conditionRules"'))
    .map(({ object, where }) => {
      const work = structuredClone(object) as RawObject & {
        spec: { manifestConfigs?: Array<Record<string, unknown>> };
      };
      for (const config of work.spec.manifestConfigs ?? []) delete config.conditionRules;
      return { object: work, where: `${where} (without the summary rule)` };
    });
}

describeRealServer('every OCM and ACM release users run', () => {
  const dist = distObjects();
  const ocm = [...dist.filter(ofGroup(OCM_GROUPS)), ...worksWithoutSummaries(dist)];
  const acm = dist.filter((l) => l.object.apiVersion === ACM_GITOPS);
  const server = dryRunServer([...ocm, ...acm]);

  test('the objects cover works with and without the summary rule, placements, cluster sets and ACM GitOpsClusters', () => {
    const kinds = new Set(ocm.map((l) => l.object.kind));
    for (const kind of ['ManifestWork', 'Placement', 'ManagedClusterSet', 'ManagedClusterSetBinding'])
      expect(kinds).toContain(kind);
    expect(ocm.some((l) => JSON.stringify(l.object).includes('"conditionRules"'))).toBe(true);
    expect(
      ocm.some((l) => l.object.kind === 'ManifestWork' && !JSON.stringify(l.object).includes('"conditionRules"')),
    ).toBe(true);
    expect(acm.some((l) => JSON.stringify(l.object).includes('"gitopsAddon"'))).toBe(true);
  });

  test('each OCM release accepts every object, but for the summary rule before OCM 1.0', async () => {
    const result = await checkReleases(
      loadKubeConfig(server.kubeconfigPath),
      join(UPSTREAM_VERSIONS, 'ocm'),
      ocm,
      OCM_REQUIRES,
    );
    expect(result).toStrictEqual({ unexplained: [], unexpectedlyAccepted: [] });
  }, 600_000);

  test('each ACM release accepts every GitOpsCluster, but for the gitops add-on settings before ACM 2.15', async () => {
    const result = await checkReleases(
      loadKubeConfig(server.kubeconfigPath),
      join(UPSTREAM_VERSIONS, 'acm'),
      acm,
      ACM_REQUIRES,
    );
    expect(result).toStrictEqual({ unexplained: [], unexpectedlyAccepted: [] });
  }, 600_000);
});
