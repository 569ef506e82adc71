/**
 * The fleet report: for one pull ApplicationSet, one row per cluster its Placement(s) selected, built
 * from what the hub can see (PlacementDecisions, hub Applications, ManifestWorks and their status
 * feedback). Pure: the controller and `pullfleet status` both call these functions with observed
 * objects and a clock.
 *
 * Row states, decided in this order:
 * 1. `Missing`: no hub Application for the cluster, or no ManifestWork for it.
 * 2. `Degraded`: the work is not applied (`Applied=False`) or reports `Degraded=True`.
 * 3. `Stale`: the last feedback (`reconciledAt` of the spoke Application) is older than the stale
 *    threshold, or the work is older than the threshold and has never reported feedback.
 * 4. From the feedback: `Degraded` when the last operation Failed/Errored or health is Degraded;
 *    `Progressing` while an operation runs or health is Progressing; `Degraded` when health is Missing
 *    (resources absent and nothing creating them); `Healthy` when health is Healthy or Suspended;
 *    otherwise `Unknown` (including "no feedback yet").
 * Sync status is a separate facet: a Healthy row can be OutOfSync.
 *
 * Rows of agent-model Applications (label `pullfleet.io/delivery-model: agent-managed|agent-autonomous`)
 * come from the hub Application's own status, which the argocd-agent principal keeps in step with the
 * spoke: `Missing` when the principal has no Application for the cluster, `Stale` when its
 * `status.reconciledAt` is older than the threshold (or, with none, the Application is older than the
 * threshold), then the same feedback rules (step 4). There is no ManifestWork for them. For
 * agent-autonomous spokes the hub learns what to expect from the lists synth renders (see
 * expected-apps.ts): an expected Application the principal does not mirror is `Missing`.
 *
 * Stored rows are sorted by cluster, then application, so a report only changes when the fleet does;
 * {@link sortRowsProblemsFirst} gives the display order (worst state first).
 *
 * This module composes the report from its parts and re-exports what the rest of pullfleet reads:
 * - types.ts: the FleetReport, its rows and summary, the ApplicationSet and PlacementDecision parts read;
 * - generators.ts: the clusters an ApplicationSet is expected to reach (its generators and decisions);
 * - works.ts: the ManifestWork delivering a hub Application;
 * - row-fields.ts and rows.ts: one row (its fields, then its state and staleness);
 * - standalone-rows.ts: rows of Applications no ApplicationSet groups (`pullfleet status`);
 * - order.ts, summary.ts, fit.ts: row order, the summary and conditions, the size limit;
 * - acm.ts: the report in ACM's MulticlusterApplicationSetReport shape.
 * Which delivery model an object uses is read in ../delivery/classification.ts.
 */
import { canonicalJson } from '../core/canonical-json.js';
import { ARGOCD_API_VERSION, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/keys.js';
import type { Application } from '../core/types.js';
import { isAgentApplicationSet, isPullApplicationSet } from '../delivery/classification.js';
import { owningApplicationSet } from '../delivery/manifestwork.js';
import { MAX_ROWS_BYTES, fitRows } from './fit.js';
import { expectedClusters, placementNames } from './generators.js';
import { sortRowsByCluster } from './order.js';
import { FLEET_REPORT_API_VERSION, FLEET_REPORT_KIND } from './report-crd.js';
import { computeRow, DEFAULT_STALE_AFTER_SECONDS, missingApplicationMessage, reportCluster } from './rows.js';
import { reportConditions, summarize } from './summary.js';
import type {
  ApplicationSet,
  FleetReport,
  FleetReportInput,
  FleetReportResult,
  FleetReportRow,
  FleetReportStatus,
} from './types.js';
import { worksByNamespace } from './works.js';

export type {
  ApplicationSet,
  ApplicationSetGenerator,
  ConditionStatus,
  FleetReport,
  FleetReportInput,
  FleetReportResult,
  FleetReportRow,
  FleetReportStatus,
  FleetReportSummary,
  GeneratorLabelSelector,
  PlacementDecision,
  ReportResource,
  ReportResourceCounts,
  ReportState,
} from './types.js';
export {
  MCAS_HOSTING_APPSET_LABEL,
  MCAS_REPORT_API_VERSION,
  MCAS_REPORT_KIND,
  toMulticlusterApplicationSetReport,
  type MulticlusterApplicationSetReport,
} from './acm.js';
export { MAX_ROWS_BYTES, fitRows } from './fit.js';
export {
  clusterDecisionGenerators,
  decisionFeedsApplicationSet,
  expectedClusters,
  placementNames,
} from './generators.js';
export { sortRowsByCluster, sortRowsProblemsFirst } from './order.js';
export {
  MAX_ROW_IMAGES,
  MAX_ROW_MESSAGE_LENGTH,
  MAX_ROW_PROBLEM_RESOURCES,
  MAX_ROW_RESOURCE_MESSAGE_LENGTH,
  applicationStatusFeedback,
} from './row-fields.js';
export { DEFAULT_STALE_AFTER_SECONDS, computeAgentRow, computeRow, feedbackState, reportCluster } from './rows.js';
export { agentApplicationRows, staticApplicationRows } from './standalone-rows.js';
export { isProblemRow, reportConditions, summarize, withTransitionTime } from './summary.js';
export { findWorkForApplication, worksByNamespace, type WorkSet } from './works.js';

/** Whether an ApplicationSet gets a FleetReport: it delivers through the pull model or through managed agents. */
export function isReportedApplicationSet(appSet: Pick<ApplicationSet, 'spec'>): boolean {
  return isPullApplicationSet(appSet) || isAgentApplicationSet(appSet);
}

/** The hub Applications an ApplicationSet owns (and that are not being deleted), by the cluster each delivers to. */
function applicationsByCluster(
  appSet: ApplicationSet,
  applications: readonly Application[],
): Map<string, Application[]> {
  const key = `${appSet.metadata.namespace}/${appSet.metadata.name}`;
  const owned = applications.filter((app) => !app.metadata.deletionTimestamp && owningApplicationSet(app) === key);
  const byCluster = new Map<string, Application[]>();
  for (const app of owned) {
    const cluster = reportCluster(app);
    if (!cluster) continue;
    const list = byCluster.get(cluster) ?? [];
    list.push(app);
    byCluster.set(cluster, list);
  }
  return byCluster;
}

/**
 * The rows of an ApplicationSet, unsorted: one per owned Application on each expected cluster, `Missing` for an
 * expected cluster with none; and the earliest moment a row turns stale (epoch ms).
 */
function applicationSetRows(input: FleetReportInput & { applicationSet: ApplicationSet }): {
  rows: FleetReportRow[];
  recheck?: number;
} {
  const appSet = input.applicationSet;
  const staleAfter = input.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS;
  const byCluster = applicationsByCluster(appSet, input.applications);
  const rows: FleetReportRow[] = [];
  let recheck: number | undefined;
  const works = worksByNamespace(input.works);
  const agentAppSet = isAgentApplicationSet(appSet);
  for (const cluster of expectedClusters(appSet, input.decisions)) {
    const apps = byCluster.get(cluster) ?? [];
    if (apps.length === 0) {
      rows.push({
        cluster,
        state: 'Missing',
        message: missingApplicationMessage(appSet.metadata.name, cluster, agentAppSet),
      });
      continue;
    }
    for (const app of apps) {
      const { row, staleAt } = computeRow(cluster, app, works, input.now, staleAfter, appSet.metadata.name);
      rows.push(row);
      if (staleAt !== undefined && (recheck === undefined || staleAt < recheck)) recheck = staleAt;
    }
  }
  return { rows, recheck };
}

/** The rows and status for an ApplicationSet, given everything observed. */
export function computeFleetReportStatus(input: FleetReportInput & { applicationSet: ApplicationSet }): {
  status: FleetReportStatus;
  recheckAt?: Date;
} {
  const appSet = input.applicationSet;
  const { rows, recheck } = applicationSetRows(input);
  const sorted = sortRowsByCluster(rows);
  const summary = summarize(sorted);
  const { kept, omitted, omittedDetails } = fitRows(sorted, input.maxRowsBytes ?? MAX_ROWS_BYTES);
  const status: FleetReportStatus = {
    ...(appSet.metadata.generation === undefined ? {} : { observedGeneration: appSet.metadata.generation }),
    placements: placementNames(appSet),
    summary,
    clusters: kept,
    ...(omitted > 0 ? { omittedRows: omitted } : {}),
    ...(omittedDetails > 0 ? { omittedResourceDetails: omittedDetails } : {}),
    conditions: reportConditions(sorted, summary, input.previous?.conditions, input.now, appSet.metadata.generation),
  };
  return recheck === undefined ? { status } : { status, recheckAt: new Date(recheck) };
}

/**
 * The FleetReport an ApplicationSet should have, or undefined when it should have none (the
 * ApplicationSet is gone, being deleted, or delivers neither through the pull model nor through managed
 * agents). The report has
 * the ApplicationSet's name and namespace and is owned by it, so Kubernetes deletes it with it.
 */
export function computeFleetReport(input: FleetReportInput): FleetReportResult | undefined {
  const appSet = input.applicationSet;
  if (!appSet || appSet.metadata.deletionTimestamp || !isReportedApplicationSet(appSet)) return undefined;
  const staleAfter = input.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS;
  const { status, recheckAt } = computeFleetReportStatus({ ...input, applicationSet: appSet });
  const report: FleetReport = {
    apiVersion: FLEET_REPORT_API_VERSION,
    kind: FLEET_REPORT_KIND,
    metadata: {
      name: appSet.metadata.name,
      namespace: appSet.metadata.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      ...(appSet.metadata.uid ? { ownerReferences: [applicationSetOwnerReference(appSet)] } : {}),
    },
    spec: { applicationSet: appSet.metadata.name, ...(staleAfter > 0 ? { staleAfterSeconds: staleAfter } : {}) },
    status,
  };
  return recheckAt ? { report, recheckAt } : { report };
}

/** The owner reference tying a report to its ApplicationSet (garbage-collected with it). */
export function applicationSetOwnerReference(appSet: ApplicationSet): {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
} {
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'ApplicationSet',
    name: appSet.metadata.name,
    uid: appSet.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: false,
  };
}

/**
 * Whether two report statuses carry the same content (so the write can be skipped). Compares the
 * canonical JSON of both, ignoring key order.
 */
export function sameReportStatus(a: FleetReportStatus | undefined, b: FleetReportStatus | undefined): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The report without status: what server-side apply on the main resource sets. */
export function fleetReportShell(report: FleetReport): FleetReport {
  return { apiVersion: report.apiVersion, kind: report.kind, metadata: report.metadata, spec: report.spec };
}

/**
 * The write of a report's status through the status subresource (its identity and status only), or undefined
 * when the server already holds that status (`held`: the status the server holds, as last read or written).
 */
export function fleetReportStatusWrite(
  report: FleetReport,
  held: FleetReportStatus | undefined,
): (Pick<FleetReport, 'apiVersion' | 'kind' | 'metadata'> & { status: FleetReportStatus }) | undefined {
  const status = report.status!;
  if (sameReportStatus(held, status)) return undefined;
  return {
    apiVersion: FLEET_REPORT_API_VERSION,
    kind: FLEET_REPORT_KIND,
    metadata: { name: report.metadata.name, namespace: report.metadata.namespace },
    status,
  };
}
