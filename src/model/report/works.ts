/**
 * Finding the ManifestWork that delivers a hub Application: by the name pullfleet gives it, else by the
 * hub-application annotations, among the works of the Application's cluster.
 */
import { HUB_APP_NAME_ANNOTATION, HUB_APP_NAMESPACE_ANNOTATION } from '../core/keys.js';
import { manifestWorkName } from '../core/names.js';
import type { Application, ManifestWork } from '../core/types.js';
import { targetCluster } from '../delivery/manifestwork.js';

/** ManifestWorks as a list, or grouped by namespace (cluster) for large fleets. */
export type WorkSet = readonly ManifestWork[] | ReadonlyMap<string, readonly ManifestWork[]>;

/** Groups works by namespace, so finding a cluster's works does not scan the whole fleet. */
export function worksByNamespace(works: readonly ManifestWork[]): Map<string, ManifestWork[]> {
  const grouped = new Map<string, ManifestWork[]>();
  for (const work of works) {
    const ns = work.metadata.namespace ?? '';
    const list = grouped.get(ns);
    if (list) list.push(work);
    else grouped.set(ns, [work]);
  }
  return grouped;
}

/** The ManifestWork delivering `app`: by the pullfleet name first, else by the hub-application annotations. */
export function findWorkForApplication(app: Application, works: WorkSet): ManifestWork | undefined {
  const cluster = targetCluster(app);
  if (!cluster) return undefined;
  const hubNamespace = app.metadata.namespace ?? '';
  const name = manifestWorkName(hubNamespace, app.metadata.name);
  const inCluster = Array.isArray(works)
    ? works.filter((work) => work.metadata.namespace === cluster)
    : ((works as ReadonlyMap<string, readonly ManifestWork[]>).get(cluster) ?? []);
  return (
    inCluster.find((work) => work.metadata.name === name) ??
    inCluster.find(
      (work) =>
        work.metadata.annotations?.[HUB_APP_NAMESPACE_ANNOTATION] === hubNamespace &&
        work.metadata.annotations?.[HUB_APP_NAME_ANNOTATION] === app.metadata.name,
    )
  );
}
