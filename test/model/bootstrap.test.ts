import { describe, expect, test } from '@jest/globals';
import { buildBootstrapWork, buildSpokeBootstrap, grantRules, OPENSHIFT_ROUTE_CRD } from '../../src/model/index.js';

describe('buildSpokeBootstrap', () => {
  test('GIVEN a spoke without apps THEN only the work-agent RBAC is rendered', () => {
    const objects = buildSpokeBootstrap({ cluster: 'east', argoNamespace: 'argocd', openshift: false, namespaces: [] });
    expect(objects).toStrictEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'pullfleet-work-agent-argocd', labels: { 'app.kubernetes.io/managed-by': 'pullfleet' } },
        rules: [{ apiGroups: ['argoproj.io'], resources: ['applications', 'appprojects'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] }],
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
        { namespace: 'web', grants: [{ apiGroup: '', resources: ['services'] }, { apiGroup: 'apps', resources: ['deployments', 'statefulsets'] }] },
      ],
    });
    const ns = objects.find((o) => o.kind === 'Namespace')!;
    expect(ns.metadata.labels).toStrictEqual({ 'app.kubernetes.io/managed-by': 'pullfleet', 'argocd.argoproj.io/managed-by': 'argocd' });
    const role = objects.find((o) => o.kind === 'Role')!;
    expect(role.metadata.namespace).toBe('web');
    expect((role.rules as Array<{ apiGroups: string[]; resources: string[] }>).map((r) => [r.apiGroups, r.resources])).toStrictEqual([
      [[''], ['services']],
      [['apps'], ['deployments', 'statefulsets']],
    ]);
    const binding = objects.find((o) => o.kind === 'RoleBinding')!;
    expect(binding.subjects).toStrictEqual([{ kind: 'ServiceAccount', name: 'argocd-application-controller', namespace: 'argocd' }]);
    expect(JSON.stringify(objects)).not.toContain('"*"');
  });

  test('cluster-scoped grants become one ClusterRole bound to the spoke Argo CD', () => {
    const objects = buildSpokeBootstrap({
      cluster: 'east',
      argoNamespace: 'argocd',
      openshift: false,
      namespaces: [{ namespace: 'ops', grants: [{ apiGroup: 'apiextensions.k8s.io', resources: ['customresourcedefinitions'], clusterScoped: true }] }],
    });
    expect(objects.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name)).toStrictEqual(['pullfleet-work-agent-argocd', 'pullfleet-argocd-apps']);
    expect(objects.some((o) => o.kind === 'Role')).toBe(false);
  });

  test('OpenShift spokes get the duplicate Route CRD guardrail', () => {
    const objects = buildSpokeBootstrap({ cluster: 'ocp', argoNamespace: 'argocd', openshift: true, namespaces: [] });
    const policy = objects.find((o) => o.kind === 'ValidatingAdmissionPolicy') as unknown as { spec: { validations: Array<{ expression: string }> } };
    expect(policy.spec.validations[0].expression).toBe(`object.metadata.name != '${OPENSHIFT_ROUTE_CRD}'`);
    expect(objects.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding')).toMatchObject({ spec: { validationActions: ['Deny'] } });
  });

  test('non-default projects get an AppProject limited to the apps\' repositories and namespaces', () => {
    const objects = buildSpokeBootstrap({
      cluster: 'east',
      argoNamespace: 'argocd',
      openshift: false,
      namespaces: [
        { namespace: 'web', grants: [], project: 'team-a', sourceRepos: ['https://git.example.com/b.git'] },
        { namespace: 'api', grants: [], project: 'team-a', sourceRepos: ['https://git.example.com/a.git', 'https://git.example.com/b.git'] },
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
            { apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'], clusterScoped: true, kinds: ['ClusterRole'] },
            { apiGroup: 'apps', resources: ['deployments'] },
          ],
        },
        { namespace: 'ops2', project: 'platform', grants: [{ apiGroup: '', resources: ['namespaces'], clusterScoped: true, kinds: ['Namespace'] }] },
        { namespace: 'web', project: 'team-a', grants: [{ apiGroup: 'apps', resources: ['deployments'] }] },
      ],
    });
    const projects = objects.filter((o) => o.kind === 'AppProject') as unknown as Array<{ metadata: { name: string }; spec: Record<string, unknown> }>;
    expect(projects.map((p) => [p.metadata.name, p.spec.clusterResourceWhitelist])).toStrictEqual([
      ['platform', [{ group: '', kind: 'Namespace' }, { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }]],
      ['team-a', undefined],
    ]);
  });

  test('the bootstrap work orphans its objects on deletion', () => {
    const work = buildBootstrapWork('east', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' } }], 'hub/east/BootstrapWork/ManifestWork');
    expect(work.metadata).toMatchObject({ name: 'pullfleet-bootstrap', namespace: 'east' });
    expect(work.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
  });

  test('grantRules merges groups and sorts resources', () => {
    expect(grantRules([{ apiGroup: 'b', resources: ['y', 'x'] }, { apiGroup: 'a', resources: ['z'] }, { apiGroup: 'b', resources: ['x'] }]).map((r) => [r.apiGroups, r.resources])).toStrictEqual([
      [['a'], ['z']],
      [['b'], ['x', 'y']],
    ]);
  });
});
