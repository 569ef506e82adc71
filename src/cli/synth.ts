/**
 * `pullfleet synth`: runs `cdk8s synth` into a staging folder beside the output folder and only on
 * success swaps it in, so a failed synth (bad fleet config, crash) leaves the previous dist/ untouched.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { Command } from 'commander';

export interface SynthOptions {
  /** Project folder holding cdk8s.yaml. @default process.cwd() */
  readonly cwd?: string;
  /** Output folder, relative to cwd. @default 'dist' */
  readonly outdir?: string;
  /** Command that runs the cdk8s app. @default - the `app` of cdk8s.yaml */
  readonly app?: string;
  /** Pass the app's stderr (progress, validation problems) straight through instead of capturing it. @default false */
  readonly streamStderr?: boolean;
}

export interface SynthResult {
  readonly ok: boolean;
  /** Absolute output folder. */
  readonly outdir: string;
  /** What cdk8s printed (stdout and stderr). */
  readonly output: string;
}

/** Absolute path of the cdk8s CLI installed with pullfleet. */
export function cdk8sCli(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('cdk8s-cli/package.json');
  return path.join(path.dirname(pkg), 'bin', 'cdk8s');
}

/** Runs `cdk8s synth --no-check-upgrade -o <dir>`; returns whether it succeeded and what it printed. */
export function synthInto(dir: string, options: SynthOptions = {}): { ok: boolean; output: string } {
  const args = [cdk8sCli(), 'synth', '--no-check-upgrade', '-o', dir];
  if (options.app) args.push('--app', options.app);
  const run = spawnSync(process.execPath, args, {
    cwd: options.cwd ?? process.cwd(),
    encoding: 'utf8',
    env: process.env,
    stdio: ['ignore', 'pipe', options.streamStderr ? 'inherit' : 'pipe'],
  });
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}${run.error ? String(run.error) : ''}`;
  const ok = run.status === 0 && fs.existsSync(dir);
  return { ok, output };
}

/** Synthesizes into a staging folder and atomically replaces the output folder only on success. */
export function runSynth(options: SynthOptions = {}): SynthResult {
  const cwd = options.cwd ?? process.cwd();
  const outdir = path.resolve(cwd, options.outdir ?? 'dist');
  const parent = path.dirname(outdir);
  fs.mkdirSync(parent, { recursive: true });
  const staging = fs.mkdtempSync(path.join(parent, `.${path.basename(outdir)}.staging-`));
  const result = synthInto(staging, { ...options, cwd });
  if (!result.ok) {
    fs.rmSync(staging, { recursive: true, force: true });
    return { ok: false, outdir, output: result.output };
  }
  const old = `${staging}.previous`;
  const hadPrevious = fs.existsSync(outdir);
  if (hadPrevious) fs.renameSync(outdir, old);
  try {
    fs.renameSync(staging, outdir);
  } catch (error) {
    if (hadPrevious) fs.renameSync(old, outdir);
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  if (hadPrevious) fs.rmSync(old, { recursive: true, force: true });
  return { ok: true, outdir, output: result.output };
}

export function registerSynth(program: Command): void {
  program
    .command('synth')
    .description('synthesize the fleet into dist/ (a failed synth leaves the previous dist/ untouched)')
    .option('-o, --output <dir>', 'output folder', 'dist')
    .option('-a, --app <command>', 'command that runs the cdk8s app (default: cdk8s.yaml)')
    .option('--strict', 'treat warnings as errors')
    .action((opts: { output: string; app?: string; strict?: boolean }) => {
      if (opts.strict) process.env.PULLFLEET_STRICT = '1';
      const started = Date.now();
      const result = runSynth({ outdir: opts.output, app: opts.app, streamStderr: true });
      if (!result.ok) {
        process.stderr.write(result.output);
        process.stderr.write(`\npullfleet synth failed: ${path.relative(process.cwd(), result.outdir) || result.outdir} was left as it was\n`);
        process.exitCode = 1;
        return;
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`synthesized into ${path.relative(process.cwd(), result.outdir) || result.outdir} in ${seconds} s\n`);
    });
}
