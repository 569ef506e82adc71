/**
 * An app's grants checked against the API resources of Kubernetes 1.28 to 1.31 and the custom
 * resources the fleet knows (src/model/validation/grants.ts): misspellings get the name meant, the
 * user's own CRD groups pass.
 */
import { describe, expect, test } from '@jest/globals';
import { grantProblems } from '../../src/model/validation/grants.js';

const check = (apiGroup: string, ...resources: string[]) => grantProblems({ apiGroup, resources });

describe('grant checks', () => {
  test('GIVEN resources Kubernetes serves, with subresources, and the known CRDs THEN no problem', () => {
    expect(check('', 'pods', 'pods/log', 'services', 'configmaps', 'serviceaccounts')).toStrictEqual([]);
    expect(check('apps', 'deployments', 'deployments/scale', 'statefulsets')).toStrictEqual([]);
    expect(check('networking.k8s.io', 'ingresses', 'networkpolicies')).toStrictEqual([]);
    expect(check('admissionregistration.k8s.io', 'validatingadmissionpolicies')).toStrictEqual([]);
    expect(check('argoproj.io', 'applications', 'appprojects')).toStrictEqual([]);
    expect(check('work.open-cluster-management.io', 'manifestworks')).toStrictEqual([]);
  });

  test("GIVEN the user's own CRD groups, or other resources of a known CRD group THEN no problem", () => {
    expect(check('example.com', 'widgets', 'widgets/status')).toStrictEqual([]);
    expect(check('scheduling.x-k8s.io', 'podgroups')).toStrictEqual([]);
    expect(check('argoproj.io', 'workflows')).toStrictEqual([]);
    expect(check('cluster.open-cluster-management.io', 'clustercurators')).toStrictEqual([]);
  });

  test('fails when a resource is a kind, a singular or a typo: did you mean the plural, subresource kept', () => {
    const meant = (given: string, name: string, group = 'apps') =>
      `resources grant for API group "${group}" names "${given}", which is not a resource of that group: did you mean "${name}"? A grant names the lower-case plural, as kubectl api-resources lists it`;
    expect(check('apps', 'Deployment', 'deployment/scale', 'statefulset', 'daemonsest')).toStrictEqual([
      meant('Deployment', 'deployments'),
      meant('deployment/scale', 'deployments/scale'),
      meant('statefulset', 'statefulsets'),
      meant('daemonsest', 'daemonsets'),
    ]);
    expect(check('networking.k8s.io', 'NetworkPolicy')).toStrictEqual([
      meant('NetworkPolicy', 'networkpolicies', 'networking.k8s.io'),
    ]);
    expect(check('argoproj.io', 'application')).toStrictEqual([meant('application', 'applications', 'argoproj.io')]);
  });

  test('fails when a resource is served by another group, naming it', () => {
    expect(check('', 'deployments')).toStrictEqual([
      `resources grant for API group "" (the core group) names "deployments", which that group does not serve: deployments are in API group "apps"; grant them there: { apiGroup: 'apps', resources: ['deployments'] }`,
    ]);
    expect(check('extensions', 'ingress')).toStrictEqual([
      `resources grant for API group "extensions" names "ingress", which that group does not serve: ingresses are in API group "networking.k8s.io"; grant them there: { apiGroup: 'networking.k8s.io', resources: ['ingresses'] }`,
    ]);
  });

  test('fails when a built-in group does not serve the resource at all, listing what it serves', () => {
    expect(check('batch', 'crons')).toStrictEqual([
      'resources grant for API group "batch" names "crons", which Kubernetes 1.28 to 1.31 do not serve in that group: use one of cronjobs, jobs',
    ]);
    expect(check('', 'widgets')).toStrictEqual([
      'resources grant for API group "" (the core group) names "widgets", which Kubernetes 1.28 to 1.31 do not serve in that group: see kubectl api-resources --api-group=\'\'',
    ]);
  });

  test('fails when the API group is misspelled, versioned or the core group by name', () => {
    const group = (given: string, meant: string) =>
      `resources grant API group "${given}" is not an API group of Kubernetes 1.28 to 1.31 or of the custom resources pullfleet knows: did you mean ${meant}?`;
    expect(check('app', 'deployments')).toStrictEqual([group('app', '"apps"')]);
    expect(check('Apps', 'deployments')).toStrictEqual([group('Apps', '"apps"')]);
    expect(check('rbac.authorisation.k8s.io', 'roles')).toStrictEqual([
      group('rbac.authorisation.k8s.io', '"rbac.authorization.k8s.io"'),
    ]);
    expect(check('networking', 'ingresses')).toStrictEqual([group('networking', '"networking.k8s.io"')]);
    expect(check('apps/v1', 'deployments')).toStrictEqual([
      'resources grant API group "apps/v1" includes a version: give the group alone, as in apiVersion before the "/": apiGroup: "apps"',
    ]);
    expect(check('core', 'services')).toStrictEqual([
      'resources grant API group "core" is not a group name: the core group (apiVersion v1: pods, services, configmaps...) is "", so write apiGroup: ""',
    ]);
  });
});
