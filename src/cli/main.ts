/**
 * The `pullfleet` program for in-process use: the tests and benchmarks run commands through it instead
 * of spawning bin/pullfleet.js. It is not a package entry point (the command line is the CLI's public
 * interface). Each command file exports one `registerX(program)`; the one list of them is in program.ts
 * (COMMANDS, each loaded only when needed), which the binary runs too.
 */
import type { Command } from 'commander';
import { allCommands, programWith } from './program.js';

export { EXIT_USAGE, allCommands, main } from './program.js';

/** The program with every command registered (commander errors are thrown, not exited on). */
export async function buildProgram(): Promise<Command> {
  return programWith(await allCommands());
}
