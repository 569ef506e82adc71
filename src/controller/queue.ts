/**
 * A keyed work queue with client-go semantics: a key is never processed by two workers at once, adds of a
 * key already waiting collapse into one, a key added while it is being processed runs once more afterwards,
 * and failures retry with exponential backoff plus jitter (capped), so a failing key never spins hot.
 * Keys added in the background lane (periodic resync) wait behind every event-driven key, so a full
 * resync of thousands of keys never delays a real change.
 */
export interface QueueOptions {
  /** First retry delay. @default 100 */
  readonly baseDelayMs?: number;
  /** Retry delay cap. @default 60000 */
  readonly maxDelayMs?: number;
  /** Random source for jitter (injectable for tests). @default Math.random */
  readonly random?: () => number;
}

export class WorkQueue {
  private readonly lanes: Record<'fg' | 'bg', { order: string[]; head: number }> = { fg: { order: [], head: 0 }, bg: { order: [], head: 0 } };
  /** Waiting keys and the lane each waits in. */
  private readonly waiting = new Map<string, 'fg' | 'bg'>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Time each waiting key was first added (for latency metrics). */
  private readonly addedAt = new Map<string, number>();
  private readonly dirtyAt = new Map<string, number>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;

  constructor(private readonly options: QueueOptions = {}) {}

  /** Keys waiting to be processed (not counting those in flight or delayed). */
  get depth(): number {
    return this.waiting.size;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  /** Queues `key`; `background` puts it behind every event-driven key (resync). */
  add(key: string, options: { background?: boolean } = {}): void {
    if (this.shuttingDown) return;
    const lane = options.background ? 'bg' : 'fg';
    if (this.processing.has(key)) {
      this.dirty.add(key);
      if (!this.dirtyAt.has(key)) this.dirtyAt.set(key, Date.now());
      return;
    }
    const current = this.waiting.get(key);
    if (current === 'fg' || current === lane) return;
    // New, or promoted from the background lane (its old entry is skipped when reached).
    this.waiting.set(key, lane);
    if (!this.addedAt.has(key)) this.addedAt.set(key, Date.now());
    const waiter = this.waiters.shift();
    if (waiter) this.take(key, waiter);
    else this.lanes[lane].order.push(key);
  }

  private next(): string | undefined {
    for (const lane of ['fg', 'bg'] as const) {
      const queue = this.lanes[lane];
      while (queue.head < queue.order.length) {
        const key = queue.order[queue.head++]!;
        if (queue.head > 1024 && queue.head * 2 > queue.order.length) {
          queue.order.splice(0, queue.head);
          queue.head = 0;
        }
        if (this.waiting.get(key) === lane) return key;
      }
    }
    return undefined;
  }

  /** Adds `key` after a backoff that grows with its consecutive failures. */
  addRateLimited(key: string): number {
    const count = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, count);
    const base = this.options.baseDelayMs ?? 100;
    const max = this.options.maxDelayMs ?? 60000;
    const random = this.options.random ?? Math.random;
    const delay = Math.min(max, base * 2 ** Math.min(count - 1, 20)) * (0.5 + random() / 2);
    this.addAfter(key, delay);
    return delay;
  }

  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (this.timers.has(key)) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref?.();
    this.timers.set(key, timer);
  }

  /** Clears the failure count of `key` (after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Waits for the next key; resolves undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.next();
    if (key !== undefined) return new Promise((resolve) => this.take(key, resolve));
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private take(key: string, resolve: (key: string) => void): void {
    this.waiting.delete(key);
    this.processing.add(key);
    resolve(key);
  }

  /** When the key was first added since it was last processed (ms epoch). */
  enqueuedAt(key: string): number | undefined {
    return this.addedAt.get(key);
  }

  /** Marks `key` processed; if it was added meanwhile it goes back in line. */
  done(key: string): void {
    this.processing.delete(key);
    this.addedAt.delete(key);
    if (this.dirty.delete(key)) {
      this.addedAt.set(key, this.dirtyAt.get(key) ?? Date.now());
      this.dirtyAt.delete(key);
      this.add(key);
    }
  }

  shutdown(): void {
    this.shuttingDown = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
