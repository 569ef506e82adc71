/**
 * What the real-OCM harnesses (real-ocm.ts: the work agent; real-placement.ts: the placement controller)
 * share: the cluster CRDs they install on the hub, OCM's own CRDs from ../shared/ocm, namespaces made once,
 * and OCM processes spawned with their log in a file, killed on exit of the test process, stopped by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { RawApiError, type RawClient, type RawObject } from './raw-client.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** ../shared/ocm beside the repository. */
export const SHARED_OCM = join(ROOT, '..', 'shared', 'ocm');

/** The OCM cluster CRDs (in test/envtest's CRD folder) both harnesses apply to the hub (as no-ops when there). */
export const CLUSTER_CRDS = [
  'cluster.open-cluster-management.io/ManagedCluster.yaml',
  'cluster.open-cluster-management.io/ManagedClusterSet.yaml',
  'cluster.open-cluster-management.io/ManagedClusterSetBinding.yaml',
  'cluster.open-cluster-management.io/Placement.yaml',
  'cluster.open-cluster-management.io/PlacementDecision.yaml',
] as const;

/** A CRD of OCM's own release from ../shared/ocm/crds (`hub/…` or `spoke/…`). */
export function readOcmCrd(file: string): RawObject {
  return parseYaml(readFileSync(join(SHARED_OCM, 'crds', file), 'utf8')) as RawObject;
}

/** Creates namespace `name` unless it exists. */
export async function ensureNamespace(client: RawClient, name: string): Promise<void> {
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } catch (e) {
    if (!(e instanceof RawApiError) || e.code !== 409) throw e;
  }
}

/** The last `lines` lines of the log `file`, without the lines `harmless` matches; `(no log)` without a file. */
export function tailOf(file: string, lines: number, harmless: RegExp): string {
  try {
    return readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .filter((line) => !harmless.test(line))
      .slice(-lines)
      .join('\n');
  } catch {
    return '(no log)';
  }
}

/** Every OCM process started here and not yet exited, so an exit of the test process can kill them. */
const live = new Set<ChildProcess>();
let hooksInstalled = false;

/** Kills every live OCM process when the test process exits (installed once). */
export function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** A spawned OCM process: `exited` resolves when it exits (at once, in its exit event). */
export interface OcmProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/**
 * Spawns `binary args` with its stdout and stderr appended to `logFile`, only PATH, HOME and TMPDIR=`tmp` in
 * its environment; `onExit` runs in its exit event.
 */
export function spawnOcm(
  binary: string,
  args: readonly string[],
  logFile: string,
  tmp: string,
  onExit: () => void = () => undefined,
): OcmProcess {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(binary, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmp },
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  live.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      live.delete(child);
      onExit();
      resolve();
    }),
  );
  return { child, exited };
}

/** SIGTERM, then SIGKILL when it has not exited after `boundMs`; resolves with whether it had to be killed. */
export async function stopOcm(process: OcmProcess, boundMs: number): Promise<boolean> {
  process.child.kill('SIGTERM');
  const late = await Promise.race([
    process.exited.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(true), boundMs).unref()),
  ]);
  if (late) {
    process.child.kill('SIGKILL');
    await process.exited;
  }
  return late;
}
