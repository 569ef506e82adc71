/**
 * `pullfleet plan` as a command, for a waved static app (its works are the hub controller's, never in
 * dist/): the works the controller deletes when the app is renamed or loses a spoke are deletions on
 * spokes, so `--fail-on-deletions` stops on them, `--allow-deletion` accepts them and `-o json` counts them.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { runPlan } from '../../../src/cli/commands/plan.js';
import { wavedFleet, type WavedFleetSpec } from '../../support/plan-waved-fleet.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A project whose committed dist/ is the waved fleet `previous`. */
function project(previous: WavedFleetSpec): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-plan-waved-'));
  scratch.push(dir);
  wavedFleet(previous, path.join(dir, 'dist')).synth();
  return dir;
}

/** The synth plan runs: writes the waved fleet `spec` into the scratch folder. */
const synthOf = (spec: WavedFleetSpec) => (dir: string) => {
  wavedFleet(spec, dir).synth();
  return { ok: true, output: '' };
};

describe('pullfleet plan of a waved static app', () => {
  test('GIVEN a committed waved app WHEN it is renamed with --fail-on-deletions THEN plan exits 1 naming every work the controller deletes', async () => {
    const dir = project({});

    const result = await runPlan({ cwd: dir, synth: synthOf({ app: 'shop' }), failOnDeletions: true });

    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(
      'pullfleet plan: 3 deletion(s) on spokes not acknowledged: hub/s1/argocd-web-s1, hub/s2/argocd-web-s2, hub/s3/argocd-web-s3\n' +
        'review them, then acknowledge each with --allow-deletion <id> (or list the ids in the file given to --acknowledgements)\n',
    );
    expect(result.stdout).toContain('summary: 3 deletions on spokes, 0 runtime deletions');
    expect(result.stdout).not.toContain('0 deletions on spokes');
  });

  test('GIVEN the rename WHEN every deletion is acknowledged THEN plan exits 0 and marks them', async () => {
    const dir = project({});

    const result = await runPlan({
      cwd: dir,
      synth: synthOf({ app: 'shop' }),
      failOnDeletions: true,
      allowDeletion: ['hub/*/argocd-web-*'],
    });

    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.match(/^ {2}- hub\/s\d\/argocd-web-s\d \(acknowledged\): /gm)).toHaveLength(3);
  });

  test('GIVEN a committed waved app WHEN a spoke is dropped with -o json THEN the JSON counts the one deletion and names its hub Application', async () => {
    const dir = project({});

    const result = await runPlan({
      cwd: dir,
      synth: synthOf({ targets: ['s1', 's2'] }),
      failOnDeletions: true,
      format: 'json',
    });

    expect(result.exitCode).toBe(1);
    const json = JSON.parse(result.stdout) as {
      counts: Record<string, number>;
      spokeDeletions: Array<{ id: string; acknowledged: boolean; runtime?: { application: string } }>;
    };
    expect(json.counts).toMatchObject({ spokeDeletions: 1, runtimeDeletions: 0, unacknowledgedDeletions: 1 });
    expect(json.spokeDeletions.map((d) => [d.id, d.acknowledged, d.runtime?.application])).toStrictEqual([
      ['hub/s3/argocd-web-s3', false, 'argocd/web-s3'],
    ]);
  });
});
