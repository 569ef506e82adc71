/**
 * Moves between delivery models other than basic → agent-managed (which managed-handover.test.ts runs),
 * end to end on a real API server: the committed output of each step is applied the way the hub Argo CD
 * applies dist/, and the test plays the work agent, the spoke Argo CD (its cascade on the resources
 * finalizer, and an autonomous spoke's `pullfleet-spoke-apps` folder sync), the applicationset-controller,
 * the pullfleet controller and the argocd-agent principal and agents as their source code behaves
 * (test/support/pull-delivery-sim.ts).
 *
 * Every fleet has spokes that do not move, with their own static app, ApplicationSets on placements that
 * do not move, and a basic ApplicationSet (`monitoring`) on a placement that selects the moving spoke too.
 * Each test asserts that no spoke Application is ever deleted with its resources finalizer (the spoke Argo
 * CD's cascade), that neither what synth renders for the other spokes nor anything on them changes (not
 * one write: resource versions are compared), and that at the end every moved app is owned by the model
 * moved to: a Foreground, server-side-applied work the work agent applied (basic), or the spoke's own
 * folder with the autonomous agent mirroring it to the hub (agent-autonomous).
 */
import { afterAll, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';
import { ARGOCD_API_VERSION, MANAGED_CLUSTER_ANNOTATION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { realCluster } from '../support/cluster.js';
import { gitOpsClusterOf } from '../support/gitops-cluster.js';
import {
  PullDeliverySim,
  SOURCE_UID,
  SPOKE_FOLDER_MANAGER,
  WORK_AGENT_MANAGER,
  type Commit,
  type Obj,
} from '../support/pull-delivery-sim.js';
import { describeRealServer } from '../support/real-server.js';

const repo = 'https://git.example.com/apps.git';
const RESOURCES_FINALIZER = 'resources-finalizer.argocd.argoproj.io';

/** The spokes of one test: `m1` moves, the others stay. */
interface Names {
  readonly hubNs: string;
  readonly m1: string;
  readonly e2: string;
  readonly p1: string;
}

describeRealServer('moves between delivery models', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const base = `pfm${Date.now().toString(36).slice(-6)}`;
  const sims: PullDeliverySim[] = [];

  afterAll(async () => {
    for (const sim of sims) await sim.cleanup();
  });

  function names(tag: string): Names {
    const id = `${base}${tag}`;
    return { hubNs: `${id}-gitops`, m1: `${id}-m1`, e2: `${id}-e2`, p1: `${id}-p1` };
  }

  /** A simulator over the spokes of `n`, with the placement decisions of the fleets below. */
  async function simFor(n: Names): Promise<PullDeliverySim> {
    const sim = new PullDeliverySim(realCluster(kubeConfig), n.hubNs, [n.m1, n.e2, n.p1]);
    sims.push(sim);
    const decided: Record<string, string[]> = {
      edge: [n.m1],
      core: [n.e2],
      plain: [n.p1],
      everyone: [n.m1, n.e2, n.p1],
    };
    sim.decisions = (placement) => decided[placement] ?? [];
    await sim.createNamespaces();
    return sim;
  }

  /**
   * m1 (tier=edge), e2 (tier=core), p1 (tier=plain), all fleet=yes. Static app `web` on all three;
   * ApplicationSets `edge-web` (placement edge: m1), `core-web` (core: e2), `plain-web` (plain: p1) and
   * the basic `monitoring` (everyone). `edge` and `core` are given the GitOpsCluster of `models`.
   */
  function fleetAt(
    n: Names,
    previous: string | undefined,
    models: { edge?: DeliveryModel; core?: DeliveryModel },
    move?: DeliveryModel,
    flavor = HubFlavor.ACM,
  ): Fleet {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: previous });
    const hub = new Hub(fleet, 'hub', { flavor, argoNamespace: n.hubNs });
    const set = new ClusterSet(hub, 'all');
    const m1 = new Spoke(hub, n.m1, { clusterSet: set, labels: { fleet: 'yes', tier: 'edge' } });
    const e2 = new Spoke(hub, n.e2, { clusterSet: set, labels: { fleet: 'yes', tier: 'core' } });
    const p1 = new Spoke(hub, n.p1, { clusterSet: set, labels: { fleet: 'yes', tier: 'plain' } });
    const placement = (name: string, labels: Record<string, string>) =>
      new Placement(hub, name, { predicates: [{ labels }] });
    const edge = placement('edge', { tier: 'edge' });
    const core = placement('core', { tier: 'core' });
    const plain = placement('plain', { tier: 'plain' });
    const everyone = placement('everyone', { fleet: 'yes' });
    const gitops = (name: string, on: Placement, model: DeliveryModel | undefined) => {
      if (model) gitOpsClusterOf(hub, name, on, model);
    };
    gitops('edge-agents', edge, models.edge);
    gitops('core-agents', core, models.core);
    const app = (path: string) => AppSource.git({ repoURL: repo, path });
    new PullApplication(hub, 'web', {
      source: app('web'),
      destinationNamespace: 'web',
      spokes: [m1, e2, p1],
      pruneOnDelete: true,
    });
    new PullApplicationSet(hub, 'edge-web', {
      source: app('edge'),
      destinationNamespace: 'edge-web',
      placement: edge,
      pruneOnDelete: true,
    });
    new PullApplicationSet(hub, 'core-web', {
      source: app('core'),
      destinationNamespace: 'core-web',
      placement: core,
      pruneOnDelete: true,
    });
    new PullApplicationSet(hub, 'plain-web', {
      source: app('plain'),
      destinationNamespace: 'plain-web',
      placement: plain,
      pruneOnDelete: true,
    });
    new PullApplicationSet(hub, 'monitoring', {
      source: app('monitoring'),
      destinationNamespace: 'monitoring',
      placement: everyone,
      pruneOnDelete: true,
    });
    if (move) m1.moveTo(move);
    return fleet;
  }

  /** What synth gives the spokes that stay: their works and bootstrap files, hub apps aimed at them, their ApplicationSets. */
  function renderedForOthers(commit: Commit, n: Names): Record<string, unknown> {
    const others = [n.e2, n.p1];
    const out: Record<string, unknown> = {};
    for (const s of others) {
      out[`works/${s}`] = commit.files.get(`hub/hub/works/${s}.yaml`);
      out[`bootstrap/${s}`] = commit.files.get(`hub/bootstrap/${s}.yaml`);
    }
    for (const o of commit.objects) {
      const target = o.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION] ?? o.spec?.destination?.name;
      if (o.kind !== 'ApplicationSet' && others.includes(target)) out[`${o.kind} ${o.metadata.name}`] = o;
      if (o.kind === 'ApplicationSet' && o.metadata.name !== 'edge-web') out[`ApplicationSet ${o.metadata.name}`] = o;
    }
    return out;
  }

  /**
   * The resource version of everything on the spokes that stay (their Applications and works), and of
   * the moving spoke's `monitoring` app and work, which do not move: a single write changes it.
   */
  async function runtimeForOthers(sim: PullDeliverySim, n: Names): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const s of [n.e2, n.p1]) {
      for (const a of await sim.cluster.list<Application>(ARGOCD_API_VERSION, 'Application', {
        namespace: sim.appNs(s),
      }))
        out[`Application ${s}/${a.metadata.name}`] = a.metadata.resourceVersion!;
      for (const w of await sim.cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: s }))
        out[`ManifestWork ${s}/${w.metadata.name}`] = w.metadata.resourceVersion!;
    }
    const monitoring = `${n.m1}-monitoring`;
    out[`Application ${n.m1}/${monitoring}`] = (await sim.readSpokeApp(n.m1, monitoring))!.metadata.resourceVersion!;
    const work = await sim.cluster.get<ManifestWork>({
      apiVersion: WORK_API_VERSION,
      kind: 'ManifestWork',
      namespace: n.m1,
      name: manifestWorkName(n.hubNs, monitoring),
    });
    out[`ManifestWork ${n.m1}/${work!.metadata.name}`] = work!.metadata.resourceVersion!;
    return out;
  }

  /** Every expected Application runs on every spoke (the apps of m1 that move are `moved`). */
  function everyApp(n: Names): string[] {
    return [
      `${n.m1}/web-${n.m1}`,
      `${n.m1}/${n.m1}-edge-web`,
      `${n.m1}/${n.m1}-monitoring`,
      `${n.e2}/web-${n.e2}`,
      `${n.e2}/${n.e2}-core-web`,
      `${n.e2}/${n.e2}-monitoring`,
      `${n.p1}/web-${n.p1}`,
      `${n.p1}/${n.p1}-plain-web`,
      `${n.p1}/${n.p1}-monitoring`,
    ];
  }

  const workFor = async (sim: PullDeliverySim, spoke: string, name: string) =>
    (await sim.works(spoke)).filter(
      (w) =>
        !w.metadata.deletionTimestamp &&
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- wrong here: without it a manifest is any JSON value, with no fields
        w.spec.workload.manifests.some((m) => (m as Obj).kind === 'Application' && (m as Obj).metadata.name === name),
    );
  const managedFields = (app: Application | undefined) => (app?.metadata.managedFields ?? []) as Obj[];
  const strategyOf = (work: ManifestWork, name: string) =>
    (work.spec as Obj).manifestConfigs?.find((c: Obj) => c.resourceIdentifier?.name === name)?.updateStrategy?.type as
      string | undefined;
  const appliedAtGeneration = (work: ManifestWork) =>
    work.status?.conditions?.find((c) => c.type === 'Applied')?.observedGeneration === work.metadata.generation;

  /** Owned by basic delivery: one live Foreground work applies it server-side, the work agent wrote its spec, and no agent is routed to it. */
  async function expectOwnedByWork(sim: PullDeliverySim, spoke: string, name: string): Promise<void> {
    const app = await sim.readSpokeApp(spoke, name);
    expect(app?.metadata.deletionTimestamp).toBeUndefined();
    const works = await workFor(sim, spoke, name);
    expect(
      works.map((w) => [
        w.metadata.name,
        (w.spec as Obj).deleteOption?.propagationPolicy,
        strategyOf(w, name),
        appliedAtGeneration(w),
      ]),
    ).toEqual([[manifestWorkName(sim.hubNs, name), 'Foreground', 'ServerSideApply', true]]);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- wrong here: without it a manifest is any JSON value, with no fields
    const manifest = works[0].spec.workload.manifests.find((m) => (m as Obj).metadata.name === name) as Obj;
    expect(app?.spec.source).toEqual(manifest.spec.source);
    expect(app?.spec.destination).toEqual(manifest.spec.destination);
    expect(app?.metadata.finalizers).toEqual([RESOURCES_FINALIZER]);
    const fields = managedFields(app).find((f) => f.manager === WORK_AGENT_MANAGER && f.operation === 'Apply');
    expect(JSON.stringify(fields?.fieldsV1)).toContain('"f:source"');
    const hub = await sim.readHubApp(name);
    expect(hub?.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION]).toBe(spoke);
    expect(hub?.spec.destination?.name).not.toBe(spoke); // the principal routes it nowhere
  }

  /** Owned by the autonomous agent: the spoke's folder lists it and its sync wrote it, no work delivers it, no hub app routes it, the agent mirrors it. */
  async function expectOwnedByAutonomousAgent(
    sim: PullDeliverySim,
    commit: Commit,
    spoke: string,
    name: string,
  ): Promise<void> {
    const app = await sim.readSpokeApp(spoke, name);
    expect(app?.metadata.deletionTimestamp).toBeUndefined();
    const listed = commit.folders.get(spoke)?.find((o) => o.metadata.name === name);
    expect(listed).toBeDefined();
    expect(app?.spec.source).toEqual(listed?.spec.source);
    expect(managedFields(app).some((f) => f.manager === SPOKE_FOLDER_MANAGER && f.operation === 'Apply')).toBe(true);
    expect(await workFor(sim, spoke, name)).toEqual([]);
    expect(await sim.readHubApp(name)).toBeUndefined();
    const mirror = await sim.readHubApp(name, spoke);
    expect(mirror?.metadata.annotations?.[SOURCE_UID]).toBe(app?.metadata.uid);
  }

  /** The moving spoke's works for the moved apps stand by: CreateOnly and Orphan, applied at their generation. */
  async function expectStandingBy(sim: PullDeliverySim, spoke: string, moved: readonly string[]): Promise<void> {
    for (const name of moved) {
      const works = await workFor(sim, spoke, name);
      expect(
        works.map((w) => [
          (w.spec as Obj).deleteOption?.propagationPolicy,
          strategyOf(w, name),
          appliedAtGeneration(w),
        ]),
      ).toEqual([['Orphan', 'CreateOnly', true]]);
    }
  }

  test('GIVEN a spoke with a static app and an ApplicationSet app on agent-managed WHEN it moves back to basic step by step (the agent leaving after step 1) THEN nothing is deleted with its workload, nothing of the other spokes changes and its works own both apps at the end', async () => {
    const n = names('a');
    const sim = await simFor(n);
    const moved = [`web-${n.m1}`, `${n.m1}-edge-web`];
    const managed = { edge: DeliveryModel.AGENT_MANAGED, core: DeliveryModel.AGENT_MANAGED };
    const back = { core: DeliveryModel.AGENT_MANAGED };

    sim.agents.set(n.m1, 'managed');
    sim.agents.set(n.e2, 'managed');
    const start = sim.commit(fleetAt(n, undefined, managed));
    await sim.step(start);
    for (const name of moved)
      expect((await sim.readSpokeApp(n.m1, name))?.metadata.annotations?.[SOURCE_UID]).toBe(
        (await sim.readHubApp(name))?.metadata.uid,
      );
    expect([...sim.workload].sort()).toEqual(everyApp(n).sort());
    const rendered = renderedForOthers(start, n);
    const runtime = await runtimeForOthers(sim, n);
    const eventsAtStart = sim.events.length;

    // step 1: the hub apps stay routed to the agent (it gets a SpecUpdate), the works stand by
    const step1 = sim.commit(fleetAt(n, start.dir, back, DeliveryModel.BASIC));
    await sim.step(step1);
    for (const name of moved) expect((await sim.readHubApp(name))?.spec.destination?.name).toBe(n.m1);
    await expectStandingBy(sim, n.m1, moved);
    // the GitOpsCluster no longer selects m1: its agent leaves the spoke (the signal the runbook waits for)
    sim.agents.delete(n.m1);
    await sim.settle();

    // step 2: routing dropped; the principal's Delete reaches no agent; the works take over server-side
    const step2 = sim.commit(fleetAt(n, step1.dir, back, DeliveryModel.BASIC));
    await sim.step(step2);
    expect(sim.dropped.sort()).toEqual(moved.map((name) => `Delete ${n.m1}/${name}`).sort());

    // moveTo removed: nothing changes
    const done = sim.commit(fleetAt(n, step2.dir, back));
    expect(done.files.get(`hub/hub/works/${n.m1}.yaml`)).toBe(step2.files.get(`hub/hub/works/${n.m1}.yaml`));
    await sim.step(done);

    expect(sim.cascades).toEqual([]);
    expect(sim.refusals).toEqual([]);
    expect([...sim.workload].sort()).toEqual(everyApp(n).sort());
    for (const name of moved) await expectOwnedByWork(sim, n.m1, name);
    for (const commit of [step1, step2, done]) expect(renderedForOthers(commit, n)).toEqual(rendered);
    expect(await runtimeForOthers(sim, n)).toEqual(runtime);
    expect(sim.events.slice(eventsAtStart).filter((e) => !e.includes(` ${n.m1}/`))).toEqual([]);
  });

  test('GIVEN a basic spoke with a static app and an ApplicationSet on its placement WHEN it moves to agent-autonomous step by step THEN nothing is deleted with its workload, nothing of the other spokes changes and the autonomous agent owns both apps at the end', async () => {
    const n = names('b');
    const sim = await simFor(n);
    const moved = [`web-${n.m1}`, `${n.m1}-edge-web`];
    const autonomous = { edge: DeliveryModel.AGENT_AUTONOMOUS };

    const start = sim.commit(fleetAt(n, undefined, {}, undefined, HubFlavor.OCM));
    await sim.step(start);
    for (const name of moved)
      expect((await workFor(sim, n.m1, name)).map((w) => (w.spec as Obj).deleteOption?.propagationPolicy)).toEqual([
        'Foreground',
      ]);
    expect([...sim.workload].sort()).toEqual(everyApp(n).sort());
    const rendered = renderedForOthers(start, n);
    const runtime = await runtimeForOthers(sim, n);

    // step 1: the GitOpsCluster selects m1 (its agent is installed); the works stand by, the ApplicationSet stays basic
    sim.agents.set(n.m1, 'autonomous');
    const step1 = sim.commit(fleetAt(n, start.dir, autonomous, DeliveryModel.AGENT_AUTONOMOUS, HubFlavor.OCM));
    await sim.step(step1);
    for (const name of moved) {
      const works = await workFor(sim, n.m1, name);
      expect(works.map((w) => [(w.spec as Obj).deleteOption?.propagationPolicy, appliedAtGeneration(w)])).toEqual([
        ['Orphan', true],
      ]);
    }

    // step 2: the works and the ApplicationSet go (orphaning the spoke copies), the spoke folder takes the apps
    const step2 = sim.commit(fleetAt(n, step1.dir, autonomous, DeliveryModel.AGENT_AUTONOMOUS, HubFlavor.OCM));
    expect(
      step2.folders
        .get(n.m1)
        ?.map((o) => o.metadata.name)
        .sort(),
    ).toEqual([...moved].sort());
    await sim.step(step2);

    const done = sim.commit(fleetAt(n, step2.dir, autonomous, undefined, HubFlavor.OCM));
    expect(done.files.get(`hub/spokes/${n.m1}/applications.yaml`)).toBe(
      step2.files.get(`hub/spokes/${n.m1}/applications.yaml`),
    );
    await sim.step(done);

    expect(sim.cascades).toEqual([]);
    expect([...sim.workload].sort()).toEqual(everyApp(n).sort());
    for (const name of moved) await expectOwnedByAutonomousAgent(sim, done, n.m1, name);
    for (const commit of [step1, step2, done]) expect(renderedForOthers(commit, n)).toEqual(rendered);
    expect(await runtimeForOthers(sim, n)).toEqual(runtime);
    expect(sim.events).toEqual([]);
  });

  test('GIVEN an agent-autonomous spoke whose folder runs a static app and its placement ApplicationSet app WHEN it moves to basic step by step (step 2 not waiting for the agent to leave) THEN nothing is deleted with its workload, nothing of the other spokes changes and its works own both apps at the end', async () => {
    const n = names('c');
    const sim = await simFor(n);
    const moved = [`web-${n.m1}`, `${n.m1}-edge-web`];
    const autonomous = { edge: DeliveryModel.AGENT_AUTONOMOUS };

    sim.agents.set(n.m1, 'autonomous');
    const start = sim.commit(fleetAt(n, undefined, autonomous, undefined, HubFlavor.OCM));
    await sim.step(start);
    for (const name of moved) await expectOwnedByAutonomousAgent(sim, start, n.m1, name);
    expect([...sim.workload].sort()).toEqual(everyApp(n).sort());
    const rendered = renderedForOthers(start, n);
    const runtime = await runtimeForOthers(sim, n);

    // step 1: the folder stops listing the apps (its sync does not prune); basic hub apps with standing-by works
    const step1 = sim.commit(fleetAt(n, start.dir, {}, DeliveryModel.BASIC, HubFlavor.OCM));
    expect(step1.folders.get(n.m1) ?? []).toEqual([]);
    await sim.step(step1);
    await expectStandingBy(sim, n.m1, moved);

    // step 2 waits only for the hub to apply step 1 (the autonomous agent never writes the spoke copies):
    // the works switch to server-side apply and Foreground while the agent may still run; it leaves after
    const step2 = sim.commit(fleetAt(n, step1.dir, {}, DeliveryModel.BASIC, HubFlavor.OCM));
    await sim.step(step2);
    sim.agents.delete(n.m1);

    const done = sim.commit(fleetAt(n, step2.dir, {}, undefined, HubFlavor.OCM));
    expect(done.files.get(`hub/hub/works/${n.m1}.yaml`)).toBe(step2.files.get(`hub/hub/works/${n.m1}.yaml`));
    await sim.step(done);

    expect(sim.cascades).toEqual([]);
    expect([...sim.workload].sort()).toEqual(everyApp(n).sort());
    for (const name of moved) await expectOwnedByWork(sim, n.m1, name);
    for (const commit of [step1, step2, done]) expect(renderedForOthers(commit, n)).toEqual(rendered);
    expect(await runtimeForOthers(sim, n)).toEqual(runtime);
    expect(sim.events).toEqual([]);
  });
});
