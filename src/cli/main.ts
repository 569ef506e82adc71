/**
 * The `pullfleet` command as a library entry (`pullfleet/cli`). Each command file exports one
 * `registerX(program)`; the one list of them is in program.ts (OFFLINE_COMMANDS, or clusterCommands
 * when the command talks to a cluster), which the binary runs too.
 */
import type { Command } from 'commander';
import { allCommands, programWith } from './program.js';

export { EXIT_USAGE, allCommands, main, packageVersion, type RegisterCommand } from './program.js';

/** The program with every command registered (commander errors are thrown, not exited on). */
export async function buildProgram(): Promise<Command> {
  return programWith(await allCommands());
}
