/**
 * The chaos scenarios (chaos-scenarios.ts) against the real controller on the API double: each once on
 * the plain double and on the realistic double for a few seeds (`PULLFLEET_CHAOS_SEEDS=n` for more,
 * `PULLFLEET_CHAOS_SEED=n` to replay one).
 *
 * Scenarios listed in PENDING_CONTROLLER_FIXES fail against today's controller because of a defect
 * issue 7 names; they run as `test.failing` (jest reports them as passing while they fail, and as
 * failing the moment they pass), so the suite stays green and shows exactly when a fix lands: then
 * delete the entry.
 */
import { describe, test } from '@jest/globals';
import { CHAOS_SCENARIOS } from './chaos-scenarios.js';
import { chaosSeeds, runOnDouble } from './harness.js';

/** Scenario name → the issue 7 defect it waits for. */
export const PENDING_CONTROLLER_FIXES: Record<string, string> = {
  "two replicas, the leader's requests hang: the standby takes over only once the Lease has really expired, and the old leader's stuck writes never land":
    'issue 7 defects 5 and 7 (no request timeout: the hung leader keeps its writes in flight and they land after the partition heals)',
  'opted-in apps with an empty, blank or missing cluster annotation, or without skip-reconcile, get a condition saying so': 'issue 7 defect 10 (bad annotations get no condition)',
  'feedback the hub app schema rejects (an Integer operationStateStartedAt) does not freeze the status write-back: valid fields land and a condition names the field':
    'issue 7 defect 10 (one rejected feedback value freezes the write-back)',
  'a cluster whose namespace does not exist yet: a condition on the hub app, and the work follows promptly once the namespace appears': 'issue 7 defect 10 (namespace 404 loops without a condition)',
};

const SEEDS = process.env.PULLFLEET_CHAOS_SEEDS || process.env.PULLFLEET_CHAOS_SEED ? chaosSeeds(2) : [11, 12];

/** Pending scenarios fail by timing out; a shorter bound keeps the suite fast until their fix lands. */
const PENDING_TIMEOUT_MS = 8_000;

describe.each([['plain double', undefined], ...SEEDS.map((seed) => [`realistic double, seed ${seed}`, seed] as const)])('chaos on the %s', (_label, seed) => {
  for (const scenario of CHAOS_SCENARIOS) {
    const pending = PENDING_CONTROLLER_FIXES[scenario.name];
    // A pending scenario runs once, on the plain double; the seeds join in when it is fixed.
    if (pending && seed !== undefined) continue;
    const run = pending ? test.failing : test;
    run(pending ? `${scenario.name} [pending: ${pending}]` : scenario.name, async () => {
      await runOnDouble(scenario, { ...(seed === undefined ? {} : { realism: { seed } }), ...(pending ? { timeoutMs: PENDING_TIMEOUT_MS } : {}) });
    }, 180_000);
  }
});
