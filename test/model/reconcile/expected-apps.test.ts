import { describe, expect, test } from '@jest/globals';
import { agentApplicationRows } from '../../../src/model/report/report.js';
import {
  buildExpectedApplicationsConfigMap,
  EXPECTED_APPLICATIONS_KEY,
  EXPECTED_APPLICATIONS_LABEL,
  expectedApplicationsName,
  parseExpectedApplications,
  type ExpectedApplications,
} from '../../../src/model/reconcile/expected-apps.js';
import { agentApp, mirrored } from '../report/agent-fixtures.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const FRESH = '2026-01-01T00:59:00Z';

/** An autonomous Application as the principal mirrors it: in the namespace named after the agent. */
function mirroredApp(cluster: string, name: string, health = 'Healthy') {
  const app = agentApp(cluster, mirrored({ sync: 'Synced', health, reconciledAt: FRESH }), {
    model: 'agent-autonomous',
    namespace: cluster,
    owned: false,
  });
  app.metadata.name = name;
  return app;
}

function expectation(cluster: string, applications: string[]): ExpectedApplications {
  return {
    cluster,
    applications,
    folder: `dist/hub/spokes/${cluster}`,
    source: `argocd/pullfleet-expected-${cluster}`,
  };
}

describe('expected-Application lists of agent-autonomous spokes', () => {
  test('GIVEN a spoke and its folder Applications WHEN built THEN one ConfigMap in the Argo CD namespace, names sorted one per line', () => {
    const configMap = buildExpectedApplicationsConfigMap({
      spoke: 'store-001',
      namespace: 'argocd',
      applications: ['web-store-001', 'api-store-001', 'web-store-001'],
      folder: 'dist/hub/spokes/store-001',
    });
    expect(configMap).toStrictEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'pullfleet-expected-store-001',
        namespace: 'argocd',
        labels: { 'app.kubernetes.io/managed-by': 'pullfleet', 'pullfleet.io/expected-applications-for': 'store-001' },
      },
      data: { applications: 'api-store-001\nweb-store-001\n', folder: 'dist/hub/spokes/store-001' },
    });
  });

  test('GIVEN the longest spoke name WHEN named THEN the ConfigMap name fits 253 characters and stays distinct', () => {
    const spoke = 'a'.repeat(63);
    expect(expectedApplicationsName(spoke)).toBe(`pullfleet-expected-${spoke}`);
    const long = expectedApplicationsName('b'.repeat(300));
    expect(long.length).toBeLessThanOrEqual(253);
    expect(long).not.toBe(expectedApplicationsName(`${'b'.repeat(299)}c`));
  });

  test('GIVEN a built ConfigMap WHEN parsed back THEN the same spoke, names and folder', () => {
    const configMap = buildExpectedApplicationsConfigMap({
      spoke: 'store-001',
      namespace: 'argocd',
      applications: ['b', 'a'],
      folder: 'fleet/dist/hub/spokes/store-001',
    });
    expect(parseExpectedApplications(configMap)).toStrictEqual({
      expected: {
        cluster: 'store-001',
        applications: ['a', 'b'],
        folder: 'fleet/dist/hub/spokes/store-001',
        source: 'argocd/pullfleet-expected-store-001',
      },
    });
  });

  test('GIVEN blank lines, spaces and duplicates WHEN parsed THEN they are ignored', () => {
    const parsed = parseExpectedApplications({
      metadata: { name: 'x', namespace: 'argocd', labels: { [EXPECTED_APPLICATIONS_LABEL]: 'store-001' } },
      data: { [EXPECTED_APPLICATIONS_KEY]: '\n  web \nweb\r\napi\n\n' },
    });
    expect(parsed.expected?.applications).toStrictEqual(['api', 'web']);
    expect(parsed.expected?.folder).toBeUndefined();
  });

  test('fails when a line is not an Application name: the whole list is refused, naming the ConfigMap, the line and the fix', () => {
    const parsed = parseExpectedApplications({
      metadata: {
        name: 'pullfleet-expected-store-001',
        namespace: 'argocd',
        labels: { [EXPECTED_APPLICATIONS_LABEL]: 'store-001' },
      },
      data: { [EXPECTED_APPLICATIONS_KEY]: 'api\nNot An App!\n' },
    });
    expect(parsed.expected).toBeUndefined();
    expect(parsed.cluster).toBe('store-001');
    expect(parsed.problem).toMatch(
      /^expected-Application list argocd\/pullfleet-expected-store-001 of spoke "store-001", line 2: "Not An App!" is not an Application name .*: sync the hub Application that applies dist\/<hub>\/hub\//,
    );
  });

  test('fails when the applications key is missing or not a string', () => {
    for (const data of [undefined, null, {}, { [EXPECTED_APPLICATIONS_KEY]: 42 }]) {
      const parsed = parseExpectedApplications({
        metadata: { name: 'm', namespace: 'argocd', labels: { [EXPECTED_APPLICATIONS_LABEL]: 'store-001' } },
        data,
      });
      expect(parsed.problem).toMatch(
        /^expected-Application list argocd\/m of spoke "store-001" has no data key "applications"/,
      );
    }
  });

  test('fails when the spoke label is empty or not a spoke name', () => {
    const cases: Array<Record<string, string>> = [
      {},
      { [EXPECTED_APPLICATIONS_LABEL]: '' },
      { [EXPECTED_APPLICATIONS_LABEL]: 'Store_1' },
    ];
    for (const labels of cases) {
      const parsed = parseExpectedApplications({
        metadata: { name: 'm', namespace: 'argocd', labels },
        data: { [EXPECTED_APPLICATIONS_KEY]: 'a\n' },
      });
      expect(parsed.expected).toBeUndefined();
      expect(parsed.problem).toMatch(
        /^expected-Application list argocd\/m: label pullfleet.io\/expected-applications-for ".*" is not a spoke name/,
      );
    }
  });

  test('GIVEN no metadata at all WHEN parsed THEN a problem, no crash', () => {
    expect(parseExpectedApplications({}).problem).toMatch(/^expected-Application list \/\(unnamed\)/);
  });
});

describe('report rows of agent-autonomous spokes with expected lists', () => {
  test('GIVEN an expected Application the principal mirrors WHEN rows are built THEN its row comes from the mirrored status', () => {
    const rows = agentApplicationRows([mirroredApp('store-001', 'api-store-001', 'Degraded')], NOW, undefined, [
      expectation('store-001', ['api-store-001']),
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      cluster: 'store-001',
      application: 'api-store-001',
      state: 'Degraded',
      healthStatus: 'Degraded',
      syncStatus: 'Synced',
    });
  });

  test('GIVEN an expected Application the principal does not mirror WHEN rows are built THEN Missing, naming the spoke folder and the bootstrap Application', () => {
    const rows = agentApplicationRows([mirroredApp('store-001', 'api-store-001')], NOW, undefined, [
      expectation('store-001', ['api-store-001', 'web-store-001']),
    ]);
    expect(rows.map((row) => [row.cluster, row.application, row.state])).toStrictEqual([
      ['store-001', 'api-store-001', 'Healthy'],
      ['store-001', 'web-store-001', 'Missing'],
    ]);
    expect(rows[1].message).toBe(
      "the argocd-agent principal mirrors no Application store-001/web-store-001: the spoke's Argo CD has not created it from its folder dist/hub/spokes/store-001/ (expected by argocd/pullfleet-expected-store-001); on spoke store-001 check the bootstrap Application argocd/pullfleet-spoke-apps (synced, pointing at that folder) and that the agent is connected to the principal",
    );
  });

  test('GIVEN a spoke none of whose Applications is mirrored WHEN rows are built THEN one Missing row per expected Application', () => {
    const rows = agentApplicationRows([], NOW, undefined, [expectation('store-002', ['b', 'a'])]);
    expect(rows.map((row) => `${row.cluster}/${row.application}:${row.state}`)).toStrictEqual([
      'store-002/a:Missing',
      'store-002/b:Missing',
    ]);
  });

  test('GIVEN a mirrored Application nobody expects WHEN rows are built THEN it keeps its row as before', () => {
    const stray = mirroredApp('store-001', 'hand-made');
    const withLists = agentApplicationRows([stray], NOW, undefined, [expectation('store-001', [])]);
    expect(withLists).toStrictEqual(agentApplicationRows([stray], NOW));
    expect(withLists.map((row) => `${row.cluster}/${row.application}:${row.state}`)).toStrictEqual([
      'store-001/hand-made:Healthy',
    ]);
  });

  test('GIVEN the expected name mirrored for another spoke WHEN rows are built THEN it does not count for this one', () => {
    const rows = agentApplicationRows([mirroredApp('store-009', 'api')], NOW, undefined, [
      expectation('store-001', ['api']),
    ]);
    expect(rows.map((row) => `${row.cluster}/${row.application}:${row.state}`)).toStrictEqual([
      'store-001/api:Missing',
      'store-009/api:Healthy',
    ]);
  });

  test('GIVEN a mirrored Application without the delivery-model label WHEN it is expected THEN it still counts as present', () => {
    const app = mirroredApp('store-001', 'api');
    app.metadata.labels = {};
    const rows = agentApplicationRows([app], NOW, undefined, [expectation('store-001', ['api'])]);
    expect(rows.map((row) => `${row.cluster}/${row.application}:${row.state}`)).toStrictEqual([
      'store-001/api:Healthy',
    ]);
  });

  test('GIVEN two lists naming the same spoke and Application WHEN rows are built THEN one row', () => {
    const rows = agentApplicationRows([], NOW, undefined, [
      expectation('store-001', ['api']),
      expectation('store-001', ['api']),
    ]);
    expect(rows).toHaveLength(1);
  });
});
