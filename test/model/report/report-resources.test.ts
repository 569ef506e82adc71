import { describe, expect, test } from '@jest/globals';
import { Ajv } from 'ajv';
import { type Condition, type ManifestWork } from '../../../src/model/core/types.js';
import { fleetReportSchema } from '../../../src/model/report/report-crd.js';
import { MAX_ROWS_BYTES, computeFleetReport, fitRows, type FleetReportRow } from '../../../src/model/report/report.js';
import {
  RESOURCE_SUMMARY_CONDITION,
  RESOURCE_SUMMARY_HEADER,
  resourceSummaryExpression,
  resourceSummaryRule,
} from '../../../src/model/reconcile/resource-summary.js';
import { evaluateCel } from '../../support/cel.js';
import { spokeApplication, type SpokeAppOptions } from '../../support/spoke-apps.js';
import { NS, applicationSet, decision, hubApp, work, type Feedback } from './fixtures.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const FRESH: Feedback = { health: 'Healthy', sync: 'Synced', revision: 'abc', reconciledAt: '2026-01-01T00:59:00Z' };
const DEGRADED: Feedback = { ...FRESH, health: 'Degraded' };

const messages = new Map<string, string>();
/** The summary the agent reports for a spoke app like `options` (evaluated with CEL once per shape). */
function summaryOf(options: SpokeAppOptions): string {
  const key = JSON.stringify(options);
  let message = messages.get(key);
  if (message === undefined) {
    message = evaluateCel(resourceSummaryExpression(), {
      object: spokeApplication(options).object,
      result: true,
    }) as string;
    messages.set(key, message);
  }
  return message;
}

/** A fixture work that asks for the summary, with the agent's summary condition (or an error message) on it. */
function withSummary(base: ManifestWork, message: string | undefined, reason = 'ConditionRuleEvaluated'): ManifestWork {
  base.spec.manifestConfigs = [
    {
      resourceIdentifier: {
        group: 'argoproj.io',
        resource: 'applications',
        namespace: NS,
        name: base.status!.resourceStatus!.manifests![0].resourceMeta!.name!,
      },
      conditionRules: [resourceSummaryRule()],
    } as never,
  ];
  if (message !== undefined) {
    const condition: Condition = { type: RESOURCE_SUMMARY_CONDITION, status: 'True', reason, message };
    base.status!.resourceStatus!.manifests![0].conditions = [condition];
  }
  return base;
}

function rowFor(w: ManifestWork, cluster = 'east'): FleetReportRow {
  const report = computeFleetReport({
    applicationSet: applicationSet(),
    decisions: [decision('d', [cluster])],
    applications: [hubApp(cluster)],
    works: [w],
    now: NOW,
  })!.report;
  return report.status!.clusters[0];
}

describe('resource summaries in fleet report rows', () => {
  test('GIVEN a reported summary THEN the row has the counts, the first problem resources worst first, and the images', () => {
    const message = summaryOf({
      resources: 40,
      degraded: 2,
      missing: 1,
      outOfSync: 3,
      images: ['nginx:1.25', 'redis:7'],
    });
    const row = rowFor(withSummary(work('east', DEGRADED), message));
    expect(row.resources).toStrictEqual({ total: 40, healthy: 37, degraded: 2, missing: 1, outOfSync: 4 });
    expect(row.problemResources).toStrictEqual([
      {
        kind: 'Deployment',
        namespace: 'shop',
        name: 'component-0',
        health: 'Degraded',
        sync: 'Synced',
        message: 'Deployment "component-0" exceeded its progress deadline',
      },
      {
        kind: 'Deployment',
        namespace: 'shop',
        name: 'component-4',
        health: 'Degraded',
        sync: 'Synced',
        message: 'Deployment "component-4" exceeded its progress deadline',
      },
      { kind: 'Deployment', namespace: 'shop', name: 'component-8', health: 'Missing', sync: 'OutOfSync' },
    ]);
    expect(row.images).toStrictEqual(['nginx:1.25', 'redis:7']);
    expect(row.resourceMessage).toBeUndefined();
    expect(row.state).toBe('Degraded');
  });

  test('GIVEN an agent that rejects the rule, or one that reports no summary THEN the row says so and keeps its state from feedback', () => {
    const rejected = rowFor(
      withSummary(
        work('east', FRESH),
        "ERROR: <input>:1:1: undeclared reference to 'join'",
        'ConditionRuleExpressionError',
      ),
    );
    expect(rejected).toMatchObject({
      state: 'Healthy',
      resourceMessage:
        "the work agent could not build the resource summary: ERROR: <input>:1:1: undeclared reference to 'join'",
    });
    expect(rejected.resources).toBeUndefined();
    const silent = rowFor(withSummary(work('east', FRESH, { available: 'True' }), undefined));
    expect(silent).toMatchObject({
      state: 'Healthy',
      resourceMessage:
        'the work agent reports no resource summary (conditionRules need OCM 1.0 or later); scalar status still flows',
    });
  });

  test('GIVEN a summary cut for size THEN the row says how many resources it could not name', () => {
    const cut = `${RESOURCE_SUMMARY_HEADER} resources=900 Healthy=800 Degraded=100 OutOfSync=0 images=0\nimages \nD- apps/v1/Deployment/shop/a\nD- apps/v1/Deployment/shop/b\nD- ap`;
    const row = rowFor(withSummary(work('east', DEGRADED), cut));
    expect(row.resources).toStrictEqual({ total: 900, healthy: 800, degraded: 100 });
    expect(row.problemResources?.map((r) => r.name)).toStrictEqual(['a', 'b']);
    expect(row.resourceMessage).toBe('the summary lists 2 of 900 resources, and 898 more, 98 of them Degraded');
  });

  test('rows with resources validate against the FleetReport schema', () => {
    const message = summaryOf({ resources: 40, degraded: 2, missing: 1, outOfSync: 3, images: ['nginx:1.25'] });
    const report = computeFleetReport({
      applicationSet: applicationSet(),
      decisions: [decision('d', ['east'])],
      applications: [hubApp('east')],
      works: [withSummary(work('east', DEGRADED), message)],
      now: NOW,
    })!.report;
    const validate = new Ajv({ strict: false }).compile(fleetReportSchema());
    expect(validate(report)).toBe(true);
  });
});

describe('the report size budget with resource details', () => {
  test('GIVEN rows over budget THEN resource details of the least interesting rows go before any row does', () => {
    const row = (cluster: string, state: FleetReportRow['state']): FleetReportRow => ({
      cluster,
      state,
      syncStatus: 'Synced',
      resources: { total: 200, healthy: 200 },
      images: ['registry.example.com/shop/cart:1.4.2', 'registry.example.com/shop/web:2.0.1'],
      ...(state === 'Degraded'
        ? { problemResources: [{ kind: 'Deployment', namespace: 'shop', name: 'cart', health: 'Degraded' }] }
        : {}),
    });
    const rows = [row('a', 'Healthy'), row('b', 'Degraded'), row('c', 'Healthy')];
    const full = JSON.stringify(rows).length;
    const { kept, omitted, omittedDetails } = fitRows(rows, full - 50);
    expect(omitted).toBe(0);
    expect(omittedDetails).toBe(1);
    expect(kept.find((r) => r.cluster === 'c')!.images).toBeUndefined();
    expect(kept.find((r) => r.cluster === 'b')!.problemResources).toHaveLength(1);
    expect(kept.every((r) => r.resources?.total === 200)).toBe(true);
  });

  test('GIVEN 2,000 clusters of 200 resources each, a tenth degraded THEN the report stays under its budget and keeps every degraded row with its resources', () => {
    const clusters = Array.from({ length: 2000 }, (_, i) => `cluster-${String(i).padStart(4, '0')}`);
    const images = ['registry.example.com/shop/cart:1.4.2', 'registry.example.com/shop/web:2.0.1'];
    const healthy = summaryOf({ resources: 200, images });
    const degraded = summaryOf({ resources: 200, degraded: 3, outOfSync: 2, images });
    const works = clusters.map((cluster, i) =>
      withSummary(work(cluster, i % 10 === 0 ? DEGRADED : FRESH), i % 10 === 0 ? degraded : healthy),
    );
    const report = computeFleetReport({
      applicationSet: applicationSet(),
      decisions: [decision('d', clusters)],
      applications: clusters.map((cluster) => hubApp(cluster)),
      works,
      now: NOW,
    })!.report;
    const status = report.status!;
    expect(Buffer.byteLength(JSON.stringify(status.clusters))).toBeLessThanOrEqual(MAX_ROWS_BYTES);
    expect(status.summary).toMatchObject({ clusters: 2000, degraded: 200, healthy: 1800 });
    const degradedRows = status.clusters.filter((r) => r.state === 'Degraded');
    expect(degradedRows).toHaveLength(200);
    expect(degradedRows.every((r) => r.problemResources?.length === 3 && r.resources?.degraded === 3)).toBe(true);
    expect(status.clusters.every((r) => r.resources?.total === 200)).toBe(true);
  });
});
