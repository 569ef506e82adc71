/**
 * The `pullfleet` program without its command list: version, exit codes, and `main`, which loads only
 * what the command given needs (the offline commands start without the Kubernetes client).
 * Exit codes: 0 success, 1 failure (or, for `status`, a degraded fleet; for `plan --fail-on-deletions`,
 * an unacknowledged deletion), 2 usage error (unknown command or option, missing argument).
 */
import { Command, CommanderError } from 'commander';
import { registerInit } from './commands/init.js';
import { registerPlan } from './commands/plan.js';
import { registerValidate } from './commands/validate.js';
import { registerSynth } from './commands/synth.js';
import { pullfleetVersion } from '../version.js';

/** Exit code of a usage error (1 means failed, or degraded for `status`). */
export const EXIT_USAGE = 2;

/** Registers one command on the program. */
export type RegisterCommand = (program: Command) => void;

/** Commands that need no cluster, in help order. */
export const OFFLINE_COMMANDS: readonly RegisterCommand[] = [
  registerInit,
  registerSynth,
  registerValidate,
  registerPlan,
];

/** The version in package.json. */
export function packageVersion(): string {
  return pullfleetVersion();
}

/** A program with `commands` registered. Commander errors are thrown, not exited on. */
export function programWith(commands: readonly RegisterCommand[]): Command {
  const program = new Command('pullfleet')
    .description('Argo CD pull delivery across an Open Cluster Management fleet')
    .version(packageVersion(), '-V, --version', 'print the pullfleet version')
    .showHelpAfterError()
    .exitOverride();
  for (const register of commands) register(program);
  // Subcommands copy the parent's settings when created; make sure each one throws too.
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Names of the commands in {@link OFFLINE_COMMANDS}: for these `main` loads no Kubernetes client. */
const OFFLINE_NAMES: ReadonlySet<string> = new Set(['init', 'synth', 'validate', 'plan', '--version', '-V']);

/** Commands that talk to a cluster (they load the Kubernetes client), in help order. */
export async function clusterCommands(): Promise<RegisterCommand[]> {
  // One after another: jest's ESM loader fails on concurrent imports that share modules.
  const { registerStatus } = await import('./commands/status.js');
  const { registerInventory } = await import('./commands/inventory.js');
  const { registerMigrate } = await import('./commands/migrate.js');
  return [registerStatus, registerInventory, registerMigrate];
}

/**
 * Every command, in help order: the one registry that the binary, src/cli/main.ts and the tests all
 * build from.
 */
export async function allCommands(): Promise<RegisterCommand[]> {
  return [...OFFLINE_COMMANDS, ...(await clusterCommands())];
}

/**
 * Runs the program. Help and --version exit 0, usage errors {@link EXIT_USAGE}; commands set
 * `process.exitCode` themselves.
 */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  const first = argv[2];
  const offline = first !== undefined && OFFLINE_NAMES.has(first);
  const program = programWith(offline ? OFFLINE_COMMANDS : await allCommands());
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
}
