/**
 * The README and the pages it leads to work where npm users read them: npm renders the README against
 * the repository package.json names, and the package itself ships every page a relative link of the
 * README (or of a shipped page) points at, so the links also work in node_modules/pullfleet. The file
 * list is npm's own (`npm pack --dry-run`), so `files` in package.json, .npmignore and nested .gitignore
 * files are all taken into account.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';

interface PackEntry {
  readonly path: string;
}

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as {
  repository?: { type?: string; url?: string };
  homepage?: string;
  bugs?: { url?: string };
};

/** Every path npm would put in the tarball (lib/ only when it was built; no link points there). */
function packedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'silent', npm_config_update_notifier: 'false' },
  });
  const [entry] = JSON.parse(out) as Array<{ files: PackEntry[] }>;
  return new Set(entry.files.map((f) => f.path));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\- _]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown page (headings outside code blocks; a repeated heading gets -1, -2, ...). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative links of a Markdown page outside code blocks: `[text](target)`, without web and mail links. */
function relativeLinks(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Every broken link of the shipped page `page`: a file not in the package, or an anchor the page lacks. */
function brokenLinks(page: string, packed: ReadonlySet<string>): string[] {
  const broken: string[] = [];
  for (const link of relativeLinks(fs.readFileSync(page, 'utf8'))) {
    const [file, anchor] = link.split('#', 2);
    const target = file ? path.posix.normalize(path.posix.join(path.posix.dirname(page), file)) : page;
    if (!packed.has(target)) {
      broken.push(`${page}: ${link} (${target} is not in the package)`);
      continue;
    }
    if (anchor && target.endsWith('.md') && !anchorsOf(fs.readFileSync(target, 'utf8')).has(anchor))
      broken.push(`${page}: ${link} (${target} has no heading #${anchor})`);
  }
  return broken;
}

describe('links from the npm page', () => {
  const packed = packedFiles();

  test('package.json names the repository, the home page and the issue tracker', () => {
    expect(pkg.repository).toStrictEqual({ type: 'git', url: 'git+https://github.com/pullfleet/pullfleet.git' });
    expect(pkg.homepage).toBe('https://github.com/pullfleet/pullfleet#readme');
    expect(pkg.bugs).toStrictEqual({ url: 'https://github.com/pullfleet/pullfleet/issues' });
  });

  test('every relative link of the README points at a file in the package, and at a heading it has', () => {
    const links = relativeLinks(fs.readFileSync('README.md', 'utf8'));
    expect(links.length).toBeGreaterThan(25);
    expect(brokenLinks('README.md', packed)).toStrictEqual([]);
  });

  test('every relative link of every shipped Markdown page points at a file in the package, and at a heading it has', () => {
    const pages = [...packed].filter((p) => p.endsWith('.md')).sort();
    expect(pages).toEqual(
      expect.arrayContaining(['CHANGELOG.md', 'docs/upgrading.md', 'docs/reference/versioning.md']),
    );
    expect(pages.flatMap((page) => brokenLinks(page, packed))).toStrictEqual([]);
  });

  test('the package ships no generated API reference and no source', () => {
    expect([...packed].filter((p) => /^(docs\/api|src|test|dist)\//.test(p))).toStrictEqual([]);
  });
});
