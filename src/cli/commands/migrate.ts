/**
 * `pullfleet migrate subscriptions <files…> | --kubeconfig …`: reads ACM Subscriptions with their Channels,
 * PlacementRules and Placements (from YAML files, or listed from the hub) and writes the equivalent
 * construct code (`addMigratedApps(hub)`) plus a report of what it could not translate and why. Exit 0
 * when the code was written, 1 with --strict when something was skipped or left untranslated, 2 on errors
 * (unreadable input, no Subscription, an output file that exists without --force).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { KubeApiError, KubeClient } from '../../kube/client.js';
import type { ResourceKind } from '../../kube/resources.js';
import {
  DEFAULT_IMPORT,
  renderMigrationReport,
  translateSubscriptions,
  SUBSCRIPTION_GROUP,
} from '../../migrate/subscriptions.js';
import { type JsonObject, type KubeObject } from '../../model/core/types.js';
import { secondsOption } from '../support/number-options.js';
import { writeFileAtomic } from './inventory.js';
import { explainError, loadUserKubeConfig } from './status.js';

const kind = (group: string, version: string, k: string, plural: string): ResourceKind => ({
  id: k,
  group,
  version,
  kind: k,
  plural,
  namespaced: true,
});
export const SUBSCRIPTION = kind(SUBSCRIPTION_GROUP, 'v1', 'Subscription', 'subscriptions');
export const CHANNEL = kind(SUBSCRIPTION_GROUP, 'v1', 'Channel', 'channels');
export const PLACEMENT_RULE = kind(SUBSCRIPTION_GROUP, 'v1', 'PlacementRule', 'placementrules');
export const OCM_PLACEMENT = kind('cluster.open-cluster-management.io', 'v1beta1', 'Placement', 'placements');

/** Default of `--timeout` (seconds per request to the hub). */
export const DEFAULT_MIGRATE_TIMEOUT_SECONDS = 30;

export interface MigrateOptions {
  readonly files: readonly string[];
  readonly kubeconfig?: string;
  readonly context?: string;
  /** Read from the hub instead of files. */
  readonly fromHub?: boolean;
  /** Seconds per request to the hub. @default 30 */
  readonly timeout?: number;
  /** Output file for the code. @default - stdout */
  readonly output?: string;
  /** Output file for the report. @default - stderr */
  readonly report?: string;
  /** Module the code imports the constructs from. @default 'pullfleet' */
  readonly importFrom?: string;
  /** Namespace of objects in the files without metadata.namespace. @default 'default' */
  readonly namespace?: string;
  readonly force?: boolean;
  /** Exit 1 when anything was skipped or left untranslated. */
  readonly strict?: boolean;
}

export interface MigrateIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Every object in YAML files (multi-document; `kind: List` unwrapped). Throws naming the file. With
 * `origins`, records the file each object came from.
 */
export function readObjects(files: readonly string[], origins?: Map<JsonObject, string>): JsonObject[] {
  const objects: JsonObject[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`cannot read ${file}: ${(error as Error).message}`);
    }
    for (const doc of parseAllDocuments(text)) {
      if ('errors' in doc && doc.errors.length > 0)
        throw new Error(`${file} is not valid YAML: ${doc.errors[0].message}`);
      const value = doc.toJS() as unknown;
      if (value === null || value === undefined) continue;
      if (typeof value !== 'object' || Array.isArray(value))
        throw new Error(`${file}: every YAML document must be a Kubernetes object`);
      const obj = value as JsonObject;
      const read = obj.kind === 'List' && Array.isArray(obj.items) ? (obj.items as JsonObject[]) : [obj];
      for (const o of read) {
        objects.push(o);
        if (origins && typeof o === 'object' && o !== null) origins.set(o, file);
      }
    }
  }
  return objects;
}

/** Subscriptions, Channels, PlacementRules and Placements of every namespace, from the hub. */
export async function readHubObjects(
  options: MigrateOptions,
  env: NodeJS.ProcessEnv,
): Promise<{ objects: JsonObject[]; hub: string }> {
  const client = new KubeClient(loadUserKubeConfig(options.kubeconfig, options.context, env), {
    requestTimeoutMs: (options.timeout ?? DEFAULT_MIGRATE_TIMEOUT_SECONDS) * 1000,
  });
  const hub = client.serverUrl.replace(/\/$/, '');
  try {
    const objects: JsonObject[] = [];
    for (const [k, what, optional] of [
      [SUBSCRIPTION, 'Subscriptions', false],
      [CHANNEL, 'Channels', false],
      [PLACEMENT_RULE, 'PlacementRules', true],
      [OCM_PLACEMENT, 'Placements', true],
    ] as const) {
      try {
        objects.push(...((await client.list<KubeObject>(k)).items as unknown as JsonObject[]));
      } catch (error) {
        if (error instanceof KubeApiError && error.statusCode === 404) {
          if (optional) continue; // newer hubs no longer serve PlacementRules; a hub without Placements has none
          throw new Error(
            `the hub at ${hub} does not serve ${what} (${k.group}/${k.version}): is the ACM application lifecycle installed? Check --kubeconfig / --context`,
          );
        }
        throw explainError(error, what, hub);
      }
    }
    return { objects, hub };
  } finally {
    client.close();
  }
}

/** Runs the command; resolves with the exit code. Writes nothing when anything fails. */
export async function runMigrateSubscriptions(options: MigrateOptions, io: MigrateIo): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`pullfleet migrate subscriptions: ${message}\n`);
    return 2;
  };
  if (options.files.length === 0 && !options.fromHub)
    return fail('give Subscription YAML files, or --kubeconfig / --context to read them from the hub');
  if (options.files.length > 0 && options.fromHub)
    return fail('give either files or --kubeconfig / --context, not both');
  for (const path of [options.output, options.report]) {
    if (path && existsSync(path) && !options.force)
      return fail(`${path} exists: pass --force to replace it (nothing was written)`);
  }
  if (options.output && options.output === options.report) return fail('--output and --report must be different files');
  let objects: JsonObject[];
  let sources: string[];
  const origins = new Map<JsonObject, string>();
  try {
    if (options.fromHub) {
      const read = await readHubObjects(options, io.env);
      objects = read.objects;
      sources = [read.hub];
    } else {
      objects = readObjects(options.files, origins);
      sources = [...options.files];
    }
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const subscriptions = objects.filter(
    (o) =>
      typeof o.apiVersion === 'string' &&
      o.apiVersion.startsWith(`${SUBSCRIPTION_GROUP}/`) &&
      o.kind === 'Subscription',
  );
  if (subscriptions.length === 0) return fail(`no ${SUBSCRIPTION_GROUP} Subscription in ${sources.join(', ')}`);
  if (options.namespace !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(options.namespace))
    return fail(`--namespace "${options.namespace}" is not a namespace name (a DNS label)`);
  const result = translateSubscriptions(objects, {
    importFrom: options.importFrom,
    sources,
    namespace: options.namespace,
    origins,
  });
  const report = renderMigrationReport(result);
  try {
    if (options.output) writeFileAtomic(options.output, result.code);
    else io.stdout.write(result.code);
    if (options.report) writeFileAtomic(options.report, report);
    else io.stderr.write(report);
    if (options.output) io.stderr.write(`wrote ${options.output}${options.report ? ` and ${options.report}` : ''}\n`);
  } catch (error) {
    return fail(`writing the result failed: ${(error as Error).message}`);
  }
  const incomplete = result.notes.some((n) => n.severity !== 'changed');
  return options.strict && incomplete ? 1 : 0;
}

/** Registers `pullfleet migrate subscriptions`. */
/** Registers `migrate` and its `subscriptions` subcommand; returns `migrate`, which other subcommands join. */
export function registerMigrate(program: Command): Command {
  const migrate = program.command('migrate').description('translate what a fleet runs today into pullfleet constructs');
  migrate
    .command('subscriptions')
    .description(
      'ACM Subscriptions (with their Channels, PlacementRules and Placements) into PullApplicationSets and Placements, plus a report of what has no equivalent',
    )
    .argument('[files...]', 'YAML files with Subscriptions, Channels, PlacementRules and Placements')
    .option('--kubeconfig <path>', 'read them from the hub with this kubeconfig instead of files')
    .option('--context <name>', 'kubeconfig context of the hub (implies reading from the hub)')
    .option(
      '--timeout <seconds>',
      `seconds per request to the hub (default: ${DEFAULT_MIGRATE_TIMEOUT_SECONDS})`,
      secondsOption({ flag: '--timeout', example: DEFAULT_MIGRATE_TIMEOUT_SECONDS }),
    )
    .option('-o, --output <file>', 'write the code here (default: stdout); an existing file needs --force')
    .option('--report <file>', 'write the report here (default: stderr)')
    .option(
      '-n, --namespace <name>',
      'namespace of the objects in the files without metadata.namespace, as kubectl apply -n (or kustomize) would set it (default: default)',
    )
    .option('--import <module>', 'module the code imports the constructs from', DEFAULT_IMPORT)
    .option('--force', 'replace existing output files')
    .option('--strict', 'exit 1 when anything was skipped or left untranslated')
    .action(
      async (
        files: string[],
        opts: {
          kubeconfig?: string;
          context?: string;
          timeout?: number;
          output?: string;
          report?: string;
          namespace?: string;
          import: string;
          force?: boolean;
          strict?: boolean;
        },
      ) => {
        process.exitCode = await runMigrateSubscriptions(
          {
            files,
            kubeconfig: opts.kubeconfig,
            context: opts.context,
            fromHub: Boolean(opts.kubeconfig || opts.context),
            timeout: opts.timeout,
            output: opts.output,
            report: opts.report,
            importFrom: opts.import,
            namespace: opts.namespace,
            force: opts.force,
            strict: opts.strict,
          },
          { stdout: process.stdout, stderr: process.stderr, env: process.env },
        );
      },
    );
  return migrate;
}
