/**
 * The rollout ConfigMaps (src/model/rollout/state.ts): what they hold is byte-identical to what synth, the
 * controller and the CLI wrote and read before the model owned them, and every build reads back as built.
 *
 * fixtures/configmaps-before.json was captured at commit cff8a7e, before the move, from the functions that
 * built and read these ConfigMaps then (`buildRolloutPolicyConfigMap` of rollout/static.ts,
 * `buildRolloutStateConfigMap` of the controller's rollout reconciler, `rolloutSummaries` of the CLI), on the
 * cases below; each output is the `JSON.stringify` of the object built.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { DeliveryModel } from '../../../src/model/delivery/delivery-model.js';
import { stepRollout, type RolloutDecision } from '../../../src/model/rollout/engine.js';
import type { RolloutPolicy } from '../../../src/model/rollout/policy.js';
import {
  buildRolloutPolicyConfigMap,
  buildRolloutStateConfigMap,
  parseRolloutPolicy,
  parseRolloutProgress,
  parseRolloutStateConfigMap,
  rolloutAppOf,
  ROLLOUT_STATE_SELECTOR,
  type RolloutProgressReading,
} from '../../../src/model/rollout/state.js';

const BEFORE = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'configmaps-before.json'), 'utf8'),
) as { policies: string[]; states: string[]; summaries: string };

/** Policies with the namespace, construct path and revision synth renders them with. */
const POLICIES: Array<[RolloutPolicy, string, string, string]> = [
  [
    {
      app: 'web',
      maxFailures: 0,
      onFailure: 'pause',
      progressDeadlineSeconds: 600,
      waves: [
        { name: 'canary', clusters: ['c1'], soakSeconds: 60 },
        { name: 'rest', clusters: ['c2', 'c3'], soakSeconds: 0 },
      ],
    },
    'argocd',
    'fleet/hub/web',
    'abc123',
  ],
  [
    {
      app: 'shop-api',
      maxFailures: 2,
      onFailure: 'rollback',
      progressDeadlineSeconds: 120,
      waves: [
        {
          name: 'early',
          clusters: ['a', 'b'],
          maxInFlight: { count: 1 },
          soakSeconds: 30,
          alsoSelectedBy: { b: ['late'] },
        },
        {
          name: 'late',
          clusters: ['c'],
          maxInFlight: { percent: 50 },
          soakSeconds: 0,
          outside: {
            d: { reason: 'moving', model: DeliveryModel.AGENT_MANAGED, step: 1, steps: 3 },
            e: { reason: 'agent', model: DeliveryModel.AGENT_AUTONOMOUS },
          },
        },
      ],
    },
    'gitops',
    'fleet/hub/shop',
    'ffff',
  ],
];

/** Decisions of the engine (progressing and held, halted by hand, idle) with the namespace and app they are for. */
function decisions(): Array<[string, string, RolloutDecision]> {
  const policy = POLICIES[0][0];
  const now = new Date('2026-01-02T03:04:05.678Z');
  const first = stepRollout({
    policy,
    observations: [
      { cluster: 'c1', desired: 'h2', delivered: 'h1', sawDelivered: true, health: 'Healthy', sync: 'Synced' },
      { cluster: 'c2', desired: 'h2', delivered: 'h1', sawDelivered: true, health: 'Healthy', sync: 'Synced' },
    ],
    now,
    namespace: 'argocd',
    unobservable: { 'web-c3': 'is being deleted' },
  });
  const halted: RolloutDecision = {
    ...first,
    phase: 'halted',
    halted: { clusters: ['c1'], message: 'rollout of web halted: c1 failed' },
    state: {
      ...first.state,
      halted: { at: '2026-01-02T03:10:00Z', clusters: ['c1'], reason: 'deadline' },
      resumeToken: 'r1',
    },
  };
  return [
    ['argocd', 'web', first],
    ['gitops', 'shop-api', halted],
    ['argocd', 'empty', stepRollout({ policy, observations: [], now })],
  ];
}

const byApp = (a: RolloutProgressReading, b: RolloutProgressReading) =>
  `${a.namespace}/${a.app}` < `${b.namespace}/${b.app}` ? -1 : 1;

describe('the policy ConfigMap', () => {
  test('is built byte for byte as before', () => {
    expect(POLICIES.map(([policy, ...rest]) => JSON.stringify(buildRolloutPolicyConfigMap(policy, ...rest)))).toEqual(
      BEFORE.policies,
    );
  });

  test('reads back as the policy it was built from', () => {
    for (const [policy, ...rest] of POLICIES)
      expect(parseRolloutPolicy(buildRolloutPolicyConfigMap(policy, ...rest))).toStrictEqual({ policy });
  });

  test('fails when a wave announced is missing, naming the ConfigMap and the fix', () => {
    const map = buildRolloutPolicyConfigMap(...POLICIES[0]);
    const { 'wave-002-rest.json': _rest, ...data } = map.data;
    expect(parseRolloutPolicy({ ...map, data })).toStrictEqual({
      problem:
        'ConfigMap argocd/pullfleet-rollout-web: 2 waves announced, 1 found: synthesize the fleet again and let the hub apply it',
    });
  });

  test('fails when policy.json is not JSON', () => {
    const map = buildRolloutPolicyConfigMap(...POLICIES[0]);
    expect(parseRolloutPolicy({ ...map, data: { ...map.data, 'policy.json': '{' } }).problem).toMatch(
      /^ConfigMap argocd\/pullfleet-rollout-web: policy\.json is not JSON \(.+\): synthesize the fleet again/,
    );
  });
});

describe('the state ConfigMap', () => {
  test('is built byte for byte as before', () => {
    expect(
      decisions().map(([ns, app, decision]) => JSON.stringify(buildRolloutStateConfigMap(ns, app, decision))),
    ).toEqual(BEFORE.states);
  });

  test('reads back as the state it was built from', () => {
    for (const [ns, app, decision] of decisions())
      expect(parseRolloutStateConfigMap(buildRolloutStateConfigMap(ns, app, decision))).toStrictEqual({
        state: decision.state,
      });
  });

  test('belongs to its app, as the policy ConfigMap does', () => {
    expect(rolloutAppOf(buildRolloutStateConfigMap('argocd', 'shop-api', decisions()[0][2]))).toBe('shop-api');
    expect(rolloutAppOf(buildRolloutPolicyConfigMap(...POLICIES[1]))).toBe('shop-api');
    expect(rolloutAppOf({ metadata: { name: 'other', labels: {} } })).toBeUndefined();
  });

  test('is the one ConfigMap of an app the state selector lists', () => {
    const [key, value] = ROLLOUT_STATE_SELECTOR.split('=');
    expect(buildRolloutStateConfigMap(...decisions()[0]).metadata.labels?.[key]).toBe(value);
    expect(buildRolloutPolicyConfigMap(...POLICIES[0]).metadata.labels?.[key]).not.toBe(value);
  });

  test('holds no state before the controller writes one', () => {
    expect(parseRolloutStateConfigMap(undefined)).toStrictEqual({});
    expect(
      parseRolloutStateConfigMap({ metadata: { name: 'pullfleet-rollout-web-state', namespace: 'argocd' } }),
    ).toStrictEqual({});
  });

  test('fails when state.json is not a state, naming the ConfigMap and the fix', () => {
    const map = buildRolloutStateConfigMap(...decisions()[0]);
    expect(parseRolloutStateConfigMap({ ...map, data: { ...map.data, 'state.json': '{"target":1}' } })).toStrictEqual({
      problem:
        'rollout state in ConfigMap argocd/pullfleet-rollout-web-state cannot be read: "target" is not a string; delete it to start the rollout afresh (clusters already converged count as done, nothing is deleted)',
    });
  });
});

describe('the progress of a state ConfigMap', () => {
  test('reads as `pullfleet status` read it before', () => {
    const readings = decisions().map(([ns, app, decision]) =>
      parseRolloutProgress(buildRolloutStateConfigMap(ns, app, decision)),
    );
    expect(JSON.stringify((readings as RolloutProgressReading[]).sort(byApp))).toBe(BEFORE.summaries);
  });

  test('reads back as the progress it was built from', () => {
    for (const [namespace, app, decision] of decisions())
      expect(parseRolloutProgress(buildRolloutStateConfigMap(namespace, app, decision))).toStrictEqual({
        namespace,
        app,
        phase: decision.phase,
        waves: decision.waves,
        ...(decision.halted ? { halted: decision.halted } : {}),
        ...(decision.held ? { held: decision.held } : {}),
      });
  });

  test('fails when progress.json is missing, with phase unknown and a problem naming the ConfigMap', () => {
    const map = buildRolloutStateConfigMap(...decisions()[0]);
    const reading = parseRolloutProgress({ ...map, data: { 'state.json': map.data['state.json'] } });
    expect(reading).toMatchObject({ namespace: 'argocd', app: 'web', phase: 'unknown', waves: [] });
    expect(reading?.problem).toMatch(
      /^ConfigMap argocd\/pullfleet-rollout-web-state holds no readable progress\.json \(.+\); the controller rewrites it on its next pass$/,
    );
  });

  test('fails when progress.json has no phase', () => {
    const map = buildRolloutStateConfigMap(...decisions()[0]);
    expect(parseRolloutProgress({ ...map, data: { 'progress.json': '{"waves":[]}' } })?.problem).toBe(
      'ConfigMap argocd/pullfleet-rollout-web-state holds no readable progress.json (not a progress summary); the controller rewrites it on its next pass',
    );
  });

  test('is not read from a ConfigMap without the rollout-app label', () => {
    const map = buildRolloutStateConfigMap(...decisions()[0]);
    expect(parseRolloutProgress({ ...map, metadata: { ...map.metadata, labels: {} } })).toBeUndefined();
  });
});
