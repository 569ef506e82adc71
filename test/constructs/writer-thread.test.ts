/**
 * The writing thread of the output writer is a module of its own (src/constructs/_writer-thread.ts): compiled
 * (as in lib/ of the packed package) it runs with no loader, in a checkout _writer-thread-dev.mjs runs it
 * through tsx, and without either the writer writes every file in its own thread. A thread that cannot start
 * fails synth at once, naming the output and why, instead of waiting for writes that never come.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import ts from 'typescript';
import { OutputWriter, writerThreadModule, type WriterThreadModule } from '../../src/constructs/_output-writer.js';
import { writeMany } from './helpers.js';

const SOURCE = path.resolve('src/constructs');
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-writer-'));
  scratch.push(dir);
  return dir;
}

/** A folder beside which _writer-thread.ts is compiled to plain JavaScript, as `npm run build` puts it in lib/. */
function compiledFolder(): string {
  const dir = tmp();
  const { outputText } = ts.transpileModule(fs.readFileSync(path.join(SOURCE, '_writer-thread.ts'), 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
  });
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  fs.writeFileSync(path.join(dir, '_writer-thread.js'), outputText);
  return dir;
}

function expectFiles(dir: string, expected: Record<string, string>): void {
  const wrong = Object.entries(expected).filter(
    ([file, text]) => !fs.existsSync(path.join(dir, file)) || fs.readFileSync(path.join(dir, file), 'utf8') !== text,
  );
  expect(wrong.map(([file]) => file)).toStrictEqual([]);
}

describe('where the writing thread comes from', () => {
  test('GIVEN the compiled module beside the writer (lib/) THEN the thread runs it as it is, with no loader', () => {
    const dir = compiledFolder();
    const thread = writerThreadModule(pathToFileURL(path.join(dir, '_output-writer.js')).href);
    expect(thread).toStrictEqual({ entry: pathToFileURL(path.join(dir, '_writer-thread.js')) });
    const out = path.join(tmp(), 'dist');
    const writer = OutputWriter.open(out, thread)!;
    const expected = writeMany(writer);
    writer.finish();
    expectFiles(out, expected);
  });

  test('GIVEN the sources (a checkout) THEN the thread runs _writer-thread.ts through the tsx loader module', () => {
    const thread = writerThreadModule();
    expect(thread).toStrictEqual({
      entry: pathToFileURL(path.join(SOURCE, '_writer-thread-dev.mjs')),
      module: pathToFileURL(path.join(SOURCE, '_writer-thread.ts')),
    });
    const out = path.join(tmp(), 'dist');
    const writer = OutputWriter.open(out, thread)!;
    const expected = writeMany(writer);
    writer.finish();
    expectFiles(out, expected);
  });

  test('GIVEN no module to run THEN every file is written in this thread, a failure at the write itself', () => {
    expect(writerThreadModule(pathToFileURL(path.join(tmp(), '_output-writer.js')).href)).toBeUndefined();
    const out = path.join(tmp(), 'dist');
    const writer = OutputWriter.open(out, undefined)!;
    const expected = writeMany(writer);
    writer.finish();
    expectFiles(out, expected);
    writer.write('hub/blocked', 'a file where a folder is needed\n');
    expect(() => writer.write('hub/blocked/inside.yaml', 'x: 1\n')).toThrow(/ENOTDIR|EEXIST/);
  });
});

describe('a writing thread that cannot start', () => {
  test('GIVEN a thread module that does not load THEN synth fails at once naming the output and why, and discard leaves nothing', () => {
    const broken: WriterThreadModule = {
      entry: pathToFileURL(path.join(SOURCE, '_writer-thread-dev.mjs')),
      module: pathToFileURL(path.join(tmp(), 'missing', '_writer-thread.ts')),
    };
    const out = path.join(tmp(), 'dist');
    const writer = OutputWriter.open(out, broken)!;
    expect(() => {
      writeMany(writer);
      writer.finish();
    }).toThrow(
      new RegExp(
        `^writing the output into ${out} failed: the writing thread did not start: .*missing/_writer-thread\\.ts`,
      ),
    );
    writer.discard();
    expect(fs.existsSync(out)).toBe(false);
  });
});
