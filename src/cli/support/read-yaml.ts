/**
 * Reads the YAML files synth writes, fast: `pullfleet plan` reads two whole output folders (about 110,000
 * objects at 1,000 spokes) and the `yaml` package's document API takes several times as long as the rest
 * of the plan. Synth writes a small block-style subset of YAML (src/constructs/_yaml.ts: two-space
 * indentation, plain strings only where nothing else could be meant, every other string a JSON string,
 * numbers as JavaScript prints them, `[]` and `{}` for empty collections, `#` comment lines, `---`
 * between documents). {@link readSynthYaml} reads exactly that subset and answers `undefined` for any
 * text outside it; {@link readYamlDocuments} then reads the text with the `yaml` package (YAML 1.2, core
 * schema). Both readers give the same values for every text the first one accepts.
 */
import { parseAllDocuments } from 'yaml';

/** A plain scalar synth writes: these characters, and never a word YAML 1.1 or 1.2 reads as something else. */
const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./:@+-]*$/;
/** Words YAML 1.1 or 1.2 resolve to booleans or null (compared lower-case). */
const RESERVED = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null', 'nan', 'inf']);
/** A number as JavaScript's `String(number)` prints it (checked again by printing it back). */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-][0-9]+)?$/;
/**
 * A JSON string with no raw character YAML reads differently from JSON (DEL and C1 controls, line
 * separators, byte-order mark, non-characters); JSON.parse refuses the raw C0 controls.
 */
const QUOTED = /^"(?:[^"\\\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]|\\.)*"/;

/** Thrown inside the fast reader when the text leaves the subset; never escapes it. */
class NotSynthYaml extends Error {}

function leave(): never {
  throw new NotSynthYaml();
}

function isPlain(text: string): boolean {
  return PLAIN.test(text) && !RESERVED.has(text.toLowerCase()) && !text.endsWith(':');
}

function quoted(text: string): { value: string; length: number } | undefined {
  const match = QUOTED.exec(text);
  if (!match) return undefined;
  try {
    return { value: JSON.parse(match[0]) as string, length: match[0].length };
  } catch {
    return leave();
  }
}

/** A whole value written after `key: ` or `- `. */
function scalar(text: string): unknown {
  if (text === 'null') return null;
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === '[]') return [];
  if (text === '{}') return {};
  if (text.startsWith('"')) {
    const string = quoted(text);
    return string && string.length === text.length ? string.value : leave();
  }
  if (NUMBER.test(text)) {
    const number = Number(text);
    return String(number) === text ? number : leave();
  }
  return isPlain(text) ? text : leave();
}

/** The lines of one document, and where the reader is: line `at`, from column `column`. */
interface Cursor {
  readonly lines: readonly string[];
  at: number;
  column: number;
}

/** `key:` or `key: value` at the start of `text`: the key and what follows the colon (`undefined`: nothing). */
function keyOf(text: string): { key: string; rest: string | undefined } | undefined {
  let key: string;
  let after: string;
  if (text.startsWith('"')) {
    const string = quoted(text);
    if (!string || text[string.length] !== ':') return undefined;
    key = string.value;
    after = text.slice(string.length + 1);
  } else {
    const space = text.indexOf(' ');
    const token = space < 0 ? text : text.slice(0, space);
    if (!token.endsWith(':')) return undefined;
    key = token.slice(0, -1);
    if (!isPlain(key)) return leave();
    after = text.slice(token.length);
  }
  if (key === '__proto__') return leave();
  if (after === '') return { key, rest: undefined };
  if (!after.startsWith(' ') || after.length < 2 || after[1] === ' ') return leave();
  return { key, rest: after.slice(1) };
}

/** Whether line `at` holds an entry at `column`: exactly that indentation, then text. */
function entryAt(cursor: Cursor, column: number): string | undefined {
  const line = cursor.lines[cursor.at];
  if (line === undefined || line.length <= column) return undefined;
  for (let i = 0; i < column; i++) if (line.charCodeAt(i) !== 32) return undefined;
  return line[column] === ' ' ? leave() : line.slice(column);
}

/** The collection starting at the cursor (mid-line after a `- `, or at the start of a line). */
function collection(cursor: Cursor): object {
  const column = cursor.column;
  const first = cursor.lines[cursor.at].slice(column);
  return first.startsWith('- ') ? sequence(cursor, column) : mapping(cursor, column);
}

/** The value after `key:` with nothing behind it, or after a `- ` that opens a collection. */
function child(cursor: Cursor, column: number): object {
  cursor.at++;
  if (entryAt(cursor, column) === undefined) return leave();
  cursor.column = column;
  return collection(cursor);
}

/** Whether an item's text opens a collection (`- ...` or `key:...`) rather than being a scalar. */
function opensCollection(text: string): boolean {
  if (text.startsWith('- ')) return true;
  if (text.startsWith('"')) {
    const string = quoted(text);
    return string !== undefined && text[string.length] === ':';
  }
  // A plain scalar never ends in a colon (synth quotes it), so a first word that does is a key.
  const space = text.indexOf(' ');
  return (space < 0 ? text : text.slice(0, space)).endsWith(':');
}

function sequence(cursor: Cursor, column: number): unknown[] {
  const items: unknown[] = [];
  let text: string | undefined = cursor.lines[cursor.at].slice(column);
  while (text !== undefined) {
    if (!text.startsWith('- ')) return leave();
    const rest = text.slice(2);
    if (opensCollection(rest)) {
      cursor.column = column + 2;
      items.push(collection(cursor));
    } else {
      items.push(scalar(rest));
      cursor.at++;
    }
    text = entryAt(cursor, column);
  }
  return items;
}

function mapping(cursor: Cursor, column: number): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  let text: string | undefined = cursor.lines[cursor.at].slice(column);
  while (text !== undefined) {
    const entry = keyOf(text);
    if (!entry || Object.prototype.hasOwnProperty.call(map, entry.key)) return leave();
    if (entry.rest === undefined) map[entry.key] = child(cursor, column + 2);
    else {
      map[entry.key] = scalar(entry.rest);
      cursor.at++;
    }
    text = entryAt(cursor, column);
  }
  return map;
}

/** One document's lines (comment lines removed) as its value. */
function documentValue(lines: readonly string[]): unknown {
  if (lines.length === 1 && (lines[0] === '{}' || lines[0] === '[]')) return lines[0] === '{}' ? {} : [];
  const cursor: Cursor = { lines, at: 0, column: 0 };
  if (lines[0].startsWith(' ')) return leave();
  const value = collection(cursor);
  return cursor.at === lines.length ? value : leave();
}

/**
 * The documents of `text` if it is YAML as synth writes it (src/constructs/_yaml.ts), else `undefined`.
 * For every text it accepts, the values equal what {@link readYamlDocuments}'s `yaml` path reads.
 */
export function readSynthYaml(text: string): unknown[] | undefined {
  if (text.includes('\r') || (text !== '' && !text.endsWith('\n'))) return undefined;
  const lines = text.split('\n');
  lines.pop();
  // A document starts at `---` or at its first line that is not a comment.
  const documents: string[][] = [];
  let current: string[] | undefined;
  for (const line of lines) {
    if (line === '---') documents.push((current = []));
    else if (!line.startsWith('#')) {
      if (line === '' || line.trimEnd() !== line) return undefined;
      if (!current) documents.push((current = []));
      current.push(line);
    }
  }
  try {
    return documents.map((document) => (document.length === 0 ? null : documentValue(document)));
  } catch (error) {
    if (error instanceof NotSynthYaml) return undefined;
    throw error;
  }
}

/**
 * The documents of a YAML file as plain values (YAML 1.2, core schema: `yes` and `on` are strings,
 * `0o17` is octal, `017` decimal; no merge keys). Throws on the first error or warning (an unknown tag, a
 * duplicate key), its message's first line, for the caller to name the file.
 */
export function readYamlDocuments(text: string): unknown[] {
  const fast = readSynthYaml(text);
  if (fast) return fast;
  return parseAllDocuments(text, { schema: 'core', merge: false, resolveKnownTags: false }).map((document) => {
    const problem = document.errors[0] ?? document.warnings[0];
    if (problem) throw new Error(problem.message.split('\n')[0]);
    return document.toJS() as unknown;
  });
}
