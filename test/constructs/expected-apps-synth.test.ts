import { describe, expect, test } from '@jest/globals';
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
import { EXPECTED_APPLICATIONS_LABEL, parseExpectedApplications } from '../../src/model/reconcile/expected-apps.js';
import { schemaFindings } from '../../src/validate/schema.js';
import { allObjects, type Obj } from './helpers.js';
import { buildFleet } from '../fixtures/example-fleet.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });
const EXPECTED_FILE = 'hub/hub/expected-applications.yaml';

/** Application names per spoke folder (`<hub>/spokes/<spoke>/applications.yaml`), sorted. */
function folderApplications(objects: Array<{ file: string; obj: Obj }>, hub: string): Map<string, string[]> {
  const folders = new Map<string, string[]>();
  for (const { file, obj } of objects) {
    const match = new RegExp(`^${hub}/spokes/([^/]+)/applications\\.yaml$`).exec(file);
    if (!match || obj.kind !== 'Application') continue;
    folders.set(match[1], [...(folders.get(match[1]) ?? []), obj.metadata.name].sort());
  }
  return folders;
}

/** The expectation lists rendered on `hub`, parsed back, per spoke. */
function expectationLists(
  objects: Array<{ file: string; obj: Obj }>,
  hub: string,
): Map<string, { applications: readonly string[]; folder?: string; namespace?: string }> {
  const lists = new Map<string, { applications: readonly string[]; folder?: string; namespace?: string }>();
  for (const { file, obj } of objects) {
    if (obj.metadata.labels?.[EXPECTED_APPLICATIONS_LABEL] === undefined || !file.startsWith(`${hub}/`)) continue;
    expect(file).toBe(`${hub}/hub/expected-applications.yaml`);
    const parsed = parseExpectedApplications(obj);
    if (!parsed.expected) throw new Error(parsed.problem);
    lists.set(parsed.expected.cluster, {
      applications: parsed.expected.applications,
      folder: parsed.expected.folder,
      namespace: obj.metadata.namespace,
    });
  }
  return lists;
}

describe('expected-Application lists rendered for agent-autonomous spokes', () => {
  test('GIVEN the example fleet THEN every autonomous spoke gets one ConfigMap on its hub listing exactly the Applications of its folder', () => {
    const objects = allObjects(buildFleet({ outdir: '/nonexistent/never-written' }));
    const folders = folderApplications(objects, 'hub');
    expect([...folders.keys()].sort()).toStrictEqual(['store-001', 'store-002']);
    const lists = expectationLists(objects, 'hub');
    expect([...lists.keys()].sort()).toStrictEqual([...folders.keys()].sort());
    for (const [spoke, names] of folders) {
      expect(lists.get(spoke)).toStrictEqual({
        applications: names,
        folder: `dist/hub/spokes/${spoke}`,
        namespace: 'argocd',
      });
    }
    // The other hub has no autonomous spoke, so no list and no file.
    expect(expectationLists(objects, 'acm-hub').size).toBe(0);
    expect(objects.some(({ file }) => file === 'acm-hub/hub/expected-applications.yaml')).toBe(false);
    for (const { file, obj } of objects)
      if (file.endsWith('expected-applications.yaml')) expect(schemaFindings(obj as never)).toStrictEqual([]);
  });

  test('GIVEN static apps and an ApplicationSet on an autonomous placement, plus a managed and a basic spoke THEN only autonomous spokes get a list, with every app of their folder, sorted', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'edge-hub');
    const stores = new ClusterSet(hub, 'stores');
    const retail = new ClusterSet(hub, 'retail');
    const s1 = new Spoke(hub, 's1', { clusterSet: stores });
    const s2 = new Spoke(hub, 's2', { clusterSet: stores });
    const r1 = new Spoke(hub, 'r1', { clusterSet: retail });
    const basic = new Spoke(hub, 'b1');
    const storePlacement = new Placement(hub, 'stores', { clusterSets: [stores] });
    GitOpsCluster.ocm(hub, 'stores', {
      placement: storePlacement,
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: { repoURL: 'https://git.example.com/fleet.git', outputPath: 'platform/out/' },
    });
    GitOpsCluster.ocm(hub, 'retail', {
      placement: new Placement(hub, 'retail', { clusterSets: [retail] }),
      model: DeliveryModel.AGENT_MANAGED,
    });
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [s1, s2, r1, basic] });
    new PullApplication(hub, 'api', { source, destinationNamespace: 'api', spokes: [s2] });
    new PullApplicationSet(hub, 'cache', { source, destinationNamespace: 'cache', placement: storePlacement });

    const objects = allObjects(fleet);
    const folders = folderApplications(objects, 'edge-hub');
    expect(Object.fromEntries(folders)).toStrictEqual({
      s1: ['s1-cache', 'web-s1'],
      s2: ['api-s2', 's2-cache', 'web-s2'],
    });
    const lists = expectationLists(objects, 'edge-hub');
    expect(Object.fromEntries(lists)).toStrictEqual({
      s1: { applications: ['s1-cache', 'web-s1'], folder: 'platform/out/edge-hub/spokes/s1', namespace: 'argocd' },
      s2: {
        applications: ['api-s2', 's2-cache', 'web-s2'],
        folder: 'platform/out/edge-hub/spokes/s2',
        namespace: 'argocd',
      },
    });
    const configMap = objects.find(({ obj }) => obj.metadata.name === 'pullfleet-expected-s2')!.obj;
    expect(configMap.metadata.labels).toStrictEqual({
      'app.kubernetes.io/managed-by': 'pullfleet',
      [EXPECTED_APPLICATIONS_LABEL]: 's2',
    });
    expect(configMap.metadata.annotations?.['pullfleet.io/construct-path']).toBe('edge-hub/ExpectedApplications/s2');
    expect((configMap as Obj & { data: unknown }).data).toStrictEqual({
      applications: 'api-s2\ns2-cache\nweb-s2\n',
      folder: 'platform/out/edge-hub/spokes/s2',
    });
  });

  test('GIVEN a hub without agent-autonomous spokes THEN no expected-applications file is rendered', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const east = new Spoke(hub, 'east');
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [east] });
    expect([...fleet.renderObjects().keys()]).not.toContain(EXPECTED_FILE);
    expect(
      allObjects(fleet).filter(({ obj }) => obj.metadata.labels?.[EXPECTED_APPLICATIONS_LABEL] !== undefined),
    ).toStrictEqual([]);
  });
});
