/**
 * `pullfleet synth`: checks that the output folder may be replaced, type-checks the fleet description
 * while `cdk8s synth` runs it into a staging folder beside the output folder, and only when both
 * succeed (and every folder involved is writable) swaps the staging folder in. A refused or failed
 * synth leaves the previous output exactly as it was.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { Command } from 'commander';
import { readCdk8sConfig } from './cdk8s-config.js';
import { cleanLeftovers, makeStaging, outputFolderProblem, SwapRestoreError, swapFs, swapIn, writabilityProblem, writeManifest, type SwapFs } from './output-folder.js';
import { formatTypeErrors, typecheckApp, type TypecheckResult } from './typecheck.js';

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
}

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

/** Runs `cdk8s synth --no-check-upgrade -o <dir>`; returns whether it succeeded and what it printed. */
export function synthInto(dir: string, options: SynthOptions & { previousOutput?: string } = {}): { ok: boolean; output: string } {
  const run = spawnSync(process.execPath, synthArgs(dir, options.app), {
    cwd: options.cwd ?? process.cwd(),
    encoding: 'utf8',
    env: options.previousOutput ? { ...process.env, PULLFLEET_PREVIOUS_OUTPUT: options.previousOutput } : process.env,
    stdio: ['ignore', 'pipe', options.streamStderr ? 'inherit' : 'pipe'],
  });
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}${run.error ? String(run.error) : ''}`;
  const ok = run.status === 0 && fs.existsSync(dir);
  return { ok, output };
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
  /** Resolves when cdk8s has exited. */
  readonly done: Promise<{ ok: boolean; output: string }>;
  /** After the type-check: passed, show what the app printed so far and stream the rest; failed, stop the app and drop its output. */
  settle(typesOk: boolean): void;
}

/**
 * Like {@link synthInto}, without blocking: the caller type-checks while cdk8s runs. With
 * `streamStderr`, the app's stderr is held back until {@link RunningSynth.settle}, so a type error is
 * not buried under the app's own failure.
 */
function startSynth(dir: string, options: SynthOptions & { cwd: string; previousOutput?: string }): RunningSynth {
  const chunks: string[] = [];
  const held: string[] = [];
  let stderrMode: 'hold' | 'stream' | 'drop' = 'hold';
  const streamed = new CliNoiseFilter((text) => process.stderr.write(text));
  // Its own process group, so that stopping it also stops the app cdk8s started.
  // The app reads the previous output's plan state (moves between delivery models go step by step from it).
  const env = options.previousOutput ? { ...process.env, PULLFLEET_PREVIOUS_OUTPUT: options.previousOutput } : process.env;
  const child = spawn(process.execPath, synthArgs(dir, options.app), { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => chunks.push(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (!options.streamStderr) chunks.push(chunk);
    else if (stderrMode === 'hold') held.push(chunk);
    else if (stderrMode === 'stream') streamed.write(chunk);
  });
  const stop = () => {
    try {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    } catch {
      child.kill();
    }
  };
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stop();
  const done = new Promise<{ ok: boolean; output: string }>((resolve) => {
    child.on('error', (error) => resolve({ ok: false, output: `${chunks.join('')}${String(error)}` }));
    child.on('close', (code) => {
      options.signal?.removeEventListener('abort', stop);
      streamed.flush();
      resolve({ ok: code === 0 && fs.existsSync(dir) && !options.signal?.aborted, output: chunks.join('') });
    });
  });
  return {
    done,
    settle(typesOk) {
      stderrMode = typesOk ? 'stream' : 'drop';
      if (typesOk) streamed.write(held.join(''));
      else stop();
      held.length = 0;
    },
  };
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
  const cwd = options.cwd ?? process.cwd();
  let outdir: string;
  let app: string | undefined;
  try {
    outdir = resolveOutdir(cwd, options.outdir);
    app = options.app ?? readCdk8sConfig(cwd).app;
  } catch (error) {
    return { ok: false, outdir: path.resolve(cwd, options.outdir ?? 'dist'), output: `${(error as Error).message}\n`, notes: [] };
  }
  const refuse = (output: string, notes: string[] = [], typecheck?: TypecheckResult): SynthResult => ({ ok: false, outdir, output, notes, typecheck });
  const folderProblem = outputFolderProblem(outdir, cwd);
  if (folderProblem) return refuse(`${folderProblem}\n`);
  const ops = swapFs(options.fs);
  const parent = path.dirname(outdir);
  // Folders made here for a new output (-o new/out) are removed again when synth does not succeed.
  const created = fs.mkdirSync(parent, { recursive: true });
  let succeeded = false;
  const notes = cleanLeftovers(outdir, cwd, ops);
  const writeProblem = writabilityProblem(outdir, cwd, ops);
  if (writeProblem) {
    removeEmptyFolders(parent, created);
    return refuse(`${writeProblem}\n`, notes);
  }

  const staging = makeStaging(outdir);
  try {
    const synth = startSynth(staging, { ...options, cwd, app, previousOutput: outdir });
    let typecheck: TypecheckResult | undefined;
    let typecheckError: string | undefined;
    try {
      typecheck = options.typecheck === false || !app ? undefined : typecheckApp(app, cwd);
    } catch (error) {
      typecheckError = `type-check failed: ${(error as Error).message}\n`;
    }
    synth.settle(!typecheckError && !(typecheck && typecheck.errors.length > 0));
    const result = await synth.done;
    if (options.signal?.aborted) return refuse('synth was interrupted\n', notes, typecheck);
    if (typecheckError) return refuse(typecheckError, notes);
    if (typecheck && typecheck.errors.length > 0) return refuse(formatTypeErrors(typecheck, cwd), notes, typecheck);
    if (!result.ok) return refuse(result.output, notes, typecheck);
    if (!(fs.readdirSync(staging, { recursive: true }) as string[]).some((rel) => fs.statSync(path.join(staging, rel)).isFile())) {
      // Swapping in an empty folder would delete the previous output.
      return refuse(
        `${result.output}the fleet app wrote no files into the folder cdk8s gave it (CDK8S_OUTDIR), so the output folder was left as it was: declare at least one Hub, and leave Fleet's outdir unset\n`,
        notes,
        typecheck,
      );
    }
    writeManifest(staging);
    try {
      const note = swapIn(staging, outdir, ops);
      if (note) notes.push(note);
    } catch (error) {
      if (error instanceof SwapRestoreError) throw error;
      return refuse(`${result.output}could not move the new output into place (${(error as Error).message})\n`, notes, typecheck);
    }
    succeeded = true;
    return { ok: true, outdir, output: result.output, notes, typecheck };
  } finally {
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

export function registerSynth(program: Command): void {
  program
    .command('synth')
    .description('type-check and synthesize the fleet into dist/ (a refused or failed synth leaves the previous dist/ as it was)')
    .option('-o, --output <dir>', 'output folder (default: output of cdk8s.yaml, else dist)')
    .option('-a, --app <command>', 'command that runs the cdk8s app (default: cdk8s.yaml)')
    .option('--strict', 'treat warnings as errors')
    .action(async (opts: { output?: string; app?: string; strict?: boolean }) => {
      if (opts.strict) process.env.PULLFLEET_STRICT = '1';
      const started = Date.now();
      let result: SynthResult;
      // Ctrl-C or a SIGTERM stops the app; synth then removes its staging folder and leaves the output as it was.
      const interrupt = new AbortController();
      const onSignal = () => interrupt.abort();
      process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
      try {
        result = await runSynth({ outdir: opts.output, app: opts.app, streamStderr: true, signal: interrupt.signal });
      } catch (error) {
        // Everything runSynth does before the swap leaves the output alone, and the swap puts it back or says where it is.
        process.stderr.write(`pullfleet synth failed: ${(error as Error).message}\n`);
        process.exitCode = 1;
        return;
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      }
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
      const checked = result.typecheck ? `, type-checked ${path.relative(process.cwd(), result.typecheck.file)} in ${(result.typecheck.ms / 1000).toFixed(1)} s` : '';
      process.stdout.write(`synthesized into ${where} in ${seconds} s${checked}\n`);
    });
}
