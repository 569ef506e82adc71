/**
 * Parsers for numeric command-line values (`--timeout <seconds>`, `--interval <seconds>`, `--page-size <n>`),
 * shared by the commands so that a bad value is refused the same way everywhere: commander reports an
 * InvalidArgumentError as a usage error (exit 2, one line naming the option, the value and the fix, no
 * stack trace).
 */
import { InvalidArgumentError } from 'commander';

/** The longest wait a timer can hold (setTimeout's limit, 2^31 - 1 ms, about 24.8 days), in whole seconds. */
export const MAX_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const INTEGER = /^\d+$/;

/** How a value of one option is read. */
export interface NumberOptionSpec {
  /** The option as the user types it, such as `--timeout`. */
  readonly flag: string;
  /** A good value to suggest in the message. */
  readonly example: number;
  /** What 0 means, when 0 is allowed (`'no limit'`); 0 is refused when left out. */
  readonly zero?: string;
}

/** Refuses `value`: `problem` says what is wrong with it; the fix names a good value. */
function refuse(spec: NumberOptionSpec, value: string, problem: string): never {
  const fix = `give for example ${spec.flag} ${spec.example}${spec.zero ? ` (0 for ${spec.zero})` : ''}`;
  throw new InvalidArgumentError(`${spec.flag} ${value} ${problem}: ${fix}`);
}

/**
 * A parser of seconds for commander: a decimal number such as `10` or `0.5` (no sign, exponent or hex), above
 * 0 (or 0 when `zero` says what it means) and at most {@link MAX_SECONDS}.
 */
export function secondsOption(spec: NumberOptionSpec): (value: string) => number {
  const what = spec.zero ? 'a number of seconds' : 'a positive number of seconds';
  return (value: string): number => {
    const text = value.trim();
    const seconds = Number(text);
    if (!DECIMAL.test(text) || (seconds === 0 && !spec.zero)) refuse(spec, value, `is not ${what}`);
    if (seconds > MAX_SECONDS)
      refuse(spec, value, `is more than ${MAX_SECONDS} seconds (about 24 days), the longest a timer can wait`);
    return seconds;
  };
}

/** A parser of a positive whole number for commander (`1`, `500`; no sign, fraction, exponent or hex). */
export function positiveIntegerOption(spec: Omit<NumberOptionSpec, 'zero'>): (value: string) => number {
  return (value: string): number => {
    const text = value.trim();
    const n = Number(text);
    if (!INTEGER.test(text) || n === 0 || !Number.isSafeInteger(n))
      refuse(spec, value, 'is not a positive whole number');
    return n;
  };
}
