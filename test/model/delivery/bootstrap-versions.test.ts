/**
 * The OpenShift guardrail is a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1), which a server
 * serves from Kubernetes 1.30 (OpenShift 4.17). An OpenShift spoke declared older gets its bootstrap
 * without the guardrail and without the work-agent RBAC that only the guardrail needs.
 */
import { describe, expect, test } from '@jest/globals';
import { buildSpokeBootstrap, WORK_AGENT_GUARDRAIL_ROLE } from '../../../src/model/delivery/bootstrap.js';

const kinds = (kubernetesVersion: string | undefined, openshift = true) =>
  buildSpokeBootstrap({
    cluster: 'edge-1',
    argoNamespace: 'openshift-gitops',
    openshift,
    ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
    namespaces: [],
  }).map((o) => `${o.kind}/${o.metadata.name}`);

describe('spoke bootstrap by Kubernetes version', () => {
  test('GIVEN an OpenShift spoke on 1.29 (OpenShift 4.16) THEN no ValidatingAdmissionPolicy and no RBAC for it', () => {
    const objects = kinds('1.29');
    expect(objects.filter((k) => k.startsWith('ValidatingAdmissionPolicy'))).toStrictEqual([]);
    expect(objects.filter((k) => k.endsWith(`/${WORK_AGENT_GUARDRAIL_ROLE}`))).toStrictEqual([]);
  });

  test('GIVEN an OpenShift spoke on 1.30, or of unknown version THEN the guardrail and its RBAC, as before', () => {
    for (const version of ['1.30', '1.31', undefined]) {
      const objects = kinds(version);
      expect(objects.filter((k) => k.startsWith('ValidatingAdmissionPolicy')).length).toBe(2);
      expect(objects).toContain(`ClusterRole/${WORK_AGENT_GUARDRAIL_ROLE}`);
      expect(objects).toContain(`ClusterRoleBinding/${WORK_AGENT_GUARDRAIL_ROLE}`);
    }
  });

  test('GIVEN a spoke that is not OpenShift THEN no guardrail whatever its version', () => {
    for (const version of ['1.28', '1.31', undefined])
      expect(kinds(version, false).filter((k) => k.includes('ValidatingAdmissionPolicy'))).toStrictEqual([]);
  });
});
