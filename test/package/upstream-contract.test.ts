/**
 * docs/reference/upstream-contract.md lists every upstream-owned key pullfleet writes or reads. These tests keep it
 * complete: a key under an upstream prefix that appears as a string in src/ (directly or through a
 * string constant such as `${OCM_APPS}/…`) must have a row whose first column names it, and every src/
 * file the page cites must exist.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';

const PAGE = 'docs/reference/upstream-contract.md';

/** Every .ts file under `dir`, sorted. */
function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(full);
      return entry.name.endsWith('.ts') ? [full] : [];
    })
    .sort();
}

/** Source text without block comments and whole-line comments (prose about a key is not a use of it). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const CONSTANT = /\bconst\s+([A-Z][A-Z0-9_]*)\s*=\s*(['"`])((?:(?!\2)[^\\\n]|\\.)*)\2/g;
const INTERPOLATION = /\$\{([A-Z][A-Z0-9_]*)\}/g;

/** Upper-case string constants of all files, with `${OTHER}` references resolved where known. */
function stringConstants(texts: readonly string[]): Map<string, string> {
  const raw = new Map<string, string>();
  for (const text of texts) for (const m of text.matchAll(CONSTANT)) if (!raw.has(m[1])) raw.set(m[1], m[3]);
  const resolved = new Map(raw);
  for (let pass = 0; pass < 5; pass++) {
    for (const [name, value] of resolved)
      resolved.set(
        name,
        value.replace(INTERPOLATION, (all, ref: string) => resolved.get(ref) ?? all),
      );
  }
  return resolved;
}

const UPSTREAM_KEY =
  /(?<![A-Za-z0-9.-])((?:[a-z0-9-]+\.)*(?:open-cluster-management\.io|argoproj\.io))\/([A-Za-z0-9_.-]*)/g;
const UPSTREAM_FINALIZER =
  /(?<![A-Za-z0-9.-])([a-z0-9-]*finalizer[a-z0-9-]*\.(?:[a-z0-9-]+\.)*(?:argoproj\.io|open-cluster-management\.io))(?![A-Za-z0-9/-])/g;
const API_VERSION = /^v\d+(?:(?:alpha|beta)\d+)?$/;

/** Upstream-owned keys named by strings in `text`, after substituting known constants. */
function upstreamKeys(text: string, constants: ReadonlyMap<string, string>): Set<string> {
  const expanded = code(text).replace(INTERPOLATION, (all, ref: string) => constants.get(ref) ?? all);
  const keys = new Set<string>();
  for (const m of expanded.matchAll(UPSTREAM_KEY)) {
    const name = m[2];
    if (name === '' || API_VERSION.test(name)) continue; // a bare prefix or an apiVersion, not a key
    keys.add(`${m[1]}/${name}`);
  }
  for (const m of expanded.matchAll(UPSTREAM_FINALIZER)) keys.add(m[1]);
  return keys;
}

interface Row {
  readonly line: number;
  readonly cells: string[];
}

/** The table rows of the page (header and separator rows excluded). */
function tableRows(markdown: string): Row[] {
  return markdown
    .split('\n')
    .map((text, i) => ({ text, line: i + 1 }))
    .filter(({ text }) => text.startsWith('|') && !/^\|[-| :]+\|$/.test(text) && !text.startsWith('| key or field'))
    .map(({ text, line }) => ({
      line,
      cells: text
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    }));
}

/** Code spans of the first column: the keys a row documents. */
function documentedKeys(rows: readonly Row[]): string[] {
  return rows.flatMap((row) => [...(row.cells[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]));
}

/** Whether a key found in src/ has a row: exactly, or as the prefix of a documented pattern (`…/addon-<name>`). */
function covered(key: string, documented: readonly string[]): boolean {
  return documented.some((doc) => doc === key || (/[-/]$/.test(key) && doc.startsWith(key)));
}

const files = sourceFiles('src');
const texts = files.map((file) => fs.readFileSync(file, 'utf8'));
const constants = stringConstants(texts.map(code));
const page = fs.readFileSync(PAGE, 'utf8');
const rows = tableRows(page);
const documented = documentedKeys(rows);

describe(PAGE, () => {
  test('the key scan finds the pull-integration contract, through constants as well as literals', () => {
    const all = new Set(files.flatMap((_, i) => [...upstreamKeys(texts[i], constants)]));
    for (const key of [
      'apps.open-cluster-management.io/pull-to-ocm-managed-cluster',
      'apps.open-cluster-management.io/hub-application-name',
      'argocd.argoproj.io/skip-reconcile',
      'cluster.open-cluster-management.io/placement',
      'resources-finalizer.argocd.argoproj.io',
    ]) {
      expect([key, all.has(key)]).toStrictEqual([key, true]);
    }
    expect([...all].filter((key) => API_VERSION.test(key.split('/')[1]))).toStrictEqual([]);
  });

  test('every upstream-owned key used in src/ has a row (add the row when adding the key)', () => {
    const missing: string[] = [];
    files.forEach((file, i) => {
      for (const key of upstreamKeys(texts[i], constants))
        if (!covered(key, documented)) missing.push(`${key} (${file})`);
    });
    expect(missing.sort()).toStrictEqual([]);
  });

  test('every row has five columns and names the upstream repository it was checked against', () => {
    const bad = rows
      .filter(
        (row) => row.cells.length !== 5 || !/\b[\w.-]+\/[\w.-]+\b/.test(row.cells[4]) || row.cells[4].length === 0,
      )
      .map((row) => `line ${row.line}: ${row.cells.length} columns`);
    expect(bad).toStrictEqual([]);
    expect(rows.length).toBeGreaterThan(40);
  });

  test('every src/ file the page cites exists', () => {
    const cited = [...new Set([...page.matchAll(/\bsrc\/[\w/.-]+\.ts\b/g)].map((m) => m[0]))].sort();
    expect(cited.filter((file) => !fs.existsSync(file))).toStrictEqual([]);
  });

  test('the README links the page', () => {
    expect(fs.readFileSync('README.md', 'utf8')).toContain(`(${PAGE})`);
  });
});
