/**
 * `pullfleet migrate applications <files|dirs…>`: reads Argo CD Applications and ApplicationSets (and the
 * OCM Placements their generators use) from YAML files and folders, and writes the equivalent construct
 * code (`addMigratedApps(hub)`) plus a report of what carried over exactly, what changed and what was
 * skipped. Exit 0 when the code was written, 1 with --strict when something was skipped or left
 * untranslated, 2 on errors (unreadable or invalid input, naming the file, document and field; nothing to
 * translate; an output file that exists without --force): nothing is written then.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import {
  applicationsReportJson,
  DEFAULT_IMPORT,
  parseDocuments,
  renderApplicationsReport,
  translateApplications,
} from '../../migrate/applications.js';
import { writeFileAtomic } from './inventory.js';
import type { MigrateIo } from './migrate.js';

export interface MigrateApplicationsOptions {
  /** YAML files, or folders read for `*.yaml` / `*.yml` files (recursively, in name order). */
  readonly paths: readonly string[];
  /** Output file for the code. @default - stdout */
  readonly output?: string;
  /** Output file for the report. @default - stderr */
  readonly report?: string;
  /** Write the report as JSON. @default false */
  readonly json?: boolean;
  /** Module the code imports the constructs from. @default 'pullfleet' */
  readonly importFrom?: string;
  /** `destination=cluster` pairs: the managed cluster of a push-model destination name or server. @default [] */
  readonly clusters?: readonly string[];
  /** Replace existing output files. @default false */
  readonly force?: boolean;
  /** Exit 1 when anything was skipped or left untranslated. @default false */
  readonly strict?: boolean;
}

/** The YAML files of `paths`: files as given, folders searched for `*.yaml` / `*.yml` in name order. */
export function yamlFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(entry.name)) out.push(path);
    }
  };
  for (const path of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (error) {
      throw new Error(`cannot read ${path}: ${(error as Error).message}`);
    }
    if (isDir) walk(path);
    else out.push(path);
  }
  return out;
}

/** Runs the command; resolves with the exit code. Writes nothing when anything fails. */
export function runMigrateApplications(options: MigrateApplicationsOptions, io: MigrateIo): number {
  const fail = (message: string): number => {
    io.stderr.write(`pullfleet migrate applications: ${message} (nothing was written)\n`);
    return 2;
  };
  if (options.paths.length === 0)
    return fail('give the Application / ApplicationSet YAML files or folders to translate');
  for (const path of [options.output, options.report]) {
    if (path && existsSync(path) && !options.force) return fail(`${path} exists: pass --force to replace it`);
  }
  if (options.output && options.output === options.report) return fail('--output and --report must be different files');
  const clusters: Record<string, string> = {};
  for (const pair of options.clusters ?? []) {
    const at = pair.lastIndexOf('=');
    const [destination, cluster] = at > 0 ? [pair.slice(0, at), pair.slice(at + 1)] : ['', ''];
    if (!destination || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(cluster))
      return fail(
        `--cluster "${pair}" is not <destination>=<managed cluster>: for example --cluster https://kubernetes.default.svc=local-cluster`,
      );
    clusters[destination] = cluster;
  }
  let result;
  let files: string[];
  try {
    files = yamlFiles(options.paths);
    const texts = files.map((file) => {
      try {
        return { file, text: readFileSync(file, 'utf8') };
      } catch (error) {
        throw new Error(`cannot read ${file}: ${(error as Error).message}`);
      }
    });
    result = translateApplications(parseDocuments(texts), {
      importFrom: options.importFrom,
      sources: options.paths,
      clusters,
    });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (result.read.applications + result.read.applicationSets === 0)
    return fail(
      `no Argo CD Application or ApplicationSet in ${files.length ? files.join(', ') : options.paths.join(', ')}`,
    );
  const report = options.json ? applicationsReportJson(result) : renderApplicationsReport(result);
  try {
    if (options.output) writeFileAtomic(options.output, result.code);
    else io.stdout.write(result.code);
    if (options.report) writeFileAtomic(options.report, report);
    else io.stderr.write(report);
    if (options.output) io.stderr.write(`wrote ${options.output}${options.report ? ` and ${options.report}` : ''}\n`);
  } catch (error) {
    io.stderr.write(`pullfleet migrate applications: writing the result failed: ${(error as Error).message}\n`);
    return 2;
  }
  const incomplete = result.notes.some((n) => n.severity !== 'changed');
  return options.strict && incomplete ? 1 : 0;
}

/** Registers `applications` under the `migrate` command. */
export function registerMigrateApplications(migrate: Command): void {
  migrate
    .command('applications')
    .description(
      'Argo CD Applications and ApplicationSets (pull-labelled, or push-model ones whose destination is a managed cluster) into PullApplications, PullApplicationSets and Placements, plus a report of what carried over, changed or has no equivalent',
    )
    .argument(
      '<paths...>',
      'YAML files or folders (searched for *.yaml and *.yml) with Applications, ApplicationSets and Placements',
    )
    .option('-o, --output <file>', 'write the code here (default: stdout); an existing file needs --force')
    .option('--report <file>', 'write the report here (default: stderr)')
    .option('--json', 'write the report as JSON')
    .option(
      '--cluster <destination=cluster>',
      'managed cluster of a push-model destination name or server (repeatable), for example https://kubernetes.default.svc=local-cluster',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--import <module>', 'module the code imports the constructs from', DEFAULT_IMPORT)
    .option('--force', 'replace existing output files')
    .option('--strict', 'exit 1 when anything was skipped or left untranslated')
    .action(
      (
        paths: string[],
        opts: {
          output?: string;
          report?: string;
          json?: boolean;
          cluster?: string[];
          import: string;
          force?: boolean;
          strict?: boolean;
        },
      ) => {
        process.exitCode = runMigrateApplications(
          {
            paths,
            output: opts.output,
            report: opts.report,
            json: opts.json,
            clusters: opts.cluster,
            importFrom: opts.import,
            force: opts.force,
            strict: opts.strict,
          },
          { stdout: process.stdout, stderr: process.stderr, env: process.env },
        );
      },
    );
}
