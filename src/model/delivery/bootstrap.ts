/**
 * Spoke bootstrap: the objects a spoke needs before pulled Applications can work there. They are
 * delivered through a ManifestWork and also written as plain YAML for the one manual apply on the spoke
 * (the work agent cannot grant itself the RBAC it needs before that).
 */
import {
  ARGOCD_MANAGED_BY_LABEL,
  CONSTRUCT_PATH_ANNOTATION,
  IN_CLUSTER_SERVER,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  WORK_API_VERSION,
} from '../core/keys.js';
import { atLeastMinor } from '../core/versions.js';
import { sortKeys } from '../core/records.js';
import type { JsonObject, KubeObject, ManifestWork } from '../core/types.js';

/** The klusterlet work agent's service account on every spoke. */
export const WORK_AGENT_SERVICE_ACCOUNT = 'klusterlet-work-sa';
export const WORK_AGENT_NAMESPACE = 'open-cluster-management-agent';
/** The spoke Argo CD application controller's service account (upstream install manifests). */
export const ARGOCD_CONTROLLER_SERVICE_ACCOUNT = 'argocd-application-controller';
/** Name of the ClusterRole(Binding) letting the work agent manage Argo CD applications and projects. */
export const WORK_AGENT_ROLE = 'pullfleet-work-agent-argocd';
/**
 * Name of the ClusterRole(Binding) letting the work agent apply the OpenShift guardrail. The klusterlet
 * grants its work agent webhook configurations but not ValidatingAdmissionPolicies, and `admin` grants
 * neither, so without it the guardrail never applies (`Applied=False` on the bootstrap work).
 */
export const WORK_AGENT_GUARDRAIL_ROLE = 'pullfleet-work-agent-guardrail';

/**
 * The Argo CD instance the ACM gitops add-on puts on every spoke of a GitOpsCluster with
 * `gitopsAddon.enabled` (an ArgoCD resource a Policy from the hub enforces).
 */
export const ACM_GITOPS_ADDON_ARGOCD = { name: 'acm-openshift-gitops', namespace: 'openshift-gitops' } as const;
/** The default instance OpenShift GitOps creates (in the hub's Argo CD namespace, `openshift-gitops` by default). */
export const OPENSHIFT_GITOPS_ARGOCD_NAME = 'openshift-gitops';
/** The instance the OCM argocd-agent add-on creates in its agent namespace. */
export const OCM_AGENT_ADDON_ARGOCD_NAME = 'argocd';

/**
 * Where a spoke's Argo CD comes from, which decides its application controller's ServiceAccount: the
 * Argo CD operator (and OpenShift GitOps) names it `<instance>-argocd-application-controller`, the
 * upstream install manifests plain `argocd-application-controller`.
 * - `acm-gitops-addon`: ACM hub, GitOpsCluster (v1beta1) with the gitops add-on enabled: instance
 *   `acm-openshift-gitops` in `openshift-gitops`.
 * - `openshift-gitops`: ACM hub otherwise: OpenShift GitOps' default instance `openshift-gitops` in `namespace`.
 * - `ocm-agent-addon`: OCM hub, GitOpsCluster (v1alpha1) with the argocd-agent add-on: instance `argocd`
 *   in the agent namespace.
 * - `upstream`: OCM hub otherwise: upstream Argo CD installed in `namespace`.
 */
export type SpokeArgoSetup =
  | { readonly kind: 'acm-gitops-addon' }
  | { readonly kind: 'openshift-gitops'; readonly namespace: string }
  | { readonly kind: 'ocm-agent-addon'; readonly agentNamespace: string }
  | { readonly kind: 'upstream'; readonly namespace: string };

/** The application controller's ServiceAccount of an Argo CD instance the operator runs. */
export function operatorControllerServiceAccount(instance: string): string {
  return `${instance}-${ARGOCD_CONTROLLER_SERVICE_ACCOUNT}`;
}

/** The ServiceAccount (and its namespace) of the spoke Argo CD application controller for a setup. */
export function spokeArgoController(setup: SpokeArgoSetup): {
  readonly serviceAccount: string;
  readonly namespace: string;
} {
  switch (setup.kind) {
    case 'acm-gitops-addon':
      return {
        serviceAccount: operatorControllerServiceAccount(ACM_GITOPS_ADDON_ARGOCD.name),
        namespace: ACM_GITOPS_ADDON_ARGOCD.namespace,
      };
    case 'openshift-gitops':
      return {
        serviceAccount: operatorControllerServiceAccount(OPENSHIFT_GITOPS_ARGOCD_NAME),
        namespace: setup.namespace,
      };
    case 'ocm-agent-addon':
      return {
        serviceAccount: operatorControllerServiceAccount(OCM_AGENT_ADDON_ARGOCD_NAME),
        namespace: setup.agentNamespace,
      };
    case 'upstream':
      return { serviceAccount: ARGOCD_CONTROLLER_SERVICE_ACCOUNT, namespace: setup.namespace };
  }
}
/** Name of the Roles/ClusterRole granting the spoke Argo CD what its apps declare. */
export const ARGOCD_APPS_ROLE = 'pullfleet-argocd-apps';
/** Name of the OpenShift guardrail policy and its binding. */
export const ROUTE_CRD_GUARDRAIL = 'pullfleet-deny-duplicate-route-crd';
/** The CRD that shadows OpenShift's aggregated routes API and breaks /openapi/v2. */
export const OPENSHIFT_ROUTE_CRD = 'routes.route.openshift.io';

const MANAGE_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/** A set of resources of one API group that a spoke app renders (and the spoke Argo CD must manage). */
export interface ResourceGrant {
  /** API group; `''` is the core group. */
  readonly apiGroup: string;
  /** Plural resource names, for example `deployments`. */
  readonly resources: readonly string[];
  /** Cluster-scoped resources get a ClusterRole; namespaced ones a Role in the app's namespace. */
  readonly clusterScoped?: boolean;
  /**
   * Kinds of these cluster-scoped resources (for example `ClusterRole`). Argo CD admits cluster-scoped
   * objects of a project other than `default` only when its AppProject whitelists their group and
   * kind, so such grants must name them.
   */
  readonly kinds?: readonly string[];
}

/** What one spoke runs, as far as bootstrap is concerned. */
export interface SpokeBootstrapInput {
  readonly cluster: string;
  /** Namespace of the spoke Argo CD (where pulled Applications land). */
  readonly argoNamespace: string;
  readonly openshift: boolean;
  /**
   * The spoke's Kubernetes version (`major.minor`), when declared: below {@link ADMISSION_POLICY_V1_SINCE}
   * the server has no `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy, so the OpenShift
   * guardrail (and the work-agent RBAC for it) is left out rather than make the whole bootstrap fail.
   * @default - unknown: the guardrail is rendered
   */
  readonly kubernetesVersion?: string;
  /**
   * Service account of the spoke Argo CD application controller (see {@link spokeArgoController}).
   * @default 'argocd-application-controller'
   */
  readonly argoControllerServiceAccount?: string;
  /**
   * Namespace of that service account.
   * @default - `argoNamespace`
   */
  readonly argoControllerNamespace?: string;
  /** Each destination namespace with the grants of the apps deploying into it. */
  readonly namespaces: readonly SpokeDelivery[];
}

/** One app deploying to a spoke, as bootstrap sees it. */
export interface SpokeDelivery {
  readonly namespace: string;
  readonly grants: readonly ResourceGrant[];
  /** Argo CD project of the app; projects other than `default` get an AppProject on the spoke. */
  readonly project?: string;
  /** Repositories the app pulls from (the AppProject's sourceRepos). */
  readonly sourceRepos?: readonly string[];
}

/**
 * AppProjects for every non-default project the spoke's apps use: allowed to pull from exactly the
 * apps' repositories, deploy to exactly their namespaces on this cluster, and create exactly the
 * cluster-scoped kinds their grants name.
 */
export function buildAppProjects(argoNamespace: string, deliveries: readonly SpokeDelivery[]): Obj[] {
  const projects = new Map<string, { repos: Set<string>; namespaces: Set<string>; clusterKinds: Set<string> }>();
  for (const d of deliveries) {
    if (!d.project || d.project === 'default') continue;
    const entry = projects.get(d.project) ?? {
      repos: new Set<string>(),
      namespaces: new Set<string>(),
      clusterKinds: new Set<string>(),
    };
    (d.sourceRepos ?? []).forEach((r) => entry.repos.add(r));
    entry.namespaces.add(d.namespace);
    for (const grant of d.grants) {
      if (grant.clusterScoped)
        (grant.kinds ?? []).forEach((kind) => entry.clusterKinds.add(JSON.stringify([grant.apiGroup, kind])));
    }
    projects.set(d.project, entry);
  }
  return [...projects.keys()].sort().map((name) => {
    const entry = projects.get(name)!;
    const clusterResourceWhitelist = [...entry.clusterKinds].sort().map((key) => {
      const [group, kind] = JSON.parse(key) as [string, string];
      return { group, kind };
    });
    return {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AppProject',
      metadata: meta(name, { namespace: argoNamespace }),
      spec: {
        sourceRepos: [...entry.repos].sort(),
        destinations: [...entry.namespaces].sort().map((namespace) => ({ namespace, server: IN_CLUSTER_SERVER })),
        ...(clusterResourceWhitelist.length ? { clusterResourceWhitelist } : {}),
      },
    } as unknown as Obj;
  });
}

type Obj = KubeObject & JsonObject;

function meta(name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject['metadata'] {
  return { name, ...extra, labels: sortKeys({ ...(extra.labels ?? {}), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE }) };
}

/** Merges grants into RBAC rules: one rule per API group, resources sorted and de-duplicated. */
export function grantRules(grants: readonly ResourceGrant[]): JsonObject[] {
  const byGroup = new Map<string, Set<string>>();
  for (const grant of grants) {
    const set = byGroup.get(grant.apiGroup) ?? new Set<string>();
    grant.resources.forEach((r) => set.add(r));
    byGroup.set(grant.apiGroup, set);
  }
  return [...byGroup.keys()]
    .sort()
    .map((group) => ({ apiGroups: [group], resources: [...byGroup.get(group)!].sort(), verbs: MANAGE_VERBS }));
}

function binding(
  kind: 'ClusterRoleBinding' | 'RoleBinding',
  name: string,
  namespace: string | undefined,
  sa: string,
  saNamespace: string,
): Obj {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: meta(name, namespace ? { namespace } : {}),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: saNamespace }],
  } as unknown as Obj;
}

/**
 * What the work agent needs to apply (and keep applied) the OpenShift guardrail: create the policy and
 * its binding, and read and update exactly those two by name. No list, watch or delete: the agent reads
 * applied objects one by one, and the bootstrap work orphans what it carries.
 */
export function guardrailWorkAgentRules(): JsonObject[] {
  const group = 'admissionregistration.k8s.io';
  const resources = ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'];
  return [
    // RBAC cannot limit create by name (the name is not known when create is authorized).
    { apiGroups: [group], resources, verbs: ['create'] },
    { apiGroups: [group], resources, resourceNames: [ROUTE_CRD_GUARDRAIL], verbs: ['get', 'patch', 'update'] },
  ];
}

/**
 * The first Kubernetes minor version that serves ValidatingAdmissionPolicy as `admissionregistration.k8s.io/v1`
 * (OpenShift 4.17); 1.28 and 1.29 serve only `v1beta1`, and only with its feature gate on.
 */
export const ADMISSION_POLICY_V1_SINCE = '1.30';

/** Whether a spoke gets the OpenShift guardrail: OpenShift, and a version that serves the policy as v1 (or none declared). */
export function rendersRouteCrdGuardrail(input: Pick<SpokeBootstrapInput, 'openshift' | 'kubernetesVersion'>): boolean {
  return (
    input.openshift &&
    (input.kubernetesVersion === undefined || atLeastMinor(input.kubernetesVersion, ADMISSION_POLICY_V1_SINCE))
  );
}

/** The OpenShift guardrail: a ValidatingAdmissionPolicy denying the duplicate routes CRD, and its binding. */
export function routeCrdGuardrail(): Obj[] {
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: meta(ROUTE_CRD_GUARDRAIL),
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['apiextensions.k8s.io'],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['customresourcedefinitions'],
          },
        ],
      },
      validations: [
        {
          expression: `object.metadata.name != '${OPENSHIFT_ROUTE_CRD}'`,
          message: `${OPENSHIFT_ROUTE_CRD} is served by OpenShift itself; a CRD of that name breaks /openapi/v2 and stalls every Argo CD sync. Remove the Route CRD from the app.`,
          reason: 'Forbidden',
        },
      ],
    },
  };
  const policyBinding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: meta(ROUTE_CRD_GUARDRAIL),
    spec: { policyName: ROUTE_CRD_GUARDRAIL, validationActions: ['Deny'] },
  };
  return [policy as unknown as Obj, policyBinding as unknown as Obj];
}

/**
 * Every bootstrap object for one spoke, in apply order: work-agent RBAC (on OpenShift including what
 * the guardrail needs), destination namespaces (labelled `argocd.argoproj.io/managed-by`), the spoke
 * Argo CD RBAC for the declared grants, the AppProjects of non-default projects, and on OpenShift the
 * duplicate-Route-CRD guardrail.
 *
 * The work-agent RBAC takes effect with the first manual apply of the bootstrap YAML (by a spoke
 * admin), before the bootstrap work arrives; the work carries the same objects so they stay applied.
 */
export function buildSpokeBootstrap(input: SpokeBootstrapInput): Obj[] {
  const objects: Obj[] = [];
  objects.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: meta(WORK_AGENT_ROLE),
    rules: [{ apiGroups: ['argoproj.io'], resources: ['applications', 'appprojects'], verbs: MANAGE_VERBS }],
  } as unknown as Obj);
  objects.push(
    binding('ClusterRoleBinding', WORK_AGENT_ROLE, undefined, WORK_AGENT_SERVICE_ACCOUNT, WORK_AGENT_NAMESPACE),
  );
  const guardrail = rendersRouteCrdGuardrail(input);
  if (guardrail) {
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(WORK_AGENT_GUARDRAIL_ROLE),
      rules: guardrailWorkAgentRules(),
    } as unknown as Obj);
    objects.push(
      binding(
        'ClusterRoleBinding',
        WORK_AGENT_GUARDRAIL_ROLE,
        undefined,
        WORK_AGENT_SERVICE_ACCOUNT,
        WORK_AGENT_NAMESPACE,
      ),
    );
  }

  const byNamespace = new Map<string, ResourceGrant[]>();
  for (const entry of input.namespaces) {
    const list = byNamespace.get(entry.namespace) ?? [];
    list.push(...entry.grants);
    byNamespace.set(entry.namespace, list);
  }
  const namespaces = [...byNamespace.keys()].sort();
  for (const ns of namespaces) {
    if (ns === input.argoNamespace) continue;
    objects.push({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: meta(ns, { labels: { [ARGOCD_MANAGED_BY_LABEL]: input.argoNamespace } }),
    } as unknown as Obj);
  }
  const controllerSa = input.argoControllerServiceAccount ?? ARGOCD_CONTROLLER_SERVICE_ACCOUNT;
  const controllerNs = input.argoControllerNamespace ?? input.argoNamespace;
  const clusterGrants: ResourceGrant[] = [];
  for (const ns of namespaces) {
    const grants = byNamespace.get(ns)!;
    clusterGrants.push(...grants.filter((g) => g.clusterScoped));
    const namespaced = grants.filter((g) => !g.clusterScoped);
    if (namespaced.length === 0) continue;
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(ARGOCD_APPS_ROLE, { namespace: ns }),
      rules: grantRules(namespaced),
    } as unknown as Obj);
    objects.push(binding('RoleBinding', ARGOCD_APPS_ROLE, ns, controllerSa, controllerNs));
  }
  if (clusterGrants.length > 0) {
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(ARGOCD_APPS_ROLE),
      rules: grantRules(clusterGrants),
    } as unknown as Obj);
    objects.push(binding('ClusterRoleBinding', ARGOCD_APPS_ROLE, undefined, controllerSa, controllerNs));
  }
  objects.push(...buildAppProjects(input.argoNamespace, input.namespaces));
  if (guardrail) objects.push(...routeCrdGuardrail());
  return objects;
}

/** Name of the ManifestWork carrying a spoke's bootstrap objects. */
export const BOOTSTRAP_WORK_NAME = 'pullfleet-bootstrap';

/**
 * The ManifestWork delivering a spoke's bootstrap objects. Deleting it orphans them: removing a spoke
 * from the fleet must never delete its namespaces (and every workload in them).
 */
export function buildBootstrapWork(
  cluster: string,
  objects: readonly JsonObject[],
  constructPath: string,
): ManifestWork {
  return {
    apiVersion: WORK_API_VERSION,
    kind: 'ManifestWork',
    metadata: {
      name: BOOTSTRAP_WORK_NAME,
      namespace: cluster,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations: { [CONSTRUCT_PATH_ANNOTATION]: constructPath },
    },
    spec: {
      workload: { manifests: [...objects] },
      deleteOption: { propagationPolicy: 'Orphan' },
    },
  };
}
