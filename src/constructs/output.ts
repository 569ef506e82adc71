/**
 * Where each object lands under `dist/<hub>/` (docs/reference/dist-layout.md): the files pullfleet writes
 * ({@link OutputFiles}) and {@link routeOutput}, which sends the objects below a construct to a file of its choice.
 */
import type { IConstruct } from 'constructs';
import { recordRoute } from './_output-routes.js';

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
  recordRoute(scope, file);
}
