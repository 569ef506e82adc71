/**
 * Runs the `pullfleet` program in-process with stdout and stderr captured, as a user's shell would see
 * them, and returns the exit code the command set.
 */
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
