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
import { parse } from 'yaml';
import { runPlan } from '../../../src/cli/commands/plan.js';
import { runSynth } from '../../../src/cli/commands/synth.js';
import { renderWorkflow } from '../../../src/cli/support/init-files.js';
import { runBinary } from '../../support/cli.js';
import { planFleetFixture, type FleetSpec } from '../../support/plan-fleet.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A project whose fleet program (no TypeScript) writes one ConfigMap: enough for plan to compare. */
function oneObjectProject(): string {
  const dir = project();
  fs.writeFileSync(path.join(dir, 'cdk8s.yaml'), 'language: typescript\napp: node app.mjs\noutput: dist\n');
  fs.writeFileSync(
    path.join(dir, 'app.mjs'),
    "import fs from 'node:fs'; fs.mkdirSync(process.env.CDK8S_OUTDIR + '/hub/hub', { recursive: true }); fs.writeFileSync(process.env.CDK8S_OUTDIR + '/hub/hub/hub.yaml', 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: kept\\n');\n",
  );
  return dir;
}

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
  test('GIVEN no output folder WHEN --first-synth THEN plan says first synth, exits 0 and creates nothing', async () => {
    const dir = project();
    const result = await runPlan({
      cwd: dir,
      synth: synthOf({ staticApp: true }),
      failOnDeletions: true,
      firstSynth: true,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      /^first synth: dist\/ is missing or empty, so there is nothing to compare with and nothing on a spoke is deleted\.\nsynth will write \d+ objects \(4 ManifestWorks\) in \d+ files\.\n$/,
    );
    expect(fs.readdirSync(dir)).toStrictEqual([]);
  });

  test('GIVEN an empty output folder WHEN --first-synth THEN plan says first synth as well', async () => {
    const dir = project();
    fs.mkdirSync(path.join(dir, 'out'));
    const result = await runPlan({ cwd: dir, outdir: 'out', synth: synthOf({}), firstSynth: true });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(
      'first synth: out/ is missing or empty, so there is nothing to compare with and nothing on a spoke is deleted.',
    );
    expect(result.plan!.firstSynth).toBe(true);
  });

  test('fails with exit 2 naming the folder WHEN the output folder is missing and --first-synth is not given: a mistyped path never switches the deletion gate off', () => {
    const dir = oneObjectProject();
    for (const args of [
      ['plan', 'ci/dsit', '--fail-on-deletions'],
      ['plan', '--fail-on-deletions'],
    ]) {
      const folder = args[1] === 'ci/dsit' ? 'ci/dsit' : 'dist';
      const run = runBinary(args, { cwd: dir });
      expect(run).toStrictEqual({
        code: 2,
        out: '',
        err: `pullfleet plan: output folder ${folder} does not exist (${path.join(dir, folder)}): pass the folder synth writes (default dist), or --first-synth if this fleet has never been synthesized\n`,
      });
    }
    expect(fs.readdirSync(dir).sort()).toStrictEqual(['app.mjs', 'cdk8s.yaml']);
  });

  test('fails with exit 2 WHEN the output folder holds no YAML objects and --first-synth is not given', async () => {
    const dir = project();
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src', 'fleet.ts'), '// not an output folder\n');
    expect(await runPlan({ cwd: dir, outdir: 'src', synth: synthOf({}), failOnDeletions: true })).toStrictEqual({
      exitCode: 2,
      stdout: '',
      stderr: `pullfleet plan: output folder src holds no YAML objects (${path.join(dir, 'src')}): pass the folder synth writes (default dist), or --first-synth if this fleet has never been synthesized\n`,
    });
  });

  test('GIVEN no output folder WHEN the binary runs plan --first-synth --fail-on-deletions THEN it says first synth and exits 0, creating nothing', () => {
    const dir = oneObjectProject();
    const run = runBinary(['plan', '--first-synth', '--fail-on-deletions'], { cwd: dir });
    expect([run.code, run.out]).toStrictEqual([
      0,
      'first synth: dist/ is missing or empty, so there is nothing to compare with and nothing on a spoke is deleted.\n' +
        'synth will write 1 objects (0 ManifestWorks) in 1 files.\n',
    ]);
    expect(fs.readdirSync(dir).sort()).toStrictEqual(['app.mjs', 'cdk8s.yaml']);
  });

  test('fails with exit 2 WHEN --first-synth is given but the output folder holds objects: the flag never turns a comparison off', () => {
    const dir = oneObjectProject();
    fs.mkdirSync(path.join(dir, 'dist', 'hub', 'hub'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'dist', 'hub', 'hub', 'hub.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n',
    );
    const run = runBinary(['plan', '--first-synth', '--fail-on-deletions'], { cwd: dir });
    expect(run).toStrictEqual({
      code: 2,
      out: '',
      err: 'pullfleet plan: --first-synth, but output folder dist holds 1 objects: drop --first-synth to compare with them\n',
    });
  });

  test('GIVEN the Plan step of the workflow init writes WHEN the base branch has no dist/ THEN it plans a first synth and passes; WHEN the base has dist/ THEN a deletion on a spoke fails it', () => {
    const repo = oneObjectProject();
    fs.writeFileSync(path.join(repo, 'deletions.txt'), '');
    const gitEnv = {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'ci',
      GIT_AUTHOR_EMAIL: 'ci@example.com',
      GIT_COMMITTER_NAME: 'ci',
      GIT_COMMITTER_EMAIL: 'ci@example.com',
    };
    const git = (...args: string[]) => {
      const run = spawnSync('git', args, { cwd: repo, encoding: 'utf8', env: gitEnv });
      if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
    };
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-qm', 'the fleet, never synthesized');
    git('remote', 'add', 'origin', `file://${repo}`);
    // GitHub's runner: npx pullfleet is the package's binary; the step runs with bash -eo pipefail.
    const shims = project();
    fs.writeFileSync(
      path.join(shims, 'npx'),
      `#!/bin/sh\n[ "$1" = pullfleet ] && shift\nexec "${process.execPath}" "${path.resolve('bin/pullfleet.js')}" "$@"\n`,
      { mode: 0o755 },
    );
    const step = (
      parse(renderWorkflow()) as { jobs: { fleet: { steps: Array<{ name?: string; run?: string }> } } }
    ).jobs.fleet.steps.find((s) => s.name === 'Plan')!.run!;
    const runStep = () => {
      const runner = project();
      const summary = path.join(runner, 'summary.md');
      const run = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step], {
        cwd: repo,
        encoding: 'utf8',
        timeout: 120_000,
        env: {
          ...gitEnv,
          PATH: `${shims}${path.delimiter}${process.env.PATH ?? ''}`,
          RUNNER_TEMP: runner,
          GITHUB_STEP_SUMMARY: summary,
          BASE_REF: 'main',
          NODE_OPTIONS: '',
          NO_COLOR: '1',
        },
      });
      return { code: run.status, out: run.stdout, summary: fs.readFileSync(summary, 'utf8') };
    };

    const first = runStep();
    expect(first.code).toBe(0);
    expect(first.out).toContain('first synth: ');

    // main now holds a dist/ with a work the fleet no longer renders: the gate is on again.
    fs.mkdirSync(path.join(repo, 'dist', 'hub', 'hub', 'works'), { recursive: true });
    fs.writeFileSync(
      path.join(repo, 'dist', 'hub', 'hub', 'hub.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n',
    );
    fs.writeFileSync(
      path.join(repo, 'dist', 'hub', 'hub', 'works', 'east.yaml'),
      'apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata:\n  name: argocd-web-east\n  namespace: east\nspec:\n  workload:\n    manifests:\n      - { apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: { name: web-east, namespace: argocd } }\n',
    );
    git('add', 'dist');
    git('commit', '-qm', 'dist/');
    const later = runStep();
    expect(later.code).toBe(1);
    expect(later.summary).toContain(
      'pullfleet plan: 1 deletion(s) on spokes not acknowledged: hub/east/argocd-web-east\n',
    );
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
    const run = runBinary(['plan'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(run.err).toContain(
      'fleet validation failed with 1 problem (nothing was written):\n  [hub/web] the fix\npullfleet plan: synth failed, nothing to compare\n',
    );
    expect(run.err).not.toContain('non-zero exit code');
    expect(run.err).not.toContain('Synthesizing application');
    expect(run.err).not.toMatch(/\n\s+at /);
    expect(snapshot(path.join(dir, 'dist'))).toStrictEqual(before);
  });

  test('GIVEN an unknown flag on the command line THEN the process exits 2', async () => {
    const run = runBinary(['plan', '--no-such-flag'], { cwd: project() });
    expect(run.code).toBe(2);
    expect(run.err).toContain("unknown option '--no-such-flag'");
  });

  test('GIVEN a waved app WHEN a spoke joins its main wave THEN plan shows the spoke in the wave and the added hub Application, and leaves the hub Applications of the other spokes unchanged', async () => {
    const dist = path.join(project(), 'dist');
    const app = `${process.execPath} --import tsx test/fixtures/waves-fleet.ts`;
    process.env.PULLFLEET_TEST_WAVES = 'waved';
    try {
      expect((await runSynth({ cwd: process.cwd(), outdir: dist, app, typecheck: false })).ok).toBe(true);
    } finally {
      delete process.env.PULLFLEET_TEST_WAVES;
    }
    const run = runBinary(['plan', dist, '--app', app, '--fail-on-deletions'], {
      env: { PULLFLEET_TEST_WAVES: 'waved-north' },
    });
    expect(run.code).toBe(0);
    const lines = run.out.split('\n');
    expect(lines.slice(lines.indexOf('changed (1):'), lines.indexOf('added (6):'))).toStrictEqual([
      'changed (1):',
      '  ~ ConfigMap argocd/pullfleet-rollout-web  (hub/hub/applications.yaml)',
      '      data.wave-002-main.json: …oakSeconds\\":0,\\"clusters\\":[\\"east\\",\\"west\\"]}" → …oakSeconds\\":0,\\"clusters\\":[\\"east\\",\\"north\\",\\"west\\"]}"',
    ]);
    expect(run.out).toContain('\n  + Application argocd/web-north  (hub/hub/applications.yaml)\n');
    expect(run.out).toContain('\n    2. main: east, north, west, 1 at a time\n');
  });
});
