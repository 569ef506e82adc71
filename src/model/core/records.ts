/** Small helpers for string maps (labels, annotations) that keep output deterministic. Pure: no I/O. */

/**
 * A copy of `record` with its keys in code-point order, so serialized output never depends on
 * insertion order. The input is not changed.
 *
 * @remarks
 * Keys are compared by UTF-16 code unit (`<`), the same order for the label and annotation keys
 * Kubernetes allows (ASCII) as Go's byte order. One JavaScript rule wins over the sort: keys that look
 * like array indices (`"2"`, `"10"`) always come first, in numeric order. Every key is kept as an own
 * property of the copy, `__proto__` included.
 */
export function sortKeys<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
