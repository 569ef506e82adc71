/**
 * The documented smallest fleet and file lists match what synth really writes: the quick-start snippet is
 * taken from README.md and run, and the layout of docs/reference/dist-layout.md covers every file the
 * fixture fleet writes.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { buildFleet } from '../fixtures/example-fleet.js';
import { CLI_ENV } from '../../src/constructs/synth-env.js';

const repo = process.cwd();
const readme = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');
const DIST_LAYOUT = 'docs/reference/dist-layout.md';
const distLayout = fs.readFileSync(path.join(repo, DIST_LAYOUT), 'utf8');
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** The text of a README section (`<!-- section:name -->` … `<!-- /section:name -->`). */
function section(name: string): string {
  const start = readme.indexOf(`<!-- section:${name} -->`);
  const end = readme.indexOf(`<!-- /section:${name} -->`);
  if (start < 0 || end < 0) throw new Error(`README has no section ${name}`);
  return readme.slice(start, end);
}

/** The first fenced block after `marker` in `text` (with the given info string). */
function blockAfter(text: string, marker: string, info = ''): string {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`"${marker}" not found`);
  const open = text.indexOf('```' + info + '\n', at);
  const close = text.indexOf('\n```', open + 4);
  return text.slice(open + 4 + info.length, close + 1);
}

/** Runs the quick-start snippet (imports pointed at this repository) with the given edit; returns the run and the files written. */
function runQuickStart(edit: (source: string) => string = (s) => s) {
  const snippet = blockAfter(section('quickstart'), 'The smallest fleet', 'ts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-readme-'));
  scratch.push(dir);
  // the snippet imports the package by name; here it is this repository's sources
  const source = edit(snippet.replaceAll("from 'pullfleet'", `from '${repo}/src/index.js'`));
  fs.writeFileSync(path.join(dir, 'fleet.config.ts'), source);
  // A fleet repository is an ES module project (pullfleet init writes this; pullfleet is ESM-only).
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  const out = path.join(dir, 'dist');
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, 'fleet.config.ts')], {
    cwd: repo,
    encoding: 'utf8',
    // as `npm run synth` (pullfleet synth) runs it: the command tells the program it runs it
    env: { ...process.env, CDK8S_OUTDIR: out, [CLI_ENV]: '1' },
  });
  const files = fs.existsSync(out)
    ? (fs.readdirSync(out, { recursive: true }) as string[])
        .filter((f) => fs.statSync(path.join(out, f)).isFile())
        .map((f) => `dist/${f}`)
        .sort()
    : [];
  return { run, files };
}

describe('README', () => {
  test('the quick-start snippet synthesizes exactly the files the quick start lists', () => {
    const listed = blockAfter(section('quickstart'), '`npm run synth` type-checks the file')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/\s+/)[0])
      .sort();
    const { run, files } = runQuickStart();
    expect(run.status).toBe(0);
    // the README names the manifest in the sentence above the list
    expect(files).toStrictEqual(['dist/.pullfleet', ...listed]);
  });

  test('the quick-start snippet reports validation problems like the shipped fleet.config.ts: the list, exit 1, no stack trace, nothing written', () => {
    const { run, files } = runQuickStart((s) =>
      s.replace("destinationNamespace: 'guestbook'", "destinationNamespace: 'Guest_Book'"),
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('fleet validation failed with 1 problem (nothing was written)');
    expect(run.stderr).toContain('[hub/PullApplication:guestbook] destinationNamespace "Guest_Book"');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(files).toStrictEqual([]);
  });

  test('the dist/ layout page names every file synth writes, and every file it names is written', () => {
    const layout = blockAfter(distLayout, '# dist/ layout')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.trim().split(/\s+/)[0]);
    const dirs = layout.filter((entry) => entry.endsWith('/')).map((entry) => entry.replace('dist/<hub>/', '<hub>/'));
    const patterns = new Map<string, RegExp>();
    let under = '';
    for (const entry of layout) {
      if (entry.endsWith('/')) {
        under = entry.replace(/^dist\//, '');
        continue;
      }
      const full = entry.startsWith('dist/') ? entry.replace(/^dist\//, '') : `${under}${entry}`;
      const source = full
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replaceAll('<hub>', '[a-z0-9-]+')
        .replaceAll('<spoke>', '[a-z0-9-]+');
      patterns.set(full, new RegExp(`^${source}$`));
    }
    expect(dirs).toStrictEqual(['<hub>/hub/']);
    const written = [...buildFleet().renderFiles().keys(), '.pullfleet'];
    for (const file of written)
      expect([file, [...patterns.values()].some((p) => p.test(file))]).toStrictEqual([file, true]);
    // hub.yaml holds objects no other file takes; the fixture has none
    for (const [entry, pattern] of patterns) {
      if (entry === '<hub>/hub/hub.yaml') continue;
      expect([entry, written.some((file) => pattern.test(file))]).toStrictEqual([entry, true]);
    }
  });
});
