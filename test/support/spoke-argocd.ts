/**
 * The spokes of a rollout test, played on a real API server: for every ManifestWork the hub controller
 * writes into a spoke's namespace, the klusterlet work agent (test/support/work-agent.ts) applies the
 * payload Application and a spoke-local Argo CD runs it, and the agent reports the spoke Application's
 * state back as status feedback.
 *
 * The spoke Argo CD behaves as Argo CD does, as far as a rollout can tell:
 * - `status.sync.revision` is the revision the spec resolves to (the comparison, not the last sync), and
 *   `status.sync.status` is Synced only when the last successful sync applied the current spec at that
 *   revision; `status.reconciledAt` moves on every reconcile (every change the work delivers, a refresh
 *   annotation included);
 * - a payload `operation` it has not run yet (one the previous payload did not carry) starts a sync, at the
 *   operation's pinned `sync.revision` when it names one: `operationState {phase, startedAt}` on the spoke's
 *   own clock;
 * - with automated sync (`syncPolicy.automated` and not `enabled: false`) a spec it has not synced starts a
 *   sync by itself; without it (ApplicationSet RollingSync disables it) a new spec only turns OutOfSync;
 * - per cluster, a sync can fail (`phase Failed`, health Degraded) and the clock can run ahead or behind.
 *
 * Every version of every work is recorded from one watch, in the order the API server stored them (status
 * reports included), so a test can check an invariant over the whole history.
 */
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { PULL_LABEL, SPEC_HASH_ANNOTATION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import type { ManifestWork } from '../../src/model/core/types.js';
import { errorCode, type TestCluster } from './cluster.js';
import { streamObjects, type ObjectStream, type WatchEventType } from './object-watch.js';
import { WorkAgent, type SpokeApplicationState } from './work-agent.js';

/** How one spoke's Argo CD behaves. */
export interface SpokeBehaviour {
  /** What a sync ends in. @default 'Succeeded' */
  readonly phase?: 'Succeeded' | 'Failed' | 'Error';
  /** Health after a sync. @default 'Healthy' after a successful sync, 'Degraded' after a failed one */
  readonly health?: string;
  /** The spoke clock minus the hub clock, in milliseconds. @default 0 */
  readonly skewMs?: number;
  /** The work agent is cut off: nothing is applied or reported until this is lifted. @default false */
  readonly offline?: boolean;
  /**
   * How long the spoke Argo CD takes from a new spec to reporting its comparison (refresh, manifest
   * generation, diff). @default 0
   */
  readonly refreshDelayMs?: number;
  /** How long it takes from an operation (or an automated sync) to starting the sync. @default 0 */
  readonly syncDelayMs?: number;
}

/** What the work agent reported for the payload Application (status feedback, by name). */
export interface ReportedFeedback {
  readonly health?: string;
  readonly sync?: string;
  readonly revision?: string;
  readonly specHash?: string;
  readonly phase?: string;
  readonly startedAt?: string;
}

/** One version of one work, as the watch delivered it. */
export interface WorkVersion {
  /** Position in the history (server order). */
  readonly seq: number;
  readonly type: WatchEventType;
  readonly cluster: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly generation?: number;
  /** The payload Application's name (the hub app's name). */
  readonly app?: string;
  /** The payload's `spec.source.targetRevision`. */
  readonly targetRevision?: string;
  /** The payload's spec hash annotation. */
  readonly specHash?: string;
  /** Whether the payload carries an `operation`. */
  readonly operation: boolean;
  /** The status feedback of this version (reported for the payload's current or an earlier spec). */
  readonly feedback: ReportedFeedback;
}

/** One sync a spoke Argo CD ran. */
export interface SpokeSync {
  /** Position among the syncs of every spoke. */
  readonly seq: number;
  readonly cluster: string;
  readonly app: string;
  readonly targetRevision: string;
  /** The revision synced (the operation's pin, else what the spec resolves to). */
  readonly revision: string;
  readonly phase: string;
  readonly startedAt: string;
  /** Started by an operation the work delivered (false: automated sync). */
  readonly byOperation: boolean;
}

interface SpokeApp {
  readonly cluster: string;
  readonly app: string;
  health: string;
  /** The spec the spoke compared last (a new one costs `refreshDelayMs`). */
  comparedSpec?: string;
  syncedSpec?: string;
  syncedRevision?: string;
  phase?: string;
  startedAt?: string;
  lastOperation?: string;
  /** The forwarding mark of the operation it ran last. */
  forwardId?: string;
  /** The work generation whose changes the spoke has acted on. */
  decidedGeneration?: number;
  /** The work generation last reported. */
  reportedGeneration?: number;
  reports: number;
}

/** The commit a `targetRevision` resolves to (a stand-in for the repo server). */
export function resolveRevision(targetRevision: string): string {
  return createHash('sha1').update(`pullfleet-test/${targetRevision}`).digest('hex');
}

// Its own formatter on purpose: the spoke is another program.
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

type Payload = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: {
    source?: { targetRevision?: string };
    syncPolicy?: { automated?: { enabled?: boolean } };
  };
  operation?: { sync?: { revision?: string } };
};

function payloadOf(work: ManifestWork): Payload | undefined {
  return (work.spec?.workload?.manifests as Payload[] | undefined)?.find(
    (m) => m.apiVersion === 'argoproj.io/v1alpha1' && m.kind === 'Application',
  );
}

/** The feedback the work's status carries for its payload Application (read directly, not through pullfleet's code). */
export function feedbackOf(work: ManifestWork): ReportedFeedback {
  const payload = payloadOf(work);
  const manifests =
    (
      work.status as
        | {
            resourceStatus?: {
              manifests?: Array<{
                resourceMeta?: { kind?: string; name?: string; namespace?: string };
                statusFeedback?: { values?: Array<{ name: string; fieldValue?: { string?: string } }> };
              }>;
            };
          }
        | undefined
    )?.resourceStatus?.manifests ?? [];
  const entry = manifests.find(
    (m) =>
      m.resourceMeta?.kind === 'Application' &&
      m.resourceMeta.name === payload?.metadata?.name &&
      (m.resourceMeta.namespace ?? '') === (payload?.metadata?.namespace ?? ''),
  );
  const value = (name: string) => entry?.statusFeedback?.values?.find((v) => v.name === name)?.fieldValue?.string;
  const out: Record<string, string> = {};
  const put = (key: string, name: string) => {
    const v = value(name);
    if (v !== undefined) out[key] = v;
  };
  put('health', 'healthStatus');
  put('sync', 'syncStatus');
  put('revision', 'syncRevision');
  put('specHash', 'specHash');
  put('phase', 'operationStatePhase');
  put('startedAt', 'operationStateStartedAt');
  return out;
}

export interface SpokeFleetOptions {
  /** The spokes played (ManagedCluster names = work namespaces). */
  readonly clusters: readonly string[];
  /** Called when a spoke starts a sync, before its result is reported (for invariants at that moment). */
  readonly onSync?: (sync: SpokeSync) => void;
}

/** The work agents and spoke Argo CDs of a set of clusters. */
export class SpokeFleet {
  /** Every version of every work of the played clusters, in server order. */
  readonly history: WorkVersion[] = [];
  /** Every sync any spoke ran, in order. */
  readonly syncs: SpokeSync[] = [];
  /** Every `operationState.startedAt` a spoke reported, by payload Application name. */
  readonly reportedStartedAt = new Map<string, Set<string>>();
  private readonly agent: WorkAgent;
  private readonly clusters: Set<string>;
  private readonly behaviours = new Map<string, SpokeBehaviour>();
  private readonly apps = new Map<string, SpokeApp>();
  private readonly queue = new Map<string, { running: boolean; again: boolean; force: boolean }>();
  private readonly errors: unknown[] = [];
  private stream?: ObjectStream;
  private pending = 0;

  constructor(
    private readonly cluster: TestCluster,
    private readonly kubeConfig: KubeConfig,
    private readonly options: SpokeFleetOptions,
  ) {
    this.agent = new WorkAgent(cluster);
    this.clusters = new Set(options.clusters);
  }

  /** Starts watching and answering works. */
  async start(): Promise<void> {
    this.stream = await streamObjects<ManifestWork>(
      this.kubeConfig,
      '/apis/work.open-cluster-management.io/v1/manifestworks',
      { labelSelector: `${PULL_LABEL}=true` },
      (type, work) => {
        const namespace = work.metadata.namespace ?? '';
        if (!this.clusters.has(namespace)) return;
        const payload = payloadOf(work);
        this.history.push({
          seq: this.history.length,
          type,
          cluster: namespace,
          name: work.metadata.name,
          resourceVersion: work.metadata.resourceVersion ?? '',
          ...(work.metadata.generation !== undefined ? { generation: work.metadata.generation } : {}),
          ...(payload?.metadata?.name ? { app: payload.metadata.name } : {}),
          ...(payload?.spec?.source?.targetRevision ? { targetRevision: payload.spec.source.targetRevision } : {}),
          ...(payload?.metadata?.annotations?.[SPEC_HASH_ANNOTATION]
            ? { specHash: payload.metadata.annotations[SPEC_HASH_ANNOTATION] }
            : {}),
          operation: payload?.operation !== undefined,
          feedback: feedbackOf(work),
        });
        if (type !== 'DELETED') this.enqueue(namespace, work.metadata.name, false);
      },
    );
  }

  /** Stops answering; throws what went wrong while answering, if anything did. */
  async stop(): Promise<void> {
    this.stream?.stop();
    for (let i = 0; this.pending > 0 && i < 200; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const streamError = this.stream?.error();
    if (streamError) throw streamError instanceof Error ? streamError : new Error(String(streamError));
    if (this.errors.length > 0)
      throw this.errors[0] instanceof Error ? this.errors[0] : new Error(String(this.errors[0]));
  }

  /** Problems met so far (a failed watch, a failed report), for failure messages. */
  problems(): string[] {
    const stream = this.stream?.error();
    return [...(stream ? [String(stream)] : []), ...this.errors.map((e) => String((e as Error)?.message ?? e))];
  }

  /**
   * Changes how a spoke behaves from now on. With `retry`, its Argo CD retries at once: every app of it with
   * automated sync syncs again, and every app's state is reported again (an offline spoke catches up).
   */
  setBehaviour(cluster: string, behaviour: SpokeBehaviour, options: { retry?: boolean } = {}): void {
    this.behaviours.set(cluster, behaviour);
    if (!options.retry) return;
    for (const entry of this.history) if (entry.cluster === cluster) this.enqueue(cluster, entry.name, true);
  }

  /** What the spoke Argo CD of `cluster` runs for Application `app` (undefined before it saw it). */
  applicationState(
    cluster: string,
    app: string,
  ): { readonly health: string; readonly syncedRevision?: string; readonly phase?: string } | undefined {
    for (const state of this.apps.values()) if (state.cluster === cluster && state.app === app) return { ...state };
    return undefined;
  }

  private spokeNow(cluster: string): number {
    return Date.now() + (this.behaviours.get(cluster)?.skewMs ?? 0);
  }

  private enqueue(namespace: string, name: string, force: boolean): void {
    const key = `${namespace}/${name}`;
    const entry = this.queue.get(key) ?? { running: false, again: false, force: false };
    this.queue.set(key, entry);
    entry.force ||= force;
    if (entry.running) {
      entry.again = true;
      return;
    }
    entry.running = true;
    this.pending += 1;
    void (async () => {
      try {
        do {
          entry.again = false;
          const forced = entry.force;
          entry.force = false;
          await this.answer(namespace, name, forced);
        } while (entry.again);
      } catch (error) {
        this.errors.push(error);
      } finally {
        entry.running = false;
        this.pending -= 1;
      }
    })();
  }

  /** Applies the latest version of one work on its spoke and reports the spoke Application's state. */
  private async answer(namespace: string, name: string, forced: boolean): Promise<void> {
    const key = `${namespace}/${name}`;
    for (let attempt = 0; attempt < 20; attempt++) {
      const work = await this.cluster.get<ManifestWork>({
        apiVersion: WORK_API_VERSION,
        kind: 'ManifestWork',
        namespace,
        name,
      });
      if (!work || work.metadata.deletionTimestamp) return;
      const payload = payloadOf(work);
      const appName = payload?.metadata?.name;
      if (!payload || !appName) return;
      if (this.behaviours.get(namespace)?.offline) return;
      const app = this.apps.get(key) ?? { cluster: namespace, app: appName, health: 'Missing', reports: 0 };
      this.apps.set(key, app);
      const generation = work.metadata.generation ?? 0;
      if (!forced && app.reportedGeneration === generation) return;
      const targetRevision = payload.spec?.source?.targetRevision ?? 'HEAD';
      const resolved = resolveRevision(targetRevision);
      const specHash = payload.metadata?.annotations?.[SPEC_HASH_ANNOTATION];
      // What the spoke does with a version is decided once; a report lost to a conflict is only written again.
      if (forced || app.decidedGeneration !== generation) {
        await this.decide(namespace, appName, app, payload, { targetRevision, resolved, specHash, forced });
        app.decidedGeneration = generation;
        forced = false;
      }
      const state: SpokeApplicationState = {
        healthStatus: app.health,
        syncStatus: app.syncedSpec === specHash && app.syncedRevision === resolved ? 'Synced' : 'OutOfSync',
        syncRevision: resolved,
        reconciledAt: rfc3339(this.spokeNow(namespace)),
        ...(specHash ? { specHash } : {}),
        ...(app.phase ? { operationStatePhase: app.phase } : {}),
        ...(app.startedAt ? { operationStateStartedAt: app.startedAt } : {}),
        ...(app.forwardId ? { operationForwardId: app.forwardId } : {}),
      };
      try {
        await this.cluster.replaceStatus({ ...work, status: this.agent.statusFor(work, state) });
      } catch (error) {
        if (errorCode(error) === 409) continue;
        throw error;
      }
      app.reportedGeneration = generation;
      app.reports += 1;
      if (app.startedAt) {
        const seen = this.reportedStartedAt.get(appName) ?? new Set<string>();
        seen.add(app.startedAt);
        this.reportedStartedAt.set(appName, seen);
      }
      return;
    }
    throw new Error(`spoke ${namespace}: could not report the status of ManifestWork ${name} after 20 conflicts`);
  }

  /** What the spoke Argo CD does with a new version of its Application (or on a retry). */
  private async decide(
    cluster: string,
    appName: string,
    app: SpokeApp,
    payload: Payload,
    at: { targetRevision: string; resolved: string; specHash?: string; forced: boolean },
  ): Promise<void> {
    const behaviour = this.behaviours.get(cluster) ?? {};
    const automated =
      payload.spec?.syncPolicy?.automated !== undefined && payload.spec.syncPolicy.automated.enabled !== false;
    const pause = (ms: number | undefined) =>
      ms ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
    if (app.comparedSpec !== at.specHash) {
      await pause(behaviour.refreshDelayMs);
      app.comparedSpec = at.specHash;
    }
    const sync = async (revision: string, byOperation: boolean) => {
      await pause(behaviour.syncDelayMs);
      const phase = behaviour.phase ?? 'Succeeded';
      const startedAt = rfc3339(this.spokeNow(cluster));
      const record: SpokeSync = {
        seq: this.syncs.length,
        cluster,
        app: appName,
        targetRevision: at.targetRevision,
        revision,
        phase,
        startedAt,
        byOperation,
      };
      this.syncs.push(record);
      this.options.onSync?.(record);
      app.phase = phase;
      app.startedAt = startedAt;
      app.health = behaviour.health ?? (phase === 'Succeeded' ? 'Healthy' : 'Degraded');
      if (phase === 'Succeeded') {
        app.syncedSpec = at.specHash;
        app.syncedRevision = revision;
      }
    };
    if (payload.operation !== undefined) {
      const operation = JSON.stringify(payload.operation);
      if (operation !== app.lastOperation) {
        app.lastOperation = operation;
        // The spoke's operationState.operation is the operation it ran, info included.
        const info = (payload.operation as { info?: Array<{ name?: string; value?: string }> }).info;
        app.forwardId = info?.find((entry) => entry.name === 'pullfleet.io/forwarded')?.value;
        await sync(payload.operation.sync?.revision || at.resolved, true);
      }
      return;
    }
    // The operation is gone from the payload: the same one delivered again later is a new request.
    app.lastOperation = undefined;
    if (automated && (at.forced || app.syncedSpec !== at.specHash)) await sync(at.resolved, false);
  }
}
