/**
 * Canonical JSON: one string per JSON value, whatever the key order of its objects. Used to compare
 * objects by content (a desired object against what the API server returns, a status against the one
 * last written). Pure: no I/O.
 */

/** Code-point order, the order Go's encoding/json uses for map keys. */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * `value` as JSON with the keys of every object sorted in code-point order, at every level.
 *
 * @remarks
 * It encodes what `JSON.stringify` encodes, in the same way except for key order:
 * - object members whose value is `undefined` (or a function or symbol) are left out;
 * - the same inside an array becomes `null`, as do `NaN` and infinities;
 * - a `toJSON` method is honoured (a Date becomes its ISO string).
 *
 * Keys are sorted by code point even when they look like integers (`"10"` before `"2"`), whereas
 * JavaScript objects put integer-like keys first in numeric order; the API server sorts map keys the
 * same way this does.
 *
 * Unlike `JSON.stringify`, `undefined` at the top level gives `"null"`, so the result is always a
 * string and `canonicalJson(undefined) === canonicalJson(null)`.
 *
 * @throws TypeError for a BigInt; RangeError for a cyclic structure.
 */
export function canonicalJson(value: unknown): string {
  return encode(value) ?? 'null';
}

function encode(input: unknown): string | undefined {
  let value = input;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => encode(item) ?? 'null').join(',')}]`;
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort(byCodePoint)) {
    const item = encode(record[key]);
    if (item !== undefined) members.push(`${JSON.stringify(key)}:${item}`);
  }
  return `{${members.join(',')}}`;
}
