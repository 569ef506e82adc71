/**
 * Waves that overlap (named canaries, then a region, then the rest): a spoke belongs to the first wave that
 * selects it, the policy the controller reads says which later waves selected it too, and plan says so.
 */
import { describe, expect, test } from '@jest/globals';
import { AppSource, PullApplication, Rollout, Spoke } from '../../../src/constructs/index.js';
import { planStateFiles } from '../../../src/constructs/_plan-state.js';
import { formatPlan, planFleet } from '../../../src/model/plan/plan.js';
import { parsePlanState } from '../../../src/model/plan/state.js';
import { type PlanSide } from '../../../src/model/plan/controller-deletions.js';
import { assignWaves } from '../../../src/model/rollout/policy.js';
import { parseRolloutPolicy } from '../../../src/model/rollout/state.js';
import { find, smallFleet } from '../../constructs/helpers.js';

const spokes = [
  { name: 'eu-1', labels: { region: 'eu' } },
  { name: 'eu-2', labels: { region: 'eu' } },
  { name: 'us-1', labels: { region: 'us' } },
];

describe('overlapping waves', () => {
  test('GIVEN a canary named and selected by a later region wave THEN it is in the canary wave only, and the later wave is noted', () => {
    const { waves, problems } = assignWaves(
      [
        { name: 'canary', spokes: ['eu-1'], soakSeconds: 0 },
        { name: 'eu', selector: { matchLabels: { region: 'eu' } }, soakSeconds: 0 },
        { name: 'rest', rest: true, soakSeconds: 0 },
      ],
      spokes,
      'rollout',
    );
    expect(problems).toStrictEqual([]);
    expect(waves).toStrictEqual([
      { name: 'canary', clusters: ['eu-1'], soakSeconds: 0, alsoSelectedBy: { 'eu-1': ['eu'] } },
      { name: 'eu', clusters: ['eu-2'], soakSeconds: 0 },
      { name: 'rest', clusters: ['us-1'], soakSeconds: 0 },
    ]);
  });

  test('GIVEN a waved static app with overlapping waves WHEN planned THEN the policy keeps the first wave and plan says why', () => {
    const side = (revision: string): PlanSide => {
      const f = smallFleet();
      const eu1 = new Spoke(f.hub, 'eu-1', { labels: { region: 'eu' } });
      const eu2 = new Spoke(f.hub, 'eu-2', { labels: { region: 'eu' } });
      new PullApplication(f.hub, 'web', {
        source: AppSource.git({ repoURL: 'https://git.example/web.git', path: 'deploy', targetRevision: revision }),
        destinationNamespace: 'web',
        spokes: [eu1, eu2, f.east],
        rollout: Rollout.waves([
          { name: 'canary', spokes: [eu1] },
          { name: 'eu', labels: { region: 'eu' } },
          { name: 'rest', rest: true },
        ]),
      });
      const objects = [...f.fleet.renderObjects()].flatMap(([file, list]) => list.map((object) => ({ file, object })));
      const states = new Map(
        [...planStateFiles(f.fleet.hubs)].map(([file, text]) => [file.split('/')[0], parsePlanState(text, file)]),
      );
      if (revision === 'v2') {
        const policy = parseRolloutPolicy(find(f.fleet, 'ConfigMap', 'pullfleet-rollout-web')).policy;
        expect(policy?.waves.map((w) => [w.name, w.clusters])).toStrictEqual([
          ['canary', ['eu-1']],
          ['eu', ['eu-2']],
          ['rest', ['east']],
        ]);
      }
      return { objects, states };
    };
    const text = formatPlan(planFleet(side('v1'), side('v2')));
    expect(text).toContain('1. canary: eu-1');
    expect(text).toContain(
      'a spoke belongs to the first wave that selects it: eu-1 (also selected by "eu") stays in canary',
    );
  });
});
