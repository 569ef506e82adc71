/**
 * The chaos seed matrix (`npm run test:matrix`, its own CI stage after `npm test`): every chaos scenario
 * on the realistic double for seed 12, and the process-level ones (kill -9, SIGTERM, API server outage,
 * conflicting writers, hostile feedback) for seeds 1..20. chaos.e2e.test.ts runs each scenario once on
 * the plain double and once for seed 11 in `npm test`. `PULLFLEET_CHAOS_SEEDS=n` runs seeds 1..n of the
 * process-level ones (and skips the seed-12 pass), `PULLFLEET_CHAOS_SEED=n` replays one.
 */
import { describe, test } from '@jest/globals';
import { CHAOS_SCENARIOS } from './chaos-scenarios.js';
import { chaosSeeds, realismFor, runOnDouble } from './harness.js';
import { PENDING_CONTROLLER_FIXES } from './pending.js';

const CHOSEN = Boolean(process.env.PULLFLEET_CHAOS_SEEDS || process.env.PULLFLEET_CHAOS_SEED);
/** Seeds for every scenario, on top of seed 11 in `npm test` (none when seeds are chosen in the environment). */
const ALL_FOR = CHOSEN ? [] : [12];
/** The scenarios that run under a matrix of 20 seeds (the slower ones run for the seeds above). */
const MATRIX = [
  'kill -9 mid-burst',
  'SIGTERM mid-burst',
  'the API server is unavailable',
  'conflicting writers',
  'malformed ManifestWork feedback',
];
const MATRIX_SEEDS = chaosSeeds(20);

for (const seed of ALL_FOR)
  describe(`chaos on the realistic double, seed ${seed}`, () => {
    // Pending scenarios run once, in `npm test` on the plain double (PULLFLEET_SHOW_PENDING=1 runs them here too).
    for (const scenario of CHAOS_SCENARIOS.filter(
      (s) => process.env.PULLFLEET_SHOW_PENDING || !PENDING_CONTROLLER_FIXES[s.name],
    )) {
      test(
        scenario.name,
        async () => {
          await runOnDouble(scenario, { realism: realismFor(seed) });
        },
        180_000,
      );
    }
  });

describe('chaos seed matrix', () => {
  const picked = CHAOS_SCENARIOS.filter(
    (scenario) => MATRIX.some((prefix) => scenario.name.startsWith(prefix)) && !PENDING_CONTROLLER_FIXES[scenario.name],
  );
  test('every matrix entry names a scenario', () => {
    for (const prefix of MATRIX)
      if (!CHAOS_SCENARIOS.some((scenario) => scenario.name.startsWith(prefix)))
        throw new Error(`no chaos scenario starts with "${prefix}"`);
  });
  test.each(
    MATRIX_SEEDS.flatMap((seed) => picked.map((scenario) => [seed, scenario.name.slice(0, 60), scenario] as const)),
  )(
    'seed %i: %s',
    async (seed, _name, scenario) => {
      await runOnDouble(scenario, { realism: realismFor(seed) });
    },
    180_000,
  );
});
