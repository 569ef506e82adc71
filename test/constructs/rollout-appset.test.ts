/**
 * Rollout waves of a PullApplicationSet: rendered as Argo CD's RollingSync, resolved at synth against the
 * spokes the placement selects, with every problem reported together.
 */
import { describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  AppSource,
  DeletionOrder,
  Placement,
  PullApplicationSet,
  Rollout,
  RolloutFailureAction,
  Spoke,
  WaveLimit,
} from '../../src/constructs/index.js';
import { CLEANUP_FINALIZER, CONTROLLER_APP_ANNOTATIONS } from '../../src/model/core/keys.js';
import { ROLLOUT_CLUSTER_LABEL } from '../../src/model/rollout/policy.js';
import { find, smallFleet, synthError } from './helpers.js';

const source = AppSource.git({ repoURL: 'https://git.example/apps.git', path: 'web', targetRevision: 'main' });

function fleetWith(rollout: Rollout | undefined) {
  const f = smallFleet();
  new Spoke(f.hub, 'canary', { clusterSet: f.prod, labels: { ring: 'canary' } });
  const placement = new Placement(f.hub, 'prod', { clusterSets: [f.prod] });
  new PullApplicationSet(f.hub, 'web', {
    source,
    destinationNamespace: 'web',
    placement,
    ...(rollout ? { rollout } : {}),
  });
  return f;
}

type AppSet = {
  spec: {
    strategy?: unknown;
    preservedFields?: { annotations: string[] };
    template: { metadata: { labels: Record<string, string>; finalizers?: string[] } };
  };
};

describe('PullApplicationSet rollout waves', () => {
  test('GIVEN three waves WHEN synthesized THEN the ApplicationSet renders RollingSync steps over the cluster label, the last one taking every other cluster', () => {
    const { fleet } = fleetWith(
      Rollout.waves(
        [
          { name: 'canary', labels: { ring: 'canary' } },
          { name: 'east', labels: { region: 'us-east' }, maxInFlight: WaveLimit.count(1) },
          { name: 'rest', rest: true, maxInFlight: WaveLimit.percent(50) },
        ],
        { deletionOrder: DeletionOrder.REVERSE },
      ),
    );
    const appSet = find(fleet, 'ApplicationSet', 'web') as unknown as AppSet;
    expect(appSet.spec.strategy).toStrictEqual({
      type: 'RollingSync',
      rollingSync: {
        steps: [
          { matchExpressions: [{ key: ROLLOUT_CLUSTER_LABEL, operator: 'In', values: ['canary'] }] },
          { matchExpressions: [{ key: ROLLOUT_CLUSTER_LABEL, operator: 'In', values: ['east'] }], maxUpdate: 1 },
          {
            matchExpressions: [{ key: ROLLOUT_CLUSTER_LABEL, operator: 'NotIn', values: ['canary', 'east'] }],
            maxUpdate: '50%',
          },
        ],
      },
      deletionOrder: 'Reverse',
    });
    expect(appSet.spec.template.metadata.labels[ROLLOUT_CLUSTER_LABEL]).toBe('{{name}}');
  });

  test('GIVEN any basic pull ApplicationSet WHEN synthesized THEN its template keeps the cleanup finalizer and the controller annotations survive updates', () => {
    const { fleet } = fleetWith(undefined);
    const appSet = find(fleet, 'ApplicationSet', 'web') as unknown as AppSet;
    expect(appSet.spec.template.metadata.finalizers).toStrictEqual([CLEANUP_FINALIZER]);
    expect(appSet.spec.preservedFields).toStrictEqual({ annotations: [...CONTROLLER_APP_ANNOTATIONS] });
    expect(appSet.spec.strategy).toBeUndefined();
    expect(appSet.spec.template.metadata.labels[ROLLOUT_CLUSTER_LABEL]).toBeUndefined();
  });

  test('GIVEN named canaries, then a region, then the rest WHEN a canary is in the region too THEN it stays in the first wave that selects it', () => {
    const f = fleetWith(undefined);
    new PullApplicationSet(f.hub, 'api', {
      source,
      destinationNamespace: 'api',
      placement: new Placement(f.hub, 'prod-api', { clusterSets: [f.prod] }),
      rollout: Rollout.waves([
        { name: 'canaries', spokes: [f.east] },
        { name: 'us', labelExpressions: [{ key: 'region', operator: 'In', values: ['us-east', 'us-west'] }] },
        { name: 'rest', rest: true },
      ]),
    });
    const appSet = find(f.fleet, 'ApplicationSet', 'api') as unknown as AppSet;
    expect(appSet.spec.strategy).toStrictEqual({
      type: 'RollingSync',
      rollingSync: {
        steps: [
          { matchExpressions: [{ key: ROLLOUT_CLUSTER_LABEL, operator: 'In', values: ['east'] }] },
          { matchExpressions: [{ key: ROLLOUT_CLUSTER_LABEL, operator: 'In', values: ['west'] }] },
          { matchExpressions: [{ key: ROLLOUT_CLUSTER_LABEL, operator: 'NotIn', values: ['east', 'west'] }] },
        ],
      },
    });
  });

  test('fails when a wave selects spokes only earlier waves already hold, naming them', () => {
    const { fleet } = fleetWith(
      Rollout.waves([
        { name: 'us', labelExpressions: [{ key: 'region', operator: 'In', values: ['us-east', 'us-west'] }] },
        { name: 'east', labels: { region: 'us-east' } },
        { rest: true },
      ]),
    );
    expect(synthError(fleet)).toContain(
      'wave "east" gets no spoke: every spoke it selects (east) is in an earlier wave, and a spoke belongs to the first wave that selects it',
    );
  });

  test('fails when a wave spoke is undefined (a variable not yet set), naming the wave and the position', () => {
    const later: Spoke | undefined = undefined;
    const { fleet } = fleetWith(
      Rollout.waves([{ name: 'canary', spokes: [later as unknown as Spoke] }, { rest: true }]),
    );
    const message = synthError(fleet);
    expect(message).toContain(
      '[hub/PullApplicationSet:web] rollout wave 1 ("canary") spokes[0] is undefined (undefined): expected a Spoke',
    );
    expect(message).not.toContain('selects no spoke');
  });

  test('fails when a selected spoke falls in no wave, and a wave selects nothing (all reported together)', () => {
    const { fleet } = fleetWith(
      Rollout.waves([
        { name: 'canary', labels: { ring: 'canary' } },
        { name: 'us', labelExpressions: [{ key: 'region', operator: 'In', values: ['us-east', 'us-west'] }] },
        { name: 'east', labels: { region: 'us-east' } },
        { name: 'nowhere', labels: { region: 'mars' } },
      ]),
    );
    const message = synthError(fleet);
    expect(message).toContain('wave "east" gets no spoke: every spoke it selects (east) is in an earlier wave');
    expect(message).toContain('wave "nowhere" selects no spoke the app targets');
    expect(message).not.toContain('spoke "west" is targeted but falls in no wave');
  });

  test('fails when a wave names a spoke the app does not target', () => {
    const f = fleetWith(undefined);
    const elsewhere = new Spoke(f.hub, 'lab', { labels: { ring: 'lab' } });
    const placement = new Placement(f.hub, 'prod-only', { clusterSets: [f.prod] });
    new PullApplicationSet(f.hub, 'api', {
      source,
      destinationNamespace: 'api',
      placement,
      rollout: Rollout.waves([{ spokes: [elsewhere] }, { rest: true }]),
    });
    expect(synthError(f.fleet)).toContain('wave "wave-1" names spoke "lab", which the app does not target');
  });

  test('fails when a targeted spoke falls in no wave', () => {
    const { fleet } = fleetWith(Rollout.waves([{ labels: { ring: 'canary' } }, { labels: { region: 'us-east' } }]));
    expect(synthError(fleet)).toContain('spoke "west" is targeted but falls in no wave');
  });

  test('fails when the rollout asks for what RollingSync cannot do: soak, tolerated failures, deadline, rollback', () => {
    const { fleet } = fleetWith(
      Rollout.waves([{ labels: { ring: 'canary' }, soak: Duration.minutes(5) }, { rest: true }], {
        maxFailures: 2,
        progressDeadline: Duration.minutes(3),
        onFailure: RolloutFailureAction.ROLLBACK,
      }),
    );
    const message = synthError(fleet);
    expect(message).toContain('soak 5 minutes is not possible for a PullApplicationSet');
    expect(message).toContain('maxFailures 2 is not possible for a PullApplicationSet');
    expect(message).toContain('progressDeadline is not possible for a PullApplicationSet');
    expect(message).toContain('onFailure ROLLBACK is not possible for a PullApplicationSet');
  });

  test('fails on invalid wave values: a name, a limit, a rest wave that selects, a wave that selects nothing', () => {
    const { fleet } = fleetWith(
      Rollout.waves([
        { name: 'Canary!', labels: { ring: 'canary' }, maxInFlight: WaveLimit.count(0) },
        { maxInFlight: WaveLimit.percent(150) },
        { rest: true, labels: { a: 'b' } },
      ]),
    );
    const message = synthError(fleet);
    expect(message).toContain('name "Canary!" must be a DNS label');
    expect(message).toContain('WaveLimit.count(0) must be a whole number of 1 or more');
    expect(message).toContain('WaveLimit.percent(150) must be a whole number from 1 to 100');
    expect(message).toContain('rollout wave 2 ("wave-2"): selects no spoke');
    expect(message).toContain('a wave that takes the rest selects nothing itself');
  });

  test('fails when rollout is not a Rollout', () => {
    const f = smallFleet();
    const placement = new Placement(f.hub, 'prod', { clusterSets: [f.prod] });
    new PullApplicationSet(f.hub, 'web', {
      source,
      destinationNamespace: 'web',
      placement,
      rollout: [{ labels: {} }] as never,
    });
    expect(synthError(f.fleet)).toContain('a Rollout');
  });
});
