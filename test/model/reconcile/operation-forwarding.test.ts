/**
 * forwardOperation on its own: what the work's payload carries of a hub app's `operation` and what the hub
 * app records of it, from the hub app and the feedback of the work at its target.
 */
import { describe, expect, test } from '@jest/globals';
import { FORWARDED_OPERATION_ANNOTATION, STAND_BY_ANNOTATION } from '../../../src/model/core/keys.js';
import type { Application, JsonObject, ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import {
  FORWARD_INFO_NAME,
  forwardId,
  forwardOperation,
  operationId,
  type ForwardedOperation,
} from '../../../src/model/reconcile/operation-forwarding.js';
import { pullApplication } from '../../support/world.js';
import { applicationFeedback, workStatus } from '../../support/work-status.js';

const NOW = new Date('2026-03-01T10:00:00Z');
const SYNC: JsonObject = { sync: { revision: 'main' } };
const OTHER_SYNC: JsonObject = { sync: { revision: 'v2' } };

/** The hub app, with `operation` and a forwarding record when given. */
function hubApp(options: { operation?: JsonObject; record?: ForwardedOperation; standBy?: boolean } = {}): Application {
  const app = pullApplication({
    annotations: {
      ...(options.record ? { [FORWARDED_OPERATION_ANNOTATION]: JSON.stringify(options.record) } : {}),
      ...(options.standBy ? { [STAND_BY_ANNOTATION]: 'true' } : {}),
    },
  });
  return options.operation ? { ...app, operation: options.operation } : app;
}

/** The work for `payload` (the Application it carries), with the spoke reporting `values`. */
function workFor(payload: Application, values: Record<string, string>): ManifestWork {
  const work = buildManifestWork(payload);
  return {
    ...work,
    status: workStatus([applicationFeedback({ name: 'guestbook', namespace: 'argocd', ordinal: 0, values })]),
  };
}

const forwardMarks = (app: Application): unknown[] =>
  ((app.operation?.info ?? []) as Array<{ name?: string; value?: string }>).filter(
    (entry) => entry.name === FORWARD_INFO_NAME,
  );

describe('forwardOperation', () => {
  test('GIVEN a new operation on the hub app WHEN forwarded THEN it is recorded once and the payload carries it with the mark of this forwarding', () => {
    const app = hubApp({ operation: SYNC });
    const work = workFor(hubApp(), {
      operationStatePhase: 'Succeeded',
      operationStateStartedAt: '2026-03-01T09:00:00Z',
    });

    const forwarding = forwardOperation({ app, work, ownWork: true, now: NOW });

    const record = { id: operationId(SYNC), at: '2026-03-01T10:00:00Z', after: '2026-03-01T09:00:00Z' };
    expect(forwarding.operation).toStrictEqual({ kind: 'record', record });
    expect(forwarding.payloadApp.operation?.sync).toStrictEqual(SYNC.sync);
    expect(forwardMarks(forwarding.payloadApp)).toStrictEqual([{ name: FORWARD_INFO_NAME, value: forwardId(record) }]);
  });

  test('GIVEN a recorded operation WHEN the spoke reports a new startedAt THEN the record is cleared and the payload drops the operation', () => {
    const record = { id: operationId(SYNC), at: '2026-03-01T09:30:00Z', after: '2026-03-01T09:00:00Z' };
    const app = hubApp({ operation: SYNC, record });
    const work = workFor(app, { operationStatePhase: 'Succeeded', operationStateStartedAt: '2026-03-01T09:31:00Z' });

    const forwarding = forwardOperation({ app, work, ownWork: true, now: NOW });

    expect(forwarding.operation).toStrictEqual({ kind: 'clear' });
    expect(forwarding.payloadApp.operation).toBeUndefined();
  });

  test('GIVEN a recorded operation the spoke has not started WHEN forwarded again THEN nothing changes on the hub app and the payload keeps the same mark', () => {
    const record = { id: operationId(SYNC), at: '2026-03-01T09:30:00Z', after: '2026-03-01T09:00:00Z' };
    const app = hubApp({ operation: SYNC, record });
    const work = workFor(app, { operationStatePhase: 'Succeeded', operationStateStartedAt: '2026-03-01T09:00:00Z' });

    const forwarding = forwardOperation({ app, work, ownWork: true, now: NOW });

    expect(forwarding.operation).toBeUndefined();
    expect(forwardMarks(forwarding.payloadApp)).toStrictEqual([{ name: FORWARD_INFO_NAME, value: forwardId(record) }]);
  });

  test('GIVEN the spoke runs an operation from our work WHEN a different one is put on the hub app THEN it is recorded but the payload keeps the running one', () => {
    const running = { ...SYNC, info: [{ name: FORWARD_INFO_NAME, value: 'earlier' }] };
    const work = workFor(hubApp({ operation: running }), {
      operationStatePhase: 'Running',
      operationStateStartedAt: '2026-03-01T09:50:00Z',
    });
    const app = hubApp({ operation: OTHER_SYNC });

    const forwarding = forwardOperation({ app, work, ownWork: true, now: NOW });

    expect(forwarding.operation).toStrictEqual({
      kind: 'record',
      record: { id: operationId(OTHER_SYNC), at: '2026-03-01T10:00:00Z', after: '2026-03-01T09:50:00Z' },
    });
    expect(forwarding.payloadApp.operation).toStrictEqual(running);
  });

  test('GIVEN the spoke runs an operation from a work that is not ours WHEN the hub app has a new one THEN it is forwarded at once', () => {
    const work = workFor(hubApp({ operation: SYNC }), {
      operationStatePhase: 'Running',
      operationStateStartedAt: '2026-03-01T09:50:00Z',
    });
    const app = hubApp({ operation: OTHER_SYNC });

    const forwarding = forwardOperation({ app, work, ownWork: false, now: NOW });

    expect(forwarding.payloadApp.operation?.sync).toStrictEqual(OTHER_SYNC.sync);
    expect(forwardMarks(forwarding.payloadApp)).toHaveLength(1);
  });

  test('GIVEN a record but no operation on the hub app WHEN forwarded THEN the record is cleared (withdrawn)', () => {
    const record = { id: operationId(SYNC), at: '2026-03-01T09:30:00Z', after: '' };
    const app = hubApp({ record });

    const forwarding = forwardOperation({ app, now: NOW });

    expect(forwarding.operation).toStrictEqual({ kind: 'clear' });
    expect(forwarding.payloadApp).toBe(app);
  });

  test('GIVEN a standing-by hub app with an operation WHEN forwarded THEN the payload carries no operation and the hub app keeps it unrecorded', () => {
    const app = hubApp({ operation: SYNC, standBy: true });

    const forwarding = forwardOperation({ app, now: NOW });

    expect(forwarding.operation).toBeUndefined();
    expect(forwarding.payloadApp.operation).toBeUndefined();
    expect(forwarding.payloadApp.metadata).toStrictEqual(app.metadata);
  });
});
