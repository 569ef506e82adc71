/**
 * The spokes of an ApplicationSet rollout test, played one step at a time on a real API server: for the pull
 * ManifestWork of each spoke the test says when the spoke's Argo CD finishes comparing the payload it was
 * given (`compare`) and when it runs the operation the payload carries (`runOperation`). Each step writes
 * the report the OCM work agent would (test/support/work-agent.ts) through the work's status subresource.
 * Nothing happens on a timer, and every time a spoke reports comes from the test's clock (plus the spoke's
 * skew), so a test decides the order of everything the spokes do.
 *
 * The spoke Argo CD behaves as Argo CD does, as far as a rollout can tell:
 * - until it compares a new payload it reports nothing new: the hub sees the new spec, and the spoke's last
 *   word on the old one (`status.sync.revision` is the comparison's revision, not the last sync's);
 * - a comparison reports the revision the spec resolves to, `Synced` only when the last successful sync
 *   applied that spec at that revision, and a `reconciledAt`; with automated sync (`syncPolicy.automated`
 *   and not `enabled: false`) a spec it has not synced is synced at once (RollingSync disables it);
 * - an operation it has not run (one with another forwarding mark than the last) starts a sync of what the
 *   spec resolves to: `operationState {phase, startedAt}` on the spoke's clock, the forwarding mark of the
 *   operation fed back, health Healthy after a successful sync.
 */
import type { ManifestWork } from '../../src/model/core/types.js';
import { SPEC_HASH_ANNOTATION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import { errorCode, type TestCluster } from './cluster.js';
import { resolveRevision, type SpokeSync } from './spoke-argocd.js';
import { WorkAgent, type SpokeApplicationState } from './work-agent.js';

type Payload = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: { source?: { targetRevision?: string }; syncPolicy?: { automated?: { enabled?: boolean } } };
  operation?: { info?: Array<{ name?: string; value?: string }> };
};

/** What one spoke's Argo CD runs for the payload Application, and what it reported last. */
export interface SteppedSpokeState {
  readonly app?: string;
  /** The spec hash of the payload it compared last. */
  readonly comparedSpec?: string;
  /** The revision that payload resolves to. */
  readonly comparedRevision?: string;
  readonly syncedSpec?: string;
  readonly syncedRevision?: string;
  readonly health: string;
  readonly phase?: string;
  readonly startedAt?: string;
  /** The forwarding mark of the operation it ran last. */
  readonly forwardId?: string;
  /** The values of its last report. */
  readonly reported?: {
    readonly revision: string;
    readonly sync: string;
    readonly health: string;
    readonly specHash?: string;
    readonly startedAt?: string;
  };
}

export interface SteppedSpokesOptions {
  /** The spokes played (ManagedCluster names = work namespaces). */
  readonly clusters: readonly string[];
  /** The test's clock (milliseconds). */
  readonly clock: () => number;
  /** Per cluster, the spoke clock minus the test's clock (milliseconds). @default 0 */
  readonly skewMs?: Readonly<Record<string, number>>;
  /** Called when a spoke starts a sync, before it reports it (for invariants at that moment). */
  readonly onSync?: (sync: SpokeSync) => void;
}

const FORWARD_INFO_NAME = 'pullfleet.io/forwarded';

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function payloadOf(work: ManifestWork | undefined): Payload | undefined {
  return work?.spec?.workload?.manifests?.find(
    (m) => m.apiVersion === 'argoproj.io/v1alpha1' && m.kind === 'Application',
  );
}

function forwardIdOf(payload: Payload | undefined): string | undefined {
  return payload?.operation?.info?.find((entry) => entry.name === FORWARD_INFO_NAME)?.value;
}

/** The spoke Argo CDs and work agents of a set of clusters, moved by the test. */
export class SteppedSpokes {
  /** Every sync any spoke ran, in order. */
  readonly syncs: SpokeSync[] = [];
  /** Every `operationState.startedAt` a spoke reported, by payload Application name. */
  readonly reportedStartedAt = new Map<string, Set<string>>();
  private readonly agent: WorkAgent;
  private readonly states = new Map<string, SteppedSpokeState>();

  constructor(
    private readonly cluster: TestCluster,
    private readonly options: SteppedSpokesOptions,
  ) {
    this.agent = new WorkAgent(cluster);
  }

  /** The pull work of `cluster` carrying an Application (undefined while there is none). */
  async work(cluster: string): Promise<ManifestWork | undefined> {
    const works = await this.cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: cluster });
    return works.find((w) => payloadOf(w) !== undefined && !w.metadata.deletionTimestamp);
  }

  /** The payload Application of a work. */
  payload(work: ManifestWork | undefined): Payload | undefined {
    return payloadOf(work);
  }

  /** What the spoke of `cluster` runs and reported. */
  state(cluster: string): SteppedSpokeState {
    return this.states.get(cluster) ?? { health: 'Missing' };
  }

  /** Whether the work of `cluster` carries a payload spec its Argo CD has not compared yet. */
  async hasNewSpec(cluster: string): Promise<boolean> {
    const payload = payloadOf(await this.work(cluster));
    return (
      payload !== undefined &&
      payload.metadata?.annotations?.[SPEC_HASH_ANNOTATION] !== this.state(cluster).comparedSpec
    );
  }

  /** Whether the work of `cluster` carries an operation its Argo CD has not run. */
  async hasNewOperation(cluster: string): Promise<boolean> {
    const payload = payloadOf(await this.work(cluster));
    return payload?.operation !== undefined && forwardIdOf(payload) !== this.state(cluster).forwardId;
  }

  /** The spoke's Argo CD finishes comparing the payload its work carries now, and the agent reports it. */
  async compare(cluster: string): Promise<void> {
    const work = await this.work(cluster);
    const payload = payloadOf(work);
    if (!work || !payload) throw new Error(`spoke ${cluster}: no work with an Application to compare`);
    const specHash = payload.metadata?.annotations?.[SPEC_HASH_ANNOTATION];
    this.update(cluster, {
      app: payload.metadata?.name,
      comparedSpec: specHash,
      comparedRevision: resolveRevision(payload.spec?.source?.targetRevision ?? 'HEAD'),
    });
    const automated =
      payload.spec?.syncPolicy?.automated !== undefined && payload.spec.syncPolicy.automated.enabled !== false;
    if (automated && this.state(cluster).syncedSpec !== specHash) this.sync(cluster, payload, false);
    await this.report(cluster);
  }

  /** The spoke's Argo CD runs the operation its work carries (the sync starts and succeeds), and the agent reports it. */
  async runOperation(cluster: string): Promise<void> {
    const work = await this.work(cluster);
    const payload = payloadOf(work);
    if (!payload?.operation) throw new Error(`spoke ${cluster}: its work carries no operation to run`);
    this.update(cluster, {
      app: payload.metadata?.name,
      comparedSpec: payload.metadata?.annotations?.[SPEC_HASH_ANNOTATION],
      comparedRevision: resolveRevision(payload.spec?.source?.targetRevision ?? 'HEAD'),
      forwardId: forwardIdOf(payload),
    });
    this.sync(cluster, payload, true);
    await this.report(cluster);
  }

  private now(cluster: string): number {
    return this.options.clock() + (this.options.skewMs?.[cluster] ?? 0);
  }

  private update(cluster: string, change: Partial<SteppedSpokeState>): void {
    this.states.set(cluster, { ...this.state(cluster), ...change });
  }

  private sync(cluster: string, payload: Payload, byOperation: boolean): void {
    const targetRevision = payload.spec?.source?.targetRevision ?? 'HEAD';
    const revision = resolveRevision(targetRevision);
    const startedAt = rfc3339(this.now(cluster));
    const record: SpokeSync = {
      seq: this.syncs.length,
      cluster,
      app: payload.metadata?.name ?? '',
      targetRevision,
      revision,
      phase: 'Succeeded',
      startedAt,
      byOperation,
    };
    this.syncs.push(record);
    this.options.onSync?.(record);
    this.update(cluster, {
      phase: 'Succeeded',
      startedAt,
      health: 'Healthy',
      syncedSpec: payload.metadata?.annotations?.[SPEC_HASH_ANNOTATION],
      syncedRevision: revision,
    });
  }

  /** Writes the work agent's report of what the spoke runs, for the payload it compared last. */
  private async report(cluster: string): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const work = await this.work(cluster);
      const payload = payloadOf(work);
      if (!work || !payload) throw new Error(`spoke ${cluster}: its work is gone`);
      const state = this.state(cluster);
      const revision = state.comparedRevision ?? resolveRevision(payload.spec?.source?.targetRevision ?? 'HEAD');
      const sync =
        state.syncedSpec === state.comparedSpec && state.syncedRevision === revision ? 'Synced' : 'OutOfSync';
      const values: SpokeApplicationState = {
        healthStatus: state.health,
        syncStatus: sync,
        syncRevision: revision,
        reconciledAt: rfc3339(this.now(cluster)),
        ...(state.comparedSpec ? { specHash: state.comparedSpec } : {}),
        ...(state.phase ? { operationStatePhase: state.phase } : {}),
        ...(state.startedAt ? { operationStateStartedAt: state.startedAt } : {}),
        ...(state.forwardId ? { operationForwardId: state.forwardId } : {}),
        // `operationState.syncResult.revision`: the revision its last sync applied.
        ...(state.phase && state.syncedRevision ? { operationStateSyncRevision: state.syncedRevision } : {}),
      };
      try {
        await this.cluster.replaceStatus({ ...work, status: this.agent.statusFor(work, values) });
      } catch (error) {
        if (errorCode(error) === 409) continue;
        throw error;
      }
      this.update(cluster, {
        reported: {
          revision,
          sync,
          health: state.health,
          ...(state.comparedSpec ? { specHash: state.comparedSpec } : {}),
          ...(state.startedAt ? { startedAt: state.startedAt } : {}),
        },
      });
      if (state.startedAt && state.app) {
        const seen = this.reportedStartedAt.get(state.app) ?? new Set<string>();
        seen.add(state.startedAt);
        this.reportedStartedAt.set(state.app, seen);
      }
      return;
    }
    throw new Error(`spoke ${cluster}: could not report the status of its work after 20 conflicts`);
  }
}
