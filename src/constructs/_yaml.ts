/**
 * A small, fast YAML emitter for the JSON data synth writes (the general-purpose YAML library spent
 * most of synth time on a large fleet): lines go straight into one list, and the text of strings seen
 * before is looked up instead of worked out again. Output is block-style YAML that YAML 1.1 and 1.2 parsers read
 * back as the same JSON: a string is written plain only when it cannot be mistaken for anything else
 * (no booleans, nulls, numbers, dates, indicators); every other string is written as a JSON string,
 * which is a valid double-quoted YAML scalar. JSON leaves DEL, the C1 controls (U+0080–U+009F) and a few
 * other characters raw that YAML parsers (kubectl's among them) refuse or read as line breaks, so
 * those are escaped as `\uXXXX` too.
 */

const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./:@+-]*$/;
/** Words YAML 1.1 or 1.2 resolve to booleans or null (compared lower-case). */
const RESERVED = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null', 'nan', 'inf']);

/**
 * Characters JSON.stringify writes raw but YAML does not accept as they are: DEL and C1 controls (not
 * printable in YAML; U+0085 is also a YAML 1.1 line break), the Unicode line and paragraph separators
 * (line breaks in YAML 1.1), the byte-order mark and the non-characters U+FFFE and U+FFFF.
 */
const UNSAFE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;

function escapeUnsafe(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Strings already written, and how (keys, kinds, API versions and most values repeat across thousands of
 * objects); the first ones up to a bound, short ones only.
 */
const written = new Map<string, string>();
const WRITTEN_LIMIT = 20_000;

function scalarString(value: string): string {
  const known = written.get(value);
  if (known !== undefined) return known;
  const text =
    PLAIN.test(value) && !RESERVED.has(value.toLowerCase()) && !value.endsWith(':')
      ? value
      : JSON.stringify(value).replace(UNSAFE, escapeUnsafe);
  if (written.size < WRITTEN_LIMIT && value.length <= 200) written.set(value, text);
  return text;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return scalarString(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot write ${value} to YAML`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') throw new Error(`cannot write the BigInt ${value}n to YAML`);
  throw new Error(`cannot write a ${typeof value} to YAML`);
}

function isCollection(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function isEmpty(value: object): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
}

function emptyFlow(value: object): string {
  return Array.isArray(value) ? '[]' : '{}';
}

/**
 * Appends the lines of `value` (a non-empty collection) to `out`, indented by `indent`; the first line starts
 * with `lead` instead (as long as `indent`: the `- ` of the sequence item it opens, or `indent` itself).
 */
function emit(value: object, indent: string, lead: string, out: string[]): void {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const dash = `${i === 0 ? lead : indent}- `;
      if (isCollection(item) && !isEmpty(item)) emit(item, inner, dash, out);
      else out.push(`${dash}${isCollection(item) ? emptyFlow(item) : scalar(item)}`);
    }
    return;
  }
  let first = true;
  for (const key of Object.keys(value)) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (item === undefined) continue;
    const start = `${first ? lead : indent}${scalarString(key)}:`;
    first = false;
    if (isCollection(item) && !isEmpty(item)) {
      out.push(start);
      emit(item, inner, inner, out);
    } else {
      out.push(`${start} ${isCollection(item) ? emptyFlow(item) : scalar(item)}`);
    }
  }
}

/** One YAML document (no `---`) for a JSON object, ending in a newline. */
export function toYaml(doc: object): string {
  if (isEmpty(doc)) return `${emptyFlow(doc)}\n`;
  const out: string[] = [];
  emit(doc, '', '', out);
  return `${out.join('\n')}\n`;
}

/** Several documents separated by `---`. */
export function toYamlDocuments(docs: readonly object[]): string {
  return docs.map(toYaml).join('---\n');
}
