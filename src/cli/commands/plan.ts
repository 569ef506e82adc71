/**
 * `pullfleet validate` and `pullfleet plan`: synthesize into a scratch folder (dist/ is never touched),
 * then report problems, or compare with the committed dist/: deletions on spokes (by each work's
 * deleteOption), runtime deletions of ApplicationSet-generated works, other removals, changes with a
 * field diff, additions.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Command } from 'commander';
import {
  acknowledge,
  formatPlan,
  parseAcknowledgements,
  planFleet,
  planJson,
  type FleetPlan,
} from '../../model/plan/plan.js';
import { type PlannedObject, type PlanSide } from '../../model/plan/controller-deletions.js';
import { parsePlanState, PLAN_STATE_FILE, type PlanState } from '../../model/plan/state.js';
import { readCdk8sConfig } from '../support/cdk8s-config.js';
import { Progress } from '../support/progress.js';
import { readYamlDocuments } from '../support/read-yaml.js';
import {
  DEFAULT_TIMEOUT_SECONDS,
  parseTimeout,
  PHASE,
  runFleetProgram,
  timeoutMessage,
  withoutCliNoise,
} from './synth.js';
import { checkFleetTypes, runsTypeScript } from '../support/typecheck.js';

/** Every YAML document under `dir`, with its path relative to `dir`. Throws naming the file that does not parse. */
export function readTree(dir: string): PlannedObject[] {
  if (!fs.existsSync(dir)) return [];
  const out: PlannedObject[] = [];
  const walk = (sub: string) => {
    for (const entry of fs
      .readdirSync(path.join(dir, sub), { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (/\.ya?ml$/.test(entry.name)) {
        let docs: unknown[];
        try {
          // YAML 1.2, core schema; what synth writes is read without the yaml package's document API,
          // which takes about ten times as long on a 1,000-spoke output (../support/read-yaml.ts).
          docs = readYamlDocuments(fs.readFileSync(path.join(dir, rel), 'utf8'));
        } catch (error) {
          throw new Error(`${path.join(dir, rel)}: not valid YAML (${(error as Error).message.split('\n')[0]})`);
        }
        for (const object of docs) if (object && typeof object === 'object') out.push({ file: rel, object: object });
      }
    }
  };
  walk('');
  return out;
}

/** The plan state of every hub folder of `dir` (`<dir>/<hub>/plan-state.json`). */
export function readPlanStates(dir: string): Map<string, PlanState> {
  const states = new Map<string, PlanState>();
  if (!fs.existsSync(dir)) return states;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name, PLAN_STATE_FILE);
    if (entry.isDirectory() && fs.existsSync(file))
      states.set(entry.name, parsePlanState(fs.readFileSync(file, 'utf8'), file));
  }
  return states;
}

/** One side of a plan read from an output folder. */
export function readSide(dir: string): PlanSide {
  return { objects: readTree(dir), states: readPlanStates(dir) };
}

async function scratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-'));
  try {
    return await fn(path.join(dir, 'out'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface PlanOptions {
  /** Project folder holding cdk8s.yaml. @default process.cwd() */
  readonly cwd?: string;
  /** Committed output folder, relative to cwd. @default 'dist' */
  readonly outdir?: string;
  /** Command that runs the cdk8s app. @default - the `app` of cdk8s.yaml */
  readonly app?: string;
  /** `text` (default) or `json`. */
  readonly format?: string;
  /** Exit 1 when a deletion on a spoke (direct or runtime) is not acknowledged. */
  readonly failOnDeletions?: boolean;
  /** Acknowledged deletion ids (`*` matches any characters). */
  readonly allowDeletion?: readonly string[];
  /** A file of acknowledged deletion ids, one per line (`#` comments), relative to cwd. */
  readonly acknowledgements?: string;
  /**
   * There is no previous output (the fleet has never been synthesized): a missing or empty output folder
   * is then a first synth instead of an error, and a folder that holds objects is an error.
   * @default false
   */
  readonly firstSynth?: boolean;
  /** Synthesizes into a folder (tests inject one). @default - the fleet program through {@link runFleetProgram} */
  readonly synth?: (dir: string) => { ok: boolean; output: string };
}

export interface PlanResult {
  /** 0: plan shown; 1: synth failed, output unreadable, or unacknowledged deletions with failOnDeletions; 2: usage error. */
  readonly exitCode: 0 | 1 | 2;
  readonly stdout: string;
  readonly stderr: string;
  readonly plan?: FleetPlan;
}

const usage = (message: string): PlanResult => ({ exitCode: 2, stdout: '', stderr: `pullfleet plan: ${message}\n` });

/** What plan compares against, once its options have been checked. */
interface PlanInputs {
  readonly cwd: string;
  readonly format: string;
  readonly patterns: string[];
  readonly outdirName: string;
  readonly outdir: string;
  readonly before: PlanSide;
}

/** Checks the options and reads the output folder; a {@link PlanResult} when plan cannot go on. */
function planInputs(options: PlanOptions): PlanInputs | PlanResult {
  const cwd = options.cwd ?? process.cwd();
  const format = options.format ?? 'text';
  if (format !== 'text' && format !== 'json') return usage(`unknown output format "${format}": use -o text or -o json`);
  const patterns = [...(options.allowDeletion ?? [])];
  if (patterns.some((p) => p.trim() === ''))
    return usage('--allow-deletion needs a deletion id (as listed by plan), for example hub/east/argocd-web-east');
  if (options.acknowledgements !== undefined) {
    const file = path.resolve(cwd, options.acknowledgements);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      return usage(
        `cannot read acknowledgements file ${options.acknowledgements}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    patterns.push(...parseAcknowledgements(text));
  }
  const outdirName = options.outdir ?? 'dist';
  const outdir = path.resolve(cwd, outdirName);
  const problem = outdirProblem(outdirName, outdir, options.firstSynth === true);
  if (problem) return usage(problem);
  let before: PlanSide;
  try {
    before = readSide(outdir);
  } catch (error) {
    return {
      exitCode: 1,
      stdout: '',
      stderr: `pullfleet plan: cannot read ${outdirName}: ${(error as Error).message}\n`,
    };
  }
  // A folder without objects would silently make a first synth (nothing deleted, every gate open).
  if (before.objects.length === 0 && options.firstSynth !== true)
    return usage(`output folder ${outdirName} holds no YAML objects (${outdir}): ${NOT_AN_OUTPUT_FIX}`);
  if (before.objects.length > 0 && options.firstSynth === true)
    return usage(
      `--first-synth, but output folder ${outdirName} holds ${before.objects.length} objects: drop --first-synth to compare with them`,
    );
  return { cwd, format, patterns, outdirName, outdir, before };
}

const NOT_AN_OUTPUT_FIX =
  'pass the folder synth writes (default dist), or --first-synth if this fleet has never been synthesized';

/**
 * Why the output folder cannot be compared with, before anything runs: it is a file, or it does not exist
 * and the user did not say this is the first synth (a mistyped path must not open the deletion gate).
 */
function outdirProblem(outdirName: string, outdir: string, firstSynth: boolean): string | undefined {
  if (!fs.existsSync(outdir))
    return firstSynth ? undefined : `output folder ${outdirName} does not exist (${outdir}): ${NOT_AN_OUTPUT_FIX}`;
  if (!fs.statSync(outdir).isDirectory())
    return `${outdirName} is not a folder: pass the folder synth writes (default dist)`;
  return undefined;
}

/** The plan of a fresh synth into `dir` against the output folder (or why there is none). */
function planAgainst(
  inputs: PlanInputs,
  options: PlanOptions,
  dir: string,
  result: { ok: boolean; output: string },
): PlanResult {
  if (!result.ok) {
    // The fleet's own problem list, without cdk8s-cli's banner and stack trace around it.
    const output = withoutCliNoise(result.output);
    return {
      exitCode: 1,
      stdout: '',
      stderr: `${output}${output.endsWith('\n') || !output ? '' : '\n'}pullfleet plan: synth failed, nothing to compare\n`,
    };
  }
  const { format, outdirName, patterns } = inputs;
  const plan = planFleet(inputs.before, readSide(dir));
  const ack = acknowledge(plan, patterns);
  const blocked = options.failOnDeletions === true && ack.unacknowledged.length > 0;
  const label = `${outdirName.replace(/\/$/, '')}/`;
  const stdout =
    format === 'json'
      ? `${JSON.stringify(planJson(plan, { outdir: outdirName, acknowledgement: ack }), null, 2)}\n`
      : formatPlan(plan, { outdir: label, acknowledgement: ack });
  const stderr = blocked
    ? `pullfleet plan: ${ack.unacknowledged.length} deletion(s) on spokes not acknowledged: ${ack.unacknowledged.join(', ')}\n` +
      'review them, then acknowledge each with --allow-deletion <id> (or list the ids in the file given to --acknowledgements)\n'
    : '';
  return { exitCode: blocked ? 1 : 0, stdout, stderr, plan };
}

/**
 * `pullfleet plan` without a process: synthesizes into a scratch folder and compares it with the output
 * folder. The fleet program is stopped once `timeout` seconds have passed since `started` (the plan then
 * fails naming the phase), and `progress` shows the phase.
 */
export async function runPlan(
  options: PlanOptions & { timeout?: number; started?: number; progress?: Progress } = {},
): Promise<PlanResult> {
  const inputs = planInputs(options);
  if ('exitCode' in inputs) return inputs;
  const { cwd, outdir } = inputs;
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_SECONDS;
  const started = options.started ?? Date.now();
  return scratch(async (dir) => {
    if (options.synth) return planAgainst(inputs, options, dir, options.synth(dir));
    const result = await runFleetProgram(dir, {
      cwd,
      app: options.app,
      previousOutput: outdir,
      timeout,
      started,
      progress: options.progress,
    });
    if (result.timedOutIn !== undefined) {
      const app = options.app ?? readCdk8sConfig(cwd).app;
      return {
        exitCode: 1,
        stdout: '',
        stderr: timeoutMessage(
          'plan',
          timeout,
          result.timedOutIn,
          app,
          `nothing was compared (${inputs.outdirName} is only read)`,
        ),
      };
    }
    return planAgainst(inputs, options, dir, result);
  });
}

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description(
      'compare the output folder with a fresh synth: deletions on spokes first, then runtime deletions, other removals, changes (field diff) and additions',
    )
    .argument('[dir]', 'committed output folder', 'dist')
    .option('-o, --output <format>', 'text or json', 'text')
    .option('-a, --app <command>', 'command that runs the cdk8s app (default: cdk8s.yaml)')
    .option(
      '--fail-on-deletions',
      'exit 1 when the plan deletes anything on a spoke (directly or at runtime) that is not acknowledged',
    )
    .option(
      '--allow-deletion <id>',
      'acknowledge a reviewed deletion (id as listed; * matches any characters); repeatable',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--acknowledgements <file>', 'file of acknowledged deletion ids, one per line (# comments)')
    .option(
      '--first-synth',
      'the fleet has never been synthesized: a missing or empty output folder is compared as nothing (an error otherwise)',
    )
    .option(
      '--timeout <seconds>',
      'stop the type-check and the fleet program after this long (0: no limit)',
      parseTimeout,
      DEFAULT_TIMEOUT_SECONDS,
    )
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .action(
      async (
        dir: string,
        opts: {
          output: string;
          app?: string;
          failOnDeletions?: boolean;
          allowDeletion: string[];
          acknowledgements?: string;
          firstSynth?: boolean;
          timeout: number;
        },
      ) => {
        // Before the type-check: a mistyped output folder is a usage error, at once.
        const problem = outdirProblem(dir, path.resolve(dir), opts.firstSynth === true);
        if (problem) {
          process.stderr.write(`pullfleet plan: ${problem}\n`);
          process.exitCode = 2;
          return;
        }
        const started = Date.now();
        const progress = new Progress('pullfleet plan');
        try {
          if (runsTypeScript(opts.app)) progress.enter(PHASE.typecheck);
          if (!checkFleetTypes({ app: opts.app })) return;
          if (opts.timeout > 0 && Date.now() - started > opts.timeout * 1000) {
            process.stderr.write(
              timeoutMessage('plan', opts.timeout, PHASE.typecheck, opts.app, 'nothing was compared'),
            );
            process.exitCode = 1;
            return;
          }
          const result = await runPlan({
            outdir: dir,
            format: opts.output,
            app: opts.app,
            failOnDeletions: opts.failOnDeletions,
            allowDeletion: opts.allowDeletion,
            acknowledgements: opts.acknowledgements,
            firstSynth: opts.firstSynth,
            timeout: opts.timeout,
            started,
            progress,
          });
          progress.stop();
          process.stdout.write(result.stdout);
          process.stderr.write(result.stderr);
          process.exitCode = result.exitCode;
        } finally {
          progress.stop();
        }
      },
    );
}
