/**
 * basic → agent-managed end to end on a real API server: the committed output of each step is applied
 * the way the hub Argo CD applies dist/ (create, update, prune), and the test plays everything else as
 * its source code behaves (test/support/pull-delivery-sim.ts): the klusterlet work agent (server-side
 * apply, `Applied`, cleanup finalizer, Orphan vs Foreground), the spoke Argo CD's cascade on the
 * resources finalizer, the applicationset-controller and the pullfleet controller (`buildManifestWork`),
 * the argocd-agent principal (Create vs SpecUpdate, Delete when routing stops) and the managed agent
 * (refusing an app without `argocd.argoproj.io/source-uid`, creating a missing one, deleting its own
 * copy with its finalizers).
 *
 * One API server plays hub and spoke: the spoke's Applications live in a namespace of their own.
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
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';
import { realCluster } from '../support/cluster.js';
import { PullDeliverySim, SOURCE_UID } from '../support/pull-delivery-sim.js';
import { describeRealServer } from '../support/real-server.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });

describeRealServer('basic → agent-managed hand-over', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const id = `pfh${Date.now().toString(36).slice(-6)}`;
  const hubNs = `${id}-gitops`;
  const spokeName = `${id}-east`;
  const sim = new PullDeliverySim(realCluster(kubeConfig), hubNs, [spokeName]);
  sim.decisions = (placement) => (placement === 'edge' ? [spokeName] : []);

  afterAll(() => sim.cleanup());

  function fleetAt(previous: string | undefined, agent: boolean): Fleet {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: previous });
    const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM, argoNamespace: hubNs });
    const east = new Spoke(hub, spokeName, { clusterSet: new ClusterSet(hub, 'all'), labels: { tier: 'edge' } });
    const edge = new Placement(hub, 'edge', { predicates: [{ labels: { tier: 'edge' } }] });
    new PullApplicationSet(hub, 'edge-web', {
      source,
      destinationNamespace: 'edge-web',
      placement: edge,
      pruneOnDelete: true,
    });
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [east], pruneOnDelete: true });
    if (agent) {
      GitOpsCluster.acm(hub, 'agents', { placement: edge, model: DeliveryModel.AGENT_MANAGED });
      east.moveTo(DeliveryModel.AGENT_MANAGED);
    }
    return fleet;
  }

  test('GIVEN a static app and an ApplicationSet app on a basic spoke WHEN it moves to agent-managed step by step THEN no Application is ever deleted with its workload and the agent owns both at the end', async () => {
    await sim.createNamespaces();
    const names = ['web-' + spokeName, `${spokeName}-edge-web`];

    const start = sim.commit(fleetAt(undefined, false));
    await sim.step(start);
    for (const name of names)
      expect((await sim.readSpokeApp(spokeName, name))?.metadata.finalizers).toEqual([
        'resources-finalizer.argocd.argoproj.io',
      ]);

    // the GitOpsCluster selects the spoke from step 1 on: its agent is installed
    sim.agents.set(spokeName, 'managed');
    const step1 = sim.commit(fleetAt(start.dir, true));
    await sim.step(step1);
    // the signal plan names: every work Applied at its current generation
    for (const w of await sim.works(spokeName))
      expect(w.status?.conditions?.find((c) => c.type === 'Applied')?.observedGeneration).toBe(w.metadata.generation);
    for (const name of names) expect((await sim.readSpokeApp(spokeName, name))?.metadata.finalizers ?? []).toEqual([]);

    const step2 = sim.commit(fleetAt(step1.dir, true));
    await sim.step(step2);
    // the signal plan names: none of the works is left on the hub (so the spoke copies are gone)
    expect(await sim.works(spokeName)).toEqual([]);
    for (const name of names) expect(await sim.readSpokeApp(spokeName, name)).toBeUndefined();

    const step3 = sim.commit(fleetAt(step2.dir, true));
    await sim.step(step3);

    expect(sim.cascades).toEqual([]);
    expect(sim.refusals).toEqual([]);
    for (const name of names) {
      expect(sim.workload.has(`${spokeName}/${name}`)).toBe(true);
      const hub = await sim.readHubApp(name);
      const spoke = await sim.readSpokeApp(spokeName, name);
      // owned by the agent: its source UID is the hub Application's, written by the agent
      expect(spoke?.metadata.annotations?.[SOURCE_UID]).toBe(hub?.metadata.uid);
      expect(spoke?.spec.destination).toEqual({ name: 'in-cluster', namespace: hub?.spec.destination?.namespace });
      expect(spoke?.metadata.finalizers).toEqual(['resources-finalizer.argocd.argoproj.io']);
    }
    expect(sim.events.filter((e) => e.startsWith('Create'))).toHaveLength(2);
    expect(sim.dropped).toEqual([]);
  });
});
