/**
 * The `pullfleet` program without its command list: version, exit codes, and `main`, which loads only
 * what the command given needs: one command's module (the offline ones start without the Kubernetes
 * client), none for --version, every one for help and unknown commands.
 * Exit codes: 0 success, 1 failure (or, for `status`, a degraded fleet or a name that matches nothing; for
 * `plan --fail-on-deletions`, an unacknowledged deletion), 2 usage error (unknown command or option,
 * missing argument, a value an option does not take).
 */
import { Command, CommanderError } from 'commander';
import { pullfleetVersion } from '../version.js';

/** Exit code of a usage error (1 means failed, or degraded for `status`). */
export const EXIT_USAGE = 2;

/** Registers one command on the program. */
export type RegisterCommand = (program: Command) => void;

/** One command of the program: its name and how to load the module that registers it. */
interface CommandModule {
  readonly name: string;
  /** Whether the command talks to a cluster (its module loads the Kubernetes client). */
  readonly cluster: boolean;
  readonly load: () => Promise<RegisterCommand>;
}

/** Every command, in help order: the one registry that the binary, src/cli/main.ts and the tests all build from. */
const COMMANDS: readonly CommandModule[] = [
  { name: 'init', cluster: false, load: async () => (await import('./commands/init.js')).registerInit },
  { name: 'synth', cluster: false, load: async () => (await import('./commands/synth.js')).registerSynth },
  { name: 'validate', cluster: false, load: async () => (await import('./commands/validate.js')).registerValidate },
  { name: 'plan', cluster: false, load: async () => (await import('./commands/plan.js')).registerPlan },
  { name: 'status', cluster: true, load: async () => (await import('./commands/status.js')).registerStatus },
  { name: 'inventory', cluster: true, load: async () => (await import('./commands/inventory.js')).registerInventory },
  {
    name: 'migrate',
    cluster: true,
    load: async () => {
      // `migrate subscriptions` creates the `migrate` command; `migrate applications` joins it.
      const { registerMigrate } = await import('./commands/migrate.js');
      const { registerMigrateApplications } = await import('./commands/migrate-applications.js');
      return (program: Command) => registerMigrateApplications(registerMigrate(program));
    },
  },
];

/** Names of the commands that talk to a cluster (their modules load the Kubernetes client), in help order. */
export const CLUSTER_COMMAND_NAMES: readonly string[] = COMMANDS.filter((c) => c.cluster).map((c) => c.name);

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

/** Loads the registrations of `commands`, in order. */
async function load(commands: readonly CommandModule[]): Promise<RegisterCommand[]> {
  const registers: RegisterCommand[] = [];
  // One after another: jest's ESM loader fails on concurrent imports that share modules.
  for (const command of commands) registers.push(await command.load());
  return registers;
}

/** Commands that talk to a cluster (they load the Kubernetes client), in help order. */
export async function clusterCommands(): Promise<RegisterCommand[]> {
  return load(COMMANDS.filter((c) => c.cluster));
}

/** Every command, in help order. */
export async function allCommands(): Promise<RegisterCommand[]> {
  return load(COMMANDS);
}

/**
 * The commands `argv` needs: none for `--version` alone, the one named first, else every one (help, or an
 * unknown command, which commander then names among the others).
 */
export async function commandsFor(argv: readonly string[]): Promise<RegisterCommand[]> {
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) return [];
  const named = COMMANDS.find((c) => c.name === args[0]);
  return named ? load([named]) : allCommands();
}

/**
 * Runs the program. Help and --version exit 0, usage errors {@link EXIT_USAGE}; commands set
 * `process.exitCode` themselves.
 */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  const program = programWith(await commandsFor(argv));
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
}
