/**
 * kube-apiserver 1.28 (as OpenShift 4.15) serves no admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy.
 * The bootstrap of an OpenShift spoke declared on 1.28 applies there in full; one whose version is not
 * declared carries the guardrail as v1, which such a server refuses (so the whole bootstrap work would
 * stay Applied=False).
 */
import { expect, test } from '@jest/globals';
import { buildSpokeBootstrap } from '../../src/model/delivery/bootstrap.js';
import { loadKubeConfig } from '../support/envtest-cluster.js';
import { describeRealServer } from '../support/real-server.js';
import { RawClient, type RawObject } from '../support/raw-client.js';

const bootstrap = (kubernetesVersion?: string): RawObject[] =>
  buildSpokeBootstrap({
    cluster: 'ocp-415',
    argoNamespace: 'openshift-gitops',
    openshift: true,
    ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
    namespaces: [],
  }) as unknown as RawObject[];

/** Server-side applies (dry run) each object; the ones the server refuses, with why. */
async function refused(client: RawClient, objects: readonly RawObject[]): Promise<string[]> {
  const out: string[] = [];
  for (const object of objects) {
    try {
      await client.apply(object, 'pullfleet-test', { dryRun: true });
    } catch (error) {
      out.push(`${object.apiVersion} ${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
    }
  }
  return out;
}

describeRealServer('an OpenShift spoke older than Kubernetes 1.30', (kubeconfigPath) => {
  const client = new RawClient(loadKubeConfig(kubeconfigPath));

  test('GIVEN the spoke declared on 1.28 THEN every object of its bootstrap applies; undeclared, the v1 policy and binding are refused', async () => {
    expect(await refused(client, bootstrap('1.28'))).toStrictEqual([]);
    const unknown = await refused(client, bootstrap());
    expect(unknown.map((line) => line.split(':')[0])).toStrictEqual([
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy pullfleet-deny-duplicate-route-crd',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding pullfleet-deny-duplicate-route-crd',
    ]);
  });
});
