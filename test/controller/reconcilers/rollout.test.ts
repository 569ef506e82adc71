/**
 * Waved static apps through both reconcilers on an in-memory world: the rollout reconciler keeps the
 * state, the Application reconciler writes each cluster's work when the state promotes it. The test plays
 * the work agent and the spoke Argo CD (the spoke runs what its work delivered and reports it Healthy and
 * Synced, or not) and moves the clock; it asserts the works the world holds after every step.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import { createApplicationReconciler } from '../../../src/controller/reconcilers/application.js';
import { createRolloutReconciler } from '../../../src/controller/reconcilers/rollout.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { AppSource, PullApplication, Rollout, RolloutFailureAction, WaveLimit } from '../../../src/constructs/index.js';
import { testFleet } from '../../support/fleet-builder.js';
import { MANAGED_CLUSTER_ANNOTATION } from '../../../src/model/core/keys.js';
import type { Application, KubeObject, ManifestWork } from '../../../src/model/core/types.js';
import { ROLLOUT_HALTED_CONDITION, ROLLOUT_RESUME_ANNOTATION } from '../../../src/model/rollout/policy.js';
import { PREVIOUS_PAYLOAD_ANNOTATION } from '../../../src/model/rollout/gate.js';
import { rolloutPolicyName, rolloutStateName } from '../../../src/model/rollout/state.js';
import { World } from '../../support/world.js';
import { reportRunning } from '../../support/work-status.js';

const NS = 'argocd';
const CLUSTERS = ['c1', 'c2', 'c3', 'c4', 'c5'];
const ROLLOUT_KEY = `${NS}/web`;

/**
 * The hub objects synth renders for app `web` at `revision`, waved: canary c1, then c2+c3 one at a time, then
 * the rest; `joiners` are more spokes, each with its ring.
 */
function render(
  revision: string,
  onFailure = RolloutFailureAction.PAUSE,
  joiners: Record<string, string> = {},
): KubeObject[] {
  const { fleet, hub, spokes } = testFleet({
    hub: { argoNamespace: NS },
    sets: ['prod'],
    spokes: [
      ...CLUSTERS.map((name, i) => ({ name, labels: { ring: i === 0 ? 'canary' : i < 3 ? 'early' : 'late' } })),
      ...Object.entries(joiners).map(([name, ring]) => ({ name, labels: { ring } })),
    ],
  });
  new PullApplication(hub, 'web', {
    source: AppSource.git({ repoURL: 'https://git.example/apps.git', path: 'web', targetRevision: revision }),
    destinationNamespace: 'web',
    spokes,
    rollout: Rollout.waves(
      [
        { name: 'canary', labels: { ring: 'canary' }, soak: Duration.minutes(1) },
        { name: 'early', labels: { ring: 'early' }, maxInFlight: WaveLimit.count(1) },
        { name: 'late', rest: true },
      ],
      { progressDeadline: Duration.minutes(10), onFailure },
    ),
  });
  const objects: KubeObject[] = [];
  for (const [file, list] of fleet.renderObjects())
    if (file.endsWith('applications.yaml')) objects.push(...(list as unknown as KubeObject[]));
  return objects;
}

const workKey = (cluster: string) => `${cluster}/${NS}-web-${cluster}`;
const revisionOf = (work: ManifestWork | undefined) =>
  (work?.spec.workload.manifests.find((m) => m.kind === 'Application') as Application | undefined)?.spec.source
    ?.targetRevision;

describe('rollout waves of a static app', () => {
  let world: World;
  let apps: Reconciler;
  let rollouts: Reconciler;
  /** Clusters whose spoke never becomes healthy at a new revision. */
  let broken: Set<string>;
  /** The clusters the spokes and rounds play: CLUSTERS, and any a test adds. */
  let clusters: string[];

  function start(): void {
    apps = world.reconciler(createApplicationReconciler, { relaxTenancy: true, argoNamespace: NS });
    rollouts = world.reconciler(createRolloutReconciler, { relaxTenancy: true, argoNamespace: NS });
  }

  function commit(objects: KubeObject[]): void {
    for (const object of objects) world.applyFromGit(NS, object);
  }

  /** The work agent and spoke Argo CD: every work's spoke runs its payload and reports it (healthy unless broken). */
  function spokesReport(): void {
    for (const cluster of clusters) {
      const work = world.get<ManifestWork>('ManifestWork', workKey(cluster));
      if (!work) continue;
      const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application') as unknown as Application;
      reportRunning(world, work, payload, broken.has(cluster) ? 'Degraded' : 'Healthy');
    }
  }

  /** One round: the rollout decides, every hub app reconciles, the spokes report. */
  async function round(): Promise<void> {
    await world.settle(rollouts, ROLLOUT_KEY);
    for (const cluster of clusters) await world.settle(apps, `${NS}/web-${cluster}`);
    spokesReport();
    await world.settle(rollouts, ROLLOUT_KEY);
  }

  const revisions = () =>
    clusters.map((cluster) => revisionOf(world.get<ManifestWork>('ManifestWork', workKey(cluster))));
  const advance = (seconds: number) => {
    world.clock = new Date(world.clock.getTime() + seconds * 1000);
  };

  beforeEach(() => {
    world = new World();
    world.clock = new Date('2026-03-01T12:00:00Z');
    for (const name of CLUSTERS) world.addCluster(name);
    broken = new Set();
    clusters = [...CLUSTERS];
    start();
  });

  test('GIVEN a new waved app WHEN it rolls out THEN the canary goes first, then early one at a time after the soak, then the rest', async () => {
    commit(render('v1'));
    await round();
    expect(revisions()).toStrictEqual(['v1', undefined, undefined, undefined, undefined]);
    // Healthy, but soaking: nothing more for a minute.
    await round();
    advance(30);
    await round();
    expect(revisions()).toStrictEqual(['v1', undefined, undefined, undefined, undefined]);
    advance(31);
    await round();
    expect(revisions()).toStrictEqual(['v1', 'v1', undefined, undefined, undefined]);
    await round();
    expect(revisions()).toStrictEqual(['v1', 'v1', 'v1', undefined, undefined]);
    await round();
    await round();
    expect(revisions()).toStrictEqual(['v1', 'v1', 'v1', 'v1', 'v1']);
    const state = world.get<KubeObject & { data: Record<string, string> }>(
      'ConfigMap',
      `${NS}/pullfleet-rollout-web-state`,
    )!;
    expect(JSON.parse(state.data['progress.json'])).toMatchObject({ phase: 'complete' });
  });

  test('GIVEN a rolled-out app WHEN a new revision is committed THEN each wave gets it only after the previous one is healthy, and the rest keeps v1 meanwhile', async () => {
    commit(render('v1'));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    expect(revisions()).toStrictEqual(['v1', 'v1', 'v1', 'v1', 'v1']);
    commit(render('v2'));
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v1', 'v1', 'v1', 'v1']);
    // The hub apps not yet promoted report the spoke as it is: not yet running the hub's spec.
    const held = world.get<Application>('Application', `${NS}/web-c5`)!;
    expect(held.status?.sync?.status).toBe('Unknown');
    advance(61);
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v1', 'v1', 'v1']);
    await round();
    await round();
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v2', 'v2', 'v2']);
    // Each work kept the payload it replaced, for a rollback.
    expect(
      world.get<ManifestWork>('ManifestWork', workKey('c3'))!.metadata.annotations?.[PREVIOUS_PAYLOAD_ANNOTATION],
    ).toContain('"targetRevision":"v1"');
  });

  test('GIVEN a cluster of wave 2 that never becomes healthy WHEN its deadline passes THEN the rollout halts with a condition naming it, nothing later is written, and a resume retries it', async () => {
    commit(render('v1'));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    broken.add('c2');
    commit(render('v2'));
    await round();
    advance(61);
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v1', 'v1', 'v1']);
    advance(601);
    await round();
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v1', 'v1', 'v1']);
    const halted = world
      .get<Application>('Application', `${NS}/web-c4`)!
      .status!.conditions!.find((c) => c.type === ROLLOUT_HALTED_CONDITION);
    expect(halted?.message).toContain('c2');
    expect(CLUSTERS.every((cluster) => world.get<ManifestWork>('ManifestWork', workKey(cluster)))).toBe(true);
    // A restart (new reconcilers, nothing in memory) keeps the halt.
    start();
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v1', 'v1', 'v1']);
    // Fixed on the spoke, then resumed: the rollout goes on and the condition clears.
    broken.delete('c2');
    const policy = world.get<KubeObject>('ConfigMap', `${NS}/pullfleet-rollout-web`)!;
    world.put('ConfigMap', {
      ...policy,
      metadata: {
        ...policy.metadata,
        annotations: { ...policy.metadata.annotations, [ROLLOUT_RESUME_ANNOTATION]: '1' },
      },
    });
    for (let i = 0; i < 6; i++) await round();
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v2', 'v2', 'v2']);
    expect(
      world
        .get<Application>('Application', `${NS}/web-c4`)!
        .status!.conditions?.some((c) => c.type === ROLLOUT_HALTED_CONDITION),
    ).toBe(false);
  });

  test('GIVEN a commit applied one object at a time WHEN only some hub Applications show the new revision THEN nothing moves until all do, and no wave passes early', async () => {
    commit(render('v1'));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    const v2 = render('v2');
    // Argo CD has applied the policy and the hub Application of c4 (a late wave) only.
    commit(v2.filter((o) => o.kind === 'ConfigMap' || o.metadata.name === 'web-c4'));
    await round();
    advance(61);
    await round();
    expect(revisions()).toStrictEqual(['v1', 'v1', 'v1', 'v1', 'v1']);
    commit(v2);
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v1', 'v1', 'v1', 'v1']);
  });

  test('GIVEN a rollout under way WHEN a spoke joins the canary wave, its hub Application applied before the policy lists it THEN it waits in the last wave, then goes with the canary, and no later wave moves early', async () => {
    commit(render('v1'));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    commit(render('v2'));
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v1', 'v1', 'v1', 'v1']);
    // c6 joins with ring canary: Argo CD has applied its hub Application, not yet the policy naming it.
    world.addCluster('c6');
    clusters.push('c6');
    const joined = render('v2', RolloutFailureAction.PAUSE, { c6: 'canary' });
    commit(joined.filter((o) => o.metadata.name === 'web-c6'));
    await round();
    advance(30);
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v1', 'v1', 'v1', 'v1', undefined]);
    // The policy arrives: c6 is canary, so it goes now, and wave early waits for it and its soak.
    commit(joined);
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v1', 'v1', 'v1', 'v1', 'v2']);
    advance(31);
    await round();
    expect(revisions()).toStrictEqual(['v2', 'v1', 'v1', 'v1', 'v1', 'v2']);
    advance(61);
    for (let i = 0; i < 4; i++) await round();
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v2', 'v2', 'v2', 'v2']);
  });

  test('GIVEN rollback on failure WHEN the rollout halts THEN the failed cluster gets its previous payload back and the others keep theirs', async () => {
    commit(render('v1', RolloutFailureAction.ROLLBACK));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    broken.add('c2');
    commit(render('v2', RolloutFailureAction.ROLLBACK));
    await round();
    advance(61);
    await round();
    advance(601);
    for (let i = 0; i < 3; i++) await round();
    expect(revisions()).toStrictEqual(['v2', 'v1', 'v1', 'v1', 'v1']);
  });

  test('GIVEN a rolled-out app WHEN its waves are removed THEN the rollout state stays while a waved hub Application is left, and goes once none is', async () => {
    commit(render('v1'));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    const stateKey = `${NS}/${rolloutStateName('web')}`;
    expect(world.get('ConfigMap', stateKey)).toBeDefined();
    // The commit without waves reaches the policy first (Argo CD applies one object at a time).
    world.remove('ConfigMap', `${NS}/${rolloutPolicyName('web')}`);
    await world.settle(rollouts, ROLLOUT_KEY);
    expect(world.get('ConfigMap', stateKey)).toBeDefined();
    expect(world.writes.filter((w) => w.verb === 'delete')).toStrictEqual([]);
    // Then every hub Application stops being waved (here: the app is removed from the fleet).
    for (const cluster of CLUSTERS) world.remove('Application', `${NS}/web-${cluster}`);
    await world.settle(rollouts, ROLLOUT_KEY);
    expect(world.get('ConfigMap', stateKey)).toBeUndefined();
    expect(world.writes.filter((w) => w.verb === 'delete').map((w) => w.key)).toStrictEqual([stateKey]);
  });

  test('GIVEN a policy ConfigMap edited into something pullfleet did not write WHEN the app reconciles THEN nothing is promoted or removed, its hub Applications say why, and a fixed policy lets the rollout go on', async () => {
    commit(render('v1'));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    expect(revisions()).toStrictEqual(['v1', 'v1', 'v1', 'v1', 'v1']);
    const policyKey = `${NS}/${rolloutPolicyName('web')}`;
    const policy = world.get<KubeObject & { data: Record<string, string> }>('ConfigMap', policyKey)!;
    // WHEN v2 is committed and someone breaks the policy by hand
    commit(render('v2'));
    world.put('ConfigMap', { ...policy, data: { ...policy.data, 'policy.json': '{not json' } } as never);
    for (let i = 0; i < 3; i++) {
      await round();
      advance(61);
    }
    // THEN every cluster keeps v1, no work is deleted, and each hub Application names the ConfigMap and the fix
    expect(revisions()).toStrictEqual(['v1', 'v1', 'v1', 'v1', 'v1']);
    expect(world.writes.filter((w) => w.verb === 'delete')).toStrictEqual([]);
    for (const cluster of CLUSTERS) {
      const held = world.get<Application>('Application', `${NS}/web-${cluster}`)!;
      const condition = held.status?.conditions?.find((c) => c.type === ROLLOUT_HALTED_CONDITION);
      expect(condition?.message).toContain(`ConfigMap ${policyKey}: policy.json is not JSON`);
      expect(condition?.message).toContain('synthesize the fleet again and let the hub apply it');
    }
    // WHEN the hub applies the policy again THEN the rollout of v2 goes on and the condition goes
    commit(render('v2'));
    for (let i = 0; i < 8; i++) {
      await round();
      advance(61);
    }
    expect(revisions()).toStrictEqual(['v2', 'v2', 'v2', 'v2', 'v2']);
    const fixed = world.get<Application>('Application', `${NS}/web-c1`)!;
    expect(fixed.status?.conditions?.some((c) => c.type === ROLLOUT_HALTED_CONDITION)).toBe(false);
  });

  test('GIVEN one hub Application of the rollout that cannot be delivered (it targets local-cluster) WHEN the rollout runs THEN the other clusters still roll out', async () => {
    commit(render('v1'));
    const broken = world.get<Application>('Application', `${NS}/web-c5`)!;
    world.put('Application', {
      ...broken,
      metadata: {
        ...broken.metadata,
        annotations: { ...broken.metadata.annotations, [MANAGED_CLUSTER_ANNOTATION]: 'local-cluster' },
      },
    });
    await round();
    expect(revisions().slice(0, 4)).toStrictEqual(['v1', undefined, undefined, undefined]);
  });

  test('GIVEN a restart between a promotion and its write WHEN the controller starts again THEN the write is made once, with nothing lost', async () => {
    commit(render('v1'));
    await world.settle(rollouts, ROLLOUT_KEY);
    // The state promotes c1, the process dies before its work is written.
    expect(world.get<ManifestWork>('ManifestWork', workKey('c1'))).toBeUndefined();
    start();
    await round();
    expect(revisions()).toStrictEqual(['v1', undefined, undefined, undefined, undefined]);
  });
});
