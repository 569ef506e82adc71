/**
 * Rollout waves end to end on a real API server, with the controller as it ships (its own process, as its
 * ServiceAccount, only the RBAC its install grants). The fleet is rendered with pullfleet's constructs and
 * applied as the hub's Argo CD would (server-side apply of the hub objects); the test plays the OCM work
 * agent and each spoke's Argo CD (test/support/spoke-argocd.ts) and, for ApplicationSets, the
 * applicationset-controller's progressive sync (test/support/progressive-sync-sim.ts).
 *
 * The invariants are checked over the whole history of every ManifestWork, as one watch delivered it in the
 * order the API server stored the versions (status reports included), never by timing.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Rollout,
  Spoke,
  WaveLimit,
} from '../../src/constructs/index.js';
import { ARGOCD_API_VERSION, CLEANUP_FINALIZER, WORK_API_VERSION } from '../../src/model/core/keys.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import {
  ROLLOUT_HALTED_CONDITION,
  ROLLOUT_RESUME_ANNOTATION,
  ROLLOUT_STATE_KEY,
} from '../../src/model/rollout/policy.js';
import { RolloutHub, type RolloutEnv } from '../support/rollout-env.js';
import { appSetLag } from '../support/appset-lag.js';
import { streamObjects, type ObjectStream } from '../support/object-watch.js';
import { ProgressiveSyncSim } from '../support/progressive-sync-sim.js';
import type { RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { resolveRevision, SpokeFleet, type WorkVersion } from '../support/spoke-argocd.js';
import { SteppedSpokes } from '../support/stepped-spokes.js';
import { waitFor } from '../support/wait.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'pullfleet.js');

/** `pullfleet status -n <namespace>` through the binary, with the test's kubeconfig file. */
function pullfleetStatus(kubeconfigPath: string, namespace: string): { code: number; out: string; err: string } {
  const result = spawnSync(process.execPath, [BIN, 'status', '--kubeconfig', kubeconfigPath, '-n', namespace], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (result.error) throw result.error;
  return { code: result.status ?? -1, out: result.stdout, err: result.stderr };
}

const TIMEOUT_MS = 90_000;
const APP = 'web';
const ARGO_FIELD_MANAGER = 'argocd-controller';

type Env = RolloutEnv;

/** Waves of the static app: canary (soak), second (one at a time), the rest. */
const WAVES = [['a1'], ['b1', 'b2'], ['c1', 'c2']] as const;

interface RolloutProgress {
  phase: string;
  waves: Array<{ name: string; clusters: number; done: number; inFlight: number; failed: number; state: string }>;
  halted?: { clusters: string[]; message: string };
}
interface RolloutStateDoc {
  target: string;
  startedAt: string;
  clusters: Record<
    string,
    { target: string; from?: string; promotedAt: string; doneAt?: string; failedAt?: string; failure?: string }
  >;
  halted?: { at: string; clusters: string[]; reason: string };
  waveCompletedAt?: Record<string, string>;
}

describeRealServer('rollout waves', (kubeconfigPath) => {
  const hub = new RolloutHub(kubeconfigPath, 'rw', ['Application', 'ApplicationSet']);
  const { kubeConfig, cluster, raw } = hub;
  let spokes: SpokeFleet | undefined;
  let sim: ProgressiveSyncSim | undefined;
  const streams: ObjectStream[] = [];

  afterEach(async () => {
    const { stuck, forbidden } = await hub.stopController();
    const problems: unknown[] = [];
    for (const stop of [() => sim?.stop(), () => spokes?.stop()])
      await Promise.resolve(stop()).catch((e: unknown) => problems.push(e));
    sim = undefined;
    spokes = undefined;
    for (const stream of streams.splice(0)) stream.stop();
    await hub.tearDown();
    expect(stuck).toStrictEqual([]);
    // Every request the controller made was allowed by the RBAC its install ships.
    expect(forbidden).toStrictEqual([]);
    expect(problems.map(String)).toStrictEqual([]);
  }, 120_000);

  const given = (shortNames: readonly string[]): Promise<Env> => hub.given(shortNames);

  /** The hub objects a fleet renders for `e` (cluster set, binding, hub Applications, policy, ApplicationSet). */
  function renderHub(
    e: Env,
    revision: string,
    app: { kind: 'static'; deadline: Duration } | { kind: 'appset'; steps: ReadonlyArray<readonly string[]> },
  ): RawObject[] {
    const fleet = new Fleet({});
    const hub = new Hub(fleet, 'hub', { argoNamespace: e.argoNamespace });
    const set = new ClusterSet(hub, e.clusterSet);
    const spokes = Object.entries(e.clusters).map(
      ([short, name]) => new Spoke(hub, name, { clusterSet: set, labels: { ring: short.slice(0, 1) } }),
    );
    const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: APP, targetRevision: revision });
    if (app.kind === 'static') {
      new PullApplication(hub, APP, {
        source,
        destinationNamespace: APP,
        spokes,
        rollout: Rollout.waves(
          [
            { name: 'canary', labels: { ring: 'a' }, soak: Duration.seconds(3) },
            { name: 'second', labels: { ring: 'b' }, maxInFlight: WaveLimit.count(1) },
            { name: 'rest', rest: true },
          ],
          { progressDeadline: app.deadline },
        ),
      });
    } else {
      new PullApplicationSet(hub, APP, {
        source,
        destinationNamespace: APP,
        placement: new Placement(hub, 'prod', { clusterSets: [set] }),
        rollout: Rollout.waves(
          app.steps.map((step, i) =>
            i === app.steps.length - 1
              ? { name: `step-${i + 1}`, rest: true }
              : {
                  name: `step-${i + 1}`,
                  spokes: spokes.filter((s) => step.some((short) => s.name === e.clusters[short])),
                  ...(step.length > 1 ? { maxInFlight: WaveLimit.count(1) } : {}),
                },
          ),
        ),
      });
    }
    const objects = [...fleet.renderObjects().entries()]
      .filter(
        ([file]) =>
          file === 'hub/hub/applications.yaml' ||
          file === 'hub/hub/cluster-sets.yaml' ||
          file === 'hub/hub/application-sets.yaml',
      )
      .flatMap(([, list]) => list) as RawObject[];
    return objects.filter((o) =>
      ['Application', 'ConfigMap', 'ManagedClusterSet', 'ManagedClusterSetBinding', 'ApplicationSet'].includes(o.kind),
    );
  }

  /** What the hub's Argo CD does with a commit: server-side applies every object. */
  async function applyAsArgo(objects: readonly RawObject[]): Promise<void> {
    for (const object of objects) await raw.apply(object, ARGO_FIELD_MANAGER);
  }

  async function works(e: Env): Promise<Record<string, ManifestWork | undefined>> {
    const out: Record<string, ManifestWork | undefined> = {};
    for (const [short, ns] of Object.entries(e.clusters)) {
      const list = await cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: ns });
      out[short] = list.find((w) =>
        (w.spec.workload.manifests as Array<{ kind?: string }>).some((m) => m.kind === 'Application'),
      );
    }
    return out;
  }

  const revisionOf = (work: ManifestWork | undefined) =>
    (
      work?.spec.workload.manifests.find((m) => (m as { kind?: string }).kind === 'Application') as
        { spec?: { source?: { targetRevision?: string } } } | undefined
    )?.spec?.source?.targetRevision;

  async function rolloutState(e: Env): Promise<{ progress?: RolloutProgress; state?: RolloutStateDoc }> {
    const map = await cluster.get<{ data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: e.argoNamespace,
      name: `pullfleet-rollout-${APP}-state`,
    });
    return {
      ...(map?.data?.['progress.json'] ? { progress: JSON.parse(map.data['progress.json']) as RolloutProgress } : {}),
      ...(map?.data?.[ROLLOUT_STATE_KEY] ? { state: JSON.parse(map.data[ROLLOUT_STATE_KEY]) as RolloutStateDoc } : {}),
    };
  }

  /** Waits until every cluster's work carries `revision`, the spoke reports it healthy, and the rollout says complete. */
  async function rolloutCompletes(e: Env, revision: string): Promise<void> {
    await waitFor(
      `the rollout of ${revision} to complete`,
      async () => {
        const all = await works(e);
        const carried = Object.values(all).every(
          (w) =>
            revisionOf(w) === revision &&
            spokes!.applicationState(w!.metadata.namespace!, `${APP}-${w!.metadata.namespace}`)?.syncedRevision ===
              resolveRevision(revision),
        );
        const { progress } = await rolloutState(e);
        return carried && progress?.phase === 'complete';
      },
      {
        timeoutMs: TIMEOUT_MS,
        intervalMs: 200,
        describe: async () => ({
          works: Object.fromEntries(Object.entries(await works(e)).map(([k, w]) => [k, revisionOf(w)])),
          progress: (await rolloutState(e)).progress,
          spokes: spokes?.problems(),
        }),
      },
    );
  }

  /**
   * Over the whole history: when a cluster's work starts carrying a payload, every cluster of every earlier
   * wave carries the same payload and reports it Healthy and Synced (at that payload's spec hash); and at no
   * moment are more clusters of an in-flight-limited wave carrying a payload they do not report healthy at.
   */
  function waveViolations(e: Env, history: readonly WorkVersion[], limits: Record<number, number>): string[] {
    const waveOf = new Map<string, number>();
    WAVES.forEach((wave, i) => wave.forEach((short) => waveOf.set(e.clusters[short], i)));
    const short = new Map(Object.entries(e.clusters).map(([s, n]) => [n, s]));
    const latest = new Map<string, WorkVersion>();
    const healthyAt = (v: WorkVersion | undefined, hash: string | undefined) =>
      v !== undefined &&
      v.specHash === hash &&
      v.feedback.specHash === hash &&
      v.feedback.health === 'Healthy' &&
      v.feedback.sync === 'Synced';
    const violations: string[] = [];
    for (const version of history) {
      if (version.app !== `${APP}-${version.cluster}`) continue;
      const before = latest.get(version.cluster);
      if (version.type === 'DELETED') {
        violations.push(`#${version.seq}: the work of ${short.get(version.cluster)} was deleted`);
        latest.delete(version.cluster);
        continue;
      }
      latest.set(version.cluster, version);
      const wave = waveOf.get(version.cluster) ?? -1;
      if (before?.specHash !== version.specHash) {
        for (const [other, otherWave] of waveOf) {
          if (otherWave >= wave) continue;
          if (!healthyAt(latest.get(other), version.specHash))
            violations.push(
              `#${version.seq}: ${short.get(version.cluster)} (wave ${wave + 1}) got ${version.targetRevision} while ${short.get(other)} (wave ${otherWave + 1}) ${
                latest.get(other)?.specHash === version.specHash
                  ? `did not report it healthy yet (${JSON.stringify(latest.get(other)?.feedback)})`
                  : `carried ${latest.get(other)?.targetRevision ?? 'nothing'}`
              }`,
            );
        }
      }
      for (const [index, limit] of Object.entries(limits)) {
        const flying = WAVES[Number(index)]
          .map((s) => latest.get(e.clusters[s]))
          .filter((v) => v !== undefined && !healthyAt(v, v.specHash));
        if (flying.length > limit)
          violations.push(
            `#${version.seq}: wave ${Number(index) + 1} has ${flying.length} clusters in flight (${flying.map((v) => short.get(v!.cluster)).join(', ')}), limit ${limit}`,
          );
      }
    }
    return violations;
  }

  async function hubApps(e: Env): Promise<Application[]> {
    return (await cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: e.argoNamespace })).sort(
      (a, b) => (a.metadata.name < b.metadata.name ? -1 : 1),
    );
  }

  async function startStatic(deadline: Duration): Promise<Env> {
    const e = await given(WAVES.flat());
    await applyAsArgo(renderHub(e, 'v1', { kind: 'static', deadline }));
    spokes = new SpokeFleet(cluster, kubeConfig, { clusters: Object.values(e.clusters) });
    await spokes.start();
    await hub.controllers!.start();
    await rolloutCompletes(e, 'v1');
    return e;
  }

  test('a new revision of a waved static app reaches the spokes wave by wave: canary, soak, one at a time, the rest', async () => {
    // GIVEN a static app on 5 spokes in 3 waves, delivered at v1 by the shipped controller
    const e = await startStatic(Duration.minutes(5));
    const { state: v1State } = await rolloutState(e);

    // WHEN the hub's Argo CD applies the commit that moves the app to v2
    await applyAsArgo(renderHub(e, 'v2', { kind: 'static', deadline: Duration.minutes(5) }));
    await rolloutCompletes(e, 'v2');

    // THEN over the whole history: no wave got a payload before the waves ahead of it were healthy at it,
    // the second wave had at most one cluster in flight, and no work was ever deleted
    expect(waveViolations(e, spokes!.history, { 1: 1 })).toStrictEqual([]);
    // every cluster got v2 in exactly one write of its work
    const v2Writes = Object.fromEntries(
      Object.entries(e.clusters).map(([short, name]) => [
        short,
        new Set(
          spokes!.history
            .filter((v) => v.cluster === name && v.app === `${APP}-${name}` && v.targetRevision === 'v2')
            .map((v) => v.generation),
        ).size,
      ]),
    );
    expect(v2Writes).toStrictEqual({ a1: 1, b1: 1, b2: 1, c1: 1, c2: 1 });
    const { progress, state } = await rolloutState(e);
    expect(state!.target).not.toBe(v1State!.target);
    expect(progress).toMatchObject({
      phase: 'complete',
      waves: [
        { name: 'canary', clusters: 1, done: 1, failed: 0, state: 'done' },
        { name: 'second', clusters: 2, done: 2, failed: 0, state: 'done' },
        { name: 'rest', clusters: 2, done: 2, failed: 0, state: 'done' },
      ],
    });
    for (const app of await hubApps(e))
      expect(app.status?.conditions?.map((c) => c.type) ?? []).not.toContain(ROLLOUT_HALTED_CONDITION);
    // the rollout knows the canary moved (from v1: what a rollback gives back) and the second wave started
    // only after the canary's soak (hub times the controller recorded)
    const canary = state!.clusters[e.clusters.a1];
    const canaryDone = Date.parse(state!.waveCompletedAt!.canary);
    expect({
      canaryFrom: canary.from,
      promotedBeforeSoakEnd: ['b1', 'b2', 'c1', 'c2'].filter(
        (short) => Date.parse(state!.clusters[e.clusters[short]].promotedAt) < canaryDone + 3000,
      ),
    }).toStrictEqual({ canaryFrom: v1State!.clusters[e.clusters.a1].target, promotedBeforeSoakEnd: [] });
  }, 240_000);

  test('a cluster whose sync fails halts the rollout: later waves keep their revision, nothing is deleted, and a fix plus a resume completes it', async () => {
    // GIVEN the app at v1 everywhere, and a second-wave spoke whose syncs will fail (its clock 2 s ahead)
    const e = await startStatic(Duration.seconds(20));
    spokes!.setBehaviour(e.clusters.b1, { phase: 'Failed', health: 'Degraded', skewMs: 2000 });

    // WHEN v2 is committed
    await applyAsArgo(renderHub(e, 'v2', { kind: 'static', deadline: Duration.seconds(20) }));

    // THEN the rollout halts on b1, with a condition on the hub Applications naming it
    await waitFor(
      'RolloutHalted on every hub Application',
      async () => {
        const apps = await hubApps(e);
        return (
          apps.length === 5 &&
          apps.every((a) =>
            a.status?.conditions?.some(
              (c) => c.type === ROLLOUT_HALTED_CONDITION && c.message?.includes(e.clusters.b1),
            ),
          )
        );
      },
      { timeoutMs: TIMEOUT_MS, intervalMs: 200, describe: async () => (await rolloutState(e)).progress },
    );
    const halted = await rolloutState(e);
    expect(halted.progress).toMatchObject({ phase: 'halted', halted: { clusters: [e.clusters.b1] } });
    expect(halted.state!.clusters[e.clusters.b1].failure).toMatch(/sync operation Failed/);
    // `pullfleet status`, run as users run it, shows the halt wave by wave and exits 1 (problems).
    const shown = pullfleetStatus(kubeconfigPath, e.argoNamespace);
    expect(shown.err).toBe('');
    expect(shown.code).toBe(1);
    const rolloutLines = shown.out.split('\n').filter((line) => /^\s*(Rollout of|wave \d|HALTED)/.test(line));
    expect(rolloutLines[0]).toContain(`Rollout of ${APP}: halted`);
    expect(rolloutLines.filter((line) => /^\s*wave \d/.test(line)).length).toBe(3);
    expect(rolloutLines.find((line) => line.includes('HALTED'))).toContain(e.clusters.b1);
    const whileHalted = await works(e);
    expect(Object.fromEntries(Object.entries(whileHalted).map(([k, w]) => [k, revisionOf(w)]))).toStrictEqual({
      a1: 'v2',
      b1: 'v2',
      b2: 'v1',
      c1: 'v1',
      c2: 'v1',
    });

    // WHEN the spoke is fixed (its Argo CD retries and the app turns Healthy) — the rollout stays halted
    spokes!.setBehaviour(e.clusters.b1, { skewMs: 2000 }, { retry: true });
    await waitFor(
      'the fixed spoke healthy on the hub',
      async () =>
        (await hubApps(e)).find((a) => a.metadata.name === `${APP}-${e.clusters.b1}`)?.status?.health?.status ===
        'Healthy',
      { timeoutMs: TIMEOUT_MS },
    );
    expect((await rolloutState(e)).progress?.phase).toBe('halted');

    // AND the rollout is resumed on the policy ConfigMap
    const resumed = await cluster.mergePatch<{ metadata: { resourceVersion: string } }>(
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: e.argoNamespace, name: `pullfleet-rollout-${APP}` },
      { metadata: { annotations: { [ROLLOUT_RESUME_ANNOTATION]: 'after-fix-1' } } },
    );

    // THEN it completes, the halt is gone, and the clusters behind the halt got v2 only after the resume
    await rolloutCompletes(e, 'v2');
    const resumeVersion = BigInt(resumed.metadata.resourceVersion);
    const early = spokes!.history.filter(
      (v) =>
        ['b2', 'c1', 'c2'].some((s) => e.clusters[s] === v.cluster) &&
        v.targetRevision === 'v2' &&
        BigInt(v.resourceVersion) < resumeVersion,
    );
    expect(early.map((v) => `${v.cluster}@${v.resourceVersion}`)).toStrictEqual([]);
    expect(waveViolations(e, spokes!.history, { 1: 1 })).toStrictEqual([]);
    await waitFor(
      'RolloutHalted gone from the hub Applications',
      async () =>
        (await hubApps(e)).every((a) => !(a.status?.conditions ?? []).some((c) => c.type === ROLLOUT_HALTED_CONDITION)),
      { timeoutMs: TIMEOUT_MS },
    );
  }, 240_000);

  test('a controller restarted mid-rollout continues from the state in the API without promoting anything again', async () => {
    // GIVEN the app at v1 everywhere, and b1's work agent cut off (its work will wait, in flight)
    const e = await startStatic(Duration.minutes(5));
    spokes!.setBehaviour(e.clusters.b1, { offline: true });
    await applyAsArgo(renderHub(e, 'v2', { kind: 'static', deadline: Duration.minutes(5) }));
    await waitFor('b1 promoted to v2', async () => revisionOf((await works(e)).b1) === 'v2', {
      timeoutMs: TIMEOUT_MS,
      intervalMs: 100,
    });

    // WHEN the controller is stopped, b1 catches up while it is down, and a new controller process starts
    const before = (await rolloutState(e)).state!;
    const first = hub.controllers!;
    expect(await first.stopAll()).toStrictEqual([]);
    expect(first.forbidden()).toStrictEqual([]);
    hub.controllers = hub.controllerFor(e);
    spokes!.setBehaviour(e.clusters.b1, {}, { retry: true });
    await hub.controllers.start();

    // THEN the rollout completes as the same rollout: nothing promoted before the restart was promoted again
    await rolloutCompletes(e, 'v2');
    const after = (await rolloutState(e)).state!;
    expect(after.target).toBe(before.target);
    expect(after.startedAt).toBe(before.startedAt);
    expect(after.waveCompletedAt?.canary).toBe(before.waveCompletedAt?.canary);
    for (const [name, entry] of Object.entries(before.clusters))
      expect(after.clusters[name].promotedAt).toBe(entry.promotedAt);
    const v2Writes = Object.values(e.clusters).map(
      (name) =>
        new Set(
          spokes!.history
            .filter((v) => v.cluster === name && v.app === `${APP}-${name}` && v.targetRevision === 'v2')
            .map((v) => v.generation),
        ).size,
    );
    expect(v2Writes).toStrictEqual([1, 1, 1, 1, 1]);
    expect(waveViolations(e, spokes!.history, { 1: 1 })).toStrictEqual([]);
  }, 240_000);

  const APPSET_STEPS = [['a1'], ['b1', 'b2'], ['c1']] as const;
  /** Bound for pullfleet's controller to act on one step of the other actors (it takes well under a second). */
  const CATCH_UP_TIMEOUT_MS = 60_000;

  /**
   * An ApplicationSet rollout driven one step at a time: the applicationset-controller of an Argo CD release
   * (test/support/progressive-sync-sim.ts) runs a pass only when the test says so, and only when that
   * release would have queued one; the spokes (test/support/stepped-spokes.ts) compare and sync only when the
   * test says so. Only pullfleet's controller runs on its own; before every step the test waits until it has
   * acted on everything the others did. Times come from the test's clock, one second per step.
   */
  interface AppSetRun {
    readonly e: Env;
    readonly sim: ProgressiveSyncSim;
    readonly spokes: SteppedSpokes;
    /** Spoke syncs that started while a cluster of an earlier step did not run that revision Healthy. */
    readonly outOfOrder: string[];
    /** Passes that let an Application of a step sync while an earlier step was not all Healthy. */
    readonly stepViolations: string[];
    /** Every step taken, in order. */
    readonly steps: string[];
    readonly hubHistory: ReadonlyArray<{ type: string; app: Application }>;
    /** Moves the test's clock one second on. */
    readonly tick: () => void;
  }

  /** How the spokes compare a new spec: as soon as their work carries it, or only once nothing else can move. */
  type CompareTiming = 'at-once' | 'late';

  const hubAppName = (cluster: string) => `${cluster}-${APP}`;

  async function startAppSet(options: { release?: string; skewMs?: Record<string, number> } = {}): Promise<AppSetRun> {
    const e = await given(APPSET_STEPS.flat());
    const stepOf = new Map<string, number>();
    APPSET_STEPS.forEach((step, i) => step.forEach((s) => stepOf.set(e.clusters[s], i)));
    let now = Math.ceil(Date.now() / 1000) * 1000;
    const clock = () => now;
    const outOfOrder: string[] = [];
    const stepped: SteppedSpokes = new SteppedSpokes(cluster, {
      clusters: Object.values(e.clusters),
      clock,
      skewMs: Object.fromEntries(Object.entries(options.skewMs ?? {}).map(([short, ms]) => [e.clusters[short], ms])),
      onSync: (sync) => {
        // A spoke starts a sync: every cluster of an earlier step already runs that revision, Healthy.
        for (const [other, step] of stepOf) {
          if (step >= stepOf.get(sync.cluster)!) continue;
          const state = stepped.state(other);
          if (state.syncedRevision !== sync.revision || state.health !== 'Healthy')
            outOfOrder.push(
              `${sync.cluster} (step ${stepOf.get(sync.cluster)! + 1}) synced ${sync.targetRevision} while ${other} (step ${step + 1}) ran ${state.syncedRevision === sync.revision ? 'it' : 'another revision'}, ${state.health}`,
            );
        }
      },
    });
    const hubHistory: Array<{ type: string; app: Application }> = [];
    streams.push(
      await streamObjects<Application>(
        kubeConfig,
        `/apis/argoproj.io/v1alpha1/namespaces/${e.argoNamespace}/applications`,
        {},
        (type, app) => hubHistory.push({ type, app }),
      ),
    );
    await applyAsArgo(renderHub(e, 'v1', { kind: 'appset', steps: APPSET_STEPS }));
    sim = new ProgressiveSyncSim(cluster, kubeConfig, {
      namespace: e.argoNamespace,
      name: APP,
      clusters: Object.values(e.clusters),
      clock,
      ...(options.release ? { release: options.release } : {}),
    });
    await sim.start();
    await hub.controllers!.start();
    return {
      e,
      sim,
      spokes: stepped,
      outOfOrder,
      stepViolations: [],
      steps: [],
      hubHistory,
      tick: () => {
        now += 1000;
      },
    };
  }

  /** Why pullfleet's controller has not yet acted on everything the others did (empty: it has). */
  const lagging = (run: AppSetRun): Promise<string[]> =>
    appSetLag({
      cluster,
      sim: run.sim,
      spokes: run.spokes,
      namespace: run.e.argoNamespace,
      name: APP,
      clusters: Object.values(run.e.clusters),
      hubAppName,
      runningOperationMayStay: false,
    });

  /** The clusters of `run` in step order. */
  const inStepOrder = (run: AppSetRun) => APPSET_STEPS.flat().map((short) => run.e.clusters[short]);

  /**
   * Moves the rollout on one step at a time until `done` holds: a pass of the applicationset-controller when
   * one is queued, else a spoke running an operation its work carries, else a spoke comparing a new spec (in
   * step order); with `at-once`, comparing comes first. Fails when nothing can move (the rollout would wait
   * for the generator's requeue, which no release modelled here does sooner than every 3 minutes).
   */
  async function drive(run: AppSetRun, goal: string, compare: CompareTiming, done: () => Promise<boolean>) {
    const stepOfApp = new Map<string, number>();
    APPSET_STEPS.forEach((step, i) => step.forEach((s) => stepOfApp.set(hubAppName(run.e.clusters[s]), i)));
    for (let taken = 0; taken < 200; taken++) {
      await waitFor(
        `pullfleet's controller to act on step ${run.steps.length} (${run.steps.at(-1)})`,
        async () => ((await lagging(run)).length === 0 ? true : undefined),
        { timeoutMs: CATCH_UP_TIMEOUT_MS, intervalMs: 50, describe: () => lagging(run) },
      );
      if (await done()) return;
      let comparing: string | undefined;
      let operating: string | undefined;
      for (const name of inStepOrder(run)) {
        if (!comparing && (await run.spokes.hasNewSpec(name))) comparing = name;
        if (!operating && (await run.spokes.hasNewOperation(name))) operating = name;
      }
      run.tick();
      if (compare === 'at-once' && comparing) {
        run.steps.push(`${comparing} compares`);
        await run.spokes.compare(comparing);
      } else if (run.sim.queued.length > 0) {
        run.steps.push(`pass ${run.sim.passes + 1} (${run.sim.queued.join('; ')})`);
        await run.sim.pass();
        // THEN at every pass: a step may sync only once every earlier step is all Healthy
        for (const entry of run.sim.applicationStatus) {
          if (entry.status !== 'Pending' && entry.status !== 'Progressing') continue;
          const step = stepOfApp.get(entry.application)!;
          const behind = run.sim.applicationStatus.filter(
            (other) => stepOfApp.get(other.application)! < step && other.status !== 'Healthy',
          );
          if (behind.length > 0)
            run.stepViolations.push(
              `pass ${run.sim.passes}: ${entry.application} ${entry.status} while ${behind.map((b) => `${b.application} ${b.status}`).join(', ')}`,
            );
        }
      } else if (operating) {
        run.steps.push(`${operating} runs its operation`);
        await run.spokes.runOperation(operating);
      } else if (comparing) {
        run.steps.push(`${comparing} compares`);
        await run.spokes.compare(comparing);
      } else
        throw new Error(
          `the rollout stalled before ${goal}: no pass is queued and no spoke has anything to do; steps: ${JSON.stringify(run.steps)}; applicationStatus: ${JSON.stringify(run.sim.applicationStatus)}`,
        );
    }
    throw new Error(`no ${goal} after 200 steps: ${JSON.stringify(run.steps.slice(-20))}`);
  }

  /** Every generated Application Healthy at `revision`: for the applicationset-controller, on the hub and on its spoke. */
  function rolledOut(run: AppSetRun, revision: string): () => Promise<boolean> {
    return async () => {
      const apps = await hubApps(run.e);
      return (
        apps.length === 4 &&
        apps.every(
          (a) =>
            run.sim.statusOf(a.metadata.name)?.status === 'Healthy' &&
            a.status?.sync?.status === 'Synced' &&
            a.status.health?.status === 'Healthy' &&
            a.status.sync.revision === resolveRevision(revision),
        ) &&
        Object.values(run.e.clusters).every(
          (name) => run.spokes.state(name).syncedRevision === resolveRevision(revision),
        )
      );
    };
  }

  /** v1 rolled out, then the template moved to v2 and rolled out; returns the index of the first v2 step and sync. */
  async function rollOutV1ThenV2(run: AppSetRun, compare: CompareTiming): Promise<{ step: number; sync: number }> {
    await drive(run, 'v1 everywhere', compare, rolledOut(run, 'v1'));
    const mark = { step: run.steps.length, sync: run.spokes.syncs.length };
    await applyAsArgo(renderHub(run.e, 'v2', { kind: 'appset', steps: APPSET_STEPS }));
    run.steps.push('the hub applies the template at v2');
    await drive(run, 'v2 everywhere', compare, rolledOut(run, 'v2'));
    return mark;
  }

  /** The first sync at v2 of each cluster, as positions in `spokes.syncs` (by short name). */
  function firstV2Syncs(run: AppSetRun, from: number): Record<string, number> {
    return Object.fromEntries(
      Object.entries(run.e.clusters).map(([short, name]) => [
        short,
        run.spokes.syncs.findIndex((s) => s.seq >= from && s.cluster === name && s.revision === resolveRevision('v2')),
      ]),
    );
  }

  /** `operationState.startedAt` values pullfleet wrote on hub Applications that no spoke reported. */
  function inventedStartedAt(run: AppSetRun): string[] {
    return run.hubHistory
      .map(({ app }) => ({ name: app.metadata.name, startedAt: app.status?.operationState?.startedAt }))
      .filter(
        ({ name, startedAt }) => startedAt !== undefined && !run.spokes.reportedStartedAt.get(name)?.has(startedAt),
      )
      .map(({ name, startedAt }) => `${name}: ${startedAt}`);
  }

  test('a RollingSync ApplicationSet rolls a new revision out step by step through the pull model, with pullfleet writing back only what spokes report', async () => {
    // GIVEN an ApplicationSet over 4 clusters in 3 steps (the second one at a time) on Argo CD 3.5.1's
    // applicationset-controller, one spoke's clock 3 s ahead of the hub's, spokes that compare a new spec
    // as soon as their work carries it
    const run = await startAppSet({ skewMs: { b2: 3000 } });

    // WHEN it rolls out v1, then its template moves to v2
    const before = await rollOutV1ThenV2(run, 'at-once');

    // THEN the rollout went step by step: no spoke synced before the steps ahead of it ran that revision Healthy
    expect(run.outOfOrder).toStrictEqual([]);
    expect(run.stepViolations).toStrictEqual([]);
    const first = firstV2Syncs(run, before.sync);
    expect(Object.values(first).every((i) => i >= 0)).toBe(true);
    expect(first.a1).toBeLessThan(Math.min(first.b1, first.b2));
    expect(Math.max(first.b1, first.b2)).toBeLessThan(first.c1);
    // every v2 sync was asked for by RollingSync (automated sync is disabled on generated Applications), once
    const v2Syncs = run.spokes.syncs.slice(before.sync);
    expect(v2Syncs.filter((s) => !s.byOperation)).toStrictEqual([]);
    expect(v2Syncs.map((s) => s.cluster).sort()).toStrictEqual(Object.values(run.e.clusters).sort());
    // pullfleet wrote no operationState.startedAt the spoke did not report
    expect(inventedStartedAt(run)).toStrictEqual([]);
    // the generated Applications kept pullfleet's finalizer: nobody ever changed their finalizers
    const finalizerChanges: string[] = [];
    const lastFinalizers = new Map<string, string>();
    for (const { type, app } of run.hubHistory) {
      const now = JSON.stringify(app.metadata.finalizers ?? []);
      const seen = lastFinalizers.get(app.metadata.name);
      if (type !== 'ADDED' && seen !== undefined && seen !== now)
        finalizerChanges.push(`${app.metadata.name}: ${seen} -> ${now}`);
      lastFinalizers.set(app.metadata.name, now);
    }
    expect(finalizerChanges).toStrictEqual([]);
    for (const app of await hubApps(run.e)) expect(app.metadata.finalizers).toContain(CLEANUP_FINALIZER);
  }, 240_000);

  test.each(['3.5.1', '3.3.0'])(
    'a new template revision rolls out step by step on the events pullfleet writes back, without the generator requeue, when spokes take a moment to compare (Argo CD %s)',
    async (release) => {
      // GIVEN the same ApplicationSet, on the applicationset-controller of `release`, with spokes that
      // compare a new spec only once nothing else can move: the hub sees the new spec before any spoke
      // reports the new revision
      const run = await startAppSet({ release });

      // WHEN it rolls out v1, then v2, with a pass of the applicationset-controller only when an event it
      // requeues on arrived (no generator requeue: `drive` fails if the rollout would need one)
      const before = await rollOutV1ThenV2(run, 'late');

      // THEN the new revision reached every cluster step by step
      expect(run.outOfOrder).toStrictEqual([]);
      expect(run.stepViolations).toStrictEqual([]);
      const first = firstV2Syncs(run, before.sync);
      expect(first.a1).toBeGreaterThanOrEqual(0);
      expect(first.a1).toBeLessThan(Math.min(first.b1, first.b2));
      expect(Math.max(first.b1, first.b2)).toBeLessThan(first.c1);
      // AND each spoke's report, written back by pullfleet, queued the pass that moved its app on: the first
      // pass after a spoke compared v2 made its app Waiting (the revision changed)
      const v2Steps = run.steps.slice(before.step);
      const a1Compared = v2Steps.indexOf(`${run.e.clusters.a1} compares`);
      expect(a1Compared).toBeGreaterThan(0);
      expect(v2Steps[a1Compared + 1]).toMatch(
        new RegExp(`^pass \\d+ \\(.*Application ${hubAppName(run.e.clusters.a1)} MODIFIED`),
      );
      // AND no generated Application ever carried the refresh annotation (no release up to 3.5.1 adds it)
      expect(
        run.hubHistory.filter(({ app }) => app.metadata.annotations?.['argocd.argoproj.io/refresh'] !== undefined),
      ).toStrictEqual([]);
    },
    240_000,
  );
});
