import { describe, expect, test } from '@jest/globals';
import {
  fieldValueText,
  readApplicationFeedback,
  validateApplicationFeedback,
  workCondition,
} from '../../../src/model/reconcile/feedback.js';
import type { Condition, ManifestStatus, ManifestWork } from '../../../src/model/core/types.js';

function workWith(manifests: ManifestStatus[], conditions: Condition[] = []): Pick<ManifestWork, 'status'> {
  return { status: { conditions, resourceStatus: { manifests } } };
}

const appMeta = {
  group: 'argoproj.io',
  version: 'v1alpha1',
  kind: 'Application',
  resource: 'applications',
  name: 'guestbook',
  namespace: 'argocd',
  ordinal: 1,
};

describe('fieldValueText', () => {
  test.each([
    [{ type: 'String', string: 'Healthy' } as const, 'Healthy'],
    [{ type: 'Integer', integer: 42 } as const, '42'],
    [{ type: 'Boolean', boolean: false } as const, 'false'],
    [{ type: 'JsonRaw', jsonRaw: '"Synced"' } as const, 'Synced'],
    [{ type: 'JsonRaw', jsonRaw: '7' } as const, '7'],
    [{ type: 'JsonRaw', jsonRaw: '{"a":1}' } as const, '{"a":1}'],
    [{ type: 'JsonRaw', jsonRaw: 'not json' } as const, 'not json'],
    [{ type: 'JsonRaw', jsonRaw: 'null' } as const, undefined],
    [{ type: 'String' } as const, undefined],
  ])('renders %j as %j', (value, expected) => {
    expect(fieldValueText(value)).toBe(expected);
  });

  test('an unknown type is absent, not a crash', () => {
    expect(fieldValueText({ type: 'Quantity' } as never)).toBeUndefined();
  });
});

describe('readApplicationFeedback', () => {
  test('matches the application by resourceMeta, not by position', () => {
    // GIVEN the payload is the second manifest, after a Namespace with feedback of its own
    const work = workWith([
      {
        resourceMeta: {
          group: '',
          version: 'v1',
          kind: 'Namespace',
          resource: 'namespaces',
          name: 'guestbook',
          ordinal: 0,
        },
        statusFeedback: { values: [{ name: 'healthStatus', fieldValue: { type: 'String', string: 'Wrong' } }] },
      },
      {
        resourceMeta: appMeta,
        statusFeedback: {
          values: [
            { name: 'healthStatus', fieldValue: { type: 'String', string: 'Healthy' } },
            { name: 'syncStatus', fieldValue: { type: 'String', string: 'Synced' } },
            { name: 'syncRevision', fieldValue: { type: 'String', string: 'abc123' } },
          ],
        },
      },
    ]);
    // THEN the application's own values are read
    expect(readApplicationFeedback(work, 'argocd', 'guestbook')).toStrictEqual({
      healthStatus: 'Healthy',
      syncStatus: 'Synced',
      syncRevision: 'abc123',
    });
  });

  test('an application of the same name in another namespace does not match', () => {
    const work = workWith([
      {
        resourceMeta: { ...appMeta, namespace: 'other' },
        statusFeedback: { values: [{ name: 'syncStatus', fieldValue: { type: 'String', string: 'Synced' } }] },
      },
    ]);
    expect(readApplicationFeedback(work, 'argocd', 'guestbook')).toBeUndefined();
  });

  test('non-string values are converted and unknown names and empty strings dropped', () => {
    const work = workWith([
      {
        resourceMeta: appMeta,
        statusFeedback: {
          values: [
            { name: 'syncRevision', fieldValue: { type: 'Integer', integer: 3 } },
            { name: 'operationStateMessage', fieldValue: { type: 'JsonRaw', jsonRaw: '"boom"' } },
            { name: 'healthStatus', fieldValue: { type: 'String', string: '' } },
            { name: 'somethingElse', fieldValue: { type: 'String', string: 'x' } },
          ],
        },
      },
    ]);
    expect(readApplicationFeedback(work, 'argocd', 'guestbook')).toStrictEqual({
      syncRevision: '3',
      operationStateMessage: 'boom',
    });
  });

  test('no status, no manifests, or no values mean no feedback yet', () => {
    expect(readApplicationFeedback({}, 'argocd', 'guestbook')).toBeUndefined();
    expect(readApplicationFeedback(workWith([]), 'argocd', 'guestbook')).toBeUndefined();
    expect(readApplicationFeedback(workWith([{ resourceMeta: appMeta }]), 'argocd', 'guestbook')).toBeUndefined();
  });
});

describe('workCondition', () => {
  test('finds a condition by type', () => {
    const work = workWith([], [{ type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete' }]);
    expect(workCondition(work, 'Applied')?.status).toBe('True');
    expect(workCondition(work, 'Available')).toBeUndefined();
  });
});

describe('validateApplicationFeedback', () => {
  test.each([
    ['an RFC 3339 time', '2026-03-01T12:00:00Z'],
    ['a time with an offset and fraction', '2026-03-01T13:00:00.250+01:00'],
  ])('keeps %s', (_case, value) => {
    expect(validateApplicationFeedback({ operationStateStartedAt: value, healthStatus: 'Healthy' })).toStrictEqual({
      feedback: { operationStateStartedAt: value, healthStatus: 'Healthy' },
      invalid: [],
    });
  });

  test.each([
    ['Unix seconds', '1772366400'],
    ['Unix milliseconds', '1772366400000'],
  ])('converts %s and names the field it converted', (_case, value) => {
    expect(validateApplicationFeedback({ operationStateStartedAt: value, healthStatus: 'Healthy' })).toStrictEqual({
      feedback: { operationStateStartedAt: '2026-03-01T12:00:00Z', healthStatus: 'Healthy' },
      invalid: [{ name: 'operationStateStartedAt', value, convertedTo: '2026-03-01T12:00:00Z' }],
    });
  });

  test('fails when a time field holds anything else: it is dropped and named, the rest kept', () => {
    expect(
      validateApplicationFeedback({
        operationStateStartedAt: '{"a":1}',
        reconciledAt: 'yesterday',
        syncStatus: 'Synced',
      }),
    ).toStrictEqual({
      feedback: { syncStatus: 'Synced' },
      invalid: [
        { name: 'operationStateStartedAt', value: '{"a":1}' },
        { name: 'reconciledAt', value: 'yesterday' },
      ],
    });
  });

  test('no feedback stays no feedback', () => {
    expect(validateApplicationFeedback(undefined)).toStrictEqual({ feedback: undefined, invalid: [] });
  });
});
