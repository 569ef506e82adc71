import { describe, expect, test } from '@jest/globals';
import { collectStatus, type StatusSource } from '../../../src/cli/commands/status.js';
import { renderOutput, statusExitCode } from '../../../src/cli/support/status-render.js';
import { type Application } from '../../../src/model/core/types.js';
import { fleetReportCrd } from '../../../src/model/report/report-crd.js';
import { computeFleetReport, type FleetReport } from '../../../src/model/report/report.js';
import { runCli } from '../../support/cli.js';
import { kubeconfigServer } from '../../support/kubeconfig-server.js';
import { agentApp, agentAppSet, mirrored } from '../../model/report/agent-fixtures.js';
import { applicationSet, decision, hubApp, NOW, work } from '../../model/report/fixtures.js';
import { expectGolden } from '../../support/golden.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const FRESH = '2026-01-01T00:59:00Z';

/** An agent-managed ApplicationSet report with one row of every state. */
function agentReport(): FleetReport {
  const apps = [
    agentApp(
      'a-healthy',
      mirrored({ sync: 'Synced', health: 'Healthy', revision: SHA, phase: 'Succeeded', reconciledAt: FRESH }),
    ),
    agentApp(
      'b-progressing',
      mirrored({
        sync: 'OutOfSync',
        health: 'Progressing',
        revision: SHA,
        phase: 'Running',
        reconciledAt: '2026-01-01T00:59:50Z',
      }),
    ),
    agentApp(
      'c-degraded',
      mirrored({
        sync: 'OutOfSync',
        health: 'Healthy',
        revision: SHA,
        phase: 'Failed',
        message: 'one or more objects failed to apply',
        reconciledAt: FRESH,
      }),
    ),
    agentApp(
      'd-stale',
      mirrored({ sync: 'Synced', health: 'Healthy', revision: SHA, reconciledAt: '2026-01-01T00:30:00Z' }),
    ),
    agentApp('e-unknown', undefined, { created: '2026-01-01T00:59:30Z' }),
  ];
  const clusters = ['a-healthy', 'b-progressing', 'c-degraded', 'd-stale', 'e-unknown', 'f-missing'];
  return computeFleetReport({
    applicationSet: agentAppSet(),
    decisions: [decision('edge-decision-1', clusters, 'edge')],
    applications: apps,
    works: [],
    now: NOW,
  })!.report;
}

/** A pull ApplicationSet whose Applications are basic on one cluster and agent-managed on another. */
function mixedReport(): FleetReport {
  const agent = agentApp(
    'agent-1',
    mirrored({ sync: 'Synced', health: 'Healthy', revision: SHA, reconciledAt: FRESH }),
    { appSet: 'metrics' },
  );
  return computeFleetReport({
    applicationSet: applicationSet({ name: 'metrics', placement: 'all' }),
    decisions: [decision('all-decision-1', ['agent-1', 'basic-1'], 'all')],
    applications: [hubApp('basic-1', 'metrics'), agent],
    works: [
      work('basic-1', { health: 'Healthy', sync: 'Synced', revision: SHA, reconciledAt: FRESH }, { appSet: 'metrics' }),
    ],
    now: NOW,
  })!.report;
}

/** Autonomous agents' Applications as the principal mirrors them: in a namespace named after the agent. */
function autonomousApps(): Application[] {
  return [
    agentApp('cache', mirrored({ sync: 'Synced', health: 'Healthy', revision: SHA, reconciledAt: FRESH }), {
      model: 'agent-autonomous',
      namespace: 'store-17',
      owned: false,
      appSet: 'local',
    }),
    agentApp('pos', mirrored({ sync: 'Synced', health: 'Degraded', revision: SHA, reconciledAt: FRESH }), {
      model: 'agent-autonomous',
      namespace: 'store-17',
      owned: false,
      appSet: 'local',
    }),
  ];
}

function source(reports: FleetReport[], agentApps: Application[]): StatusSource {
  return {
    description: 'https://hub.example:6443',
    listReports: async () => structuredClone(reports),
    listPullApplications: async () => [],
    listStaticWorks: async () => [],
    listAgentApplications: async () => structuredClone(agentApps),
    close: () => undefined,
  };
}

describe('pullfleet status with agent-model rows', () => {
  test('golden: agent rows of every state, a mixed basic + agent report, and mirrored autonomous apps', async () => {
    const groups = await collectStatus(source([agentReport(), mixedReport()], autonomousApps()), { now: NOW });
    expectGolden('status-agent.txt', renderOutput(groups, 'table', { now: NOW, color: false }));
    expect(statusExitCode(groups)).toBe(1);
  });

  test('GIVEN agent apps an ApplicationSet owns WHEN collected THEN they appear only in its report, not as a table of their own', async () => {
    const owned = agentApp('a-healthy', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: FRESH }));
    const groups = await collectStatus(source([agentReport()], [owned]), { now: NOW });
    expect(groups.map((group) => group.kind)).toStrictEqual(['ApplicationSet']);
  });

  test('GIVEN --no-static WHEN collected THEN the agent apps table is left out too', async () => {
    const groups = await collectStatus(source([], autonomousApps()), { now: NOW, includeStatic: false });
    expect(groups).toStrictEqual([]);
  });
});

describe('pullfleet status against an API server with agent-model Applications', () => {
  const cli = kubeconfigServer('pullfleet-status-agent-');

  test('reads the mirrored autonomous Applications by their delivery-model label and leaves other apps out', async () => {
    cli.server.store.create(fleetReportCrd());
    // (this path runs on the real clock: the agent reported just now)
    const now = new Date().toISOString();
    for (const app of autonomousApps())
      cli.server.store.create({ ...app, status: { ...app.status, reconciledAt: now } });
    const pushApp = hubApp('east', 'push');
    pushApp.metadata.labels = {};
    pushApp.metadata.ownerReferences = [];
    cli.server.store.create({
      ...pushApp,
      metadata: { ...pushApp.metadata, namespace: 'store-17' },
    });

    const { code, out } = await runCli(['status', '--kubeconfig', cli.kubeconfig, '-o', 'json']);
    expect(code).toBe(1);
    const doc = JSON.parse(out) as {
      items: Array<{
        kind: string;
        namespace: string;
        rows: Array<{ cluster: string; application: string; state: string }>;
      }>;
    };
    expect(
      doc.items.map((g) => [g.kind, g.namespace, g.rows.map((r) => `${r.cluster}/${r.application}:${r.state}`)]),
    ).toStrictEqual([
      ['AgentApplications', 'store-17', ['store-17/pos-local:Degraded', 'store-17/cache-local:Healthy']],
    ]);
  });
});
