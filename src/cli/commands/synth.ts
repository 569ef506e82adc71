/**
 * `pullfleet synth`: checks that the output folder may be replaced, type-checks the fleet description
 * while the fleet program runs into a staging folder beside the output folder (as `cdk8s synth` runs it,
 * see {@link fleetProgramCommand}), and only when both succeed (and every folder involved is writable) swaps
 * the staging folder in. A refused or failed synth leaves the previous output exactly as it was.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Command } from 'commander';
import {
  CLI_ENV,
  FLEET_FILE_ENV,
  PREVIOUS_OUTPUT_ENV,
  STRICT_ENV,
  TIMINGS_FILE_ENV,
  type SynthTimings,
} from '../../constructs/synth-env.js';
import { readCdk8sConfig, type Cdk8sConfig } from '../support/cdk8s-config.js';
import { fleetProgramEnv } from '../support/fleet-module.js';
import { secondsOption } from '../support/number-options.js';
import { Progress } from '../support/progress.js';
import {
  cannotWriteProblem,
  cleanLeftovers,
  makeStaging,
  outputFolderProblem,
  SwapRestoreError,
  swapFs,
  swapIn,
  writabilityProblem,
  writeManifest,
  type SwapFs,
} from '../support/output-folder.js';
import {
  configFileOf,
  formatTypeErrors,
  runsTypeScript,
  typecheckApp,
  type TypecheckResult,
} from '../support/typecheck.js';

export interface SynthOptions {
  /** Project folder holding cdk8s.yaml. @default process.cwd() */
  readonly cwd?: string;
  /** Output folder, relative to cwd. @default - `output` of cdk8s.yaml, else 'dist' */
  readonly outdir?: string;
  /** Command that runs the cdk8s app. @default - the `app` of cdk8s.yaml */
  readonly app?: string;
  /** Pass the app's stderr (progress, validation problems) straight through instead of capturing it. @default false */
  readonly streamStderr?: boolean;
  /** Type-check the TypeScript file the app command runs. @default true */
  readonly typecheck?: boolean;
  /** Filesystem calls of the swap (tests make them fail). @default - node:fs */
  readonly fs?: Partial<SwapFs>;
  /** Aborting stops the app and ends the synth as failed, with the output folder as it was. @default - none */
  readonly signal?: AbortSignal;
  /**
   * Seconds the whole synth may take: past them the app is stopped and the synth fails naming the phase
   * it was in, with the output folder as it was. @default {@link DEFAULT_TIMEOUT_SECONDS}
   */
  readonly timeout?: number;
  /** Shows the phase and the time taken, and passes the app's streamed stderr. @default - none */
  readonly progress?: Progress;
  /**
   * The committed plan state moves between delivery models are judged against, relative to cwd: an
   * output folder holding `<hub>/plan-state.json`, or one such file. Name it when writing anywhere other
   * than the committed output folder (a CI check synthesizing into a fresh folder).
   * @default - the output folder being replaced
   */
  readonly planState?: string;
  /** Measure where the time goes ({@link SynthResult.timings}). @default false */
  readonly verbose?: boolean;
}

/** Seconds synth, validate and plan give the type-check and the fleet program by default. */
export const DEFAULT_TIMEOUT_SECONDS = 300;

/** The phases of a synth, as progress and timeout messages name them. */
export const PHASE = {
  typecheck: 'type-check',
  program: 'running the fleet program',
  writing: 'writing the output',
} as const;

/** Seconds a stopped app gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2000;

export interface SynthResult {
  readonly ok: boolean;
  /** Absolute output folder. */
  readonly outdir: string;
  /** What cdk8s printed (stdout and stderr), or why synth refused or failed. */
  readonly output: string;
  /** Notes about staging folders of interrupted runs that were removed (or kept, and why). */
  readonly notes: string[];
  /** The type-check, when one ran. */
  readonly typecheck?: TypecheckResult;
  /** Where the time went, with `verbose` (a successful synth). */
  readonly timings?: SynthTimingReport;
}

/** Where the time of a synth went, in milliseconds of wall-clock time. */
export interface SynthTimingReport {
  /** From the start of runSynth to the fleet program's start (output folder checks, staging folder). */
  readonly prepare: number;
  /** From starting the fleet program to its exit. */
  readonly program: number;
  /** What the fleet program measured itself (a program that writes no timings, such as a plain cdk8s app, has none). */
  readonly fleet?: SynthTimings;
  /** The type-check, which runs beside the fleet program (undefined when none ran). */
  readonly typecheck?: number;
  /** Whether the type-check result was reused (nothing changed since the last clean check). */
  readonly typecheckCached?: boolean;
  /** From the fleet program's exit to the end: the manifest and the swap into the output folder. */
  readonly swap: number;
  /** The whole of runSynth. */
  readonly total: number;
}

/** The timings a fleet program wrote to `file`, if it wrote any (a missing or unreadable file is none). */
function readProgramTimings(file: string | undefined): SynthTimings | undefined {
  if (!file) return undefined;
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<SynthTimings>;
    return typeof value.start === 'number' && typeof value.validate === 'number' ? (value as SynthTimings) : undefined;
  } catch {
    return undefined;
  }
}

/** Absolute path of the cdk8s CLI installed with pullfleet. */
export function cdk8sCli(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('cdk8s-cli/package.json');
  return path.join(path.dirname(pkg), 'bin', 'cdk8s');
}

function synthArgs(dir: string, app: string | undefined): string[] {
  const args = [cdk8sCli(), 'synth', '--no-check-upgrade', '-o', dir];
  if (app) args.push('--app', app);
  return args;
}

/**
 * How the fleet program is started: the app command itself, in a shell with CDK8S_OUTDIR set, exactly as
 * `cdk8s synth` runs it (which saves starting the cdk8s CLI, a node process of its own); through `cdk8s synth`
 * when cdk8s.yaml asks that CLI for more (validation plugins, Helm chart output) or no app command is known.
 * What `cdk8s synth` does for a plain app: cdk8s-team/cdk8s-cli `src/util.ts` (`synthApp`: the command in a
 * shell, `CDK8S_OUTDIR`, `CDK8S_RECORD_CONSTRUCT_METADATA` `false` unless validation plugins run) and
 * `src/cli/cmds/synth.ts` (`validations`, `synthConfig`).
 */
export function fleetProgramCommand(
  dir: string,
  cwd: string,
  app: string | undefined,
): { readonly command: string; readonly args: readonly string[]; readonly shell: boolean; readonly direct: boolean } {
  let config: Cdk8sConfig = {};
  try {
    config = readCdk8sConfig(cwd);
  } catch {
    // the cdk8s CLI reports a cdk8s.yaml it cannot read
  }
  const command = app ?? config.app;
  if (command !== undefined && config.cdk8sCliKeys === undefined)
    return { command, args: [], shell: true, direct: true };
  return { command: process.execPath, args: synthArgs(dir, app), shell: false, direct: false };
}

/**
 * Drops what cdk8s-cli itself prints around a failed app run (its "Synthesizing application" line, and
 * the `Error: command "…" returned a non-zero exit code` with its stack trace): the app has already said
 * what is wrong, with construct paths and fixes, and the trace only buries it. Fed in chunks; whole lines
 * are passed on, the rest waits for its end (or {@link CliNoiseFilter.flush}).
 */
export class CliNoiseFilter {
  private pending = '';
  private inTrace = false;

  constructor(private readonly emit: (text: string) => void) {}

  write(chunk: string): void {
    const text = this.pending + chunk;
    const end = text.lastIndexOf('\n');
    this.pending = end < 0 ? text : text.slice(end + 1);
    if (end >= 0) this.lines(text.slice(0, end + 1));
  }

  flush(): void {
    if (this.pending) this.lines(this.pending);
    this.pending = '';
  }

  private lines(text: string): void {
    const kept: string[] = [];
    for (const line of text.split(/(?<=\n)/)) {
      if (/^Error: command ".*" at .* returned a non-zero exit code/.test(line)) {
        this.inTrace = true;
        continue;
      }
      if (this.inTrace && /^\s+at /.test(line)) continue;
      this.inTrace = false;
      if (/^Synthesizing application\s*$/.test(line)) continue;
      kept.push(line);
    }
    if (kept.length > 0) this.emit(kept.join(''));
  }
}

/** `text` without cdk8s-cli's own noise (see {@link CliNoiseFilter}). */
export function withoutCliNoise(text: string): string {
  let out = '';
  const filter = new CliNoiseFilter((kept) => (out += kept));
  filter.write(text);
  filter.flush();
  return out;
}

interface RunningSynth {
  /** Resolves when the fleet program has exited (or was stopped); `exited` is performance.now() then. */
  readonly done: Promise<{ ok: boolean; output: string; exited: number }>;
  /** After the type-check: passed, show what the app printed so far and stream the rest; failed, stop the app and drop its output. */
  settle(typesOk: boolean): void;
  /** Ends the run as timed out in `phase`: stops the app (and what it started). */
  expire(phase: string): void;
  /** The phase the run timed out in, if it did. */
  readonly timedOutIn: string | undefined;
  /** Whether the fleet program has said it validated the fleet and is writing its files. */
  readonly writing: boolean;
}

/** The fleet program's own line that starts its writing (see Fleet.synth in src/constructs/fleet.ts). */
const WRITING_STARTS = /(?:^|\n)pullfleet: validated /;

/**
 * Runs the fleet program into `dir` ({@link fleetProgramCommand}) without blocking: the caller type-checks
 * while it runs. With `streamStderr`, the app's stderr is held back until {@link RunningSynth.settle}, so a
 * type error is not buried under the app's own failure. With `timeout`, the app is stopped once that many seconds
 * have passed since `started`; with `progress`, its phase moves to "writing the output" when the app
 * says it has validated the fleet.
 */
function startSynth(
  dir: string,
  options: SynthOptions & { cwd: string; previousOutput?: string; started?: number; timingsFile?: string },
): RunningSynth {
  const chunks: string[] = [];
  const held: string[] = [];
  let stderrMode: 'hold' | 'stream' | 'drop' = options.streamStderr ? 'hold' : 'stream';
  const progress = options.progress;
  const streamed = new CliNoiseFilter((text) => (progress ? progress.write(text) : process.stderr.write(text)));
  // Its own process group, so that stopping it also stops the app cdk8s started.
  // The app reads the previous output's plan state (moves between delivery models go step by step from it).
  const program = fleetProgramCommand(dir, options.cwd, options.app);
  // The fleet program learns that a pullfleet command runs it (see src/constructs/_cli-session.ts), which
  // file it is (named in generated files).
  const fleetFile = options.app ? configFileOf(options.app, options.cwd) : undefined;
  const base = {
    ...process.env,
    [CLI_ENV]: '1',
    ...(fleetFile ? { [FLEET_FILE_ENV]: path.relative(options.cwd, fleetFile).split(path.sep).join('/') } : {}),
    ...(options.previousOutput ? { [PREVIOUS_OUTPUT_ENV]: options.previousOutput } : {}),
    ...(options.timingsFile ? { [TIMINGS_FILE_ENV]: options.timingsFile } : {}),
  };
  const env = fleetProgramEnv(options.app, options.cwd, base);
  const child = spawn(program.command, program.args, {
    cwd: options.cwd,
    // What `cdk8s synth` sets for the app it runs (metadata for validation plugins, which only it runs).
    env: program.direct
      ? {
          ...env,
          CDK8S_OUTDIR: dir,
          CDK8S_RECORD_CONSTRUCT_METADATA: env.CDK8S_RECORD_CONSTRUCT_METADATA ?? 'false',
        }
      : env,
    shell: program.shell,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => chunks.push(chunk));
  // The fleet program starts writing once it has validated the fleet: the phase shown moves on then, but
  // not before the type-check has passed (a failed one ends the synth before anything is written).
  let writingSeen = false;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (progress && !writingSeen && WRITING_STARTS.test(chunk)) {
      writingSeen = true;
      if (stderrMode === 'stream') progress.enter(PHASE.writing);
    }
    if (!options.streamStderr) chunks.push(chunk);
    else if (stderrMode === 'hold') held.push(chunk);
    else if (stderrMode === 'stream') streamed.write(chunk);
  });
  let exited = false;
  let killer: NodeJS.Timeout | undefined;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
  const stop = () => {
    if (exited || killer) return;
    signalGroup('SIGTERM');
    // An app that ignores SIGTERM is killed; cdk8s may be gone already, its app not.
    killer = setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS);
  };
  let timedOutIn: string | undefined;
  const expire = (phase: string) => {
    timedOutIn ??= phase;
    stop();
  };
  let deadline: NodeJS.Timeout | undefined;
  if (options.timeout !== undefined && options.timeout > 0) {
    const left = (options.started ?? Date.now()) + options.timeout * 1000 - Date.now();
    deadline = setTimeout(() => expire(progress?.phase ?? PHASE.program), Math.max(0, left));
  }
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stop();
  const done = new Promise<{ ok: boolean; output: string; exited: number }>((resolve) => {
    child.on('error', (error) =>
      resolve({ ok: false, output: `${chunks.join('')}${String(error)}`, exited: performance.now() }),
    );
    child.on('close', (code) => {
      const exitedAt = performance.now();
      exited = true;
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', stop);
      streamed.flush();
      // cdk8s is gone; whatever it started goes with it (a group kill reaches an app that kept running).
      if (killer) {
        clearTimeout(killer);
        signalGroup('SIGKILL');
      }
      const made = fs.existsSync(dir);
      // `cdk8s synth` says this itself; run directly, the app's silence is put into words here.
      if (code === 0 && !made && program.direct)
        chunks.push(
          `the fleet app (${program.command}) exited without writing its output folder ${dir} (CDK8S_OUTDIR): declare at least one Hub, and leave Fleet's outdir unset\n`,
        );
      resolve({
        ok: code === 0 && made && !options.signal?.aborted && timedOutIn === undefined,
        output: chunks.join(''),
        exited: exitedAt,
      });
    });
  });
  return {
    done,
    settle(typesOk) {
      if (!typesOk) stop();
      if (!options.streamStderr) return;
      stderrMode = typesOk ? 'stream' : 'drop';
      if (typesOk) streamed.write(held.join(''));
      held.length = 0;
    },
    expire,
    get timedOutIn() {
      return timedOutIn;
    },
    get writing() {
      return writingSeen;
    },
  };
}

/**
 * What a command prints when its time ran out: the phase it was in, that the fleet program was
 * stopped, what was left as it was, and what to do.
 */
export function timeoutMessage(
  command: string,
  seconds: number,
  phase: string,
  app: string | undefined,
  left?: string,
): string {
  const what =
    phase === PHASE.typecheck
      ? 'the type-check of the fleet description did not finish'
      : phase === PHASE.writing
        ? 'the fleet program did not finish writing its files'
        : `the fleet program${app ? ` (${app})` : ''} did not return`;
  return (
    `pullfleet ${command}: timed out after ${seconds} s in the phase "${phase}": ${what}; it was stopped${left ? ` and ${left}` : ''}. ` +
    'Look for what keeps the fleet program from ending (an await that never settles, an open server, socket or timer), ' +
    'or allow more time with --timeout <seconds>\n'
  );
}

/** The options of a fleet program run for validate and plan: into `dir`, stdout and stderr captured. */
export interface FleetRunOptions {
  readonly cwd: string;
  readonly app?: string;
  readonly previousOutput?: string;
  readonly timeout?: number;
  /** When the command started (the timeout counts from there). @default - now */
  readonly started?: number;
  readonly progress?: Progress;
}

/**
 * Runs the fleet program into `dir` (through {@link startSynth}), stopping it (and what it
 * started) when `timeout` seconds have passed since `started`. `timedOutIn` names the phase then.
 */
export async function runFleetProgram(
  dir: string,
  options: FleetRunOptions,
): Promise<{ ok: boolean; output: string; timedOutIn?: string }> {
  options.progress?.enter(PHASE.program);
  const run = startSynth(dir, { ...options, streamStderr: false });
  const { ok, output } = await run.done;
  return run.timedOutIn === undefined ? { ok, output } : { ok: false, output, timedOutIn: run.timedOutIn };
}

/** Parses `--timeout <seconds>` of synth, validate and plan: a number of seconds (0 turns the limit off). */
export function parseTimeout(value: string): number {
  return secondsOption({ flag: '--timeout', example: DEFAULT_TIMEOUT_SECONDS, zero: 'no limit' })(value);
}

/** The output folder synth writes: `outdir`, else `output` of cdk8s.yaml, else dist (absolute). */
export function resolveOutdir(cwd: string, outdir: string | undefined): string {
  return path.resolve(cwd, outdir ?? readCdk8sConfig(cwd).output ?? 'dist');
}

/**
 * Synthesizes into a staging folder and replaces the output folder only when the output folder may
 * be replaced, the fleet type-checks and synthesizes, and every folder involved is writable.
 * Rejects only with a {@link SwapRestoreError} (the previous output could not be put back; the
 * message says where it is) or an unexpected filesystem error before anything was swapped.
 */
export async function runSynth(options: SynthOptions = {}): Promise<SynthResult> {
  const started = Date.now();
  const startedAt = performance.now();
  const cwd = options.cwd ?? process.cwd();
  let outdir: string;
  let app: string | undefined;
  try {
    outdir = resolveOutdir(cwd, options.outdir);
    app = options.app ?? readCdk8sConfig(cwd).app;
  } catch (error) {
    return {
      ok: false,
      outdir: path.resolve(cwd, options.outdir ?? 'dist'),
      output: `${(error as Error).message}\n`,
      notes: [],
    };
  }
  const refuse = (output: string, notes: string[] = [], typecheck?: TypecheckResult): SynthResult => ({
    ok: false,
    outdir,
    output,
    notes,
    typecheck,
  });
  const folderProblem = outputFolderProblem(outdir, cwd);
  if (folderProblem) return refuse(`${folderProblem}\n`);
  // Moves between delivery models are judged against the committed plan state (by default the output's own).
  const planState = options.planState !== undefined ? path.resolve(cwd, options.planState) : outdir;
  if (options.planState !== undefined && !fs.existsSync(planState)) {
    return refuse(
      `--plan-state ${options.planState} does not exist: name the committed output folder (dist) or one of its <hub>/plan-state.json files\n`,
    );
  }
  const ops = swapFs(options.fs);
  const parent = path.dirname(outdir);
  // Folders made here for a new output (-o new/out) are removed again when synth does not succeed.
  let created: string | undefined;
  try {
    created = fs.mkdirSync(parent, { recursive: true });
  } catch (error) {
    return refuse(`${cannotWriteProblem(outdir, cwd, error)}\n`);
  }
  let succeeded = false;
  const notes = cleanLeftovers(outdir, cwd, ops);
  const writeProblem = writabilityProblem(outdir, cwd, ops);
  if (writeProblem) {
    removeEmptyFolders(parent, created);
    return refuse(`${writeProblem}\n`, notes);
  }

  let staging: string;
  try {
    staging = makeStaging(outdir);
  } catch (error) {
    removeEmptyFolders(parent, created);
    return refuse(`${cannotWriteProblem(outdir, cwd, error)}\n`, notes);
  }
  const progress = options.progress;
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_SECONDS;
  const timingsFile = options.verbose
    ? path.join(os.tmpdir(), `pullfleet-timings-${process.pid}-${path.basename(staging)}.json`)
    : undefined;
  try {
    const checking = options.typecheck !== false && app !== undefined && runsTypeScript(app, cwd);
    progress?.enter(checking ? PHASE.typecheck : PHASE.program);
    const spawnedAt = performance.now();
    const synth = startSynth(staging, {
      ...options,
      cwd,
      app,
      previousOutput: planState,
      timeout,
      started,
      timingsFile,
    });
    let typecheck: TypecheckResult | undefined;
    let typecheckError: string | undefined;
    try {
      typecheck = checking && app !== undefined ? typecheckApp(app, cwd) : undefined;
    } catch (error) {
      typecheckError = `type-check failed: ${(error as Error).message}\n`;
    }
    // The check runs in this process: a deadline that passed meanwhile is noticed only now.
    if (timeout > 0 && Date.now() - started > timeout * 1000) synth.expire(PHASE.typecheck);
    const typesOk = !typecheckError && !(typecheck && typecheck.errors.length > 0);
    synth.settle(typesOk);
    if (typesOk) progress?.enter(PHASE.program);
    if (typesOk && synth.writing) progress?.enter(PHASE.writing);
    const result = await synth.done;
    if (options.signal?.aborted) return refuse('synth was interrupted\n', notes, typecheck);
    // The command adds that the output folder was left as it was.
    if (synth.timedOutIn !== undefined)
      return refuse(timeoutMessage('synth', timeout, synth.timedOutIn, app), notes, typecheck);
    if (typecheckError) return refuse(typecheckError, notes);
    if (typecheck && typecheck.errors.length > 0) return refuse(formatTypeErrors(typecheck, cwd), notes, typecheck);
    if (!result.ok) return refuse(result.output, notes, typecheck);
    if (
      !(fs.readdirSync(staging, { recursive: true }) as string[]).some((rel) =>
        fs.statSync(path.join(staging, rel)).isFile(),
      )
    ) {
      // Swapping in an empty folder would delete the previous output.
      return refuse(
        `${result.output}the fleet app wrote no files into the folder cdk8s gave it (CDK8S_OUTDIR), so the output folder was left as it was: declare at least one Hub, and leave Fleet's outdir unset\n`,
        notes,
        typecheck,
      );
    }
    progress?.enter(PHASE.writing);
    writeManifest(staging);
    try {
      const note = swapIn(staging, outdir, ops);
      if (note) notes.push(note);
    } catch (error) {
      if (error instanceof SwapRestoreError) throw error;
      return refuse(
        `${result.output}could not move the new output into place (${(error as Error).message})\n`,
        notes,
        typecheck,
      );
    }
    succeeded = true;
    const finishedAt = performance.now();
    const timings: SynthTimingReport | undefined = options.verbose
      ? {
          prepare: spawnedAt - startedAt,
          program: result.exited - spawnedAt,
          fleet: readProgramTimings(timingsFile),
          typecheck: typecheck?.ms,
          typecheckCached: typecheck?.cached === true,
          swap: finishedAt - result.exited,
          total: finishedAt - startedAt,
        }
      : undefined;
    return { ok: true, outdir, output: result.output, notes, typecheck, ...(timings ? { timings } : {}) };
  } finally {
    if (timingsFile) fs.rmSync(timingsFile, { force: true });
    fs.rmSync(staging, { recursive: true, force: true });
    if (!succeeded) removeEmptyFolders(parent, created);
  }
}

/** Removes `dir` and its parents up to `created` (the first folder mkdir made), as long as they are empty. */
function removeEmptyFolders(dir: string, created: string | undefined): void {
  if (!created) return;
  for (let at = dir; at.startsWith(created); at = path.dirname(at)) {
    try {
      fs.rmdirSync(at); // fails on a folder that is not empty, which then stays with its parents
    } catch {
      return;
    }
    if (at === created) return;
  }
}

/**
 * Where the time of a synth went, for `--verbose`: one line per part, in seconds. `cliStart` is the time
 * from the start of the process to the command (node, tsx and the CLI's modules).
 */
export function formatTimings(report: SynthTimingReport, cliStart: number): string {
  const lines: Array<[string, number, string?]> = [['pullfleet start (node, tsx, the CLI)', cliStart]];
  lines.push(['output folder checks, staging folder', report.prepare]);
  lines.push(['fleet program (its own process)', report.program]);
  const fleet = report.fleet;
  if (fleet) {
    const parts: Array<[string, number]> = [
      ['  start (node, tsx, loading pullfleet and cdk8s)', fleet.start],
      ['  construct tree (the fleet description)', fleet.constructs],
      ['  render (late objects, provenance)', fleet.render],
      ['  JSON of every object (cdk8s resolve)', fleet.json],
      ['  validation (schemas, rules, the whole fleet)', fleet.validate],
      ['  YAML', fleet.yaml],
      ['  write', fleet.write],
    ];
    const inside = parts.reduce((sum, [, ms]) => sum + ms, 0);
    lines.push(...parts, ['  process start and exit, the rest', Math.max(0, report.program - inside)]);
  }
  if (report.typecheck !== undefined)
    lines.push([
      'type-check (beside the fleet program)',
      report.typecheck,
      report.typecheckCached ? 'nothing changed since the last clean check' : undefined,
    ]);
  lines.push(['manifest and swap into the output folder', report.swap]);
  lines.push(['total', cliStart + report.total]);
  const width = Math.max(...lines.map(([label]) => label.length));
  const counted = fleet ? ` (${fleet.objects} objects, ${fleet.files} files)` : '';
  return (
    `pullfleet synth: where the time went, in seconds${counted}\n` +
    lines
      .map(
        ([label, ms, note]) =>
          `  ${label.padEnd(width)}  ${(ms / 1000).toFixed(2).padStart(6)}${note ? `  (${note})` : ''}`,
      )
      .join('\n') +
    '\n'
  );
}

export function registerSynth(program: Command): void {
  program
    .command('synth')
    .description(
      'type-check and synthesize the fleet into dist/ (a refused or failed synth leaves the previous dist/ as it was)',
    )
    .option('-o, --output <dir>', 'output folder (default: output of cdk8s.yaml, else dist)')
    .option('-a, --app <command>', 'command that runs the cdk8s app (default: cdk8s.yaml)')
    .option('--strict', 'treat warnings as errors')
    .option(
      '--timeout <seconds>',
      'stop the type-check and the fleet program after this long, leaving the output folder as it was (0: no limit)',
      parseTimeout,
      DEFAULT_TIMEOUT_SECONDS,
    )
    .option(
      '--plan-state <dir or file>',
      'the committed plan state moves between delivery models are judged against: an output folder or a <hub>/plan-state.json (default: the output folder)',
    )
    .option(
      '--verbose',
      'show where the time went: start-up, type-check, construct tree, validation, YAML, writing, swap',
    )
    .action(
      async (opts: {
        output?: string;
        app?: string;
        strict?: boolean;
        timeout: number;
        planState?: string;
        verbose?: boolean;
      }) => {
        const cliStart = performance.now();
        if (opts.strict) process.env[STRICT_ENV] = '1';
        const started = Date.now();
        let result: SynthResult;
        const progress = new Progress('pullfleet synth');
        // Ctrl-C or a SIGTERM stops the app; synth then removes its staging folder and leaves the output as it was.
        const interrupt = new AbortController();
        const onSignal = () => interrupt.abort();
        process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
        try {
          result = await runSynth({
            outdir: opts.output,
            app: opts.app,
            streamStderr: true,
            signal: interrupt.signal,
            timeout: opts.timeout,
            progress,
            planState: opts.planState,
            verbose: opts.verbose === true,
          });
        } catch (error) {
          progress.stop();
          // Everything runSynth does before the swap leaves the output alone, and the swap puts it back or says where it is.
          process.stderr.write(`pullfleet synth failed: ${(error as Error).message}\n`);
          process.exitCode = 1;
          return;
        } finally {
          process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        }
        progress.stop();
        for (const note of result.notes) process.stderr.write(`pullfleet: ${note}\n`);
        const relative = path.relative(process.cwd(), result.outdir);
        const where = relative === '' ? '.' : relative.startsWith('..') ? result.outdir : relative;
        if (!result.ok) {
          process.stderr.write(withoutCliNoise(result.output));
          process.stderr.write(`\npullfleet synth failed: ${where} was left as it was\n`);
          process.exitCode = interrupt.signal.aborted ? 130 : 1;
          return;
        }
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        const checked = result.typecheck
          ? `, type-checked ${path.relative(process.cwd(), result.typecheck.file)} in ${(result.typecheck.ms / 1000).toFixed(1)} s`
          : '';
        process.stdout.write(`synthesized into ${where} in ${seconds} s${checked}\n`);
        if (result.timings) process.stderr.write(formatTimings(result.timings, cliStart));
      },
    );
}
