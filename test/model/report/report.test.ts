import { describe, expect, test } from '@jest/globals';
import {
  computeFleetReport,
  computeRow,
  expectedClusters,
  feedbackState,
  fitRows,
  sameReportStatus,
  sortRowsProblemsFirst,
  staticApplicationRows,
  summarize,
  toMulticlusterApplicationSetReport,
  type FleetReportInput,
  type FleetReportRow,
  type FleetReportStatus,
} from '../../../src/model/report/report.js';
import { objectRuleFindings } from '../../../src/model/validation/object-rules.js';
import { APPSET, applicationSet, decision, hubApp, NS, work, type Feedback } from './fixtures.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const FRESH = '2026-01-01T00:59:00Z';
const OLD = '2026-01-01T00:40:00Z';
const healthy: Feedback = {
  health: 'Healthy',
  sync: 'Synced',
  revision: 'abc123',
  phase: 'Succeeded',
  startedAt: '2026-01-01T00:50:00Z',
  reconciledAt: FRESH,
};

function input(overrides: Partial<FleetReportInput> = {}): FleetReportInput {
  return { applicationSet: applicationSet(), decisions: [], applications: [], works: [], now: NOW, ...overrides };
}

function status(overrides: Partial<FleetReportInput> = {}): FleetReportStatus {
  const result = computeFleetReport(input(overrides));
  if (!result) throw new Error('expected a report');
  return result.report.status!;
}

describe('computeFleetReport: the minimal case', () => {
  test('one healthy synced cluster gives the full report object', () => {
    // GIVEN a pull ApplicationSet whose placement chose one cluster, with its app and a healthy work
    const result = computeFleetReport(
      input({
        decisions: [decision('prod-decision-1', ['east'])],
        applications: [hubApp('east')],
        works: [work('east', healthy, { applied: 'True', available: 'True' })],
      }),
    );
    // THEN the report names and is owned by the ApplicationSet, with one Healthy row and Ready=True
    expect(result).toStrictEqual({
      report: {
        apiVersion: 'pullfleet.io/v1alpha1',
        kind: 'FleetReport',
        metadata: {
          name: APPSET,
          namespace: NS,
          labels: { 'app.kubernetes.io/managed-by': 'pullfleet' },
          ownerReferences: [
            {
              apiVersion: 'argoproj.io/v1alpha1',
              kind: 'ApplicationSet',
              name: APPSET,
              uid: `${APPSET}-uid`,
              controller: true,
              blockOwnerDeletion: false,
            },
          ],
        },
        spec: { applicationSet: APPSET, staleAfterSeconds: 900 },
        status: {
          observedGeneration: 1,
          placements: ['prod'],
          summary: {
            clusters: 1,
            synced: 1,
            outOfSync: 0,
            healthy: 1,
            progressing: 0,
            degraded: 0,
            missing: 0,
            stale: 0,
            unknown: 0,
          },
          clusters: [
            {
              cluster: 'east',
              state: 'Healthy',
              application: 'east-guestbook',
              manifestWork: 'argocd-east-guestbook',
              workApplied: 'True',
              workAvailable: 'True',
              syncStatus: 'Synced',
              healthStatus: 'Healthy',
              revision: 'abc123',
              operationPhase: 'Succeeded',
              operationStartedAt: '2026-01-01T00:50:00Z',
              lastFeedbackTime: FRESH,
            },
          ],
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'AllSyncedAndHealthy',
              message: 'all 1 clusters are synced and healthy',
              observedGeneration: 1,
              lastTransitionTime: '2026-01-01T01:00:00Z',
            },
            {
              type: 'Degraded',
              status: 'False',
              reason: 'NoProblems',
              message: 'no cluster is degraded, missing or stale',
              observedGeneration: 1,
              lastTransitionTime: '2026-01-01T01:00:00Z',
            },
          ],
        },
      },
      // the row turns stale 900 s after its last feedback
      recheckAt: new Date('2026-01-01T01:14:00Z'),
    });
  });
});

describe('row state from feedback', () => {
  test.each<[string, Feedback, string]>([
    ['healthy and synced', { health: 'Healthy', sync: 'Synced' }, 'Healthy'],
    ['healthy but out of sync', { health: 'Healthy', sync: 'OutOfSync' }, 'Healthy'],
    ['suspended', { health: 'Suspended', sync: 'Synced' }, 'Healthy'],
    ['progressing health', { health: 'Progressing', sync: 'Synced' }, 'Progressing'],
    ['sync running', { health: 'Healthy', sync: 'OutOfSync', phase: 'Running' }, 'Progressing'],
    ['sync terminating', { health: 'Healthy', sync: 'OutOfSync', phase: 'Terminating' }, 'Progressing'],
    ['degraded health', { health: 'Degraded', sync: 'Synced' }, 'Degraded'],
    [
      'failed sync',
      { health: 'Healthy', sync: 'OutOfSync', phase: 'Failed', message: 'one or more objects failed to apply' },
      'Degraded',
    ],
    ['errored sync', { health: 'Healthy', sync: 'OutOfSync', phase: 'Error' }, 'Degraded'],
    ['failed sync beats running health', { health: 'Progressing', phase: 'Failed' }, 'Degraded'],
    ['resources missing, nothing running', { health: 'Missing', sync: 'OutOfSync' }, 'Degraded'],
    ['resources missing while syncing', { health: 'Missing', sync: 'OutOfSync', phase: 'Running' }, 'Progressing'],
    ['unknown health', { health: 'Unknown', sync: 'Unknown' }, 'Unknown'],
    ['only a revision', { revision: 'abc' }, 'Unknown'],
  ])('%s is %s', (_what, feedback, expected) => {
    const { row } = computeRow('east', hubApp('east'), [work('east', { ...feedback, reconciledAt: FRESH })], NOW, 600);
    expect(row.state).toBe(expected);
  });

  test('no feedback at all is Unknown', () => {
    expect(feedbackState(undefined)).toBe('Unknown');
  });
});

describe('row state from existence, the work and staleness', () => {
  test('a cluster without a hub Application is Missing and names the cluster Secret fix', () => {
    const { row } = computeRow('east', undefined, [], NOW, 600, APPSET);
    expect(row).toStrictEqual({
      cluster: 'east',
      state: 'Missing',
      message:
        'ApplicationSet guestbook has not generated an Application for cluster east (an Argo CD cluster Secret named "east" must exist on the hub)',
    });
  });

  test('an Application without a ManifestWork is Missing and carries the delivery error', () => {
    const app = hubApp('east');
    app.status = { conditions: [{ type: 'DeliveryError', message: 'ManagedCluster east does not exist' }] };
    const { row } = computeRow('east', app, [], NOW, 600);
    expect(row).toStrictEqual({
      cluster: 'east',
      state: 'Missing',
      application: 'east-guestbook',
      manifestWork: 'argocd-east-guestbook',
      message: 'ManifestWork east/argocd-east-guestbook does not exist: ManagedCluster east does not exist',
    });
  });

  test('a work in another cluster namespace does not count', () => {
    const elsewhere = work('east', healthy);
    elsewhere.metadata.namespace = 'west';
    expect(computeRow('east', hubApp('east'), [elsewhere], NOW, 600).row.state).toBe('Missing');
  });

  test('a work named differently is found through its hub-application annotations', () => {
    const renamed = work('east', healthy);
    renamed.metadata.name = 'east-guestbook-1a2b3';
    renamed.metadata.annotations = {
      'apps.open-cluster-management.io/hub-application-namespace': NS,
      'apps.open-cluster-management.io/hub-application-name': 'east-guestbook',
    };
    const { row } = computeRow('east', hubApp('east'), [renamed], NOW, 600);
    expect([row.state, row.manifestWork]).toStrictEqual(['Healthy', 'east-guestbook-1a2b3']);
  });

  test('a work that is not applied is Degraded even with healthy (old) feedback', () => {
    const { row } = computeRow(
      'east',
      hubApp('east'),
      [work('east', { ...healthy, reconciledAt: OLD }, { applied: 'False' })],
      NOW,
      600,
    );
    expect([row.state, row.workApplied, row.message]).toStrictEqual([
      'Degraded',
      'False',
      'ManifestWork not applied on the spoke: Failed to apply manifest: forbidden',
    ]);
  });

  test('a work reporting Degraded=True is Degraded', () => {
    const degraded = work('east', healthy, {
      applied: 'True',
      extraConditions: [{ type: 'Degraded', status: 'True', reason: 'Broken', message: 'agent unhappy' }],
    });
    const { row } = computeRow('east', hubApp('east'), [degraded], NOW, 600);
    expect([row.state, row.message]).toStrictEqual(['Degraded', 'ManifestWork reports Degraded: agent unhappy']);
  });

  test('feedback older than the threshold is Stale, keeping the last known values', () => {
    const { row, staleAt } = computeRow(
      'east',
      hubApp('east'),
      [work('east', { ...healthy, reconciledAt: OLD })],
      NOW,
      600,
    );
    expect(row).toMatchObject({
      state: 'Stale',
      syncStatus: 'Synced',
      healthStatus: 'Healthy',
      lastFeedbackTime: OLD,
      message: `no status feedback from the spoke since ${OLD} (threshold 600s)`,
    });
    expect(staleAt).toBeUndefined();
  });

  test('feedback exactly at the threshold is Stale; one second younger is not', () => {
    expect(
      computeRow('east', hubApp('east'), [work('east', { ...healthy, reconciledAt: '2026-01-01T00:50:00Z' })], NOW, 600)
        .row.state,
    ).toBe('Stale');
    expect(
      computeRow('east', hubApp('east'), [work('east', { ...healthy, reconciledAt: '2026-01-01T00:50:01Z' })], NOW, 600)
        .row.state,
    ).toBe('Healthy');
  });

  test('a young work without feedback is Unknown and waits; an old one is Stale', () => {
    const young = computeRow(
      'east',
      hubApp('east'),
      [work('east', undefined, { created: '2026-01-01T00:58:00Z' })],
      NOW,
      600,
    );
    expect([young.row.state, young.row.message, young.staleAt]).toStrictEqual([
      'Unknown',
      'waiting for the first status feedback from the spoke',
      Date.parse('2026-01-01T01:08:00Z'),
    ]);
    const old = computeRow(
      'east',
      hubApp('east'),
      [work('east', undefined, { created: '2026-01-01T00:00:00Z' })],
      NOW,
      600,
    );
    expect([old.row.state, old.row.message]).toStrictEqual([
      'Stale',
      'no status feedback from the spoke since the ManifestWork was created at 2026-01-01T00:00:00Z (threshold 600s)',
    ]);
  });

  test('feedback without reconciledAt cannot be judged stale', () => {
    const { row, staleAt } = computeRow(
      'east',
      hubApp('east'),
      [work('east', { health: 'Healthy', sync: 'Synced' })],
      NOW,
      600,
    );
    expect([row.state, row.lastFeedbackTime, staleAt]).toStrictEqual(['Healthy', undefined, undefined]);
  });

  test('a long operation message is cut to 512 characters', () => {
    const { row } = computeRow(
      'east',
      hubApp('east'),
      [work('east', { ...healthy, phase: 'Failed', message: 'x'.repeat(5000) })],
      NOW,
      600,
    );
    expect(row.operationMessage).toHaveLength(512);
    expect(row.operationMessage!.endsWith('…')).toBe(true);
  });
});

describe('expected clusters from PlacementDecisions', () => {
  test('decisions spread over several PlacementDecision objects are united, sorted and de-duplicated', () => {
    const first = Array.from({ length: 100 }, (_, i) => `c${String(i).padStart(3, '0')}`);
    const second = Array.from({ length: 50 }, (_, i) => `c${String(i + 100).padStart(3, '0')}`);
    const clusters = expectedClusters(applicationSet(), [
      decision('prod-decision-2', [...second, 'c000']),
      decision('prod-decision-1', first),
    ]);
    expect(clusters).toHaveLength(150);
    expect(clusters[0]).toBe('c000');
    expect(clusters[149]).toBe('c149');
  });

  test('decisions of other placements, other namespaces and local-cluster are ignored', () => {
    const clusters = expectedClusters(applicationSet(), [
      decision('prod-decision-1', ['east', 'local-cluster']),
      decision('staging-decision-1', ['west'], 'staging'),
      decision('prod-decision-1', ['north'], 'prod', 'team-b'),
    ]);
    expect(clusters).toStrictEqual(['east']);
  });

  test('generators nested in a matrix and matchExpressions selectors are followed', () => {
    const appSet = applicationSet();
    appSet.spec.generators = [
      {
        matrix: {
          generators: [
            {
              clusterDecisionResource: {
                configMapRef: 'ocm-placement-generator',
                labelSelector: {
                  matchExpressions: [
                    { key: 'cluster.open-cluster-management.io/placement', operator: 'In', values: ['prod', 'edge'] },
                  ],
                },
              },
            },
            { list: { elements: [{ x: '1' }] } },
          ],
        },
      },
    ];
    expect(
      expectedClusters(appSet, [
        decision('a', ['east'], 'prod'),
        decision('b', ['edge-1'], 'edge'),
        decision('c', ['west'], 'dev'),
      ]),
    ).toStrictEqual(['east', 'edge-1']);
  });
});

describe('the report across the fleet', () => {
  test('every state combination counts once, rows are stored by cluster', () => {
    // GIVEN seven expected clusters in every state
    const clusters = [
      'a-healthy',
      'b-drift',
      'c-progressing',
      'd-degraded',
      'e-missing-app',
      'f-missing-work',
      'g-stale',
      'h-unknown',
    ];
    const apps = clusters.filter((c) => c !== 'e-missing-app').map((c) => hubApp(c));
    const works = [
      work('a-healthy', healthy),
      work('b-drift', { ...healthy, sync: 'OutOfSync' }),
      work('c-progressing', { ...healthy, health: 'Progressing' }),
      work('d-degraded', { ...healthy, health: 'Degraded', sync: 'OutOfSync' }),
      work('g-stale', { ...healthy, reconciledAt: OLD }),
      work('h-unknown', undefined, { created: '2026-01-01T00:59:30Z' }),
    ];
    // WHEN the report is computed (decisions listed in reverse order)
    const s = status({ decisions: [decision('d1', [...clusters].reverse())], applications: apps, works });
    // THEN rows follow cluster order and each has its state
    expect(s.clusters.map((row) => [row.cluster, row.state, row.syncStatus])).toStrictEqual([
      ['a-healthy', 'Healthy', 'Synced'],
      ['b-drift', 'Healthy', 'OutOfSync'],
      ['c-progressing', 'Progressing', 'Synced'],
      ['d-degraded', 'Degraded', 'OutOfSync'],
      ['e-missing-app', 'Missing', undefined],
      ['f-missing-work', 'Missing', undefined],
      ['g-stale', 'Stale', 'Synced'],
      ['h-unknown', 'Unknown', undefined],
    ]);
    // AND the counts are integers; state counts add up to clusters; stale sync does not count as synced
    expect(s.summary).toStrictEqual({
      clusters: 8,
      synced: 2,
      outOfSync: 2,
      healthy: 2,
      progressing: 1,
      degraded: 1,
      missing: 2,
      stale: 1,
      unknown: 1,
    });
    // AND the conditions explain it
    expect(s.conditions.map((c) => [c.type, c.status, c.reason, c.message])).toStrictEqual([
      [
        'Ready',
        'False',
        'NotAllSyncedAndHealthy',
        '1 of 8 clusters are synced and healthy; waiting for b-drift, c-progressing, d-degraded, e-missing-app, f-missing-work, g-stale, h-unknown',
      ],
      [
        'Degraded',
        'True',
        'ClustersDegraded',
        '1 degraded, 2 missing, 1 stale of 8 clusters: d-degraded, e-missing-app, f-missing-work, g-stale',
      ],
    ]);
  });

  test.each<[string, Partial<FleetReportInput>, string]>([
    ['missing only', { decisions: [decision('d', ['east'])] }, 'ClustersMissing'],
    [
      'stale only',
      {
        decisions: [decision('d', ['east'])],
        applications: [hubApp('east')],
        works: [work('east', { ...healthy, reconciledAt: OLD })],
      },
      'FeedbackStale',
    ],
  ])('the Degraded reason for %s is %s', (_what, overrides, reason) => {
    const degraded = status(overrides).conditions.find((c) => c.type === 'Degraded')!;
    expect([degraded.status, degraded.reason]).toStrictEqual(['True', reason]);
  });

  test('a placement that selects nothing gives an empty, not-Ready report', () => {
    const s = status({ decisions: [decision('d', [])] });
    expect(s.clusters).toStrictEqual([]);
    expect(s.summary.clusters).toBe(0);
    expect(s.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'NoClusters' });
    expect(s.conditions.find((c) => c.type === 'Degraded')).toMatchObject({ status: 'False' });
  });

  test('a cluster joining the placement appears as Missing until its app and work exist', () => {
    const before = status({
      decisions: [decision('d', ['east'])],
      applications: [hubApp('east')],
      works: [work('east', healthy)],
    });
    const after = status({
      decisions: [decision('d', ['east', 'west'])],
      applications: [hubApp('east')],
      works: [work('east', healthy)],
      previous: before,
    });
    expect(after.clusters.map((row) => [row.cluster, row.state])).toStrictEqual([
      ['east', 'Healthy'],
      ['west', 'Missing'],
    ]);
    expect(after.summary).toMatchObject({ clusters: 2, healthy: 1, missing: 1 });
  });

  test('a cluster leaving the placement drops out even while its app still exists', () => {
    const s = status({
      decisions: [decision('d', ['east'])],
      applications: [hubApp('east'), hubApp('west')],
      works: [work('east', healthy), work('west', healthy)],
    });
    expect(s.clusters.map((row) => row.cluster)).toStrictEqual(['east']);
    expect(s.summary.clusters).toBe(1);
  });

  test('apps of another ApplicationSet or without an owner are not rows of this one', () => {
    const foreign = hubApp('east', 'other');
    const orphan = hubApp('east');
    orphan.metadata.ownerReferences = [];
    const s = status({
      decisions: [decision('d', ['east'])],
      applications: [foreign, orphan],
      works: [work('east', healthy)],
    });
    expect(s.clusters.map((row) => row.state)).toStrictEqual(['Missing']);
  });

  test('an Application being deleted no longer counts', () => {
    const app = hubApp('east');
    app.metadata.deletionTimestamp = '2026-01-01T00:59:00Z';
    expect(
      status({ decisions: [decision('d', ['east'])], applications: [app], works: [work('east', healthy)] }).clusters[0]
        .state,
    ).toBe('Missing');
  });

  test('the recheck time is the earliest moment a row turns stale', () => {
    const result = computeFleetReport(
      input({
        decisions: [decision('d', ['east', 'west'])],
        applications: [hubApp('east'), hubApp('west')],
        works: [work('east', { ...healthy, reconciledAt: '2026-01-01T00:55:00Z' }), work('west', healthy)],
      }),
    );
    expect(result!.recheckAt).toStrictEqual(new Date('2026-01-01T01:10:00Z'));
  });

  test('a zero threshold switches staleness off and leaves it out of the spec', () => {
    const result = computeFleetReport(
      input({
        decisions: [decision('d', ['east'])],
        applications: [hubApp('east')],
        works: [work('east', { ...healthy, reconciledAt: '2025-01-01T00:00:00Z' })],
        staleAfterSeconds: 0,
      }),
    );
    expect(result!.report.spec).toStrictEqual({ applicationSet: APPSET });
    expect([result!.report.status!.clusters[0].state, result!.recheckAt]).toStrictEqual(['Healthy', undefined]);
  });

  test('a custom stale threshold is used and recorded in the spec', () => {
    const result = computeFleetReport(
      input({
        decisions: [decision('d', ['east'])],
        applications: [hubApp('east')],
        works: [work('east', healthy)],
        staleAfterSeconds: 30,
      }),
    );
    expect(result!.report.spec.staleAfterSeconds).toBe(30);
    expect(result!.report.status!.clusters[0].state).toBe('Stale');
  });
});

describe('conditions keep their transition time until they flip', () => {
  const world = { decisions: [decision('d', ['east'])], applications: [hubApp('east')] };

  test('an unchanged status keeps lastTransitionTime while the message may change', () => {
    const first = status({ ...world, works: [work('east', healthy)] });
    const later = new Date('2026-01-01T01:05:00Z');
    const second = status({
      ...world,
      works: [work('east', { ...healthy, revision: 'def456', reconciledAt: '2026-01-01T01:04:00Z' })],
      now: later,
      previous: first,
    });
    expect(second.conditions.map((c) => c.lastTransitionTime)).toStrictEqual([
      '2026-01-01T01:00:00Z',
      '2026-01-01T01:00:00Z',
    ]);
  });

  test('a flip stamps the new time on the flipped condition only', () => {
    const first = status({ ...world, works: [work('east', { ...healthy, sync: 'OutOfSync' })] });
    const later = new Date('2026-01-01T01:05:00Z');
    const second = status({
      ...world,
      works: [work('east', { ...healthy, health: 'Degraded', reconciledAt: '2026-01-01T01:04:00Z' })],
      now: later,
      previous: first,
    });
    const ready = second.conditions.find((c) => c.type === 'Ready')!;
    const degraded = second.conditions.find((c) => c.type === 'Degraded')!;
    expect([ready.status, ready.lastTransitionTime]).toStrictEqual(['False', '2026-01-01T01:00:00Z']);
    expect([degraded.status, degraded.lastTransitionTime]).toStrictEqual(['True', '2026-01-01T01:05:00Z']);
  });

  test('the same world computed later is the same content (no time-dependent text)', () => {
    const first = status({ ...world, works: [work('east', healthy)] });
    const second = status({
      ...world,
      works: [work('east', healthy)],
      now: new Date('2026-01-01T01:03:00Z'),
      previous: first,
    });
    expect(sameReportStatus(first, second)).toBe(true);
  });

  test('a feedback change is a content change', () => {
    const first = status({ ...world, works: [work('east', healthy)] });
    const second = status({ ...world, works: [work('east', { ...healthy, revision: 'def456' })], previous: first });
    expect(sameReportStatus(first, second)).toBe(false);
  });
});

describe('no report', () => {
  test.each([
    ['the ApplicationSet was deleted', undefined],
    ['the ApplicationSet is being deleted', applicationSet({ deleting: true })],
    ['the ApplicationSet does not deliver through pull', applicationSet({ pull: false })],
  ])('when %s', (_what, appSet) => {
    expect(
      computeFleetReport(
        input({ applicationSet: appSet, decisions: [decision('d', ['east'])], applications: [hubApp('east')] }),
      ),
    ).toBeUndefined();
  });
});

describe('report size limit', () => {
  test('rows that fit are all kept', () => {
    const rows: FleetReportRow[] = [{ cluster: 'a', state: 'Healthy', syncStatus: 'Synced' }];
    expect(fitRows(rows, 1000)).toStrictEqual({ kept: rows, omitted: 0, omittedDetails: 0 });
  });

  test('over budget, rows go in reverse display order (synced healthy, out-of-sync healthy, progressing, ...); problems stay', () => {
    const rows: FleetReportRow[] = [
      { cluster: 'a', state: 'Healthy', syncStatus: 'Synced' },
      { cluster: 'b', state: 'Degraded' },
      { cluster: 'c', state: 'Healthy', syncStatus: 'OutOfSync' },
      { cluster: 'd', state: 'Healthy', syncStatus: 'Synced' },
      { cluster: 'e', state: 'Missing' },
      { cluster: 'f', state: 'Progressing' },
    ];
    const size = (r: FleetReportRow[]) => r.reduce((n, row) => n + JSON.stringify(row).length + 1, 2);
    const budget = size([rows[1], rows[4], rows[5]]);
    const { kept, omitted } = fitRows(rows, budget);
    expect(kept.map((row) => row.cluster)).toStrictEqual(['b', 'e', 'f']);
    expect(omitted).toBe(3);
  });

  test('a fleet too large for one object keeps its counts and says how many rows were left out', () => {
    const clusters = Array.from({ length: 50 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    const works = clusters.map((c, i) => work(c, { ...healthy, health: i === 7 ? 'Degraded' : 'Healthy' }));
    const result = computeFleetReport(
      input({
        decisions: [decision('d', clusters)],
        applications: clusters.map((c) => hubApp(c)),
        works,
        maxRowsBytes: 4000,
      }),
    )!;
    const s = result.report.status!;
    expect(s.summary).toMatchObject({ clusters: 50, healthy: 49, degraded: 1 });
    expect(s.clusters.length + s.omittedRows!).toBe(50);
    expect(s.clusters.map((row) => row.cluster)).toContain('c07');
    expect(JSON.stringify(s.clusters).length).toBeLessThanOrEqual(4000);
  });
});

describe('display order and helpers', () => {
  test('problems come first: Degraded, Missing, Stale, Unknown, Progressing, then OutOfSync before Synced', () => {
    const rows: FleetReportRow[] = [
      { cluster: 'a', state: 'Healthy', syncStatus: 'Synced' },
      { cluster: 'b', state: 'Healthy', syncStatus: 'OutOfSync' },
      { cluster: 'c', state: 'Progressing' },
      { cluster: 'd', state: 'Unknown' },
      { cluster: 'e', state: 'Stale' },
      { cluster: 'f', state: 'Missing' },
      { cluster: 'g', state: 'Degraded' },
      { cluster: 'h', state: 'Degraded' },
    ];
    expect(sortRowsProblemsFirst(rows).map((row) => row.cluster)).toStrictEqual([
      'g',
      'h',
      'f',
      'e',
      'd',
      'c',
      'b',
      'a',
    ]);
  });

  test('summarize counts distinct clusters when one cluster has two apps', () => {
    expect(
      summarize([
        { cluster: 'a', state: 'Healthy' },
        { cluster: 'a', state: 'Degraded' },
      ]),
    ).toMatchObject({ clusters: 1, healthy: 1, degraded: 1 });
  });
});

describe('static applications', () => {
  test('rows come from the works when they are readable', () => {
    const rows = staticApplicationRows([hubApp('west'), hubApp('east')], [work('east', healthy)], NOW);
    expect(rows.map((row) => [row.cluster, row.state])).toStrictEqual([
      ['east', 'Healthy'],
      ['west', 'Missing'],
    ]);
  });

  test('rows fall back to the hub Application status when works are not readable', () => {
    const app = hubApp('east');
    app.status = {
      sync: { status: 'OutOfSync', revision: 'abc' },
      health: { status: 'Degraded' },
      operationState: { operation: {}, phase: 'Failed', startedAt: FRESH, message: 'boom' },
    };
    expect(staticApplicationRows([app], undefined, NOW)).toStrictEqual([
      {
        cluster: 'east',
        application: 'east-guestbook',
        state: 'Degraded',
        syncStatus: 'OutOfSync',
        healthStatus: 'Degraded',
        revision: 'abc',
        operationPhase: 'Failed',
        operationMessage: 'boom',
        message: 'from the hub Application status (ManifestWorks not readable)',
      },
    ]);
  });
});

describe('MulticlusterApplicationSetReport mapping', () => {
  test('as ACM writes it: a Progressing cluster is also not healthy, and the hosting label is cut to 63 characters', () => {
    const name = 'payments-platform-observability-collector-rollout';
    const result = computeFleetReport(
      input({
        applicationSet: applicationSet({ name }),
        decisions: [decision('d', ['east', 'west'])],
        applications: [hubApp('east', name), hubApp('west', name)],
        works: [
          work('east', healthy, { appSet: name }),
          work('west', { ...healthy, health: 'Progressing', phase: 'Running' }, { appSet: name }),
        ],
      }),
    )!;
    const mcas = toMulticlusterApplicationSetReport(result.report);
    expect(mcas.statuses!.summary).toMatchObject({ clusters: '2', healthy: '1', inProgress: '1', notHealthy: '1' });
    const label = mcas.metadata.labels!['apps.open-cluster-management.io/hosting-applicationset'];
    expect(label).toBe(`argocd.${name}`.slice(0, 63));
    expect(label.length).toBeLessThanOrEqual(63);
    expect(objectRuleFindings(mcas as never)).toStrictEqual([]);
  });

  test('counts become strings and every expected cluster is listed', () => {
    const result = computeFleetReport(
      input({
        decisions: [decision('d', ['east', 'west', 'north'])],
        applications: [hubApp('east'), hubApp('west')],
        works: [
          work('east', healthy),
          work('west', { ...healthy, phase: 'Failed', sync: 'OutOfSync', message: 'apply failed' }),
        ],
      }),
    )!;
    const mcas = toMulticlusterApplicationSetReport(result.report);
    expect(mcas.apiVersion).toBe('apps.open-cluster-management.io/v1alpha1');
    expect(mcas.metadata.ownerReferences).toStrictEqual(result.report.metadata.ownerReferences);
    expect([
      mcas.metadata.name,
      mcas.metadata.namespace,
      mcas.metadata.labels!['apps.open-cluster-management.io/hosting-applicationset'],
    ]).toStrictEqual(['guestbook', 'argocd', 'argocd.guestbook']);
    expect(mcas.statuses!.summary).toStrictEqual({
      clusters: '3',
      healthy: '1',
      inProgress: '0',
      notHealthy: '2',
      notSynced: '2',
      synced: '1',
    });
    expect(mcas.statuses!.clusterConditions).toStrictEqual([
      {
        cluster: 'east',
        app: 'argocd/east-guestbook',
        healthStatus: 'Healthy',
        syncStatus: 'Synced',
        syncRevision: 'abc123',
        operationStatePhase: 'Succeeded',
        operationStateStartedAt: '2026-01-01T00:50:00Z',
      },
      {
        cluster: 'north',
        conditions: [
          {
            type: 'Missing',
            message:
              'ApplicationSet guestbook has not generated an Application for cluster north (an Argo CD cluster Secret named "north" must exist on the hub)',
          },
        ],
      },
      {
        cluster: 'west',
        app: 'argocd/west-guestbook',
        healthStatus: 'Healthy',
        syncStatus: 'OutOfSync',
        syncRevision: 'abc123',
        operationStatePhase: 'Failed',
        operationStateStartedAt: '2026-01-01T00:50:00Z',
        conditions: [{ type: 'SyncError', message: 'apply failed' }],
      },
    ]);
  });
});
