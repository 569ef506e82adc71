/**
 * Agent-model Applications end to end: the real controller against the in-process API server (namespaces
 * created as a real hub has them). Basic apps are delivered as before; agent-model apps are never wrapped,
 * their status is never written (resourceVersion unchanged), the FleetReport of an agent-managed
 * ApplicationSet follows the status the principal writes, and clusters a GitOpsCluster registers get no
 * pullfleet cluster Secret.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { AGENT_PULL_CONFLICT_CONDITION } from '../../src/controller/reconcilers/application.js';
import { startController, type RunningController } from '../../src/controller/runtime/manager.js';
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL } from '../../src/model/core/keys.js';
import { type Application } from '../../src/model/core/types.js';
import { fleetReportCrd } from '../../src/model/report/report-crd.js';
import { type FleetReport } from '../../src/model/report/report.js';
import { kubeTime } from '../../src/model/core/time.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../double/fake-apiserver.js';
import { waitFor } from '../support/wait.js';
import { applicationSet, decision, generatedHubApp, NS } from '../model/report/fixtures.js';
import { agentApp, agentAppSet, mirrored } from '../model/report/agent-fixtures.js';

const silent = pino({ level: 'silent' });

describe('agent-model Applications against the fake API server', () => {
  let server: FakeApiServer;
  let controller: RunningController | undefined;

  beforeEach(async () => {
    server = await startFakeApiServer();
    for (const name of [NS, 'store-1', 'east', 'agent-1', 'agent-2'])
      server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const name of ['east', 'agent-1', 'agent-2']) {
      server.store.create({
        apiVersion: 'cluster.open-cluster-management.io/v1',
        kind: 'ManagedCluster',
        metadata: { name },
        spec: { hubAcceptsClient: true },
      });
    }
    server.store.create(fleetReportCrd());
  });

  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
    await server.close();
  });

  function placementDecision(name: string, placement: string, clusters: string[]): void {
    const created = server.store.create<KubeObj>(decision(name, [], placement));
    server.store.updateStatus({
      ...created,
      status: { decisions: clusters.map((clusterName) => ({ clusterName, reason: '' })) },
    });
  }

  /** The OCM flavour of the GitOpsCluster CRD (only what the controller reads). */
  function installGitOpsCluster(): void {
    server.store.registerDefinition({
      group: 'apps.open-cluster-management.io',
      version: 'v1alpha1',
      kind: 'GitOpsCluster',
      plural: 'gitopsclusters',
      namespaced: true,
      subresources: ['status'],
      custom: true,
    });
    server.store.create({
      apiVersion: 'apps.open-cluster-management.io/v1alpha1',
      kind: 'GitOpsCluster',
      metadata: { name: 'edge-agents', namespace: NS },
      spec: {
        placementRef: { kind: 'Placement', apiVersion: 'cluster.open-cluster-management.io/v1beta1', name: 'edge' },
        argoCDAgentAddon: { mode: 'managed' },
      },
    });
  }

  function createAgentApp(appSet: KubeObj, cluster: string, options: { pull?: boolean } = {}): KubeObj {
    const app = agentApp(cluster, undefined, { appSet: 'edge-apps' });
    delete app.metadata.uid;
    delete app.metadata.creationTimestamp;
    app.metadata.ownerReferences = [
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'ApplicationSet',
        name: 'edge-apps',
        uid: appSet.metadata.uid!,
        controller: true,
      },
    ];
    if (options.pull) {
      app.metadata.labels![PULL_LABEL] = 'true';
      app.metadata.annotations = { [MANAGED_CLUSTER_ANNOTATION]: cluster };
    }
    return server.store.create<KubeObj>(app);
  }

  /** What the principal does: writes the agent's status onto the hub Application. */
  function principalWrites(name: string, namespace: string, status: Application['status']): KubeObj {
    const stored = server.store.get<KubeObj>('applications', namespace, name);
    return server.store.update<KubeObj>({ ...stored, status });
  }

  const agentReport = () =>
    server.store.find<FleetReport>({ apiVersion: 'pullfleet.io/v1alpha1', kind: 'FleetReport' }, NS, 'edge-apps');

  test('GIVEN basic and agent-model apps side by side WHEN the controller runs THEN agent apps are never wrapped nor status-written, their report follows the principal, and GitOpsCluster clusters get no pullfleet Secret', async () => {
    // GIVEN a basic pull ApplicationSet over east and agent-1, an agent-managed one over agent-1 and agent-2
    // (agent-2's app also carries the pull label by mistake), an autonomous agent's mirrored app, and the
    // GitOpsCluster that registers the edge clusters
    installGitOpsCluster();
    const basicSet = server.store.create<KubeObj>(applicationSet());
    placementDecision('prod-decision-1', 'prod', ['east', 'agent-1']);
    server.store.create(generatedHubApp('east', basicSet.metadata.uid));
    const agentSet = server.store.create<KubeObj>(agentAppSet('edge-apps', 'edge'));
    placementDecision('edge-decision-1', 'edge', ['agent-1', 'agent-2']);
    createAgentApp(agentSet, 'agent-1');
    createAgentApp(agentSet, 'agent-2', { pull: true });
    const now = kubeTime(new Date());
    const agent1 = principalWrites(
      'agent-1-edge-apps',
      NS,
      mirrored({ sync: 'Synced', health: 'Healthy', revision: 'r1', reconciledAt: now }),
    );
    const autonomous = agentApp(
      'pos',
      mirrored({ sync: 'Synced', health: 'Healthy', revision: 'r9', reconciledAt: now }),
      { model: 'agent-autonomous', namespace: 'store-1', owned: false, appSet: 'local' },
    );
    delete autonomous.metadata.uid;
    delete autonomous.metadata.creationTimestamp;
    const storedAutonomous = server.store.create<KubeObj>(autonomous);

    // WHEN the controller runs
    controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { leaderElection: false, relaxTenancy: true, clusterSecrets: true },
      logger: silent,
    });
    await controller.ready();

    // THEN the basic app is delivered (the controller is live) and east gets its cluster Secret
    await waitFor('the basic work for east', () => server.store.find('manifestworks', 'east', `${NS}-east-guestbook`));
    await waitFor('east cluster Secret', () => server.store.find('secrets', NS, 'east-cluster-secret'));
    // AND the conflicting agent app gets the conflict condition, and nothing else
    const conflicted = await waitFor('the conflict condition', () => {
      const app = server.store.find<Application>('applications', NS, 'agent-2-edge-apps');
      return app?.status?.conditions?.some((condition) => condition.type === AGENT_PULL_CONFLICT_CONDITION)
        ? app
        : undefined;
    });
    expect(conflicted.metadata.finalizers).toBeUndefined();
    expect(conflicted.status!.sync).toBeUndefined();
    // AND the report of the agent-managed ApplicationSet has a row per cluster from the Application status
    await waitFor('the agent report', () => {
      const rows = agentReport()?.status?.clusters ?? [];
      return rows.length === 2 && rows[0].state === 'Healthy' ? rows : undefined;
    });
    expect(
      agentReport()!.status!.clusters.map((row) => [
        row.cluster,
        row.state,
        row.revision ?? '-',
        row.manifestWork ?? '-',
      ]),
    ).toStrictEqual([
      ['agent-1', 'Healthy', 'r1', '-'],
      ['agent-2', 'Unknown', '-', '-'],
    ]);

    // WHEN the principal mirrors a new status for agent-2 (keeping the condition it found)
    const latest = server.store.get<Application>('applications', NS, 'agent-2-edge-apps');
    principalWrites('agent-2-edge-apps', NS, {
      ...mirrored({ sync: 'OutOfSync', health: 'Degraded', revision: 'r2', reconciledAt: kubeTime(new Date()) }),
      conditions: latest.status!.conditions!,
    });
    // THEN the report follows
    await waitFor(
      'agent-2 degraded in the report',
      () => agentReport()?.status?.clusters.find((row) => row.cluster === 'agent-2')?.state === 'Degraded',
    );

    // AND across the whole run: no ManifestWork for any agent app, the other agent apps never written
    // (same resourceVersion as the principal left them), and no pullfleet Secret for the GitOpsCluster's clusters
    expect(server.store.list('manifestworks', { namespace: 'agent-1' })).toStrictEqual([]);
    expect(server.store.list('manifestworks', { namespace: 'agent-2' })).toStrictEqual([]);
    expect(
      server.store.list<KubeObj>('manifestworks').map((work) => `${work.metadata.namespace}/${work.metadata.name}`),
    ).toStrictEqual([`east/${NS}-east-guestbook`]);
    expect(server.store.get<KubeObj>('applications', NS, 'agent-1-edge-apps').metadata.resourceVersion).toBe(
      agent1.metadata.resourceVersion,
    );
    expect(server.store.get<KubeObj>('applications', 'store-1', 'pos-local').metadata.resourceVersion).toBe(
      storedAutonomous.metadata.resourceVersion,
    );
    expect(server.store.find('secrets', NS, 'agent-1-cluster-secret')).toBeUndefined();
    expect(server.store.find('secrets', NS, 'agent-2-cluster-secret')).toBeUndefined();
  });

  test('GIVEN a hub without the GitOpsCluster CRD WHEN the controller runs THEN it becomes ready and writes cluster Secrets as before', async () => {
    const basicSet = server.store.create<KubeObj>(applicationSet());
    placementDecision('prod-decision-1', 'prod', ['east', 'agent-1']);
    server.store.create(generatedHubApp('east', basicSet.metadata.uid));
    controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { leaderElection: false, relaxTenancy: true, clusterSecrets: true },
      logger: silent,
    });
    await controller.ready();
    await waitFor(
      'both cluster Secrets',
      () =>
        server.store.find('secrets', NS, 'east-cluster-secret') &&
        server.store.find('secrets', NS, 'agent-1-cluster-secret'),
    );
  });
});
