import { describe, expect, test } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import {
  EXIT_OK,
  EXIT_PROBLEMS,
  formatAge,
  groupFromReport,
  groupFromStaticRows,
  renderOutput,
  renderStatus,
  shortRevision,
  statusExitCode,
  useColor,
  type StatusGroup,
} from '../../../src/cli/support/status-render.js';
import { computeFleetReport, staticApplicationRows } from '../../../src/model/report/report.js';
import { applicationSet, decision, hubApp, NOW, work, type Feedback } from '../../model/report/fixtures.js';
import { expectGolden } from '../../support/golden.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const healthy: Feedback = {
  health: 'Healthy',
  sync: 'Synced',
  revision: SHA,
  phase: 'Succeeded',
  startedAt: '2026-01-01T00:50:00Z',
  reconciledAt: '2026-01-01T00:58:30Z',
};

function guestbookGroup(): StatusGroup {
  const result = computeFleetReport({
    applicationSet: applicationSet(),
    decisions: [
      decision('prod-decision-1', ['east', 'north', 'south', 'west']),
      decision('prod-decision-2', ['central']),
    ],
    applications: ['east', 'west', 'south', 'central'].map((cluster) => hubApp(cluster)),
    works: [
      work('east', healthy, { applied: 'True', available: 'True' }),
      work('west', {
        ...healthy,
        sync: 'OutOfSync',
        phase: 'Failed',
        message:
          'one or more objects failed to apply, reason: Deployment.apps "web" is invalid:\n  spec.replicas: must be >= 0',
      }),
      work('south', { ...healthy, health: 'Progressing', revision: 'v1.2.3', reconciledAt: '2026-01-01T00:59:50Z' }),
      work('central', { ...healthy, reconciledAt: '2026-01-01T00:30:00Z' }),
    ],
    now: NOW,
  })!;
  return groupFromReport(result.report);
}

function allHealthyGroup(): StatusGroup {
  const result = computeFleetReport({
    applicationSet: applicationSet({ name: 'metrics', placement: 'all' }),
    decisions: [decision('all-decision-1', ['east'], 'all')],
    applications: [hubApp('east', 'metrics')],
    works: [work('east', healthy, { appSet: 'metrics' })],
    now: NOW,
  })!;
  return groupFromReport(result.report);
}

describe('pullfleet status: table output', () => {
  test('golden: a report with every kind of problem, problems first', () => {
    expectGolden('status-plain.txt', renderStatus([allHealthyGroup(), guestbookGroup()], { now: NOW, color: false }));
  });

  test('golden: static applications get an APPLICATION column', () => {
    const rows = staticApplicationRows(
      [hubApp('east', 'web'), hubApp('west', 'web')],
      [work('east', healthy, { appSet: 'web' })],
      NOW,
    );
    expectGolden('status-static.txt', renderStatus([groupFromStaticRows('argocd', rows)], { now: NOW, color: false }));
  });

  test('colour wraps cells without shifting columns', () => {
    const plain = renderStatus([guestbookGroup()], { now: NOW, color: false });
    const coloured = renderStatus([guestbookGroup()], { now: NOW, color: true });
    expect(coloured).toContain('\u001b[31mDegraded\u001b[39m');
    expect(coloured).toContain('\u001b[32mHealthy\u001b[39m');
    // eslint-disable-next-line no-control-regex
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(plain);
  });

  test('rows a large report left out are mentioned under the summary', () => {
    const report = computeFleetReport({
      applicationSet: applicationSet(),
      decisions: [decision('d', ['a', 'b', 'c'])],
      applications: ['a', 'b', 'c'].map((c) => hubApp(c)),
      works: ['a', 'b', 'c'].map((c) => work(c, healthy)),
      now: NOW,
      maxRowsBytes: 600,
    })!.report;
    const text = renderStatus([groupFromReport(report)], { now: NOW, color: false });
    expect(text.split('\n')[1]).toBe(
      `3 clusters · 3 healthy · 3 synced, 0 out of sync · ${report.status!.omittedRows} least interesting rows not stored (report size limit)`,
    );
    expect(report.status!.omittedRows).toBeGreaterThan(0);
  });

  test('no reports at all says so', () => {
    expect(renderStatus([], { now: NOW, color: false })).toBe('No fleet reports found.\n');
  });
});

describe('pullfleet status: json and yaml', () => {
  test('golden: json lists groups problems first with a problem count', () => {
    expectGolden(
      'status.json',
      renderOutput([allHealthyGroup(), guestbookGroup()], 'json', { now: NOW, color: false }),
    );
  });

  test('yaml carries the same document as json', () => {
    const groups = [allHealthyGroup(), guestbookGroup()];
    const json: unknown = JSON.parse(renderOutput(groups, 'json', { now: NOW, color: false }));
    expect(parseYaml(renderOutput(groups, 'yaml', { now: NOW, color: false }))).toStrictEqual(json);
  });
});

describe('pullfleet status: exit codes', () => {
  test('all healthy exits 0', () => {
    expect(statusExitCode([allHealthyGroup()])).toBe(EXIT_OK);
  });

  test('anything degraded, missing or stale exits 1', () => {
    expect(statusExitCode([allHealthyGroup(), guestbookGroup()])).toBe(EXIT_PROBLEMS);
  });

  test.each([
    ['Degraded', EXIT_PROBLEMS],
    ['Missing', EXIT_PROBLEMS],
    ['Stale', EXIT_PROBLEMS],
    ['Progressing', EXIT_OK],
    ['Unknown', EXIT_OK],
  ] as const)('a single %s row exits %d', (state, code) => {
    expect(statusExitCode([groupFromStaticRows('argocd', [{ cluster: 'east', state }])])).toBe(code);
  });

  test('an out-of-sync but healthy cluster does not fail the gate', () => {
    expect(
      statusExitCode([groupFromStaticRows('argocd', [{ cluster: 'east', state: 'Healthy', syncStatus: 'OutOfSync' }])]),
    ).toBe(EXIT_OK);
  });
});

describe('helpers', () => {
  test.each([
    [0, '0s'],
    [-5000, '0s'],
    [59_999, '59s'],
    [60_000, '1m'],
    [3_599_000, '59m'],
    [3_600_000, '1h'],
    [47 * 3_600_000, '47h'],
    [48 * 3_600_000, '2d'],
  ])('formatAge(%d) is %s', (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });

  test.each([
    [undefined, '-'],
    [SHA, '0123456'],
    ['v1.2.3', 'v1.2.3'],
    ['a-very-long-chart-version-name', 'a-very-long-cha…'],
  ])('shortRevision(%s) is %s', (revision, text) => {
    expect(shortRevision(revision)).toBe(text);
  });

  test.each([
    [{ isTTY: true }, {}, true],
    [{ isTTY: false }, {}, false],
    [{}, {}, false],
    [{ isTTY: true }, { NO_COLOR: '1' }, false],
    [{ isTTY: true }, { TERM: 'dumb' }, false],
    [{ isTTY: false }, { FORCE_COLOR: '1' }, true],
    [{ isTTY: true }, { NO_COLOR: '1', FORCE_COLOR: '1' }, false],
  ])('useColor(%j, %j) is %s', (stream, env, expected) => {
    expect(useColor(stream, env as NodeJS.ProcessEnv)).toBe(expected);
  });
});
