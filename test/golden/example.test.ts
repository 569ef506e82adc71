import { describe, expect, test } from '@jest/globals';
import { buildFleet } from '../fixtures/example-fleet.js';
import { GENERATED_HEADER } from '../../src/constructs/index.js';

describe('example fleet (test/fixtures/example-fleet.ts)', () => {
  test('GIVEN the example THEN the rendered dist/ tree matches the golden snapshot', () => {
    expect(Object.fromEntries(buildFleet().renderFiles())).toMatchSnapshot();
  });

  test('two synths are byte-identical', () => {
    const first = buildFleet().renderFiles();
    const second = buildFleet().renderFiles();
    expect([...second.entries()]).toStrictEqual([...first.entries()]);
    for (const [file, content] of first)
      if (file.endsWith('.yaml')) expect(content.startsWith(GENERATED_HEADER)).toBe(true);
  });

  test('the fixture has what the README says of the shipped example: an OCM hub with 3 basic spokes and 2 agent-autonomous ones, an ACM hub with 2 agent-managed spokes and 1 basic', () => {
    const objects = [...buildFleet().renderObjects().entries()].flatMap(([file, list]) =>
      list.map((o) => ({
        file,
        o: o as {
          kind: string;
          apiVersion: string;
          metadata: { name: string; namespace?: string; labels?: Record<string, string> };
        },
      })),
    );
    const names = (kind: string, hub = 'hub/') =>
      objects.filter(({ o, file }) => o.kind === kind && file.startsWith(hub)).map(({ o }) => o.metadata.name);
    expect(names('ManagedClusterSet')).toStrictEqual(['prod', 'openshift', 'stores']);
    expect(names('Placement')).toStrictEqual(['prod-us-east', 'all-prod', 'stores']);
    expect(names('Secret').sort()).toStrictEqual([
      'ocp-edge-cluster-secret',
      'prod-east-cluster-secret',
      'prod-west-cluster-secret',
    ]);
    expect(names('Application').sort()).toStrictEqual([
      'guestbook-prod-east',
      'pullfleet-spoke-apps',
      'pullfleet-spoke-apps',
      'store-api-store-001',
      'store-api-store-002',
    ]);
    expect(names('ApplicationSet')).toStrictEqual(['podinfo']);
    expect(names('ValidatingAdmissionPolicy')).toStrictEqual(['pullfleet-deny-duplicate-route-crd']);
    expect(
      objects
        .filter(({ o, file }) => o.kind === 'ValidatingAdmissionPolicy' && file.startsWith('hub/'))
        .map(({ file }) => file),
    ).toStrictEqual(['hub/bootstrap/ocp-edge.yaml']);
    expect(
      objects.filter(({ o }) => o.kind === 'GitOpsCluster').map(({ o, file }) => [file, o.apiVersion, o.metadata.name]),
    ).toStrictEqual([
      ['acm-hub/hub/gitops-clusters.yaml', 'apps.open-cluster-management.io/v1beta1', 'retail-agents'],
      ['acm-hub/hub/gitops-clusters.yaml', 'apps.open-cluster-management.io/v1beta1', 'branch-gitops'],
      ['hub/hub/gitops-clusters.yaml', 'apps.open-cluster-management.io/v1alpha1', 'stores'],
    ]);
    // Every model shows in dist/: basic works, an agent-routed ApplicationSet, autonomous spoke folders.
    const models = new Set(
      objects
        .filter(({ o }) => o.kind === 'Application' || o.kind === 'ApplicationSet')
        .map(({ o }) => o.metadata.labels?.['pullfleet.io/delivery-model']),
    );
    expect([...models].sort()).toStrictEqual(['agent-autonomous', 'agent-managed', 'basic']);
    expect(names('Secret', 'acm-hub/')).toStrictEqual([]);
    expect(names('ManifestWork', 'acm-hub/').filter((n) => n !== 'pullfleet-bootstrap')).toStrictEqual([
      'openshift-gitops-branch-podinfo-branch-nyc',
    ]);
    expect(names('AppProject', 'acm-hub/hub/agent-projects')).toStrictEqual(['retail']);
  });
});
