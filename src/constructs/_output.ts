/**
 * Where each object lands under `dist/<hub>/`, and the provenance every object carries. Internal to
 * the construct library except {@link routeOutput}, which lets other constructs (the controller
 * install) choose their file.
 */
import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { CONSTRUCT_PATH_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../model/core/keys.js';

const routes = new WeakMap<IConstruct, string>();

/** Hub-relative output files. Everything under `hub/` is what the hub's Argo CD syncs. */
export const OutputFiles = {
  /** Objects of no other file. */
  DEFAULT: 'hub/hub.yaml',
  /** ManagedClusterSets and their bindings. */
  CLUSTER_SETS: 'hub/cluster-sets.yaml',
  /** Placements. */
  PLACEMENTS: 'hub/placements.yaml',
  /** Argo CD cluster Secrets (blank: no credentials). */
  CLUSTER_SECRETS: 'hub/cluster-secrets.yaml',
  /** Hub Applications of static apps. */
  APPLICATIONS: 'hub/applications.yaml',
  /** Pull ApplicationSets and their generator support. */
  APPLICATION_SETS: 'hub/application-sets.yaml',
  /** The controller install. */
  CONTROLLER: 'hub/controller.yaml',
  /** GitOpsClusters (the advanced model's registration). */
  GITOPS_CLUSTERS: 'hub/gitops-clusters.yaml',
  /** AppProjects the argocd-agent principal checks before routing agent-managed apps. */
  AGENT_PROJECTS: 'hub/agent-projects.yaml',
  /** The Applications each agent-autonomous spoke should run (one ConfigMap per spoke), read by `pullfleet status`. */
  EXPECTED_APPLICATIONS: 'hub/expected-applications.yaml',
  /** The ManifestWorks in a spoke's namespace (apps and bootstrap). */
  works: (spoke: string) => `hub/works/${spoke}.yaml`,
  /** A spoke's bootstrap as plain YAML, for the first manual apply. */
  bootstrap: (spoke: string) => `bootstrap/${spoke}.yaml`,
  /** An agent-autonomous spoke's own folder, synced by the spoke's Argo CD. */
  spokeApplications: (spoke: string) => `spokes/${spoke}/applications.yaml`,
} as const;

/**
 * Sends every API object at or below `scope` to `file` (relative to `dist/<hub>/`, for example
 * `hub/controller.yaml`). The nearest routed ancestor wins; unrouted objects go to `hub/hub.yaml`.
 */
export function routeOutput(scope: IConstruct, file: string): void {
  if (!/^(hub|bootstrap|spokes)\/[A-Za-z0-9_][-A-Za-z0-9_./]*\.yaml$/.test(file) || file.includes('..')) {
    // A call that builds the construct tree wrongly: it throws at once (docs/reference/errors.md).
    throw new Error(
      `${scope.node.path || '<root>'}: routeOutput: file "${file}" must be a relative path under hub/, bootstrap/ or spokes/ ending in .yaml, for example "hub/extras.yaml"`,
    );
  }
  routes.set(scope, file);
}

const sortedScopes = new WeakSet<IConstruct>();

/**
 * Writes the children of `scope` in the order of their ids rather than the order they were created in.
 * A PullApplication renders one child per target spoke in name order; an escape hatch that asks for
 * one spoke's objects before the fleet renders creates that child early, and this keeps the output the
 * same either way.
 */
export function sortChildrenInOutput(scope: IConstruct): void {
  sortedScopes.add(scope);
}

/** `root` and every construct below it in output order: depth first, parents before children. */
export function inOutputOrder(root: IConstruct): IConstruct[] {
  const out: IConstruct[] = [];
  const visit = (c: IConstruct): void => {
    out.push(c);
    const children = c.node.children;
    const ordered = sortedScopes.has(c)
      ? [...children].sort((a, b) => (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0))
      : children;
    for (const child of ordered) visit(child);
  };
  visit(root);
  return out;
}

/** The output file of an API object. */
export function outputFileOf(obj: IConstruct): string {
  const scopes = obj.node.scopes;
  for (let i = scopes.length - 1; i >= 0; i--) {
    const file = routes.get(scopes[i]);
    if (file) return file;
  }
  return OutputFiles.DEFAULT;
}

const stamped = new WeakSet<ApiObject>();

/**
 * Adds the provenance label and construct-path annotation (the object's own path) to an object that
 * was not made through {@link apiObjectFrom}. Idempotent.
 */
export function stampProvenance(obj: ApiObject): void {
  if (!stamped.has(obj)) addProvenance(obj, false);
}

/**
 * Adds provenance to `obj` once: the managed-by label unless it carries one, and the construct-path
 * annotation (its own path) unless `pathGiven` (a hub Application and its work both name the
 * PullApplication target that made them). {@link stampProvenance} then leaves it alone.
 */
export function addProvenance(obj: ApiObject, pathGiven: boolean): void {
  stamped.add(obj);
  if (obj.metadata.getLabel(MANAGED_BY_LABEL) === undefined) obj.metadata.addLabel(MANAGED_BY_LABEL, MANAGED_BY_VALUE);
  if (!pathGiven) obj.metadata.addAnnotation(CONSTRUCT_PATH_ANNOTATION, obj.node.path);
}

/**
 * cdk8s drops `null` when it renders an object, but a `null` in Helm values is how Helm removes a
 * chart default. Objects holding a `null` are built with this placeholder in its place and rendered
 * back to `null` (a string with NUL characters never comes from a fleet description: YAML cannot hold one).
 */
const NULL_PLACEHOLDER = '\u0000pullfleet:null\u0000';

function hasNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  return Array.isArray(value) ? value.some(hasNull) : Object.values(value).some(hasNull);
}

function replaceNulls(value: unknown, from: unknown, to: unknown): unknown {
  if (value === from) return to;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => replaceNulls(item, from, to));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceNulls(item, from, to)]));
}

/**
 * `value` ready to be held by an ApiObject: when it holds a `null`, a copy with the placeholder in its
 * place, and `apiObject` renders the placeholder back to `null`.
 */
export function keepNulls<T>(apiObject: ApiObject, value: T): T {
  if (!hasNull(value)) return value;
  renderNullsBack(apiObject);
  return replaceNulls(value, null, NULL_PLACEHOLDER) as T;
}

/** Makes `apiObject` render the placeholder as `null`. */
function renderNullsBack(apiObject: ApiObject): void {
  const render = apiObject.toJson.bind(apiObject);
  apiObject.toJson = () => replaceNulls(render(), NULL_PLACEHOLDER, null);
}

/** An object built by src/model, as the construct library renders it. */
export type PlainObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
};

/**
 * An ApiObject from a plain object built by src/model; a `null` in it is rendered as `null` (cdk8s
 * alone would drop it). Provenance is added here: the managed-by label,
 * and the construct path unless the model object already names one (a hub Application and its work
 * both name the PullApplication target that made them).
 */
export function apiObjectFrom<T extends PlainObject>(scope: IConstruct, id: string, obj: T): ApiObject {
  const keepsNull = hasNull(obj);
  const apiObject = new ApiObject(scope, id, (keepsNull ? replaceNulls(obj, null, NULL_PLACEHOLDER) : obj) as never);
  if (keepsNull) renderNullsBack(apiObject);
  addProvenance(apiObject, obj.metadata.annotations?.[CONSTRUCT_PATH_ANNOTATION] !== undefined);
  return apiObject;
}
