/**
 * Multi-source Applications report their revisions (issue 28). Argo CD writes `status.sync.revisions` and
 * `status.operationState.syncResult.revisions` (one entry per `spec.sources` entry) instead of the scalar
 * `revision` fields; OCM's JSONPaths feedback carries scalars only, so the work asks for every index on its own,
 * and the status write-back puts the lists back together on the hub Application.
 */
import { describe, expect, test } from '@jest/globals';
import {
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  SPEC_HASH_ANNOTATION,
} from '../../../src/model/core/keys.js';
import type {
  Application,
  ApplicationStatus,
  FieldValue,
  JsonObject,
  ManifestWork,
} from '../../../src/model/core/types.js';
import { trimApplication } from '../../../src/controller/reconcilers/application.js';
import {
  FEEDBACK_PATHS,
  MAX_REVISION_FEEDBACK_SOURCES,
  buildManifestWork,
  multiSourceCount,
  sourceRevisionFeedbackPaths,
} from '../../../src/model/delivery/manifestwork.js';
import { readApplicationFeedback } from '../../../src/model/reconcile/feedback.js';
import { REVISIONS_TRUNCATED_CONDITION, computeApplicationStatus } from '../../../src/model/reconcile/status.js';
import { applicationStatusFeedback, staticApplicationRows } from '../../../src/model/report/report.js';
import { checkObject } from '../../../src/validate/schema.js';
import { mergePatch } from '../../double/fake/patch.js';
import { applicationFeedback, workStatus } from '../../support/work-status.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const SHA = (n: number) => `${String(n).repeat(40)}`.slice(0, 40);

function source(i: number): JsonObject {
  return { repoURL: `https://git.example/repo-${i}.git`, path: `app-${i}`, targetRevision: 'main' };
}

/** A pull hub Application with `sources` sources (0: a single `source`). */
function hubApp(sources: number, status?: ApplicationStatus): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'web',
      namespace: 'argocd',
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [SKIP_RECONCILE_ANNOTATION]: 'true' },
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
      ...(sources === 0 ? { source: source(0) } : { sources: Array.from({ length: sources }, (_, i) => source(i)) }),
    },
    ...(status ? { status } : {}),
  };
}

/** The app's work with the agent reporting `values` (strings, or any fieldValue) and the spoke running its spec. */
function workWith(app: Application, values: Record<string, string | FieldValue>): ManifestWork {
  const work = buildManifestWork(app);
  const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application') as unknown as Application;
  const all = { specHash: payload.metadata.annotations![SPEC_HASH_ANNOTATION], ...values };
  work.status = workStatus([applicationFeedback({ name: 'web', namespace: 'argocd', ordinal: 0, values: all })], {
    type: 'Applied',
    status: 'True',
    reason: 'AppliedManifestComplete',
    message: 'applied',
  });
  return work;
}

const jsonPathsOf = (work: ManifestWork) =>
  work.spec.manifestConfigs![0].feedbackRules![0].jsonPaths!.map((p) => [p.name, p.path]);

/** What a spoke on Argo CD reports for a multi-source app synced to `revisions`. */
function multiSourceValues(
  revisions: readonly string[],
  synced: readonly string[] = revisions,
): Record<string, string> {
  return {
    syncStatus: 'Synced',
    healthStatus: 'Healthy',
    operationStatePhase: 'Succeeded',
    operationStateStartedAt: '2026-03-01T11:59:50Z',
    ...Object.fromEntries(revisions.map((r, i) => [`syncRevisions${i}`, r])),
    ...Object.fromEntries(synced.map((r, i) => [`operationStateSyncRevisions${i}`, r])),
  };
}

/** The hub app after the controller's merge patch of `status`, as the API server would store it. */
function patched(app: Application, patch: { status: JsonObject } | undefined): Application {
  return patch ? (mergePatch(app, patch) as unknown as Application) : app;
}

describe('feedback rules of a multi-source work', () => {
  test('GIVEN a single-source app THEN the work asks for exactly the shared paths, the same frozen rules as before', () => {
    const work = buildManifestWork(hubApp(0));
    expect(jsonPathsOf(work)).toStrictEqual(FEEDBACK_PATHS.map(([n, p]) => [n, p]));
    // one shared object for every single-source work (synth holds thousands of works)
    expect(work.spec.manifestConfigs![0].feedbackRules).toBe(
      buildManifestWork(hubApp(0)).spec.manifestConfigs![0].feedbackRules,
    );
  });

  test('GIVEN an app of 3 sources THEN the work also asks for sync.revisions[0..2] and syncResult.revisions[0..2], one path each', () => {
    expect(jsonPathsOf(buildManifestWork(hubApp(3)))).toStrictEqual([
      ...FEEDBACK_PATHS.map(([n, p]) => [n, p]),
      ['syncRevisions0', '.status.sync.revisions[0]'],
      ['syncRevisions1', '.status.sync.revisions[1]'],
      ['syncRevisions2', '.status.sync.revisions[2]'],
      ['operationStateSyncRevisions0', '.status.operationState.syncResult.revisions[0]'],
      ['operationStateSyncRevisions1', '.status.operationState.syncResult.revisions[1]'],
      ['operationStateSyncRevisions2', '.status.operationState.syncResult.revisions[2]'],
    ]);
  });

  test('GIVEN a `sources` list of one THEN its revision is asked for as a list (Argo CD reports any `sources` as multi-source)', () => {
    expect(jsonPathsOf(buildManifestWork(hubApp(1))).slice(FEEDBACK_PATHS.length)).toStrictEqual([
      ['syncRevisions0', '.status.sync.revisions[0]'],
      ['operationStateSyncRevisions0', '.status.operationState.syncResult.revisions[0]'],
    ]);
  });

  test('GIVEN a source hydrator THEN no per-source paths (Argo CD reports its revision as `revision`)', () => {
    expect(multiSourceCount({ sources: [source(0), source(1)], sourceHydrator: {} })).toBe(0);
    expect(multiSourceCount({ sources: [] })).toBe(0);
    expect(sourceRevisionFeedbackPaths(0)).toStrictEqual([]);
  });

  test(`GIVEN more sources than ${MAX_REVISION_FEEDBACK_SOURCES} THEN the work asks for the first ${MAX_REVISION_FEEDBACK_SOURCES} only`, () => {
    const extra = jsonPathsOf(buildManifestWork(hubApp(MAX_REVISION_FEEDBACK_SOURCES + 5))).slice(
      FEEDBACK_PATHS.length,
    );
    expect(extra).toHaveLength(2 * MAX_REVISION_FEEDBACK_SOURCES);
    expect(extra.at(MAX_REVISION_FEEDBACK_SOURCES - 1)).toStrictEqual([
      `syncRevisions${MAX_REVISION_FEEDBACK_SOURCES - 1}`,
      `.status.sync.revisions[${MAX_REVISION_FEEDBACK_SOURCES - 1}]`,
    ]);
  });

  test('GIVEN an app of the most sources THEN its work passes the ManifestWork schema (no limit on jsonPaths)', () => {
    const work = buildManifestWork(hubApp(MAX_REVISION_FEEDBACK_SOURCES));
    expect(checkObject(work as never).filter((f) => f.severity === 'error')).toStrictEqual([]);
  });

  test('GIVEN two apps of the same source count THEN their works share one frozen rule list', () => {
    const a = buildManifestWork(hubApp(2)).spec.manifestConfigs![0].feedbackRules!;
    expect(buildManifestWork(hubApp(2)).spec.manifestConfigs![0].feedbackRules).toBe(a);
    expect(Object.isFrozen(a[0].jsonPaths)).toBe(true);
  });
});

describe('reading per-source feedback', () => {
  test('GIVEN 3 revisions and 3 synced revisions reported THEN both lists come back in source order', () => {
    const app = hubApp(3);
    const work = workWith(app, multiSourceValues([SHA(1), SHA(2), '6.7.1'], [SHA(1), SHA(2), '6.7.0']));
    const feedback = readApplicationFeedback(work, 'argocd', 'web');
    expect(feedback?.syncRevisions).toStrictEqual([SHA(1), SHA(2), '6.7.1']);
    expect(feedback?.operationStateSyncRevisions).toStrictEqual([SHA(1), SHA(2), '6.7.0']);
    expect(feedback?.syncRevision).toBeUndefined();
  });

  test('GIVEN index 1 missing (the spoke list is shorter) THEN the list ends before it; without index 0 there is none, and nothing throws', () => {
    const app = hubApp(3);
    const gap = readApplicationFeedback(
      workWith(app, { syncRevisions0: 'a', syncRevisions2: 'c', operationStateSyncRevisions1: 'b' }),
      'argocd',
      'web',
    );
    expect(gap?.syncRevisions).toStrictEqual(['a']);
    expect(gap?.operationStateSyncRevisions).toBeUndefined();
  });

  test('GIVEN an empty or Integer entry THEN it keeps its place as text; unknown or malformed names are ignored', () => {
    const feedback = readApplicationFeedback(
      workWith(hubApp(3), {
        syncRevisions0: '',
        syncRevisions1: { type: 'Integer', integer: 7 },
        syncRevisions2: 'c',
        syncRevisions01: 'not an index',
        syncRevisionsX: 'no',
      }),
      'argocd',
      'web',
    );
    expect(feedback?.syncRevisions).toStrictEqual(['', '7', 'c']);
  });
});

describe('status write-back of a multi-source app', () => {
  test('GIVEN a spoke reporting 3 revisions WHEN written back THEN the hub gets sync.revisions and syncResult.revisions, no sync.revision', () => {
    const app = hubApp(3);
    const revisions = [SHA(1), SHA(2), SHA(3)];
    const result = computeApplicationStatus({
      app,
      work: workWith(app, multiSourceValues(revisions)),
      now: NOW,
      staleAfterMs: 0,
    });
    expect(result.patch?.status.sync).toStrictEqual({ status: 'Synced', revisions });
    expect(result.patch?.status.operationState).toStrictEqual({
      operation: {},
      phase: 'Succeeded',
      startedAt: '2026-03-01T11:59:50Z',
      message: null,
      syncResult: { revision: '', revisions, resources: null },
    });
    // and the hub Application with that status passes the Application schema
    expect(checkObject(patched(app, result.patch) as never).filter((f) => f.severity === 'error')).toStrictEqual([]);
  });

  test('GIVEN the status written back WHEN nothing changed THEN no second write, also through the cache trim of the controller', () => {
    // Before the trim kept syncResult.revisions, the cached app lost them and every reconcile rewrote the status.
    const app = hubApp(2);
    const work = workWith(app, multiSourceValues([SHA(1), SHA(2)]));
    const first = computeApplicationStatus({ app, work, now: NOW, staleAfterMs: 0 });
    const stored = patched(app, first.patch);
    expect(computeApplicationStatus({ app: stored, work, now: NOW, staleAfterMs: 0 }).patch).toBeUndefined();
    const cached = trimApplication(stored) as Application;
    expect(cached.status?.operationState?.syncResult).toStrictEqual({ revision: '', revisions: [SHA(1), SHA(2)] });
    expect(computeApplicationStatus({ app: cached, work, now: NOW, staleAfterMs: 0 }).patch).toBeUndefined();
  });

  test('GIVEN a new revision of one source WHEN written back THEN both lists are replaced whole', () => {
    const app = hubApp(2);
    const before = patched(
      app,
      computeApplicationStatus({ app, work: workWith(app, multiSourceValues(['a', 'b'])), now: NOW, staleAfterMs: 0 })
        .patch,
    );
    const result = computeApplicationStatus({
      app: before,
      work: workWith(app, multiSourceValues(['a', 'c'])),
      now: NOW,
      staleAfterMs: 0,
    });
    const after = patched(before, result.patch);
    expect(after.status?.sync).toMatchObject({ status: 'Synced', revisions: ['a', 'c'] });
    expect(after.status?.operationState?.syncResult).toStrictEqual({ revision: '', revisions: ['a', 'c'] });
  });

  test('GIVEN the spoke has not reported syncResult.revisions on a Succeeded phase THEN syncResult has an empty revision and no list (never a match for a 2.14 hub)', () => {
    const app = hubApp(2);
    const values = multiSourceValues(['a', 'b'], []);
    const s = computeApplicationStatus({ app, work: workWith(app, values), now: NOW, staleAfterMs: 0 }).desired;
    expect(s.sync).toStrictEqual({ status: 'Synced', revisions: ['a', 'b'] });
    expect(s.operationState?.syncResult).toStrictEqual({ revision: '' });
  });

  test('GIVEN the written-back status THEN an Argo CD 2.14.0 hub sees the target revisions equal the synced ones, as it compares them', () => {
    // v2.14.0 applicationset_controller.go: TargetRevisions = status.GetRevisions() (sync.revisions, else
    // [sync.revision]); on Succeeded it compares syncResult.revisions (else [syncResult.revision]).
    const getRevisions = (s: ApplicationStatus) =>
      (s.sync?.revisions as string[] | undefined)?.length
        ? s.sync!.revisions
        : s.sync?.revision
          ? [s.sync.revision]
          : [];
    const synced = (s: ApplicationStatus) => {
      const r = s.operationState?.syncResult as { revision?: string; revisions?: string[] } | undefined;
      return r?.revisions?.length ? r.revisions : r?.revision ? [r.revision] : [];
    };
    const app = hubApp(2);
    const done = computeApplicationStatus({
      app,
      work: workWith(app, multiSourceValues(['a', 'b'])),
      now: NOW,
      staleAfterMs: 0,
    }).desired;
    expect(synced(done)).toStrictEqual(getRevisions(done));
    const midway = computeApplicationStatus({
      app,
      work: workWith(app, multiSourceValues(['a', 'c'], ['a', 'b'])),
      now: NOW,
      staleAfterMs: 0,
    }).desired;
    expect(synced(midway)).not.toStrictEqual(getRevisions(midway));
  });

  test('GIVEN an app that went from 2 sources to one `source` WHEN written back THEN the lists are removed and the revision written', () => {
    const multi = hubApp(2);
    const stored = patched(
      multi,
      computeApplicationStatus({
        app: multi,
        work: workWith(multi, multiSourceValues(['a', 'b'])),
        now: NOW,
        staleAfterMs: 0,
      }).patch,
    );
    const single = { ...hubApp(0), status: stored.status };
    const result = computeApplicationStatus({
      app: single,
      work: workWith(single, {
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
        syncRevision: 'z',
        operationStatePhase: 'Succeeded',
        operationStateStartedAt: '2026-03-01T11:59:55Z',
        operationStateSyncRevision: 'z',
      }),
      now: NOW,
      staleAfterMs: 0,
    });
    const after = patched(single, result.patch);
    expect(after.status?.sync).toStrictEqual({ status: 'Synced', revision: 'z' });
    expect(after.status?.operationState?.syncResult).toStrictEqual({ revision: 'z' });
  });

  test('GIVEN a single-source app THEN the patch names no revisions at all (unchanged from before)', () => {
    const app = hubApp(0);
    const result = computeApplicationStatus({
      app,
      work: workWith(app, {
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
        syncRevision: 'abc',
        operationStatePhase: 'Succeeded',
        operationStateStartedAt: '2026-03-01T11:59:55Z',
        operationStateSyncRevision: 'abc',
      }),
      now: NOW,
      staleAfterMs: 0,
    });
    expect(result.patch?.status.sync).toStrictEqual({ status: 'Synced', revision: 'abc' });
    expect((result.patch?.status.operationState as JsonObject).syncResult).toStrictEqual({
      revision: 'abc',
      resources: null,
    });
  });

  test(`GIVEN more than ${MAX_REVISION_FEEDBACK_SOURCES} sources THEN the hub app says which revisions it lists and how to see all`, () => {
    const sources = MAX_REVISION_FEEDBACK_SOURCES + 2;
    const app = hubApp(sources);
    const revisions = Array.from({ length: MAX_REVISION_FEEDBACK_SOURCES }, (_, i) => `r${i}`);
    const s = computeApplicationStatus({
      app,
      work: workWith(app, multiSourceValues(revisions)),
      now: NOW,
      staleAfterMs: 0,
    }).desired;
    expect(s.sync?.revisions).toStrictEqual(revisions);
    const condition = s.conditions?.find((c) => c.type === REVISIONS_TRUNCATED_CONDITION);
    expect(condition?.message).toContain(`the app has ${sources} sources`);
    expect(condition?.message).toContain(`list ${MAX_REVISION_FEEDBACK_SOURCES} of ${sources}`);
    expect(condition?.message).toContain('split the app');
    expect(
      computeApplicationStatus({
        app: hubApp(3),
        work: workWith(hubApp(3), {}),
        now: NOW,
        staleAfterMs: 0,
      }).desired.conditions?.some((c) => c.type === REVISIONS_TRUNCATED_CONDITION),
    ).toBe(false);
  });
});

describe('fleet report rows of a multi-source app', () => {
  test('GIVEN a work reporting 3 revisions THEN the row shows them joined with commas in source order', () => {
    const app = hubApp(3);
    const work = workWith(app, multiSourceValues(['a1', 'b2', '6.7.1']));
    const [row] = staticApplicationRows([app], [work], NOW);
    expect(row.revision).toBe('a1,b2,6.7.1');
  });

  test('GIVEN only the hub status (works not readable, or an agent-model app) THEN its sync.revisions are shown the same way', () => {
    const app = hubApp(2, { sync: { status: 'Synced', revisions: ['a', 'b'] }, health: { status: 'Healthy' } });
    expect(staticApplicationRows([app], undefined, NOW)[0].revision).toBe('a,b');
    expect(applicationStatusFeedback(app)?.syncRevisions).toStrictEqual(['a', 'b']);
  });

  test('GIVEN a single-source app THEN the row shows its revision as before', () => {
    const app = hubApp(0);
    const [row] = staticApplicationRows([app], [workWith(app, { syncRevision: 'abc', syncStatus: 'Synced' })], NOW);
    expect(row.revision).toBe('abc');
  });
});
