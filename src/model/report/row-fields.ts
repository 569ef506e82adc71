/**
 * What goes into a row: the spoke's feedback, resource counts, the first problem resources and images,
 * and notes about missing resource data, each cut to the limits below so a report of thousands of rows
 * stays under the object size limit.
 */
import type { Application } from '../core/types.js';
import type { ApplicationFeedback } from '../reconcile/feedback.js';
import {
  countResources,
  imagesFromStatus,
  omittedText,
  resourceRank,
  resourcesFromStatus,
  type ResourceCounts,
  type ResourceSummaryReading,
  type SummaryResource,
} from '../reconcile/resource-summary.js';
import type { FleetReportRow, ReportResource, ReportResourceCounts } from './types.js';

/** Longest operation message kept in a row (a report holds hundreds of rows; objects are capped at ~1.5 MB). */
export const MAX_ROW_MESSAGE_LENGTH = 512;
/** Most resources a row names in `problemResources` (the first Degraded, Missing and OutOfSync ones). */
export const MAX_ROW_PROBLEM_RESOURCES = 3;
/** Most images a row lists. */
export const MAX_ROW_IMAGES = 10;
/** Longest health message kept per resource in a row. */
export const MAX_ROW_RESOURCE_MESSAGE_LENGTH = 120;

/** Epoch ms of a Kubernetes time, or undefined when absent or unreadable. */
export function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** `text` cut to `max` characters (the last one an ellipsis). */
export function truncate(text: string | undefined, max = MAX_ROW_MESSAGE_LENGTH): string | undefined {
  if (text === undefined) return undefined;
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Copies what the spoke reported into a row (messages truncated to the row limit). */
export function copyFeedback(row: FleetReportRow, feedback: ApplicationFeedback): void {
  if (feedback.syncStatus) row.syncStatus = feedback.syncStatus;
  if (feedback.healthStatus) row.healthStatus = feedback.healthStatus;
  const revision = feedback.syncRevisions?.length ? feedback.syncRevisions.join(',') : feedback.syncRevision;
  if (revision) row.revision = revision;
  if (feedback.operationStatePhase) row.operationPhase = feedback.operationStatePhase;
  if (feedback.operationStateStartedAt) row.operationStartedAt = feedback.operationStateStartedAt;
  const opMessage = truncate(feedback.operationStateMessage);
  if (opMessage) row.operationMessage = opMessage;
}

/** Row counts: `total` and every count that is not zero. */
function rowCounts(counts: ResourceCounts): ReportResourceCounts {
  const row: ReportResourceCounts = { total: counts.total };
  const keys = ['healthy', 'progressing', 'degraded', 'suspended', 'missing', 'unknown', 'outOfSync'] as const;
  for (const key of keys) if (counts[key] > 0) row[key] = counts[key];
  return row;
}

/** The resources a row names: the first Degraded, Missing and OutOfSync ones, worst first. */
function problemResourcesOf(resources: readonly SummaryResource[]): ReportResource[] {
  // Only problems are ranked and sorted (this runs for every row of every report).
  const problems: Array<{ resource: SummaryResource; index: number; rank: number }> = [];
  resources.forEach((resource, index) => {
    const rank = resourceRank(resource);
    if (rank <= 3) problems.push({ resource, index, rank });
  });
  return problems
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .slice(0, MAX_ROW_PROBLEM_RESOURCES)
    .map(({ resource }) => ({
      kind: resource.kind,
      ...(resource.namespace ? { namespace: resource.namespace } : {}),
      name: resource.name,
      ...(resource.health ? { health: resource.health } : {}),
      ...(resource.sync ? { sync: resource.sync } : {}),
      ...(resource.message ? { message: truncate(resource.message, MAX_ROW_RESOURCE_MESSAGE_LENGTH)! } : {}),
    }));
}

/** Sets a row's resource counts, its first problem resources and its images (each within the row limits). */
function setResources(
  row: FleetReportRow,
  counts: ResourceCounts,
  resources: readonly SummaryResource[],
  images: readonly string[],
): void {
  row.resources = rowCounts(counts);
  const problems = problemResourcesOf(resources);
  if (problems.length > 0) row.problemResources = problems;
  if (images.length > 0) row.images = images.slice(0, MAX_ROW_IMAGES);
}

/** Copies what the work agent's resource summary says into a row (counts, first problems, images, notes). */
export function copyResourceSummary(
  row: FleetReportRow,
  reading: ResourceSummaryReading,
  appHealth: string | undefined,
): void {
  const notes: string[] = [];
  if (reading.state === 'Reported') {
    const summary = reading.summary;
    setResources(row, summary.counts, summary.resources, summary.images);
    if (summary.healthSource === 'appTree' && appHealth !== undefined && appHealth !== 'Healthy')
      notes.push(
        "the spoke's Argo CD keeps no per-resource health (resourceHealthSource appTree): set controller.resource.health.persist=true there",
      );
    const more = omittedText(summary);
    if (more) notes.push(`the summary lists ${summary.resources.length} of ${summary.counts.total} resources, ${more}`);
  } else if (reading.state === 'Rejected') {
    notes.push(`the work agent could not build the resource summary: ${reading.message}`);
  } else if (reading.state === 'Unsupported') {
    notes.push(
      'the work agent reports no resource summary (conditionRules need OCM 1.0 or later); scalar status still flows',
    );
  }
  if (notes.length > 0) row.resourceMessage = truncate(notes.join('; '));
}

/** Resource data of an Application whose own status lists its resources (agent-model apps; hub apps pullfleet wrote). */
export function copyStatusResources(row: FleetReportRow, app: Pick<Application, 'status'>): void {
  if (!Array.isArray(app.status?.resources)) return;
  const resources = resourcesFromStatus(app.status);
  setResources(row, countResources(resources), resources, imagesFromStatus(app.status));
}

/** A non-empty list of strings (a multi-source app's `status.sync.revisions`), else undefined. */
export function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string') ? value : undefined;
}

/** What the principal mirrored onto an agent-model hub Application, in feedback terms. */
export function applicationStatusFeedback(app: Pick<Application, 'status'>): ApplicationFeedback | undefined {
  const status = app.status;
  if (!status) return undefined;
  // Plain assignments: this runs once per row of reports with thousands of rows.
  const feedback: { -readonly [K in keyof ApplicationFeedback]: ApplicationFeedback[K] } = {};
  let any = false;
  const sync = status.sync;
  if (sync?.status) {
    feedback.syncStatus = sync.status;
    any = true;
  }
  if (sync?.revision) {
    feedback.syncRevision = sync.revision;
    any = true;
  }
  const revisions = stringList(sync?.revisions);
  if (revisions) {
    feedback.syncRevisions = revisions;
    any = true;
  }
  const health = status.health?.status;
  if (health) {
    feedback.healthStatus = health;
    any = true;
  }
  const operation = status.operationState;
  if (operation?.phase) {
    feedback.operationStatePhase = operation.phase;
    any = true;
  }
  if (operation?.startedAt) {
    feedback.operationStateStartedAt = operation.startedAt;
    any = true;
  }
  if (operation?.message) {
    feedback.operationStateMessage = operation.message;
    any = true;
  }
  if (status.reconciledAt) {
    feedback.reconciledAt = status.reconciledAt;
    any = true;
  }
  return any ? feedback : undefined;
}
