/**
 * The seed matrix of the end-to-end scenarios on the realistic API double (`npm run test:matrix`, its own
 * CI stage after `npm test`): every scenario for seeds 202 and 303 (realistic.e2e.test.ts runs seed 101
 * in `npm test`), and the three with the most event interleaving for seeds 1..20.
 * `PULLFLEET_CHAOS_SEEDS=n` runs seeds 1..n of those three (and skips the fixed seeds),
 * `PULLFLEET_CHAOS_SEED=n` replays one.
 */
import { describe, test } from '@jest/globals';
import { chaosSeeds, realismFor, runOnDouble } from './harness.js';
import { SCENARIOS } from './scenarios.js';

const CHOSEN = Boolean(process.env.PULLFLEET_CHAOS_SEEDS || process.env.PULLFLEET_CHAOS_SEED);
/** Seeds for every scenario, on top of seed 101 in `npm test` (none when seeds are chosen in the environment). */
const ALL_FOR = CHOSEN ? [] : [202, 303];
/** The scenarios that exercise the most event interleaving, run for many seeds. */
const MATRIX_SCENARIOS = [
  'restarting the controller mid-stream loses and duplicates nothing',
  'retargeting an app to another cluster deletes the old work and creates the new one',
  'watch expiry (410 Gone) mid-stream: the controller relists and converges, including feedback',
];
/** Seeds 1..20 for those (or the ones chosen in the environment). */
const MATRIX_SEEDS = chaosSeeds(20);

describe('every scenario on the realistic double', () => {
  const cases = ALL_FOR.flatMap((seed) => SCENARIOS.map((s) => [seed, s.name, s] as const));
  if (cases.length > 0)
    test.each(cases)(
      'seed %i: %s',
      async (seed, _name, scenario) => {
        await runOnDouble(scenario, { realism: realismFor(seed) });
      },
      120_000,
    );
});

describe('seed matrix over the scenarios with the most interleaving', () => {
  const picked = SCENARIOS.filter((s) => MATRIX_SCENARIOS.includes(s.name));
  test('every matrix entry names a scenario', () => {
    for (const name of MATRIX_SCENARIOS)
      if (!SCENARIOS.some((s) => s.name === name)) throw new Error(`no scenario is named "${name}"`);
  });
  test.each(MATRIX_SEEDS.flatMap((seed) => picked.map((s) => [seed, s.name, s] as const)))(
    'seed %i: %s',
    async (seed, _name, scenario) => {
      await runOnDouble(scenario, { realism: realismFor(seed) });
    },
    120_000,
  );
});
