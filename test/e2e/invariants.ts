/**
 * What must hold for a fleet once the controller has caught up, whatever happened before (restarts,
 * outages, conflicting writers, malformed input). Shared by the chaos scenarios on the double and the
 * same scenarios on a real cluster.
 */
import { expect } from '@jest/globals';
import {
  ARGOCD_API_VERSION,
  CLEANUP_FINALIZER,
  CLUSTER_API_VERSION,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  SKIP_RECONCILE_ANNOTATION,
  WORK_API_VERSION,
} from '../../src/model/core/keys.js';
import { manifestWorkName, parseBool } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import {
  buildManifestWork,
  isPullApplication,
  targetCluster,
  wrapProblem,
} from '../../src/model/delivery/manifestwork.js';
import { isStaticApplication } from '../../src/model/reconcile/propagation.js';
import type { TestCluster } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import type { Fleet } from './scenarios.js';

/** The largest ManifestWork the controller writes (application-reconciler's MAX_WORK_BYTES). */
const MAX_WORK_BYTES = 500 * 1024;

export interface InvariantOptions {
  /** Apps allowed to have no condition although undeliverable (none by default). */
  readonly exempt?: ReadonlySet<string>;
}

/** Whether the stored work carries exactly what buildManifestWork makes of the stored hub app (server defaults aside). */
export function workMatchesApp(work: ManifestWork | undefined, app: Application | undefined): boolean {
  if (!work || !app) return false;
  const built = buildManifestWork(app, {});
  try {
    expect(work.metadata.labels).toStrictEqual(built.metadata.labels);
    expect(work.metadata.annotations).toStrictEqual(built.metadata.annotations);
    expect(withoutForwardMark(work.spec.workload)).toStrictEqual(built.spec.workload);
    expect(work.spec).toMatchObject(built.spec);
    return true;
  } catch {
    return false;
  }
}

/**
 * A workload with the controller's forwarding mark taken out of the payload's `operation.info` (the mark is
 * what the controller adds to an operation it forwards; the hub app's operation has none).
 */
function withoutForwardMark(workload: ManifestWork['spec']['workload']): ManifestWork['spec']['workload'] {
  return {
    ...workload,
    manifests: workload.manifests.map((manifest) => {
      const operation = (manifest as { operation?: { info?: Array<{ name?: string }> } }).operation;
      if (!operation?.info) return manifest;
      const info = operation.info.filter((entry) => entry.name !== 'pullfleet.io/forwarded');
      const { info: _info, ...rest } = operation;
      return { ...manifest, operation: info.length ? { ...rest, info } : rest };
    }),
  };
}

const hasCondition = (app: Application) =>
  (app.status?.conditions ?? []).some((c) => typeof c.message === 'string' && c.message.length > 0);

/**
 * Every violation of the fleet invariants, as sentences (empty when all hold):
 * - an opted-in app that can be delivered has exactly one pullfleet work, at its target, equal to buildManifestWork(app);
 * - an opted-in app that cannot be delivered carries a condition saying why (and gets no new work);
 * - an opted-in app without skip-reconcile carries a condition saying so;
 * - an app not opted in has no pullfleet work and no cleanup finalizer;
 * - every pullfleet work belongs to an existing app (statically delivered works are not pullfleet's to judge);
 * - no app has two works.
 */
export async function fleetViolations(
  cluster: TestCluster,
  fleet: Fleet,
  opts: InvariantOptions = {},
): Promise<string[]> {
  const problems: string[] = [];
  const apps = (
    await Promise.all(
      [fleet.hubNamespace, fleet.unboundNamespace].map((ns) =>
        cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: ns }),
      ),
    )
  ).flat();
  const works = (
    await Promise.all(
      fleet.clusters.map((ns) =>
        cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', {
          namespace: ns,
          labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
        }),
      ),
    )
  ).flat();
  const existingClusters = new Set<string>();
  for (const name of fleet.clusters)
    if (await cluster.get({ apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name }))
      existingClusters.add(name);

  const worksOf = new Map<string, ManifestWork[]>();
  for (const work of works) {
    const owner = `${work.metadata.annotations?.[HUB_APP_NAMESPACE_ANNOTATION] ?? '?'}/${work.metadata.annotations?.[HUB_APP_NAME_ANNOTATION] ?? '?'}`;
    worksOf.set(owner, [...(worksOf.get(owner) ?? []), work]);
  }
  const appKeys = new Set(apps.map((a) => `${a.metadata.namespace}/${a.metadata.name}`));

  for (const app of apps) {
    const key = `${app.metadata.namespace}/${app.metadata.name}`;
    const mine = worksOf.get(key) ?? [];
    if (mine.length > 1)
      problems.push(
        `${key} has ${mine.length} works: ${mine.map((w) => `${w.metadata.namespace}/${w.metadata.name}`).join(', ')}`,
      );
    if (app.metadata.deletionTimestamp || isStaticApplication(app)) continue;
    if (!isPullApplication(app)) {
      if (mine.length > 0)
        problems.push(
          `${key} is not opted in (pull label ${JSON.stringify(app.metadata.labels?.['apps.open-cluster-management.io/pull-to-ocm-managed-cluster'])}) but has work ${mine[0].metadata.namespace}/${mine[0].metadata.name}`,
        );
      if (app.metadata.finalizers?.includes(CLEANUP_FINALIZER))
        problems.push(`${key} is not opted in but still carries ${CLEANUP_FINALIZER}`);
      continue;
    }
    if (
      !parseBool(app.metadata.annotations?.[SKIP_RECONCILE_ANNOTATION]) &&
      !(app.status?.conditions ?? []).some((c) => c.message?.includes(SKIP_RECONCILE_ANNOTATION))
    ) {
      problems.push(`${key} is opted in without ${SKIP_RECONCILE_ANNOTATION}: "true" and has no condition saying so`);
    }
    const target = targetCluster(app);
    const deliverable =
      wrapProblem(app) === undefined &&
      target !== undefined &&
      app.metadata.namespace === fleet.hubNamespace &&
      existingClusters.has(target) &&
      Buffer.byteLength(JSON.stringify(buildManifestWork(app, {}))) <= MAX_WORK_BYTES;
    if (deliverable) {
      const at = mine.find(
        (w) =>
          w.metadata.namespace === target &&
          w.metadata.name === manifestWorkName(app.metadata.namespace!, app.metadata.name),
      );
      if (!at)
        problems.push(
          `${key} should be delivered to ${target} but has ${mine.length === 0 ? 'no work' : `only ${mine.map((w) => `${w.metadata.namespace}/${w.metadata.name}`).join(', ')}`}`,
        );
      else if (!workMatchesApp(at, app))
        problems.push(`${key}: work ${target}/${at.metadata.name} differs from buildManifestWork(app)`);
      continue;
    }
    if (!opts.exempt?.has(key) && !hasCondition(app))
      problems.push(
        `${key} is opted in but cannot be delivered (target ${JSON.stringify(target ?? app.metadata.annotations?.['apps.open-cluster-management.io/ocm-managed-cluster'])}) and has no condition saying why`,
      );
  }
  for (const [owner, list] of worksOf) {
    if (!appKeys.has(owner))
      problems.push(
        `work ${list.map((w) => `${w.metadata.namespace}/${w.metadata.name}`).join(', ')} has no hub app ${owner}`,
      );
  }
  return problems.sort();
}

/** Waits (bounded) until every fleet invariant holds; the timeout error lists what still does not. */
export async function assertFleetInvariants(
  cluster: TestCluster,
  fleet: Fleet,
  timeoutMs: number,
  opts: InvariantOptions = {},
): Promise<void> {
  await waitFor(
    'the fleet invariants to hold',
    async () => (await fleetViolations(cluster, fleet, opts)).length === 0,
    {
      timeoutMs,
      intervalMs: 100,
      describe: () => fleetViolations(cluster, fleet, opts),
    },
  );
}
