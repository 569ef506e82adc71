/**
 * `pullfleet synth` hands the app the output folder it is about to replace, so a move between delivery
 * models is enforced from the committed output: a one-step change is refused and dist/ stays as it was.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { runSynth } from '../../src/cli/commands/synth.js';
import { runPlan } from '../../src/cli/commands/plan.js';
import { validateFleet } from '../../src/cli/commands/validate.js';
import { scratchFolders } from '../support/scratch.js';

const tmp = scratchFolders(['PULLFLEET_TEST_MOVE']);

const app = `${process.execPath} --import tsx test/fixtures/move-fleet.ts`;
const work = (dist: string) => fs.readFileSync(path.join(dist, 'hub', 'hub', 'works', 'east.yaml'), 'utf8');

describe('pullfleet synth and plan across a move', () => {
  test('GIVEN a committed basic dist/ WHEN the spoke changes model in one step THEN synth refuses and dist/ is unchanged; WITH moveTo THEN step 1 keeps the work and takes the resources finalizer off its Application, and plan says so', async () => {
    const out = tmp('pullfleet-move-');
    const dist = path.join(out, 'dist');
    process.env.PULLFLEET_TEST_MOVE = 'basic';
    expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    const before = work(dist);
    expect(before).toContain('propagationPolicy: Foreground');

    process.env.PULLFLEET_TEST_MOVE = 'agent';
    const refused = await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false });
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain('spoke "east" changes from basic to agent-managed in one step');
    expect(work(dist)).toBe(before);

    // validate reads the committed output the same way: the skipped step is an error there too
    const checked = await validateFleet({ cwd: process.cwd(), app, outdir: dist });
    expect(checked.report?.ok).toBe(false);
    expect(checked.report?.errors.map((e) => e.message).join('\n')).toContain(
      'spoke "east" changes from basic to agent-managed in one step',
    );
    // (without a committed output there is nothing to move from)
    expect(
      (await validateFleet({ cwd: process.cwd(), app, outdir: path.join(out, 'none') })).report?.errors,
    ).toStrictEqual([]);

    process.env.PULLFLEET_TEST_MOVE = 'agent-move';
    expect((await validateFleet({ cwd: process.cwd(), app, outdir: dist })).report?.errors).toStrictEqual([]);
    const plan = await runPlan({ cwd: process.cwd(), outdir: path.relative(process.cwd(), dist), app });
    expect(plan.stdout).toContain('MOVES BETWEEN DELIVERY MODELS (1):');
    expect(plan.stdout).toContain('hub: spoke east: move basic → agent-managed, step 1 of 3');
    expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    expect(work(dist)).toContain('propagationPolicy: Foreground');
    expect(work(dist)).not.toContain('resources-finalizer.argocd.argoproj.io');
  });
});
