/**
 * Golden output of both rollout paths: a static app in waves (hub Applications marked waved, the policy
 * ConfigMap, no works) and an ApplicationSet with RollingSync steps, rendered twice byte for byte the same.
 */
import { describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  AppSource,
  DeletionOrder,
  Fleet,
  Placement,
  PullApplication,
  PullApplicationSet,
  Rollout,
  RolloutFailureAction,
  WaveLimit,
} from '../../src/constructs/index.js';
import { testFleet } from '../support/fleet-builder.js';

function rolloutFleet(): Fleet {
  const { fleet, hub, sets, spokes } = testFleet({
    sets: ['prod'],
    spokes: ['canary', 'east-1', 'east-2', 'west-1', 'west-2'].map((name) => ({
      name,
      labels: { ring: name === 'canary' ? 'canary' : 'main', region: name.startsWith('east') ? 'east' : 'west' },
    })),
  });
  new PullApplication(hub, 'payments', {
    source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'payments', targetRevision: 'v3' }),
    destinationNamespace: 'payments',
    spokes,
    rollout: Rollout.waves(
      [
        { name: 'canary', labels: { ring: 'canary' }, soak: Duration.minutes(30) },
        { name: 'east', labels: { region: 'east' }, maxInFlight: WaveLimit.count(1), soak: Duration.minutes(10) },
        { name: 'rest', rest: true, maxInFlight: WaveLimit.percent(50) },
      ],
      { maxFailures: 1, progressDeadline: Duration.minutes(15), onFailure: RolloutFailureAction.ROLLBACK },
    ),
  });
  new PullApplicationSet(hub, 'podinfo', {
    source: AppSource.helm({
      repoURL: 'https://stefanprodan.github.io/podinfo',
      chart: 'podinfo',
      targetRevision: '6.7.1',
    }),
    destinationNamespace: 'podinfo',
    placement: new Placement(hub, 'all', { clusterSets: [sets.prod] }),
    rollout: Rollout.waves(
      [
        { name: 'canary', labels: { ring: 'canary' } },
        { name: 'east', labels: { region: 'east' }, maxInFlight: WaveLimit.percent(50) },
        { name: 'rest', rest: true },
      ],
      { deletionOrder: DeletionOrder.REVERSE },
    ),
  });
  return fleet;
}

describe('rollout waves output', () => {
  test('GIVEN a waved static app and a RollingSync ApplicationSet THEN the hub output matches the golden snapshot', () => {
    const files = rolloutFleet().renderFiles();
    expect({
      'hub/hub/applications.yaml': files.get('hub/hub/applications.yaml'),
      'hub/hub/application-sets.yaml': files.get('hub/hub/application-sets.yaml'),
    }).toMatchSnapshot();
    // The waved app has no ManifestWork in dist/: the controller writes them.
    for (const [file, content] of files)
      if (file.startsWith('hub/hub/works/')) expect(content).not.toContain('name: argocd-payments-');
  });

  test('two synths are byte-identical', () => {
    expect([...rolloutFleet().renderFiles().entries()]).toStrictEqual([...rolloutFleet().renderFiles().entries()]);
  });
});
