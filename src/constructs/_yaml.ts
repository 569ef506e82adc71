/**
 * A small, fast YAML emitter for the JSON data synth writes (the general-purpose YAML library spent
 * most of synth time on a large fleet). Output is block-style YAML that YAML 1.1 and 1.2 parsers read
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

function scalarString(value: string): string {
  if (PLAIN.test(value) && !RESERVED.has(value.toLowerCase()) && !value.endsWith(':')) return value;
  return JSON.stringify(value).replace(UNSAFE, escapeUnsafe);
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

function emit(value: unknown, indent: string, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isCollection(item) && !isEmpty(item)) {
        const lines: string[] = [];
        emit(item, `${indent}  `, lines);
        // The first line of the item follows "- " instead of its indentation.
        lines[0] = `${indent}- ${lines[0].slice(indent.length + 2)}`;
        out.push(...lines);
      } else {
        out.push(`${indent}- ${isCollection(item) ? emptyFlow(item) : scalar(item)}`);
      }
    }
    return;
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item === undefined) continue;
    const k = scalarString(key);
    if (isCollection(item) && !isEmpty(item)) {
      out.push(`${indent}${k}:`);
      emit(item, `${indent}  `, out);
    } else {
      out.push(`${indent}${k}: ${isCollection(item) ? emptyFlow(item) : scalar(item)}`);
    }
  }
}

/** One YAML document (no `---`) for a JSON object, ending in a newline. */
export function toYaml(doc: object): string {
  if (isEmpty(doc)) return `${emptyFlow(doc)}\n`;
  const out: string[] = [];
  emit(doc, '', out);
  return `${out.join('\n')}\n`;
}

/** Several documents separated by `---`. */
export function toYamlDocuments(docs: readonly object[]): string {
  return docs.map(toYaml).join('---\n');
}
