/**
 * The rollouts of waved static apps in `pullfleet status`: read from the state ConfigMaps the controller
 * keeps (`progress.json`), shown under the static applications of their namespace, one line per wave.
 */
import { parseRolloutProgress, type RolloutProgressReading } from '../../model/rollout/state.js';
import type { ConfigMapLike } from '../../model/core/types.js';

/** Where one app's rollout stands, as `pullfleet status` shows it (read by the model from its state ConfigMap). */
export type RolloutSummary = RolloutProgressReading;

/** The rollouts the state ConfigMaps describe, sorted by namespace and app. */
export function rolloutSummaries(configMaps: readonly ConfigMapLike[]): RolloutSummary[] {
  const summaries = configMaps.flatMap((map) => parseRolloutProgress(map) ?? []);
  return summaries.sort((a, b) =>
    `${a.namespace}/${a.app}` < `${b.namespace}/${b.app}`
      ? -1
      : `${a.namespace}/${a.app}` > `${b.namespace}/${b.app}`
        ? 1
        : 0,
  );
}

/** Whether a rollout needs someone: halted, or its state unreadable. */
export function rolloutHasProblems(summary: RolloutSummary): boolean {
  return summary.halted !== undefined || summary.problem !== undefined;
}

/** The lines of one rollout: a heading and one line per wave (clusters done, in flight, failed, waiting, since when). */
export function rolloutLines(summary: RolloutSummary, age: (since: string) => string): string[] {
  const lines = [`Rollout of ${summary.app}: ${summary.phase}${summary.problem ? ` (${summary.problem})` : ''}`];
  for (const [i, wave] of summary.waves.entries()) {
    const since = wave.since ? ` since ${wave.since} (${age(wave.since)} ago)` : '';
    const missing = wave.missing?.length ? `, ${wave.missing.length} without a hub Application` : '';
    lines.push(
      `  wave ${i + 1} ${wave.name}: ${wave.state}, ${wave.done}/${wave.clusters} done, ${wave.inFlight} in flight, ${wave.failed} failed, ${wave.waiting} waiting${missing}${since}`,
    );
  }
  if (summary.halted) lines.push(`  HALTED: ${summary.halted.message}`);
  if (summary.held) lines.push(`  WAITING: ${summary.held.message}`);
  return lines;
}
