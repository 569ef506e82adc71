/**
 * Issue 27, item 2: the hub's Argo CD creates a commit's hub Applications one at a time, in no wave order. A
 * waved static app must not let a later wave's clusters get their works while an earlier wave's hub
 * Application does not exist yet: not for a brand-new app, not for a spoke joining an earlier wave, not for a
 * new revision. Both reconcilers run on the in-memory world; the test applies the commit object by object
 * (policy first, then the hub Applications in reverse wave order), catches the controller up after each, plays
 * the work agent and the spoke Argo CD, and checks after every reconcile that no work moved to a payload before
 * every cluster of the earlier waves ran it healthy, and that nothing was deleted.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import { createApplicationReconciler } from '../../../src/controller/reconcilers/application.js';
import { createRolloutReconciler } from '../../../src/controller/reconcilers/rollout.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { AppSource, PullApplication, Rollout, WaveLimit } from '../../../src/constructs/index.js';
import { testFleet } from '../../support/fleet-builder.js';
import { SPEC_HASH_ANNOTATION } from '../../../src/model/core/keys.js';
import type { Application, KubeObject, ManifestWork } from '../../../src/model/core/types.js';
import { World } from '../../support/world.js';
import { reportRunning } from '../../support/work-status.js';

const NS = 'argocd';
const ROLLOUT_KEY = `${NS}/web`;
/** The spokes of app `web` by ring: canary, early (one at a time), late (the rest). */
const BASE: Record<string, Ring> = { c1: 'canary', c2: 'early', c3: 'early', c4: 'late', c5: 'late' };
type Ring = 'canary' | 'early' | 'late';
const WAVE_INDEX: Record<Ring, number> = { canary: 0, early: 1, late: 2 };

/** What synth renders into the hub's applications.yaml for `web` at `revision` on `spokes`: the policy first. */
function render(revision: string, spokes: Record<string, Ring>): KubeObject[] {
  const {
    fleet,
    hub,
    spokes: declared,
  } = testFleet({
    hub: { argoNamespace: NS },
    sets: ['prod'],
    spokes: Object.entries(spokes).map(([name, ring]) => ({ name, labels: { ring } })),
  });
  new PullApplication(hub, 'web', {
    source: AppSource.git({ repoURL: 'https://git.example/apps.git', path: 'web', targetRevision: revision }),
    destinationNamespace: 'web',
    spokes: declared,
    rollout: Rollout.waves(
      [
        { name: 'canary', labels: { ring: 'canary' }, soak: Duration.minutes(1) },
        { name: 'early', labels: { ring: 'early' }, maxInFlight: WaveLimit.count(1) },
        { name: 'late', rest: true },
      ],
      { progressDeadline: Duration.minutes(30) },
    ),
  });
  const objects: KubeObject[] = [];
  for (const [file, list] of fleet.renderObjects())
    if (file.endsWith('applications.yaml')) objects.push(...(list as unknown as KubeObject[]));
  return objects.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'ConfigMap' ? -1 : 1));
}

const workKey = (cluster: string) => `${cluster}/${NS}-web-${cluster}`;
const payloadOf = (work: ManifestWork | undefined) =>
  work?.spec.workload.manifests.find((m) => m.kind === 'Application') as Application | undefined;
/** The source revision the work of `cluster` carries (undefined: no work). */
const revisionAt = (world: World, cluster: string): string | undefined => {
  const revision = payloadOf(world.get<ManifestWork>('ManifestWork', workKey(cluster)))?.spec.source?.targetRevision;
  return typeof revision === 'string' ? revision : undefined;
};

describe('a waved app whose hub Applications arrive one at a time, in reverse wave order', () => {
  let world: World;
  let apps: Reconciler;
  let rollouts: Reconciler;
  /** The spokes of the app now, by ring. */
  let rings: Record<string, Ring>;
  /** Every breach of the wave order seen, with what the world held then. */
  let violations: string[];

  beforeEach(() => {
    world = new World();
    world.clock = new Date('2026-03-01T12:00:00Z');
    rings = { ...BASE };
    violations = [];
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']) world.addCluster(name);
    apps = world.reconciler(createApplicationReconciler, { relaxTenancy: true, argoNamespace: NS });
    rollouts = world.reconciler(createRolloutReconciler, { relaxTenancy: true, argoNamespace: NS });
  });

  /** What the hub's Argo CD does with one object of a commit: applies it, leaving what others wrote. */
  function argoApplies(object: KubeObject): void {
    world.applyFromGit(NS, object);
  }

  /** Whether the spoke of `cluster` reported running its work's payload, Healthy and Synced. */
  function healthyAtItsWork(cluster: string): boolean {
    const work = world.get<ManifestWork>('ManifestWork', workKey(cluster));
    const payload = payloadOf(work);
    const values = work?.status?.resourceStatus?.manifests?.[0]?.statusFeedback?.values ?? [];
    const value = (name: string) => {
      const field = values.find((v) => v.name === name)?.fieldValue;
      return field?.type === 'String' ? field.string : undefined;
    };
    return (
      payload !== undefined &&
      value('specHash') === payload.metadata.annotations?.[SPEC_HASH_ANNOTATION] &&
      value('healthStatus') === 'Healthy' &&
      value('syncStatus') === 'Synced'
    );
  }

  /** One reconcile of `cluster`'s hub Application, checking the wave order on whatever it wrote. */
  async function settleApp(cluster: string): Promise<void> {
    const before = revisionAt(world, cluster);
    await world.settle(apps, `${NS}/web-${cluster}`);
    const after = revisionAt(world, cluster);
    if (after === undefined || after === before) return;
    const wave = WAVE_INDEX[rings[cluster] ?? 'late'];
    for (const [other, ring] of Object.entries(rings)) {
      if (WAVE_INDEX[ring] >= wave) continue;
      const carried = revisionAt(world, other);
      const hubApp = world.get<Application>('Application', `${NS}/web-${other}`);
      if (carried !== after || !healthyAtItsWork(other))
        violations.push(
          `${cluster} (${rings[cluster]}) got ${after} while ${other} (${ring}) ${hubApp ? `carried ${carried ?? 'nothing'}${carried === after ? ', not yet healthy' : ''}` : 'had no hub Application'}`,
        );
    }
  }

  /** The work agent and the spoke Argo CD: every spoke runs its work's payload, Healthy and Synced. */
  function spokesReport(): void {
    for (const cluster of Object.keys(rings)) {
      const work = world.get<ManifestWork>('ManifestWork', workKey(cluster));
      const payload = payloadOf(work);
      if (!work || !payload) continue;
      reportRunning(world, work, payload, 'Healthy');
    }
  }

  /** The controller caught up: the rollout decides, every hub Application reconciles, the spokes report, again. */
  async function catchUp(): Promise<void> {
    for (let i = 0; i < 2; i++) {
      await world.settle(rollouts, ROLLOUT_KEY);
      for (const cluster of Object.keys(rings)) await settleApp(cluster);
      spokesReport();
    }
    await world.settle(rollouts, ROLLOUT_KEY);
  }

  /** Argo CD applies `objects` one at a time, hub Applications in reverse wave order; `between` runs after each. */
  async function applyOneByOne(objects: KubeObject[], between: () => Promise<void>): Promise<void> {
    const order = (o: KubeObject) =>
      o.kind === 'ConfigMap' ? -10 : -WAVE_INDEX[rings[o.metadata.name.replace(/^web-/, '')] ?? 'late'];
    const sorted = [...objects].sort((a, b) => order(a) - order(b) || (a.metadata.name < b.metadata.name ? 1 : -1));
    for (const object of sorted) {
      argoApplies(object);
      await between();
    }
  }

  const advance = (seconds: number) => {
    world.clock = new Date(world.clock.getTime() + seconds * 1000);
  };
  /** The controller caught up after each minute for `minutes` minutes (soaks pass). */
  async function minutes(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      advance(61);
      await catchUp();
    }
  }
  const revisions = (): Record<string, string | undefined> =>
    Object.fromEntries(Object.keys(rings).map((c) => [c, revisionAt(world, c)]));
  const progress = () =>
    JSON.parse(
      world.get<KubeObject & { data: Record<string, string> }>('ConfigMap', `${NS}/pullfleet-rollout-web-state`)?.data[
        'progress.json'
      ] ?? '{}',
    ) as {
      phase?: string;
      held?: { wave: string; applications: string[]; message: string };
      waves?: Array<{ name: string; missing?: string[] }>;
    };
  const deletes = () => world.writes.filter((w) => w.verb === 'delete');

  /** A rolled-out app at v1 on the base spokes. */
  async function rolledOut(): Promise<void> {
    for (const object of render('v1', rings)) argoApplies(object);
    await catchUp();
    await minutes(8);
    expect(revisions()).toStrictEqual({ c1: 'v1', c2: 'v1', c3: 'v1', c4: 'v1', c5: 'v1' });
    expect(progress().phase).toBe('complete');
  }

  test('GIVEN a brand-new app WHEN its hub Applications arrive late wave first, each a minute apart THEN no work exists before the canary hub Application does, and each wave waits for the ones before it', async () => {
    // WHEN Argo CD syncs the commit: the policy, then c5, c4, c3, c2, c1, the controller caught up after each
    const seen: Array<Record<string, string | undefined>> = [];
    await applyOneByOne(render('v1', rings), async () => {
      await catchUp();
      await minutes(1);
      seen.push(revisions());
    });
    // THEN nothing was written while c1's hub Application was missing (the policy and four hub Applications)
    expect(seen.slice(0, 5)).toStrictEqual(
      Array.from({ length: 5 }, () => ({ c1: undefined, c2: undefined, c3: undefined, c4: undefined, c5: undefined })),
    );
    await minutes(8);
    expect(revisions()).toStrictEqual({ c1: 'v1', c2: 'v1', c3: 'v1', c4: 'v1', c5: 'v1' });
    expect(violations).toStrictEqual([]);
    expect(deletes()).toStrictEqual([]);
    expect(progress().phase).toBe('complete');
  });

  test('GIVEN a brand-new app with only later waves applied THEN its progress names the missing canary hub Application and the wave', async () => {
    const objects = render('v1', rings);
    for (const object of objects.filter((o) => o.metadata.name !== 'web-c1')) argoApplies(object);
    await catchUp();
    await minutes(3);
    expect(revisions()).toStrictEqual({ c1: undefined, c2: undefined, c3: undefined, c4: undefined, c5: undefined });
    const held = progress().held;
    expect(held?.wave).toBe('canary');
    expect(held?.applications).toStrictEqual([`${NS}/web-c1`]);
    expect(held?.message).toContain(`hub Application ${NS}/web-c1 (cluster c1) does not exist`);
    expect(held?.message).toContain('waves "early", "late" wait until the wave is done');
    expect(progress().waves?.[0]?.missing).toStrictEqual([`${NS}/web-c1`]);
  });

  test('GIVEN a rolled-out app WHEN spokes join the canary and the late wave, the late one applied first THEN the late joiner gets no work before the canary joiner runs healthy', async () => {
    await rolledOut();
    // WHEN c6 joins the canary and c7 the late wave (same revision): policy, c7, then c6
    rings = { ...rings, c6: 'canary', c7: 'late' };
    const joined = render('v1', rings).filter((o) => o.kind === 'ConfigMap' || /web-c[67]$/.test(o.metadata.name));
    await applyOneByOne(joined, async () => {
      await catchUp();
      await minutes(2);
    });
    await minutes(4);
    // THEN both get v1, c7 only after c6 ran it healthy; the others kept theirs, nothing was deleted
    expect(revisions()).toStrictEqual({ c1: 'v1', c2: 'v1', c3: 'v1', c4: 'v1', c5: 'v1', c6: 'v1', c7: 'v1' });
    expect(violations).toStrictEqual([]);
    expect(deletes()).toStrictEqual([]);
  });

  test('GIVEN a rolled-out app WHEN a new revision adds a canary spoke whose hub Application comes last THEN the early wave waits for it, wave by wave, and nothing is deleted', async () => {
    await rolledOut();
    // WHEN v2 adds c6 to the canary: policy, c5 … c1 updated, a few minutes pass, then c6 is created
    rings = { ...rings, c6: 'canary' };
    const v2 = render('v2', rings);
    await applyOneByOne(
      v2.filter((o) => o.metadata.name !== 'web-c6'),
      async () => {
        await catchUp();
        await minutes(1);
      },
    );
    await minutes(5);
    // THEN c1 moved; the early wave waits for c6, and the progress says so
    expect(revisions()).toStrictEqual({ c1: 'v2', c2: 'v1', c3: 'v1', c4: 'v1', c5: 'v1', c6: undefined });
    expect(progress().held?.applications).toStrictEqual([`${NS}/web-c6`]);
    argoApplies(v2.find((o) => o.metadata.name === 'web-c6')!);
    await catchUp();
    await minutes(8);
    expect(revisions()).toStrictEqual({ c1: 'v2', c2: 'v2', c3: 'v2', c4: 'v2', c5: 'v2', c6: 'v2' });
    expect(progress().held).toBeUndefined();
    expect(violations).toStrictEqual([]);
    expect(deletes()).toStrictEqual([]);
  });
});
