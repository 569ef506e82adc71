/**
 * The klusterlet work agent, with exactly the permissions the klusterlet gives it, applies everything
 * the bootstrap work of an OpenShift spoke carries: checked on a real API server, authenticated as the
 * agent's own ServiceAccount (a TokenRequest token), so RBAC is the server's.
 *
 * What the klusterlet grants its work agent on a managed cluster (open-cluster-management-io/ocm,
 * manifests/klusterlet/managed/klusterlet-work-*.yaml with klusterlet name `klusterlet`, agent namespace
 * `open-cluster-management-agent`, ServiceAccount `klusterlet-work-sa`; the aggregating ClusterRole is
 * created by the klusterlet operator in klusterlet_managed_reconcile.go) is written below as facts:
 * - `open-cluster-management:klusterlet-work:agent`, bound directly: AppliedManifestWorks, access
 *   reviews, impersonating ServiceAccounts.
 * - `open-cluster-management:klusterlet-work:execution`, labelled `aggregate-to-work`, reaching the agent
 *   through the aggregating `open-cluster-management:klusterlet-work:aggregate` and its binding: CRDs,
 *   namespaces, RBAC (with escalate and bind), ServiceMonitors, OAuthClients, PriorityClasses, and
 *   mutating/validating webhook configurations, but no ValidatingAdmissionPolicies.
 * - `admin`, bound cluster-wide by `open-cluster-management:klusterlet-work:execution-admin`.
 *
 * No controller-manager runs here, so the test plays the ClusterRole aggregation controller for `admin`
 * (through `edit` and `view`, which it aggregates) and for the work aggregate. The server is 1.28: ValidatingAdmissionPolicy(Binding) is sent as v1beta1 (the
 * RBAC resource names are the same in every version).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { describeRealServer } from '../support/real-server.js';
import { loadKubeConfig, serviceAccountKubeconfig } from '../support/envtest-cluster.js';
import { RawApiError, RawClient, type RawObject } from '../support/raw-client.js';
import {
  buildSpokeBootstrap,
  ROUTE_CRD_GUARDRAIL,
  WORK_AGENT_NAMESPACE,
  WORK_AGENT_SERVICE_ACCOUNT,
} from '../../src/model/delivery/bootstrap.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIST = join(ROOT, 'dist');
const RBAC = 'rbac.authorization.k8s.io/v1';
const KLUSTERLET = 'klusterlet';
const AGGREGATE_ROLE = `open-cluster-management:${KLUSTERLET}-work:aggregate`;
const ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

const workSubject = { kind: 'ServiceAccount', name: WORK_AGENT_SERVICE_ACCOUNT, namespace: WORK_AGENT_NAMESPACE };
const clusterRole = (name: string, rules: object[], labels: Record<string, string> = {}): RawObject => ({
  apiVersion: RBAC,
  kind: 'ClusterRole',
  metadata: { name, labels },
  rules,
});
const bindWorkAgent = (name: string, role: string): RawObject => ({
  apiVersion: RBAC,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [workSubject],
});

/** The klusterlet's objects for its work agent on a managed cluster, template values rendered. */
const KLUSTERLET_WORK_RBAC: RawObject[] = [
  {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: WORK_AGENT_SERVICE_ACCOUNT, namespace: WORK_AGENT_NAMESPACE },
  },
  clusterRole(`open-cluster-management:${KLUSTERLET}-work:agent`, [
    { apiGroups: ['work.open-cluster-management.io'], resources: ['appliedmanifestworks'], verbs: ALL },
    {
      apiGroups: ['work.open-cluster-management.io'],
      resources: ['appliedmanifestworks/status'],
      verbs: ['patch', 'update'],
    },
    {
      apiGroups: ['work.open-cluster-management.io'],
      resources: ['appliedmanifestworks/finalizers'],
      verbs: ['update'],
    },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
  ]),
  clusterRole(
    `open-cluster-management:${KLUSTERLET}-work:execution`,
    [
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        verbs: ['get', 'list', 'watch', 'create', 'delete', 'update'],
      },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'update', 'patch', 'delete'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterrolebindings', 'rolebindings'], verbs: ALL },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles', 'roles'],
        verbs: [...ALL, 'escalate', 'bind'],
      },
      { apiGroups: ['monitoring.coreos.com'], resources: ['servicemonitors'], verbs: ALL },
      { apiGroups: ['oauth.openshift.io'], resources: ['oauthclients'], verbs: ALL },
      { apiGroups: ['scheduling.k8s.io'], resources: ['priorityclasses'], verbs: ALL },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'],
      },
    ],
    { 'open-cluster-management.io/aggregate-to-work': 'true' },
  ),
  {
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: AGGREGATE_ROLE },
    aggregationRule: {
      clusterRoleSelectors: [{ matchLabels: { 'open-cluster-management.io/aggregate-to-work': 'true' } }],
    },
    rules: [],
  },
  bindWorkAgent(`open-cluster-management:${KLUSTERLET}-work:agent`, `open-cluster-management:${KLUSTERLET}-work:agent`),
  bindWorkAgent(AGGREGATE_ROLE, AGGREGATE_ROLE),
  bindWorkAgent(`open-cluster-management:${KLUSTERLET}-work:execution-admin`, 'admin'),
];

/** ValidatingAdmissionPolicy(Binding) v1 → v1beta1, the version a 1.28 server serves. */
function served(object: RawObject): RawObject {
  if (
    object.apiVersion === 'admissionregistration.k8s.io/v1' &&
    /^ValidatingAdmissionPolicy(Binding)?$/.test(object.kind)
  ) {
    return { ...object, apiVersion: 'admissionregistration.k8s.io/v1beta1' };
  }
  return object;
}

const label = (o: RawObject): string =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
const isGuardrail = (o: RawObject): boolean => /^ValidatingAdmissionPolicy(Binding)?$/.test(o.kind);
/** RBAC objects of the bootstrap that grant the work agent something: what the first manual apply must deliver. */
const isWorkAgentGrant = (o: RawObject, all: readonly RawObject[]): boolean => {
  if (o.kind === 'ClusterRoleBinding')
    return JSON.stringify((o as { subjects?: unknown }).subjects) === JSON.stringify([workSubject]);
  if (o.kind !== 'ClusterRole') return false;
  return all.some(
    (b) =>
      b.kind === 'ClusterRoleBinding' &&
      isWorkAgentGrant(b, all) &&
      (b as { roleRef?: { name?: string } }).roleRef?.name === o.metadata.name,
  );
};

function yamlDocs(file: string): RawObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJSON() as RawObject | null)
    .filter((o): o is RawObject => o !== null);
}

/** Every OpenShift spoke's bootstrap in dist/: the manifests of its work, and its bootstrap YAML. */
function distOpenShiftBootstraps(): Array<{ spoke: string; work: RawObject[]; yaml: RawObject[] }> {
  const out: Array<{ spoke: string; work: RawObject[]; yaml: RawObject[] }> = [];
  for (const hub of readdirSync(DIST, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()) {
    const works = join(DIST, hub, 'hub', 'works');
    for (const file of readdirSync(works)
      .filter((f) => f.endsWith('.yaml'))
      .sort()) {
      const work = yamlDocs(join(works, file)).find(
        (o) => o.kind === 'ManifestWork' && o.metadata.name === 'pullfleet-bootstrap',
      );
      const manifests =
        (work?.spec as { workload?: { manifests?: RawObject[] } } | undefined)?.workload?.manifests ?? [];
      if (!manifests.some(isGuardrail)) continue;
      const spoke = work!.metadata.namespace!;
      out.push({
        spoke: `${hub}/${spoke}`,
        work: manifests,
        yaml: yamlDocs(join(DIST, hub, 'bootstrap', `${spoke}.yaml`)),
      });
    }
  }
  return out;
}

/** A bootstrap the model renders for an OpenShift spoke with every kind bootstrap carries (namespaces of this suite). */
function modelOpenShiftBootstrap(): RawObject[] {
  return buildSpokeBootstrap({
    cluster: 'wa-ocp',
    argoNamespace: 'wa-rbac-argocd',
    argoControllerServiceAccount: 'acm-openshift-gitops-argocd-application-controller',
    argoControllerNamespace: 'wa-rbac-argocd',
    openshift: true,
    namespaces: [
      {
        namespace: 'wa-rbac-web',
        project: 'wa-team',
        sourceRepos: ['https://git.example.com/web.git'],
        grants: [
          { apiGroup: 'apps', resources: ['deployments'] },
          {
            apiGroup: 'apiextensions.k8s.io',
            resources: ['customresourcedefinitions'],
            clusterScoped: true,
            kinds: ['CustomResourceDefinition'],
          },
        ],
      },
    ],
  }) as unknown as RawObject[];
}

describeRealServer('the klusterlet work agent applies an OpenShift spoke bootstrap', (kubeconfigPath) => {
  const adminConfig = loadKubeConfig(kubeconfigPath);
  const admin = new RawClient(adminConfig);
  let agent: RawClient;
  const bootstraps = distOpenShiftBootstraps();
  const model = modelOpenShiftBootstrap();
  const clusterScoped = new Map<string, RawObject>();

  async function ensureNamespace(name: string): Promise<void> {
    try {
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      if (!(e instanceof RawApiError && e.code === 409)) throw e;
    }
  }

  /** What the ClusterRole aggregation controller does: `role`'s rules become those of every ClusterRole its selectors match. */
  async function aggregate(role: string): Promise<void> {
    const target = await admin.get<
      RawObject & { aggregationRule?: { clusterRoleSelectors: Array<{ matchLabels: Record<string, string> }> } }
    >(RBAC, 'ClusterRole', undefined, role);
    const selectors = target?.aggregationRule?.clusterRoleSelectors ?? [];
    expect(selectors.length).toBeGreaterThan(0);
    const rules: unknown[] = [];
    for (const s of selectors) {
      const selector = Object.entries(s.matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      for (const r of await admin.list<RawObject & { rules?: unknown[] }>(RBAC, 'ClusterRole', undefined, selector))
        if (r.metadata.name !== role) rules.push(...(r.rules ?? []));
    }
    await admin.replace({ ...target!, rules });
  }

  /** Server-side apply as the work agent; the refusal's status code, or undefined when accepted. */
  async function agentApply(object: RawObject): Promise<number | undefined> {
    try {
      await agent.apply(served(object), 'work-agent');
      return undefined;
    } catch (e) {
      if (e instanceof RawApiError) return e.code;
      throw e;
    }
  }

  /** Applies `objects` as the agent; one line per refusal. */
  async function refusedToAgent(objects: readonly RawObject[]): Promise<string[]> {
    const refused: string[] = [];
    for (const o of objects) {
      const code = await agentApply(o);
      if (code !== undefined) refused.push(`${label(o)}: ${code}`);
    }
    return refused;
  }

  beforeAll(async () => {
    await ensureNamespace(WORK_AGENT_NAMESPACE);
    for (const o of KLUSTERLET_WORK_RBAC) await admin.apply(o, 'klusterlet-operator');
    // admin aggregates edit, which aggregates view: fill them in that order.
    for (const role of ['view', 'edit', 'admin']) await aggregate(role);
    await aggregate(AGGREGATE_ROLE);
    const kc = new KubeConfig();
    kc.loadFromString(await serviceAccountKubeconfig(adminConfig, WORK_AGENT_NAMESPACE, WORK_AGENT_SERVICE_ACCOUNT));
    agent = new RawClient(kc);
    // A spoke's Argo CD namespace exists before any bootstrap (the Argo CD install made it); the
    // namespaces a bootstrap creates are left to the agent.
    for (const objects of [...bootstraps.map((b) => b.work), model]) {
      const created = new Set(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name));
      for (const o of objects) {
        if (o.metadata.namespace && !created.has(o.metadata.namespace)) await ensureNamespace(o.metadata.namespace);
        if (!o.metadata.namespace && o.kind !== 'Namespace')
          clusterScoped.set(`${o.apiVersion} ${o.kind} ${o.metadata.name}`, o);
      }
    }
  });

  afterAll(async () => {
    // Cluster-scoped objects are shared by the whole run: remove them (namespaces of this suite stay).
    for (const o of clusterScoped.values())
      await admin.delete(served(o).apiVersion, o.kind, undefined, o.metadata.name);
    for (const o of KLUSTERLET_WORK_RBAC.filter((x) => x.kind !== 'ServiceAccount'))
      await admin.delete(o.apiVersion, o.kind, undefined, o.metadata.name);
  });

  test('dist/ has OpenShift spokes, and their bootstrap carries the duplicate Route CRD guardrail', () => {
    expect(bootstraps.length).toBeGreaterThan(0);
    for (const b of bootstraps)
      expect(
        b.work
          .filter(isGuardrail)
          .map((o) => o.kind)
          .sort(),
      ).toStrictEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  });

  test("GIVEN only the klusterlet's own roles WHEN the work agent applies the guardrail THEN the server refuses it (403): neither its roles nor admin cover ValidatingAdmissionPolicies", async () => {
    const guardrail = model.filter(isGuardrail);
    expect(guardrail.map((o) => o.metadata.name)).toStrictEqual([ROUTE_CRD_GUARDRAIL, ROUTE_CRD_GUARDRAIL]);
    expect(await refusedToAgent(guardrail)).toStrictEqual([
      `ValidatingAdmissionPolicy ${ROUTE_CRD_GUARDRAIL}: 403`,
      `ValidatingAdmissionPolicyBinding ${ROUTE_CRD_GUARDRAIL}: 403`,
    ]);
    // ... while what the klusterlet does grant works as expected.
    const webhook = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'wa-rbac-probe' },
      webhooks: [],
    };
    expect(await agentApply(webhook)).toBeUndefined();
    await admin.delete(webhook.apiVersion, webhook.kind, undefined, webhook.metadata.name);
  });

  test.each(bootstraps.map((b) => [b.spoke, b] as const))(
    "GIVEN the first manual apply of %s's bootstrap YAML WHEN the work agent applies every manifest its bootstrap work carries THEN the server accepts all of them, created and then re-applied",
    async (_spoke, b) => {
      // The spoke admin's one manual apply delivers the agent's grants (here alone, so the agent itself creates the rest).
      const grants = b.yaml.filter((o) => isWorkAgentGrant(o, b.yaml));
      expect(grants.map(label)).toEqual(
        expect.arrayContaining([
          'ClusterRoleBinding pullfleet-work-agent-guardrail',
          'ClusterRole pullfleet-work-agent-guardrail',
        ]),
      );
      for (const o of grants) await admin.apply(served(o), 'spoke-admin');
      // Other tests (and other OpenShift spokes) may have left the guardrail: the agent must create it itself.
      for (const o of b.work.filter(isGuardrail))
        await admin.delete(served(o).apiVersion, o.kind, undefined, o.metadata.name);

      expect(await refusedToAgent(b.work)).toStrictEqual([]);
      expect(await refusedToAgent(b.work)).toStrictEqual([]);
      for (const o of b.work.filter(isGuardrail))
        expect(await admin.get(served(o).apiVersion, o.kind, undefined, o.metadata.name)).toBeDefined();
    },
  );

  test("GIVEN a bootstrap with every kind bootstrap renders (namespace, Role, ClusterRole, AppProject, guardrail) WHEN the work agent applies it after the manual grant THEN all are accepted, also through the agent's default update (read, then replace)", async () => {
    expect(new Set(model.map((o) => o.kind))).toEqual(
      new Set([
        'ClusterRole',
        'ClusterRoleBinding',
        'Namespace',
        'Role',
        'RoleBinding',
        'AppProject',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
      ]),
    );
    for (const o of model.filter((x) => isWorkAgentGrant(x, model))) await admin.apply(served(o), 'spoke-admin');
    for (const o of model.filter(isGuardrail))
      await admin.delete(served(o).apiVersion, o.kind, undefined, o.metadata.name);
    expect(await refusedToAgent(model)).toStrictEqual([]);

    const refused: string[] = [];
    for (const o of model.map(served)) {
      try {
        const current = await agent.get<RawObject>(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name);
        await agent.replace({ ...o, metadata: { ...o.metadata, resourceVersion: current!.metadata.resourceVersion } });
      } catch (e) {
        refused.push(`${label(o)}: ${(e as Error).message}`);
      }
    }
    expect(refused).toStrictEqual([]);
  });

  test('the grant is least privilege: the agent can neither delete the guardrail nor change another policy', async () => {
    const [policy] = model.filter((o) => o.kind === 'ValidatingAdmissionPolicy').map(served);
    await admin.apply(policy, 'spoke-admin');
    await expect(agent.delete(policy.apiVersion, policy.kind, undefined, policy.metadata.name)).rejects.toMatchObject({
      code: 403,
    });
    const other = { ...policy, metadata: { name: 'wa-rbac-other-policy' } };
    await admin.apply(other, 'spoke-admin');
    try {
      expect(await agentApply(other)).toBe(403);
      await expect(agent.get(other.apiVersion, other.kind, undefined, other.metadata.name)).rejects.toMatchObject({
        code: 403,
      });
    } finally {
      await admin.delete(other.apiVersion, other.kind, undefined, other.metadata.name);
    }
  });
});
