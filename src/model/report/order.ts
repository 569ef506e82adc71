/**
 * The two orders of report rows: storage order (by cluster, then application, so a stored report only
 * changes when the fleet does) and display order (worst first).
 */
import { FLEET_REPORT_STATES } from './report-crd.js';
import type { FleetReportRow } from './types.js';

function compareText(a: string | undefined, b: string | undefined): number {
  const x = a ?? '';
  const y = b ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Rows in storage order: by cluster, then application. */
export function sortRowsByCluster<T extends Pick<FleetReportRow, 'cluster' | 'application'>>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => compareText(a.cluster, b.cluster) || compareText(a.application, b.application));
}

/** Rows in display order: worst state first (Degraded, Missing, Stale, Unknown, Progressing, Healthy), OutOfSync before Synced, then by cluster. */
export function sortRowsProblemsFirst<T extends FleetReportRow>(rows: readonly T[]): T[] {
  const rank = (row: FleetReportRow): number => FLEET_REPORT_STATES.indexOf(row.state);
  const syncRank = (row: FleetReportRow): number => (row.syncStatus === 'Synced' ? 1 : 0);
  return [...rows].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      syncRank(a) - syncRank(b) ||
      compareText(a.cluster, b.cluster) ||
      compareText(a.application, b.application),
  );
}
