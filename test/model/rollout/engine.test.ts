import { describe, expect, test } from '@jest/globals';
import { kubeTime } from '../../../src/model/core/time.js';
import {
  rolloutTarget,
  stepRollout,
  type ClusterObservation,
  type RolloutDecision,
  type RolloutWrite,
} from '../../../src/model/rollout/engine.js';
import { parseRolloutState, type RolloutState } from '../../../src/model/rollout/state.js';
import {
  ROLLOUT_RESUME_ANNOTATION,
  inFlightLimit,
  type RolloutPolicy,
  type RolloutWave,
  type WaveLimit,
} from '../../../src/model/rollout/policy.js';

const T0 = Date.parse('2024-05-01T12:00:00Z');
/** The hub clock `seconds` after T0. */
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);
const stamp = (seconds: number): string => kubeTime(at(seconds));

function wave(name: string, clusters: string[], opts: { maxInFlight?: WaveLimit; soakSeconds?: number } = {}) {
  return {
    name,
    clusters: [...clusters].sort(),
    ...(opts.maxInFlight ? { maxInFlight: opts.maxInFlight } : {}),
    soakSeconds: opts.soakSeconds ?? 0,
  } satisfies RolloutWave;
}

function policy(waves: RolloutWave[], opts: Partial<Omit<RolloutPolicy, 'waves'>> = {}): RolloutPolicy {
  return { app: 'guestbook', waves, maxFailures: 0, progressDeadlineSeconds: 300, onFailure: 'pause', ...opts };
}

/** Three waves: canary (a1..a4, soak 60 s), early (b1..b3, half at once, soak 120 s), rest (c1, c2). */
function threeWaves(canaryLimit?: WaveLimit, opts: Partial<Omit<RolloutPolicy, 'waves'>> = {}): RolloutPolicy {
  return policy(
    [
      wave('canary', ['a1', 'a2', 'a3', 'a4'], {
        soakSeconds: 60,
        ...(canaryLimit ? { maxInFlight: canaryLimit } : {}),
      }),
      wave('early', ['b1', 'b2', 'b3'], { maxInFlight: { percent: 50 }, soakSeconds: 120 }),
      wave('rest', ['c1', 'c2']),
    ],
    opts,
  );
}

/**
 * `policy` as synth renders it for an app that targets only `observations`' clusters: each wave lists only
 * those (a cluster a wave lists without an observation holds that wave: its hub Application is missing).
 */
function targeting(policy: RolloutPolicy, observations: readonly ClusterObservation[]): RolloutPolicy {
  const targeted = new Set(observations.map((o) => o.cluster));
  return { ...policy, waves: policy.waves.map((w) => ({ ...w, clusters: w.clusters.filter((c) => targeted.has(c)) })) };
}

/** A cluster converged on `old` whose hub Application now asks for `new`. */
const onOld = (cluster: string, extra: Partial<ClusterObservation> = {}): ClusterObservation => ({
  cluster,
  desired: 'new',
  delivered: 'old',
  sawDelivered: true,
  health: 'Healthy',
  sync: 'Synced',
  ...extra,
});
/** A cluster with no work yet. */
const noWork = (cluster: string): ClusterObservation => ({ cluster, desired: 'new', sawDelivered: false });
/** A cluster already converged on `new`. */
const onNew = (cluster: string): ClusterObservation => onOld(cluster, { delivered: 'new' });

const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const promoted = (...clusters: string[]): RolloutWrite[] =>
  clusters.map((cluster) => ({ cluster, hash: 'new', reason: 'promote' as const }));

/** A world of clusters the test plays the work agent and the spoke Argo CD for, and the persisted state. */
class World {
  state?: RolloutState;
  readonly clusters = new Map<string, ClusterObservation>();

  constructor(
    public policy: RolloutPolicy,
    observations: ClusterObservation[],
  ) {
    for (const observation of observations) this.clusters.set(observation.cluster, observation);
  }

  get observations(): ClusterObservation[] {
    return [...this.clusters.values()];
  }

  /** One step at `seconds`, from the state as persisted (JSON); the writes land on the works. */
  step(seconds: number, resumeToken?: string): RolloutDecision {
    const decision = stepRollout({
      policy: this.policy,
      ...(this.state ? { previous: roundTrip(this.state) } : {}),
      observations: this.observations,
      now: at(seconds),
      ...(resumeToken !== undefined ? { resumeToken } : {}),
    });
    this.state = decision.state;
    this.apply(decision.writes);
    return decision;
  }

  /** The works carry the written payloads; the spokes have not reported them yet. */
  apply(writes: readonly RolloutWrite[]): void {
    for (const write of writes) this.set(write.cluster, { delivered: write.hash, sawDelivered: false });
  }

  set(cluster: string, patch: Partial<ClusterObservation>): void {
    this.clusters.set(cluster, { ...(this.clusters.get(cluster) as ClusterObservation), ...patch });
  }

  /** The spoke runs what its work carries, Healthy and Synced. */
  converge(...clusters: string[]): void {
    for (const cluster of clusters)
      this.set(cluster, { sawDelivered: true, health: 'Healthy', sync: 'Synced', operationPhase: 'Succeeded' });
  }

  /** The spoke runs what its work carries and never gets healthy. */
  degrade(...clusters: string[]): void {
    for (const cluster of clusters) this.set(cluster, { sawDelivered: true, health: 'Degraded', sync: 'OutOfSync' });
  }
}

describe('stepRollout: the first step', () => {
  test('a single cluster with a work: promote it, the whole decision', () => {
    const decision = stepRollout({
      policy: policy([wave('all', ['east'])]),
      observations: [onOld('east')],
      now: new Date(T0 + 400), // milliseconds are truncated in the state
    });
    expect(decision).toStrictEqual({
      state: {
        target: rolloutTarget([{ cluster: 'east', desired: 'new' }]),
        startedAt: '2024-05-01T12:00:00Z',
        clusters: { east: { target: 'new', from: 'old', promotedAt: '2024-05-01T12:00:00Z' } },
      },
      writes: promoted('east'),
      recheckAt: new Date(T0 + 300_000 + 1),
      waves: [
        {
          name: 'all',
          clusters: 1,
          done: 0,
          inFlight: 1,
          failed: 0,
          waiting: 0,
          state: 'progressing',
          since: stamp(0),
        },
      ],
      phase: 'progressing',
    });
  });

  test.each<[string, WaveLimit | undefined, string[]]>([
    ['a count', { count: 2 }, ['a1', 'a2']],
    ['a count above the wave size', { count: 10 }, ['a1', 'a2', 'a3', 'a4']],
    ['a percentage', { percent: 50 }, ['a1', 'a2']],
    ['a small percentage, never below one cluster', { percent: 10 }, ['a1']],
    ['no limit', undefined, ['a1', 'a2', 'a3', 'a4']],
  ])(
    'GIVEN a 3-wave rollout with %s in flight in wave 1 WHEN it starts THEN only wave 1 is promoted, in name order up to the limit',
    (_case, limit, expected) => {
      const world = new World(
        threeWaves(limit),
        ['a4', 'a3', 'a2', 'a1', 'b1', 'b2', 'b3', 'c1', 'c2'].map((c) => onOld(c)),
      );
      const decision = world.step(0);
      expect(decision.writes).toStrictEqual(promoted(...expected));
      expect(decision.phase).toBe('progressing');
      expect(Object.keys(decision.state.clusters)).toStrictEqual(expected);
      for (const cluster of expected)
        expect(decision.state.clusters[cluster]).toStrictEqual({ target: 'new', from: 'old', promotedAt: stamp(0) });
      expect(decision.waves.map((w) => [w.name, w.state, w.inFlight, w.waiting])).toStrictEqual([
        ['canary', 'progressing', expected.length, 4 - expected.length],
        ['early', 'waiting', 0, 3],
        ['rest', 'waiting', 0, 2],
      ]);
    },
  );

  test('GIVEN a cluster without a work WHEN it is promoted THEN it records no `from`', () => {
    const decision = stepRollout({
      policy: policy([wave('all', ['east'])]),
      observations: [noWork('east')],
      now: at(0),
    });
    expect(decision.writes).toStrictEqual(promoted('east'));
    expect(decision.state.clusters.east).toStrictEqual({ target: 'new', promotedAt: stamp(0) });
  });

  test('GIVEN clusters already converged on what they desire WHEN the rollout starts THEN they count as done, unwritten', () => {
    const world = new World(threeWaves({ count: 1 }), [
      onNew('a1'),
      onOld('a2'),
      onNew('b1'),
      onOld('b2'),
      onOld('b3'),
    ]);
    const decision = world.step(0);
    expect(decision.writes).toStrictEqual(promoted('a2'));
    expect(decision.state.clusters.a1).toStrictEqual({
      target: 'new',
      from: 'new',
      promotedAt: stamp(0),
      doneAt: stamp(0),
    });
    expect(decision.state.clusters.b1?.doneAt).toBe(stamp(0));
    expect(decision.waves[0]).toMatchObject({ done: 1, inFlight: 1, waiting: 0 });
  });

  test('GIVEN a wave whose every cluster is already there WHEN the rollout starts THEN it does not soak and the next wave starts', () => {
    const observations = [onNew('a1'), onNew('a2'), onOld('b1'), onOld('b2'), onOld('c1')];
    const world = new World(targeting(threeWaves(), observations), observations);
    const decision = world.step(0);
    expect(decision.writes).toStrictEqual(promoted('b1'));
    expect(decision.state.waveCompletedAt).toStrictEqual({ canary: stamp(0) });
    expect(decision.waves.map((w) => w.state)).toStrictEqual(['done', 'progressing', 'waiting']);
  });

  test('GIVEN no targeted cluster WHEN it steps THEN the rollout is idle and writes nothing', () => {
    const decision = stepRollout({ policy: threeWaves(), observations: [], now: at(0) });
    expect(decision.phase).toBe('idle');
    expect(decision.writes).toStrictEqual([]);
    expect(decision.recheckAt).toBeUndefined();
    expect(decision.waves.every((w) => w.state === 'waiting' && w.clusters === 0)).toBe(true);
  });
});

describe('stepRollout: within a wave and between waves', () => {
  test('GIVEN 2 in flight at most WHEN clusters converge THEN each freed slot promotes the next waiting cluster', () => {
    const world = new World(
      threeWaves({ count: 2 }),
      ['a1', 'a2', 'a3', 'a4', 'b1'].map((c) => onOld(c)),
    );
    expect(world.step(0).writes).toStrictEqual(promoted('a1', 'a2'));
    world.converge('a1');
    const second = world.step(10);
    expect(second.writes).toStrictEqual(promoted('a3'));
    expect(second.state.clusters.a1?.doneAt).toBe(stamp(10));
    expect(second.waves[0]).toMatchObject({ done: 1, inFlight: 2, waiting: 1 });
    expect(world.step(20).writes).toStrictEqual([]);
    world.converge('a2', 'a3');
    const fourth = world.step(30);
    expect(fourth.writes).toStrictEqual(promoted('a4'));
    expect(fourth.waves[0]).toMatchObject({ done: 3, inFlight: 1, waiting: 0, state: 'progressing', since: stamp(0) });
    expect(fourth.state.clusters.a1?.promotedAt).toBe(stamp(0));
  });

  test('GIVEN wave 1 converged WHEN its soak runs THEN wave 2 waits until the soak ends (recheckAt) and then starts', () => {
    const observations = ['a1', 'a2', 'b1', 'b2', 'b3', 'c1'].map((c) => onOld(c));
    const world = new World(targeting(threeWaves(), observations), observations);
    world.step(0);
    world.converge('a1', 'a2');
    const soaking = world.step(10);
    expect(soaking.phase).toBe('soaking');
    expect(soaking.writes).toStrictEqual([]);
    expect(soaking.recheckAt).toStrictEqual(at(70));
    expect(soaking.state.waveCompletedAt).toStrictEqual({ canary: stamp(10) });
    expect(soaking.waves.map((w) => [w.state, w.since])).toStrictEqual([
      ['soaking', stamp(10)],
      ['waiting', undefined],
      ['waiting', undefined],
    ]);
    expect(world.step(69).writes).toStrictEqual([]);
    const started = world.step(70);
    expect(started.phase).toBe('progressing');
    expect(started.writes).toStrictEqual(promoted('b1')); // half of 3 rounds down to 1
    expect(started.waves.map((w) => w.state)).toStrictEqual(['done', 'progressing', 'waiting']);
    expect(started.state.waveCompletedAt).toStrictEqual({ canary: stamp(10) });
  });

  test('GIVEN the soak started within a second WHEN the clock passes its end THEN the milliseconds of now do not matter', () => {
    const observations = [onOld('a1'), onOld('b1')];
    const world = new World(targeting(threeWaves(), observations), observations);
    world.step(0);
    world.converge('a1');
    const soaking = world.step(10.9);
    expect(soaking.state.waveCompletedAt).toStrictEqual({ canary: stamp(10) });
    expect(soaking.recheckAt).toStrictEqual(at(70));
    expect(world.step(69.999).writes).toStrictEqual([]);
    expect(world.step(70).writes).toStrictEqual(promoted('b1'));
  });

  test('GIVEN every cluster done WHEN it steps THEN the rollout is complete, every wave done, nothing timed', () => {
    const world = new World(
      policy([wave('one', ['a1'], { soakSeconds: 30 }), wave('two', ['b1'], { soakSeconds: 30 })]),
      [onOld('a1'), onOld('b1')],
    );
    world.step(0);
    world.converge('a1');
    world.step(5);
    expect(world.step(35).writes).toStrictEqual(promoted('b1'));
    world.converge('b1');
    const done = world.step(40);
    expect(done.phase).toBe('complete');
    expect(done.state.completedAt).toBe(stamp(40));
    expect(done.recheckAt).toBeUndefined();
    expect(done.waves.map((w) => [w.state, w.done])).toStrictEqual([
      ['done', 1],
      ['done', 1],
    ]);
    const later = world.step(500);
    expect(later.writes).toStrictEqual([]);
    expect(later.state).toStrictEqual(done.state);
  });
});

describe('stepRollout: failures', () => {
  test('GIVEN one failure tolerated WHEN a cluster passes its deadline THEN it fails, stays failed and the rollout goes on', () => {
    const world = new World(policy([wave('canary', ['a1', 'a2']), wave('rest', ['b1'])], { maxFailures: 1 }), [
      onOld('a1'),
      onOld('a2'),
      onOld('b1'),
    ]);
    world.step(0);
    world.converge('a1');
    world.degrade('a2');
    const atDeadline = world.step(300);
    expect(atDeadline.state.clusters.a2?.failedAt).toBeUndefined();
    expect(atDeadline.recheckAt).toStrictEqual(new Date(T0 + 300_001));
    const past = world.step(301);
    expect(past.state.clusters.a2).toStrictEqual({
      target: 'new',
      from: 'old',
      promotedAt: stamp(0),
      failedAt: stamp(301),
      failure: 'not Healthy and Synced within the 300s progress deadline (health Degraded, sync OutOfSync)',
    });
    expect(past.halted).toBeUndefined();
    expect(past.phase).toBe('progressing');
    expect(past.writes).toStrictEqual(promoted('b1'));
    expect(past.waves[0]).toMatchObject({ state: 'done', done: 1, failed: 1 });
    world.converge('b1');
    const done = world.step(310);
    expect(done.phase).toBe('complete');
    expect(done.writes).toStrictEqual([]); // no retry of a2
  });

  describe.each<['pause' | 'rollback', RolloutWrite[]]>([
    ['pause', []],
    ['rollback', [{ cluster: 'a1', hash: 'old', reason: 'rollback' }]],
  ])('GIVEN one failure tolerated and onFailure %s WHEN a second cluster fails', (onFailure, rollbacks) => {
    /** a1 (had a work) and a3 (had none) never converge; a2 does. */
    function halt() {
      const world = new World(
        policy([wave('canary', ['a1', 'a2', 'a3']), wave('rest', ['b1'])], { maxFailures: 1, onFailure }),
        [onOld('a1'), onOld('a2'), noWork('a3'), onOld('b1')],
      );
      world.step(0);
      world.converge('a2');
      world.degrade('a1', 'a3');
      return { world, decision: world.step(301) };
    }

    test(`THEN the rollout halts, promotes nothing and writes ${rollbacks.length === 0 ? 'nothing' : '`from` back, never to a cluster without one'}`, () => {
      const { decision } = halt();
      expect(decision.phase).toBe('halted');
      expect(decision.writes).toStrictEqual(rollbacks);
      expect(decision.state.halted).toStrictEqual({
        at: stamp(301),
        clusters: ['a1', 'a3'],
        reason:
          '2 clusters failed, more than the 1 tolerated: a1: not Healthy and Synced within the 300s progress deadline (health Degraded, sync OutOfSync); a3: not Healthy and Synced within the 300s progress deadline (health Degraded, sync OutOfSync)',
      });
      expect(decision.halted?.clusters).toStrictEqual(['a1', 'a3']);
      expect(decision.halted?.message).toContain('rollout of app "guestbook" halted: 2 clusters failed');
      expect(decision.halted?.message).toContain(
        `Fix the spec (a new revision starts a new rollout) or set annotation ${ROLLOUT_RESUME_ANNOTATION} on the rollout ConfigMap to a new value to retry them.`,
      );
      if (onFailure === 'rollback') expect(decision.halted?.message).toContain('(a3 had none and keep the new one)');
      expect(decision.waves.map((w) => w.state)).toStrictEqual(['halted', 'waiting']);
      expect(decision.waves[0]?.since).toBe(stamp(301));
      expect(decision.state.clusters.b1).toBeUndefined();
    });

    test('THEN later steps keep the halt, its time and the other clusters as they are, writing nothing more', () => {
      const { world, decision } = halt();
      const later = world.step(900);
      expect(later.writes).toStrictEqual([]);
      expect(later.state).toStrictEqual(decision.state);
      expect(later.phase).toBe('halted');
      expect(world.clusters.get('a2')?.delivered).toBe('new');
      expect(world.clusters.get('a3')?.delivered).toBe('new');
      expect(world.clusters.get('b1')?.delivered).toBe('old');
    });

    test('THEN a new desired hash starts a new rollout and clears the halt', () => {
      const { world } = halt();
      for (const cluster of ['a1', 'a2', 'a3', 'b1']) world.set(cluster, { desired: 'fixed' });
      const fresh = world.step(1000);
      expect(fresh.phase).toBe('progressing');
      expect(fresh.halted).toBeUndefined();
      expect(fresh.state.halted).toBeUndefined();
      expect(fresh.state.startedAt).toBe(stamp(1000));
      expect(fresh.writes).toStrictEqual(
        ['a1', 'a2', 'a3'].map((cluster) => ({ cluster, hash: 'fixed', reason: 'promote' })),
      );
      expect(fresh.state.clusters.a1).toStrictEqual({
        target: 'fixed',
        from: onFailure === 'rollback' ? 'old' : 'new',
        promotedAt: stamp(1000),
      });
    });
  });

  test('GIVEN a halted rollout WHEN the resume annotation gets a new value THEN the failed clusters are retried under the in-flight limit', () => {
    const world = new World(
      policy([wave('canary', ['a1', 'a2', 'a3'], { maxInFlight: { count: 1 } }), wave('rest', ['b1'])], {
        onFailure: 'rollback',
        progressDeadlineSeconds: 60,
      }),
      [onOld('a1'), onOld('a2'), onOld('a3'), onOld('b1')],
    );
    // A token that was already there when the rollout started is only recorded.
    expect(world.step(0, 'r0').state.resumeToken).toBe('r0');
    world.degrade('a1');
    const halted = world.step(61, 'r0');
    expect(halted.phase).toBe('halted');
    expect(halted.writes).toStrictEqual([{ cluster: 'a1', hash: 'old', reason: 'rollback' }]);
    world.converge('a1'); // back on old, Healthy
    expect(world.step(70, 'r0').phase).toBe('halted');

    const resumed = world.step(80, 'r1');
    expect(resumed.phase).toBe('progressing');
    expect(resumed.halted).toBeUndefined();
    expect(resumed.state.halted).toBeUndefined();
    expect(resumed.state.resumeToken).toBe('r1');
    expect(resumed.writes).toStrictEqual(promoted('a1'));
    expect(resumed.state.clusters.a1).toStrictEqual({ target: 'new', from: 'old', promotedAt: stamp(80) });

    // Failing again halts again; the same token does not resume it a second time.
    world.degrade('a1');
    expect(world.step(141, 'r1').phase).toBe('halted');
    world.converge('a1');
    const still = world.step(150, 'r1');
    expect(still.phase).toBe('halted');
    expect(still.writes).toStrictEqual([]);
  });

  test.each<[string, Partial<ClusterObservation>, string | undefined]>([
    [
      'Failed, started after the promotion',
      { operationPhase: 'Failed', operationStartedAt: stamp(5) },
      'sync operation Failed (started 2024-05-01T12:00:05Z on the spoke)',
    ],
    [
      'Error, started after the promotion',
      { operationPhase: 'Error', operationStartedAt: stamp(5) },
      'sync operation Error (started 2024-05-01T12:00:05Z on the spoke)',
    ],
    ['Failed, started before the promotion', { operationPhase: 'Failed', operationStartedAt: stamp(-30) }, undefined],
    [
      'Failed, started after it on a spoke clock 3 s behind (looks earlier)',
      { operationPhase: 'Failed', operationStartedAt: stamp(-3) },
      undefined,
    ],
    [
      'Failed, in the very second of the promotion',
      { operationPhase: 'Failed', operationStartedAt: stamp(0) },
      undefined,
    ],
    [
      'Failed, but the spoke has not reported the new payload',
      { operationPhase: 'Failed', operationStartedAt: stamp(5), sawDelivered: false },
      undefined,
    ],
    ['Running', { operationPhase: 'Running', operationStartedAt: stamp(5) }, undefined],
  ])(
    'GIVEN an operation %s WHEN it steps before the deadline THEN the cluster fails at once only when it is new',
    (_case, patch, failure) => {
      const world = new World(policy([wave('all', ['east'])], { maxFailures: 1 }), [onOld('east')]);
      world.step(0.6);
      world.degrade('east');
      world.set('east', patch);
      const decision = world.step(20);
      expect(decision.state.clusters.east?.failure).toBe(failure);
      if (failure === undefined) {
        expect(decision.recheckAt).toStrictEqual(new Date(T0 + 300_001));
        expect(world.step(301).state.clusters.east?.failedAt).toBe(stamp(301));
      } else expect(decision.phase).toBe('complete');
    },
  );

  test('GIVEN a cluster that goes offline mid-wave WHEN its deadline passes THEN it fails and halts, every other cluster keeps its payload', () => {
    const world = new World(threeWaves(), [onOld('a1'), onOld('a2'), onOld('a3'), onOld('b1')]);
    world.step(0);
    world.converge('a1', 'a2'); // a3 got its work, but its feedback stopped: the spoke is gone
    const waiting = world.step(30);
    expect(waiting.recheckAt).toStrictEqual(new Date(T0 + 300_001));
    expect(waiting.phase).toBe('progressing');
    const failed = world.step(300.001);
    expect(failed.phase).toBe('halted');
    expect(failed.writes).toStrictEqual([]);
    expect(failed.state.clusters.a3?.failure).toBe(
      'the spoke did not report running the new payload within the 300s progress deadline (work agent or spoke Argo CD not answering)',
    );
    expect(failed.halted?.message).toContain('a3: the spoke did not report running the new payload');
    expect(failed.state.clusters.a1?.doneAt).toBe(stamp(30));
  });
});

describe('stepRollout: restarts, membership and joiners', () => {
  test('GIVEN the persisted state round-tripped through JSON WHEN the controller restarts THEN it decides the same', () => {
    const world = new World(
      threeWaves({ count: 2 }),
      ['a1', 'a2', 'a3', 'b1'].map((c) => onOld(c)),
    );
    world.step(0);
    world.converge('a1');
    const input = {
      policy: world.policy,
      previous: roundTrip(world.state),
      observations: world.observations,
      now: at(15),
    };
    const first = stepRollout(input);
    expect(stepRollout({ ...roundTrip(input), now: at(15) })).toStrictEqual(first);
  });

  test('GIVEN promotions whose writes were lost WHEN it steps again THEN the writes are emitted again, promotedAt unchanged', () => {
    const world = new World(
      threeWaves({ count: 2 }),
      ['a1', 'a2', 'a3'].map((c) => onOld(c)),
    );
    const first = stepRollout({ policy: world.policy, observations: world.observations, now: at(0) });
    expect(first.writes).toStrictEqual(promoted('a1', 'a2'));
    // The controller persisted the state and stopped before writing the works.
    const again = stepRollout({
      policy: world.policy,
      previous: roundTrip(first.state),
      observations: world.observations,
      now: at(40),
    });
    expect(again.writes).toStrictEqual(promoted('a1', 'a2'));
    expect(again.state).toStrictEqual(first.state);
  });

  test('GIVEN a decision WHEN it steps again with its writes applied at the same instant THEN nothing is written and the state is deep-equal', () => {
    const world = new World(
      threeWaves({ count: 2 }),
      ['a1', 'a2', 'a3', 'b1'].map((c) => onOld(c)),
    );
    const first = world.step(0);
    const again = stepRollout({
      policy: world.policy,
      previous: roundTrip(first.state),
      observations: world.observations,
      now: at(0),
    });
    expect(again.writes).toStrictEqual([]);
    expect(again.state).toStrictEqual(roundTrip(first.state));
  });

  test('GIVEN the app removed from a cluster mid-rollout WHEN its observation is gone and the policy no longer lists it THEN it is dropped from the state and the rollout goes on', () => {
    const observations = [onOld('a1'), onOld('a2'), onOld('b1')];
    const world = new World(targeting(threeWaves(), observations), observations);
    world.step(0);
    world.clusters.delete('a2');
    world.policy = targeting(world.policy, world.observations);
    world.converge('a1');
    const decision = world.step(10);
    expect(Object.keys(decision.state.clusters)).toStrictEqual(['a1']);
    expect(decision.state.startedAt).toBe(stamp(0));
    expect(decision.state.target).toBe(rolloutTarget(world.observations));
    expect(decision.writes).toStrictEqual([]);
    expect(decision.phase).toBe('soaking');
    expect(decision.waves[0]).toMatchObject({ clusters: 1, done: 1 });
    expect(world.step(70).writes).toStrictEqual(promoted('b1'));
  });

  test('GIVEN the app removed from every cluster WHEN it steps THEN the rollout is idle with an empty state', () => {
    const world = new World(threeWaves(), [onOld('a1')]);
    world.step(0);
    world.clusters.clear();
    const decision = world.step(10);
    expect(decision.phase).toBe('idle');
    expect(decision.state.clusters).toStrictEqual({});
    expect(decision.writes).toStrictEqual([]);
  });

  test('GIVEN a cluster the policy does not list WHEN it joins at runtime THEN it lands in the last wave', () => {
    const world = new World(threeWaves(), [onOld('a1'), onOld('b1'), onOld('c1')]);
    world.step(0);
    world.set('zz', noWork('zz'));
    const decision = world.step(5);
    expect(decision.writes).toStrictEqual([]);
    expect(decision.waves.map((w) => [w.name, w.clusters, w.waiting])).toStrictEqual([
      ['canary', 1, 0],
      ['early', 1, 1],
      ['rest', 2, 2],
    ]);
  });

  test('GIVEN a complete rollout WHEN a cluster joins THEN it is promoted in the last wave and the rollout completes again', () => {
    const world = new World(policy([wave('one', ['a1'], { soakSeconds: 30 }), wave('two', ['b1'])]), [
      onOld('a1'),
      onOld('b1'),
    ]);
    world.step(0);
    world.converge('a1');
    world.step(5);
    world.step(35);
    world.converge('b1');
    const complete = world.step(40);
    expect(complete.phase).toBe('complete');
    world.set('joiner', noWork('joiner'));
    const joined = world.step(50);
    expect(joined.phase).toBe('progressing');
    expect(joined.state.completedAt).toBeUndefined();
    expect(joined.state.startedAt).toBe(stamp(0));
    expect(joined.writes).toStrictEqual(promoted('joiner'));
    world.converge('joiner');
    const again = world.step(60);
    expect(again.phase).toBe('complete');
    expect(again.state.completedAt).toBe(stamp(60));
  });
});

describe('stepRollout: a simulated run (property)', () => {
  /** Five waves of uneven sizes and limits. */
  const run = policy(
    [
      wave('canary', ['w0-a', 'w0-b'], { maxInFlight: { count: 1 }, soakSeconds: 30 }),
      wave('one', ['w1-a', 'w1-b', 'w1-c', 'w1-d', 'w1-e'], { maxInFlight: { percent: 40 }, soakSeconds: 60 }),
      wave('two', ['w2-a', 'w2-b', 'w2-c'], { soakSeconds: 0 }),
      wave('three', ['w3-a', 'w3-b', 'w3-c', 'w3-d'], { maxInFlight: { count: 3 }, soakSeconds: 45 }),
      wave('rest', ['w4-a', 'w4-b']),
    ],
    { maxFailures: 1, progressDeadlineSeconds: 120 },
  );
  const all = run.waves.flatMap((w) => w.clusters);

  test.each<[string, number, string[], string[]]>([
    ['a tick of 7 s', 7, [], []],
    ['a tick of 13 s, one cluster offline', 13, ['w1-c'], []],
    ['a tick of 50 s, two clusters already there', 50, [], ['w0-b', 'w3-d']],
    ['a tick of 1 s, one offline and one already there', 1, ['w3-a'], ['w2-b']],
  ])(
    'GIVEN %s WHEN the agents answer a tick after each write THEN waves never overlap, limits hold and each cluster needing a change is written once',
    (_case, tick, offline, already) => {
      const world = new World(
        run,
        all.map((cluster) =>
          already.includes(cluster) ? onNew(cluster) : cluster === 'w3-b' ? noWork(cluster) : onOld(cluster),
        ),
      );
      const waveOf = (cluster: string) => run.waves.findIndex((w) => w.clusters.includes(cluster));
      const finishedAt = new Map<number, number>();
      const writes = new Map<string, number>();
      let pending: string[] = [];
      let decision: RolloutDecision | undefined;
      let t = 0;
      for (let i = 0; i < 5000 && decision?.phase !== 'complete'; i += 1, t += tick) {
        world.converge(...pending.filter((cluster) => !offline.includes(cluster)));
        const before = world.state;
        decision = world.step(t);
        const state = decision.state;

        // Idempotent: the same instant with the writes applied decides nothing new.
        const again = stepRollout({
          policy: run,
          previous: roundTrip(state),
          observations: world.observations,
          now: at(t),
        });
        expect(again.writes).toStrictEqual([]);
        expect(again.state).toStrictEqual(roundTrip(state));

        // When each wave finished (every cluster done or failed within tolerance).
        run.waves.forEach((w, index) => {
          const finished = w.clusters.every(
            (c) => state.clusters[c]?.doneAt !== undefined || state.clusters[c]?.failedAt !== undefined,
          );
          if (finished && !finishedAt.has(index)) finishedAt.set(index, t);
        });
        for (const [cluster, entry] of Object.entries(state.clusters)) {
          if (entry.doneAt === entry.promotedAt && entry.from === entry.target) continue; // already there
          const previous = before?.clusters[cluster];
          if (previous) {
            expect(entry.promotedAt).toBe(previous.promotedAt); // never promoted twice
            continue;
          }
          // A new promotion: the wave before is finished and has soaked.
          const index = waveOf(cluster);
          if (index > 0) {
            const prior = run.waves[index - 1];
            const finished = finishedAt.get(index - 1);
            expect(finished).toBeDefined();
            // A wave the rollout wrote nothing to does not soak.
            const soak = prior.clusters.every((c) => already.includes(c)) ? 0 : prior.soakSeconds;
            expect(t).toBeGreaterThanOrEqual((finished as number) + soak);
          }
        }
        // In flight never exceeds the limit of a wave.
        run.waves.forEach((w) => {
          const flying = w.clusters.filter((c) => {
            const entry = state.clusters[c];
            return entry !== undefined && entry.doneAt === undefined && entry.failedAt === undefined;
          }).length;
          expect(flying).toBeLessThanOrEqual(inFlightLimit(w.maxInFlight, w.clusters.length));
        });
        expect(decision.halted).toBeUndefined();
        if (decision.recheckAt) expect(decision.recheckAt.getTime()).toBeGreaterThan(at(t).getTime());
        for (const write of decision.writes) {
          expect(write).toMatchObject({ hash: 'new', reason: 'promote' });
          writes.set(write.cluster, (writes.get(write.cluster) ?? 0) + 1);
        }
        pending = decision.writes.map((w) => w.cluster);
      }
      expect(decision?.phase).toBe('complete');
      expect([...writes.keys()].sort()).toStrictEqual(all.filter((c) => !already.includes(c)));
      expect([...writes.values()].every((count) => count === 1)).toBe(true);
      expect(Object.values(decision?.state.clusters ?? {}).filter((c) => c.failedAt !== undefined).length).toBe(
        offline.length,
      );
    },
  );
});

describe('parseRolloutState', () => {
  test('reads a persisted state back', () => {
    const decision = stepRollout({ policy: threeWaves(), observations: [onOld('a1'), onNew('a2')], now: at(0) });
    expect(parseRolloutState(JSON.stringify(decision.state), 'ConfigMap argocd/guestbook-rollout')).toStrictEqual({
      ok: true,
      state: decision.state,
    });
  });

  test.each([
    ['not JSON', '{', 'it is not JSON'],
    ['an array', '[]', 'it is not a JSON object'],
    ['no target', '{"startedAt":"x","clusters":{}}', '"target" is not a string'],
    [
      'a cluster without promotedAt',
      '{"target":"t","startedAt":"x","clusters":{"east":{"target":"h"}}}',
      'cluster "east" lacks',
    ],
    ['a bad halt', '{"target":"t","startedAt":"x","clusters":{},"halted":{"at":"x"}}', '"halted" needs'],
  ])('fails when the state is %s, naming where and the fix', (_case, text, why) => {
    const parsed = parseRolloutState(text, 'ConfigMap argocd/guestbook-rollout');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.problem).toContain('rollout state in ConfigMap argocd/guestbook-rollout cannot be read: ');
      expect(parsed.problem).toContain(why);
      expect(parsed.problem).toContain('delete it to start the rollout afresh');
    }
  });
});
