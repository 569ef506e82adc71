import { describe, expect, test } from '@jest/globals';
import { PULL_LABEL } from '../../../src/model/core/keys.js';
import type { Application } from '../../../src/model/core/types.js';
import {
  agentCluster,
  isAgentApplicationSet,
  isAgentModel,
  isPullApplicationSet,
} from '../../../src/model/delivery/classification.js';
import { DELIVERY_MODEL_LABEL } from '../../../src/model/delivery/delivery-model.js';

function appSetWith(labels: Record<string, string>, destinationName?: string) {
  return {
    spec: {
      template: {
        metadata: { labels },
        spec: { destination: destinationName === undefined ? { server: 'https://x' } : { name: destinationName } },
      },
    },
  };
}

function app(namespace: string, labels: Record<string, string>, destinationName?: string): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'guestbook', namespace, labels },
    spec: { destination: destinationName === undefined ? {} : { name: destinationName } },
  } as Application;
}

describe('delivery-model classification', () => {
  test.each([
    ['agent-managed', true],
    [' agent-autonomous ', true],
    ['basic', false],
    ['', false],
  ])('GIVEN the delivery-model label %j WHEN classified THEN isAgentModel is %s', (value, expected) => {
    expect(isAgentModel({ metadata: { labels: { [DELIVERY_MODEL_LABEL]: value } } })).toBe(expected);
  });

  test('GIVEN no object or no labels WHEN classified THEN it is not an agent model', () => {
    expect(isAgentModel(undefined)).toBe(false);
    expect(isAgentModel({ metadata: {} })).toBe(false);
  });

  test.each([
    ['true', true],
    ['True', true],
    ['1', true],
    ['false', false],
    ['yes', false],
  ])('GIVEN a template pull label %j WHEN classified THEN isPullApplicationSet is %s', (value, expected) => {
    expect(isPullApplicationSet(appSetWith({ [PULL_LABEL]: value }))).toBe(expected);
  });

  test('GIVEN an ApplicationSet without a template WHEN classified THEN it is neither pull nor agent', () => {
    expect(isPullApplicationSet({ spec: {} })).toBe(false);
    expect(isAgentApplicationSet({ spec: {} })).toBe(false);
  });

  test.each([
    ['{{name}}', true],
    ['{{ .name }}', true],
    ['spoke-a', false],
  ])(
    'GIVEN an agent-managed template routed to %j WHEN classified THEN isAgentApplicationSet is %s',
    (name, expected) => {
      expect(isAgentApplicationSet(appSetWith({ [DELIVERY_MODEL_LABEL]: 'agent-managed' }, name))).toBe(expected);
    },
  );

  test('GIVEN an agent-autonomous template routed by {{name}} WHEN classified THEN it is no agent ApplicationSet', () => {
    expect(isAgentApplicationSet(appSetWith({ [DELIVERY_MODEL_LABEL]: 'agent-autonomous' }, '{{name}}'))).toBe(false);
  });

  test('GIVEN agent-model Applications WHEN their cluster is read THEN destination.name wins, else the namespace', () => {
    expect(agentCluster(app('spoke-a', { [DELIVERY_MODEL_LABEL]: 'agent-managed' }, 'spoke-b'))).toBe('spoke-b');
    expect(agentCluster(app('spoke-a', { [DELIVERY_MODEL_LABEL]: 'agent-managed' }))).toBe('spoke-a');
    expect(agentCluster(app('spoke-a', { [DELIVERY_MODEL_LABEL]: 'agent-managed' }, 'in-cluster'))).toBeUndefined();
    expect(agentCluster(app('spoke-a', { [DELIVERY_MODEL_LABEL]: 'agent-autonomous' }, 'in-cluster'))).toBe('spoke-a');
  });
});
