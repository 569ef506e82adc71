/**
 * RollingSync of a PullApplicationSet on hubs whose applicationset-controller runs the state machine of Argo CD
 * 2.14 or 3.0–3.2 (test/support/progressive-sync-sim.ts, `release`), on a real API server with the controller
 * as it ships (its own process, as its ServiceAccount). The test drives every actor but pullfleet's controller
 * one step at a time (test/support/stepped-spokes.ts plays the work agent and each spoke's Argo CD); before
 * each step it waits until pullfleet's controller has acted on everything the others did. No timing decides
 * anything: a step is taken only when the one before has been written back.
 *
 * What these releases need from the write-back (../shared/upstream-audit.md W3): 2.14 moves a Pending app to
 * Progressing after a `Succeeded` sync only when `status.operationState.syncResult.revision(s)` equal the step's
 * target revisions (and reads `syncResult` without a nil check); 3.0–3.2 move it on `Succeeded` while not
 * `OutOfSync`, and to Healthy when Healthy, not `OutOfSync`, and the phase is `Succeeded` or none.
 */
import { afterEach, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplicationSet,
  Rollout,
  Spoke,
  WaveLimit,
} from '../../src/constructs/index.js';
import { ARGOCD_API_VERSION } from '../../src/model/core/keys.js';
import type { Application } from '../../src/model/core/types.js';
import { RolloutHub, type RolloutEnv } from '../support/rollout-env.js';
import { appSetLag } from '../support/appset-lag.js';
import { ProgressiveSyncSim } from '../support/progressive-sync-sim.js';
import type { RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { resolveRevision } from '../support/spoke-argocd.js';
import { SteppedSpokes } from '../support/stepped-spokes.js';
import { waitFor } from '../support/wait.js';

const APP = 'web';
const ARGO_FIELD_MANAGER = 'argocd-controller';
/** Steps of the ApplicationSet: a canary, two one at a time, the rest. */
const STEPS = [['a1'], ['b1', 'b2'], ['c1']] as const;
/** Bound for pullfleet's controller to act on one step of the other actors (it takes well under a second). */
const CATCH_UP_TIMEOUT_MS = 60_000;

type Env = RolloutEnv;

describeRealServer('rollout waves on Argo CD 2.14 and 3.0–3.2 hubs', (kubeconfigPath) => {
  const hub = new RolloutHub(kubeconfigPath, 'ro', ['Application', 'ApplicationSet']);
  const { kubeConfig, cluster, raw } = hub;
  let sim: ProgressiveSyncSim | undefined;

  afterEach(async () => {
    const { stuck, forbidden } = await hub.stopController();
    sim?.stop();
    sim = undefined;
    await hub.tearDown();
    expect(stuck).toStrictEqual([]);
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  const given = (): Promise<Env> => hub.given(STEPS.flat());

  /** The hub objects the fleet renders for `e` at `revision` (cluster set, binding, Placement, ApplicationSet). */
  function renderHub(e: Env, revision: string): RawObject[] {
    const fleet = new Fleet({});
    const hub = new Hub(fleet, 'hub', { argoNamespace: e.argoNamespace });
    const set = new ClusterSet(hub, e.clusterSet);
    const spokes = Object.values(e.clusters).map((name) => new Spoke(hub, name, { clusterSet: set }));
    new PullApplicationSet(hub, APP, {
      source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: APP, targetRevision: revision }),
      destinationNamespace: APP,
      placement: new Placement(hub, 'prod', { clusterSets: [set] }),
      rollout: Rollout.waves(
        STEPS.map((step, i) =>
          i === STEPS.length - 1
            ? { name: `step-${i + 1}`, rest: true }
            : {
                name: `step-${i + 1}`,
                spokes: spokes.filter((s) => step.some((short) => s.name === e.clusters[short])),
                ...(step.length > 1 ? { maxInFlight: WaveLimit.count(1) } : {}),
              },
        ),
      ),
    });
    return [...fleet.renderObjects().entries()]
      .filter(([file]) => file === 'hub/hub/cluster-sets.yaml' || file === 'hub/hub/application-sets.yaml')
      .flatMap(([, list]) => list as RawObject[])
      .filter((o) =>
        ['ConfigMap', 'ManagedClusterSet', 'ManagedClusterSetBinding', 'Placement', 'ApplicationSet'].includes(o.kind),
      );
  }

  async function applyAsArgo(objects: readonly RawObject[]): Promise<void> {
    for (const object of objects) await raw.apply(object, ARGO_FIELD_MANAGER);
  }

  async function hubApps(e: Env): Promise<Application[]> {
    return cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: e.argoNamespace });
  }

  const hubAppName = (name: string) => `${name}-${APP}`;

  interface Run {
    readonly e: Env;
    readonly sim: ProgressiveSyncSim;
    readonly spokes: SteppedSpokes;
    readonly steps: string[];
    /** Spoke syncs that started while a cluster of an earlier step did not run that revision Healthy. */
    readonly outOfOrder: string[];
    readonly tick: () => void;
  }

  async function start(release: string): Promise<Run> {
    const e = await given();
    const stepOf = new Map<string, number>();
    STEPS.forEach((step, i) => step.forEach((s) => stepOf.set(e.clusters[s], i)));
    let now = Math.ceil(Date.now() / 1000) * 1000;
    const clock = () => now;
    const outOfOrder: string[] = [];
    const spokes: SteppedSpokes = new SteppedSpokes(cluster, {
      clusters: Object.values(e.clusters),
      clock,
      onSync: (sync) => {
        for (const [other, step] of stepOf) {
          if (step >= stepOf.get(sync.cluster)!) continue;
          const state = spokes.state(other);
          if (state.syncedRevision !== sync.revision || state.health !== 'Healthy')
            outOfOrder.push(`${sync.cluster} synced ${sync.targetRevision} before ${other}`);
        }
      },
    });
    await applyAsArgo(renderHub(e, 'v1'));
    sim = new ProgressiveSyncSim(cluster, kubeConfig, {
      namespace: e.argoNamespace,
      name: APP,
      clusters: Object.values(e.clusters),
      clock,
      release,
    });
    await sim.start();
    await hub.controllers!.start();
    return { e, sim, spokes, steps: [], outOfOrder, tick: () => (now += 1000) };
  }

  /** Why pullfleet's controller has not yet acted on everything the others did (empty: it has). */
  const lagging = (run: Run): Promise<string[]> =>
    appSetLag({
      cluster,
      sim: run.sim,
      spokes: run.spokes,
      namespace: run.e.argoNamespace,
      name: APP,
      clusters: Object.values(run.e.clusters),
      hubAppName,
      runningOperationMayStay: true,
    });

  /**
   * Moves the rollout on one step at a time until `done` holds: a spoke comparing a new spec as soon as its work
   * carries it, else a pass of the applicationset-controller when one is queued, else a spoke running the
   * operation its work carries. Fails when nothing can move (the rollout would wait for the generator's requeue).
   */
  async function drive(run: Run, goal: string, done: () => Promise<boolean>): Promise<void> {
    const order = STEPS.flat().map((short) => run.e.clusters[short]);
    for (let taken = 0; taken < 200; taken++) {
      await waitFor(
        `pullfleet's controller to act on step ${run.steps.length} (${run.steps.at(-1)})`,
        async () => ((await lagging(run)).length === 0 ? true : undefined),
        { timeoutMs: CATCH_UP_TIMEOUT_MS, intervalMs: 50, describe: () => lagging(run) },
      );
      if (await done()) return;
      let comparing: string | undefined;
      let operating: string | undefined;
      for (const name of order) {
        if (!comparing && (await run.spokes.hasNewSpec(name))) comparing = name;
        if (!operating && (await run.spokes.hasNewOperation(name))) operating = name;
      }
      run.tick();
      if (comparing) {
        run.steps.push(`${comparing} compares`);
        await run.spokes.compare(comparing);
      } else if (run.sim.queued.length > 0) {
        run.steps.push(`pass ${run.sim.passes + 1}`);
        await run.sim.pass();
      } else if (operating) {
        run.steps.push(`${operating} runs its operation`);
        await run.spokes.runOperation(operating);
      } else
        throw new Error(
          `the rollout stalled before ${goal}: no pass is queued and no spoke has anything to do; steps: ${JSON.stringify(run.steps)}; applicationStatus: ${JSON.stringify(run.sim.applicationStatus)}`,
        );
    }
    throw new Error(`no ${goal} after 200 steps: ${JSON.stringify(run.steps.slice(-20))}`);
  }

  function rolledOut(run: Run, revision: string): () => Promise<boolean> {
    return async () => {
      const apps = await hubApps(run.e);
      return (
        apps.length === STEPS.flat().length &&
        apps.every(
          (a) =>
            run.sim.statusOf(a.metadata.name)?.status === 'Healthy' &&
            a.status?.health?.status === 'Healthy' &&
            a.status.sync?.revision === resolveRevision(revision),
        ) &&
        Object.values(run.e.clusters).every(
          (name) => run.spokes.state(name).syncedRevision === resolveRevision(revision),
        )
      );
    };
  }

  test.each(['2.14', '3.0', '3.2'])(
    'a new template revision rolls out step by step through the pull model on an Argo CD %s hub',
    async (release) => {
      // GIVEN a PullApplicationSet over 4 clusters in 3 steps on the applicationset-controller of `release`
      const run = await start(release);
      await drive(run, 'v1 everywhere', rolledOut(run, 'v1'));
      const mark = run.spokes.syncs.length;

      // WHEN the template moves to v2
      await applyAsArgo(renderHub(run.e, 'v2'));
      run.steps.push('the hub applies the template at v2');
      await drive(run, 'v2 everywhere', rolledOut(run, 'v2'));

      // THEN v2 reached every cluster, step by step, each sync asked for by RollingSync (automated sync is
      // removed from generated Applications on these releases)
      expect(run.outOfOrder).toStrictEqual([]);
      const v2 = run.spokes.syncs.slice(mark);
      expect(v2.filter((s) => !s.byOperation)).toStrictEqual([]);
      const first = (short: string) => v2.findIndex((s) => s.cluster === run.e.clusters[short]);
      expect(Object.keys(run.e.clusters).every((short) => first(short) >= 0)).toBe(true);
      expect(first('a1')).toBeLessThan(Math.min(first('b1'), first('b2')));
      expect(Math.max(first('b1'), first('b2'))).toBeLessThan(first('c1'));
      // AND every hub Application shows the revision its spoke's last sync applied, and nothing else of syncResult
      for (const app of await hubApps(run.e))
        expect(app.status?.operationState?.syncResult).toStrictEqual({ revision: resolveRevision('v2') });
    },
    240_000,
  );
});
