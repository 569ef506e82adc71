/** What the report reconciler writes of a FleetReport: its object without status, and its status write. */
import { describe, expect, test } from '@jest/globals';
import {
  computeFleetReport,
  fleetReportShell,
  fleetReportStatusWrite,
  type FleetReport,
} from '../../../src/model/report/report.js';
import { applicationSet, decision, healthy, hubApp, NOW, work } from './fixtures.js';

function report(): FleetReport {
  const result = computeFleetReport({
    applicationSet: applicationSet(),
    decisions: [decision('prod-decision-1', ['east'])],
    applications: [hubApp('east')],
    works: [work('east', healthy, { applied: 'True', available: 'True' })],
    now: NOW,
  });
  if (!result) throw new Error('expected a report');
  return result.report;
}

describe('fleetReportShell', () => {
  test('GIVEN a report THEN the shell is the report without its status', () => {
    const { status: _status, ...rest } = report();
    expect(fleetReportShell(report())).toStrictEqual(rest);
  });
});

describe('fleetReportStatusWrite', () => {
  test('GIVEN no status known on the server THEN the write carries the identity and status only', () => {
    const full = report();
    expect(fleetReportStatusWrite(full, undefined)).toStrictEqual({
      apiVersion: full.apiVersion,
      kind: full.kind,
      metadata: { name: full.metadata.name, namespace: full.metadata.namespace },
      status: full.status,
    });
  });

  test('GIVEN the server holds the same status, keys in another order THEN there is nothing to write', () => {
    const full = report();
    const reordered = Object.fromEntries(Object.entries(full.status!).reverse()) as typeof full.status;
    expect(fleetReportStatusWrite(full, reordered)).toBeUndefined();
  });

  test('GIVEN the server holds another status THEN the status is written', () => {
    const full = report();
    const held = { ...full.status!, clusters: [] };
    expect(fleetReportStatusWrite(full, held)?.status).toStrictEqual(full.status);
  });
});
