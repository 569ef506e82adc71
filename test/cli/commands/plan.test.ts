/**
 * `pullfleet plan` as a command: the committed output folder against a synth (the fixture fleet written
 * by Fleet.synth, exactly as `cdk8s synth` runs it), exit codes, acknowledgements, JSON, and that the
 * output folder is never touched.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { runPlan } from '../../../src/cli/commands/plan.js';
import { planFleetFixture, type FleetSpec } from '../../support/plan-fleet.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function project(previous?: FleetSpec): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-plan-'));
  scratch.push(dir);
  if (previous) planFleetFixture(previous, path.join(dir, 'dist')).synth();
  return dir;
}

/** The synth plan runs: writes the fixture fleet `spec` into the scratch folder. */
const synthOf = (spec: FleetSpec) => (dir: string) => {
  planFleetFixture(spec, dir).synth();
  return { ok: true, output: '' };
};

/** Every file under `dir` with its content, to prove plan changed nothing. */
function snapshot(dir: string): Record<string, string> {
  if (!fs.existsSync(dir)) return {};
  const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  return Object.fromEntries(
    files.map((e) => [
      path.relative(dir, path.join(e.parentPath, e.name)),
      fs.readFileSync(path.join(e.parentPath, e.name), 'utf8'),
    ]),
  );
}

describe('pullfleet plan', () => {
  test('GIVEN no output folder THEN plan says first synth, exits 0 and creates nothing', async () => {
    const dir = project();
    const result = await runPlan({ cwd: dir, synth: synthOf({ staticApp: true }), failOnDeletions: true });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      /^first synth: dist\/ is missing or empty, so there is nothing to compare with and nothing on a spoke is deleted\.\nsynth will write \d+ objects \(4 ManifestWorks\) in \d+ files\.\n$/,
    );
    expect(fs.readdirSync(dir)).toStrictEqual([]);
  });

  test('GIVEN an empty output folder THEN plan says first synth as well', async () => {
    const dir = project();
    fs.mkdirSync(path.join(dir, 'out'));
    const result = await runPlan({ cwd: dir, outdir: 'out', synth: synthOf({}) });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(
      'first synth: out/ is missing or empty, so there is nothing to compare with and nothing on a spoke is deleted.',
    );
    expect(result.plan!.firstSynth).toBe(true);
  });

  test('GIVEN a removed PullApplicationSet WHEN --fail-on-deletions THEN exit 1 naming each runtime deletion, dist/ untouched', async () => {
    const dir = project({});
    const before = snapshot(path.join(dir, 'dist'));
    const result = await runPlan({ cwd: dir, synth: synthOf({ appSet: false }), failOnDeletions: true });
    expect(result.exitCode).toBe(1);
    expect(result.plan!.runtimeDeletions.map((d) => d.id)).toStrictEqual([
      'hub/east/argocd-east-podinfo',
      'hub/west/argocd-west-podinfo',
    ]);
    expect(result.stderr).toBe(
      'pullfleet plan: 2 deletion(s) on spokes not acknowledged: hub/east/argocd-east-podinfo, hub/west/argocd-west-podinfo\n' +
        'review them, then acknowledge each with --allow-deletion <id> (or list the ids in the file given to --acknowledgements)\n',
    );
    expect(snapshot(path.join(dir, 'dist'))).toStrictEqual(before);
    expect(Object.keys(before)).toContain(path.join('hub', 'plan-state.json'));
  });

  test('GIVEN the same change without --fail-on-deletions THEN exit 0 with the deletions listed first', async () => {
    const dir = project({});
    const result = await runPlan({ cwd: dir, synth: synthOf({ appSet: false }) });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(
      'RUNTIME DELETIONS (2): the hub deletes these ApplicationSet-generated apps and their works once the change is applied',
    );
  });

  test('GIVEN reviewed deletions acknowledged by --allow-deletion or a file THEN --fail-on-deletions exits 0', async () => {
    const dir = project({});
    const byFlag = await runPlan({
      cwd: dir,
      synth: synthOf({ appSet: false }),
      failOnDeletions: true,
      allowDeletion: ['hub/east/argocd-east-podinfo', 'hub/west/*'],
    });
    expect([byFlag.exitCode, byFlag.stderr]).toStrictEqual([0, '']);
    fs.writeFileSync(
      path.join(dir, 'acks.txt'),
      '# PR 42: podinfo retired\nhub/*/argocd-*-podinfo\nhub/north/gone # stale\n',
    );
    const byFile = await runPlan({
      cwd: dir,
      synth: synthOf({ appSet: false }),
      failOnDeletions: true,
      acknowledgements: 'acks.txt',
    });
    expect(byFile.exitCode).toBe(0);
    expect(byFile.stdout).toContain('  - hub/west/argocd-west-podinfo (acknowledged): ApplicationSet podinfo removed');
    expect(byFile.stdout).toContain('note: acknowledgement "hub/north/gone" matches no deletion in this plan\n');
    const partly = await runPlan({
      cwd: dir,
      synth: synthOf({ appSet: false }),
      failOnDeletions: true,
      allowDeletion: ['hub/east/argocd-east-podinfo'],
    });
    expect(partly.exitCode).toBe(1);
    expect(partly.stderr).toContain('1 deletion(s) on spokes not acknowledged: hub/west/argocd-west-podinfo');
  });

  test('GIVEN removing a spoke WHEN --fail-on-deletions THEN the static work fails the plan and the Orphan bootstrap work does not', async () => {
    const dir = project({ staticApp: true, appSet: false });
    const result = await runPlan({
      cwd: dir,
      synth: synthOf({ staticApp: true, appSet: false, spokes: [{ name: 'east', labels: { env: 'prod' } }] }),
      failOnDeletions: true,
    });
    expect(result.exitCode).toBe(1);
    expect(result.plan!.spokeDeletions.map((d) => d.id)).toStrictEqual(['hub/west/argocd-web-west']);
    const ok = await runPlan({
      cwd: dir,
      synth: synthOf({ staticApp: true, appSet: false, spokes: [{ name: 'east', labels: { env: 'prod' } }] }),
      failOnDeletions: true,
      allowDeletion: ['hub/west/argocd-web-west'],
    });
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toMatch(
      /\n {2}- ManifestWork west\/pullfleet-bootstrap {2}\(hub\/hub\/works\/west\.yaml\): deleteOption Orphan: its \d+ resources stay on the spoke\n/,
    );
  });

  test('GIVEN -o json THEN the plan is machine-readable with counts and acknowledgement flags', async () => {
    const dir = project({});
    const result = await runPlan({
      cwd: dir,
      synth: synthOf({
        spokes: [
          { name: 'east', labels: {} },
          { name: 'west', labels: { env: 'prod' } },
        ],
      }),
      format: 'json',
      allowDeletion: ['hub/east/argocd-east-podinfo'],
    });
    expect(result.exitCode).toBe(0);
    const json = JSON.parse(result.stdout) as {
      counts: Record<string, number>;
      runtimeDeletions: Array<{ id: string; cause: string; acknowledged: boolean }>;
    };
    expect(json.counts).toMatchObject({ spokeDeletions: 0, runtimeDeletions: 1, unacknowledgedDeletions: 0 });
    expect(json.runtimeDeletions).toMatchObject([
      {
        id: 'hub/east/argocd-east-podinfo',
        cause: 'spoke east leaves placement all-prod (label env=prod removed)',
        acknowledged: true,
      },
    ]);
  });

  test('fails with exit 2 on usage errors and exit 1 when synth fails, leaving dist/ alone', async () => {
    const dir = project({});
    const before = snapshot(path.join(dir, 'dist'));
    expect(await runPlan({ cwd: dir, synth: synthOf({}), format: 'yaml' })).toMatchObject({
      exitCode: 2,
      stderr: 'pullfleet plan: unknown output format "yaml": use -o text or -o json\n',
    });
    expect(await runPlan({ cwd: dir, synth: synthOf({}), acknowledgements: 'missing.txt' })).toMatchObject({
      exitCode: 2,
      stderr: 'pullfleet plan: cannot read acknowledgements file missing.txt: ENOENT\n',
    });
    const failed = await runPlan({
      cwd: dir,
      synth: () => ({ ok: false, output: 'fleet validation failed with 1 problem' }),
    });
    expect(failed).toMatchObject({
      exitCode: 1,
      stdout: '',
      stderr: 'fleet validation failed with 1 problem\npullfleet plan: synth failed, nothing to compare\n',
    });
    expect(snapshot(path.join(dir, 'dist'))).toStrictEqual(before);
  });

  test('GIVEN unparseable YAML in the output folder THEN exit 1 naming the file', async () => {
    const dir = project({});
    fs.writeFileSync(path.join(dir, 'dist', 'hub', 'hub', 'broken.yaml'), 'a: [unclosed\n');
    const result = await runPlan({ cwd: dir, synth: synthOf({}) });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      `pullfleet plan: cannot read dist: ${path.join(dir, 'dist', 'hub', 'hub', 'broken.yaml')}: not valid YAML`,
    );
  });

  test('GIVEN a fleet that fails THEN plan from the binary shows its problem list only: no cdk8s-cli banner or stack trace, exit 1', async () => {
    const dir = project({});
    fs.writeFileSync(path.join(dir, 'cdk8s.yaml'), 'language: typescript\napp: node app.mjs\noutput: dist\n');
    fs.writeFileSync(
      path.join(dir, 'app.mjs'),
      "process.stderr.write('fleet validation failed with 1 problem (nothing was written):\\n  [hub/web] the fix\\n'); process.exit(1);\n",
    );
    const before = snapshot(path.join(dir, 'dist'));
    const run = spawnSync(process.execPath, [path.resolve('bin/pullfleet.js'), 'plan'], {
      encoding: 'utf8',
      cwd: dir,
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      'fleet validation failed with 1 problem (nothing was written):\n  [hub/web] the fix\npullfleet plan: synth failed, nothing to compare\n',
    );
    expect(run.stderr).not.toContain('non-zero exit code');
    expect(run.stderr).not.toContain('Synthesizing application');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(snapshot(path.join(dir, 'dist'))).toStrictEqual(before);
  });

  test('GIVEN an unknown flag on the command line THEN the process exits 2', async () => {
    const run = spawnSync(process.execPath, [path.resolve('bin/pullfleet.js'), 'plan', '--no-such-flag'], {
      encoding: 'utf8',
      cwd: project(),
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("unknown option '--no-such-flag'");
  });
});
