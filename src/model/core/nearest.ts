/** "Did you mean": the known name a mistyped one most likely stands for. */

/**
 * Edit distance between `a` and `b` (optimal string alignment): insertions, deletions, substitutions and
 * swaps of neighbouring letters each count one.
 */
export function editDistance(a: string, b: string): number {
  let before = Array.from({ length: b.length + 1 }, () => 0); // row i - 2
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j); // row i - 1
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j], before[j - 2] + 1);
    }
    [before, previous] = [previous, row];
  }
  return previous[b.length];
}

/**
 * The name of `known` that `name` most likely stands for (another case, a typo, a missing or swapped letter),
 * or undefined when none is close: at most one edit per four letters of the shorter name, between 1 and 3.
 */
export function nearestName(name: string, known: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    const limit = Math.max(1, Math.min(3, Math.floor(Math.min(candidate.length, name.length) / 4)));
    if (distance <= limit && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}
