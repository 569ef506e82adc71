/**
 * Keeping a report under the object size limit: when its rows do not fit, the least interesting ones lose
 * their resource details first, then are left out (and counted).
 */
import { sortRowsProblemsFirst } from './order.js';
import type { FleetReportRow } from './types.js';

/**
 * Most bytes of rows a report stores. An object must stay under etcd's 1.5 MiB; at about 280 bytes a row
 * this keeps every row up to roughly 3,500 clusters. Beyond it the least interesting rows are left out
 * (synced and healthy first, then by state, best first) and counted in `omittedRows`; the summary still
 * counts every cluster.
 */
export const MAX_ROWS_BYTES = 1_000_000;

/**
 * Rows that fit in `maxBytes` of JSON: all of them when they fit; otherwise the least interesting are
 * dropped first (reverse display order: synced healthy, out-of-sync healthy, progressing, unknown, stale,
 * missing, degraded; later clusters first). Kept rows stay in their original order.
 */
export function fitRows(
  rows: readonly FleetReportRow[],
  maxBytes: number,
): { kept: FleetReportRow[]; omitted: number; omittedDetails: number } {
  const sizeOf = (row: FleetReportRow) => Buffer.byteLength(JSON.stringify(row), 'utf8') + 1;
  const sizes = rows.map(sizeOf);
  let total = sizes.reduce((sum, size) => sum + size, 2);
  if (total <= maxBytes) return { kept: [...rows], omitted: 0, omittedDetails: 0 };
  const dropOrder = sortRowsProblemsFirst(rows.map((row, index) => ({ ...row, index }))).reverse();
  // First the resource details (names of resources, images) of the least interesting rows go; their counts stay.
  const slim = [...rows];
  let omittedDetails = 0;
  for (const candidate of dropOrder) {
    if (total <= maxBytes) break;
    const row = slim[candidate.index];
    if (!row.problemResources && !row.images) continue;
    const { problemResources: _problems, images: _images, ...rest } = row;
    slim[candidate.index] = rest;
    const size = sizeOf(rest);
    total -= sizes[candidate.index] - size;
    sizes[candidate.index] = size;
    omittedDetails++;
  }
  const dropped = new Set<number>();
  for (const candidate of dropOrder) {
    if (total <= maxBytes) break;
    dropped.add(candidate.index);
    total -= sizes[candidate.index];
  }
  return { kept: slim.filter((_, index) => !dropped.has(index)), omitted: dropped.size, omittedDetails };
}
