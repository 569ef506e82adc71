/**
 * Runs one scenario on a fresh API double (plain or realistic), with controllers started through the
 * scenario context and everything torn down afterwards, whatever happened. A failure under the
 * realistic double names its seed and how to replay it.
 */
import { fakeCluster } from '../support/cluster.js';
import { startFakeApiServer, type FakeApiServer, type RealismOptions } from '../double/fake-apiserver.js';
import { WorkAgent } from '../support/work-agent.js';
import { controllerStarter, fleetFor, setUpFleet, type Scenario, type ScenarioContext } from './scenarios.js';

/** Seeds the chaos suites run: `PULLFLEET_CHAOS_SEED=n` replays one, `PULLFLEET_CHAOS_SEEDS=n` runs seeds 1..n. */
export function chaosSeeds(defaultCount: number): number[] {
  const one = process.env.PULLFLEET_CHAOS_SEED;
  if (one !== undefined && one !== '') return [Number(one)];
  const count = Number(process.env.PULLFLEET_CHAOS_SEEDS ?? defaultCount);
  return Array.from({ length: Number.isFinite(count) && count > 0 ? count : defaultCount }, (_, i) => i + 1);
}

/**
 * Fault rates on top of a seed. `PULLFLEET_CHAOS_PROFILE=storm` runs the suites much harsher than CI does
 * (short-lived watches, frequent 410s, 429s and held requests) to hunt for rare interleavings.
 */
const PROFILES: Record<string, Omit<RealismOptions, 'seed'>> = {
  default: {},
  storm: {
    maxWatchDelayMs: 50,
    watchLifetimeMs: [20, 400],
    goneOnResume: 0.3,
    tooManyRequests: 0.08,
    hang: 0.05,
    hangMs: [50, 2000],
  },
};

/** The realism settings for a seed under the profile chosen in the environment. */
export function realismFor(seed: number): RealismOptions {
  const name = process.env.PULLFLEET_CHAOS_PROFILE ?? 'default';
  const profile = PROFILES[name];
  if (!profile)
    throw new Error(`PULLFLEET_CHAOS_PROFILE must be one of ${Object.keys(PROFILES).join(', ')}, got "${name}"`);
  return { ...profile, seed };
}

export interface RunOptions {
  /** Run on the realistic double with these settings. */
  realism?: RealismOptions;
  /** Bound of every wait inside the scenario. @default 20000 (30000 when realistic) */
  timeoutMs?: number;
  /** Called with the server before the fleet is set up (e.g. to register CRDs). */
  prepare?: (server: FakeApiServer) => void | Promise<void>;
}

export async function runOnDouble(scenario: Scenario, opts: RunOptions = {}): Promise<void> {
  const server = await startFakeApiServer(opts.realism ? { realism: opts.realism } : {});
  const cluster = fakeCluster(server);
  const fleet = fleetFor('e2e');
  const controllers = controllerStarter(cluster);
  try {
    await opts.prepare?.(server);
    await setUpFleet(cluster, fleet);
    const ctx: ScenarioContext = {
      cluster,
      fleet,
      agent: new WorkAgent(cluster),
      startController: (config, options) => controllers.start(config, options),
      timeoutMs: opts.timeoutMs ?? (opts.realism ? 30_000 : 20_000),
    };
    await scenario.run(ctx);
    if (opts.realism && process.env.PULLFLEET_CHAOS_VERBOSE)
      process.stderr.write(
        `seed ${opts.realism.seed} ${scenario.name}: injected ${JSON.stringify(server.injectedFaults())}\n`,
      );
  } catch (error) {
    if (opts.realism) {
      const e = error instanceof Error ? error : new Error(String(error));
      const profile = process.env.PULLFLEET_CHAOS_PROFILE
        ? `PULLFLEET_CHAOS_PROFILE=${process.env.PULLFLEET_CHAOS_PROFILE} `
        : '';
      e.message = `[realistic double, seed ${opts.realism.seed}; replay with ${profile}PULLFLEET_CHAOS_SEED=${opts.realism.seed}; injected ${JSON.stringify(server.injectedFaults())}] ${e.message}`;
      throw e;
    }
    throw error;
  } finally {
    // Nothing may stay hung or cut off, or a controller could not finish stopping.
    server.dropHung();
    const stuck = await controllers.stopAll();
    await server.close();
    if (stuck.length > 0)
      process.stderr.write(`${scenario.name}: ${stuck.join(', ')} did not stop within 15 s and was abandoned\n`);
  }
}
