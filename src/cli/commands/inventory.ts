/**
 * `pullfleet inventory pull` writes `inventory/<hub>.yaml` from the live hub's ManagedClusters and
 * ManagedClusterSets (paged lists, a timeout on every request, written through a temporary file and a
 * rename so a failure never leaves a truncated inventory). `pullfleet inventory diff` compares the
 * committed file with the live hub: exit 0 when equal, 1 on drift, 2 on usage errors or an unreadable hub.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { KubeConfig } from '../../kube/client.js';
import type { Command } from 'commander';
import { KubeApiError, KubeClient } from '../../kube/client.js';
import { MANAGED_CLUSTER, MANAGED_CLUSTER_SET, type ResourceKind } from '../../kube/resources.js';
import { type KubeObject } from '../../model/core/types.js';
import {
  diffInventory,
  hasDrift,
  inventoryFromHub,
  InventoryError,
  parseInventory,
  renderInventory,
  renderInventoryDiff,
  type HubInventory,
  type ManagedClusterObject,
  type ManagedClusterSetObject,
} from '../../model/placement/inventory.js';
import { dnsLabelRule } from '../../model/validation/rules.js';
import { positiveIntegerOption, secondsOption } from '../support/number-options.js';
import { cannotWriteFileProblem } from '../support/output-folder.js';
import { explainError, loadUserKubeConfig } from './status.js';

export const EXIT_OK = 0;
export const EXIT_DRIFT = 1;
export const EXIT_ERROR = 2;
/** Default of `--timeout` (seconds per request). */
export const DEFAULT_INVENTORY_TIMEOUT_SECONDS = 30;
/** Default of `--page-size` (objects per list request). */
export const DEFAULT_PAGE_SIZE = 500;
/** A paged list whose continue token expired (410 Gone) is started over at most this many times. */
const LIST_RESTARTS = 3;

/** Where the hub's clusters come from: the API server in real use. */
export interface InventorySource {
  /** The hub API server, for messages. */
  readonly description: string;
  listManagedClusters(): Promise<ManagedClusterObject[]>;
  listManagedClusterSets(): Promise<ManagedClusterSetObject[]>;
  close(): void;
}

/** Reads through `kubeConfig`; every list page gives up after `timeoutMs`. */
export function kubeInventorySource(
  kubeConfig: KubeConfig,
  options: { timeoutMs?: number; pageSize?: number } = {},
): InventorySource {
  const client = new KubeClient(kubeConfig, {
    requestTimeoutMs: options.timeoutMs ?? DEFAULT_INVENTORY_TIMEOUT_SECONDS * 1000,
  });
  const hub = client.serverUrl.replace(/\/$/, '');
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const listAll = async <T>(kind: ResourceKind, what: string): Promise<T[]> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return (await client.list<KubeObject>(kind, {}, pageSize)).items as unknown as T[];
      } catch (error) {
        // The continue token of a long paged list expired: list again from the start (bounded).
        if (error instanceof KubeApiError && error.statusCode === 410 && attempt < LIST_RESTARTS) continue;
        if (error instanceof KubeApiError && error.statusCode === 404) {
          throw new InventoryError(`the hub at ${hub}`, [
            `${what} are not served (404): is this an Open Cluster Management hub? Check --kubeconfig / --context`,
          ]);
        }
        throw explainError(error, what, hub);
      }
    }
  };
  return {
    description: hub,
    listManagedClusters: () => listAll<ManagedClusterObject>(MANAGED_CLUSTER, 'ManagedClusters'),
    listManagedClusterSets: () => listAll<ManagedClusterSetObject>(MANAGED_CLUSTER_SET, 'ManagedClusterSets'),
    close: () => client.close(),
  };
}

/** The live inventory of hub `hub`. */
export async function readLiveInventory(source: InventorySource, hub: string): Promise<HubInventory> {
  const clusters = await source.listManagedClusters();
  const sets = await source.listManagedClusterSets();
  return inventoryFromHub(hub, clusters, sets);
}

/**
 * Writes `text` to `path` through a temporary file in the same folder and a rename: readers see the old
 * file or the new one, never a partial one, and a failure leaves the old file as it was.
 */
export function writeFileAtomic(path: string, text: string): void {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(temp, text, { flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    // `-o /proc/x` gives ENOENT or EPERM: say which file, which folder refused it, and what to do.
    throw new Error(cannotWriteFileProblem(path, error));
  }
}

export interface InventoryIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: NodeJS.ProcessEnv;
  /** Builds the source (tests inject one). @default kubeInventorySource(loadUserKubeConfig(...)) */
  readonly source?: () => InventorySource;
}

export interface InventoryConnection {
  readonly kubeconfig?: string;
  readonly context?: string;
  /** Seconds each request to the hub may take. @default 30 */
  readonly timeout?: number;
  /** Objects per list request. @default 500 */
  readonly pageSize?: number;
}

export interface InventoryPullOptions extends InventoryConnection {
  /** Hub name (as in fleet.config.ts). */
  readonly hub: string;
  /** Output path, or `-` for stdout. @default inventory/<hub>.yaml */
  readonly output?: string;
}

export interface InventoryDiffOptions extends InventoryConnection {
  /** Hub name; must match the file's. @default - the file's hub */
  readonly hub?: string;
  /** The committed inventory. @default inventory/<hub>.yaml */
  readonly file?: string;
}

function openSource(options: InventoryConnection, io: InventoryIo): InventorySource {
  if (io.source) return io.source();
  const timeoutMs = (options.timeout ?? DEFAULT_INVENTORY_TIMEOUT_SECONDS) * 1000;
  return kubeInventorySource(loadUserKubeConfig(options.kubeconfig, options.context, io.env), {
    timeoutMs,
    pageSize: options.pageSize,
  });
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** `pullfleet inventory pull`; resolves with the exit code. Writes nothing unless the whole hub was read and valid. */
export async function runInventoryPull(options: InventoryPullOptions, io: InventoryIo): Promise<number> {
  const hubProblem = dnsLabelRule('--hub', options.hub);
  if (hubProblem) {
    io.stderr.write(`pullfleet inventory pull: ${hubProblem} (the name of the Hub in fleet.config.ts)\n`);
    return EXIT_ERROR;
  }
  const output = options.output ?? join('inventory', `${options.hub}.yaml`);
  let source: InventorySource | undefined;
  try {
    source = openSource(options, io);
    const inventory = await readLiveInventory(source, options.hub);
    const text = renderInventory(inventory);
    if (output === '-') {
      io.stdout.write(text);
      return EXIT_OK;
    }
    let previous: string | undefined;
    try {
      previous = readFileSync(output, 'utf8');
    } catch {
      previous = undefined;
    }
    const counts = `${inventory.clusters.length} cluster${inventory.clusters.length === 1 ? '' : 's'}, ${inventory.clusterSets.length} cluster set${inventory.clusterSets.length === 1 ? '' : 's'}`;
    if (previous === text) {
      io.stdout.write(`${output} is up to date (${counts})\n`);
      return EXIT_OK;
    }
    writeFileAtomic(output, text);
    io.stdout.write(`wrote ${output} (${counts}) from ${source.description}\n`);
    return EXIT_OK;
  } catch (error) {
    io.stderr.write(
      `pullfleet inventory pull: ${message(error)}\n${output === '-' ? '' : `nothing was written to ${output}\n`}`,
    );
    return EXIT_ERROR;
  } finally {
    source?.close();
  }
}

/** `pullfleet inventory diff`; resolves with 0 (equal), 1 (drift) or 2 (error). */
export async function runInventoryDiff(options: InventoryDiffOptions, io: InventoryIo): Promise<number> {
  if (!options.file && !options.hub) {
    io.stderr.write('pullfleet inventory diff: give --hub <name> (reads inventory/<hub>.yaml) or --file <path>\n');
    return EXIT_ERROR;
  }
  const file = options.file ?? join('inventory', `${options.hub}.yaml`);
  let committed: HubInventory;
  try {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(
        `cannot read ${file}: ${message(error)}: create it with \`pullfleet inventory pull --hub ${options.hub ?? '<name>'} -o ${file}\``,
      );
    }
    committed = parseInventory(text, file);
  } catch (error) {
    io.stderr.write(`pullfleet inventory diff: ${message(error)}\n`);
    return EXIT_ERROR;
  }
  if (options.hub && options.hub !== committed.hub) {
    io.stderr.write(
      `pullfleet inventory diff: ${file} is the inventory of hub "${committed.hub}", not "${options.hub}": pass the matching --hub or --file\n`,
    );
    return EXIT_ERROR;
  }
  let source: InventorySource | undefined;
  try {
    source = openSource(options, io);
    const live = await readLiveInventory(source, committed.hub);
    const diff = diffInventory(committed, live);
    if (!hasDrift(diff)) {
      io.stdout.write(
        `${file} matches the hub at ${source.description} (${live.clusters.length} clusters, ${live.clusterSets.length} cluster sets)\n`,
      );
      return EXIT_OK;
    }
    io.stdout.write(
      `${file} differs from the hub at ${source.description}:\n${renderInventoryDiff(diff)}run \`pullfleet inventory pull --hub ${committed.hub} -o ${file}\` and review the change\n`,
    );
    return EXIT_DRIFT;
  } catch (error) {
    io.stderr.write(`pullfleet inventory diff: ${message(error)}\n`);
    return EXIT_ERROR;
  } finally {
    source?.close();
  }
}

function connectionOptions(command: Command): Command {
  return command
    .option('--kubeconfig <path>', 'kubeconfig file of the hub (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context of the hub')
    .option(
      '--timeout <seconds>',
      `give up on the hub after this many seconds per request (default: ${DEFAULT_INVENTORY_TIMEOUT_SECONDS})`,
      secondsOption({ flag: '--timeout', example: DEFAULT_INVENTORY_TIMEOUT_SECONDS }),
    )
    .option(
      '--page-size <n>',
      `objects per list request (default: ${DEFAULT_PAGE_SIZE})`,
      positiveIntegerOption({ flag: '--page-size', example: DEFAULT_PAGE_SIZE }),
    );
}

const processIo = (): InventoryIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** Registers `pullfleet inventory pull` and `pullfleet inventory diff`. */
export function registerInventory(program: Command): void {
  const inventory = program
    .command('inventory')
    .description('the fleet inventory file (inventory/<hub>.yaml) from a live hub');
  connectionOptions(
    inventory
      .command('pull')
      .description(
        "write the hub's ManagedClusters and ManagedClusterSets to a deterministic inventory file; nothing is written on any error (exit 2)",
      )
      .requiredOption('--hub <name>', 'hub name, as in fleet.config.ts')
      .option('-o, --output <path>', 'output file, or - for stdout (default: inventory/<hub>.yaml)'),
  ).action(async (opts: InventoryPullOptions) => {
    process.exitCode = await runInventoryPull(opts, processIo());
  });
  connectionOptions(
    inventory
      .command('diff')
      .description(
        'compare the committed inventory with the live hub: exit 0 when equal, 1 on drift (listing what changed), 2 on errors',
      )
      .option('--hub <name>', 'hub name (reads inventory/<hub>.yaml unless --file is given)')
      .option('-f, --file <path>', 'the committed inventory file'),
  ).action(async (opts: InventoryDiffOptions) => {
    process.exitCode = await runInventoryDiff(opts, processIo());
  });
}
