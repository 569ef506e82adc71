/**
 * The `pullfleet` command. Each command file exports one `registerX(program)`; add yours to COMMANDS.
 */
import { Command } from 'commander';
import { registerPlan } from './plan.js';
import { registerValidate } from './validate.js';
import { registerSynth } from './synth.js';
import { registerStatus } from './status.js';

/** One entry per command file. */
export const COMMANDS: ReadonlyArray<(program: Command) => void> = [registerSynth, registerValidate, registerPlan, registerStatus];

/** The program with every command registered. */
export function buildProgram(): Command {
  const program = new Command('pullfleet').description('Argo CD pull delivery across an Open Cluster Management fleet').showHelpAfterError();
  for (const register of COMMANDS) register(program);
  return program;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  await buildProgram().parseAsync([...argv]);
}
