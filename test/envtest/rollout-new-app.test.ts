/**
 * Issue 27, item 2 on a real API server, with the controller as it ships (its own process, as its
 * ServiceAccount, only the RBAC its install grants): the hub's Argo CD applies a waved app's hub Applications
 * one at a time, the last wave's first, and the controller catches up after each (the test waits until the
 * rollout's progress counts every hub Application applied so far). No later wave's work may appear before
 * every earlier wave has its hub Applications and runs the payload Healthy and Synced. The test plays the OCM
 * work agent and each spoke's Argo CD (test/support/spoke-argocd.ts) and judges the whole history of every
 * ManifestWork as one watch delivered it, in the order the API server stored the versions, never by timing.
 */
import { afterEach, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import { AppSource, ClusterSet, Fleet, Hub, PullApplication, Rollout, Spoke } from '../../src/constructs/index.js';
import { ARGOCD_API_VERSION, CLEANUP_FINALIZER, WORK_API_VERSION } from '../../src/model/core/keys.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { RolloutHub, type RolloutEnv } from '../support/rollout-env.js';
import type { RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { resolveRevision, SpokeFleet, type WorkVersion } from '../support/spoke-argocd.js';
import { waitFor } from '../support/wait.js';

/** Generous bounds: each wait ends as soon as the state is reached, usually within seconds. */
const TIMEOUT_MS = 90_000;
const APP = 'web';
const ARGO_FIELD_MANAGER = 'argocd-controller';
/** The wave of each spoke by its short name's first letter: a canary, b second, c the rest. */
const WAVE_OF_RING: Record<string, number> = { a: 0, b: 1, c: 2 };

type Env = RolloutEnv;

interface Progress {
  phase?: string;
  waves?: Array<{ name: string; clusters: number; done: number; missing?: string[] }>;
  held?: { wave: string; applications: string[]; message: string };
}

describeRealServer('rollout of a waved app whose hub Applications arrive one at a time', (kubeconfigPath) => {
  const hub = new RolloutHub(kubeconfigPath, 'rn');
  const { kubeConfig, cluster, raw } = hub;
  let spokes: SpokeFleet | undefined;

  afterEach(async () => {
    const { stuck, forbidden } = await hub.stopController();
    await spokes?.stop();
    spokes = undefined;
    await hub.tearDown();
    expect(stuck).toStrictEqual([]);
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  async function given(shortNames: readonly string[]): Promise<Env> {
    const made = await hub.given(shortNames);
    spokes = new SpokeFleet(cluster, kubeConfig, { clusters: Object.values(made.clusters) });
    await spokes.start();
    await hub.controllers!.start();
    return made;
  }

  /**
   * The hub objects synth renders for the app at `revision` on the spokes `shorts` (of `e`): cluster set and
   * binding, the policy ConfigMap, then the hub Applications, last wave first (the order under test).
   */
  function renderHub(e: Env, revision: string, shorts: readonly string[]): RawObject[] {
    const fleet = new Fleet({});
    const hub = new Hub(fleet, 'hub', { argoNamespace: e.argoNamespace });
    const set = new ClusterSet(hub, e.clusterSet);
    new PullApplication(hub, APP, {
      source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: APP, targetRevision: revision }),
      destinationNamespace: APP,
      spokes: shorts.map((short) => new Spoke(hub, e.clusters[short], { clusterSet: set, labels: { ring: short[0] } })),
      rollout: Rollout.waves(
        [
          { name: 'canary', labels: { ring: 'a' }, soak: Duration.seconds(2) },
          { name: 'second', labels: { ring: 'b' } },
          { name: 'rest', rest: true },
        ],
        { progressDeadline: Duration.minutes(5) },
      ),
    });
    const objects = [...fleet.renderObjects().entries()]
      .filter(([file]) => file === 'hub/hub/applications.yaml' || file === 'hub/hub/cluster-sets.yaml')
      .flatMap(([, list]) => list as RawObject[])
      .filter((o) => ['Application', 'ConfigMap', 'ManagedClusterSet', 'ManagedClusterSetBinding'].includes(o.kind));
    const waveOfApp = (o: RawObject) => {
      const short = Object.entries(e.clusters).find(([, name]) => o.metadata.name === `${APP}-${name}`)?.[0];
      return short ? WAVE_OF_RING[short[0]] : 0;
    };
    const rank = (o: RawObject) => (o.kind === 'Application' ? 10 - waveOfApp(o) : 0);
    return objects.sort((a, b) => rank(a) - rank(b) || (a.metadata.name < b.metadata.name ? 1 : -1));
  }

  async function progress(e: Env): Promise<Progress> {
    const map = await cluster.get<{ data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: e.argoNamespace,
      name: `pullfleet-rollout-${APP}-state`,
    });
    return map?.data?.['progress.json'] ? (JSON.parse(map.data['progress.json']) as Progress) : {};
  }

  /**
   * The hub's Argo CD applies `objects` one at a time; after each hub Application the controller is caught up:
   * the rollout's progress counts every hub Application applied so far, and the Application reconciler has
   * seen each of them.
   */
  async function applyOneByOne(e: Env, objects: readonly RawObject[], revision: string): Promise<void> {
    const applied: RawObject[] = [];
    for (const object of objects) {
      await raw.apply(object, ARGO_FIELD_MANAGER);
      if (object.kind !== 'Application') continue;
      applied.push(object);
      const names = new Set(applied.map((o) => o.metadata.name));
      await waitFor(
        `the controller caught up with hub Application ${object.metadata.name}`,
        async () => {
          const counted = ((await progress(e)).waves ?? []).reduce((sum, w) => sum + w.clusters, 0);
          const apps = await cluster.list<Application>(ARGOCD_API_VERSION, 'Application', {
            namespace: e.argoNamespace,
          });
          const carried = await works(e);
          const shortOf = (name: string) =>
            Object.entries(e.clusters).find(([, cluster]) => name === `${APP}-${cluster}`)?.[0] ?? '';
          // Seen by the Application reconciler: it carries the cleanup finalizer, and its status no longer says
          // Synced at the old spec (the spoke does not run the new one) unless its work already carries it.
          const reconciled = apps.filter(
            (a) =>
              names.has(a.metadata.name) &&
              (a.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER) &&
              (a.status?.sync?.status !== 'Synced' || carried[shortOf(a.metadata.name)] === revision),
          );
          return counted >= names.size && reconciled.length === names.size;
        },
        { timeoutMs: TIMEOUT_MS, intervalMs: 100, describe: async () => ({ revision, progress: await progress(e) }) },
      );
    }
  }

  async function works(e: Env): Promise<Record<string, string | undefined>> {
    const out: Record<string, string | undefined> = {};
    for (const [short, ns] of Object.entries(e.clusters)) {
      const list = await cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: ns });
      const payload = list
        .flatMap(
          (w) => w.spec.workload.manifests as Array<{ kind?: string; spec?: { source?: { targetRevision?: string } } }>,
        )
        .find((m) => m.kind === 'Application');
      out[short] = payload?.spec?.source?.targetRevision;
    }
    return out;
  }

  async function rolloutCompletes(e: Env, revision: string, shorts: readonly string[]): Promise<void> {
    await waitFor(
      `the rollout of ${revision} to complete`,
      async () => {
        const carried = await works(e);
        const running = shorts.every(
          (short) =>
            carried[short] === revision &&
            spokes!.applicationState(e.clusters[short], `${APP}-${e.clusters[short]}`)?.syncedRevision ===
              resolveRevision(revision),
        );
        return running && (await progress(e)).phase === 'complete';
      },
      {
        timeoutMs: TIMEOUT_MS,
        intervalMs: 200,
        describe: async () => ({ works: await works(e), progress: await progress(e), spokes: spokes?.problems() }),
      },
    );
  }

  /**
   * Over the whole history of `e`'s works: whenever a cluster's work starts carrying a payload, every cluster of
   * an earlier wave among `shorts` carries that payload and reported it Healthy and Synced; no work was deleted.
   * Versions before `from` (an index into `history`) only set the scene: the app had other spokes then.
   */
  function violations(e: Env, shorts: readonly string[], history: readonly WorkVersion[], from = 0): string[] {
    const waveOf = new Map(shorts.map((s) => [e.clusters[s], WAVE_OF_RING[s[0]]] as const));
    const short = new Map(Object.entries(e.clusters).map(([s, n]) => [n, s]));
    const latest = new Map<string, WorkVersion>();
    const found: string[] = [];
    for (const [index, version] of history.entries()) {
      if (version.app !== `${APP}-${version.cluster}`) continue;
      if (index < from) {
        if (version.type !== 'DELETED') latest.set(version.cluster, version);
        continue;
      }
      if (version.type === 'DELETED') {
        found.push(`#${version.seq}: the work of ${short.get(version.cluster)} was deleted`);
        latest.delete(version.cluster);
        continue;
      }
      const before = latest.get(version.cluster);
      latest.set(version.cluster, version);
      if (before?.specHash === version.specHash) continue;
      const wave = waveOf.get(version.cluster) ?? 2;
      for (const [other, otherWave] of waveOf) {
        if (otherWave >= wave) continue;
        const o = latest.get(other);
        const healthy =
          o !== undefined &&
          o.specHash === version.specHash &&
          o.feedback.specHash === version.specHash &&
          o.feedback.health === 'Healthy' &&
          o.feedback.sync === 'Synced';
        if (!healthy)
          found.push(
            `#${version.seq}: ${short.get(version.cluster)} (wave ${wave + 1}) got ${version.targetRevision} while ${short.get(other)} (wave ${otherWave + 1}) ${o === undefined ? 'had no work' : o.specHash === version.specHash ? 'did not report it healthy yet' : `carried ${o.targetRevision}`}`,
          );
      }
    }
    return found;
  }

  test('a brand-new waved app whose hub Applications arrive last wave first writes no work before the canary exists, then goes wave by wave', async () => {
    // GIVEN a hub with the shipped controller and 5 spokes in 3 waves
    const shorts = ['a1', 'b1', 'b2', 'c1', 'c2'];
    const e = await given(shorts);

    // WHEN the hub's Argo CD creates the app: the policy, then c2, c1, b2, b1 (the controller caught up after each)
    const objects = renderHub(e, 'v1', shorts);
    const canary = objects.find((o) => o.metadata.name === `${APP}-${e.clusters.a1}`)!;
    await applyOneByOne(
      e,
      objects.filter((o) => o !== canary),
      'v1',
    );

    // THEN no work exists, and the rollout's progress names the missing canary hub Application and its wave
    expect(await works(e)).toStrictEqual({ a1: undefined, b1: undefined, b2: undefined, c1: undefined, c2: undefined });
    const held = (await progress(e)).held;
    expect(held?.wave).toBe('canary');
    expect(held?.applications).toStrictEqual([`${e.argoNamespace}/${APP}-${e.clusters.a1}`]);
    expect(held?.message).toContain(`hub Application ${e.argoNamespace}/${APP}-${e.clusters.a1}`);

    // WHEN the canary's hub Application arrives THEN the rollout completes, wave by wave, nothing deleted
    await applyOneByOne(e, [canary], 'v1');
    await rolloutCompletes(e, 'v1', shorts);
    expect((await progress(e)).held).toBeUndefined();
    expect(violations(e, shorts, spokes!.history)).toStrictEqual([]);
  }, 240_000);

  test('a new revision that adds a canary spoke, its hub Application applied last, holds the later waves until that spoke runs it', async () => {
    // GIVEN the app rolled out at v1 on 4 spokes, a fifth (a2) not yet in it
    const all = ['a1', 'a2', 'b1', 'c1'];
    const before = ['a1', 'b1', 'c1'];
    const e = await given(all);
    for (const object of renderHub(e, 'v1', before)) await raw.apply(object, ARGO_FIELD_MANAGER);
    await rolloutCompletes(e, 'v1', before);
    const v2From = spokes!.history.length;

    // WHEN v2 adds a2 to the canary wave: the policy and every other hub Application first, caught up after each
    const objects = renderHub(e, 'v2', all);
    const joiner = objects.find((o) => o.metadata.name === `${APP}-${e.clusters.a2}`)!;
    await applyOneByOne(
      e,
      objects.filter((o) => o !== joiner),
      'v2',
    );
    // THEN a1 runs v2 (done, its soak over), and the rollout says it waits for a2's hub Application; the wait
    // also ends if a later wave moves, so that the check below names the breach
    await waitFor(
      'a1 done at v2 and the rollout holding for a2 (or a later wave moving)',
      async () => {
        const p = await progress(e);
        const carried = await works(e);
        if (carried.b1 !== 'v1' || carried.c1 !== 'v1') return true;
        return (
          spokes!.applicationState(e.clusters.a1, `${APP}-${e.clusters.a1}`)?.syncedRevision ===
            resolveRevision('v2') &&
          p.waves?.[0]?.done === 1 &&
          p.held?.applications.join() === `${e.argoNamespace}/${APP}-${e.clusters.a2}`
        );
      },
      {
        timeoutMs: TIMEOUT_MS,
        intervalMs: 200,
        describe: async () => ({ works: await works(e), progress: await progress(e) }),
      },
    );
    expect(await works(e)).toMatchObject({ a1: 'v2', a2: undefined, b1: 'v1', c1: 'v1' });
    expect((await progress(e)).waves?.[0]).toMatchObject({
      clusters: 1,
      done: 1,
      missing: [`${e.argoNamespace}/${APP}-${e.clusters.a2}`],
    });

    // WHEN a2's hub Application arrives THEN the rollout completes in wave order, nothing deleted
    await applyOneByOne(e, [joiner], 'v2');
    await rolloutCompletes(e, 'v2', all);
    expect(violations(e, all, spokes!.history, v2From)).toStrictEqual([]);
  }, 240_000);
});
