import { describe, expect, test } from '@jest/globals';
import {
  agentApplicationRows,
  computeFleetReport,
  isReportedApplicationSet,
  reportCluster,
  type FleetReportRow,
} from '../../../src/model/report/report.js';
import { isAgentApplicationSet } from '../../../src/model/delivery/classification.js';
import type { Application, ApplicationStatus } from '../../../src/model/core/types.js';
import { applicationSet, decision, hubApp, work } from './fixtures.js';
import { agentApp, agentAppSet, mirrored, NS } from './agent-fixtures.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const FRESH = '2026-01-01T00:59:00Z';

function report(apps: Application[], clusters: string[], options: { staleAfterSeconds?: number } = {}) {
  return computeFleetReport({
    applicationSet: agentAppSet(),
    decisions: [decision('edge-decision-1', clusters, 'edge')],
    applications: apps,
    works: [],
    now: NOW,
    ...options,
  });
}

describe('agent-model report rows', () => {
  const cases: Array<{
    name: string;
    status: ApplicationStatus | undefined;
    created?: string;
    expected: Partial<FleetReportRow>;
  }> = [
    {
      name: 'Healthy from a synced, healthy mirrored status',
      status: mirrored({
        sync: 'Synced',
        health: 'Healthy',
        revision: 'abc123',
        phase: 'Succeeded',
        reconciledAt: FRESH,
      }),
      expected: {
        state: 'Healthy',
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
        revision: 'abc123',
        operationPhase: 'Succeeded',
        lastFeedbackTime: FRESH,
      },
    },
    {
      name: 'Progressing while the agent syncs',
      status: mirrored({ sync: 'OutOfSync', health: 'Progressing', phase: 'Running', reconciledAt: FRESH }),
      expected: {
        state: 'Progressing',
        syncStatus: 'OutOfSync',
        healthStatus: 'Progressing',
        operationPhase: 'Running',
      },
    },
    {
      name: 'Degraded when the last sync failed, with the spoke message',
      status: mirrored({
        sync: 'OutOfSync',
        health: 'Healthy',
        phase: 'Failed',
        message: 'one or more objects failed to apply',
        reconciledAt: FRESH,
      }),
      expected: {
        state: 'Degraded',
        operationPhase: 'Failed',
        operationMessage: 'one or more objects failed to apply',
      },
    },
    {
      name: 'Degraded when health is Missing',
      status: mirrored({ sync: 'Synced', health: 'Missing', reconciledAt: FRESH }),
      expected: { state: 'Degraded', healthStatus: 'Missing' },
    },
    {
      name: 'Stale when status.reconciledAt is older than the threshold',
      status: mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: '2026-01-01T00:30:00Z' }),
      expected: {
        state: 'Stale',
        lastFeedbackTime: '2026-01-01T00:30:00Z',
        message:
          'no status from the agent of spoke-a since 2026-01-01T00:30:00Z (threshold 900s): check that the agent is connected to the principal',
      },
    },
    {
      name: 'Stale when the Application never got a status and is older than the threshold',
      status: undefined,
      created: '2026-01-01T00:00:00Z',
      expected: {
        state: 'Stale',
        message:
          'no status from the agent of spoke-a since the Application was created at 2026-01-01T00:00:00Z (threshold 900s): check that the agent is connected to the principal',
      },
    },
    {
      name: 'Unknown while a young Application waits for its first status',
      status: undefined,
      created: '2026-01-01T00:58:00Z',
      expected: {
        state: 'Unknown',
        message: 'waiting for the first status from the agent (the principal mirrors it onto this Application)',
      },
    },
  ];

  test.each(cases)('GIVEN an agent-managed Application WHEN reported THEN $name', ({ status, created, expected }) => {
    const result = report([agentApp('spoke-a', status, created ? { created } : {})], ['spoke-a'])!;
    const row = result.report.status!.clusters[0];
    expect(row).toMatchObject({ cluster: 'spoke-a', application: 'spoke-a-guestbook', ...expected });
    expect(row.manifestWork).toBeUndefined();
    expect(row.workApplied).toBeUndefined();
  });

  test('GIVEN no Application for an expected cluster WHEN reported THEN the row is Missing and names the agent registration', () => {
    const result = report([], ['spoke-a'])!;
    expect(result.report.status!.clusters).toStrictEqual([
      {
        cluster: 'spoke-a',
        state: 'Missing',
        message:
          'ApplicationSet guestbook has not generated an Application for cluster spoke-a (the principal needs an Argo CD cluster Secret named "spoke-a" for its agent: check the GitOpsCluster that registers it and that the agent is connected)',
      },
    ]);
    expect(result.report.status!.summary.missing).toBe(1);
  });

  test('GIVEN one row of every state WHEN reported THEN the counts add up to the clusters and Degraded names the problems', () => {
    const apps = [
      agentApp('a-healthy', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: FRESH })),
      agentApp('b-progressing', mirrored({ sync: 'Synced', health: 'Progressing', reconciledAt: FRESH })),
      agentApp('c-degraded', mirrored({ sync: 'OutOfSync', health: 'Degraded', reconciledAt: FRESH })),
      agentApp('d-stale', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: '2026-01-01T00:00:00Z' })),
      agentApp('e-unknown', undefined, { created: '2026-01-01T00:59:30Z' }),
    ];
    const status = report(apps, ['a-healthy', 'b-progressing', 'c-degraded', 'd-stale', 'e-unknown', 'f-missing'])!
      .report.status!;
    expect(status.summary).toStrictEqual({
      clusters: 6,
      synced: 2,
      outOfSync: 1,
      healthy: 1,
      progressing: 1,
      degraded: 1,
      missing: 1,
      stale: 1,
      unknown: 1,
    });
    expect(status.clusters.map((row) => `${row.cluster}=${row.state}`)).toStrictEqual([
      'a-healthy=Healthy',
      'b-progressing=Progressing',
      'c-degraded=Degraded',
      'd-stale=Stale',
      'e-unknown=Unknown',
      'f-missing=Missing',
    ]);
    expect(status.conditions.find((condition) => condition.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ClustersDegraded',
      message: '1 degraded, 1 missing, 1 stale of 6 clusters: c-degraded, d-stale, f-missing',
    });
  });

  test('GIVEN a fresh agent row WHEN reported THEN recheckAt is when its reconciledAt goes stale', () => {
    const result = report(
      [agentApp('spoke-a', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: FRESH }))],
      ['spoke-a'],
    )!;
    expect(result.recheckAt).toStrictEqual(new Date('2026-01-01T01:14:00Z'));
  });

  test('GIVEN staleness switched off WHEN an old agent status is reported THEN the row keeps its feedback state', () => {
    const result = report(
      [agentApp('spoke-a', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: '2025-12-01T00:00:00Z' }))],
      ['spoke-a'],
      { staleAfterSeconds: 0 },
    )!;
    expect(result.report.status!.clusters[0].state).toBe('Healthy');
  });
});

describe('which ApplicationSets get a report', () => {
  test('GIVEN the agent-managed template WHEN checked THEN it is reported', () => {
    expect(isAgentApplicationSet(agentAppSet())).toBe(true);
    expect(isReportedApplicationSet(agentAppSet())).toBe(true);
  });

  test('GIVEN the delivery-model label without destination.name {{name}} WHEN checked THEN it is not an agent ApplicationSet', () => {
    const appSet = agentAppSet();
    (appSet.spec.template as { spec: { destination: Record<string, string> } }).spec.destination = {
      server: 'https://kubernetes.default.svc',
    };
    expect(isAgentApplicationSet(appSet)).toBe(false);
    expect(
      computeFleetReport({ applicationSet: appSet, decisions: [], applications: [], works: [], now: NOW }),
    ).toBeUndefined();
  });

  test('GIVEN a push ApplicationSet (no pull label, no delivery model) WHEN checked THEN it gets no report', () => {
    expect(isReportedApplicationSet(applicationSet({ pull: false }))).toBe(false);
  });
});

describe('mixed ApplicationSet report', () => {
  test('GIVEN a pull ApplicationSet whose Applications are basic on some clusters and agent-managed on others WHEN reported THEN each row comes from its own source', () => {
    const appSet = applicationSet();
    const basic = hubApp('basic-1');
    const agent = agentApp(
      'agent-1',
      mirrored({ sync: 'Synced', health: 'Healthy', revision: 'r2', reconciledAt: FRESH }),
      { appSet: 'guestbook' },
    );
    const stale = agentApp(
      'agent-2',
      mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: '2026-01-01T00:00:00Z' }),
      { appSet: 'guestbook' },
    );
    const result = computeFleetReport({
      applicationSet: appSet,
      decisions: [decision('prod-decision-1', ['basic-1', 'basic-2', 'agent-1', 'agent-2'])],
      applications: [basic, agent, stale],
      works: [work('basic-1', { health: 'Healthy', sync: 'Synced', revision: 'r1', reconciledAt: FRESH })],
      now: NOW,
    })!;
    const rows = result.report.status!.clusters;
    expect(rows.map((row) => [row.cluster, row.state, row.manifestWork ?? '-', row.revision ?? '-'])).toStrictEqual([
      ['agent-1', 'Healthy', '-', 'r2'],
      ['agent-2', 'Stale', '-', '-'],
      ['basic-1', 'Healthy', 'argocd-basic-1-guestbook', 'r1'],
      ['basic-2', 'Missing', '-', '-'],
    ]);
    expect(result.report.status!.summary).toMatchObject({ clusters: 4, healthy: 2, stale: 1, missing: 1, synced: 2 });
  });

  test('GIVEN an agent Application that also carries the pull label WHEN reported THEN its row still comes from its own status, not a work', () => {
    const app = agentApp('spoke-a', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: FRESH }));
    app.metadata.labels!['apps.open-cluster-management.io/pull-to-ocm-managed-cluster'] = 'true';
    const row = report([app], ['spoke-a'])!.report.status!.clusters[0];
    expect(row).toMatchObject({ state: 'Healthy' });
    expect(row.manifestWork).toBeUndefined();
  });
});

describe('agent Applications outside ApplicationSets', () => {
  test('GIVEN autonomous Applications the principal mirrors into the agent namespace WHEN listed THEN one row each, cluster = namespace', () => {
    const apps = [
      agentApp('x', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: FRESH }), {
        model: 'agent-autonomous',
        namespace: 'spoke-b',
        owned: false,
      }),
      agentApp('y', mirrored({ sync: 'OutOfSync', health: 'Degraded', reconciledAt: FRESH }), {
        model: 'agent-autonomous',
        namespace: 'spoke-a',
        owned: false,
      }),
      { ...hubApp('not-agent'), metadata: { ...hubApp('not-agent').metadata, namespace: NS } },
    ];
    expect(reportCluster(apps[0])).toBe('spoke-b');
    const rows = agentApplicationRows(apps, NOW);
    expect(rows.map((row) => [row.cluster, row.application, row.state])).toStrictEqual([
      ['spoke-a', 'y-guestbook', 'Degraded'],
      ['spoke-b', 'x-guestbook', 'Healthy'],
    ]);
  });
});
