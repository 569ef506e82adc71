/** Words of messages that several layers write the same way. Pure. */

/** `1 file`, `2 files`: `n` and `noun`, plural unless `n` is 1 (nouns whose plural adds an s). */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
