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
    for (const [file, content] of first) if (file.endsWith('.yaml')) expect(content.startsWith(GENERATED_HEADER)).toBe(true);
  });

  test('the fixture has what the README says of the shipped example: 3 spokes (1 OpenShift), 2 cluster sets, 2 placements, 1 static app, 1 ApplicationSet', () => {
    const objects = [...buildFleet().renderObjects().entries()].flatMap(([file, list]) => list.map((o) => ({ file, o: o as { kind: string; metadata: { name: string; namespace?: string } } })));
    const names = (kind: string) => objects.filter(({ o }) => o.kind === kind).map(({ o }) => o.metadata.name);
    expect(names('ManagedClusterSet')).toStrictEqual(['prod', 'openshift']);
    expect(names('Placement')).toStrictEqual(['prod-us-east', 'all-prod']);
    expect(names('Secret').sort()).toStrictEqual(['ocp-edge-cluster-secret', 'prod-east-cluster-secret', 'prod-west-cluster-secret']);
    expect(names('Application')).toStrictEqual(['guestbook-prod-east']);
    expect(names('ApplicationSet')).toStrictEqual(['podinfo']);
    expect(names('ValidatingAdmissionPolicy')).toStrictEqual(['pullfleet-deny-duplicate-route-crd']);
    expect(objects.filter(({ o }) => o.kind === 'ValidatingAdmissionPolicy').map(({ file }) => file)).toStrictEqual(['hub/bootstrap/ocp-edge.yaml']);
  });
});
