import { describe, expect, test } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import * as constructs from '../../src/constructs/index.js';
import * as root from '../../src/index.js';

const DIR = 'src/constructs';

/** Helpers that must never be reachable from the package, whatever module they move to. */
const KNOWN_INTERNALS = [
  'claimId',
  'kindOf',
  'markKind',
  'nameFromId',
  'recordProblem',
  'recordedProblems',
  'hubParts',
  'hubOf',
  'attachHubParts',
  'checkProps',
  'recordWarning',
  'CONTROLLER_INSTALL_PROPS',
  'ADD_INVENTORY_OPTIONS',
  'addInventoryTo',
  'APP_SOURCE_CHECK',
  'PULL_APP_CHECKS',
];

/**
 * Every value (function, class, enum, const) src/constructs exports that is internal: everything an
 * `_`-file exports but the public names above, and every export marked `@internal` elsewhere.
 */
function internalValues(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of fs.readdirSync(DIR).filter((f) => f.endsWith('.ts'))) {
    const source = ts.createSourceFile(
      file,
      fs.readFileSync(path.join(DIR, file), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const internalFile = file.startsWith('_');
    source.forEachChild((node) => {
      if (!(ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Export)) return;
      const names: string[] = [];
      if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isEnumDeclaration(node)) && node.name)
        names.push(node.name.text);
      if (ts.isVariableStatement(node))
        for (const d of node.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
      const tagged = ts
        .getJSDocTags(ts.isVariableStatement(node) ? node.declarationList.declarations[0] : node)
        .some((t) => t.tagName.text === 'internal');
      for (const name of names) {
        if (internalFile || tagged) found.set(name, file);
      }
    });
  }
  return found;
}

describe('the package exports no internal helper', () => {
  test('no runtime export of the package root (src/index.ts) is an internal of the construct library', () => {
    const internals = internalValues();
    // The scan finds what it should: the helpers every construct uses are among the internals.
    expect([...internals.keys()]).toEqual(expect.arrayContaining(['claimId', 'kindOf', 'markKind', 'recordProblem']));
    const leaks = Object.keys(root).filter((name) => internals.has(name) || KNOWN_INTERNALS.includes(name));
    expect(leaks.map((name) => `${name} (${internals.get(name) ?? 'known internal'})`)).toStrictEqual([]);
    expect(Object.keys(root).filter((name) => name.startsWith('_'))).toStrictEqual([]);
  });

  test('the construct barrel exports none either, and lists its exports by name', () => {
    const internals = internalValues();
    expect(
      Object.keys(constructs).filter((name) => internals.has(name) || KNOWN_INTERNALS.includes(name)),
    ).toStrictEqual([]);
    const barrel = fs.readFileSync(path.join(DIR, 'index.ts'), 'utf8');
    expect(barrel).not.toMatch(/export \*/);
  });

  test('the package root still exports the constructs', () => {
    for (const name of ['Fleet', 'Hub', 'Spoke', 'ClusterSet', 'Placement', 'PullApplication', 'PullApplicationSet'])
      expect(typeof (root as Record<string, unknown>)[name]).toBe('function');
  });
});
