/**
 * Rows of hub Applications no ApplicationSet groups, for `pullfleet status`: statically delivered ones
 * (synth rendered their works) and agent-model ones (the principal mirrors them, or synth rendered them one
 * by one), including the Applications agent-autonomous spokes are expected to have.
 */
import type { Application } from '../core/types.js';
import { agentCluster, isAgentModel } from '../delivery/classification.js';
import { SPOKE_APPS_APPLICATION } from '../delivery/delivery-model.js';
import { targetCluster } from '../delivery/manifestwork.js';
import type { ApplicationFeedback } from '../reconcile/feedback.js';
import type { ExpectedApplications } from '../reconcile/expected-apps.js';
import { sortRowsByCluster } from './order.js';
import { copyFeedback, copyStatusResources, stringList, truncate } from './row-fields.js';
import { computeAgentRow, computeRow, DEFAULT_STALE_AFTER_SECONDS, feedbackState } from './rows.js';
import type { FleetReportRow } from './types.js';
import type { WorkSet } from './works.js';

/**
 * Rows for statically delivered hub Applications (synth rendered their works, so no ApplicationSet
 * groups them): one row per Application, from its ManifestWork when `works` is given, else from the
 * status the controller wrote back onto the hub Application (staleness cannot be judged then).
 */
export function staticApplicationRows(
  apps: readonly Application[],
  works: WorkSet | undefined,
  now: Date,
  staleAfterSeconds = DEFAULT_STALE_AFTER_SECONDS,
): FleetReportRow[] {
  const rows: FleetReportRow[] = [];
  for (const app of apps) {
    const cluster = targetCluster(app) ?? '';
    if (works) {
      rows.push(computeRow(cluster, app, works, now, staleAfterSeconds).row);
      continue;
    }
    const status = app.status ?? {};
    const feedback: ApplicationFeedback = {
      ...(status.sync?.status ? { syncStatus: status.sync.status } : {}),
      ...(status.health?.status ? { healthStatus: status.health.status } : {}),
      ...(status.sync?.revision ? { syncRevision: status.sync.revision } : {}),
      ...(stringList(status.sync?.revisions) ? { syncRevisions: stringList(status.sync?.revisions) } : {}),
      ...(status.operationState?.phase ? { operationStatePhase: status.operationState.phase } : {}),
      ...(status.operationState?.message ? { operationStateMessage: status.operationState.message } : {}),
    };
    const row: FleetReportRow = {
      cluster,
      application: app.metadata.name,
      state: feedbackState(Object.keys(feedback).length ? feedback : undefined),
    };
    copyFeedback(row, feedback);
    copyStatusResources(row, app);
    row.message = 'from the hub Application status (ManifestWorks not readable)';
    rows.push(row);
  }
  return sortRowsByCluster(rows);
}

/**
 * Rows for agent-model hub Applications no ApplicationSet groups (agent-autonomous Applications the
 * principal mirrors, and managed ones rendered one by one): one row per Application, from its status.
 *
 * With `expected` (the lists synth recorded for agent-autonomous spokes, see
 * {@link parseExpectedApplications}), every expected (cluster, Application) pair gets a row too: from the
 * Application the principal mirrors into the namespace named after the cluster when there is one (with or
 * without the delivery-model label), else `Missing` with a message naming the spoke's folder and the
 * bootstrap Application that syncs it. Mirrored Applications nobody expects keep their rows.
 */
export function agentApplicationRows(
  apps: readonly Application[],
  now: Date,
  staleAfterSeconds = DEFAULT_STALE_AFTER_SECONDS,
  expected: readonly ExpectedApplications[] = [],
): FleetReportRow[] {
  const rows: FleetReportRow[] = [];
  const used = new Set<Application>();
  if (expected.length > 0) {
    const byKey = new Map<string, Application>();
    for (const app of apps) byKey.set(`${app.metadata.namespace ?? ''}/${app.metadata.name}`, app);
    const seen = new Set<string>();
    for (const list of expected) {
      for (const name of list.applications) {
        const key = `${list.cluster}/${name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const app = byKey.get(key);
        if (app) {
          used.add(app);
          rows.push(computeAgentRow(list.cluster, app, now, staleAfterSeconds).row);
        } else {
          rows.push({
            cluster: list.cluster,
            application: name,
            state: 'Missing',
            message: truncate(missingAutonomousMessage(list, name)),
          });
        }
      }
    }
  }
  for (const app of apps) {
    if (used.has(app) || !isAgentModel(app)) continue;
    rows.push(computeAgentRow(agentCluster(app) ?? '', app, now, staleAfterSeconds).row);
  }
  return sortRowsByCluster(rows);
}

/** Why an expected autonomous Application has no row of its own, and where to look. */
function missingAutonomousMessage(list: ExpectedApplications, name: string): string {
  const argoNamespace = list.source.split('/')[0] || 'the Argo CD namespace';
  const folder = list.folder ? `${list.folder.replace(/\/+$/, '')}/` : `dist/<hub>/spokes/${list.cluster}/`;
  return `the argocd-agent principal mirrors no Application ${list.cluster}/${name}: the spoke's Argo CD has not created it from its folder ${folder} (expected by ${list.source}); on spoke ${list.cluster} check the bootstrap Application ${argoNamespace}/${SPOKE_APPS_APPLICATION} (synced, pointing at that folder) and that the agent is connected to the principal`;
}
