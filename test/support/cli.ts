/**
 * Runs the `pullfleet` program in-process with stdout and stderr captured, as a user's shell would see
 * them, and returns the exit code the command set; or the binary in a process of its own.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { jest } from '@jest/globals';
import { buildProgram } from '../../src/cli/main.js';

export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** `pullfleet <args…>`; commander errors are thrown (exitOverride), not exited on. */
export async function runCli(args: readonly string[]): Promise<CliRun> {
  let out = '';
  let err = '';
  const outSpy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const errSpy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
  process.exitCode = undefined;
  try {
    await (await buildProgram()).exitOverride().parseAsync(['node', 'pullfleet', ...args]);
  } finally {
    outSpy.mockRestore();
    errSpy.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, out, err };
}

/**
 * `node bin/pullfleet.js <args…>` in a process of its own, as a user's shell runs it (no jest
 * NODE_OPTIONS, no colour): exit code, stdout and stderr.
 */
export function runBinary(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): CliRun {
  const result = spawnSync(process.execPath, [path.resolve('bin/pullfleet.js'), ...args], {
    cwd: options.cwd ?? process.cwd(),
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1', ...options.env },
  });
  if (result.error) throw result.error;
  return { code: result.status ?? 1, out: result.stdout, err: result.stderr };
}

/**
 * {@link runBinary} without blocking: for a binary that talks to a server running in this process (the
 * API double), which a synchronous spawn would keep from answering.
 */
export async function spawnBinary(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliRun> {
  const child = spawn(process.execPath, [path.resolve('bin/pullfleet.js'), ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve(status ?? 1));
  });
  return { code, out, err };
}
