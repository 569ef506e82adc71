/**
 * Fleet validation rules. Every rule returns problems instead of throwing, so synth can list every
 * problem at once; each message names the offending value and the fix (the caller adds the construct path).
 */
import {
  IN_CLUSTER_SERVER,
  isHubItself,
  LOCAL_CLUSTER,
  LOCAL_CLUSTER_LABEL,
  MANAGED_BY_LABEL,
  PULLFLEET_PREFIX,
} from '../core/keys.js';
import type { AppDefinition } from '../delivery/hub-application.js';
import { dnsLabelProblem, dnsSubdomainProblem, labelValueProblem } from '../core/names.js';
import { counted } from '../core/words.js';
import { jsonSize } from '../delivery/manifestwork.js';

/** One problem found in a fleet description. */
export interface FleetProblem {
  /** Construct path of the construct at fault. */
  readonly path: string;
  /** What is wrong, with the offending value and the fix. */
  readonly message: string;
}

/** Default ManifestWork size budget: 500 KiB (the API server rejects objects over ~1.5 MiB; works stay far below). */
export const DEFAULT_WORK_SIZE_BUDGET = 500 * 1024;

/** Thrown by synth when the fleet description has problems; nothing has been written. */
export class FleetValidationError extends Error {
  /** Every problem found, each with the construct path at fault and the fix. */
  public readonly problems: readonly FleetProblem[];
  /** Warnings found beside the problems (legal but almost certainly wrong). */
  public readonly warnings: readonly FleetProblem[];
  constructor(problems: readonly FleetProblem[], warnings: readonly FleetProblem[] = []) {
    super(formatProblems(problems) + (warnings.length ? `\n${formatWarnings(warnings)}` : ''));
    this.name = 'FleetValidationError';
    this.problems = problems;
    this.warnings = warnings;
  }
}

/** One message and every construct path (or file) it was found at, in the order found. */
export interface CollapsedProblem {
  readonly message: string;
  readonly paths: readonly string[];
}

/**
 * Problems with the same message, collapsed into one entry listing their paths: entries in the order
 * of their first problem, paths in the order found (each once).
 */
export function collapseProblems(problems: readonly FleetProblem[]): CollapsedProblem[] {
  const byMessage = new Map<string, Set<string>>();
  for (const p of problems) {
    const paths = byMessage.get(p.message);
    if (paths) paths.add(p.path);
    else byMessage.set(p.message, new Set([p.path]));
  }
  return [...byMessage].map(([message, paths]) => ({ message, paths: [...paths] }));
}

/**
 * What the construct paths name, for a count: `spokes` (a hub's child with a bare id), `hubs`, the
 * kind of `Kind:name` ids (`PullApplications`), else `constructs`.
 */
function pathNoun(paths: readonly string[]): string {
  const nouns = new Set(
    paths.map((p) => {
      const parts = p.split('/');
      const last = parts[parts.length - 1] ?? '';
      const colon = last.indexOf(':');
      if (colon > 0) return `${last.slice(0, colon)}s`;
      return parts.length === 1 ? 'hubs' : parts.length === 2 ? 'spokes' : 'constructs';
    }),
  );
  return nouns.size === 1 ? [...nouns][0] : 'constructs';
}

/**
 * A count and the first few of `paths`, for a collapsed line: `30 spokes: hub/a, hub/b, hub/c and 27
 * more` (every path when there are at most four). `noun` defaults to what the construct paths name.
 */
export function countedPaths(paths: readonly string[], noun = pathNoun(paths)): string {
  const shown = paths.length <= 4 ? paths : paths.slice(0, 3);
  const rest = paths.length - shown.length;
  const list =
    rest > 0
      ? `${shown.join(', ')} and ${rest} more`
      : shown.length > 1
        ? `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`
        : (shown[0] ?? '');
  return `${paths.length} ${noun}: ${list}`;
}

/** The report line of a collapsed problem: `[path] message`, or `message (N spokes: a, b, c and N-3 more)`. */
export function problemLine(problem: CollapsedProblem): string {
  return problem.paths.length === 1
    ? `[${problem.paths[0]}] ${problem.message}`
    : `${problem.message} (${countedPaths(problem.paths)})`;
}

/** Collapsed problems ordered by their first construct path, for a stable report. */
function sortedLines(problems: readonly FleetProblem[]): string[] {
  return collapseProblems(problems)
    .sort((a, b) => (a.paths[0] < b.paths[0] ? -1 : a.paths[0] > b.paths[0] ? 1 : 0))
    .map((p) => `  ${problemLine(p)}`);
}

/**
 * The multi-line report for a list of problems, sorted by construct path for a stable order; a message
 * found at several paths is one line listing them.
 */
export function formatProblems(problems: readonly FleetProblem[]): string {
  return `fleet validation failed with ${counted(problems.length, 'problem')} (nothing was written):\n${sortedLines(problems).join('\n')}`;
}

/** The warning lines (legal but almost certainly wrong; errors with --strict), as {@link formatProblems} lists problems. */
export function formatWarnings(warnings: readonly FleetProblem[]): string {
  return `${counted(warnings.length, 'warning')} (errors with --strict):\n${sortedLines(warnings).join('\n')}`;
}

/** A name that must be a DNS-1123 label (cluster names, namespaces, most pullfleet names). */
export function dnsLabelRule(what: string, value: string): string | undefined {
  const problem = dnsLabelProblem(value);
  return problem
    ? `${what} "${value}" ${problem}: use lower-case letters, digits and "-" (at most 63 characters)`
    : undefined;
}

/** A name that must be a DNS-1123 subdomain (object names). */
export function dnsSubdomainRule(what: string, value: string): string | undefined {
  const problem = dnsSubdomainProblem(value);
  return problem
    ? `${what} "${value}" ${problem}: use lower-case letters, digits, "-" and "." (at most 253 characters)`
    : undefined;
}

/** Label keys and values a user supplies. */
export function labelRule(what: string, key: string, value: string): string | undefined {
  const problem = labelValueProblem(value);
  return problem ? `${what} label ${key}="${value}" ${problem}: shorten or replace the value` : undefined;
}

/** Pull delivery never targets the hub itself (named `local-cluster`, or labelled `local-cluster: "true"`). */
export function localClusterRule(
  app: string,
  cluster: string,
  labels?: Readonly<Record<string, string>>,
): string | undefined {
  if (cluster === LOCAL_CLUSTER)
    return `app "${app}" is delivered to "${LOCAL_CLUSTER}", which is the hub itself and never a pull-delivery target: remove it from the app's spokes (or the placement's clusters)`;
  return isHubItself(cluster, labels)
    ? `app "${app}" is delivered to "${cluster}", which is labelled ${LOCAL_CLUSTER_LABEL}: "true" and so is the hub itself, never a pull-delivery target: remove it from the app's spokes`
    : undefined;
}

/** A pulled Application always deploys into its own spoke. */
export function destinationRule(server: string | undefined): string | undefined {
  if (server === undefined || server === IN_CLUSTER_SERVER) return undefined;
  return `destination server "${server}" is not in-cluster: a pulled app always deploys to the spoke it runs on; drop destinationServer or set it to "${IN_CLUSTER_SERVER}"`;
}

/** A ManifestWork payload over the size budget. */
export function workSizeRule(workName: string, cluster: string, work: unknown, budget: number): string | undefined {
  const size = jsonSize(work);
  return size > budget
    ? `ManifestWork ${cluster}/${workName} is ${size} bytes, over the size budget of ${budget} bytes: move large values (Helm values, plugin env) into the source repository or raise the hub's workSizeBudget`
    : undefined;
}

/** Identity of an object in one target cluster: API group, kind, namespace, name. */
export interface ObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** Which cluster applies it (for example `hub` or `spoke:east`). */
  readonly target: string;
  /** Construct path of the object. */
  readonly path: string;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Two objects that the same cluster would store under one identity (any API version of one group). */
export function collisionProblems(objects: readonly ObjectIdentity[]): FleetProblem[] {
  const first = new Map<string, ObjectIdentity>();
  const problems: FleetProblem[] = [];
  for (const obj of objects) {
    const key = `${obj.target}|${groupOf(obj.apiVersion)}|${obj.kind}|${obj.namespace ?? ''}|${obj.name}`;
    const seen = first.get(key);
    if (!seen) {
      first.set(key, obj);
      continue;
    }
    const where = obj.namespace ? `${obj.namespace}/${obj.name}` : obj.name;
    problems.push({
      path: obj.path,
      message: `${obj.kind} "${where}" collides with the one made by ${seen.path} (same ${obj.target === 'hub' ? 'hub' : obj.target}): rename one of the two`,
    });
  }
  return problems;
}

/** Namespaces an app almost certainly should not deploy into. */
export function systemNamespaceWarning(namespace: string, argoNamespace: string): string | undefined {
  const system =
    namespace === 'kube-system' ||
    namespace === 'kube-public' ||
    namespace === 'kube-node-lease' ||
    namespace.startsWith('openshift-') ||
    namespace === 'open-cluster-management-agent' ||
    namespace.startsWith('open-cluster-management-');
  if (system)
    return `destinationNamespace "${namespace}" is a system namespace: the app's pruning and self-heal would act on cluster components; deploy into a namespace of its own`;
  if (namespace === argoNamespace)
    return `destinationNamespace "${namespace}" is the Argo CD namespace: the app could overwrite or prune Argo CD itself; deploy into a namespace of its own`;
  return undefined;
}

/** Label key prefixes pullfleet, OCM and Argo CD set themselves: a user label there overrides their value. */
const RESERVED_LABEL_PREFIXES = [
  PULLFLEET_PREFIX,
  'apps.open-cluster-management.io/',
  'cluster.open-cluster-management.io/',
  'argocd.argoproj.io/',
  'open-cluster-management.io/',
];

/** A user label whose key pullfleet (or OCM, or Argo CD) owns. */
export function reservedLabelWarning(what: string, key: string): string | undefined {
  if (key === MANAGED_BY_LABEL || RESERVED_LABEL_PREFIXES.some((prefix) => key.startsWith(prefix))) {
    return `${what} label "${key}" overrides a key pullfleet, OCM or Argo CD sets and reads: rename the label (for example "example.com/${key.split('/').pop()}")`;
  }
  return undefined;
}

/**
 * An app that declares no `resources`: its spokes' bootstrap gets the destination namespace but no Role
 * in it for the spoke Argo CD (RBAC comes only from the declared grants), which then cannot create the
 * app's objects there unless it was given cluster-wide rights some other way.
 */
export function noGrantsWarning(
  def: AppDefinition,
  grants: readonly unknown[],
  argoNamespace: string,
): string | undefined {
  if (grants.length > 0 || def.destinationNamespace === argoNamespace) return undefined;
  return `app "${def.name}" declares no resources: its spokes get namespace "${def.destinationNamespace}" but no Role in it for their Argo CD, which then cannot create the app's objects there (unless it has cluster-wide rights some other way); list what the manifests hold, for example resources: [{ apiGroup: 'apps', resources: ['deployments'] }, { apiGroup: '', resources: ['services'] }]`;
}

/** Warnings for an app definition: legal, but almost certainly wrong. With `grants`, also an app that declares none. */
export function appWarnings(def: AppDefinition, argoNamespace: string, grants?: readonly unknown[]): string[] {
  const warnings: string[] = [];
  const ns = systemNamespaceWarning(def.destinationNamespace, argoNamespace);
  if (ns) warnings.push(ns);
  const rbac = grants ? noGrantsWarning(def, grants, argoNamespace) : undefined;
  if (rbac) warnings.push(rbac);
  for (const key of Object.keys(def.labels ?? {})) {
    const w = reservedLabelWarning('app', key);
    if (w) warnings.push(w);
  }
  return warnings;
}
