/**
 * `pullfleet validate [dir]`: without a folder, synthesizes the fleet into a scratch folder (dist/ is
 * never touched) and reports every error and warning with its construct path; with a folder, checks
 * every YAML document under it (a hand-written folder, or a dist/ from another tool) with the same
 * schema and policy rules. Exit 0 when valid, 1 on errors (and on warnings with --strict), 2 on a
 * usage error.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { REPORT_FILE_ENV, STRICT_ENV } from '../../constructs/synth-env.js';
import { ETCD_OBJECT_LIMIT, type PlainObject } from '../../model/validation/object-rules.js';
import { counted } from '../../model/core/words.js';
import { collapseProblems, countedPaths, DEFAULT_WORK_SIZE_BUDGET } from '../../model/validation/rules.js';
import { checkObject, objectLabel } from '../../validate/schema.js';
import {
  DEFAULT_TIMEOUT_SECONDS,
  parseTimeout,
  PHASE,
  resolveOutdir,
  runFleetProgram,
  timeoutMessage,
  withoutCliNoise,
} from './synth.js';
import { readCdk8sConfig } from '../support/cdk8s-config.js';
import { Progress } from '../support/progress.js';
import { formatTypeErrors, runsTypeScript, typecheckApp, type TypecheckResult } from '../support/typecheck.js';

/** One finding of `validate`: where (a file, or a construct path) and what. */
export interface ValidateFinding {
  /** File relative to the checked folder (folder mode). */
  readonly file?: string;
  /** Construct path (fleet mode). */
  readonly path?: string;
  readonly message: string;
}

export interface ValidateReport {
  /** True when there is no error (and, with strict, no warning). */
  readonly ok: boolean;
  readonly strict: boolean;
  readonly errors: ValidateFinding[];
  readonly warnings: ValidateFinding[];
  /** Objects checked (folder mode). */
  readonly objects?: number;
  /** YAML files read (folder mode). */
  readonly files?: number;
}

/** A usage error: exit 2. */
export class UsageError extends Error {}

function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string) => {
    for (const entry of fs
      .readdirSync(path.join(dir, sub), { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && entry.name !== 'node_modules') walk(rel);
      } else if (entry.isFile() && /\.ya?ml$/.test(entry.name)) out.push(rel);
    }
  };
  walk('');
  return out;
}

/** Which cluster applies a file: bootstrap files each go to their own spoke, the rest to their hub folder. */
function targetOf(file: string): string {
  return /(^|\/)bootstrap\//.test(file) ? file : (file.split('/')[0] ?? '');
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Checks every YAML document under `dir` with the schema and policy rules synth applies. */
export function validateFolder(dir: string, options: { strict?: boolean; sizeBudget?: number } = {}): ValidateReport {
  if (!fs.existsSync(dir))
    throw new UsageError(`${dir} does not exist: give a folder of YAML files (or no folder to validate the fleet)`);
  if (!fs.statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a folder: give a folder of YAML files`);
  const strict = options.strict ?? false;
  const sizeBudget = options.sizeBudget ?? DEFAULT_WORK_SIZE_BUDGET;
  const errors: ValidateFinding[] = [];
  const warnings: ValidateFinding[] = [];
  const seen = new Map<string, string>();
  const files = yamlFiles(dir);
  let objects = 0;
  for (const file of files) {
    const docs = parseAllDocuments(fs.readFileSync(path.join(dir, file), 'utf8'));
    const list = Array.isArray(docs) ? docs : [docs];
    list.forEach((doc, index) => {
      if (doc.errors.length > 0) {
        errors.push({
          file,
          message: `document ${index + 1} is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`,
        });
        return;
      }
      const obj = doc.toJS() as unknown;
      if (obj === null || obj === undefined) return;
      if (typeof obj !== 'object' || Array.isArray(obj)) {
        errors.push({
          file,
          message: `document ${index + 1} is not a Kubernetes object (a ${Array.isArray(obj) ? 'list' : typeof obj}): give each document apiVersion, kind and metadata`,
        });
        return;
      }
      objects++;
      const plain = obj as PlainObject;
      for (const f of checkObject(plain, { sizeBudget }))
        (f.severity === 'error' ? errors : warnings).push({ file, message: f.message });
      const meta = (plain.metadata ?? {}) as { name?: unknown; namespace?: unknown };
      if (typeof plain.apiVersion === 'string' && typeof plain.kind === 'string' && typeof meta.name === 'string') {
        const key = `${targetOf(file)}|${groupOf(plain.apiVersion)}|${plain.kind}|${String(meta.namespace ?? '')}|${meta.name}`;
        const first = seen.get(key);
        if (first)
          errors.push({
            file,
            message: `${objectLabel(plain)} is also defined in ${first}: the same cluster would apply both; keep one`,
          });
        else seen.set(key, file);
      }
    });
  }
  if (objects === 0)
    errors.push({
      file: '.',
      message: `no Kubernetes objects found under ${dir}: give the folder synth wrote (for example dist/)`,
    });
  const ok = errors.length === 0 && (!strict || warnings.length === 0);
  return { ok, strict, errors, warnings, objects, files: files.length };
}

/** A scratch folder and the environment that makes the fleet program write its findings there; `restore` undoes both. */
function validationScratch(strict: boolean | undefined): { scratch: string; reportFile: string; restore: () => void } {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-validate-'));
  const reportFile = path.join(scratch, 'report.json');
  const saved = { report: process.env[REPORT_FILE_ENV], strict: process.env[STRICT_ENV] };
  process.env[REPORT_FILE_ENV] = reportFile;
  if (strict) process.env[STRICT_ENV] = '1';
  const restore = () => {
    if (saved.report === undefined) delete process.env[REPORT_FILE_ENV];
    else process.env[REPORT_FILE_ENV] = saved.report;
    if (saved.strict === undefined) delete process.env[STRICT_ENV];
    else process.env[STRICT_ENV] = saved.strict;
    fs.rmSync(scratch, { recursive: true, force: true });
  };
  return { scratch, reportFile, restore };
}

/** The findings the fleet program wrote to `reportFile`, or only its output when it wrote none. */
function readFindings(
  reportFile: string,
  result: { ok: boolean; output: string },
): { report?: ValidateReport; output: string } {
  if (!fs.existsSync(reportFile)) return { output: result.output };
  const raw = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as {
    strict: boolean;
    errors: ValidateFinding[];
    warnings: ValidateFinding[];
  };
  const strict = raw.strict;
  // The program found nothing wrong but the run still failed (it wrote its output somewhere else, or
  // failed after validating): that failure is the error, in the program's own words.
  const explained = raw.errors.length > 0 || (strict && raw.warnings.length > 0);
  const failure = !result.ok && !explained ? [{ message: runFailure(result.output) }] : [];
  const errors = [...raw.errors, ...failure];
  const ok = errors.length === 0 && (!strict || raw.warnings.length === 0) && result.ok;
  return { report: { ok, strict, errors, warnings: raw.warnings }, output: result.output };
}

/** What a failed fleet run said, without the progress lines of the fleet program and the CLI. */
function runFailure(output: string): string {
  const said = withoutCliNoise(output)
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('pullfleet: '))
    .join('\n')
    .trim();
  return (
    said ||
    'the fleet program failed after validating, and said nothing about why: run pullfleet synth to see its output'
  );
}

/**
 * Synthesizes the fleet into a scratch folder and returns its findings (or the synth output when it
 * crashed). The committed output (`outdir`, else cdk8s.yaml's `output`, else dist) is the previous
 * output, as for `pullfleet synth`: a move between delivery models that skips a step is an error here too.
 * The fleet program is stopped once `timeout` seconds have passed since `started`; `timedOutIn` then
 * names the phase it was in.
 */
export async function validateFleet(
  options: {
    cwd?: string;
    app?: string;
    strict?: boolean;
    outdir?: string;
    timeout?: number;
    started?: number;
    progress?: Progress;
  } = {},
): Promise<{ report?: ValidateReport; output: string; timedOutIn?: string }> {
  const { scratch, reportFile, restore } = validationScratch(options.strict);
  try {
    const cwd = options.cwd ?? process.cwd();
    const previous = resolveOutdir(cwd, options.outdir);
    const result = await runFleetProgram(path.join(scratch, 'out'), {
      cwd,
      app: options.app,
      ...(fs.existsSync(previous) ? { previousOutput: previous } : {}),
      timeout: options.timeout ?? DEFAULT_TIMEOUT_SECONDS,
      started: options.started,
      progress: options.progress,
    });
    if (result.timedOutIn !== undefined) return { output: result.output, timedOutIn: result.timedOutIn };
    return readFindings(reportFile, result);
  } finally {
    restore();
  }
}

function where(f: ValidateFinding): string {
  if (f.file !== undefined) return f.file;
  return f.path !== undefined ? `[${f.path}]` : '';
}

/**
 * One line per message: `<where> <message>` when it was found once, else the message with the count
 * and the first construct paths (or files) it was found at, in the order found.
 */
function findingLines(findings: readonly ValidateFinding[]): string[] {
  const byWhere = new Map<string, ValidateFinding>();
  const located = findings.map((f) => {
    const at = f.file ?? f.path ?? '';
    if (!byWhere.has(at)) byWhere.set(at, f);
    return { path: at, message: f.message };
  });
  return collapseProblems(located).map(({ message, paths }) => {
    if (paths.length === 1) return [where(byWhere.get(paths[0])!), message].filter(Boolean).join(' ');
    const files = paths.every((at) => byWhere.get(at)!.file !== undefined);
    return `${message} (${files ? countedPaths(paths, 'files') : countedPaths(paths)})`;
  });
}

/** The last line: valid or not, and why, in terms that hold under --strict too. */
function summaryLine(report: ValidateReport): string {
  const scope = report.objects !== undefined ? ` in ${report.objects} objects (${report.files} files)` : '';
  if (report.strict && report.warnings.length > 0) {
    const found =
      report.errors.length > 0
        ? `${counted(report.errors.length, 'error')} and ${counted(report.warnings.length, 'warning')}`
        : counted(report.warnings.length, 'warning');
    return `invalid: ${found}${scope} (--strict treats warnings as errors)`;
  }
  const summary = `${counted(report.errors.length, 'error')}, ${counted(report.warnings.length, 'warning')}${scope}`;
  return report.ok ? `valid: ${summary}` : `invalid: ${summary}`;
}

/**
 * The text report: errors, then warnings, then a summary line. A message found at several construct
 * paths (or files) is one line with their count.
 */
export function formatReport(report: ValidateReport): string {
  const lines: string[] = [];
  for (const line of findingLines(report.errors)) lines.push(`error: ${line}`);
  for (const line of findingLines(report.warnings))
    lines.push(`${report.strict ? 'error (--strict)' : 'warning'}: ${line}`);
  lines.push(summaryLine(report));
  return `${lines.join('\n')}\n`;
}

interface ValidateOpts {
  app?: string;
  outdir?: string;
  output: string;
  strict?: boolean;
  sizeBudget?: string;
  /** Seconds the type-check and the fleet program may take (fleet mode). @default {@link DEFAULT_TIMEOUT_SECONDS} */
  timeout?: number;
}

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .argument('[dir]', 'a folder of YAML to check instead of the fleet (for example a dist/ written by another tool)')
    .description(
      'check the fleet (or a folder of YAML): schemas, Kubernetes rules, policy; every problem with its construct path or file; writes nothing',
    )
    .option('-a, --app <command>', 'command that runs the cdk8s app (default: cdk8s.yaml)')
    .option('-o, --output <format>', 'text or json', 'text')
    .option(
      '--outdir <dir>',
      'the committed output whose plan state moves between delivery models are checked against (default: cdk8s.yaml output, else dist)',
    )
    .option('--strict', 'treat warnings as errors')
    .option(
      '--size-budget <bytes>',
      `largest object allowed in folder mode (default ${DEFAULT_WORK_SIZE_BUDGET}; at most ${ETCD_OBJECT_LIMIT})`,
    )
    .option(
      '--timeout <seconds>',
      'stop the type-check and the fleet program after this long (0: no limit)',
      parseTimeout,
      DEFAULT_TIMEOUT_SECONDS,
    )
    .exitOverride((error) => {
      if (error.exitCode === 0) throw error;
      process.exit(2);
    })
    .action(async (dir: string | undefined, opts: ValidateOpts) => {
      const progress = new Progress('pullfleet validate');
      const out = (text: string) => {
        progress.stop();
        process.stdout.write(text);
      };
      const err = (text: string) => {
        progress.stop();
        process.stderr.write(text);
      };
      try {
        process.exitCode = await runValidate(dir, opts, out, err, process.cwd(), progress);
      } finally {
        progress.stop();
      }
    });
}

/** Usage errors, and folder mode (`dir` given): the exit code, or undefined for the fleet mode {@link runValidate} runs. */
function runWithoutFleet(
  dir: string | undefined,
  opts: ValidateOpts,
  out: (text: string) => void,
  err: (text: string) => void,
  cwd: string,
): number | undefined {
  if (opts.output !== 'text' && opts.output !== 'json') {
    err(`pullfleet validate: -o ${opts.output} is not a format: use text or json\n`);
    return 2;
  }
  let sizeBudget: number | undefined;
  if (opts.sizeBudget !== undefined) {
    sizeBudget = Number(opts.sizeBudget);
    if (!Number.isInteger(sizeBudget) || sizeBudget <= 0 || sizeBudget > ETCD_OBJECT_LIMIT) {
      err(
        `pullfleet validate: --size-budget ${opts.sizeBudget} must be a whole number of bytes from 1 to ${ETCD_OBJECT_LIMIT}\n`,
      );
      return 2;
    }
    if (dir === undefined) {
      err("pullfleet validate: --size-budget applies to a folder; for the fleet set the hub's workSizeBudget\n");
      return 2;
    }
  }
  if (dir === undefined) return undefined;
  let report: ValidateReport;
  try {
    report = validateFolder(path.resolve(cwd, dir), { strict: opts.strict, sizeBudget });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(`pullfleet validate: ${error.message}\n`);
    return 2;
  }
  out(opts.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return report.ok ? 0 : 1;
}

/** Type-checks the fleet description: undefined when it passes, else the exit code (after reporting). */
function checkTypes(
  opts: ValidateOpts,
  out: (text: string) => void,
  err: (text: string) => void,
  cwd: string,
): number | undefined {
  // tsx runs the fleet without checking types: a wrong prop type must not pass validation.
  let types: TypecheckResult | undefined;
  try {
    types = typecheckApp(opts.app ?? readCdk8sConfig(cwd).app ?? '', cwd);
  } catch (error) {
    err(`pullfleet validate: type-check failed: ${(error as Error).message}\n`);
    return 1;
  }
  if (!types || types.errors.length === 0) return undefined;
  if (opts.output === 'json')
    out(
      `${JSON.stringify({ ok: false, strict: opts.strict ?? false, errors: types.errors.map((message) => ({ message })), warnings: [] }, null, 2)}\n`,
    );
  else err(formatTypeErrors(types, cwd));
  return 1;
}

/** The report of a fleet run, or the exit code when the fleet did not get as far as validation (after reporting). */
function fleetReport(
  result: { report?: ValidateReport; output: string },
  opts: ValidateOpts,
  out: (text: string) => void,
  err: (text: string) => void,
): ValidateReport | number {
  if (result.report) return result.report;
  // The fleet did not get as far as validation (a crash, a syntax error): show what it printed, without cdk8s-cli's trace.
  const output = withoutCliNoise(result.output);
  if (opts.output === 'json')
    out(
      `${JSON.stringify({ ok: false, strict: opts.strict ?? false, errors: [{ message: output.trim() }], warnings: [] }, null, 2)}\n`,
    );
  else err(output);
  return 1;
}

/**
 * Runs the command; returns the exit code (0 valid, 1 invalid, 2 usage error). In fleet mode `progress`
 * shows the phase, and the fleet program is stopped after `opts.timeout` seconds.
 */
export async function runValidate(
  dir: string | undefined,
  opts: ValidateOpts,
  out: (text: string) => void,
  err: (text: string) => void,
  cwd = process.cwd(),
  progress?: Progress,
): Promise<number> {
  // Folder mode, and every usage error, needs no fleet program.
  const withoutFleet = runWithoutFleet(dir, opts, out, err, cwd);
  if (withoutFleet !== undefined) return withoutFleet;
  const started = Date.now();
  const timeout = opts.timeout ?? DEFAULT_TIMEOUT_SECONDS;
  if (runsTypeScript(opts.app, cwd)) progress?.enter(PHASE.typecheck);
  const typeFailure = checkTypes(opts, out, err, cwd);
  if (typeFailure !== undefined) return typeFailure;
  const app = (): string | undefined => opts.app ?? readCdk8sConfig(cwd).app;
  if (timeout > 0 && Date.now() - started > timeout * 1000) {
    err(timeoutMessage('validate', timeout, PHASE.typecheck, app(), 'nothing was validated'));
    return 1;
  }
  const result = await validateFleet({
    cwd,
    app: opts.app,
    strict: opts.strict,
    ...(opts.outdir ? { outdir: opts.outdir } : {}),
    timeout,
    started,
    progress,
  });
  if (result.timedOutIn !== undefined) {
    err(timeoutMessage('validate', timeout, result.timedOutIn, app(), 'nothing was validated'));
    return 1;
  }
  const report = fleetReport(result, opts, out, err);
  if (typeof report === 'number') return report;
  out(opts.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return report.ok ? 0 : 1;
}
