/**
 * Runtime prop checks through the binary: an unknown (misspelled) key is a warning that synth shows and
 * writes through, and an error under --strict for synth and validate; a value of the wrong type is an
 * error either way. The output folder is left as it was whenever synth fails.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ValidateReport } from '../../src/cli/commands/validate.js';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const cli = path.join(repo, 'bin', 'pullfleet.js');
const fixture = 'npx tsx test/validate/fixtures/typo-fleet.ts';
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [cli, ...args], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, ...env, NODE_OPTIONS: '' },
    timeout: 120_000,
  });

const PRUNE =
  '[hub/PullApplication:web] pruneOnDelet is not a prop of PullApplication, so true is ignored: did you mean pruneOnDelete?';
const AUTOSYNC =
  '[hub/PullApplication:web] autosync is not a prop of PullApplication, so false is ignored: did you mean autoSync?';

/** Every file under `dir` with its content. */
function contents(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const file = path.join(dir, f);
    if (fs.statSync(file).isFile()) out.set(f, fs.readFileSync(file, 'utf8'));
  }
  return out;
}

describe('runtime prop checks through the binary', () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-props-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('GIVEN misspelled keys in a shared props object WHEN synth THEN it writes and warns; WHEN synth --strict or validate --strict THEN it fails naming both keys', () => {
    const out = path.join(root, 'dist');
    const lenient = run(['synth', '-o', out, '--app', fixture]);
    expect(lenient.status).toBe(0);
    expect(lenient.stderr).toContain(`warning: ${PRUNE}`);
    expect(lenient.stderr).toContain(`warning: ${AUTOSYNC}`);
    const before = contents(out);
    expect(before.size).toBeGreaterThan(3);

    const strict = run(['synth', '-o', out, '--app', fixture, '--strict']);
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain(`${PRUNE} (warning, an error with --strict)`);
    expect(strict.stderr).toContain(`${AUTOSYNC} (warning, an error with --strict)`);
    expect(contents(out)).toStrictEqual(before);

    const validate = run(['validate', '--app', fixture, '-o', 'json']);
    expect(validate.status).toBe(0);
    expect((JSON.parse(validate.stdout) as ValidateReport).warnings.map((w) => `[${w.path}] ${w.message}`)).toEqual(
      expect.arrayContaining([PRUNE, AUTOSYNC]),
    );
    const validateStrict = run(['validate', '--app', fixture, '--strict', '-o', 'json']);
    expect(validateStrict.status).toBe(1);
    expect((JSON.parse(validateStrict.stdout) as ValidateReport).ok).toBe(false);
  });

  test('fails when a value has the wrong type, without --strict', () => {
    const out = path.join(root, 'types');
    const result = run(['synth', '-o', out, '--app', fixture], { PULLFLEET_FIXTURE: 'types' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      '[hub/PullApplication:web] autoSync is "no" (a string): expected true or false: write false (a boolean, without quotes)',
    );
    expect(fs.existsSync(out)).toBe(false);
  });
  test('GIVEN an app that declares no resources (as a migrated app does) WHEN validate THEN it warns naming the app; WHEN validate --strict THEN it fails', () => {
    const lenient = run(['validate', '--app', fixture, '-o', 'json'], { PULLFLEET_FIXTURE: 'no-resources' });
    expect(lenient.status).toBe(0);
    const warnings = (JSON.parse(lenient.stdout) as ValidateReport).warnings.map((w) => w.message);
    expect(warnings).toEqual([
      expect.stringContaining(
        'app "web" declares no resources: its spokes get namespace "web" but no Role in it for their Argo CD',
      ),
    ]);
    const strict = run(['validate', '--app', fixture, '--strict'], { PULLFLEET_FIXTURE: 'no-resources' });
    expect(strict.status).toBe(1);
    expect(strict.stdout + strict.stderr).toContain('app "web" declares no resources');
  });
});
