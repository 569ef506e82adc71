/**
 * How many requests the client keeps in flight, adapted to what the API server says. The limit starts at
 * its maximum and follows additive increase / multiplicative decrease: every request the server accepted
 * raises it by 1/limit (about one more slot per round of requests), every throttling answer (429, or a
 * 5xx with Retry-After: API Priority and Fairness rejecting a request, or the server's max-in-flight
 * filter) halves it, at most once per `decreaseEveryMs`, and closes the gate for every new request until
 * the Retry-After the server gave has passed. Watches are not counted (they are long-running), and
 * exempt requests (the leader Lease) pass without waiting: a replica that cannot renew its Lease because
 * its own reconciles are throttled would stop leading for nothing.
 */
import { SYSTEM_TIMERS, abortableSleep, type Timers } from './timers.js';

export interface LimiterOptions {
  /** Most requests in flight. */
  readonly max: number;
  /** Fewest requests in flight the limit may fall to. @default 1 */
  readonly min?: number;
  /** Shortest time between two halvings (answers to requests sent together count once). @default 1000 */
  readonly decreaseEveryMs?: number;
  /** Monotonic clock. @default performance.now */
  readonly timers?: Pick<Timers, 'now'>;
  /** Wait for the gate (tests). @default abortableSleep */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A snapshot for metrics and logs. */
export interface LimiterState {
  readonly limit: number;
  readonly inFlight: number;
  readonly waiting: number;
  /** Milliseconds until the gate opens again (0 when open). */
  readonly pausedForMs: number;
  readonly throttled: number;
}

export class AdaptiveLimiter {
  private current: number;
  private inFlight = 0;
  private pausedUntil = 0;
  private lastDecrease = Number.NEGATIVE_INFINITY;
  private throttledCount = 0;
  private readonly waiters: Array<() => void> = [];
  private readonly clock: Pick<Timers, 'now'>;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly options: LimiterOptions) {
    if (!(options.max >= 1)) throw new Error(`the client's in-flight maximum must be >= 1, got ${options.max}`);
    this.current = options.max;
    this.clock = options.timers ?? SYSTEM_TIMERS;
    this.sleep = options.sleep ?? abortableSleep;
  }

  get state(): LimiterState {
    return {
      limit: Math.floor(this.current),
      inFlight: this.inFlight,
      waiting: this.waiters.length,
      pausedForMs: Math.max(0, this.pausedUntil - this.clock.now()),
      throttled: this.throttledCount,
    };
  }

  /**
   * Waits for the gate (once: a request that was held back is not held back again by a later 429; one
   * that has just waited out its own Retry-After passes it with `pastGate`) and for a free slot; resolves
   * with the function that gives the slot back. An aborted wait rejects.
   */
  async acquire(signal?: AbortSignal, options: { pastGate?: boolean } = {}): Promise<() => void> {
    const pause = options.pastGate ? 0 : this.pausedUntil - this.clock.now();
    if (pause > 0) await this.sleep(pause, signal);
    if (signal?.aborted) throw new Error('request aborted while the client held it back');
    if (this.inFlight >= Math.floor(this.current)) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const at = this.waiters.indexOf(wake);
          if (at >= 0) this.waiters.splice(at, 1);
          reject(new Error('request aborted while the client held it back'));
        };
        this.waiters.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    } else {
      this.inFlight++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release();
    };
  }

  private release(): void {
    this.inFlight--;
    this.drain();
  }

  /** Wakes waiters while there is room under the limit. */
  private drain(): void {
    while (this.waiters.length > 0 && this.inFlight < Math.floor(this.current)) {
      this.inFlight++;
      this.waiters.shift()!();
    }
  }

  /** The server accepted a request: one more slot after about `limit` of them. */
  succeeded(): void {
    if (this.current >= this.options.max) return;
    this.current = Math.min(this.options.max, this.current + 1 / this.current);
    this.drain();
  }

  /** The server throttled a request: halve the limit and hold new requests back for `retryAfterMs`. */
  throttled(retryAfterMs: number): void {
    this.throttledCount++;
    const now = this.clock.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + Math.max(0, retryAfterMs));
    if (now - this.lastDecrease < (this.options.decreaseEveryMs ?? 1000)) return;
    this.lastDecrease = now;
    this.current = Math.max(this.options.min ?? 1, this.current / 2);
  }
}
