/**
 * An OpenShift spoke older than Kubernetes 1.30 (OpenShift 4.17) cannot apply a ValidatingAdmissionPolicy v1:
 * declared so (or pulled so into the inventory), its bootstrap leaves the Route CRD guardrail out.
 */
import { describe, expect, test } from '@jest/globals';
import { Inventory, Spoke } from '../../src/constructs/index.js';
import { allObjects, smallFleet, synthError } from './helpers.js';

const bootstrapKinds = (fleet: Parameters<typeof allObjects>[0], spoke: string) =>
  allObjects(fleet)
    .filter(({ file }) => file === `hub/bootstrap/${spoke}.yaml`)
    .map(({ obj }) => obj.kind);

describe('Spoke kubernetesVersion', () => {
  test('GIVEN OpenShift spokes on 1.29 (as the server reports it), on 1.30 and of unknown version THEN only the 1.29 one lacks the guardrail', () => {
    const { fleet, hub } = smallFleet();
    new Spoke(hub, 'ocp-416', { openshift: true, kubernetesVersion: 'v1.29.5+rhcos' });
    new Spoke(hub, 'ocp-417', { openshift: true, kubernetesVersion: '1.30' });
    expect(bootstrapKinds(fleet, 'ocp-416')).not.toContain('ValidatingAdmissionPolicy');
    expect(bootstrapKinds(fleet, 'ocp-417')).toContain('ValidatingAdmissionPolicy');
    expect(bootstrapKinds(fleet, 'ocp')).toContain('ValidatingAdmissionPolicy');
  });

  test('fails when the version is not a Kubernetes version, naming the prop and the form to use', () => {
    const { fleet, hub } = smallFleet();
    new Spoke(hub, 'odd', { openshift: true, kubernetesVersion: '4.16 (OpenShift)' });
    expect(synthError(fleet)).toContain(
      `kubernetesVersion "4.16 (OpenShift)" is not a Kubernetes version: give major.minor, for example '1.29', or the version the server reports, for example 'v1.29.5'`,
    );
  });

  test('GIVEN an inventory entry with a version THEN the spoke it makes has it', () => {
    const { fleet, hub } = smallFleet();
    const inventory = Inventory.fromText(
      [
        'apiVersion: pullfleet.io/v1alpha1',
        'kind: Inventory',
        'hub: hub',
        'clusterSets: []',
        'clusters:',
        '  - name: edge-1',
        '    openshift: true',
        '    kubernetesVersion: "1.29"',
        '    clusterSets: []',
        '    labels:',
        '      vendor: OpenShift',
        '    claims: {}',
        '    taints: []',
        '',
      ].join('\n'),
      'inventory/hub.yaml',
    );
    const [spoke] = hub.addInventory(inventory);
    expect(spoke?.kubernetesVersion).toBe('1.29');
    expect(bootstrapKinds(fleet, 'edge-1')).not.toContain('ValidatingAdmissionPolicy');
  });
});
