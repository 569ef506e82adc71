/**
 * basic → agent-managed end to end on a real API server for a spoke of a static app rolled out in waves.
 * The actors of test/support/pull-delivery-sim.ts play the hub Argo CD, the work agent, the spoke Argo CD's
 * cascade, the principal and the managed agent; this test plays the pullfleet controller's part for waved
 * hub Applications with the model's own `computePropagation` (the rollout done: every cluster promoted to the
 * payload its hub Application asks for). Step 1 is applied with the controller still seeing east's waved hub
 * Application from before the commit (its watch of works ahead of its watch of Applications), the race in
 * which it could write the resources finalizer back over step 1's work.
 */
import { afterAll, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  Rollout,
  Spoke,
} from '../../src/constructs/index.js';
import { ARGOCD_API_VERSION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { buildPayloadApplication } from '../../src/model/delivery/manifestwork.js';
import { payloadHash } from '../../src/model/rollout/gate.js';
import { isWavedApplication } from '../../src/model/rollout/static.js';
import { computePropagation } from '../../src/model/reconcile/propagation.js';
import { realCluster } from '../support/cluster.js';
import { PullDeliverySim, SOURCE_UID } from '../support/pull-delivery-sim.js';
import { describeRealServer } from '../support/real-server.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });
const RESOURCES_FINALIZER = 'resources-finalizer.argocd.argoproj.io';

describeRealServer('a waved static app while a spoke moves basic → agent-managed', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const id = `pfw${Date.now().toString(36).slice(-6)}`;
  const hubNs = `${id}-gitops`;
  const [canary, east, west] = ['c', 'east', 'west'].map((s) => `${id}-${s}`);
  const cluster = realCluster(kubeConfig);
  const sim = new PullDeliverySim(cluster, hubNs, [canary, east, west]);

  afterAll(() => sim.cleanup());

  function fleetAt(previous: string | undefined, moving: boolean): Fleet {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: previous });
    const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM, argoNamespace: hubNs });
    const set = new ClusterSet(hub, 'all');
    const spokes = [
      new Spoke(hub, canary, { clusterSet: set, labels: { ring: 'canary' } }),
      new Spoke(hub, east, { clusterSet: set, labels: { ring: 'main', ...(moving ? { tier: 'edge' } : {}) } }),
      new Spoke(hub, west, { clusterSet: set, labels: { ring: 'main' } }),
    ];
    const edge = new Placement(hub, 'edge', { predicates: [{ labels: { tier: 'edge' } }] });
    GitOpsCluster.acm(hub, 'agents', { placement: edge, model: DeliveryModel.AGENT_MANAGED });
    new PullApplication(hub, 'web', {
      source,
      destinationNamespace: 'web',
      spokes,
      pruneOnDelete: true,
      rollout: Rollout.waves([
        { name: 'canary', labels: { ring: 'canary' } },
        { name: 'main', rest: true },
      ]),
    });
    if (moving) spokes[1].moveTo(DeliveryModel.AGENT_MANAGED);
    return fleet;
  }

  const workRef = (spoke: string) => ({
    apiVersion: WORK_API_VERSION,
    kind: 'ManifestWork',
    namespace: spoke,
    name: manifestWorkName(hubNs, `web-${spoke}`),
  });

  /**
   * The pullfleet controller's pass over the waved hub Applications, each judged as `seen` has it (the
   * cache), else as the server has it: the work the model plans is applied, after the adoption patch.
   */
  async function wavedController(seen: ReadonlyMap<string, Application> = new Map()): Promise<string[]> {
    const problems: string[] = [];
    for (const live of await cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: hubNs })) {
      const app = seen.get(live.metadata.name) ?? live;
      if (!isWavedApplication(app)) continue;
      const spoke = app.metadata.annotations?.['apps.open-cluster-management.io/ocm-managed-cluster'] ?? '';
      const workAtTarget = await cluster.get<ManifestWork>(workRef(spoke));
      const plan = computePropagation({
        namespace: hubNs,
        name: app.metadata.name,
        app,
        works: [],
        ...(workAtTarget ? { workAtTarget } : {}),
        rolloutGate: { kind: 'allow', hash: payloadHash(buildPayloadApplication(app)) },
      });
      if (plan.problem) problems.push(plan.problem);
      if (plan.adopt) await cluster.mergePatch(workRef(spoke), plan.adopt.patch);
      if (plan.apply) await cluster.apply(plan.apply, 'pullfleet-controller');
    }
    return problems;
  }

  test("GIVEN east in the waves of app web WHEN it moves to agent-managed step by step THEN no Application is deleted with its workload, the agent owns east's app at the end, and canary and west are not touched", async () => {
    await sim.createNamespaces();
    const start = sim.commit(fleetAt(undefined, false));
    await sim.hubArgoApply(start);
    expect(await wavedController()).toEqual([]);
    await sim.settle();
    for (const spoke of [canary, east, west])
      expect((await sim.readSpokeApp(spoke, `web-${spoke}`))?.metadata.finalizers).toEqual([RESOURCES_FINALIZER]);
    const staying = async () =>
      Promise.all(
        [canary, west].flatMap((spoke) => [
          cluster.get<ManifestWork>(workRef(spoke)).then((w) => w?.metadata.resourceVersion),
          sim.readSpokeApp(spoke, `web-${spoke}`).then((a) => a?.metadata.resourceVersion),
        ]),
      );
    const before = await staying();

    // step 1, with the controller's cache behind: it still sees east's waved hub Application
    sim.agents.set(east, 'managed');
    const stale = new Map([[`web-${east}`, (await sim.readHubApp(`web-${east}`))!]]);
    const step1 = sim.commit(fleetAt(start.dir, true));
    await sim.hubArgoApply(step1);
    expect((await wavedController(stale)).join('\n')).toContain("is rendered by synth without Argo CD's Prune=false");
    expect(await wavedController()).toEqual([]);
    await sim.settle();
    const work1 = (await cluster.get<ManifestWork>(workRef(east)))!;
    expect(work1.status?.conditions?.find((c) => c.type === 'Applied')?.observedGeneration).toBe(
      work1.metadata.generation,
    );
    expect((await sim.readSpokeApp(east, `web-${east}`))?.metadata.finalizers ?? []).toEqual([]);

    const step2 = sim.commit(fleetAt(step1.dir, true));
    await sim.hubArgoApply(step2);
    expect(await wavedController()).toEqual([]);
    await sim.settle();
    expect(await cluster.get(workRef(east))).toBeUndefined();
    expect(await sim.readSpokeApp(east, `web-${east}`)).toBeUndefined();

    const step3 = sim.commit(fleetAt(step2.dir, true));
    await sim.hubArgoApply(step3);
    expect(await wavedController()).toEqual([]);
    await sim.settle();

    expect(sim.cascades).toEqual([]);
    expect(sim.refusals).toEqual([]);
    expect(sim.workload.has(`${east}/web-${east}`)).toBe(true);
    const hubApp = await sim.readHubApp(`web-${east}`);
    const spokeApp = await sim.readSpokeApp(east, `web-${east}`);
    expect(spokeApp?.metadata.annotations?.[SOURCE_UID]).toBe(hubApp?.metadata.uid);
    expect(spokeApp?.metadata.finalizers).toEqual([RESOURCES_FINALIZER]);
    // the spokes that stay in the waves: their works and Applications were never written again
    expect(await staying()).toEqual(before);
  });
});
