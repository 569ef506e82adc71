import { describe, expect, test } from '@jest/globals';
import { Ajv } from 'ajv';
import { type JsonObject } from '../../../src/model/core/types.js';
import {
  FLEET_REPORT_STATES,
  fleetReportCrd,
  fleetReportRbacRules,
  fleetReportSchema,
} from '../../../src/model/report/report-crd.js';
import { computeFleetReport } from '../../../src/model/report/report.js';
import { applicationSet, decision, hubApp, work } from './fixtures.js';

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
};

/** Paths of `value` that the schema does not declare (a real API server would silently prune them). */
function undeclared(value: unknown, schema: Schema, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => undeclared(item, schema.items ?? {}, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    if (!schema.properties) return [];
    return Object.entries(value).flatMap(([key, inner]) =>
      schema.properties![key] ? undeclared(inner, schema.properties![key], `${path}.${key}`) : [`${path}.${key}`],
    );
  }
  return [];
}

/** Paths in the schema without a type (a structural schema needs one everywhere). */
function untyped(schema: Schema, path = ''): string[] {
  const own = schema.type ? [] : [path || '.'];
  const props = Object.entries(schema.properties ?? {}).flatMap(([key, inner]) => untyped(inner, `${path}.${key}`));
  const items = schema.items ? untyped(schema.items, `${path}[]`) : [];
  return [...own, ...props, ...items];
}

/** A report with every row field filled somewhere. */
function fullReport() {
  const now = new Date('2026-01-01T01:00:00Z');
  return computeFleetReport({
    applicationSet: applicationSet(),
    decisions: [decision('d', ['east', 'west', 'north', 'south'])],
    applications: [hubApp('east'), hubApp('west'), hubApp('south')],
    works: [
      work(
        'east',
        {
          health: 'Healthy',
          sync: 'OutOfSync',
          revision: 'abc',
          phase: 'Failed',
          startedAt: '2026-01-01T00:50:00Z',
          message: 'boom',
          reconciledAt: '2026-01-01T00:59:00Z',
        },
        { applied: 'True', available: 'True' },
      ),
      work('west', { health: 'Healthy', reconciledAt: '2026-01-01T00:10:00Z' }, { applied: 'False' }),
    ],
    now,
  })!.report;
}

describe('FleetReport CRD', () => {
  test('is a namespaced apiextensions.k8s.io/v1 CRD with a status subresource, short name and printer columns', () => {
    const crd = fleetReportCrd() as {
      apiVersion: string;
      metadata: { name: string };
      spec: {
        group: string;
        scope: string;
        names: JsonObject;
        versions: Array<{
          name: string;
          served: boolean;
          storage: boolean;
          subresources: JsonObject;
          additionalPrinterColumns: Array<{ name: string; jsonPath: string }>;
        }>;
      };
    };
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata.name).toBe('fleetreports.pullfleet.io');
    expect([crd.spec.group, crd.spec.scope]).toStrictEqual(['pullfleet.io', 'Namespaced']);
    expect(crd.spec.names).toStrictEqual({
      kind: 'FleetReport',
      listKind: 'FleetReportList',
      plural: 'fleetreports',
      singular: 'fleetreport',
      shortNames: ['fr'],
      categories: ['pullfleet'],
    });
    const [version] = crd.spec.versions;
    expect([version.name, version.served, version.storage, version.subresources]).toStrictEqual([
      'v1alpha1',
      true,
      true,
      { status: {} },
    ]);
    expect(version.additionalPrinterColumns.map((c) => `${c.name}=${c.jsonPath}`)).toStrictEqual([
      'Clusters=.status.summary.clusters',
      'Synced=.status.summary.synced',
      'Healthy=.status.summary.healthy',
      'Degraded=.status.summary.degraded',
      'Missing=.status.summary.missing',
      'Stale=.status.summary.stale',
      'Ready=.status.conditions[?(@.type=="Ready")].status',
      'Age=.metadata.creationTimestamp',
    ]);
  });

  test('the schema is structural: every property has a type', () => {
    expect(untyped(fleetReportSchema() as Schema)).toStrictEqual([]);
  });

  test('every field a computed report carries is declared, so the API server prunes nothing', () => {
    const report = fullReport();
    expect(report.status!.clusters.map((row) => row.state)).toStrictEqual([
      'Degraded',
      'Missing',
      'Missing',
      'Degraded',
    ]);
    expect(undeclared(report, fleetReportSchema() as Schema)).toStrictEqual([]);
  });

  test('a computed report validates against the schema; a wrong state and string counts do not', () => {
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const validate = ajv.compile(fleetReportSchema());
    const report = fullReport();
    expect(validate(report)).toBe(true);
    const broken = structuredClone(report) as unknown as {
      status: { summary: { clusters: unknown }; clusters: Array<{ state: string }> };
    };
    broken.status.summary.clusters = '4';
    broken.status.clusters[0].state = 'Fine';
    expect(validate(broken)).toBe(false);
    expect(validate.errors!.map((e) => e.instancePath).sort()).toStrictEqual([
      '/status/clusters/0/state',
      '/status/summary/clusters',
    ]);
  });

  test('the row state enum is the display order', () => {
    expect([...FLEET_REPORT_STATES]).toStrictEqual([
      'Degraded',
      'Missing',
      'Stale',
      'Unknown',
      'Progressing',
      'Healthy',
    ]);
  });

  test('RBAC rules grant what the reconciler does and nothing more, ACM reports only when asked', () => {
    expect(fleetReportRbacRules()).toStrictEqual([
      { apiGroups: ['pullfleet.io'], resources: ['fleetreports'], verbs: ['create', 'delete', 'patch'] },
      { apiGroups: ['pullfleet.io'], resources: ['fleetreports/status'], verbs: ['patch'] },
    ]);
    expect(fleetReportRbacRules(true)[2]).toStrictEqual({
      apiGroups: ['apps.open-cluster-management.io'],
      resources: ['multiclusterapplicationsetreports'],
      verbs: ['create', 'delete', 'patch'],
    });
  });
});
