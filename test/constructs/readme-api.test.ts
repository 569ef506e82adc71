/**
 * The example of docs/reference/library-api.md runs as written (imports pointed at this repository) and
 * its escape hatches land in dist/.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';

const repo = process.cwd();
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const PAGE = 'docs/reference/library-api.md';

/** The first ```ts block of the library API page. */
function librarySnippet(): string {
  const page = fs.readFileSync(path.join(repo, PAGE), 'utf8');
  const open = page.indexOf('```ts\n');
  if (open < 0) throw new Error(`${PAGE} has no ts example`);
  return page.slice(open + 6, page.indexOf('\n```', open + 6) + 1);
}

describe('the library API example (docs/reference/library-api.md)', () => {
  test('GIVEN the example WHEN run THEN the annotations added through the hatches are in dist/, and the imported spoke gets no bootstrap', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-readme-api-'));
    scratch.push(dir);
    fs.writeFileSync(
      path.join(dir, 'fleet.config.ts'),
      // the example imports the package by name; here it is this repository's sources
      librarySnippet()
        .replaceAll("from 'pullfleet'", `from '${repo}/src/index.js'`)
        .replaceAll("from './src/", `from '${repo}/src/`),
    );
    fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    const out = path.join(dir, 'dist');
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, 'fleet.config.ts')], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, CDK8S_OUTDIR: out },
    });
    expect(run.stderr).not.toContain('Error');
    expect(run.status).toBe(0);
    expect(fs.readFileSync(path.join(out, 'hub/hub/works/legacy.yaml'), 'utf8')).toContain(
      'example.com/change-ticket: CHG-1234',
    );
    expect(fs.readFileSync(path.join(out, 'hub/hub/applications.yaml'), 'utf8')).toContain('example.com/owner: team-a');
    expect(fs.existsSync(path.join(out, 'hub/bootstrap/legacy.yaml'))).toBe(false);
    expect(fs.existsSync(path.join(out, 'hub/hub/cluster-secrets.yaml'))).toBe(false);
  }, 60_000);
});
