/**
 * Writes `dist/<hub>/plan-state.json` for `pullfleet plan`: the spoke inventory (labels, claims, taints,
 * cluster-set membership) that decides placements but is never rendered as an object, and each spoke's
 * delivery model, works and move in progress (read back by the next synth for a hand-over between models).
 */
import { buildPlanState, PLAN_STATE_FILE, serializePlanState } from '../model/plan/state.js';
import type { Hub } from './hub.js';
import { hubParts } from './_hub-parts.js';

/** The plan state file of each hub: `<hub>/plan-state.json` (relative to the output folder) → content. */
export function planStateFiles(hubs: readonly Hub[]): Map<string, string> {
  return new Map(
    hubs.map((hub) => [
      `${hub.name}/${PLAN_STATE_FILE}`,
      serializePlanState(
        buildPlanState(
          hub.name,
          hub.spokes.map((s) => ({ ...s.inventoryEntry(), ...hubParts(hub).ledger.spokeDeliveryState(s.name) })),
        ),
      ),
    ]),
  );
}
