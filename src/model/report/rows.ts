/**
 * One report row: the state of one hub Application on one cluster, decided from what the hub sees (the
 * rules are listed in report.ts). A pull-model row reads the ManifestWork that carries the Application and
 * the status feedback it returns; an agent-model row reads the hub Application's own status, which the
 * argocd-agent principal keeps in step with the spoke.
 */
import type { Application, Condition, ManifestWork } from '../core/types.js';
import { manifestWorkName } from '../core/names.js';
import { kubeTime } from '../core/time.js';
import { agentCluster, isAgentModel } from '../delivery/classification.js';
import { spokeAppNamespace, targetCluster } from '../delivery/manifestwork.js';
import { type ApplicationFeedback, readApplicationFeedback, workCondition } from '../reconcile/feedback.js';
import { readResourceSummary } from '../reconcile/resource-summary.js';
import {
  applicationStatusFeedback,
  copyFeedback,
  copyResourceSummary,
  copyStatusResources,
  parseTime,
  truncate,
} from './row-fields.js';
import type { ConditionStatus, FleetReportRow, ReportState } from './types.js';
import { findWorkForApplication, type WorkSet } from './works.js';

/** The hub Application condition the controller sets when it cannot deliver (same value as the status model's). */
const DELIVERY_ERROR_CONDITION_TYPE = 'DeliveryError';
/** Feedback older than this makes a row Stale unless the caller chooses another threshold. */
export const DEFAULT_STALE_AFTER_SECONDS = 900;

/** A row, and when it turns stale. */
export interface RowResult {
  row: FleetReportRow;
  /** Epoch ms at which this row turns stale when nothing changes. */
  staleAt?: number;
}

/** The cluster a report row of `app` is about, whatever its model. */
export function reportCluster(app: Application): string | undefined {
  return isAgentModel(app) ? agentCluster(app) : targetCluster(app);
}

/** The state of a row from the spoke Application's feedback alone (step 4 of the rules in report.ts). */
export function feedbackState(feedback: ApplicationFeedback | undefined): ReportState {
  if (!feedback) return 'Unknown';
  const phase = feedback.operationStatePhase;
  const health = feedback.healthStatus;
  if (phase === 'Failed' || phase === 'Error' || health === 'Degraded') return 'Degraded';
  if (phase === 'Running' || phase === 'Terminating' || health === 'Progressing') return 'Progressing';
  if (health === 'Missing') return 'Degraded';
  if (health === 'Healthy' || health === 'Suspended') return 'Healthy';
  return 'Unknown';
}

/** A hint naming the likely fix when no hub Application exists for an expected cluster. */
export function missingApplicationMessage(appSetName: string, cluster: string, agent = false): string {
  if (agent) {
    return `ApplicationSet ${appSetName} has not generated an Application for cluster ${cluster} (the principal needs an Argo CD cluster Secret named "${cluster}" for its agent: check the GitOpsCluster that registers it and that the agent is connected)`;
  }
  return `ApplicationSet ${appSetName} has not generated an Application for cluster ${cluster} (an Argo CD cluster Secret named "${cluster}" must exist on the hub)`;
}

function conditionStatus(work: ManifestWork, type: string): ConditionStatus {
  return workCondition(work, type)?.status ?? 'Unknown';
}

function conditionMessage(condition: Condition | undefined): string {
  return condition?.message || condition?.reason || 'no reason given';
}

/** What a row says while it waits for its first feedback, and once its feedback is too old. */
interface FreshnessWords {
  /** The message of a row without feedback that is not stale (yet). */
  readonly waiting: string;
  /** The object whose creation time dates a row that never had feedback (`ManifestWork`, `Application`). */
  readonly createdObject: string;
  /** The message of a stale row, given since when nothing was heard (a time, or "the … was created at …"). */
  readonly stale: (since: string) => string;
}

/**
 * Settles a row's state from its feedback and the age of that feedback (steps 3 and 4 of the rules in
 * report.ts): `Stale` when the last feedback (`lastFeedback`, epoch ms) is older than the threshold, or when
 * there is none and the object delivering the app (created at `createdTimestamp`) is; otherwise the state
 * the feedback says. Returns when the row turns stale if nothing changes.
 */
function settleFreshness(
  row: FleetReportRow,
  feedback: ApplicationFeedback | undefined,
  lastFeedback: number | undefined,
  createdTimestamp: string | undefined,
  now: Date,
  staleAfterSeconds: number,
  words: FreshnessWords,
): RowResult {
  const thresholdMs = staleAfterSeconds * 1000;
  const nowMs = now.getTime();
  if (thresholdMs <= 0) {
    // Staleness checks switched off.
    row.state = feedbackState(feedback);
    if (!feedback) row.message = words.waiting;
    return { row };
  }
  if (lastFeedback !== undefined) {
    const staleAt = lastFeedback + thresholdMs;
    if (nowMs >= staleAt) {
      row.state = 'Stale';
      row.message = words.stale(`${row.lastFeedbackTime}`);
      return { row };
    }
    row.state = feedbackState(feedback);
    return { row, staleAt };
  }
  const created = parseTime(createdTimestamp);
  if (!feedback) {
    if (created !== undefined && nowMs >= created + thresholdMs) {
      row.state = 'Stale';
      row.message = words.stale(`the ${words.createdObject} was created at ${kubeTime(new Date(created))}`);
      return { row };
    }
    row.message = words.waiting;
    return { row, staleAt: created === undefined ? undefined : created + thresholdMs };
  }
  // Feedback without a reconcile time: its age cannot be judged, so it is taken as current.
  row.state = feedbackState(feedback);
  return { row };
}

/** One row: the hub Application `app` (if any) delivering to `cluster`. */
export function computeRow(
  cluster: string,
  app: Application | undefined,
  works: WorkSet,
  now: Date,
  staleAfterSeconds: number,
  appSetName = '',
): RowResult {
  if (!app) return { row: { cluster, state: 'Missing', message: missingApplicationMessage(appSetName, cluster) } };
  if (isAgentModel(app)) return computeAgentRow(cluster, app, now, staleAfterSeconds);
  const hubNamespace = app.metadata.namespace ?? '';
  const row: FleetReportRow = { cluster, state: 'Unknown', application: app.metadata.name };
  const work = findWorkForApplication(app, works);
  if (!work) {
    row.manifestWork = manifestWorkName(hubNamespace, app.metadata.name);
    row.state = 'Missing';
    const deliveryError = app.status?.conditions?.find(
      (condition) => condition.type === DELIVERY_ERROR_CONDITION_TYPE,
    )?.message;
    row.message = truncate(
      `ManifestWork ${cluster}/${row.manifestWork} does not exist${deliveryError ? `: ${deliveryError}` : ''}`,
    );
    return { row };
  }
  row.manifestWork = work.metadata.name;
  row.workApplied = conditionStatus(work, 'Applied');
  row.workAvailable = conditionStatus(work, 'Available');

  const feedback = readApplicationFeedback(work, spokeAppNamespace(app), app.metadata.name);
  if (feedback) copyFeedback(row, feedback);
  copyResourceSummary(
    row,
    readResourceSummary(work, spokeAppNamespace(app), app.metadata.name),
    feedback?.healthStatus,
  );
  const lastFeedback = parseTime(feedback?.reconciledAt);
  if (lastFeedback !== undefined) row.lastFeedbackTime = kubeTime(new Date(lastFeedback));

  const applied = workCondition(work, 'Applied');
  const degraded = workCondition(work, 'Degraded');
  if (applied?.status === 'False') {
    row.state = 'Degraded';
    row.message = truncate(`ManifestWork not applied on the spoke: ${conditionMessage(applied)}`);
    return { row };
  }
  if (degraded?.status === 'True') {
    row.state = 'Degraded';
    row.message = truncate(`ManifestWork reports Degraded: ${conditionMessage(degraded)}`);
    return { row };
  }
  return settleFreshness(row, feedback, lastFeedback, work.metadata.creationTimestamp, now, staleAfterSeconds, {
    waiting: 'waiting for the first status feedback from the spoke',
    createdObject: 'ManifestWork',
    stale: (since) => `no status feedback from the spoke since ${since} (threshold ${staleAfterSeconds}s)`,
  });
}

/**
 * One row for an agent-model hub Application: from its own status (the principal mirrors the spoke's),
 * staleness from `status.reconciledAt`. No ManifestWork is involved.
 */
export function computeAgentRow(cluster: string, app: Application, now: Date, staleAfterSeconds: number): RowResult {
  const row: FleetReportRow = { cluster, state: 'Unknown', application: app.metadata.name };
  const feedback = applicationStatusFeedback(app);
  if (feedback) copyFeedback(row, feedback);
  copyStatusResources(row, app);
  const lastReconcile = parseTime(feedback?.reconciledAt);
  if (lastReconcile !== undefined) row.lastFeedbackTime = kubeTime(new Date(lastReconcile));
  return settleFreshness(row, feedback, lastReconcile, app.metadata.creationTimestamp, now, staleAfterSeconds, {
    waiting: 'waiting for the first status from the agent (the principal mirrors it onto this Application)',
    createdObject: 'Application',
    stale: (since) =>
      `no status from the agent of ${cluster} since ${since} (threshold ${staleAfterSeconds}s): check that the agent is connected to the principal`,
  });
}
