import { describe, expect, test } from '@jest/globals';
import { collectStatus, type StatusSource } from '../../../src/cli/commands/status.js';
import { statusExitCode } from '../../../src/cli/support/status-render.js';
import { type Application, type ConfigMapLike } from '../../../src/model/core/types.js';
import { fleetReportCrd } from '../../../src/model/report/report-crd.js';
import {
  buildExpectedApplicationsConfigMap,
  EXPECTED_APPLICATIONS_LABEL,
} from '../../../src/model/reconcile/expected-apps.js';
import { runCli } from '../../support/cli.js';
import { kubeconfigServer } from '../../support/kubeconfig-server.js';
import { agentApp, mirrored } from '../../model/report/agent-fixtures.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const FRESH = '2026-01-01T00:59:00Z';

/** An autonomous Application as the principal mirrors it into the namespace named after the agent. */
function mirroredApp(cluster: string, name: string, reconciledAt = FRESH): Application {
  const app = agentApp(cluster, mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt }), {
    model: 'agent-autonomous',
    namespace: cluster,
    owned: false,
  });
  app.metadata.name = name;
  return app;
}

function expected(spoke: string, applications: string[]): ConfigMapLike {
  return buildExpectedApplicationsConfigMap({
    spoke,
    namespace: 'argocd',
    applications,
    folder: `dist/hub/spokes/${spoke}`,
  });
}

function source(apps: Application[], lists: ConfigMapLike[]): StatusSource & { askedFor: Array<string | undefined> } {
  const askedFor: Array<string | undefined> = [];
  return {
    askedFor,
    description: 'https://hub.example:6443',
    listReports: async () => [],
    listPullApplications: async () => [],
    listStaticWorks: async () => [],
    listAgentApplications: async (namespace) =>
      structuredClone(apps.filter((app) => !namespace || app.metadata.namespace === namespace)),
    listExpectedApplications: async (cluster) => {
      askedFor.push(cluster);
      return structuredClone(
        lists.filter((list) => !cluster || list.metadata?.labels?.[EXPECTED_APPLICATIONS_LABEL] === cluster),
      );
    },
    close: () => undefined,
  };
}

const rowsOf = (groups: Awaited<ReturnType<typeof collectStatus>>) =>
  groups.map((g) => [g.kind, g.namespace, g.rows.map((r) => `${r.cluster}/${r.application ?? '-'}:${r.state}`)]);

describe('pullfleet status with expected Applications of agent-autonomous spokes', () => {
  test('GIVEN an expected Application the principal does not mirror WHEN collected THEN a Missing row in the spoke namespace table and exit code 1', async () => {
    const groups = await collectStatus(
      source([mirroredApp('store-001', 'api-store-001')], [expected('store-001', ['api-store-001', 'web-store-001'])]),
      { now: NOW },
    );
    expect(rowsOf(groups)).toStrictEqual([
      ['AgentApplications', 'store-001', ['store-001/web-store-001:Missing', 'store-001/api-store-001:Healthy']],
    ]);
    expect(groups[0].rows[0].message).toContain('dist/hub/spokes/store-001/');
    expect(groups[0].rows[0].message).toContain('argocd/pullfleet-spoke-apps');
    expect(groups[0].summary).toMatchObject({ clusters: 1, healthy: 1, missing: 1 });
    expect(statusExitCode(groups)).toBe(1);
  });

  test('GIVEN a spoke none of whose Applications is mirrored WHEN collected THEN it still gets a table of Missing rows', async () => {
    const groups = await collectStatus(source([], [expected('store-002', ['api-store-002'])]), { now: NOW });
    expect(rowsOf(groups)).toStrictEqual([['AgentApplications', 'store-002', ['store-002/api-store-002:Missing']]]);
  });

  test('GIVEN every expected Application mirrored and healthy WHEN collected THEN exit code 0, one row each', async () => {
    const groups = await collectStatus(
      source([mirroredApp('store-001', 'a'), mirroredApp('store-001', 'b')], [expected('store-001', ['a', 'b'])]),
      { now: NOW },
    );
    expect(rowsOf(groups)).toStrictEqual([
      ['AgentApplications', 'store-001', ['store-001/a:Healthy', 'store-001/b:Healthy']],
    ]);
    expect(statusExitCode(groups)).toBe(0);
  });

  test('GIVEN a malformed list WHEN collected THEN an Unknown row with the reason, the other lists and the mirrored apps as usual, no crash', async () => {
    const broken = expected('store-003', ['x']);
    (broken as { data: Record<string, string> }).data.applications = 'x\nNOT valid\n';
    const groups = await collectStatus(
      source([mirroredApp('store-003', 'x')], [broken, expected('store-001', ['a'])]),
      { now: NOW },
    );
    expect(rowsOf(groups)).toStrictEqual([
      ['AgentApplications', 'store-001', ['store-001/a:Missing']],
      ['AgentApplications', 'store-003', ['store-003/-:Unknown', 'store-003/x:Healthy']],
    ]);
    expect(groups[1].rows[0].message).toMatch(
      /^expected-Application list argocd\/pullfleet-expected-store-003 of spoke "store-003", line 2: "NOT valid" is not an Application name/,
    );
  });

  test("GIVEN -n <spoke> WHEN collected THEN only that spoke's list is asked for and shown", async () => {
    const src = source(
      [mirroredApp('store-001', 'a')],
      [expected('store-001', ['a', 'b']), expected('store-002', ['c'])],
    );
    const groups = await collectStatus(src, { now: NOW, namespace: 'store-001' });
    expect(src.askedFor).toStrictEqual(['store-001']);
    expect(rowsOf(groups)).toStrictEqual([
      ['AgentApplications', 'store-001', ['store-001/b:Missing', 'store-001/a:Healthy']],
    ]);
  });

  test('GIVEN --no-static WHEN collected THEN the expected lists are not read', async () => {
    const src = source([], [expected('store-001', ['a'])]);
    expect(await collectStatus(src, { now: NOW, includeStatic: false })).toStrictEqual([]);
    expect(src.askedFor).toStrictEqual([]);
  });
});

describe('pullfleet status against an API server with expected-Application lists', () => {
  const cli = kubeconfigServer('pullfleet-status-autonomous-');

  async function runJson(args: string[]): Promise<{
    code: number;
    doc: {
      items: Array<{
        kind: string;
        namespace: string;
        rows: Array<{ cluster: string; application?: string; state: string; message?: string }>;
      }>;
    };
  }> {
    const { code, out } = await runCli(['status', '--kubeconfig', cli.kubeconfig, '-o', 'json', ...args]);
    return { code, doc: JSON.parse(out) };
  }

  test('reads the lists by label from the Argo CD namespace and reports the expected Application the principal does not mirror as Missing', async () => {
    cli.server.store.create(fleetReportCrd());
    cli.server.store.create(expected('store-001', ['api-store-001', 'web-store-001']));
    // An unrelated ConfigMap in the same namespace is not read as a list.
    cli.server.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'other', namespace: 'argocd' },
      data: { applications: 'ghost\n' },
    });
    // (this path runs on the real clock: the agent reported just now)
    cli.server.store.create(mirroredApp('store-001', 'api-store-001', new Date().toISOString()));

    const { code, doc } = await runJson([]);
    expect(code).toBe(1);
    expect(
      doc.items.map((g) => [g.kind, g.namespace, g.rows.map((r) => `${r.cluster}/${r.application}:${r.state}`)]),
    ).toStrictEqual([
      ['AgentApplications', 'store-001', ['store-001/web-store-001:Missing', 'store-001/api-store-001:Healthy']],
    ]);
    expect(doc.items[0].rows[0].message).toContain(
      'from its folder dist/hub/spokes/store-001/ (expected by argocd/pullfleet-expected-store-001)',
    );

    // Once the spoke's Argo CD creates the Application and the principal mirrors it, the row follows its status.
    cli.server.store.create(mirroredApp('store-001', 'web-store-001', new Date().toISOString()));
    const after = await runJson(['-n', 'store-001']);
    expect(after.code).toBe(0);
    expect(after.doc.items.map((g) => g.rows.map((r) => `${r.cluster}/${r.application}:${r.state}`))).toStrictEqual([
      ['store-001/api-store-001:Healthy', 'store-001/web-store-001:Healthy'],
    ]);
  });
});
