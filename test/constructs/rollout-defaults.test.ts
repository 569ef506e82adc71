/**
 * A Rollout's public fields hold what it uses: the value given, else the documented default (issue 31,
 * "defaults resolved into their fields"). The default deadline is not a deadline given: a PullApplicationSet's
 * rollout, which must not give one, is still accepted without it.
 */
import { describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  AppSource,
  Placement,
  PullApplication,
  PullApplicationSet,
  Rollout,
  RolloutFailureAction,
} from '../../src/constructs/index.js';
import { smallFleet } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example/apps.git', path: 'web', targetRevision: 'main' });

describe('Rollout fields', () => {
  test('GIVEN no options THEN the fields hold the defaults: 10 minutes, no failure tolerated, PAUSE', () => {
    const rollout = Rollout.waves([{ rest: true }]);
    expect(rollout.progressDeadline.toSeconds()).toBe(600);
    expect(rollout.progressDeadline.toHumanString()).toBe('10 minutes');
    expect(rollout.maxFailures).toBe(0);
    expect(rollout.onFailure).toBe(RolloutFailureAction.PAUSE);
  });

  test('GIVEN a deadline THEN the field holds it', () => {
    expect(
      Rollout.waves([{ rest: true }], { progressDeadline: Duration.minutes(3) }).progressDeadline.toSeconds(),
    ).toBe(180);
  });

  test('GIVEN a PullApplicationSet rollout without a deadline THEN the default is no problem; a PullApplication uses it', () => {
    const { fleet, hub, east, west } = smallFleet();
    new PullApplicationSet(hub, 'dynamic', {
      source,
      destinationNamespace: 'dynamic',
      placement: new Placement(hub, 'all'),
      rollout: Rollout.waves([{ rest: true }]),
    });
    new PullApplication(hub, 'static', {
      source,
      destinationNamespace: 'static',
      spokes: [east, west],
      rollout: Rollout.waves([{ rest: true }]),
    });
    expect(fleet.problems().map((p) => p.message)).toStrictEqual([]);
  });
});
