/**
 * The `pullfleet` command. Each command file exports one `registerX(program)`; add yours to COMMANDS
 * (and to OFFLINE_COMMANDS in program.ts when it needs no cluster).
 */
import type { Command } from 'commander';
import { OFFLINE_COMMANDS, programWith, type RegisterCommand } from './program.js';
import { registerStatus } from './status.js';
import { registerInventory } from './inventory.js';
import { registerMigrate } from './migrate.js';

export { EXIT_USAGE, main, packageVersion } from './program.js';

/** One entry per command file. */
export const COMMANDS: readonly RegisterCommand[] = [...OFFLINE_COMMANDS, registerStatus, registerInventory, registerMigrate];

/** The program with every command registered (commander errors are thrown, not exited on). */
export function buildProgram(): Command {
  return programWith(COMMANDS);
}
