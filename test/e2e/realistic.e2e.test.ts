/**
 * The end-to-end scenarios on the realistic API double (asynchronous and interleaved watch delivery,
 * watch disconnects and 410s on resume, 429 with Retry-After, requests held for a while), each for one
 * seed; realistic.matrix.test.ts (`npm run test:matrix`) runs the seed matrix. `PULLFLEET_CHAOS_SEEDS=n`
 * runs n seeds of every scenario here, `PULLFLEET_CHAOS_SEED=n` replays one.
 */
import { describe, test } from '@jest/globals';
import { chaosSeeds, realismFor, runOnDouble } from './harness.js';
import { SCENARIOS } from './scenarios.js';

const CHOSEN = Boolean(process.env.PULLFLEET_CHAOS_SEEDS || process.env.PULLFLEET_CHAOS_SEED);
/** Seeds for every scenario: the ones chosen in the environment, else one fixed one. */
const ALL_FOR = CHOSEN ? chaosSeeds(2) : [101];

describe('every scenario on the realistic double', () => {
  const cases = ALL_FOR.flatMap((seed) => SCENARIOS.map((s) => [seed, s.name, s] as const));
  test.each(cases)(
    'seed %i: %s',
    async (seed, _name, scenario) => {
      await runOnDouble(scenario, { realism: realismFor(seed) });
    },
    120_000,
  );
});
