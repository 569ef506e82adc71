/**
 * `pullfleet plan` against what really happens to a waved static app (a PullApplication with a Rollout):
 * synth renders only its hub Applications and the rollout policy, and the hub controller writes (and
 * deletes) each spoke's ManifestWork. A fleet is rendered before and after an edit with pullfleet's
 * constructs, the "before" output is applied as the hub's Argo CD would and rolled out by the controller as
 * it ships (its own process, its ServiceAccount, only the RBAC its install grants), then the "after" output
 * is applied with Argo CD's prune. Every ManifestWork deletion is recorded from one watch, and must be
 * exactly the deletions the plan of the same two outputs lists.
 *
 * The test plays the OCM work agent and each spoke's Argo CD (test/support/spoke-argocd.ts).
 */
import { afterEach, expect, test } from '@jest/globals';
import { AppSource, ClusterSet, Fleet, Hub, PullApplication, Rollout, Spoke } from '../../src/constructs/index.js';
import { planStateFiles } from '../../src/constructs/_plan-state.js';
import { ARGOCD_API_VERSION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import type { ManifestWork } from '../../src/model/core/types.js';
import { deletionIds, planFleet, type FleetPlan } from '../../src/model/plan/plan.js';
import type { PlanSide } from '../../src/model/plan/controller-deletions.js';
import { parsePlanState } from '../../src/model/plan/state.js';
import { ROLLOUT_PROGRESS_KEY } from '../../src/model/rollout/policy.js';
import { RolloutHub, type RolloutEnv } from '../support/rollout-env.js';
import { streamObjects, type ObjectStream } from '../support/object-watch.js';
import type { RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { SpokeFleet } from '../support/spoke-argocd.js';
import { waitFor } from '../support/wait.js';

const TIMEOUT_MS = 90_000;
const ARGO_FIELD_MANAGER = 'argocd-controller';
const SPOKES = ['s1', 's2', 's3'] as const;

type Env = RolloutEnv;

/** The fleet of a test: spokes s1..s3 (s1 the canary), the waved app `app` on `targets`. */
interface Edit {
  readonly app: string;
  readonly targets: readonly string[];
  readonly pruneOnDelete?: boolean;
}

describeRealServer('plan of a waved static app, against the shipped controller', (kubeconfigPath) => {
  const hub = new RolloutHub(kubeconfigPath, 'pw');
  const { kubeConfig, cluster, raw } = hub;
  let spokes: SpokeFleet | undefined;
  const streams: ObjectStream[] = [];

  afterEach(async () => {
    const { stuck, forbidden } = await hub.stopController();
    const problems: unknown[] = [];
    await spokes?.stop().catch((e: unknown) => problems.push(e));
    spokes = undefined;
    for (const stream of streams.splice(0)) stream.stop();
    await hub.tearDown();
    expect(stuck).toStrictEqual([]);
    // Every request the controller made was allowed by the RBAC its install ships.
    expect(forbidden).toStrictEqual([]);
    expect(problems.map(String)).toStrictEqual([]);
  }, 120_000);

  const given = (): Promise<Env> => hub.given(SPOKES);

  /** The whole output of the fleet (every file, and the plan state), as `pullfleet plan` reads a folder. */
  function render(e: Env, edit: Edit): PlanSide {
    const fleet = new Fleet({});
    const hub = new Hub(fleet, 'hub', { argoNamespace: e.argoNamespace, controller: { enabled: false } });
    const set = new ClusterSet(hub, e.clusterSet);
    const all = SPOKES.map(
      (short) =>
        new Spoke(hub, e.clusters[short], { clusterSet: set, labels: { ring: short === 's1' ? 'canary' : 'main' } }),
    );
    new PullApplication(hub, edit.app, {
      source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: 'v1' }),
      destinationNamespace: 'web',
      spokes: all.filter((spoke) => edit.targets.some((short) => e.clusters[short] === spoke.name)),
      ...(edit.pruneOnDelete ? { pruneOnDelete: true } : {}),
      rollout: Rollout.waves([
        { name: 'canary', labels: { ring: 'canary' } },
        { name: 'rest', rest: true },
      ]),
    });
    const objects = [...fleet.renderObjects()].flatMap(([file, list]) => list.map((object) => ({ file, object })));
    const states = new Map(
      [...planStateFiles(fleet.hubs)].map(([file, text]) => [file.split('/')[0], parsePlanState(text, file)]),
    );
    return { objects, states };
  }

  /** What the hub's Argo CD applies: everything under `<hub>/hub/`. */
  const hubObjects = (side: PlanSide): RawObject[] =>
    side.objects.filter((o) => o.file.split('/')[1] === 'hub').map((o) => o.object as RawObject);
  const refOf = (o: RawObject) => `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

  /** A commit as the hub's Argo CD syncs it with prune: every object applied, then what left git deleted. */
  async function syncAsArgo(objects: readonly RawObject[], previous: readonly RawObject[] = []): Promise<void> {
    for (const object of objects) await raw.apply(object, ARGO_FIELD_MANAGER);
    const kept = new Set(objects.map(refOf));
    for (const object of previous) {
      if (kept.has(refOf(object))) continue;
      await cluster.delete({
        apiVersion: object.apiVersion,
        kind: object.kind,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
        name: object.metadata.name,
      });
    }
  }

  async function rolloutPhase(e: Env, app: string): Promise<string | undefined> {
    const map = await cluster.get<{ data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: e.argoNamespace,
      name: `pullfleet-rollout-${app}-state`,
    });
    const progress = map?.data?.[ROLLOUT_PROGRESS_KEY];
    return progress ? (JSON.parse(progress) as { phase?: string }).phase : undefined;
  }

  /** Works carrying an Application payload, by `<namespace>/<name>`. */
  async function appWorks(e: Env): Promise<string[]> {
    const out: string[] = [];
    for (const ns of Object.values(e.clusters))
      for (const work of await cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: ns }))
        if ((work.spec.workload.manifests as Array<{ kind?: string }>).some((m) => m.kind === 'Application'))
          out.push(`${ns}/${work.metadata.name}`);
    return out.sort();
  }

  /** Waits until the app's rollout is complete with a work on each of `targets`. */
  async function rolledOut(e: Env, app: string, targets: readonly string[]): Promise<void> {
    const want = targets.map((short) => `${e.clusters[short]}/${e.argoNamespace}-${app}-${e.clusters[short]}`);
    await waitFor(
      `the rollout of ${app} to complete on ${targets.join(', ')}`,
      async () => {
        const works = await appWorks(e);
        return want.every((w) => works.includes(w)) && (await rolloutPhase(e, app)) === 'complete';
      },
      {
        timeoutMs: TIMEOUT_MS,
        intervalMs: 200,
        describe: async () => ({ works: await appWorks(e), phase: await rolloutPhase(e, app), want }),
      },
    );
  }

  /**
   * Records every ManifestWork deleted in the cluster namespaces from now on (`<namespace>/<name>`).
   * `settle()` returns those deleted up to now: it writes a marker work and waits until the watch delivered
   * it, so every deletion the server stored before is in (one watch delivers events in server order).
   */
  async function recordDeletions(e: Env): Promise<{ settle(): Promise<string[]> }> {
    const deleted: string[] = [];
    const namespaces = new Set(Object.values(e.clusters));
    const marker = { namespace: e.clusters.s1, name: `${e.id}-watch-marker` };
    let markerSeen = false;
    streams.push(
      await streamObjects<ManifestWork>(
        kubeConfig,
        '/apis/work.open-cluster-management.io/v1/manifestworks',
        {},
        (type, work) => {
          const { namespace = '', name } = work.metadata;
          if (namespace === marker.namespace && name === marker.name) markerSeen = true;
          else if (type === 'DELETED' && !markerSeen && namespaces.has(namespace)) deleted.push(`${namespace}/${name}`);
        },
      ),
    );
    return {
      async settle() {
        await cluster.create({
          apiVersion: WORK_API_VERSION,
          kind: 'ManifestWork',
          metadata: marker,
          spec: {
            workload: {
              manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'marker', namespace: 'default' } }],
            },
          },
        });
        await waitFor('the watch to deliver the marker work', () => markerSeen, { timeoutMs: TIMEOUT_MS });
        return [...deleted].sort();
      },
    };
  }

  /** The works a plan says go (`<hub>/<cluster>/<work>` ids), as `<namespace>/<name>`. */
  function plannedWorkDeletions(plan: FleetPlan): string[] {
    return deletionIds(plan).map((id) => id.split('/').slice(1).join('/'));
  }

  /** Waits until no hub Application of `names` is left (the controller released its finalizer). */
  async function hubAppsGone(e: Env, names: readonly string[]): Promise<void> {
    await waitFor(
      `hub Applications ${names.join(', ')} to be gone`,
      async () => {
        for (const name of names)
          if (
            await cluster.get({ apiVersion: ARGOCD_API_VERSION, kind: 'Application', namespace: e.argoNamespace, name })
          )
            return false;
        return true;
      },
      { timeoutMs: TIMEOUT_MS, intervalMs: 200 },
    );
  }

  async function deliveredBefore(e: Env, before: PlanSide): Promise<void> {
    await syncAsArgo(hubObjects(before));
    spokes = new SpokeFleet(cluster, kubeConfig, { clusters: Object.values(e.clusters) });
    await spokes.start();
    await hub.controllers!.start();
    await rolledOut(e, 'web', SPOKES);
  }

  test('dropping one spoke from a waved app: the works the controller deletes are the deletions plan lists', async () => {
    // GIVEN a waved app web on s1..s3, rolled out by the shipped controller
    const e = await given();
    const before = render(e, { app: 'web', targets: SPOKES, pruneOnDelete: true });
    await deliveredBefore(e, before);
    const recorder = await recordDeletions(e);

    // WHEN the fleet drops s3 from the app, plan compares the outputs, and the hub's Argo CD syncs the commit
    const after = render(e, { app: 'web', targets: ['s1', 's2'], pruneOnDelete: true });
    const plan = planFleet(before, after);
    await syncAsArgo(hubObjects(after), hubObjects(before));
    await hubAppsGone(e, [`web-${e.clusters.s3}`]);
    await rolledOut(e, 'web', ['s1', 's2']);

    // THEN the works deleted on the server are exactly the deletions plan listed
    const deleted = await recorder.settle();
    expect(deleted).toStrictEqual(plannedWorkDeletions(plan));
    expect(deleted).toStrictEqual([`${e.clusters.s3}/${e.argoNamespace}-web-${e.clusters.s3}`]);
  }, 240_000);

  test('renaming a waved app: the works the controller deletes are the deletions plan lists', async () => {
    // GIVEN a waved app web on s1..s3, rolled out by the shipped controller
    const e = await given();
    const before = render(e, { app: 'web', targets: SPOKES });
    await deliveredBefore(e, before);
    const recorder = await recordDeletions(e);

    // WHEN the app is renamed shop, plan compares the outputs, and the hub's Argo CD syncs the commit
    const after = render(e, { app: 'shop', targets: SPOKES });
    const plan = planFleet(before, after);
    await syncAsArgo(hubObjects(after), hubObjects(before));
    await hubAppsGone(
      e,
      SPOKES.map((short) => `web-${e.clusters[short]}`),
    );
    await rolledOut(e, 'shop', SPOKES);

    // THEN every work of the old app was deleted, and plan listed exactly those deletions
    const deleted = await recorder.settle();
    expect(deleted).toStrictEqual(plannedWorkDeletions(plan));
    expect(deleted).toStrictEqual(
      SPOKES.map((short) => `${e.clusters[short]}/${e.argoNamespace}-web-${e.clusters[short]}`).sort(),
    );
  }, 240_000);
});
