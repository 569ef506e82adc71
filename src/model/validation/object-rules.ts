/**
 * The rules the Kubernetes API server (and Argo CD, and OCM) apply that a JSON schema does not
 * express: label and annotation key syntax, DNS names per kind, RBAC verbs and resource names,
 * label-selector operators, tolerations and taint effects, Argo CD sources and sync options, the
 * pull-delivery contract, credentials in Secrets and object sizes. Pure: every rule returns findings
 * (with the offending value and the fix) instead of throwing.
 */
import {
  ARGOCD_SECRET_TYPE_LABEL,
  IN_CLUSTER_SERVER,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  STAND_BY_ANNOTATION,
} from '../core/keys.js';
import { jsonSize } from '../delivery/manifestwork.js';
import { dnsLabelProblem, dnsSubdomainProblem, labelValueProblem, parseBool } from '../core/names.js';

/** How bad a finding is: errors stop synth; warnings are shown, and become errors with `--strict`. */
export type Severity = 'error' | 'warning';

/** One thing wrong with one object. */
export interface ObjectFinding {
  readonly severity: Severity;
  /** What is wrong with the value, and the fix. */
  readonly message: string;
  /** The offending value, when there is one (used to drop repeats of a problem already reported). */
  readonly value?: string;
}

/** A plain Kubernetes object as it is written to YAML. */
export interface PlainObject {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: {
    name?: unknown;
    generateName?: unknown;
    namespace?: unknown;
    labels?: unknown;
    annotations?: unknown;
  };
  [key: string]: unknown;
}

/** The etcd object limit: the API server refuses any object over about 1.5 MiB. A hard ceiling for every budget. */
export const ETCD_OBJECT_LIMIT = 1536 * 1024;
/** The API server's limit on the total size of an object's annotations (keys and values). */
export const MAX_ANNOTATIONS_SIZE = 256 * 1024;

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Why `key` is not a valid label or annotation key (`[prefix/]name`), or undefined. */
export function qualifiedNameProblem(key: string): string | undefined {
  if (typeof key !== 'string' || key.length === 0) return 'must not be empty';
  const parts = key.split('/');
  if (parts.length > 2) return 'has more than one "/"';
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length === 2) {
    const prefixProblem = dnsSubdomainProblem(parts[0]);
    if (prefixProblem) return `has a prefix "${parts[0]}" that ${prefixProblem}`;
  }
  if (name.length === 0) return 'has an empty name part';
  if (name.length > 63) return `has a name part of ${name.length} characters; the limit is 63`;
  if (!LABEL_NAME.test(name))
    return 'must be an optional DNS-subdomain prefix and "/", then letters, digits, "-", "_" and ".", starting and ending with a letter or digit';
  return undefined;
}

/** A label or annotation key rule message, or undefined. */
export function labelKeyRule(what: string, key: string): string | undefined {
  const problem = qualifiedNameProblem(key);
  return problem ? `${what} key "${key}" ${problem}: use a key such as "example.com/team" or "team"` : undefined;
}

/** Object name rule per kind: the syntax the API server enforces for `metadata.name`. */
function nameProblem(kind: string, name: string): string | undefined {
  if (RBAC_KINDS.has(kind)) {
    if (name === '.' || name === '..' || name.includes('/') || name.includes('%'))
      return 'may not be "." or ".." and may not contain "/" or "%"';
    return name.length > 253 ? `is ${name.length} characters long; the limit is 253` : undefined;
  }
  if (kind === 'Service') {
    if (name.length > 0 && !/^[a-z]/.test(name)) return 'must start with a lower-case letter (DNS-1035 label)';
    return dnsLabelProblem(name);
  }
  if (DNS_LABEL_KINDS.has(kind)) return dnsLabelProblem(name);
  return dnsSubdomainProblem(name);
}

const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);
/** Kinds whose names are DNS-1123 labels: they become namespaces or host names. */
const DNS_LABEL_KINDS = new Set(['Namespace', 'ManagedCluster', 'ManagedClusterSet']);

/** RBAC verbs the API server and its authorizers know. */
export const RBAC_VERBS: readonly string[] = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'impersonate',
  'bind',
  'escalate',
  'use',
  'approve',
  'sign',
  'attest',
];
/** An RBAC resource name: a lower-case plural, optionally with a subresource (`pods/log`). */
export const RESOURCE_NAME = /^[a-z][a-z0-9]*(\/[a-z]+)?$/;

/** Label-selector operators (Kubernetes and OCM). */
export const SELECTOR_OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
/** OCM taint effects. */
export const TAINT_EFFECTS: readonly string[] = ['NoSelect', 'PreferNoSelect', 'NoSelectIfNew'];
/** OCM built-in prioritizers. */
export const BUILT_IN_PRIORITIZERS: readonly string[] = [
  'Balance',
  'Steady',
  'ResourceAllocatableCPU',
  'ResourceAllocatableMemory',
];

/** Argo CD Application sync options and the values each accepts (undefined: true/false). */
const SYNC_OPTIONS: Record<string, readonly string[] | undefined> = {
  Validate: undefined,
  CreateNamespace: undefined,
  PruneLast: undefined,
  Replace: undefined,
  Force: undefined,
  ServerSideApply: undefined,
  ApplyOutOfSyncOnly: undefined,
  RespectIgnoreDifferences: undefined,
  FailOnSharedResource: undefined,
  SkipDryRunOnMissingResource: undefined,
  ClientSideApplyMigration: undefined,
  PrunePropagationPolicy: ['foreground', 'background', 'orphan'],
  Prune: ['false', 'confirm'],
  Delete: ['false', 'confirm'],
};

/** Why `option` is not an Argo CD sync option, or undefined. */
export function syncOptionProblem(option: unknown): string | undefined {
  if (typeof option !== 'string')
    return `sync option ${JSON.stringify(option)} is not a string: write options as "Key=value", for example "ServerSideApply=true"`;
  const eq = option.indexOf('=');
  const key = eq < 0 ? option : option.slice(0, eq);
  const value = eq < 0 ? undefined : option.slice(eq + 1);
  if (!(key in SYNC_OPTIONS)) {
    return `sync option "${option}" is not an Argo CD sync option: use one of ${Object.keys(SYNC_OPTIONS)
      .map((k) => `${k}=`)
      .join(', ')} (for example "ServerSideApply=true")`;
  }
  const allowed = SYNC_OPTIONS[key] ?? ['true', 'false'];
  if (value === undefined || !allowed.includes(value))
    return `sync option "${option}" needs one of the values ${allowed.join(', ')}: write "${key}=${allowed[0]}"`;
  return undefined;
}

/** Why `url` is not a repository URL Argo CD can fetch from, or undefined. Templated values pass. */
export function repoUrlProblem(url: unknown, helm: boolean): string | undefined {
  if (typeof url !== 'string' || url.length === 0) return 'is empty';
  if (url.includes('{{')) return undefined;
  if (/\s/.test(url)) return 'contains white space';
  const scp = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+$/; // git@host:org/repo.git
  if (scp.test(url)) return undefined;
  // oci:// without a chart: an OCI artifact source (Argo CD 3.1 and later; AppSource.helm renders OCI charts so).
  const schemes = helm ? ['https:', 'http:', 'oci:'] : ['https:', 'http:', 'ssh:', 'git:', 'file:', 'oci:'];
  try {
    const parsed = new URL(url);
    if (!schemes.includes(parsed.protocol))
      return `has the scheme "${parsed.protocol}", expected one of ${schemes.join(' ')}`;
    if (parsed.protocol !== 'file:' && parsed.hostname.length === 0) return 'has no host';
    return undefined;
  } catch {
    // A Helm OCI registry may be given without its scheme: registry.example.com/charts.
    if (
      helm &&
      /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d+)?(\/[-A-Za-z0-9_.]+)+$/.test(url) &&
      url.split('/')[0].includes('.')
    )
      return undefined;
    return 'is not a URL';
  }
}

type Push = (severity: Severity, message: string, value?: string) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringMap(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** Label-selector rules: keys, values, operators and their value lists. */
export function selectorProblems(selector: unknown, where: string, values: 'label' | 'any' = 'label'): string[] {
  const out: string[] = [];
  if (!isRecord(selector)) return out;
  for (const [key, value] of Object.entries(stringMap(selector.matchLabels))) {
    const keyProblem = labelKeyRule(`${where} matchLabels`, key);
    if (keyProblem) out.push(keyProblem);
    const valueProblem = typeof value === 'string' ? labelValueProblem(value) : 'is not a string';
    if (valueProblem)
      out.push(`${where} matchLabels ${key}="${String(value)}" ${valueProblem}: use a valid label value`);
  }
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  expressions.forEach((e: unknown, i) => {
    if (!isRecord(e)) return;
    const at = `${where} matchExpressions[${i}]`;
    const key = String(e.key ?? '');
    if (values === 'label') {
      const keyProblem = labelKeyRule(at, key);
      if (keyProblem) out.push(keyProblem);
    } else if (key.length === 0) {
      out.push(`${at} has an empty key: name the claim, for example "platform.open-cluster-management.io"`);
    }
    const op = String(e.operator ?? '');
    const list = Array.isArray(e.values) ? (e.values as unknown[]) : [];
    if (!SELECTOR_OPERATORS.includes(op)) {
      out.push(
        `${at} operator "${op}" is not a selector operator: use one of ${SELECTOR_OPERATORS.join(', ')} (for equality use In with one value)`,
      );
    } else if ((op === 'In' || op === 'NotIn') && list.length === 0) {
      out.push(`${at} operator ${op} on "${key}" has no values: give at least one value, or use Exists`);
    } else if ((op === 'Exists' || op === 'DoesNotExist') && list.length > 0) {
      out.push(
        `${at} operator ${op} on "${key}" takes no values but has ${JSON.stringify(list)}: drop the values, or use In`,
      );
    }
    if (values === 'label') {
      for (const v of list) {
        const p = typeof v === 'string' ? labelValueProblem(v) : 'is not a string';
        if (p) out.push(`${at} value "${String(v)}" ${p}: use a valid label value`);
      }
    }
  });
  return out;
}

/** Toleration rules (OCM Placement). */
export function tolerationProblems(tolerations: unknown, where: string): string[] {
  const out: string[] = [];
  if (!Array.isArray(tolerations)) return out;
  tolerations.forEach((t: unknown, i) => {
    if (!isRecord(t)) return;
    const at = `${where}[${i}]`;
    const op = t.operator ?? 'Equal';
    if (op !== 'Equal' && op !== 'Exists')
      out.push(`${at} operator "${String(op)}" is not a toleration operator: use Equal or Exists`);
    if (op === 'Exists' && t.value !== undefined && t.value !== '')
      out.push(`${at} operator Exists takes no value but has "${String(t.value)}": drop the value, or use Equal`);
    if (t.key === undefined && op !== 'Exists')
      out.push(`${at} has no key, which only works with operator Exists: set a key or use Exists`);
    if (t.key !== undefined) {
      const keyProblem = labelKeyRule(at, String(t.key));
      if (keyProblem) out.push(keyProblem);
    }
    if (t.effect !== undefined && !TAINT_EFFECTS.includes(String(t.effect)))
      out.push(`${at} effect "${String(t.effect)}" is not an OCM taint effect: use one of ${TAINT_EFFECTS.join(', ')}`);
  });
  return out;
}

/** Taint rules (a spoke's ManagedCluster taints). */
export function taintProblems(taints: unknown, where: string): string[] {
  const out: string[] = [];
  if (!Array.isArray(taints)) return out;
  taints.forEach((t: unknown, i) => {
    if (!isRecord(t)) return;
    const at = `${where}[${i}]`;
    const keyProblem = labelKeyRule(at, String(t.key ?? ''));
    if (keyProblem) out.push(keyProblem);
    if (!TAINT_EFFECTS.includes(String(t.effect)))
      out.push(`${at} effect "${String(t.effect)}" is not an OCM taint effect: use one of ${TAINT_EFFECTS.join(', ')}`);
    if (t.value !== undefined) {
      const p = labelValueProblem(String(t.value));
      if (p) out.push(`${at} value "${String(t.value)}" ${p}: use a valid label value`);
    }
  });
  return out;
}

/** Credential-looking keys in a Secret's data. */
const CREDENTIAL_KEY =
  /(^config$|token|password|passwd|secret|bearer|private.?key|credential|kubeconfig|client.?key|tls\.key|ssh|apikey|api.?key)/i;
/** Keys of an Argo CD cluster Secret that carry no credential. */
const CLUSTER_SECRET_KEYS = new Set(['name', 'server', 'project', 'namespaces', 'clusterResources', 'shard']);

function secretFindings(obj: PlainObject, push: Push): void {
  const keys = [...Object.keys(stringMap(obj.data)), ...Object.keys(stringMap(obj.stringData))];
  const labels = stringMap(obj.metadata?.labels);
  if (labels[ARGOCD_SECRET_TYPE_LABEL] === 'cluster') {
    for (const key of keys) {
      if (!CLUSTER_SECRET_KEYS.has(key)) {
        push(
          'error',
          `Argo CD cluster Secret carries "${key}"${key === 'config' ? ' (bearer token, TLS client key or exec credentials)' : ''}: pull delivery never contacts spokes, so the Secret holds only ${[...CLUSTER_SECRET_KEYS].join(', ')}; remove "${key}" and keep credentials out of Git`,
          key,
        );
      }
    }
    return;
  }
  for (const key of keys) {
    if (CREDENTIAL_KEY.test(key))
      push(
        'error',
        `Secret key "${key}" looks like a credential, written in plain text into Git: remove it and deliver it with a secret manager (External Secrets, Sealed Secrets)`,
        key,
      );
  }
}

function rbacRuleFindings(obj: PlainObject, push: Push): void {
  const rules = Array.isArray(obj.rules) ? obj.rules : [];
  rules.forEach((rule: unknown, i) => {
    if (!isRecord(rule)) return;
    const at = `rules[${i}]`;
    for (const verb of Array.isArray(rule.verbs) ? rule.verbs : []) {
      if (verb === '*')
        push(
          'error',
          `${at} verbs has "*" (every verb, including escalate and impersonate): list the verbs the subject needs, for example get, list, watch`,
          '*',
        );
      else if (!RBAC_VERBS.includes(String(verb)))
        push('error', `${at} verb "${String(verb)}" is not an RBAC verb: use ${RBAC_VERBS.join(', ')}`, String(verb));
    }
    for (const group of Array.isArray(rule.apiGroups) ? rule.apiGroups : []) {
      if (group === '*') push('error', `${at} apiGroups has "*" (every API group): list each API group`, '*');
      else if (group !== '' && dnsSubdomainProblem(String(group)))
        push(
          'error',
          `${at} apiGroup "${String(group)}" ${dnsSubdomainProblem(String(group))}: use the group as in apiVersion, for example "apps" or "" for the core group`,
          String(group),
        );
    }
    for (const resource of Array.isArray(rule.resources) ? rule.resources : []) {
      if (resource === '*' || String(resource).startsWith('*/'))
        push(
          'error',
          `${at} resources has "${String(resource)}" (every resource): list each resource`,
          String(resource),
        );
      else if (!RESOURCE_NAME.test(String(resource)))
        push(
          'error',
          `${at} resource "${String(resource)}" is not a resource name: use the lower-case plural, for example "deployments" or "pods/log"`,
          String(resource),
        );
    }
    for (const url of Array.isArray(rule.nonResourceURLs) ? rule.nonResourceURLs : []) {
      if (url === '*') push('error', `${at} nonResourceURLs has "*": list each URL`, '*');
    }
  });
}

function bindingFindings(obj: PlainObject, push: Push): void {
  const ref = stringMap(obj.roleRef);
  if (ref.name === 'cluster-admin')
    push(
      'error',
      `binds cluster-admin (every verb on every resource): bind a role that grants what the subject needs`,
      'cluster-admin',
    );
  if (ref.apiGroup !== undefined && ref.apiGroup !== 'rbac.authorization.k8s.io')
    push(
      'error',
      `roleRef apiGroup "${String(ref.apiGroup)}" is wrong: use "rbac.authorization.k8s.io"`,
      String(ref.apiGroup),
    );
  if (ref.kind !== undefined && ref.kind !== 'Role' && ref.kind !== 'ClusterRole')
    push('error', `roleRef kind "${String(ref.kind)}" is not Role or ClusterRole`, String(ref.kind));
  if (obj.kind === 'ClusterRoleBinding' && ref.kind === 'Role')
    push('error', 'a ClusterRoleBinding can only reference a ClusterRole: use a RoleBinding for a Role');
}

function placementFindings(obj: PlainObject, push: Push): void {
  const spec = stringMap(obj.spec);
  if (typeof spec.numberOfClusters === 'number' && spec.numberOfClusters < 0)
    push(
      'error',
      `spec.numberOfClusters ${spec.numberOfClusters} is negative: use 0 or more, or leave it out to select every matching cluster`,
      String(spec.numberOfClusters),
    );
  const predicates = Array.isArray(spec.predicates) ? spec.predicates : [];
  predicates.forEach((p: unknown, i) => {
    const selector = stringMap(stringMap(p).requiredClusterSelector);
    for (const m of selectorProblems(selector.labelSelector, `spec.predicates[${i}].labelSelector`)) push('error', m);
    for (const m of selectorProblems(selector.claimSelector, `spec.predicates[${i}].claimSelector`, 'any'))
      push('error', m);
  });
  for (const m of tolerationProblems(spec.tolerations, 'spec.tolerations')) push('error', m);
  const policy = stringMap(spec.prioritizerPolicy);
  if (policy.mode !== undefined && policy.mode !== 'Additive' && policy.mode !== 'Exact')
    push('error', `spec.prioritizerPolicy.mode "${String(policy.mode)}" is not Additive or Exact`, String(policy.mode));
  const configurations = Array.isArray(policy.configurations) ? policy.configurations : [];
  configurations.forEach((c: unknown, i) => {
    const coordinate = stringMap(stringMap(c).scoreCoordinate);
    if ((coordinate.type ?? 'BuiltIn') === 'BuiltIn' && !BUILT_IN_PRIORITIZERS.includes(String(coordinate.builtIn))) {
      push(
        'error',
        `spec.prioritizerPolicy.configurations[${i}] built-in prioritizer "${String(coordinate.builtIn)}" does not exist: use one of ${BUILT_IN_PRIORITIZERS.join(', ')}, or Prioritizer.addOn(...)`,
        String(coordinate.builtIn),
      );
    }
  });
}

/** Checks an Argo CD Application spec (of an Application, or an ApplicationSet template). */
function applicationSpecFindings(spec: Record<string, unknown>, at: string, push: Push): void {
  const sources: unknown[] = [];
  if (spec.source !== undefined) sources.push(spec.source);
  if (Array.isArray(spec.sources)) sources.push(...spec.sources);
  if (sources.length === 0)
    push('error', `${at} has no source: give the app a source (AppSource.git or AppSource.helm)`);
  sources.forEach((s: unknown, i) => {
    if (!isRecord(s)) return;
    const where = `${at}.source${sources.length > 1 ? `s[${i}]` : ''}`;
    const helm = typeof s.chart === 'string';
    const urlProblem = repoUrlProblem(s.repoURL, helm);
    if (urlProblem)
      push(
        'error',
        `${where}.repoURL "${String(s.repoURL ?? '')}" ${urlProblem}: give the ${helm ? 'Helm repository (https:// or oci://)' : 'Git repository (https://, ssh:// or git@host:path)'} URL`,
        String(s.repoURL ?? ''),
      );
    if (helm && String(s.chart).length === 0) push('error', `${where}.chart is empty: name the chart`);
    if (helm && (typeof s.targetRevision !== 'string' || s.targetRevision.trim().length === 0)) {
      push(
        'error',
        `${where}.targetRevision of chart "${String(s.chart)}" is empty: pin a chart version such as "1.2.3" (or a range such as "1.2.*")`,
        String(s.targetRevision ?? ''),
      );
    }
  });
  const syncPolicy = stringMap(spec.syncPolicy);
  if (syncPolicy.syncOptions !== undefined) {
    if (!Array.isArray(syncPolicy.syncOptions))
      push('error', `${at}.syncPolicy.syncOptions is not a list: give a list of "Key=value" strings`);
    else
      for (const option of syncPolicy.syncOptions) {
        const p = syncOptionProblem(option);
        if (p) push('error', `${at}.syncPolicy: ${p}`, String(option));
      }
  }
}

function destinationInCluster(spec: Record<string, unknown>): string | undefined {
  const destination = stringMap(spec.destination);
  const server = destination.server;
  const name = destination.name;
  if (server === undefined && name === undefined) return 'has no destination';
  if (server !== undefined && server !== IN_CLUSTER_SERVER) return `has destination server "${String(server)}"`;
  if (name !== undefined && name !== 'in-cluster') return `has destination name "${String(name)}"`;
  return undefined;
}

/** The pull-delivery contract on a hub Application (or an ApplicationSet's template). */
function pullContractFindings(
  meta: Record<string, unknown>,
  spec: Record<string, unknown>,
  at: string,
  push: Push,
): void {
  const labels = stringMap(meta.labels);
  const annotations = stringMap(meta.annotations);
  const pull = labels[PULL_LABEL];
  const cluster = annotations[MANAGED_CLUSTER_ANNOTATION];
  if (pull === undefined) {
    if (cluster !== undefined)
      push(
        'error',
        `${at} has the ${MANAGED_CLUSTER_ANNOTATION} annotation but not the ${PULL_LABEL}: "true" label, so the hub Argo CD would deploy it to the hub: add the label`,
      );
    return;
  }
  if (!parseBool(String(pull))) return; // opted out
  if (typeof cluster !== 'string' || cluster.length === 0)
    push(
      'error',
      `${at} is a pull app without the ${MANAGED_CLUSTER_ANNOTATION} annotation, so it is delivered nowhere: annotate the target ManagedCluster`,
    );
  else if (!cluster.includes('{{') && dnsLabelProblem(cluster))
    push(
      'error',
      `${at} annotation ${MANAGED_CLUSTER_ANNOTATION}="${cluster}" ${dnsLabelProblem(cluster)}: name a ManagedCluster`,
      cluster,
    );
  const routedName = stringMap(spec.destination).name;
  if (
    parseBool(String(annotations[STAND_BY_ANNOTATION] ?? '')) &&
    typeof routedName === 'string' &&
    routedName !== 'in-cluster'
  ) {
    // Step 1 of a move back from a managed argocd-agent: still routed to the agent, which copies every annotation.
    if (annotations[SKIP_RECONCILE_ANNOTATION] !== undefined)
      push(
        'error',
        `${at} is routed to argocd-agent (destination name "${routedName}") with ${SKIP_RECONCILE_ANNOTATION}: the principal copies annotations to the spoke Application the agent holds, which would stop reconciling it; drop ${SKIP_RECONCILE_ANNOTATION} while the work stands by`,
      );
    if (typeof cluster === 'string' && routedName !== cluster)
      push(
        'error',
        `${at} stands by for cluster "${cluster}" but is routed to "${routedName}": the principal would tell the agent on "${cluster}" to delete its copy of the Application; route it to "${cluster}" until that agent has left the spoke`,
      );
    return;
  }
  if (annotations[SKIP_RECONCILE_ANNOTATION] !== 'true')
    push(
      'error',
      `${at} is a pull app without ${SKIP_RECONCILE_ANNOTATION}: "true", so the hub Argo CD would also deploy it (to the hub): add the annotation`,
    );
  const dest = destinationInCluster(spec);
  if (dest)
    push(
      'error',
      `${at} ${dest}: a pulled app always deploys to the spoke it runs on; set destination.server to "${IN_CLUSTER_SERVER}"`,
    );
}

function applicationFindings(obj: PlainObject, inWork: boolean, push: Push): void {
  const spec = stringMap(obj.spec);
  applicationSpecFindings(spec, 'spec', push);
  if (inWork) {
    const dest = destinationInCluster(spec);
    if (dest)
      push(
        'error',
        `payload Application ${dest}: on the spoke it must deploy in-cluster; set destination.server to "${IN_CLUSTER_SERVER}"`,
      );
    if (stringMap(obj.metadata?.labels)[PULL_LABEL] !== undefined)
      push(
        'error',
        `payload Application carries the ${PULL_LABEL} label, which belongs to the hub copy only: drop it from the payload`,
      );
    return;
  }
  pullContractFindings(stringMap(obj.metadata), spec, 'Application', push);
}

function applicationSetFindings(obj: PlainObject, push: Push): void {
  const spec = stringMap(obj.spec);
  const template = stringMap(spec.template);
  applicationSpecFindings(stringMap(template.spec), 'spec.template.spec', push);
  pullContractFindings(stringMap(template.metadata), stringMap(template.spec), 'spec.template', push);
}

function metadataFindings(obj: PlainObject, push: Push): void {
  const kind = String(obj.kind ?? '');
  const meta = stringMap(obj.metadata);
  const name = meta.name;
  if (name === undefined || name === '') {
    if (meta.generateName === undefined) push('error', 'has no metadata.name: name the object');
  } else {
    const p = nameProblem(kind, String(name));
    if (p) push('error', `metadata.name "${String(name)}" ${p}: rename the object`, String(name));
  }
  if (meta.namespace !== undefined) {
    const p = dnsLabelProblem(String(meta.namespace));
    if (p)
      push('error', `metadata.namespace "${String(meta.namespace)}" ${p}: use a DNS label`, String(meta.namespace));
  }
  for (const [key, value] of Object.entries(stringMap(meta.labels))) {
    const keyProblem = labelKeyRule('label', key);
    if (keyProblem) push('error', keyProblem, key);
    const valueProblem = typeof value === 'string' ? labelValueProblem(value) : 'is not a string';
    if (valueProblem)
      push('error', `label ${key}="${String(value)}" ${valueProblem}: shorten or replace the value`, String(value));
  }
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(stringMap(meta.annotations))) {
    const keyProblem = labelKeyRule('annotation', key);
    if (keyProblem) push('error', keyProblem, key);
    if (typeof value !== 'string') push('error', `annotation ${key} is not a string: quote the value`, key);
    annotationBytes += Buffer.byteLength(key) + Buffer.byteLength(String(value));
  }
  if (annotationBytes > MAX_ANNOTATIONS_SIZE)
    push(
      'error',
      `annotations total ${annotationBytes} bytes, over the API server's limit of ${MAX_ANNOTATIONS_SIZE}: move large values elsewhere`,
    );
}

/** Options of {@link objectRuleFindings}. */
export interface ObjectRuleOptions {
  /** Size budget for the whole object in bytes (JSON). @default - only the etcd limit */
  readonly sizeBudget?: number;
  /** The object is a manifest inside a ManifestWork (applied on a spoke). @default false */
  readonly inWork?: boolean;
}

/** Every non-schema rule for one object (not descending into ManifestWork manifests). */
export function objectRuleFindings(obj: PlainObject, options: ObjectRuleOptions = {}): ObjectFinding[] {
  const findings: ObjectFinding[] = [];
  const push: Push = (severity, message, value) =>
    findings.push(value === undefined ? { severity, message } : { severity, message, value });
  metadataFindings(obj, push);
  switch (obj.kind) {
    case 'Secret':
      secretFindings(obj, push);
      break;
    case 'Role':
    case 'ClusterRole':
      rbacRuleFindings(obj, push);
      break;
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      bindingFindings(obj, push);
      break;
    case 'Placement':
      placementFindings(obj, push);
      break;
    case 'ManagedClusterSet': {
      const selector = stringMap(stringMap(obj.spec).clusterSelector).labelSelector;
      for (const m of selectorProblems(selector, 'spec.clusterSelector.labelSelector')) push('error', m);
      break;
    }
    case 'Application':
      if (String(obj.apiVersion).startsWith('argoproj.io/')) applicationFindings(obj, options.inWork ?? false, push);
      break;
    case 'ApplicationSet':
      if (String(obj.apiVersion).startsWith('argoproj.io/')) applicationSetFindings(obj, push);
      break;
    default:
      break;
  }
  if (!options.inWork) {
    const size = jsonSize(obj);
    if (size > ETCD_OBJECT_LIMIT) {
      push(
        'error',
        `is ${size} bytes, over the etcd object limit of ${ETCD_OBJECT_LIMIT} bytes that the API server enforces: split it or move large values (Helm values) into the source repository`,
        String(size),
      );
    } else if (options.sizeBudget !== undefined && size > options.sizeBudget) {
      push(
        'error',
        `is ${size} bytes, over the size budget of ${options.sizeBudget} bytes: move large values (Helm values, plugin env) into the source repository or raise the hub's workSizeBudget (at most ${ETCD_OBJECT_LIMIT})`,
        String(size),
      );
    }
  }
  return findings;
}
