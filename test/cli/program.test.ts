/**
 * The pullfleet program: `--version` prints package.json's version; usage errors exit 2 (1 means a
 * failure, or a degraded fleet for `status`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { buildProgram, EXIT_USAGE, main } from '../../src/cli/main.js';
import { CLUSTER_COMMAND_NAMES, commandsFor } from '../../src/cli/program.js';

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

  test('start-up loads only what the command given needs: nothing for --version, one command for a command, all for help', async () => {
    expect(await commandsFor(['node', 'pullfleet', '--version'])).toHaveLength(0);
    expect(await commandsFor(['node', 'pullfleet', 'status', '--cluster', 'east'])).toHaveLength(1);
    expect(await commandsFor(['node', 'pullfleet', '--help'])).toHaveLength(7);
    expect(await commandsFor(['node', 'pullfleet', 'bogus'])).toHaveLength(7);
  });

  test('the binary loads the Kubernetes client ahead of tsx for exactly the commands that talk to a cluster', () => {
    const bin = fs.readFileSync('bin/pullfleet.js', 'utf8');
    const listed = /^const CLUSTER_COMMANDS = new Set\(\[(.*)\]\);$/m.exec(bin)?.[1];
    expect(listed?.split(',').map((name) => name.trim().replace(/'/g, ''))).toStrictEqual([...CLUSTER_COMMAND_NAMES]);
    expect(CLUSTER_COMMAND_NAMES).toStrictEqual(['status', 'inventory', 'migrate']);
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
