/**
 * OCM's real placement controller (v1.3.1, `../shared/ocm`, `placement controller`) against the hub API
 * server of `npm run test:ocm` (scripts/test-envtest.ts, PULLFLEET_E2E_KUBECONFIG), for the placement
 * differential suite (test/ocm/placement-differential.test.ts).
 *
 * What the starter sets up (../shared/ocm/README.md, "Placement without the rest of the hub"):
 * - hub: the cluster CRDs (ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding, Placement,
 *   PlacementDecision; applied again as no-ops when the runner installed them) and OCM's AddOnPlacementScore,
 *   which the controller watches; the namespace of its events (`open-cluster-management-hub`).
 * - the process: `placement controller` with leader election off, a free loopback `--listen` port and
 *   `TMPDIR` in the starter's folder (it writes a self-signed serving certificate there), signed in as
 *   admin (`system:masters`), not with the RBAC OCM's cluster manager grants.
 *
 * The controller is ready when a canary Placement in a namespace with no ManagedClusterSetBinding has its
 * `PlacementSatisfied` condition (`NoManagedClusterSetBindings`); the canary is deleted with its decisions
 * before `startPlacementController` resolves. A controller that exits before that fails the start at once.
 *
 * Nothing here waits for time: the controller syncs its informers before its first schedule, so a Placement
 * created before the start is scheduled against the complete inventory. Its log goes to a file in one folder,
 * removed by `stop()` unless `keep` was called or PULLFLEET_OCM_KEEP=1. The process is stopped by pid:
 * SIGTERM, then SIGKILL after 10 s; also on exit of the test process.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { freePort } from './envtest.js';
import { applyCrds, readCrd, realServerKubeconfig } from './envtest-cluster.js';
import { CLUSTER_CRDS, ensureNamespace, readOcmCrd } from './ocm-process.js';
import { installExitHooks, spawnOcm, stopOcm, tailOf } from './ocm-process.js';
import { OCM_SKIP_MESSAGE, ocmAssets } from './real-ocm.js';
import { RawClient, type RawObject } from './raw-client.js';
import { waitFor } from './wait.js';

/** The namespace the controller writes its events to. */
export const PLACEMENT_CONTROLLER_NAMESPACE = 'open-cluster-management-hub';
export const PLACEMENT_API = 'cluster.open-cluster-management.io/v1beta1';
/** The label on a PlacementDecision naming its Placement. */
export const PLACEMENT_DECISION_LABEL = 'cluster.open-cluster-management.io/placement';

const CANARY_NAMESPACE = 'pullfleet-placement-canary';
const CANARY = 'pullfleet-canary';

/** A Placement's status condition as the controller writes it. */
export interface PlacementCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

/** What the controller decided for one Placement: its decisions and its status. */
export interface PlacementOutcome {
  /** The cluster names of every PlacementDecision of the Placement, sorted. */
  readonly clusters: string[];
  readonly numberOfSelectedClusters?: number;
  readonly conditions: readonly PlacementCondition[];
}

/** One running `placement controller` process. */
export interface RealPlacementController {
  readonly pid: number;
  readonly logFile: string;
  /** Milliseconds from spawn to its canary Placement being scheduled. */
  readonly readyMs: number;
  /** The last lines of its log (without the harmless client-CA errors every controller on envtest logs). */
  tail(lines?: number): string;
  /** Keeps the log folder on `stop()` (a test failed). */
  keep(): void;
  /** SIGTERM, then SIGKILL after `boundMs`; removes the log folder unless kept. Idempotent. */
  stop(boundMs?: number): Promise<void>;
}

/** Log lines every controller on envtest writes and that mean nothing. */
const HARMLESS = /extension-apiserver-authentication|POD_NAME/;

/**
 * Declares a suite that runs OCM's placement controller against the runner's hub, or one skipped test
 * saying how to enable it (`npm run test:ocm` fails a CI run with a skipped test).
 */
export function describeRealPlacement(name: string, body: (hubKubeconfigPath: string) => void): void {
  const hub = realServerKubeconfig();
  if (!hub || !ocmAssets()) {
    describe(name, () => test.skip(OCM_SKIP_MESSAGE, () => undefined));
    return;
  }
  describe(`${name} (real OCM placement controller)`, () => body(hub));
}

/** Installs what the controller needs on the hub: the cluster CRDs, AddOnPlacementScore and its namespace. */
export async function preparePlacementHub(hubConfig: KubeConfig, timeoutMs = 120_000): Promise<void> {
  await applyCrds(hubConfig, [...CLUSTER_CRDS.map(readCrd), readOcmCrd('hub/AddOnPlacementScore.yaml')], timeoutMs);
  const hub = new RawClient(hubConfig);
  await ensureNamespace(hub, PLACEMENT_CONTROLLER_NAMESPACE);
  await ensureNamespace(hub, CANARY_NAMESPACE);
}

/** The decisions and status of Placement `namespace/name`, or undefined while it has neither conditions nor decisions. */
export async function placementOutcome(
  hub: RawClient,
  namespace: string,
  name: string,
): Promise<PlacementOutcome | undefined> {
  const placement = await hub.get<{
    status?: { numberOfSelectedClusters?: number; conditions?: PlacementCondition[] };
  }>(PLACEMENT_API, 'Placement', namespace, name);
  const conditions = placement?.status?.conditions ?? [];
  const decisions = await hub.list<{ status?: { decisions?: Array<{ clusterName: string }> } }>(
    PLACEMENT_API,
    'PlacementDecision',
    namespace,
    `${PLACEMENT_DECISION_LABEL}=${name}`,
  );
  if (conditions.length === 0 && decisions.length === 0) return undefined;
  return {
    clusters: decisions.flatMap((d) => (d.status?.decisions ?? []).map((x) => x.clusterName)).sort(),
    ...(placement?.status?.numberOfSelectedClusters !== undefined
      ? { numberOfSelectedClusters: placement.status.numberOfSelectedClusters }
      : {}),
    conditions,
  };
}

/**
 * Whether the controller has scheduled the Placement and written what it decided: both of its conditions
 * are set, a PlacementDecision exists, and the decisions hold as many clusters as the status reports
 * (the status is written after the decisions, so a later schedule in flight shows as a mismatch).
 */
export function isScheduled(outcome: PlacementOutcome | undefined): outcome is PlacementOutcome {
  if (!outcome) return false;
  const types = new Set(outcome.conditions.map((c) => c.type));
  return (
    types.has('PlacementSatisfied') &&
    types.has('PlacementMisconfigured') &&
    (outcome.numberOfSelectedClusters ?? 0) === outcome.clusters.length
  );
}

/** Starts the real placement controller against the hub `hubKubeconfigPath` and waits until it schedules. */
export async function startPlacementController(
  hubKubeconfigPath: string,
  options: { timeoutMs?: number; args?: readonly string[] } = {},
): Promise<RealPlacementController> {
  const assets = ocmAssets();
  if (!assets) throw new Error(OCM_SKIP_MESSAGE);
  if (!existsSync(join(assets, 'placement')))
    throw new Error(`OCM_ASSETS=${assets} has no placement binary; run ../shared/ocm/setup`);
  installExitHooks();
  const timeoutMs = options.timeoutMs ?? 120_000;
  const hubConfig = new KubeConfig();
  hubConfig.loadFromFile(hubKubeconfigPath);
  const hub = new RawClient(hubConfig);
  const dir = mkdtempSync(join(tmpdir(), 'pullfleet-placement-'));
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const logFile = join(dir, 'placement.log');
  let kept = process.env.PULLFLEET_OCM_KEEP === '1';

  // The canary exists before the start, so the first schedule after the informers sync covers it.
  await hub.delete(PLACEMENT_API, 'Placement', CANARY_NAMESPACE, CANARY);
  await hub.create({
    apiVersion: PLACEMENT_API,
    kind: 'Placement',
    metadata: { name: CANARY, namespace: CANARY_NAMESPACE },
    spec: {},
  });

  const port = await freePort();
  const spawnedAt = Date.now();
  let exitedAt: number | undefined;
  const controllerProcess = spawnOcm(
    join(assets, 'placement'),
    [
      'controller',
      `--kubeconfig=${hubKubeconfigPath}`,
      '--disable-leader-election',
      `--namespace=${PLACEMENT_CONTROLLER_NAMESPACE}`,
      `--listen=127.0.0.1:${port}`,
      ...(options.args ?? []),
    ],
    logFile,
    tmp,
    () => (exitedAt = Date.now()),
  );
  let stopped: Promise<void> | undefined;
  const controller: RealPlacementController & { readyMs: number } = {
    pid: controllerProcess.child.pid!,
    logFile,
    readyMs: 0,
    tail: (lines = 30) => tailOf(logFile, lines, HARMLESS),
    keep: () => void (kept = true),
    stop: (boundMs = 10_000) =>
      (stopped ??= (async () => {
        if (exitedAt === undefined) await stopOcm(controllerProcess, boundMs);
        if (kept) process.stderr.write(`real-placement: log kept in ${logFile}\n`);
        else rmSync(dir, { recursive: true, force: true });
      })()),
  };
  try {
    const outcome = await waitFor(
      'the placement controller to schedule its canary Placement',
      async () => {
        if (exitedAt !== undefined) return 'exited';
        const o = await placementOutcome(hub, CANARY_NAMESPACE, CANARY);
        return o?.conditions.some((c) => c.type === 'PlacementSatisfied') && 'ready';
      },
      { timeoutMs, intervalMs: 50, describe: () => controller.tail(15) },
    );
    if (outcome === 'exited')
      throw new Error(`the placement controller exited before it was ready:\n${controller.tail(20)}`);
    controller.readyMs = Date.now() - spawnedAt;
    await hub.delete(PLACEMENT_API, 'Placement', CANARY_NAMESPACE, CANARY);
    for (const d of await hub.list<RawObject>(PLACEMENT_API, 'PlacementDecision', CANARY_NAMESPACE))
      await hub.delete(PLACEMENT_API, 'PlacementDecision', CANARY_NAMESPACE, d.metadata.name);
    return controller;
  } catch (error) {
    controller.keep();
    await controller.stop();
    throw error;
  }
}
