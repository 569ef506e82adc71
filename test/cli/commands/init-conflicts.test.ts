/**
 * `pullfleet init` (through bin/pullfleet.js) in folders that already hold things that would make the
 * fleet repository fail later: it uses the user's own fleet description, refuses what it cannot fix
 * without changing the user's files (saying what and how, writing nothing), and never prints a next
 * step that would run someone else's command.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';

const BIN = path.join(process.cwd(), 'bin', 'pullfleet.js');
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function folderWith(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-init-conflicts-'));
  scratch.push(dir);
  fs.mkdirSync(path.join(dir, '.git'));
  for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, rel), text);
  return dir;
}

function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, rel);
    if (fs.statSync(file).isFile()) out[rel] = fs.readFileSync(file, 'utf8');
  }
  return out;
}

function init(dir: string): { code: number; out: string; err: string } {
  const run = spawnSync(process.execPath, [BIN, 'init', dir], { encoding: 'utf8', timeout: 60_000 });
  return { code: run.status ?? -1, out: run.stdout, err: run.stderr };
}

const OUR_FLEET = '// the fleet we already have\nexport {};\n';

describe('pullfleet init in a folder with conflicts', () => {
  test('GIVEN fleet.config.ts and a package.json without "type": "module" WHEN init runs THEN it refuses, names both fixes, and writes nothing', () => {
    const dir = folderWith({ 'fleet.config.ts': OUR_FLEET, 'package.json': '{ "name": "ours" }\n' });
    const before = contents(dir);
    const result = init(dir);
    expect(result.code).toBe(1);
    expect(result.err).toContain('fleet.config.ts exists, but package.json has no "type": "module"');
    expect(result.err).toContain('add "type": "module" to package.json, or rename the file to fleet.config.mts');
    expect(result.err).toContain('nothing was written');
    expect(contents(dir)).toStrictEqual(before);
  });

  test("GIVEN the user's own fleet.config.mts WHEN init runs THEN cdk8s.yaml and tsconfig.json point at it and it is kept as it is", () => {
    const dir = folderWith({ 'fleet.config.mts': OUR_FLEET, 'package.json': '{ "name": "ours" }\n' });
    const result = init(dir);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const files = contents(dir);
    expect(files['fleet.config.mts']).toBe(OUR_FLEET);
    expect(files['fleet.config.ts']).toBeUndefined();
    expect(parse(files['cdk8s.yaml']).app).toBe('node --import tsx fleet.config.mts');
    expect(JSON.parse(files['tsconfig.json']).include[0]).toBe('fleet.config.mts');
  });

  test('GIVEN fleet.config.ts in an ES module package WHEN init runs THEN cdk8s.yaml runs that file and it is kept', () => {
    const dir = folderWith({ 'fleet.config.ts': OUR_FLEET, 'package.json': '{ "name": "ours", "type": "module" }\n' });
    const result = init(dir);
    expect(result.code).toBe(0);
    const files = contents(dir);
    expect(files['fleet.config.ts']).toBe(OUR_FLEET);
    expect(files['fleet.config.mts']).toBeUndefined();
    expect(parse(files['cdk8s.yaml']).app).toBe('node --import tsx fleet.config.ts');
  });

  test('GIVEN peer dependencies pinned to ranges pullfleet cannot use and a .gitignore that ignores dist/ WHEN init runs THEN it lists every conflict with its fix and writes nothing', () => {
    const pkg = `${JSON.stringify({ name: 'ours', type: 'module', dependencies: { constructs: '10.1.0', cdk8s: '^2.60.0' } }, null, 2)}\n`;
    const dir = folderWith({ 'package.json': pkg, '.gitignore': 'node_modules/\ndist/\n' });
    // ^2.60.0 allows a cdk8s pullfleet can use, but the one installed (and locked) is older.
    fs.mkdirSync(path.join(dir, 'node_modules', 'cdk8s'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'node_modules', 'cdk8s', 'package.json'),
      '{ "name": "cdk8s", "version": "2.60.3" }\n',
    );
    const before = contents(dir);
    const result = init(dir);
    expect(result.code).toBe(1);
    expect(result.err).toContain('3 things to fix first; nothing was written');
    expect(result.err).toMatch(
      /package\.json dependencies\.constructs is "10\.1\.0", and pullfleet \S+ needs constructs \^10\.\d+\.\d+ .*run npm install constructs@"\^10/,
    );
    expect(result.err).toMatch(
      /cdk8s 2\.60\.3 is installed \(package\.json dependencies\.cdk8s is "\^2\.60\.0"\), and pullfleet \S+ needs cdk8s \^2\.\d+\.\d+ .*run npm install cdk8s@"\^2/,
    );
    expect(result.err).toContain('.gitignore line 2 ("dist/") ignores dist/');
    expect(result.out).not.toContain('next:');
    expect(contents(dir)).toStrictEqual(before);
  });

  test("GIVEN compatible ranges that differ from pullfleet's WHEN init runs THEN they are kept and init succeeds", () => {
    const pkg = `${JSON.stringify({ name: 'ours', type: 'module', dependencies: { constructs: '^10.4.0' } }, null, 2)}\n`;
    const dir = folderWith({ 'package.json': pkg });
    const result = init(dir);
    expect(result.code).toBe(0);
    expect(result.out).toContain('kept as they were: dependencies.constructs');
    expect(JSON.parse(contents(dir)['package.json']).dependencies.constructs).toBe('^10.4.0');
  });

  test("GIVEN a synth script of the user's own WHEN init runs THEN the next step names pullfleet synth, not npm run synth", () => {
    const pkg = `${JSON.stringify({ name: 'ours', type: 'module', scripts: { synth: 'make synth' } }, null, 2)}\n`;
    const dir = folderWith({ 'package.json': pkg });
    const result = init(dir);
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      'next: npm install, edit fleet.config.ts, npx pullfleet synth (scripts.synth is your own command)',
    );
    expect(result.out).not.toContain('npm run synth');
    expect(JSON.parse(contents(dir)['package.json']).scripts.synth).toBe('make synth');
  });
});
