/**
 * Making a static app waved hands its works from synth to the controller without deleting any: step 1
 * renders them once more with Argo CD's Prune=false, step 2 drops them from dist/ and renders the hub
 * Applications waved with the rollout policy; plan shows no deletion. Dropping the waves renders the works
 * again at once (nothing is deleted either way).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { runSynth } from '../../src/cli/commands/synth.js';
import { runPlan } from '../../src/cli/commands/plan.js';
import { runBinary } from '../support/cli.js';
import { scratchFolders } from '../support/scratch.js';

const tmp = scratchFolders(['PULLFLEET_TEST_WAVES']);

/** The app's work on spoke east (works/east.yaml also holds the spoke's bootstrap work). */
const APP_WORK = 'name: argocd-web-east';
const app = `${process.execPath} --import tsx test/fixtures/waves-fleet.ts`;
const read = (dist: string, file: string) => {
  const at = path.join(dist, 'hub', 'hub', file);
  return fs.existsSync(at) ? fs.readFileSync(at, 'utf8') : undefined;
};

describe('making a static app waved', () => {
  test('GIVEN committed static works WHEN the app gets waves THEN step 1 protects the works, step 2 hands them to the controller, and plan shows no deletion', async () => {
    const out = tmp('pullfleet-waves-');
    const dist = path.join(out, 'dist');
    const plan = async () =>
      (await runPlan({ cwd: process.cwd(), outdir: path.relative(process.cwd(), dist), app })).stdout;

    process.env.PULLFLEET_TEST_WAVES = 'none';
    expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    expect(read(dist, 'works/east.yaml')).toContain(APP_WORK);

    // step 1: the works stay in dist/, now with Prune=false, and synth says what comes next
    process.env.PULLFLEET_TEST_WAVES = 'waved';
    const step1 = await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false });
    expect(step1.ok).toBe(true);
    expect(step1.output).toContain('app "web" becomes waved: this synth is step 1 of 2');
    for (const spoke of ['canary', 'east', 'west'])
      expect(read(dist, `works/${spoke}.yaml`)).toContain('argocd.argoproj.io/sync-options: "Prune=false"');
    expect(read(dist, 'applications.yaml')).not.toContain('pullfleet.io/delivery: waved');

    // step 2: plan shows the works leaving dist/ without deleting anything on a spoke
    const step2Plan = await plan();
    expect(step2Plan).not.toContain('DELETIONS ON SPOKES');
    expect(step2Plan).toContain('rendered with Argo CD Prune=false: Argo CD leaves it on the hub');
    expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    expect(read(dist, 'works/east.yaml')).not.toContain(APP_WORK);
    const apps = read(dist, 'applications.yaml')!;
    expect(apps.match(/pullfleet\.io\/delivery: waved/g)).toHaveLength(3);
    expect(apps).toContain('pullfleet.io/rollout: pullfleet-rollout-web');
    expect(apps).toContain('kind: ConfigMap');
    expect(apps).toContain(
      'wave-001-canary.json: "{\\"name\\":\\"canary\\",\\"soakSeconds\\":300,\\"clusters\\":[\\"canary\\"]}"',
    );

    // a new revision of a waved app changes the hub Applications only
    process.env.PULLFLEET_TEST_WAVES = 'waved-v2';
    const v2Plan = await plan();
    expect(v2Plan).toContain('ROLLOUTS (1): the changed apps reach their spokes in these waves, in order');
    expect(v2Plan).toContain('    1. canary: canary, soak 5 min\n    2. main: east, west, 1 at a time');
    expect(v2Plan).not.toContain('DELETIONS ON SPOKES');
    expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    expect(read(dist, 'works/east.yaml')).not.toContain(APP_WORK);
    expect(read(dist, 'applications.yaml')).toContain('targetRevision: v2');

    // dropping the waves renders the works again; nothing leaves a spoke
    process.env.PULLFLEET_TEST_WAVES = 'none';
    expect(await plan()).not.toContain('DELETIONS ON SPOKES');
    expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    expect(read(dist, 'works/east.yaml')).toContain(APP_WORK);
    expect(read(dist, 'works/east.yaml')).not.toContain('Prune=false');
  });

  test('GIVEN step 1 of becoming waved committed WHEN the app is removed THEN its works are rendered once more without Prune=false, and the next synth removes them (plan lists it)', async () => {
    const out = tmp('pullfleet-waves-');
    const dist = path.join(out, 'dist');
    // As users run them: bin/pullfleet.js (the fleet program reads PULLFLEET_TEST_WAVES from the environment).
    const plan = async () => {
      const run = runBinary(['plan', dist, '-a', app]);
      expect(run.code).toBe(0);
      return run.out;
    };
    const synth = async () => {
      const run = runBinary(['synth', '-o', dist, '-a', app]);
      return { ok: run.code === 0, output: `${run.out}${run.err}` };
    };

    process.env.PULLFLEET_TEST_WAVES = 'none';
    expect((await synth()).ok).toBe(true);
    process.env.PULLFLEET_TEST_WAVES = 'waved';
    expect((await synth()).output).toContain('step 1 of 2');
    expect(read(dist, 'works/east.yaml')).toContain('Prune=false');

    // The app goes before step 2: its works stay once more, prunable, and nothing leaves a spoke yet.
    process.env.PULLFLEET_TEST_WAVES = 'gone';
    expect(await plan()).not.toContain('DELETIONS ON SPOKES');
    const gone = await synth();
    expect(gone.ok).toBe(true);
    expect(gone.output).toContain(
      "ManifestWork east/argocd-web-east was rendered with Argo CD's Prune=false (step 1 of an app becoming waved), and the app no longer delivers it",
    );
    for (const spoke of ['canary', 'east', 'west']) {
      expect(read(dist, `works/${spoke}.yaml`)).toContain(`name: argocd-web-${spoke}`);
      expect(read(dist, `works/${spoke}.yaml`)).not.toContain('Prune=false');
    }
    expect(read(dist, 'applications.yaml') ?? '').not.toContain('web');

    // The next synth drops them: plan lists each deletion on its spoke, and synth says nothing more.
    const dropPlan = await plan();
    expect(dropPlan).toContain('DELETIONS ON SPOKES');
    for (const spoke of ['canary', 'east', 'west']) expect(dropPlan).toContain(`argocd-web-${spoke}`);
    const again = await synth();
    expect(again.ok).toBe(true);
    expect(again.output).not.toContain('Prune=false');
    for (const spoke of ['canary', 'east', 'west'])
      expect(read(dist, `works/${spoke}.yaml`) ?? '').not.toContain(`name: argocd-web-${spoke}`);
  });

  test('GIVEN no committed output WHEN a new app is waved THEN synth renders it waved at once', async () => {
    const out = tmp('pullfleet-waves-');
    const dist = path.join(out, 'dist');
    process.env.PULLFLEET_TEST_WAVES = 'waved';
    const result = await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false });
    expect(result.ok).toBe(true);
    expect(result.output).not.toContain('step 1 of 2');
    expect(read(dist, 'works/east.yaml')).not.toContain(APP_WORK);
    expect(read(dist, 'applications.yaml')).toContain('pullfleet.io/delivery: waved');
  });
});
