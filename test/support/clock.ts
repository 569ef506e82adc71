/**
 * The one fake clock of the tests: a monotonic clock (the controller's `Timers`) whose timers fire only
 * when the test moves time on, so no test depends on real time passing.
 */
import type { Timers } from '../../src/kube/timers.js';

/** Options of a {@link ManualClock}. */
export interface ManualClockOptions {
  /**
   * Milliseconds the clock shows before the test moves it.
   * @default 0
   */
  readonly start?: number;
  /**
   * Event-loop turns `advance` and `flush` give pending promises to settle, before and after each timer.
   * @default 10
   */
  readonly settleTurns?: number;
}

/**
 * A monotonic clock whose timers fire only when the test moves time: `tick` fires due timers at once (for
 * code that does its work synchronously), `advance` lets promises settle between timers (for code that
 * awaits requests between timers), and `pass` moves time without firing anything (a slow request).
 */
export class ManualClock implements Timers {
  private time: number;
  private next = 0;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private readonly settleTurns: number;

  constructor(options: ManualClockOptions = {}) {
    this.time = options.start ?? 0;
    this.settleTurns = options.settleTurns ?? 10;
  }

  /** Milliseconds on the clock. */
  now = (): number => this.time;

  setTimeout = (callback: () => void, ms: number): number => {
    this.timers.set(++this.next, { at: this.time + ms, callback });
    return this.next;
  };

  clearTimeout = (handle: unknown): void => {
    this.timers.delete(handle as number);
  };

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Time passes inside a call (a slow request): the clock moves, no timer fires. */
  pass(ms: number): void {
    this.time += ms;
  }

  /** Moves the clock `ms` on, firing each timer due by then at its own instant, in order, synchronously. */
  tick(ms: number): void {
    const target = this.time + ms;
    for (let due = this.due(target); due; due = this.due(target)) this.fire(due);
    this.time = target;
  }

  /** Moves the clock `ms` on like `tick`, letting pending promises settle before, between and after timers. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    await this.flush();
    for (let due = this.due(target); due; due = this.due(target)) {
      this.fire(due);
      await this.flush();
    }
    this.time = target;
    await this.flush();
  }

  /** Lets pending promises settle without moving the clock. */
  async flush(): Promise<void> {
    for (let i = 0; i < this.settleTurns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** The earliest timer due by `target` (the first set among equals). */
  private due(target: number): [number, { at: number; callback: () => void }] | undefined {
    return [...this.timers.entries()]
      .filter(([, timer]) => timer.at <= target)
      .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
  }

  private fire([handle, timer]: [number, { at: number; callback: () => void }]): void {
    this.timers.delete(handle);
    this.time = timer.at;
    timer.callback();
  }
}
