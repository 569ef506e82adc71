/**
 * Polling for a state of the world, bounded by a generous timeout. Tests wait for conditions, never for time.
 */

export interface WaitOptions {
  /** Give up after this long. @default 20000 */
  timeoutMs?: number;
  /** Pause between checks. @default 25 */
  intervalMs?: number;
}

/**
 * Calls `check` until it returns a value other than undefined / false, and returns that value. On timeout
 * throws with `what` and the last value `describe` reports (or the last error `check` threw).
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  opts: WaitOptions & { describe?: () => unknown } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      let last = '';
      try {
        last = opts.describe ? JSON.stringify(await opts.describe(), null, 2) : '';
      } catch {
        last = '(describe failed)';
      }
      throw new Error(
        `timed out waiting for ${what}${lastError ? `; last error: ${(lastError as Error).message ?? String(lastError)}` : ''}${last ? `; last state: ${last}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 25));
  }
}
