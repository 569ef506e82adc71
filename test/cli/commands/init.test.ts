/**
 * `pullfleet init` on a real folder: what it writes, what it keeps, that bad input writes nothing, and
 * that the fleet it writes type-checks and synthesizes (against this repository's sources; the packed
 * package is exercised end to end by scripts/pack-smoke.sh in CI).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { main } from '../../../src/cli/main.js';
import { currentVersions, runInit } from '../../../src/cli/commands/init.js';
import {
  packageNameFor,
  renderFleetConfig,
  renderPackageJson,
  renderWorkflow,
  WORKFLOW_FILE,
} from '../../../src/cli/support/init-files.js';
import { typecheckFile } from '../../../src/cli/support/typecheck.js';

const repo = process.cwd();
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A scratch folder two levels deep (`parent` defaults to the system temp folder). */
function tempDir(parent = os.tmpdir()): string {
  fs.mkdirSync(parent, { recursive: true });
  const outer = fs.mkdtempSync(path.join(parent, 'pullfleet-init-'));
  scratch.push(outer);
  return fs.mkdtempSync(path.join(outer, 'repo-'));
}

/** Every file under `dir` with its content. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, rel);
    if (fs.statSync(file).isFile()) out[rel] = fs.readFileSync(file, 'utf8');
  }
  return out;
}

const FILES = [
  '.github/workflows/pullfleet.yml',
  '.gitignore',
  'cdk8s.yaml',
  'deletions.txt',
  'fleet.config.ts',
  'package.json',
  'tsconfig.json',
];

describe('pullfleet init', () => {
  test('GIVEN an empty git repository WHEN init runs THEN it writes the fleet repository and says so', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, '.git'));
    const result = runInit(dir);
    expect(result.ok).toBe(true);
    const files = snapshot(dir);
    expect(Object.keys(files).sort()).toStrictEqual(FILES);
    expect(files['package.json']).toBe(
      renderPackageJson({ name: packageNameFor(path.basename(dir)), esm: true, versions: currentVersions() }),
    );
    expect(JSON.parse(files['package.json']).dependencies.pullfleet).toBe(
      `^${JSON.parse(fs.readFileSync('package.json', 'utf8')).version}`,
    );
    expect(files['fleet.config.ts']).toBe(renderFleetConfig());
    expect(files[WORKFLOW_FILE]).toBe(renderWorkflow());
    expect(
      result.output
        .split('\n')
        .filter((l) => l.startsWith('wrote'))
        .map((l) => l.split(/\s+/)[1].replace(/:$/, ''))
        .sort(),
    ).toStrictEqual(FILES);
    expect(result.output).not.toContain('not in a git repository');
  });

  test('GIVEN existing files WHEN init runs without --force THEN none is overwritten and the output says which were skipped', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'fleet.config.ts'), '// the fleet we already have\n');
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), '{}\n');
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({
        name: 'ours',
        type: 'module',
        dependencies: { pullfleet: 'file:../pullfleet.tgz' },
        scripts: { test: 'make test' },
      }),
    );
    const result = runInit(dir);
    expect(result.ok).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'fleet.config.ts'), 'utf8')).toBe('// the fleet we already have\n');
    expect(fs.readFileSync(path.join(dir, 'tsconfig.json'), 'utf8')).toBe('{}\n');
    expect(result.output).toContain('skipped   fleet.config.ts: exists, kept as it is (--force replaces it)');
    expect(result.output).toContain('skipped   tsconfig.json: exists, kept as it is (--force replaces it)');
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies.pullfleet).toBe('file:../pullfleet.tgz');
    expect(pkg.scripts.test).toBe('make test');
    expect(pkg.scripts.synth).toBe('pullfleet synth');
    expect(result.output).toContain('kept as they were: scripts.test, dependencies.pullfleet');
    expect(result.output).toContain('not in a git repository: run git init there before committing');
  });

  test('GIVEN existing files WHEN init runs with --force THEN they are replaced, package.json is still only merged', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'fleet.config.ts'), '// old\n');
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'ours', type: 'module', dependencies: { pullfleet: '/opt/pullfleet' } }),
    );
    const result = runInit(dir, { force: true });
    expect(result.ok).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'fleet.config.ts'), 'utf8')).toBe(renderFleetConfig());
    expect(result.output).toContain('replaced  fleet.config.ts: replaced (--force)');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies.pullfleet).toBe(
      '/opt/pullfleet',
    );
  });

  test('GIVEN a CommonJS package.json THEN the fleet description is fleet.config.mts and package.json keeps its type', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "cjs-repo" }\n');
    const result = runInit(dir);
    expect(result.ok).toBe(true);
    expect(fs.existsSync(path.join(dir, 'fleet.config.mts'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'fleet.config.ts'))).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).type).toBeUndefined();
    expect(result.output).toContain(
      'note: package.json has no "type": "module", so the fleet description is fleet.config.mts',
    );
  });

  test('fails when package.json is not valid JSON, and writes nothing', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "broken", }');
    const before = snapshot(dir);
    const result = runInit(dir, { force: true });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(
      /^pullfleet init: package\.json is not valid JSON \(.*\): fix it, then run pullfleet init again; nothing was written\n$/,
    );
    expect(snapshot(dir)).toStrictEqual(before);
  });

  test('fails when a file init writes is a folder, and writes nothing', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'cdk8s.yaml'));
    const result = runInit(dir);
    expect(result).toStrictEqual({
      ok: false,
      files: [],
      output:
        'pullfleet init: cdk8s.yaml exists and is not a file: move it away, then run pullfleet init again; nothing was written\n',
    });
    expect(fs.readdirSync(dir)).toStrictEqual(['cdk8s.yaml']);
  });

  test('fails when the target is a file', () => {
    const dir = tempDir();
    const file = path.join(dir, 'notes.txt');
    fs.writeFileSync(file, 'keep me');
    expect(runInit(file).output).toBe(
      `pullfleet init: ${file} is not a folder: give a folder (it is created when missing)\n`,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me');
  });

  test('the command: init [dir] creates the folder, exits 0; a bad --name exits 1 and writes nothing', async () => {
    const dir = path.join(tempDir(), 'new-fleet');
    const previous = process.exitCode;
    const { write } = process.stdout;
    const { write: writeErr } = process.stderr;
    const out: string[] = [];
    process.stdout.write = (chunk: string) => out.push(chunk) > 0;
    process.stderr.write = (chunk: string) => out.push(chunk) > 0;
    try {
      process.exitCode = undefined;
      await main(['node', 'pullfleet', 'init', dir, '--name', 'Not A Name']);
      expect(process.exitCode).toBe(1);
      expect(fs.existsSync(dir)).toBe(false);
      await main(['node', 'pullfleet', 'init', dir]);
      expect(process.exitCode).toBe(0);
    } finally {
      process.stdout.write = write;
      process.stderr.write = writeErr;
      process.exitCode = previous;
    }
    expect(out[0]).toBe(
      'pullfleet init: --name "Not A Name" is not an npm package name: use lower-case letters, digits, "-", "." and "_", for example "platform-fleet"\n',
    );
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name).toBe('new-fleet');
  });

  test('the fleet init writes type-checks and synthesizes with this version of the constructs', () => {
    // Under the repository (.tmp/ is ignored) so @types/node and the peer dependencies resolve.
    const dir = tempDir(path.join(repo, '.tmp'));
    expect(runInit(dir).ok).toBe(true);
    const config = path.join(dir, 'fleet.config.ts');
    fs.writeFileSync(
      config,
      fs.readFileSync(config, 'utf8').replace("from 'pullfleet'", `from '${repo}/src/index.js'`),
    );
    expect(typecheckFile(config, dir).errors).toStrictEqual([]);
    const out = path.join(dir, 'dist');
    const run = spawnSync(process.execPath, ['--import', 'tsx', config], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, CDK8S_OUTDIR: out, PULLFLEET_CACHE_DIR: path.join(dir, '.cache') },
      timeout: 60_000,
    });
    expect(run.stderr).not.toContain('Error');
    expect(run.status).toBe(0);
    expect(fs.readFileSync(path.join(out, 'hub', 'hub', 'works', 'prod-east.yaml'), 'utf8')).toContain(
      'name: argocd-guestbook-prod-east',
    );
  });
});
