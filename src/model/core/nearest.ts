/** "Did you mean": the known name a mistyped one most likely stands for. */

/** Edit distance (Levenshtein) between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
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
