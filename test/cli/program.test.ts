/**
 * The pullfleet program: `--version` prints package.json's version; usage errors exit 2 (1 means a
 * failure, or a degraded fleet for `status`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { buildProgram, EXIT_USAGE, main } from '../../src/cli/main.js';

const version = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string }).version;

/** Runs `main` in-process; returns the exit code and what went to stdout and stderr. */
async function run(...args: string[]): Promise<{ code: number | undefined; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const { write: writeOut } = process.stdout;
  const { write: writeErr } = process.stderr;
  const previous = process.exitCode;
  process.exitCode = undefined;
  process.stdout.write = (chunk: string) => out.push(chunk) > 0;
  process.stderr.write = (chunk: string) => err.push(chunk) > 0;
  try {
    await main(['node', 'pullfleet', ...args]);
    return {
      code: process.exitCode === undefined ? undefined : Number(process.exitCode),
      out: out.join(''),
      err: err.join(''),
    };
  } finally {
    process.stdout.write = writeOut;
    process.stderr.write = writeErr;
    process.exitCode = previous;
  }
}

describe('pullfleet program', () => {
  test('--version prints the version of package.json and exits 0', async () => {
    expect(await run('--version')).toStrictEqual({ code: 0, out: `${version}\n`, err: '' });
    expect((await run('-V')).out).toBe(`${version}\n`);
  });

  test('the installed binary prints the version too', () => {
    const result = spawnSync(process.execPath, [path.resolve('bin/pullfleet.js'), '--version'], { encoding: 'utf8' });
    expect({ status: result.status, stdout: result.stdout }).toStrictEqual({ status: 0, stdout: `${version}\n` });
  });

  test.each([
    [['bogus'], "error: unknown command 'bogus'"],
    [['synth', '--bogus'], "error: unknown option '--bogus'"],
    [['synth', '--output'], "error: option '-o, --output <dir>' argument missing"],
    [['plan', '--app'], "error: option '-a, --app <command>' argument missing"],
    [['status', '--output', 'xml'], "error: option '-o, --output <format>' argument 'xml' is invalid"],
  ])('fails with exit 2 on the usage error %j', async (args, message) => {
    const result = await run(...args);
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.err).toContain(message);
  });

  test('help exits 0 and lists every command', async () => {
    const result = await run('--help');
    expect(result.code).toBe(0);
    expect((await buildProgram()).commands.map((c) => c.name())).toEqual(
      expect.arrayContaining(['synth', 'validate', 'plan', 'status']),
    );
    for (const name of ['synth', 'validate', 'plan', 'status']) expect(result.out).toContain(`  ${name} `);
  });
});
