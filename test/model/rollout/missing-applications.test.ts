/**
 * The rule that a wave is done only when every cluster its policy lists has a hub Application the rollout
 * observes (issue 27, item 2): Argo CD creates a commit's hub Applications one at a time, in no wave order, so
 * a wave whose hub Applications are not all there yet must hold every later wave, whatever the clusters
 * already there report.
 */
import { describe, expect, test } from '@jest/globals';
import { stepRollout, type ClusterObservation, type RolloutDecision } from '../../../src/model/rollout/engine.js';
import type { RolloutState } from '../../../src/model/rollout/state.js';
import type { RolloutPolicy } from '../../../src/model/rollout/policy.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);

/** App `web`: canary a1 (soak 60 s), early b1+b2 (soak 60 s), late c1+c2. */
const POLICY: RolloutPolicy = {
  app: 'web',
  waves: [
    { name: 'canary', clusters: ['a1'], soakSeconds: 60 },
    { name: 'early', clusters: ['b1', 'b2'], soakSeconds: 60 },
    { name: 'late', clusters: ['c1', 'c2'], soakSeconds: 0 },
  ],
  maxFailures: 0,
  progressDeadlineSeconds: 600,
  onFailure: 'pause',
};
const ALL = ['a1', 'b1', 'b2', 'c1', 'c2'];
const waveOf = (policy: RolloutPolicy, cluster: string) => policy.waves.findIndex((w) => w.clusters.includes(cluster));

/**
 * The hub as the engine sees it: the hub Applications that exist (an observation each), the works the
 * engine's writes land on, spokes that converge on what their work carries when told to.
 */
class Hub {
  state?: RolloutState;
  readonly clusters = new Map<string, ClusterObservation>();
  /** Every write the engine asked for, in order. */
  readonly written: { cluster: string; hash: string; reason: string }[] = [];

  constructor(public policy: RolloutPolicy = POLICY) {}

  /** Argo CD creates (or updates) the hub Application of `cluster`, asking for `desired`. */
  apply(cluster: string, desired: string): void {
    const existing = this.clusters.get(cluster);
    this.clusters.set(cluster, { ...(existing ?? { sawDelivered: false }), cluster, desired });
  }

  step(seconds: number, extra: { unobservable?: Record<string, string> } = {}): RolloutDecision {
    const decision = stepRollout({
      policy: this.policy,
      ...(this.state ? { previous: JSON.parse(JSON.stringify(this.state)) as RolloutState } : {}),
      observations: [...this.clusters.values()],
      now: at(seconds),
      namespace: 'argocd',
      ...(extra.unobservable ? { unobservable: extra.unobservable } : {}),
    });
    this.assertNoWaveEarly(decision);
    this.state = decision.state;
    for (const write of decision.writes) {
      this.written.push({ cluster: write.cluster, hash: write.hash, reason: write.reason });
      const observation = this.clusters.get(write.cluster) as ClusterObservation;
      this.clusters.set(write.cluster, { ...observation, delivered: write.hash, sawDelivered: false });
    }
    return decision;
  }

  /** Every spoke with a work runs it, Healthy and Synced. */
  converge(): void {
    for (const [cluster, observation] of this.clusters)
      if (observation.delivered !== undefined)
        this.clusters.set(cluster, { ...observation, sawDelivered: true, health: 'Healthy', sync: 'Synced' });
  }

  /**
   * The invariant, checked on every decision: a write to a cluster of wave k only when every cluster the
   * policy lists in waves before k has its hub Application and is converged at what it asks for.
   */
  private assertNoWaveEarly(decision: RolloutDecision): void {
    for (const write of decision.writes) {
      const wave = waveOf(this.policy, write.cluster);
      const earlier = this.policy.waves.slice(0, wave < 0 ? this.policy.waves.length - 1 : wave);
      for (const cluster of earlier.flatMap((w) => w.clusters)) {
        const o = this.clusters.get(cluster);
        const done =
          o !== undefined &&
          o.delivered === o.desired &&
          o.sawDelivered &&
          o.health === 'Healthy' &&
          o.sync === 'Synced';
        if (!done) throw new Error(`${write.cluster} written while ${cluster} of an earlier wave is not done`);
      }
    }
  }
}

describe('stepRollout: hub Applications that do not exist yet', () => {
  test('GIVEN a brand-new app WHEN Argo CD creates its hub Applications in reverse wave order, one per step THEN nothing is written until the canary exists, and no wave starts before the earlier ones are done', () => {
    const hub = new Hub();
    let t = 0;
    for (const cluster of [...ALL].reverse()) {
      hub.apply(cluster, 'v1');
      const decision = hub.step((t += 1));
      if (cluster !== 'a1') {
        // THEN nothing is written, the canary wave holds, and its progress names the missing hub Application
        expect(decision.writes).toStrictEqual([]);
        expect(decision.held?.wave).toBe('canary');
        expect(decision.held?.applications).toStrictEqual(['argocd/web-a1']);
        expect(decision.waves[0]).toMatchObject({ name: 'canary', clusters: 0, missing: ['argocd/web-a1'] });
        expect(decision.phase).toBe('progressing');
      } else {
        expect(decision.writes.map((w) => w.cluster)).toStrictEqual(['a1']);
        expect(decision.held).toBeUndefined();
      }
    }
    // The rest of the rollout, the invariant checked at every step.
    for (let i = 0; i < 10; i++) {
      hub.converge();
      hub.step((t += 61));
    }
    expect(hub.written.map((w) => w.cluster)).toStrictEqual(['a1', 'b1', 'b2', 'c1', 'c2']);
    expect(hub.step((t += 1)).phase).toBe('complete');
  });

  test('GIVEN only later waves exist WHEN it steps THEN the held message names the missing hub Applications, the wave, the waves it holds and the fix', () => {
    const hub = new Hub();
    for (const cluster of ['b2', 'c1', 'c2']) hub.apply(cluster, 'v1');
    const decision = hub.step(0, { unobservable: { 'web-b1': 'is being deleted' } });
    expect(decision.writes).toStrictEqual([]);
    expect(decision.held).toStrictEqual({
      wave: 'canary',
      applications: ['argocd/web-a1'],
      message:
        'rollout of app "web" waits for wave "canary": hub Application argocd/web-a1 (cluster a1) does not exist. ' +
        "A wave is done only when every cluster its policy lists has its hub Application and is Healthy and Synced at the rollout's revision; " +
        'waves "early", "late" wait until the wave is done. ' +
        "The hub's Argo CD creates the hub Applications when it syncs the commit: check that it synced dist/ in full, " +
        'or synthesize again if the spoke no longer takes the app (the policy ConfigMap argocd/pullfleet-rollout-web still lists it).',
    });
    // Every wave with a missing hub Application says so; the reason of one that exists but cannot be observed shows.
    expect(decision.waves.map((w) => w.missing)).toStrictEqual([['argocd/web-a1'], ['argocd/web-b1'], undefined]);
    hub.apply('a1', 'v1');
    const canary = hub.step(1, { unobservable: { 'web-b1': 'is being deleted' } });
    expect(canary.writes.map((w) => w.cluster)).toStrictEqual(['a1']);
    expect(canary.held?.message).toContain(
      'waits for wave "early": hub Application argocd/web-b1 (cluster b1) is being deleted. ',
    );
    expect(canary.held?.message).toContain('wave "late" waits until the wave is done');
  });

  test('GIVEN the last wave missing a hub Application WHEN every other cluster is done THEN the rollout is not complete until it exists', () => {
    const hub = new Hub();
    for (const cluster of ['a1', 'b1', 'b2', 'c1']) hub.apply(cluster, 'v1');
    let t = 0;
    for (let i = 0; i < 6; i++) {
      hub.step((t += 61));
      hub.converge();
    }
    const waiting = hub.step((t += 61));
    expect(hub.written.map((w) => w.cluster)).toStrictEqual(['a1', 'b1', 'b2', 'c1']);
    expect(waiting.phase).toBe('progressing');
    expect(waiting.state.completedAt).toBeUndefined();
    expect(waiting.held?.message).toContain('argocd/web-c2 (cluster c2) does not exist');
    expect(waiting.held?.message).toContain('the rollout is not complete until then');
    hub.apply('c2', 'v1');
    expect(hub.step((t += 1)).writes.map((w) => w.cluster)).toStrictEqual(['c2']);
    hub.converge();
    expect(hub.step((t += 1)).phase).toBe('complete');
  });

  test('GIVEN a rolled-out app WHEN a new revision adds a spoke to the canary wave and its hub Application comes last THEN the early wave waits for it, and nothing is ever taken back', () => {
    const hub = new Hub();
    for (const cluster of ALL) hub.apply(cluster, 'v1');
    let t = 0;
    for (let i = 0; i < 8; i++) {
      hub.step((t += 61));
      hub.converge();
    }
    expect(hub.step((t += 1)).phase).toBe('complete');
    // WHEN v2 adds a0 to the canary wave: the policy and every other hub Application arrive first
    hub.policy = {
      ...POLICY,
      waves: POLICY.waves.map((w) => (w.name === 'canary' ? { ...w, clusters: ['a0', 'a1'] } : w)),
    };
    for (const cluster of [...ALL].reverse()) hub.apply(cluster, 'v2');
    const started = hub.written.length;
    const decisions: RolloutDecision[] = [];
    for (let i = 0; i < 6; i++) {
      decisions.push(hub.step((t += 61)));
      hub.converge();
    }
    // THEN a1 moves, nothing later does while a0 has no hub Application
    expect(hub.written.slice(started).map((w) => `${w.cluster}:${w.hash}`)).toStrictEqual(['a1:v2']);
    expect(decisions.at(-1)?.held?.applications).toStrictEqual(['argocd/web-a0']);
    expect(decisions.at(-1)?.waves.map((w) => w.state)).toStrictEqual(['progressing', 'waiting', 'waiting']);
    // WHEN a0's hub Application arrives THEN it goes, then the waves after it, in order
    hub.apply('a0', 'v2');
    for (let i = 0; i < 8; i++) {
      hub.step((t += 61));
      hub.converge();
    }
    expect(hub.written.slice(started).map((w) => `${w.cluster}:${w.hash}`)).toStrictEqual([
      'a1:v2',
      'a0:v2',
      'b1:v2',
      'b2:v2',
      'c1:v2',
      'c2:v2',
    ]);
    // Every write is a promotion: nothing is rolled back (and the engine has no way to delete).
    expect(hub.written.every((w) => w.reason === 'promote')).toBe(true);
    expect(hub.step((t += 1)).phase).toBe('complete');
  });

  test('GIVEN a rolled-out app WHEN a spoke of the canary wave loses its hub Application and a new revision arrives THEN the canary wave holds every later wave: nothing is written', () => {
    const hub = new Hub();
    for (const cluster of ALL) hub.apply(cluster, 'v1');
    let t = 0;
    for (let i = 0; i < 8; i++) {
      hub.step((t += 61));
      hub.converge();
    }
    hub.clusters.delete('a1');
    for (const cluster of ALL.filter((c) => c !== 'a1')) hub.apply(cluster, 'v2');
    const started = hub.written.length;
    for (let i = 0; i < 4; i++) {
      hub.step((t += 61));
      hub.converge();
    }
    expect(hub.written.slice(started)).toStrictEqual([]);
    expect(hub.step((t += 1)).held?.applications).toStrictEqual(['argocd/web-a1']);
  });
});
