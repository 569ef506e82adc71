/**
 * Leader election on a coordination.k8s.io/v1 Lease, so two replicas never reconcile at once (the rules
 * of client-go's tools/leaderelection):
 * - Expiry of another holder's Lease is judged from when THIS replica last saw the Lease record change,
 *   on its own monotonic clock, never from the holder's renewTime, so clock skew between nodes cannot
 *   make two leaders. A replica that has just started waits a full lease duration before taking a Lease
 *   that someone holds.
 * - Every Lease request has a timeout. A leader renews under the renew deadline, counted from the start
 *   of its last successful renew: when the deadline passes (a hung request, 403, the API server gone) or
 *   it sees another holder, it stops at once (`onStopped`), well before another replica may take over
 *   (renew deadline < lease duration).
 * - All writes use resourceVersion, so two candidates racing for the Lease get one 409 and one win.
 * - A replica that cannot read or write the Lease for `unhealthyAfterSeconds` says so (`health()`, a
 *   rate-limited log line, the error hook) so it is not mistaken for a healthy standby.
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../../model/core/types.js';
import { kubeMicroTime } from '../../model/core/time.js';
import { KubeApiError, isConflict, isNotFound, type CallOptions } from '../../kube/client.js';
import { LEASE, type ResourceKind } from '../../kube/resources.js';
import { SYSTEM_TIMERS, type Timers } from '../../kube/timers.js';

export interface LeaseObject extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** The three Lease calls the elector makes (KubeClient implements them). */
export interface LeaseClient {
  get<T extends KubeObject>(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    call?: CallOptions,
  ): Promise<T>;
  create<T extends KubeObject>(kind: ResourceKind, object: T, call?: CallOptions): Promise<T>;
  replace<T extends KubeObject>(kind: ResourceKind, object: T, call?: CallOptions): Promise<T>;
}

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineSeconds: number;
  readonly retryPeriodSeconds: number;
  /** Timeout of one Lease request (a leader's is also cut to what is left of its renew deadline). @default 10 */
  readonly requestTimeoutSeconds?: number;
  /** No successful Lease read or write for this long makes the replica unhealthy. @default 3 × leaseDurationSeconds */
  readonly unhealthyAfterSeconds?: number;
  /** Shortest time between two log lines about failing Lease requests. @default 30 */
  readonly logEverySeconds?: number;
}

/** A monotonic clock and its timers (injectable for tests). */
export type ElectionClock = Timers;

/**
 * Whether a candidate may take a Lease that is free (absent, released or expired) now. Sharded replicas
 * use it so a replica that already holds shards lets one holding fewer take a free shard first.
 */
export interface AcquireGate {
  /** `freeForMs`: how long this candidate has seen the Lease free. False: not yet (try again next period). */
  shouldAcquire(freeForMs: number): boolean;
  /** The attempt `shouldAcquire` allowed has ended (acquired or not). */
  attemptDone(acquired: boolean): void;
}

export interface LeaderElectorDeps {
  /** @default performance.now with setTimeout */
  readonly clock?: ElectionClock;
  /** Wall clock, only for the acquireTime / renewTime written for people and other tools. @default new Date() */
  readonly wallClock?: () => Date;
  /** @default Math.random */
  readonly random?: () => number;
  /** Called on every failed Lease request (metrics). */
  readonly onError?: (error: unknown) => void;
  /** Asked before a free Lease is taken. @default - always take it */
  readonly gate?: AcquireGate;
}

export interface LeaderElectionHealth {
  readonly healthy: boolean;
  /** Seconds since the last successful Lease read or write. */
  readonly secondsSinceSuccess: number;
  /** Why it is unhealthy, naming the Lease and the fix. */
  readonly reason?: string;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type Attempt =
  | { result: 'acquired' }
  | { result: 'held'; holder: string }
  | { result: 'conflict' }
  /** Free, but the gate said not yet. */
  | { result: 'waiting' };

class Timeout extends Error {}

export class LeaderElector {
  private readonly abort = new AbortController();
  private readonly clock: ElectionClock;
  private leading = false;
  private lost = false;
  private running?: Promise<void>;
  /** The Lease record as last seen, and when (monotonic) it last changed. */
  private observedRecord?: string;
  private observedAt = 0;
  /** Monotonic start of the last successful acquire or renew. */
  private renewedAt = 0;
  private lastSuccess: number;
  /** Monotonic time since which this candidate has seen the Lease free (for the gate). */
  private freeSince?: number;
  private lastError?: string;
  private lastStatus?: number;
  private failuresSinceLog = 0;
  private lastLogAt = Number.NEGATIVE_INFINITY;
  private reportedUnhealthy = false;

  constructor(
    private readonly client: LeaseClient,
    private readonly options: LeaderElectionOptions,
    private readonly logger: Logger,
    private readonly deps: LeaderElectorDeps = {},
  ) {
    this.clock = deps.clock ?? SYSTEM_TIMERS;
    this.lastSuccess = this.clock.now();
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private get lease(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }

  /** Whether Lease requests succeed; unhealthy after `unhealthyAfterSeconds` without one. */
  health(): LeaderElectionHealth {
    const secondsSinceSuccess = (this.clock.now() - this.lastSuccess) / 1000;
    const limit = this.options.unhealthyAfterSeconds ?? 3 * this.options.leaseDurationSeconds;
    if (secondsSinceSuccess <= limit) return { healthy: true, secondsSinceSuccess };
    return {
      healthy: false,
      secondsSinceSuccess,
      reason: `cannot read or write the leader Lease ${this.lease} for ${Math.round(secondsSinceSuccess)}s: ${this.lastError ?? 'no answer'}${this.hint()}`,
    };
  }

  private hint(): string {
    const status = this.lastStatus;
    if (status === 403 || status === 404) {
      return ` (check that --namespace / POD_NAMESPACE is the namespace the controller is installed in, "${this.options.namespace}" now, and that its Role grants create, get and update on leases there)`;
    }
    if (status === 401) return ' (the service account token is not accepted)';
    return '';
  }

  /** Runs until stopped or until leadership is lost: `onStarted` once leading, `onStopped` once lost. */
  start(onStarted: () => void, onStopped: () => void): void {
    this.running ??= this.loop(onStarted, onStopped);
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.abort.signal;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const handle = this.clock.setTimeout(done, Math.max(0, ms));
      const clock = this.clock;
      function done() {
        signal.removeEventListener('abort', done);
        clock.clearTimeout(handle);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** `work` with its own abort signal, given up after `ms` (or when the elector stops). */
  private async bounded<T>(ms: number, work: (call: CallOptions) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let handle: unknown;
    const stop = () => controller.abort();
    this.abort.signal.addEventListener('abort', stop, { once: true });
    const limit = new Promise<never>((_, reject) => {
      handle = this.clock.setTimeout(
        () => {
          reject(new Timeout(`Lease ${this.lease}: no answer within ${(ms / 1000).toFixed(1)}s`));
          controller.abort();
        },
        Math.max(0, ms),
      );
      controller.signal.addEventListener('abort', () => reject(new Timeout(`Lease ${this.lease}: request given up`)), {
        once: true,
      });
    });
    limit.catch(() => undefined);
    try {
      // Exempt from the client's in-flight limit and Retry-After pauses: reconciles the server throttles
      // must never keep the Lease from being renewed.
      return await Promise.race([work({ signal: controller.signal, timeoutMs: Math.max(1, ms), exempt: true }), limit]);
    } finally {
      this.clock.clearTimeout(handle);
      this.abort.signal.removeEventListener('abort', stop);
      controller.abort();
    }
  }

  private async loop(onStarted: () => void, onStopped: () => void): Promise<void> {
    const { retryPeriodSeconds, renewDeadlineSeconds, identity } = this.options;
    const requestMs = (this.options.requestTimeoutSeconds ?? 10) * 1000;
    const random = this.deps.random ?? Math.random;
    let deadlineTimer: unknown;
    const lose = (why: string) => {
      if (!this.leading || this.lost) return;
      this.leading = false;
      this.lost = true;
      this.clock.clearTimeout(deadlineTimer);
      this.logger.error({ identity, lease: this.lease }, `lost leadership: ${why}`);
      onStopped();
      this.abort.abort();
    };
    const armDeadline = () => {
      this.clock.clearTimeout(deadlineTimer);
      const left = this.renewedAt + renewDeadlineSeconds * 1000 - this.clock.now();
      deadlineTimer = this.clock.setTimeout(
        () =>
          lose(
            `could not renew the Lease ${this.lease} within the renew deadline (${renewDeadlineSeconds}s): ${this.lastError ?? 'no answer'}`,
          ),
        Math.max(0, left),
      );
    };
    try {
      while (!this.abort.signal.aborted) {
        const started = this.clock.now();
        const deadline = this.leading ? this.renewedAt + renewDeadlineSeconds * 1000 : Number.POSITIVE_INFINITY;
        const timeout = Math.min(requestMs, renewDeadlineSeconds * 1000, deadline - started);
        let attempt: Attempt | undefined;
        if (timeout > 0) {
          try {
            attempt = await this.bounded(timeout, (call) => this.tryAcquireOrRenew(call));
            this.succeeded();
          } catch (error) {
            if (this.abort.signal.aborted) break;
            this.failed(error);
          }
        }
        if (this.abort.signal.aborted) break;
        if (attempt?.result === 'acquired') {
          this.renewedAt = started;
          if (!this.leading) {
            this.leading = true;
            this.logger.info({ identity, lease: this.lease }, 'became leader');
            onStarted();
          }
          armDeadline();
        } else if (this.leading && attempt?.result === 'held') {
          lose(`the Lease ${this.lease} is now held by ${attempt.holder}`);
          break;
        } else if (this.leading && this.clock.now() >= deadline) {
          lose(
            `could not renew the Lease ${this.lease} within the renew deadline (${renewDeadlineSeconds}s): ${this.lastError ?? 'no answer'}`,
          );
          break;
        }
        const jitter = this.leading ? 1 : 1 + random() * 0.2;
        await this.sleep(retryPeriodSeconds * 1000 * jitter);
      }
    } finally {
      if (!this.leading) this.clock.clearTimeout(deadlineTimer);
    }
  }

  private succeeded(): void {
    this.lastSuccess = this.clock.now();
    if (this.reportedUnhealthy || this.failuresSinceLog > 0) {
      this.logger.info(
        { lease: this.lease, failures: this.failuresSinceLog },
        'leader election: Lease requests succeed again',
      );
    }
    this.reportedUnhealthy = false;
    this.failuresSinceLog = 0;
    this.lastLogAt = Number.NEGATIVE_INFINITY;
  }

  /** Counts the failure; logs the first one, then at most once per logEverySeconds, and once when unhealthy. */
  private failed(error: unknown): void {
    this.lastStatus = error instanceof KubeApiError ? error.statusCode : undefined;
    const text = message(error);
    this.lastError = this.lastStatus && !text.includes(String(this.lastStatus)) ? `${this.lastStatus} ${text}` : text;
    this.deps.onError?.(error);
    this.failuresSinceLog++;
    const now = this.clock.now();
    const health = this.health();
    if (!health.healthy && !this.reportedUnhealthy) {
      this.reportedUnhealthy = true;
      this.logger.error(
        { lease: this.lease, failures: this.failuresSinceLog },
        `leader election: ${health.reason}; this replica is not ready`,
      );
      this.lastLogAt = now;
      this.failuresSinceLog = 0;
      return;
    }
    if (now - this.lastLogAt >= (this.options.logEverySeconds ?? 30) * 1000) {
      this.logger.warn(
        {
          lease: this.lease,
          err: this.lastError,
          failures: this.failuresSinceLog,
          secondsSinceSuccess: Math.round(health.secondsSinceSuccess),
        },
        'leader election: Lease request failed',
      );
      this.lastLogAt = now;
      this.failuresSinceLog = 0;
    }
  }

  /** Records the Lease as seen; its observed time moves only when the record changed. */
  private observe(spec: LeaseObject['spec']): void {
    const record = JSON.stringify([
      spec?.holderIdentity ?? '',
      spec?.renewTime ?? '',
      spec?.acquireTime ?? '',
      spec?.leaseTransitions ?? 0,
      spec?.leaseDurationSeconds ?? 0,
    ]);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = this.clock.now();
    }
  }

  /** Asks the gate (when there is one) whether to take the free Lease now; remembers since when it is free. */
  private mayTake(): boolean {
    const now = this.clock.now();
    this.freeSince ??= now;
    return this.deps.gate?.shouldAcquire(now - this.freeSince) ?? true;
  }

  private async tryAcquireOrRenew(call: CallOptions): Promise<Attempt> {
    const { namespace, name, identity, leaseDurationSeconds } = this.options;
    // The times written are taken when the read has returned, the instant the decision is made: a slow
    // read must not stamp a takeover earlier than the moment the Lease was judged expired.
    const wallNow = () => kubeMicroTime((this.deps.wallClock ?? (() => new Date()))());
    let lease: LeaseObject;
    try {
      lease = await this.client.get<LeaseObject>(LEASE, namespace, name, call);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      if (!this.mayTake()) return { result: 'waiting' };
      const now = wallNow();
      let acquired = false;
      try {
        const spec = {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        };
        await this.client.create<LeaseObject>(
          LEASE,
          { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec },
          call,
        );
        this.observe(spec);
        acquired = true;
        this.freeSince = undefined;
        return { result: 'acquired' };
      } catch (createError) {
        if (isConflict(createError)) return { result: 'conflict' };
        throw createError;
      } finally {
        this.deps.gate?.attemptDone(acquired);
      }
    }
    const spec = lease.spec ?? {};
    this.observe(spec);
    const holder = spec.holderIdentity;
    const duration = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    const expired = !holder || this.clock.now() >= this.observedAt + duration;
    if (holder && holder !== identity && !expired) {
      this.freeSince = undefined;
      return { result: 'held', holder };
    }
    const takeover = holder !== identity;
    if (takeover && !this.mayTake()) return { result: 'waiting' };
    const now = wallNow();
    const nextSpec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: now,
      ...(takeover ? { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
    };
    let acquired = false;
    try {
      await this.client.replace(LEASE, { ...lease, spec: nextSpec }, call);
      acquired = true;
    } catch (error) {
      if (isConflict(error)) return { result: 'conflict' };
      throw error;
    } finally {
      if (takeover) this.deps.gate?.attemptDone(acquired);
    }
    this.observe(nextSpec);
    this.freeSince = undefined;
    return { result: 'acquired' };
  }

  /**
   * Stops campaigning. `release` (only once nothing of this replica can write any more) empties the
   * holder so another replica takes over at once; without it the Lease simply expires.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.abort.abort();
    await this.running;
    const wasLeading = this.leading;
    this.leading = false;
    if (!wasLeading || this.lost || options.release === false) return;
    const timeout = Math.min(
      (this.options.requestTimeoutSeconds ?? 10) * 1000,
      this.options.renewDeadlineSeconds * 1000,
    );
    try {
      await this.bounded(timeout, async (call) => {
        const lease = await this.client.get<LeaseObject>(LEASE, this.options.namespace, this.options.name, call);
        if (lease.spec?.holderIdentity !== this.options.identity) return;
        const wallNow = kubeMicroTime((this.deps.wallClock ?? (() => new Date()))());
        await this.client.replace(
          LEASE,
          {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: undefined,
              renewTime: wallNow,
              acquireTime: undefined,
              leaseDurationSeconds: 1,
            },
          },
          call,
        );
      });
    } catch (error) {
      this.logger.warn(
        { lease: this.lease, err: message(error) },
        'could not release the Lease: it expires on its own',
      );
    }
  }
}
