/**
 * Writes `dist/<hub>/plan-state.json` for `pullfleet plan`: the spoke inventory (labels, claims, taints,
 * cluster-set membership) that decides placements but is never rendered as an object.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildPlanState, PLAN_STATE_FILE, serializePlanState } from '../model/index.js';
import type { Hub } from './hub.js';

/** The plan state file of each hub: `<hub>/plan-state.json` (relative to the output folder) → content. */
export function planStateFiles(hubs: readonly Hub[]): Map<string, string> {
  return new Map(hubs.map((hub) => [`${hub.name}/${PLAN_STATE_FILE}`, serializePlanState(buildPlanState(hub.name, hub.spokes.map((s) => s.inventoryEntry())))]));
}

/** Writes {@link planStateFiles} into `outdir`. */
export function writePlanState(hubs: readonly Hub[], outdir: string): void {
  for (const [file, text] of planStateFiles(hubs)) {
    const target = path.join(outdir, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text, 'utf8');
  }
}
