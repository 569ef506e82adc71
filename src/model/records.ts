/** Small helpers for string maps (labels, annotations) that keep output deterministic. */

/** A copy of `record` with its keys in code-point order, so serialized output never depends on insertion order. */
export function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
