/**
 * The end-to-end scenarios on the realistic API double (asynchronous and interleaved watch delivery,
 * watch disconnects and 410s on resume, 429 with Retry-After, requests held for a while), over a matrix
 * of seeds. `PULLFLEET_CHAOS_SEEDS=n` runs n seeds of every scenario, `PULLFLEET_CHAOS_SEED=n` replays one.
 */
import { describe, test } from '@jest/globals';
import { chaosSeeds, realismFor, runOnDouble } from './harness.js';
import { SCENARIOS } from './scenarios.js';

const CHOSEN = Boolean(process.env.PULLFLEET_CHAOS_SEEDS || process.env.PULLFLEET_CHAOS_SEED);
/** Seeds for every scenario: the ones chosen in the environment, else three fixed ones. */
const ALL_FOR = CHOSEN ? chaosSeeds(2) : [101, 202, 303];
/** The scenarios that exercise the most event interleaving, run for many seeds in CI. */
const MATRIX_SCENARIOS = ['restarting the controller mid-stream loses and duplicates nothing', 'retargeting an app to another cluster deletes the old work and creates the new one', 'watch expiry (410 Gone) mid-stream: the controller relists and converges, including feedback'];
/** Seeds 1..20 for those (none when seeds are chosen in the environment: every scenario runs them then). */
const MATRIX_SEEDS = CHOSEN ? [] : chaosSeeds(20);

describe('every scenario on the realistic double', () => {
  const cases = ALL_FOR.flatMap((seed) => SCENARIOS.map((s) => [seed, s.name, s] as const));
  test.each(cases)('seed %i: %s', async (seed, _name, scenario) => {
    await runOnDouble(scenario, { realism: realismFor(seed) });
  }, 120_000);
});

describe('seed matrix over the scenarios with the most interleaving', () => {
  const picked = SCENARIOS.filter((s) => MATRIX_SCENARIOS.includes(s.name));
  const cases = MATRIX_SEEDS.flatMap((seed) => picked.map((s) => [seed, s.name, s] as const));
  if (cases.length === 0) test.skip('seeds chosen in the environment run every scenario above', () => undefined);
  else test.each(cases)('seed %i: %s', async (seed, _name, scenario) => {
    await runOnDouble(scenario, { realism: realismFor(seed) });
  }, 120_000);
});
