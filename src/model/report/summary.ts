/**
 * What a report says about all its rows: the counts of its summary and its `Ready` and `Degraded`
 * conditions.
 */
import type { Condition } from '../core/types.js';
import { kubeTime } from '../core/time.js';
import type { FleetReportRow, FleetReportSummary } from './types.js';

/** A summary of no rows. */
export const EMPTY_SUMMARY: FleetReportSummary = {
  clusters: 0,
  synced: 0,
  outOfSync: 0,
  healthy: 0,
  progressing: 0,
  degraded: 0,
  missing: 0,
  stale: 0,
  unknown: 0,
};

/**
 * Integer counts over rows. `healthy`, `progressing`, `degraded`, `missing`, `stale` and `unknown`
 * count rows by state (with one Application per cluster they add up to `clusters`); `synced` and
 * `outOfSync` count rows whose current (neither missing nor stale) feedback says so; `clusters` is the
 * number of distinct expected clusters.
 */
export function summarize(rows: readonly FleetReportRow[]): FleetReportSummary {
  const summary = { ...EMPTY_SUMMARY };
  summary.clusters = new Set(rows.map((row) => row.cluster)).size;
  for (const row of rows) {
    switch (row.state) {
      case 'Healthy':
        summary.healthy++;
        break;
      case 'Progressing':
        summary.progressing++;
        break;
      case 'Degraded':
        summary.degraded++;
        break;
      case 'Missing':
        summary.missing++;
        break;
      case 'Stale':
        summary.stale++;
        break;
      case 'Unknown':
        summary.unknown++;
        break;
    }
    if (row.state !== 'Missing' && row.state !== 'Stale') {
      if (row.syncStatus === 'Synced') summary.synced++;
      else if (row.syncStatus === 'OutOfSync') summary.outOfSync++;
    }
  }
  return summary;
}

/** Whether a row needs attention in a CI gate: degraded, missing or stale. */
export function isProblemRow(row: Pick<FleetReportRow, 'state'>): boolean {
  return row.state === 'Degraded' || row.state === 'Missing' || row.state === 'Stale';
}

function clusterList(rows: readonly FleetReportRow[], limit = 10): string {
  const names = [...new Set(rows.map((row) => row.cluster))];
  const shown = names.slice(0, limit).join(', ');
  return names.length > limit ? `${shown} and ${names.length - limit} more` : shown;
}

/**
 * Carries `lastTransitionTime` over from the previous condition of the same type when its status did
 * not change; otherwise stamps `now`.
 */
export function withTransitionTime(
  next: Omit<Condition, 'lastTransitionTime'>,
  previous: readonly Condition[] | undefined,
  now: Date,
): Condition {
  const before = previous?.find((condition) => condition.type === next.type);
  const lastTransitionTime =
    before && before.status === next.status && before.lastTransitionTime ? before.lastTransitionTime : kubeTime(now);
  return { ...next, lastTransitionTime };
}

/** A condition before its generation and transition time are stamped. */
type BareCondition = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** The `Degraded` condition: True while some row is degraded, missing or stale, naming them. */
function degradedCondition(rows: readonly FleetReportRow[], summary: FleetReportSummary): BareCondition {
  const problems = rows.filter(isProblemRow);
  if (problems.length === 0) {
    return {
      type: 'Degraded',
      status: 'False',
      reason: 'NoProblems',
      message: 'no cluster is degraded, missing or stale',
    };
  }
  const reason = summary.degraded > 0 ? 'ClustersDegraded' : summary.missing > 0 ? 'ClustersMissing' : 'FeedbackStale';
  return {
    type: 'Degraded',
    status: 'True',
    reason,
    message: `${summary.degraded} degraded, ${summary.missing} missing, ${summary.stale} stale of ${summary.clusters} clusters: ${clusterList(problems)}`,
  };
}

/** The `Ready` condition: True when every row is synced and healthy, else naming the clusters waited for. */
function readyCondition(rows: readonly FleetReportRow[], summary: FleetReportSummary): BareCondition {
  const notReady = rows.filter((row) => row.state !== 'Healthy' || row.syncStatus !== 'Synced');
  if (rows.length === 0) {
    return { type: 'Ready', status: 'False', reason: 'NoClusters', message: 'the placement selects no clusters' };
  }
  if (notReady.length === 0) {
    return {
      type: 'Ready',
      status: 'True',
      reason: 'AllSyncedAndHealthy',
      message: `all ${summary.clusters} clusters are synced and healthy`,
    };
  }
  return {
    type: 'Ready',
    status: 'False',
    reason: 'NotAllSyncedAndHealthy',
    message: `${summary.clusters - new Set(notReady.map((row) => row.cluster)).size} of ${summary.clusters} clusters are synced and healthy; waiting for ${clusterList(notReady)}`,
  };
}

/** The Ready and Degraded conditions for a set of rows. */
export function reportConditions(
  rows: readonly FleetReportRow[],
  summary: FleetReportSummary,
  previous: readonly Condition[] | undefined,
  now: Date,
  generation?: number,
): Condition[] {
  const withGeneration = generation === undefined ? {} : { observedGeneration: generation };
  const ready = { ...readyCondition(rows, summary), ...withGeneration };
  const degraded = { ...degradedCondition(rows, summary), ...withGeneration };
  return [withTransitionTime(ready, previous, now), withTransitionTime(degraded, previous, now)];
}
