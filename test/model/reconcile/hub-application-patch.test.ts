/**
 * The hub Application patch as a pure function: cached app and plan in, the one merge patch (or nothing)
 * out, with the facts the reconciler acts on (first write only, recheck, the problem that makes the
 * reconcile terminal).
 */
import { describe, expect, test } from '@jest/globals';
import {
  CLEANUP_FINALIZER,
  FORWARDED_OPERATION_ANNOTATION,
  LEGACY_CONTROLLER_SEEN_ANNOTATION,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  REFRESH_ANNOTATION,
  STAND_BY_ANNOTATION,
} from '../../../src/model/core/keys.js';
import type { Application } from '../../../src/model/core/types.js';
import { DELIVERY_MODEL_LABEL } from '../../../src/model/delivery/delivery-model.js';
import {
  computeHubApplicationPatch,
  rejectedStatusPatch,
  type BasicHubApplicationPatchInput,
} from '../../../src/model/reconcile/hub-application-patch.js';
import type { PropagationPlan } from '../../../src/model/reconcile/propagation.js';
import {
  DELIVERY_ERROR_CONDITION,
  DELIVERY_MODEL_CONFLICT_CONDITION,
  INVALID_FEEDBACK_CONDITION,
} from '../../../src/model/reconcile/status.js';
import { LEGACY_CONTROLLER_WINDOW_MS } from '../../../src/model/reconcile/takeover.js';
import { pullApplication } from '../../support/world.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const ARGO_FINALIZER = 'resources-finalizer.argocd.argoproj.io';

/** argocd/guestbook for cluster east, without skip-reconcile; `metadata` fields replace its own. */
function hubApp(metadata: Partial<Application['metadata']> = {}, rest: Partial<Application> = {}): Application {
  const app = pullApplication({ cluster: 'east', skipReconcile: false, metadata: { resourceVersion: '7' } });
  return { ...app, metadata: { ...app.metadata, ...metadata }, ...rest };
}

function basic(app: Application, plan: Partial<PropagationPlan>, extra: Partial<BasicHubApplicationPatchInput> = {}) {
  return computeHubApplicationPatch({
    delivery: 'basic',
    app,
    plan: { deletes: [], ...plan },
    cluster: 'east',
    now: NOW,
    staleAfterMs: 0,
    operationTimeoutMs: 0,
    ...extra,
  });
}

describe('computeHubApplicationPatch, basic delivery', () => {
  test('GIVEN a new app whose work goes out WHEN patched THEN only the cleanup finalizer is added, guarded, and it is a first write', () => {
    const result = basic(hubApp(), { finalizer: 'add', target: { namespace: 'east', name: 'argocd-guestbook' } });
    expect(result.patch?.metadata).toStrictEqual({ finalizers: [CLEANUP_FINALIZER], resourceVersion: '7' });
    expect(result.firstWriteOnly).toBe(true);
    expect(result.problem).toBeUndefined();
  });

  test('GIVEN an app as it should be WHEN patched THEN there is nothing to write', () => {
    const app = hubApp({ finalizers: [CLEANUP_FINALIZER] });
    const first = basic(app, { target: { namespace: 'east', name: 'argocd-guestbook' } });
    // The status the first patch writes, on the app: the second look writes nothing.
    const settled = basic(
      { ...app, status: first.patch?.status as Application['status'] },
      {
        target: { namespace: 'east', name: 'argocd-guestbook' },
      },
    );
    expect(settled.patch).toBeUndefined();
    expect(settled.firstWriteOnly).toBe(false);
    expect(settled.statusChanged).toBe(false);
  });

  test('GIVEN a deleted skip-reconcile app whose works are gone WHEN patched THEN its own and Argo CD finalizers go, others stay', () => {
    const app = hubApp({
      deletionTimestamp: '2026-03-01T11:00:00Z',
      finalizers: [CLEANUP_FINALIZER, ARGO_FINALIZER, 'example.com/keep'],
    });
    const result = basic(app, { finalizer: 'remove', releaseArgoFinalizers: [ARGO_FINALIZER] });
    expect(result.patch).toStrictEqual({ metadata: { finalizers: ['example.com/keep'], resourceVersion: '7' } });
    expect(result.notes.releasedArgoFinalizers).toStrictEqual([ARGO_FINALIZER]);
    expect(result.firstWriteOnly).toBe(false);
  });

  test('GIVEN a deleted app whose last finalizer is the cleanup one WHEN released THEN the finalizers become null', () => {
    const app = hubApp({ deletionTimestamp: '2026-03-01T11:00:00Z', finalizers: [CLEANUP_FINALIZER] });
    expect(basic(app, { finalizer: 'remove' }).patch).toStrictEqual({
      metadata: { finalizers: null, resourceVersion: '7' },
    });
  });

  test('GIVEN a forwarded refresh and a new operation WHEN patched THEN the refresh annotation goes and the record is kept', () => {
    const app = hubApp({
      finalizers: [CLEANUP_FINALIZER],
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [REFRESH_ANNOTATION]: 'hard' },
    });
    const record = { id: 'op-1', forwardedAt: '2026-03-01T12:00:00Z' };
    const result = basic(app, {
      clearRefresh: true,
      operation: { kind: 'record', record: record as never },
      target: { namespace: 'east', name: 'argocd-guestbook' },
    });
    expect((result.patch?.metadata as { annotations: unknown }).annotations).toStrictEqual({
      [REFRESH_ANNOTATION]: null,
      [FORWARDED_OPERATION_ANNOTATION]: JSON.stringify(record),
    });
    expect(result.firstWriteOnly).toBe(false);
  });

  test('GIVEN a plan with a problem WHEN patched THEN the refresh stays, no record is written, and the problem is shown and returned', () => {
    const app = hubApp({
      finalizers: [CLEANUP_FINALIZER],
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [REFRESH_ANNOTATION]: 'hard' },
    });
    const problem =
      'ManagedCluster "east" does not exist on this hub: register the cluster or fix the target annotation';
    const result = basic(app, {
      clearRefresh: true,
      operation: { kind: 'record', record: { id: 'op-1' } as never },
      problem,
    });
    expect(result.patch?.metadata).toBeUndefined();
    const conditions = (result.patch?.status as { conditions: Array<{ type: string; message: string }> }).conditions;
    expect(conditions.find((condition) => condition.type === DELIVERY_ERROR_CONDITION)?.message).toBe(problem);
    expect(result.problem).toBe(problem);
  });

  test('GIVEN an operation the spoke started WHEN patched THEN operation and its record go, guarded', () => {
    const app = hubApp(
      {
        finalizers: [CLEANUP_FINALIZER],
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [FORWARDED_OPERATION_ANNOTATION]: '{"id":"op-1"}' },
      },
      { operation: { sync: {} } },
    );
    const result = basic(app, {
      operation: { kind: 'clear' },
      target: { namespace: 'east', name: 'argocd-guestbook' },
    });
    expect(result.patch?.operation).toBeNull();
    expect(result.patch?.metadata).toStrictEqual({
      annotations: { [FORWARDED_OPERATION_ANNOTATION]: null },
      resourceVersion: '7',
    });
  });

  test('GIVEN an old controller fighting the hand-over WHEN patched THEN the sighting is recorded, then refreshed only after half a window', () => {
    const active = 'argocd-pull-integration rewrote ManifestWork east/guestbook';
    const first = basic(hubApp({ finalizers: [CLEANUP_FINALIZER] }), {
      legacyControllerActive: active,
      target: { namespace: 'east', name: 'argocd-guestbook' },
    });
    expect((first.patch?.metadata as { annotations: unknown }).annotations).toStrictEqual({
      [LEGACY_CONTROLLER_SEEN_ANNOTATION]: '2026-03-01T12:00:00Z',
    });
    expect(first.notes.legacyControllerSeen).toBe(active);
    const seenAt = new Date(NOW.getTime() - LEGACY_CONTROLLER_WINDOW_MS / 4).toISOString().replace('.000', '');
    const recent = hubApp({
      finalizers: [CLEANUP_FINALIZER],
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [LEGACY_CONTROLLER_SEEN_ANNOTATION]: seenAt },
    });
    const again = basic(recent, {
      legacyControllerActive: active,
      target: { namespace: 'east', name: 'argocd-guestbook' },
    });
    expect(again.patch?.metadata).toBeUndefined();
    expect(again.notes.legacyControllerSeen).toBeUndefined();
  });

  test('GIVEN a sighting older than the window and no fight WHEN patched THEN the record goes', () => {
    const old = new Date(NOW.getTime() - LEGACY_CONTROLLER_WINDOW_MS - 1000).toISOString().replace('.000', '');
    const app = hubApp({
      finalizers: [CLEANUP_FINALIZER],
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [LEGACY_CONTROLLER_SEEN_ANNOTATION]: old },
    });
    const result = basic(app, { target: { namespace: 'east', name: 'argocd-guestbook' } });
    expect((result.patch?.metadata as { annotations: unknown }).annotations).toStrictEqual({
      [LEGACY_CONTROLLER_SEEN_ANNOTATION]: null,
    });
  });

  test('GIVEN a standing-by app still routed to the argocd-agent WHEN its plan has a problem THEN its status is not written and the problem goes to the log', () => {
    const app = hubApp(
      {
        finalizers: [CLEANUP_FINALIZER],
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', [STAND_BY_ANNOTATION]: 'true' },
      },
      {
        spec: {
          project: 'default',
          source: { repoURL: 'https://git.example/apps', path: 'guestbook' },
          destination: { name: 'east', namespace: 'guestbook' },
        },
      },
    );
    const result = basic(app, { problem: 'the work cannot be written' });
    expect(result.patch).toBeUndefined();
    expect(result.notes.unwritableProblem).toBe('the work cannot be written');
    expect(result.problem).toBe('the work cannot be written');
  });

  test('GIVEN a deleted app with a problem WHEN patched THEN no status is written and no problem is returned', () => {
    const app = hubApp({ deletionTimestamp: '2026-03-01T11:00:00Z', finalizers: [CLEANUP_FINALIZER] });
    const result = basic(app, { problem: 'anything' });
    expect(result.patch).toBeUndefined();
    expect(result.problem).toBeUndefined();
  });
});

describe('computeHubApplicationPatch, agent model', () => {
  const agentApp = (labels: Record<string, string>, metadata: Partial<Application['metadata']> = {}) =>
    hubApp({ labels: { [DELIVERY_MODEL_LABEL]: 'agent-managed', ...labels }, ...metadata });

  test('GIVEN an agent-model app with the pull label WHEN patched THEN the conflict condition is set and returned as the problem', () => {
    const result = computeHubApplicationPatch({
      delivery: 'agent',
      app: agentApp({ [PULL_LABEL]: 'true' }),
      handoffDone: true,
      now: NOW,
    });
    const conditions = (result.patch?.status as { conditions: Array<{ type: string; message: string }> }).conditions;
    expect(conditions.map((condition) => condition.type)).toStrictEqual([DELIVERY_MODEL_CONFLICT_CONDITION]);
    expect(result.problem).toBe(conditions[0].message);
    expect(result.problem).toContain(`${DELIVERY_MODEL_LABEL}=agent-managed`);
  });

  test('GIVEN the conflict condition already set WHEN patched THEN nothing is written, the problem remains', () => {
    const first = computeHubApplicationPatch({
      delivery: 'agent',
      app: agentApp({ [PULL_LABEL]: 'true' }),
      handoffDone: true,
      now: NOW,
    });
    const app = { ...agentApp({ [PULL_LABEL]: 'true' }), status: first.patch?.status as Application['status'] };
    const again = computeHubApplicationPatch({ delivery: 'agent', app, handoffDone: true, now: NOW });
    expect(again.patch).toBeUndefined();
    expect(again.problem).toBe(first.problem);
  });

  test('GIVEN the pull label removed WHEN patched THEN the conflict condition is cleared (null when it was the only one)', () => {
    const app = {
      ...agentApp({}),
      status: { conditions: [{ type: DELIVERY_MODEL_CONFLICT_CONDITION, message: 'conflict' }] },
    } as Application;
    const result = computeHubApplicationPatch({ delivery: 'agent', app, handoffDone: true, now: NOW });
    expect(result.patch).toStrictEqual({ status: { conditions: null } });
    expect(result.problem).toBeUndefined();
  });

  test('GIVEN a deleted agent-model app WHEN its hand-off is not done THEN the finalizer stays; once done it goes', () => {
    const app = agentApp({}, { deletionTimestamp: '2026-03-01T11:00:00Z', finalizers: [CLEANUP_FINALIZER] });
    expect(computeHubApplicationPatch({ delivery: 'agent', app, handoffDone: false, now: NOW }).patch).toBeUndefined();
    const done = computeHubApplicationPatch({ delivery: 'agent', app, handoffDone: true, now: NOW });
    expect(done.patch).toStrictEqual({ metadata: { finalizers: null, resourceVersion: '7' } });
    expect(done.notes.releasedFinalizer).toBe(true);
  });
});

describe('rejectedStatusPatch', () => {
  test('GIVEN a refused status write WHEN the fallback is built THEN it keeps the metadata, drops the spoke values and says why', () => {
    const app = hubApp({ finalizers: [] });
    const patch = { metadata: { finalizers: [CLEANUP_FINALIZER], resourceVersion: '7' }, status: { sync: {} } };
    const fallback = rejectedStatusPatch(app, patch, [{ type: 'Other', message: 'kept' }], 'status.sync: bad', NOW);
    expect(fallback).toStrictEqual({
      metadata: patch.metadata,
      status: {
        conditions: [
          { type: 'Other', message: 'kept' },
          {
            type: INVALID_FEEDBACK_CONDITION,
            message:
              "the API server rejected the status write-back, so the spoke's sync, health and operation are not shown: status.sync: bad",
            lastTransitionTime: '2026-03-01T12:00:00Z',
          },
        ],
      },
    });
  });

  test('GIVEN the app already says so WHEN the fallback is built THEN there is nothing to write', () => {
    const rejected = {
      type: INVALID_FEEDBACK_CONDITION,
      message:
        "the API server rejected the status write-back, so the spoke's sync, health and operation are not shown: bad",
      lastTransitionTime: '2026-03-01T11:00:00Z',
    };
    const app = hubApp({}, { status: { conditions: [rejected] } });
    expect(rejectedStatusPatch(app, { status: { sync: {} } }, [], 'bad', NOW)).toBeUndefined();
  });
});
