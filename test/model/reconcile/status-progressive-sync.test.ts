/**
 * The status write-back as Argo CD's ApplicationSet RollingSync reads it (argo-cd
 * applicationset/progressivesync/progressive_sync.go): the spoke's operation state is copied as it is,
 * reconciledAt comes along, and the app is Synced only once the spoke runs the spec the hub asks for now.
 */
import { describe, expect, test } from '@jest/globals';
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL, SPEC_HASH_ANNOTATION } from '../../../src/model/core/keys.js';
import type { Application, ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import { computeApplicationStatus } from '../../../src/model/reconcile/status.js';
import { applicationFeedback, workStatus } from '../../support/work-status.js';

const NOW = new Date('2026-03-01T12:00:00Z');

function hubApp(revision: string, status?: Application['status']): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'web',
      namespace: 'argocd',
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'east', 'argocd.argoproj.io/skip-reconcile': 'true' },
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
      source: { repoURL: 'https://git.example/apps', path: 'web', targetRevision: revision },
    },
    ...(status ? { status } : {}),
  };
}

/** The work for the hub app at `deliveredRevision`, with the spoke reporting `values` (and running that work's spec). */
function workWith(deliveredRevision: string, values: Record<string, string>, specHash?: string): ManifestWork {
  const work = buildManifestWork(hubApp(deliveredRevision));
  const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application') as unknown as Application;
  const feedback: Record<string, string> = {
    specHash: specHash ?? payload.metadata.annotations![SPEC_HASH_ANNOTATION],
    ...values,
  };
  work.status = workStatus(
    [
      applicationFeedback({
        name: 'web',
        namespace: 'argocd',
        ordinal: work.spec.workload.manifests.indexOf(payload as never),
        values: feedback,
      }),
    ],
    { type: 'Applied', status: 'True', reason: 'x', message: 'applied' },
  );
  return work;
}

const status = (app: Application, work: ManifestWork) =>
  computeApplicationStatus({ app, work, now: NOW, staleAfterMs: 0 }).desired;

describe('status write-back for ApplicationSet RollingSync', () => {
  test('GIVEN the spoke runs the current spec, Synced and Healthy WHEN written back THEN the hub says Synced and carries the spoke reconciledAt', () => {
    const s = status(
      hubApp('v1'),
      workWith('v1', { syncStatus: 'Synced', healthStatus: 'Healthy', reconciledAt: '2026-03-01T11:59:30Z' }),
    );
    expect(s.sync?.status).toBe('Synced');
    expect(s.health?.status).toBe('Healthy');
    expect(s.reconciledAt).toBe('2026-03-01T11:59:30Z');
  });

  test('GIVEN the hub spec changed and the spoke still runs the old one (Synced, Healthy) WHEN written back THEN the hub says Unknown, so RollingSync does not skip the sync', () => {
    const s = status(hubApp('v2'), workWith('v1', { syncStatus: 'Synced', healthStatus: 'Healthy' }));
    expect(s.sync?.status).toBe('Unknown');
    expect(s.health?.status).toBe('Healthy');
  });

  test('GIVEN the work carries the new spec but the spoke Application has not taken it yet WHEN written back THEN Unknown, and the first report of the spoke on it is a change', () => {
    const s = status(hubApp('v2'), workWith('v2', { syncStatus: 'Synced', healthStatus: 'Healthy' }, 'an-older-hash'));
    expect(s.sync?.status).toBe('Unknown');
    expect(
      status(hubApp('v2'), workWith('v2', { syncStatus: 'OutOfSync', healthStatus: 'Healthy' })).sync?.status,
    ).toBe('OutOfSync');
  });

  test('GIVEN a work written before spec hashes WHEN the spoke says Synced THEN the hub says Synced (it cannot tell)', () => {
    const work = workWith('v1', { syncStatus: 'Synced', healthStatus: 'Healthy' });
    const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application') as unknown as Application;
    delete payload.metadata.annotations![SPEC_HASH_ANNOTATION];
    expect(status(hubApp('v1'), work).sync?.status).toBe('Synced');
  });

  test('GIVEN an operation phase without startedAt WHEN written back THEN no operation state is invented and the last one stays', () => {
    const before = { operation: {}, phase: 'Succeeded', startedAt: '2026-03-01T10:00:00Z' };
    const app = hubApp('v1', { operationState: before });
    const result = computeApplicationStatus({
      app,
      work: workWith('v1', { operationStatePhase: 'Running' }),
      now: NOW,
      staleAfterMs: 0,
    });
    expect(result.desired.operationState).toBeUndefined();
    expect(result.patch?.status.operationState).toBeUndefined();
  });

  test('GIVEN the spoke reports an operation WHEN written back THEN phase, startedAt and message are the spoke values, second for second (skew included)', () => {
    const s = status(
      hubApp('v1'),
      workWith('v1', {
        operationStatePhase: 'Succeeded',
        operationStateStartedAt: '2026-03-01T11:59:57Z',
        operationStateMessage: 'successfully synced',
      }),
    );
    expect(s.operationState).toStrictEqual({
      operation: {},
      phase: 'Succeeded',
      startedAt: '2026-03-01T11:59:57Z',
      message: 'successfully synced',
      syncResult: { revision: '' },
    });
  });

  test('GIVEN the spoke reports the revision its sync applied WHEN written back THEN syncResult carries that revision only (what an Argo CD 2.x hub compares)', () => {
    const app = hubApp('v1');
    const work = workWith('v1', {
      operationStatePhase: 'Succeeded',
      operationStateStartedAt: '2026-03-01T11:59:57Z',
      operationStateSyncRevision: 'abc123',
    });
    const result = computeApplicationStatus({ app, work, now: NOW, staleAfterMs: 0 });
    expect(result.desired.operationState?.syncResult).toStrictEqual({ revision: 'abc123' });
    expect((result.patch?.status.operationState as { syncResult?: unknown }).syncResult).toStrictEqual({
      revision: 'abc123',
      resources: null,
    });
    // Written back once: the same feedback again computes no patch.
    const patched = result.patch!.status as Record<string, unknown>;
    const written = {
      ...app,
      status: {
        ...app.status,
        ...patched,
        operationState: {
          ...(patched.operationState as object),
          message: undefined,
          syncResult: { revision: 'abc123' },
        },
      },
    } as unknown as typeof app;
    expect(
      computeApplicationStatus({ app: written, work, now: NOW, staleAfterMs: 0 }).patch?.status.operationState,
    ).toBeUndefined();
  });

  test('GIVEN a Running operation without a reported sync result WHEN written back THEN no syncResult is invented', () => {
    const s = status(
      hubApp('v1'),
      workWith('v1', { operationStatePhase: 'Running', operationStateStartedAt: '2026-03-01T11:59:57Z' }),
    );
    expect(s.operationState?.syncResult).toBeUndefined();
  });

  test('GIVEN the same feedback twice WHEN written back THEN the second computes no patch (no churn of startedAt or reconciledAt)', () => {
    const work = workWith('v1', {
      syncStatus: 'Synced',
      healthStatus: 'Healthy',
      operationStatePhase: 'Succeeded',
      operationStateStartedAt: '2026-03-01T11:59:57Z',
      reconciledAt: '2026-03-01T11:59:58Z',
    });
    const first = computeApplicationStatus({ app: hubApp('v1'), work, now: NOW, staleAfterMs: 0 });
    const written = hubApp('v1', { ...first.desired });
    const later = computeApplicationStatus({
      app: written,
      work,
      now: new Date(NOW.getTime() + 60_000),
      staleAfterMs: 0,
    });
    expect(later.patch).toBeUndefined();
  });
});
