/**
 * Rollout waves of a pull ApplicationSet as Argo CD's RollingSync strategy. RollingSync steps select the
 * generated Applications by their labels, with `In` and `NotIn` only; the clusterDecisionResource
 * generator gives a template nothing but the decision's cluster name (`{{name}}`), so every generated
 * Application carries {@link ROLLOUT_CLUSTER_LABEL} and each step lists the cluster names of its wave as
 * synth resolved them. The last step takes every cluster the earlier steps do not name (`NotIn`): a
 * cluster the placement selects at runtime that the fleet did not declare lands there instead of in no
 * step (Argo CD never syncs an Application no step selects). Pure: no I/O.
 */
import { inFlightLimit, ROLLOUT_CLUSTER_LABEL, type RolloutWave } from './policy.js';
import type { JsonObject } from '../core/types.js';

/** `maxUpdate` of a RollingSync step: an integer count or a percentage string. */
function maxUpdateOf(wave: RolloutWave): number | string | undefined {
  if (!wave.maxInFlight) return undefined;
  return 'count' in wave.maxInFlight ? wave.maxInFlight.count : `${wave.maxInFlight.percent}%`;
}

/**
 * `spec.strategy` of a pull ApplicationSet rolled out in `waves` (in order), with `deletionOrder` when
 * given (`Reverse` deletes the last wave's Applications first; Argo CD 3.2 or later).
 */
export function rollingSyncStrategy(waves: readonly RolloutWave[], deletionOrder?: string): JsonObject {
  const earlier: string[] = [];
  const steps = waves.map((wave, i) => {
    const last = i === waves.length - 1;
    const maxUpdate = maxUpdateOf(wave);
    const step: JsonObject = {
      matchExpressions: [
        last
          ? { key: ROLLOUT_CLUSTER_LABEL, operator: 'NotIn', values: [...earlier].sort() }
          : { key: ROLLOUT_CLUSTER_LABEL, operator: 'In', values: [...wave.clusters] },
      ],
      ...(maxUpdate !== undefined ? { maxUpdate } : {}),
    };
    earlier.push(...wave.clusters);
    return step;
  });
  return {
    type: 'RollingSync',
    rollingSync: { steps },
    ...(deletionOrder ? { deletionOrder } : {}),
  };
}

/** The step (0-based) RollingSync puts `cluster` in, as {@link rollingSyncStrategy} renders it. */
export function rollingSyncStepOf(waves: readonly RolloutWave[], cluster: string): number {
  for (let i = 0; i < waves.length - 1; i++) if (waves[i].clusters.includes(cluster)) return i;
  return waves.length - 1;
}

/** How many of a wave's Applications RollingSync lets update at once. */
export function rollingSyncLimit(wave: RolloutWave, size: number): number {
  return inFlightLimit(wave.maxInFlight, size);
}
