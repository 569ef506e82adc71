/**
 * The fleet report end to end: the real controller against the in-process API server, with the
 * FleetReport CRD installed from fleetReportCrd(). ApplicationSet + decisions + hub apps become works
 * (propagation), the work agent reports feedback, and the report follows.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { startController, type RunningController } from '../../src/controller/runtime/manager.js';
import { fleetReportCrd } from '../../src/model/report/report-crd.js';
import {
  type FleetReport,
  type FleetReportRow,
  type MulticlusterApplicationSetReport,
} from '../../src/model/report/report.js';
import { kubeTime } from '../../src/model/core/time.js';
import { fakeCluster } from '../support/cluster.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../double/fake-apiserver.js';
import { waitFor } from '../support/wait.js';
import { WorkAgent } from '../support/work-agent.js';
import { applicationSet, APPSET, decision, generatedHubApp, NS } from '../model/report/fixtures.js';

const silent = pino({ level: 'silent' });

describe('fleet report against the fake API server', () => {
  let server: FakeApiServer;
  let controller: RunningController | undefined;
  let agent: WorkAgent;

  beforeEach(async () => {
    server = await startFakeApiServer({ implicitNamespaces: true });
    agent = new WorkAgent(fakeCluster(server));
    for (const name of ['east', 'west', 'north']) {
      server.store.create({
        apiVersion: 'cluster.open-cluster-management.io/v1',
        kind: 'ManagedCluster',
        metadata: { name },
        spec: { hubAcceptsClient: true },
      });
    }
  });

  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
    await server.close();
  });

  function installCrd(): void {
    server.store.create(fleetReportCrd());
  }

  async function start(config: Record<string, unknown> = {}, crd = true): Promise<void> {
    if (crd) installCrd();
    controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { leaderElection: false, relaxTenancy: true, clusterSecrets: false, ...config },
      logger: silent,
    });
    await controller.ready();
  }

  /** The ApplicationSet, its decisions, and the hub apps the applicationset-controller would generate. */
  function seedApplicationSet(clusters: string[], appClusters = clusters): KubeObj {
    const appSet = server.store.create<KubeObj>(applicationSet());
    const placementDecision = server.store.create<KubeObj>(decision('prod-decision-1', []));
    server.store.updateStatus({
      ...placementDecision,
      status: { decisions: clusters.map((clusterName) => ({ clusterName, reason: '' })) },
    });
    for (const cluster of appClusters) createHubApp(appSet, cluster);
    return appSet;
  }

  function createHubApp(appSet: KubeObj, cluster: string): void {
    server.store.create(generatedHubApp(cluster, appSet.metadata.uid));
  }

  const report = (): FleetReport | undefined =>
    server.store.find<FleetReport>({ apiVersion: 'pullfleet.io/v1alpha1', kind: 'FleetReport' }, NS, APPSET);
  const row = (cluster: string): FleetReportRow | undefined =>
    report()?.status?.clusters.find((r) => r.cluster === cluster);
  const workName = (cluster: string): string => `${NS}-${cluster}-${APPSET}`;

  async function worksExist(clusters: string[]): Promise<void> {
    await waitFor(`works for ${clusters.join(', ')}`, () =>
      clusters.every((cluster) => server.store.find('manifestworks', cluster, workName(cluster))),
    );
  }

  test('GIVEN an ApplicationSet, decisions, works and feedback THEN the report shows every expected cluster and follows feedback changes', async () => {
    // GIVEN three selected clusters, apps generated for two of them
    const appSet = seedApplicationSet(['east', 'west', 'north'], ['east', 'west']);
    await start({ multiclusterReports: true });
    await worksExist(['east', 'west']);

    // WHEN the spokes report: east healthy, west failed to sync
    const now = kubeTime(new Date());
    await agent.report('east', workName('east'), {
      healthStatus: 'Healthy',
      syncStatus: 'Synced',
      syncRevision: 'abc123',
      operationStatePhase: 'Succeeded',
      operationStateStartedAt: now,
      reconciledAt: now,
    });
    await agent.report('west', workName('west'), {
      healthStatus: 'Healthy',
      syncStatus: 'OutOfSync',
      syncRevision: 'abc123',
      operationStatePhase: 'Failed',
      operationStateStartedAt: now,
      operationStateMessage: 'one or more objects failed to apply',
      reconciledAt: now,
    });

    // THEN the report has a row per expected cluster with its state, counts and conditions
    await waitFor(
      'report with east Healthy and west Degraded',
      () => row('east')?.state === 'Healthy' && row('west')?.state === 'Degraded',
      { describe: () => report()?.status },
    );
    const stored = report()!;
    expect(stored.metadata.ownerReferences).toStrictEqual([
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'ApplicationSet',
        name: APPSET,
        uid: appSet.metadata.uid,
        controller: true,
        blockOwnerDeletion: false,
      },
    ]);
    expect(
      stored.status!.clusters.map((r) => [r.cluster, r.state, r.application ?? '-', r.workApplied ?? '-']),
    ).toStrictEqual([
      ['east', 'Healthy', 'east-guestbook', 'True'],
      ['north', 'Missing', '-', '-'],
      ['west', 'Degraded', 'west-guestbook', 'True'],
    ]);
    expect(stored.status!.summary).toStrictEqual({
      clusters: 3,
      synced: 1,
      outOfSync: 1,
      healthy: 1,
      progressing: 0,
      degraded: 1,
      missing: 1,
      stale: 0,
      unknown: 0,
    });
    expect(row('west')!.operationMessage).toBe('one or more objects failed to apply');
    expect(stored.status!.conditions.map((c) => [c.type, c.status])).toStrictEqual([
      ['Ready', 'False'],
      ['Degraded', 'True'],
    ]);
    // AND the ACM-compatible report says the same with string counts
    await waitFor(
      'MulticlusterApplicationSetReport',
      () =>
        server.store.find<MulticlusterApplicationSetReport>(
          { apiVersion: 'apps.open-cluster-management.io/v1alpha1', kind: 'MulticlusterApplicationSetReport' },
          NS,
          APPSET,
        )?.statuses?.summary?.healthy === '1',
    );

    // WHEN east's feedback changes (a new revision starts syncing)
    const later = kubeTime(new Date());
    await agent.report('east', workName('east'), {
      healthStatus: 'Progressing',
      syncStatus: 'Synced',
      syncRevision: 'def456',
      operationStatePhase: 'Running',
      operationStateStartedAt: later,
      reconciledAt: later,
    });
    // THEN the change reaches the report
    await waitFor(
      'east Progressing at def456',
      () => row('east')?.state === 'Progressing' && row('east')?.revision === 'def456',
      { describe: () => row('east') },
    );
  });

  test('GIVEN a settled report WHEN nothing in it changes THEN it is not rewritten', async () => {
    seedApplicationSet(['east']);
    await start();
    await worksExist(['east']);
    const now = kubeTime(new Date());
    await agent.report('east', workName('east'), {
      healthStatus: 'Healthy',
      syncStatus: 'Synced',
      syncRevision: 'abc123',
      reconciledAt: now,
    });
    await waitFor('east Healthy', () => row('east')?.state === 'Healthy');
    const writes = server.writeCount('fleetreports.pullfleet.io');
    const reconciles = async (): Promise<number> =>
      Number(
        /pullfleet_reconcile_total\{controller="fleet-report",result="success"\} (\d+)/.exec(
          await controller!.metrics(),
        )?.[1] ?? 0,
      );
    const before = await reconciles();

    // WHEN the ApplicationSet gets an unrelated annotation, then the work an unrelated label
    const appSet = server.store.get<KubeObj>('applicationsets', NS, APPSET);
    server.store.update({ ...appSet, metadata: { ...appSet.metadata, annotations: { note: 'unrelated' } } });
    await waitFor('one more report reconcile', async () => (await reconciles()) >= before + 1);
    const work = server.store.get<KubeObj>('manifestworks', 'east', workName('east'));
    server.store.update({
      ...work,
      metadata: { ...work.metadata, labels: { ...work.metadata.labels, note: 'unrelated' } },
    });

    // THEN the report is reconciled for each but not written
    await waitFor('two more report reconciles', async () => (await reconciles()) >= before + 2);
    expect(server.writeCount('fleetreports.pullfleet.io')).toBe(writes);
  });

  test('GIVEN feedback that stops WHEN the threshold passes THEN the row turns Stale without any event', async () => {
    seedApplicationSet(['east']);
    await start({ staleAfterSeconds: 2 });
    await worksExist(['east']);
    const reconciledAt = kubeTime(new Date());
    await agent.report('east', workName('east'), { healthStatus: 'Healthy', syncStatus: 'Synced', reconciledAt });
    // Nothing else changes: only the requeue the reconciler asked for can make the row stale.
    await waitFor('east Stale', () => row('east')?.state === 'Stale', { describe: () => row('east') });
    expect(row('east')!.message).toBe(`no status feedback from the spoke since ${reconciledAt} (threshold 2s)`);
    expect(report()!.status!.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'FeedbackStale',
    });
  });

  test('GIVEN the placement changes THEN joining clusters show as Missing and leaving ones drop out', async () => {
    seedApplicationSet(['east', 'west']);
    await start();
    await waitFor('two rows', () => report()?.status?.clusters.length === 2);
    const placementDecision = server.store.get<KubeObj>('placementdecisions', NS, 'prod-decision-1');
    server.store.updateStatus({ ...placementDecision, status: { decisions: [{ clusterName: 'west', reason: '' }] } });
    // a second decision object of the same placement (decisions are split at 100 per object)
    const second = server.store.create<KubeObj>(decision('prod-decision-2', []));
    server.store.updateStatus({ ...second, status: { decisions: [{ clusterName: 'north', reason: '' }] } });
    await waitFor(
      'rows west and north',
      () =>
        report()
          ?.status?.clusters.map((r) => r.cluster)
          .join(',') === 'north,west',
      { describe: () => report()?.status?.clusters },
    );
    expect(row('north')!.state).toBe('Missing');
    expect(report()!.status!.summary.clusters).toBe(2);
  });

  test('GIVEN the ApplicationSet is deleted THEN its report is deleted', async () => {
    seedApplicationSet(['east']);
    await start();
    await waitFor('report', () => report());
    server.store.delete('applicationsets', NS, APPSET);
    await waitFor('report gone', () => report() === undefined);
  });

  test('the CRD validates reports: a well-formed one is accepted, integer counts given as strings are refused', () => {
    installCrd();
    const base = {
      apiVersion: 'pullfleet.io/v1alpha1',
      kind: 'FleetReport',
      metadata: { name: 'manual', namespace: NS },
      spec: { applicationSet: 'manual' },
    };
    const created = server.store.create<KubeObj>(base);
    const summary = {
      clusters: 1,
      synced: 1,
      outOfSync: 0,
      healthy: 1,
      progressing: 0,
      degraded: 0,
      missing: 0,
      stale: 0,
      unknown: 0,
    };
    const condition = {
      type: 'Ready',
      status: 'True',
      reason: 'AllSyncedAndHealthy',
      message: 'ok',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    const ok = server.store.updateStatus<KubeObj>({
      ...created,
      status: { summary, clusters: [{ cluster: 'east', state: 'Healthy' }], conditions: [condition] },
    });
    expect(ok.status.summary.clusters).toBe(1);
    expect(() =>
      server.store.updateStatus({ ...ok, status: { ...ok.status, summary: { ...summary, clusters: '1' } } }),
    ).toThrow(/clusters/);
    expect(() =>
      server.store.updateStatus({ ...ok, status: { ...ok.status, clusters: [{ cluster: 'east', state: 'Fine' }] } }),
    ).toThrow(/state/);
    expect(() => server.store.create({ ...base, metadata: { name: 'nospec', namespace: NS }, spec: {} })).toThrow(
      /applicationSet/,
    );
  });

  test('GIVEN no FleetReport CRD WHEN the controller runs THEN its other duties still work', async () => {
    seedApplicationSet(['east']);
    await start({}, false);
    await worksExist(['east']);
    await agent.report('east', workName('east'), { healthStatus: 'Healthy', syncStatus: 'Synced' });
    await waitFor(
      'hub status written back',
      () => server.store.find<KubeObj>('applications', NS, `east-${APPSET}`)?.status?.health?.status === 'Healthy',
    );
  });
});
