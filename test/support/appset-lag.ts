/**
 * For rollout tests that step every actor but pullfleet's controller (the applicationset-controller as
 * progressive-sync-sim.ts plays it, each spoke as stepped-spokes.ts plays it): why the controller has not yet
 * acted on everything the others did, so a test takes its next step only once it has.
 */
import { ARGOCD_API_VERSION, SPEC_HASH_ANNOTATION } from '../../src/model/core/keys.js';
import type { Application } from '../../src/model/core/types.js';
import type { TestCluster } from './cluster.js';
import type { ProgressiveSyncSim } from './progressive-sync-sim.js';
import type { SteppedSpokes } from './stepped-spokes.js';

/** The ApplicationSet a stepped rollout runs, and the actors a test steps. */
export interface SteppedAppSet {
  readonly cluster: TestCluster;
  readonly sim: ProgressiveSyncSim;
  readonly spokes: SteppedSpokes;
  readonly namespace: string;
  /** The ApplicationSet's name. */
  readonly name: string;
  /** The ManagedClusters it generates a hub Application for. */
  readonly clusters: readonly string[];
  /** The name of the hub Application it generates for a cluster. */
  readonly hubAppName: (cluster: string) => string;
  /**
   * Whether an operation the spoke is still running may stay in its work after the hub Application dropped it
   * (otherwise the work still carrying it is lag).
   */
  readonly runningOperationMayStay: boolean;
}

/** What the controller has not yet caught up with (empty: it has). */
export async function appSetLag(run: SteppedAppSet): Promise<string[]> {
  const lag: string[] = [];
  const appSet = await run.cluster.get<{ metadata: { resourceVersion?: string } }>({
    apiVersion: ARGOCD_API_VERSION,
    kind: 'ApplicationSet',
    namespace: run.namespace,
    name: run.name,
  });
  if (run.sim.seenVersion() !== appSet?.metadata.resourceVersion)
    lag.push('the applicationset-controller has not seen the ApplicationSet yet');
  const apps = await run.cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: run.namespace });
  for (const name of run.clusters) {
    const app = apps.find((a) => a.metadata.name === run.hubAppName(name));
    if (!app) continue;
    if (run.sim.seenVersion(app.metadata.name) !== app.metadata.resourceVersion)
      lag.push(`${app.metadata.name}: the applicationset-controller has not seen its last version`);
    const work = await run.spokes.work(name);
    const payload = run.spokes.payload(work);
    const wanted = (app.spec as { source?: { targetRevision?: string } }).source?.targetRevision;
    if (!payload || payload.spec?.source?.targetRevision !== wanted) {
      lag.push(`${app.metadata.name}: its work does not carry the spec at ${wanted} yet`);
      continue;
    }
    const state = run.spokes.state(name);
    const forwarded = payload.operation?.info?.find((i) => i.name === 'pullfleet.io/forwarded')?.value;
    if (app.operation !== undefined && (payload.operation === undefined || forwarded === state.forwardId))
      lag.push(`${app.metadata.name}: its operation is not forwarded yet`);
    if (
      app.operation === undefined &&
      payload.operation !== undefined &&
      !(run.runningOperationMayStay && state.phase === 'Running')
    )
      lag.push(`${app.metadata.name}: the operation the spoke ran is still in its work`);
    const reported = state.reported;
    if (!reported) continue;
    const sync =
      reported.specHash === payload.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ? reported.sync : 'Unknown';
    const shown = app.status;
    // Written in the same patch as the operation state: shown for the record, never waited on.
    const result = (shown?.operationState?.syncResult as { revision?: string } | undefined)?.revision;
    if (
      shown?.sync?.revision !== reported.revision ||
      shown?.sync?.status !== sync ||
      shown?.health?.status !== reported.health ||
      (reported.startedAt !== undefined && shown?.operationState?.startedAt !== reported.startedAt)
    )
      lag.push(
        `${app.metadata.name}: shows ${shown?.sync?.status}/${shown?.health?.status} at ${shown?.sync?.revision?.slice(0, 7)}, started ${shown?.operationState?.startedAt}, synced ${result?.slice(0, 7)}; the spoke reported ${sync}/${reported.health} at ${reported.revision.slice(0, 7)}, started ${reported.startedAt}, synced ${state.syncedRevision?.slice(0, 7)}`,
      );
  }
  return lag;
}
