/**
 * A keyed work queue with client-go semantics: a key is never processed by two workers at once, adds of a
 * key already waiting collapse into one, a key added while it is being processed runs once more afterwards,
 * and failures retry with exponential backoff plus jitter (capped), so a failing key never spins hot.
 * Keys added in the background lane (periodic resync) wait behind every event-driven key, so a full
 * resync of thousands of keys never delays a real change; keys added to the idle lane wait until no other
 * key does (work that may wait until a burst has been served).
 */
import { SYSTEM_TIMERS, type Timers } from '../../kube/timers.js';
export interface QueueOptions {
  /** First retry delay. @default 100 */
  readonly baseDelayMs?: number;
  /** Retry delay cap. @default 60000 */
  readonly maxDelayMs?: number;
  /** Random source for jitter (injectable for tests). @default Math.random */
  readonly random?: () => number;
  /** Clock and timer for delayed adds (injectable for tests). @default performance.now, setTimeout, clearTimeout */
  readonly timers?: QueueTimers;
}

/** The queue's clock and timer for delayed adds. */
export type QueueTimers = Timers;

/** A min-heap of (deadline, key); entries whose deadline no longer matches the key's are skipped. */
class DeadlineHeap {
  private readonly items: Array<{ at: number; key: string }> = [];

  get size(): number {
    return this.items.length;
  }

  peek(): { at: number; key: string } | undefined {
    return this.items[0];
  }

  push(item: { at: number; key: string }): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent].at <= items[i].at) break;
      [items[parent], items[i]] = [items[i], items[parent]];
      i = parent;
    }
  }

  pop(): { at: number; key: string } | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && items[left].at < items[smallest].at) smallest = left;
        if (right < items.length && items[right].at < items[smallest].at) smallest = right;
        if (smallest === i) break;
        [items[smallest], items[i]] = [items[i], items[smallest]];
        i = smallest;
      }
    }
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}

type Lane = 'fg' | 'bg' | 'idle';
const LANES: readonly Lane[] = ['fg', 'bg', 'idle'];
const LANE_RANK: Record<Lane, number> = { fg: 0, bg: 1, idle: 2 };

export class WorkQueue {
  private readonly lanes: Record<Lane, { order: string[]; head: number }> = {
    fg: { order: [], head: 0 },
    bg: { order: [], head: 0 },
    idle: { order: [], head: 0 },
  };
  /** Waiting keys and the lane each waits in. */
  private readonly waiting = new Map<string, Lane>();
  /** Waiting keys per lane. */
  private readonly counts: Record<Lane, number> = { fg: 0, bg: 0, idle: 0 };
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  /** Earliest pending deadline of each delayed key (ms on the queue's clock). */
  private readonly deadlines = new Map<string, number>();
  private readonly heap = new DeadlineHeap();
  private timer?: { handle: unknown; at: number };
  private readonly clock: QueueTimers;
  /** Time each waiting key was first added (for latency metrics). */
  private readonly addedAt = new Map<string, number>();
  private readonly dirtyAt = new Map<string, number>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;

  constructor(private readonly options: QueueOptions = {}) {
    this.clock = options.timers ?? SYSTEM_TIMERS;
  }

  /** Keys waiting for a delayed add (backoff or requeue-after). */
  get delayed(): number {
    return this.deadlines.size;
  }

  /** Keys waiting to be processed (not counting those in flight or delayed). */
  get depth(): number {
    return this.waiting.size;
  }

  /** Keys waiting in the event-driven and background lanes (the idle lane waits for these). */
  get busyDepth(): number {
    return this.counts.fg + this.counts.bg;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  /**
   * Queues `key`; `background` puts it behind every event-driven key (resync), `idle` behind every key
   * (it runs once no other key waits). A key already waiting moves to the more urgent lane of the two.
   */
  add(key: string, options: { background?: boolean; idle?: boolean } = {}): void {
    if (this.shuttingDown) return;
    const lane: Lane = options.idle ? 'idle' : options.background ? 'bg' : 'fg';
    if (this.processing.has(key)) {
      this.dirty.add(key);
      if (!this.dirtyAt.has(key)) this.dirtyAt.set(key, Date.now());
      return;
    }
    const current = this.waiting.get(key);
    if (current !== undefined && LANE_RANK[current] <= LANE_RANK[lane]) return;
    // New, or promoted to a more urgent lane (its old entry is skipped when reached).
    if (current !== undefined) this.counts[current]--;
    this.counts[lane]++;
    this.waiting.set(key, lane);
    if (!this.addedAt.has(key)) this.addedAt.set(key, Date.now());
    const waiter = this.waiters.shift();
    if (waiter) this.take(key, waiter);
    else this.lanes[lane].order.push(key);
  }

  private next(): string | undefined {
    for (const lane of LANES) {
      const queue = this.lanes[lane];
      while (queue.head < queue.order.length) {
        const key = queue.order[queue.head++];
        if (queue.head > 1024 && queue.head * 2 > queue.order.length) {
          queue.order.splice(0, queue.head);
          queue.head = 0;
        }
        if (this.waiting.get(key) === lane) return key;
      }
    }
    return undefined;
  }

  /** Adds `key` after a backoff that grows with its consecutive failures (at least `minDelayMs`, e.g. a Retry-After). */
  addRateLimited(key: string, minDelayMs = 0): number {
    const count = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, count);
    const base = this.options.baseDelayMs ?? 100;
    const max = this.options.maxDelayMs ?? 60000;
    const random = this.options.random ?? Math.random;
    const delay = Math.max(
      Math.min(max, base * 2 ** Math.min(count - 1, 20)) * (0.5 + random() / 2),
      Math.min(minDelayMs, max),
    );
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * Adds `key` once `delayMs` has passed. A key already waiting for a later deadline moves to the earlier
   * one; a later deadline never replaces an earlier one (client-go's delaying queue keeps the earliest).
   */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + delayMs;
    const current = this.deadlines.get(key);
    if (current !== undefined && current <= at) return;
    this.deadlines.set(key, at);
    this.heap.push({ at, key });
    this.arm();
  }

  /** Points the single timer at the earliest live deadline. */
  private arm(): void {
    let top = this.heap.peek();
    while (top && this.deadlines.get(top.key) !== top.at) {
      this.heap.pop();
      top = this.heap.peek();
    }
    if (!top) {
      if (this.timer) this.clock.clearTimeout(this.timer.handle);
      this.timer = undefined;
      return;
    }
    if (this.timer && this.timer.at <= top.at) return;
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    const at = top.at;
    this.timer = { at, handle: this.clock.setTimeout(() => this.fire(), Math.max(0, at - this.clock.now())) };
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    for (let top = this.heap.peek(); top && top.at <= now; top = this.heap.peek()) {
      this.heap.pop();
      if (this.deadlines.get(top.key) !== top.at) continue;
      this.deadlines.delete(top.key);
      this.add(top.key);
    }
    this.arm();
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
    const lane = this.waiting.get(key);
    if (lane !== undefined) this.counts[lane]--;
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
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    this.timer = undefined;
    this.deadlines.clear();
    this.heap.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
