/**
 * What a fleet program does differently when a pullfleet command runs it ($PULLFLEET_CLI is set):
 * - a mistake the library reports and the program leaves uncaught (a {@link FleetValidationError}, or a
 *   construct made where it cannot be) is printed as its message alone, with the line of the fleet
 *   description that made it, and the program exits 1: the user reads the problem, not the library's
 *   stack;
 * - a Fleet that never synthesized, or whose failed synth the program swallowed, says so when the
 *   program exits, and the exit code becomes 1, so the command never reports success for a fleet that
 *   rendered nothing.
 * Outside a pullfleet command (a bare `cdk8s synth`, tests, a user's own script) nothing changes.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_ENV, FLEET_FILE_ENV } from './synth-env.js';

const MISTAKE = Symbol.for('pullfleet.mistake');

/**
 * An error for a mistake in the fleet description (not a fault of pullfleet): under a pullfleet command
 * it is printed without a stack trace.
 */
export function mistake(message: string): Error {
  const error = new Error(message);
  Object.defineProperty(error, MISTAKE, { value: true });
  return error;
}

/** Whether `error` reports a mistake in the fleet description (including a failed validation of any copy of pullfleet). */
function isMistake(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  if ((error as unknown as Record<symbol, unknown>)[MISTAKE] === true) return true;
  return error.name === 'FleetValidationError' && Array.isArray((error as { problems?: unknown }).problems);
}

/** Whether a pullfleet command runs this program. */
export function underPullfleetCommand(): boolean {
  return Boolean(process.env[CLI_ENV]);
}

/** The folder holding pullfleet's own modules (src/ in a checkout, lib/src/ installed). */
const LIBRARY_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where in the user's own code `error` was thrown: the first stack frame outside pullfleet and Node. */
function userFrame(error: Error): string | undefined {
  for (const line of (error.stack ?? '').split('\n').slice(1)) {
    const match = /\(?((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(line.trim());
    if (!match) continue;
    const file = match[1].startsWith('file://') ? fileURLToPath(match[1]) : match[1];
    if (file.startsWith(LIBRARY_DIR + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    return `${path.relative(process.cwd(), file) || file}:${match[2]}:${match[3]}`;
  }
  return undefined;
}

/** The text printed for an uncaught mistake: its message, and where the fleet description made it. */
export function plainReport(error: Error): string {
  if (error.name === 'FleetValidationError') return `${error.message}\n`;
  const at = userFrame(error);
  return `pullfleet: ${error.message}${at ? `\n  at ${at}` : ''}\n`;
}

/** What the Fleets of this program did: whether one wrote its output, and the last failure of a synth. */
const session = { watching: false, written: false, failure: undefined as Error | undefined };

/** Records that a Fleet wrote its output. */
export function synthWritten(): void {
  session.written = true;
}

/** Records that a Fleet's synth failed with `error`. */
export function synthFailed(error: Error): void {
  session.failure = error;
}

/**
 * Under a pullfleet command (once per process, from the first Fleet made): prints an uncaught mistake
 * plainly and exits 1 (other errors keep Node's own report), and makes a program about to exit 0 whose
 * Fleets wrote nothing say why and exit 1.
 */
export function watchFleetProgram(): void {
  if (session.watching || !underPullfleetCommand()) return;
  session.watching = true;
  // The monitor runs before Node prints the error, so exiting here leaves out the stack trace.
  process.on('uncaughtExceptionMonitor', (error) => {
    if (!isMistake(error)) return;
    process.stderr.write(plainReport(error));
    process.exit(1);
  });
  process.once('exit', (code) => {
    // A failed synth the program went on from fails the command, even when another Fleet wrote its output.
    if (code !== 0 || (session.written && !session.failure)) return;
    const file = fleetFileName();
    process.stderr.write(
      session.failure
        ? `${plainReport(session.failure)}pullfleet: ${file} caught this error of fleet.synth() and went on; the synth failed all the same (let the error through, or set process.exitCode = 1)\n`
        : `pullfleet: ${file} built a Fleet but never called fleet.synth(), so nothing was rendered: end ${file} with fleet.synth()\n`,
    );
    process.exitCode = 1;
  });
}

/** The fleet description's file as the command names it, else as Node ran it, else fleet.config.ts. */
export function fleetFileName(): string {
  const named = process.env[FLEET_FILE_ENV];
  if (named) return named;
  const entry = process.argv[1];
  if (entry && /\.[cm]?[jt]sx?$/.test(entry) && !entry.split(path.sep).includes('node_modules')) {
    const relative = path.relative(process.cwd(), path.resolve(entry));
    if (!relative.startsWith('..') && !path.isAbsolute(relative)) return relative.split(path.sep).join('/');
  }
  return 'fleet.config.ts';
}
