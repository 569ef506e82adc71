/**
 * An agent spoke that goes unreachable keeps its delivery model. The OCM GitOpsCluster controller adds
 * `unreachable` and `unavailable` tolerations to the Placement it reads (argocd-pull-integration
 * `ensurePlacementTolerations`), so the real placement keeps selecting such a cluster; synth renders the
 * same tolerations and evaluates the placement with them, so a pulled inventory in which an edge spoke is
 * unreachable changes nothing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { runSynth } from '../../src/cli/commands/synth.js';
import { runPlan } from '../../src/cli/commands/plan.js';
import { scratchFolders } from '../support/scratch.js';

const tmp = scratchFolders(['PULLFLEET_TEST_MOVE']);

const app = `${process.execPath} --import tsx test/fixtures/move-fleet.ts`;

describe('an agent-managed spoke that goes unreachable', () => {
  test('GIVEN a committed dist/ with east on agent-managed WHEN east is tainted unreachable THEN synth keeps it agent-managed, renders the tolerations the OCM controller adds, and plan shows no deletion', async () => {
    const out = tmp('pullfleet-unreachable-');
    const dist = path.join(out, 'dist');
    process.env.PULLFLEET_TEST_MOVE = 'agent';
    expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    const placements = fs.readFileSync(path.join(dist, 'hub', 'hub', 'placements.yaml'), 'utf8');
    expect(placements).toContain(
      [
        '  tolerations:',
        '    - key: cluster.open-cluster-management.io/unreachable',
        '      operator: Exists',
        '    - key: cluster.open-cluster-management.io/unavailable',
        '      operator: Exists',
      ].join('\n'),
    );
    const files = (dir: string) => fs.readdirSync(dir, { recursive: true }).map(String).sort();
    const read = (file: string) => fs.readFileSync(path.join(dist, file), 'utf8');
    const modelOfEast = () =>
      (
        JSON.parse(read('hub/plan-state.json')) as { spokes: Array<{ name: string; deliveryModel: string }> }
      ).spokes.find((s) => s.name === 'east')?.deliveryModel;
    expect(modelOfEast()).toBe('agent-managed');
    const before = files(dist);
    const apps = read('hub/hub/applications.yaml');
    const works = read('hub/hub/works/east.yaml');

    process.env.PULLFLEET_TEST_MOVE = 'agent-unreachable';
    const plan = await runPlan({
      cwd: process.cwd(),
      outdir: path.relative(process.cwd(), dist),
      app,
      failOnDeletions: true,
    });
    expect(plan.stdout).not.toContain('in one step');
    expect(plan.exitCode).toBe(0);
    const synth = await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false });
    expect(synth.output).not.toContain('changes from agent-managed to basic');
    expect(synth.ok).toBe(true);
    expect(files(dist)).toStrictEqual(before);
    expect(modelOfEast()).toBe('agent-managed');
    expect(read('hub/hub/placements.yaml')).toBe(placements);
    expect(read('hub/hub/applications.yaml')).toBe(apps);
    expect(read('hub/hub/works/east.yaml')).toBe(works);
  });
});
