import { describe, expect, test } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * The declarations `npm run build` publishes for the package root (src/index.ts and everything it
 * re-exports), emitted in memory with the build's settings.
 */
function rootDeclarations(): Map<string, string> {
  const configPath = path.resolve('tsconfig.build.json');
  const config = ts.readConfigFile(configPath, (file) => ts.sys.readFile(file));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, path.dirname(configPath));
  const options: ts.CompilerOptions = {
    ...parsed.options,
    declaration: true,
    emitDeclarationOnly: true,
    stripInternal: true,
    noEmit: false,
    outDir: '/virtual/lib',
  };
  const program = ts.createProgram([path.resolve('src/index.ts')], options);
  const out = new Map<string, string>();
  const result = program.emit(undefined, (file, text) => {
    if (file.endsWith('.d.ts')) out.set(path.relative('/virtual/lib', file), text);
  });
  const errors = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length)
    throw new Error(
      ts.formatDiagnostics(errors, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => process.cwd(),
        getNewLine: () => '\n',
      }),
    );
  return out;
}

describe('public API', () => {
  test('no published declaration of the package root references generated import types (imports/, cdk8s-plus k8s)', () => {
    const declarations = rootDeclarations();
    expect(declarations.has('src/constructs/index.d.ts')).toBe(true);
    const leaks: string[] = [];
    for (const [file, text] of declarations) {
      if (file.startsWith('imports/')) continue;
      text.split('\n').forEach((line, i) => {
        if (/['"](\.\.\/)+imports\/|['"]cdk8s-plus-\d+['"]/.test(line)) leaks.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(leaks).toStrictEqual([]);
  }, 120_000);

  test('the construct library never downcasts to its concrete classes', () => {
    const dir = 'src/constructs';
    const hits: string[] = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      fs.readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (
            /instanceof (Hub|Spoke|ClusterSet|Placement|PullApplication|PullApplicationSet|ApiObject|Fleet)\b|\bas (Spoke|ClusterSet|Placement)\b/.test(
              line,
            )
          )
            hits.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).toStrictEqual([]);
  });
});

describe('TSDoc', () => {
  test('every optional prop of an exported construct interface documents its @default', () => {
    const missing: string[] = [];
    const dir = 'src/constructs';
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const source = ts.createSourceFile(
        file,
        fs.readFileSync(path.join(dir, file), 'utf8'),
        ts.ScriptTarget.Latest,
        true,
      );
      source.forEachChild((node) => {
        if (!ts.isInterfaceDeclaration(node) || !node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
          return;
        for (const member of node.members) {
          if (!ts.isPropertySignature(member) || !member.questionToken) continue;
          const tags = ts.getJSDocTags(member).map((t) => t.tagName.text);
          if (!tags.includes('default')) missing.push(`${file}: ${node.name.text}.${member.name.getText(source)}`);
        }
      });
    }
    expect(missing).toStrictEqual([]);
  });
});
