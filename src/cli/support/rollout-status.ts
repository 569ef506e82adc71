/**
 * The rollouts of waved static apps in `pullfleet status`: read from the state ConfigMaps the controller
 * keeps (`progress.json`), shown under the static applications of their namespace, one line per wave.
 */
import type { WaveProgress } from '../../model/rollout/engine.js';
import { ROLLOUT_APP_LABEL, ROLLOUT_PROGRESS_KEY } from '../../model/rollout/policy.js';

/** Where one app's rollout stands, as `pullfleet status` shows it. */
export interface RolloutSummary {
  readonly namespace: string;
  readonly app: string;
  readonly phase: string;
  readonly waves: readonly WaveProgress[];
  readonly halted?: { readonly clusters: readonly string[]; readonly message: string };
  /** Set while a wave waits for hub Applications that do not exist yet (or cannot be delivered). */
  readonly held?: { readonly wave: string; readonly applications: readonly string[]; readonly message: string };
  /** Set when the state ConfigMap could not be read. */
  readonly problem?: string;
}

interface ConfigMapLike {
  readonly metadata: {
    readonly name?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly data?: Readonly<Record<string, string>>;
}

/** The rollouts the state ConfigMaps describe, sorted by namespace and app. */
export function rolloutSummaries(configMaps: readonly ConfigMapLike[]): RolloutSummary[] {
  const summaries = configMaps.flatMap((map): RolloutSummary[] => {
    const app = map.metadata.labels?.[ROLLOUT_APP_LABEL];
    if (!app) return [];
    const namespace = map.metadata.namespace ?? '';
    try {
      const progress = JSON.parse(map.data?.[ROLLOUT_PROGRESS_KEY] ?? '') as Partial<RolloutSummary>;
      if (typeof progress.phase !== 'string' || !Array.isArray(progress.waves))
        throw new Error('not a progress summary');
      return [
        {
          namespace,
          app,
          phase: progress.phase,
          waves: progress.waves,
          ...(progress.halted ? { halted: progress.halted } : {}),
          ...(progress.held ? { held: progress.held } : {}),
        },
      ];
    } catch (error) {
      return [
        {
          namespace,
          app,
          phase: 'unknown',
          waves: [],
          problem: `ConfigMap ${namespace}/${map.metadata.name ?? ''} holds no readable ${ROLLOUT_PROGRESS_KEY} (${(error as Error).message}); the controller rewrites it on its next pass`,
        },
      ];
    }
  });
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
