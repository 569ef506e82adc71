/**
 * Monotonic time and timers for the controller's own machinery (leader election, the delaying queue,
 * backoff waits), in one place so tests inject one fake clock and production uses one real one.
 */

/** Milliseconds on a monotonic clock and timers on it (injectable for tests). */
export interface Timers {
  /** Milliseconds on a monotonic clock (never jumps with the wall clock). */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** performance.now and unref'd Node timers: a pending timer never keeps the process alive. */
export const SYSTEM_TIMERS: Timers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Waits `ms`, or less when `signal` aborts (it resolves then, it never rejects). */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', done);
      clearTimeout(timer);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
