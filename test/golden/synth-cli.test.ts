/**
 * `pullfleet synth` (npm run synth) with a real fleet program: success replaces the output folder, failure
 * leaves the previous one untouched, the fixture fleet synthesizes to what the library renders, the app runs
 * as the cdk8s CLI runs it (through that CLI when cdk8s.yaml asks it for more), and `--verbose` shows where
 * the time went.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { fleetProgramCommand, runFleetProgram, runSynth } from '../../src/cli/commands/synth.js';
import { readTree, runPlan } from '../../src/cli/commands/plan.js';
import { buildProgram } from '../../src/cli/main.js';
import { buildFleet } from '../fixtures/example-fleet.js';
import { FLEET_FILE_ENV } from '../../src/constructs/synth-env.js';

const scratch: string[] = [];
// The type-check cache of these runs stays in a scratch folder.
process.env.PULLFLEET_CACHE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-cache-'));
scratch.push(process.env.PULLFLEET_CACHE_DIR);
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function project(app: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-synth-'));
  scratch.push(dir);
  fs.writeFileSync(path.join(dir, 'cdk8s.yaml'), 'language: typescript\napp: node app.mjs\noutput: dist\n');
  fs.writeFileSync(path.join(dir, 'app.mjs'), app);
  fs.mkdirSync(path.join(dir, 'dist', 'hub'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'dist', 'hub', 'previous.yaml'), 'previous: true\n');
  fs.writeFileSync(path.join(dir, 'dist', '.pullfleet'), '# manifest\nhub/previous.yaml\n');
  return dir;
}

describe('pullfleet synth', () => {
  test('GIVEN a failing fleet app WHEN synthesized THEN the previous dist/ is left untouched', async () => {
    const dir = project("console.error('fleet validation failed with 1 problem'); process.exit(1);\n");
    const result = await runSynth({ cwd: dir });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('fleet validation failed with 1 problem');
    expect(fs.readdirSync(path.join(dir, 'dist'), { recursive: true }).sort()).toStrictEqual([
      '.pullfleet',
      'hub',
      path.join('hub', 'previous.yaml'),
    ]);
    expect(fs.readFileSync(path.join(dir, 'dist', 'hub', 'previous.yaml'), 'utf8')).toBe('previous: true\n');
    expect(fs.readdirSync(dir).sort()).toStrictEqual(['app.mjs', 'cdk8s.yaml', 'dist']);
  });

  test('GIVEN a working app WHEN synthesized THEN dist/ is replaced by exactly the new output and its manifest', async () => {
    const dir = project(
      "import fs from 'node:fs'; fs.mkdirSync(process.env.CDK8S_OUTDIR + '/hub', { recursive: true }); fs.writeFileSync(process.env.CDK8S_OUTDIR + '/hub/new.yaml', 'new: true\\n');\n",
    );
    const result = await runSynth({ cwd: dir });
    expect(result.ok).toBe(true);
    expect(fs.readdirSync(path.join(dir, 'dist'), { recursive: true }).sort()).toStrictEqual([
      '.pullfleet',
      'hub',
      path.join('hub', 'new.yaml'),
    ]);
    expect(
      fs
        .readFileSync(path.join(dir, 'dist', '.pullfleet'), 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#')),
    ).toStrictEqual(['hub/new.yaml']);
    expect(fs.readdirSync(dir).sort()).toStrictEqual(['app.mjs', 'cdk8s.yaml', 'dist']);
  });

  test('the fixture fleet, type-checked and synthesized in a child process, equals the in-process render', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-example-'));
    scratch.push(out);
    const result = await runSynth({
      cwd: process.cwd(),
      outdir: path.join(out, 'dist'),
      app: `${process.execPath} --import tsx test/fixtures/example-fleet.ts`,
    });
    expect(result.output).toContain('pullfleet: hub:');
    expect(result.ok).toBe(true);
    expect(result.timings).toBeUndefined(); // only with verbose
    expect(result.typecheck?.errors).toStrictEqual([]);
    expect(result.typecheck?.file).toBe(path.resolve('test/fixtures/example-fleet.ts'));
    const expected = [...buildFleet().renderObjects().entries()].flatMap(([file, list]) =>
      list.map((object) => ({ file, object })),
    );
    expect(readTree(path.join(out, 'dist'))).toStrictEqual(expected);
    for (const hub of ['hub', 'acm-hub']) {
      const own = expected.filter(({ file }) => file.startsWith(`${hub}/`));
      const works = own.filter(({ object }) => object.kind === 'ManifestWork').length;
      const fileCount = [...buildFleet().renderObjects().keys()].filter((file) => file.startsWith(`${hub}/`)).length;
      expect(result.output).toContain(
        `pullfleet: ${hub}: ${own.length} objects (${works} ManifestWorks) in ${fileCount} files`,
      );
    }

    // A bare `cdk8s synth` (Fleet.synth) writes the same folder byte for byte, manifest included.
    // (cdk8s runs the fleet file itself, and generated files name it, as they do under pullfleet synth.)
    const bare = path.join(out, 'bare');
    process.env[FLEET_FILE_ENV] = 'test/fixtures/example-fleet.ts';
    try {
      buildFleet({ outdir: bare }).synth();
    } finally {
      delete process.env[FLEET_FILE_ENV];
    }
    const files = (dir: string) =>
      (fs.readdirSync(dir, { recursive: true }) as string[])
        .filter((f) => fs.statSync(path.join(dir, f)).isFile())
        .sort();
    expect(files(bare)).toStrictEqual(files(path.join(out, 'dist')));
    for (const file of files(bare))
      expect([file, fs.readFileSync(path.join(bare, file), 'utf8')]).toStrictEqual([
        file,
        fs.readFileSync(path.join(out, 'dist', file), 'utf8'),
      ]);
    expect(files(bare)).toContain('.pullfleet');
  });

  test('plan lists a ManifestWork that a fresh synth no longer produces as a spoke deletion', async () => {
    const dir = project(
      "import fs from 'node:fs'; fs.mkdirSync(process.env.CDK8S_OUTDIR + '/hub/hub', { recursive: true }); fs.writeFileSync(process.env.CDK8S_OUTDIR + '/hub/hub/hub.yaml', 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: kept\\n');\n",
    );
    fs.mkdirSync(path.join(dir, 'dist', 'hub', 'hub', 'works'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'dist', 'hub', 'hub', 'hub.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n',
    );
    fs.writeFileSync(
      path.join(dir, 'dist', 'hub', 'hub', 'works', 'east.yaml'),
      'apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata:\n  name: argocd-web-east\n  namespace: east\nspec:\n  workload:\n    manifests:\n      - { apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: { name: web-east, namespace: argocd } }\n',
    );
    const result = await runPlan({ cwd: dir });
    expect(result.exitCode).toBe(0);
    expect(result.plan!.spokeDeletions.map((c) => c.id)).toStrictEqual(['hub/east/argocd-web-east']);
    expect(result.stdout.split('\n')[0]).toBe(
      'DELETIONS ON SPOKES (1): the work agent removes these from the spoke when the hub applies the change',
    );
    expect(fs.existsSync(path.join(dir, 'dist', 'hub', 'hub', 'works', 'east.yaml'))).toBe(true);
  });

  test('GIVEN a plain cdk8s.yaml THEN synth runs the app itself; GIVEN one asking the cdk8s CLI for more THEN it runs `cdk8s synth`', async () => {
    const app =
      "import fs from 'node:fs'; fs.mkdirSync(process.env.CDK8S_OUTDIR + '/hub', { recursive: true }); fs.writeFileSync(process.env.CDK8S_OUTDIR + '/hub/new.yaml', `outdir: ${JSON.stringify(process.env.CDK8S_OUTDIR)}\\nmetadata: ${process.env.CDK8S_RECORD_CONSTRUCT_METADATA}\\n`);\n";
    const direct = project(app);
    expect(fleetProgramCommand('/out', direct, undefined)).toStrictEqual({
      command: 'node app.mjs',
      args: [],
      shell: true,
      direct: true,
    });
    const first = await runSynth({ cwd: direct });
    expect(first.ok).toBe(true);
    expect(first.output).not.toContain('Synthesizing application');
    // What the cdk8s CLI hands the app: the output folder (the staging folder, here), no construct metadata.
    expect(fs.readFileSync(path.join(direct, 'dist', 'hub', 'new.yaml'), 'utf8')).toMatch(
      /^outdir: ".*\/\.dist\.staging-\d+-\w{6}"\nmetadata: false\n$/,
    );

    const throughCli = project(app);
    fs.appendFileSync(path.join(throughCli, 'cdk8s.yaml'), 'synthConfig:\n  format: plain\n');
    expect(fleetProgramCommand('/out', throughCli, undefined)).toMatchObject({
      command: process.execPath,
      direct: false,
    });
    const second = await runSynth({ cwd: throughCli });
    expect(second.ok).toBe(true);
    expect(second.output).toContain('Synthesizing application');
    expect(fs.readFileSync(path.join(throughCli, 'dist', 'hub', 'new.yaml'), 'utf8')).toMatch(/metadata: false\n$/);
  });

  test('GIVEN an app that exits without writing its output folder THEN validate-style runs say so', async () => {
    const dir = project('process.exit(0);\n');
    const out = path.join(dir, 'never-written');
    const result = await runFleetProgram(out, { cwd: dir });
    expect(result.ok).toBe(false);
    expect(result.output).toContain(
      `the fleet app (node app.mjs) exited without writing its output folder ${out} (CDK8S_OUTDIR): declare at least one Hub, and leave Fleet's outdir unset`,
    );
  });

  test('synth --verbose through the binary shows where the time went, with the parts the fleet program measured itself', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-verbose-'));
    scratch.push(out);
    const args = [
      '-o',
      path.join(out, 'dist'),
      '--app',
      `${process.execPath} --import tsx test/fixtures/example-fleet.ts`,
    ];
    const verbose = spawnSync(process.execPath, ['bin/pullfleet.js', 'synth', ...args, '--verbose'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(verbose.status).toBe(0);
    const table = verbose.stderr.slice(verbose.stderr.indexOf('pullfleet synth: where the time went'));
    const labels = table
      .split('\n')
      .slice(1)
      .filter((line) => line.trim() !== '')
      .map((line) => line.replace(/\s+\d+\.\d\d(?:\s+\(.*\))?$/, '').trim());
    expect(labels).toStrictEqual([
      'pullfleet start (node, tsx, the CLI)',
      'output folder checks, staging folder',
      'fleet program (its own process)',
      'start (node, tsx, loading pullfleet and cdk8s)',
      'construct tree (the fleet description)',
      'render (late objects, provenance)',
      'JSON of every object (cdk8s resolve)',
      'validation (schemas, rules, the whole fleet)',
      'YAML',
      'write',
      'process start and exit, the rest',
      'type-check (beside the fleet program)',
      'manifest and swap into the output folder',
      'total',
    ]);
    expect(table.split('\n')[0]).toMatch(
      /^pullfleet synth: where the time went, in seconds \(\d+ objects, \d+ files\)$/,
    );
  });

  test('the pullfleet program registers synth, validate and plan', async () => {
    expect((await buildProgram()).commands.map((c) => c.name())).toEqual(
      expect.arrayContaining(['synth', 'validate', 'plan']),
    );
  });
});
