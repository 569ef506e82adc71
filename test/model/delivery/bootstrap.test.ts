import { describe, expect, test } from '@jest/globals';
import {
  buildBootstrapWork,
  buildSpokeBootstrap,
  grantRules,
  OPENSHIFT_ROUTE_CRD,
  spokeArgoController,
} from '../../../src/model/delivery/bootstrap.js';

describe('buildSpokeBootstrap', () => {
  test('GIVEN a spoke without apps THEN only the work-agent RBAC is rendered', () => {
    const objects = buildSpokeBootstrap({ cluster: 'east', argoNamespace: 'argocd', openshift: false, namespaces: [] });
    expect(objects).toStrictEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'pullfleet-work-agent-argocd', labels: { 'app.kubernetes.io/managed-by': 'pullfleet' } },
        rules: [
          {
            apiGroups: ['argoproj.io'],
            resources: ['applications', 'appprojects'],
            verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
          },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'pullfleet-work-agent-argocd', labels: { 'app.kubernetes.io/managed-by': 'pullfleet' } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pullfleet-work-agent-argocd' },
        subjects: [{ kind: 'ServiceAccount', name: 'klusterlet-work-sa', namespace: 'open-cluster-management-agent' }],
      },
    ]);
  });

  test('destination namespaces carry managed-by and get a Role with exactly the declared grants', () => {
    const objects = buildSpokeBootstrap({
      cluster: 'east',
      argoNamespace: 'argocd',
      openshift: false,
      namespaces: [
        { namespace: 'web', grants: [{ apiGroup: 'apps', resources: ['deployments'] }] },
        {
          namespace: 'web',
          grants: [
            { apiGroup: '', resources: ['services'] },
            { apiGroup: 'apps', resources: ['deployments', 'statefulsets'] },
          ],
        },
      ],
    });
    const ns = objects.find((o) => o.kind === 'Namespace')!;
    expect(ns.metadata.labels).toStrictEqual({
      'app.kubernetes.io/managed-by': 'pullfleet',
      'argocd.argoproj.io/managed-by': 'argocd',
    });
    const role = objects.find((o) => o.kind === 'Role')!;
    expect(role.metadata.namespace).toBe('web');
    expect(
      (role.rules as Array<{ apiGroups: string[]; resources: string[] }>).map((r) => [r.apiGroups, r.resources]),
    ).toStrictEqual([
      [[''], ['services']],
      [['apps'], ['deployments', 'statefulsets']],
    ]);
    const binding = objects.find((o) => o.kind === 'RoleBinding')!;
    expect(binding.subjects).toStrictEqual([
      { kind: 'ServiceAccount', name: 'argocd-application-controller', namespace: 'argocd' },
    ]);
    expect(JSON.stringify(objects)).not.toContain('"*"');
  });

  test('cluster-scoped grants become one ClusterRole bound to the spoke Argo CD', () => {
    const objects = buildSpokeBootstrap({
      cluster: 'east',
      argoNamespace: 'argocd',
      openshift: false,
      namespaces: [
        {
          namespace: 'ops',
          grants: [{ apiGroup: 'apiextensions.k8s.io', resources: ['customresourcedefinitions'], clusterScoped: true }],
        },
      ],
    });
    expect(objects.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name)).toStrictEqual([
      'pullfleet-work-agent-argocd',
      'pullfleet-argocd-apps',
    ]);
    expect(objects.some((o) => o.kind === 'Role')).toBe(false);
  });

  test('OpenShift spokes get the duplicate Route CRD guardrail', () => {
    const objects = buildSpokeBootstrap({ cluster: 'ocp', argoNamespace: 'argocd', openshift: true, namespaces: [] });
    const policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as unknown as {
      spec: { validations: Array<{ expression: string }> };
    };
    expect(policy.spec.validations[0].expression).toBe(`object.metadata.name != '${OPENSHIFT_ROUTE_CRD}'`);
    expect(objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding')).toMatchObject({
      spec: { validationActions: ['Deny'] },
    });
  });

  test('GIVEN an OpenShift spoke THEN the work agent is granted exactly the guardrail policy and binding, before they are applied', () => {
    const objects = buildSpokeBootstrap({ cluster: 'ocp', argoNamespace: 'argocd', openshift: true, namespaces: [] });
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'pullfleet-work-agent-guardrail');
    expect(role?.rules).toStrictEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'],
        verbs: ['create'],
      },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'],
        resourceNames: ['pullfleet-deny-duplicate-route-crd'],
        verbs: ['get', 'patch', 'update'],
      },
    ]);
    const binding = objects.find(
      (o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'pullfleet-work-agent-guardrail',
    );
    expect(binding).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pullfleet-work-agent-guardrail' },
      subjects: [{ kind: 'ServiceAccount', name: 'klusterlet-work-sa', namespace: 'open-cluster-management-agent' }],
    });
    const order = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(order.indexOf('ClusterRoleBinding/pullfleet-work-agent-guardrail')).toBeLessThan(
      order.indexOf('ValidatingAdmissionPolicy/pullfleet-deny-duplicate-route-crd'),
    );
    expect(JSON.stringify(objects)).not.toContain('"*"');
  });

  test('GIVEN a spoke that is not OpenShift THEN the work agent gets no admission-policy rights', () => {
    const objects = buildSpokeBootstrap({ cluster: 'east', argoNamespace: 'argocd', openshift: false, namespaces: [] });
    expect(JSON.stringify(objects)).not.toContain('admissionregistration.k8s.io');
  });

  test('the spoke Argo CD RBAC binds the controller service account in its own namespace when given', () => {
    const objects = buildSpokeBootstrap({
      cluster: 'east',
      argoNamespace: 'gitops',
      argoControllerServiceAccount: 'acm-openshift-gitops-argocd-application-controller',
      argoControllerNamespace: 'openshift-gitops',
      openshift: false,
      namespaces: [
        {
          namespace: 'web',
          grants: [
            { apiGroup: 'apps', resources: ['deployments'] },
            { apiGroup: '', resources: ['namespaces'], clusterScoped: true },
          ],
        },
      ],
    });
    const subjects = objects
      .filter((o) => o.metadata.name === 'pullfleet-argocd-apps' && /Binding$/.test(o.kind))
      .map((o) => [o.kind, o.subjects]);
    const expected = [
      {
        kind: 'ServiceAccount',
        name: 'acm-openshift-gitops-argocd-application-controller',
        namespace: 'openshift-gitops',
      },
    ];
    expect(subjects).toStrictEqual([
      ['RoleBinding', expected],
      ['ClusterRoleBinding', expected],
    ]);
  });

  test("non-default projects get an AppProject limited to the apps' repositories and namespaces", () => {
    const objects = buildSpokeBootstrap({
      cluster: 'east',
      argoNamespace: 'argocd',
      openshift: false,
      namespaces: [
        { namespace: 'web', grants: [], project: 'team-a', sourceRepos: ['https://git.example.com/b.git'] },
        {
          namespace: 'api',
          grants: [],
          project: 'team-a',
          sourceRepos: ['https://git.example.com/a.git', 'https://git.example.com/b.git'],
        },
        { namespace: 'misc', grants: [], project: 'default', sourceRepos: ['https://git.example.com/c.git'] },
      ],
    });
    expect(objects.filter((o) => o.kind === 'AppProject')).toStrictEqual([
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AppProject',
        metadata: { name: 'team-a', namespace: 'argocd', labels: { 'app.kubernetes.io/managed-by': 'pullfleet' } },
        spec: {
          sourceRepos: ['https://git.example.com/a.git', 'https://git.example.com/b.git'],
          destinations: [
            { namespace: 'api', server: 'https://kubernetes.default.svc' },
            { namespace: 'web', server: 'https://kubernetes.default.svc' },
          ],
        },
      },
    ]);
  });

  test('an AppProject whitelists exactly the cluster-scoped kinds its apps declare', () => {
    const objects = buildSpokeBootstrap({
      cluster: 'east',
      argoNamespace: 'argocd',
      openshift: false,
      namespaces: [
        {
          namespace: 'ops',
          project: 'platform',
          grants: [
            {
              apiGroup: 'rbac.authorization.k8s.io',
              resources: ['clusterroles'],
              clusterScoped: true,
              kinds: ['ClusterRole'],
            },
            { apiGroup: 'apps', resources: ['deployments'] },
          ],
        },
        {
          namespace: 'ops2',
          project: 'platform',
          grants: [{ apiGroup: '', resources: ['namespaces'], clusterScoped: true, kinds: ['Namespace'] }],
        },
        { namespace: 'web', project: 'team-a', grants: [{ apiGroup: 'apps', resources: ['deployments'] }] },
      ],
    });
    const projects = objects.filter((o) => o.kind === 'AppProject') as unknown as Array<{
      metadata: { name: string };
      spec: Record<string, unknown>;
    }>;
    expect(projects.map((p) => [p.metadata.name, p.spec.clusterResourceWhitelist])).toStrictEqual([
      [
        'platform',
        [
          { group: '', kind: 'Namespace' },
          { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' },
        ],
      ],
      ['team-a', undefined],
    ]);
  });

  test('the bootstrap work orphans its objects on deletion', () => {
    const work = buildBootstrapWork(
      'east',
      [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' } }],
      'hub/east/BootstrapWork/ManifestWork',
    );
    expect(work.metadata).toMatchObject({ name: 'pullfleet-bootstrap', namespace: 'east' });
    expect(work.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
  });

  test('grantRules merges groups and sorts resources', () => {
    expect(
      grantRules([
        { apiGroup: 'b', resources: ['y', 'x'] },
        { apiGroup: 'a', resources: ['z'] },
        { apiGroup: 'b', resources: ['x'] },
      ]).map((r) => [r.apiGroups, r.resources]),
    ).toStrictEqual([
      [['a'], ['z']],
      [['b'], ['x', 'y']],
    ]);
  });
});

describe('spokeArgoController', () => {
  test('each way a spoke gets its Argo CD names its application controller service account', () => {
    expect(spokeArgoController({ kind: 'acm-gitops-addon' })).toStrictEqual({
      serviceAccount: 'acm-openshift-gitops-argocd-application-controller',
      namespace: 'openshift-gitops',
    });
    expect(spokeArgoController({ kind: 'openshift-gitops', namespace: 'openshift-gitops' })).toStrictEqual({
      serviceAccount: 'openshift-gitops-argocd-application-controller',
      namespace: 'openshift-gitops',
    });
    expect(spokeArgoController({ kind: 'ocm-agent-addon', agentNamespace: 'argocd-agent' })).toStrictEqual({
      serviceAccount: 'argocd-argocd-application-controller',
      namespace: 'argocd-agent',
    });
    expect(spokeArgoController({ kind: 'upstream', namespace: 'argocd' })).toStrictEqual({
      serviceAccount: 'argocd-application-controller',
      namespace: 'argocd',
    });
  });
});
