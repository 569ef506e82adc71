import { describe, expect, test } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readSynthYaml, readYamlDocuments } from '../../../src/cli/support/read-yaml.js';
import { toYamlDocuments } from '../../../src/constructs/_yaml.js';
import { rng } from '../../support/oracle-fleet.js';

/** What the `yaml` package reads (YAML 1.2, core schema): the reference for every text. */
function reference(text: string): unknown[] {
  return parseAllDocuments(text).map((document) => {
    expect(document.errors).toStrictEqual([]);
    return document.toJS() as unknown;
  });
}

/** Strings synth writes plain, strings it must quote, and strings that look like other scalars. */
const STRINGS = [
  'web',
  'app.kubernetes.io/managed-by',
  'https://kubernetes.default.svc',
  '/path',
  '_x',
  'a:b',
  'a::b',
  'ServerSideApply=true',
  'yes',
  'No',
  'on',
  'True',
  'NULL',
  'nan',
  '~',
  '',
  ' ',
  '1',
  '-1',
  '0o17',
  '017',
  '0x1f',
  '0b101',
  '1e3',
  '.inf',
  'trailing:',
  'key: value',
  'a #b',
  '#hash',
  '- item',
  '"quoted"',
  "it's",
  'line1\nline2',
  'tab\there',
  'unicode é ✓ 😀',
  '\u007f\u0085\u2028\ufeff',
  '\\',
  '__proto__x',
  '{flow}',
  '---',
];
const NUMBERS = [0, 1, -1, 42, 1.5, -0.25, 1e21, 5e-7, 2 ** 53];

function value(random: () => number, depth: number): unknown {
  const roll = random();
  if (depth > 3 || roll < 0.45) {
    const kind = Math.floor(random() * 5);
    if (kind === 0) return NUMBERS[Math.floor(random() * NUMBERS.length)];
    if (kind === 1) return random() < 0.5;
    if (kind === 2) return null;
    return STRINGS[Math.floor(random() * STRINGS.length)];
  }
  const size = Math.floor(random() * 4);
  if (roll < 0.7) return Array.from({ length: size }, () => value(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = 0; i < size; i++) object[STRINGS[Math.floor(random() * STRINGS.length)]] = value(random, depth + 1);
  return object;
}

/** The document list synth would write: objects and arrays at the top, several per file. */
function documents(random: () => number): object[] {
  return Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
    const document = value(random, 1);
    return typeof document === 'object' && document !== null ? document : { value: document };
  });
}

/** Why the fast reader disagrees on `docs` (written as synth writes them), or undefined. */
function disagreement(docs: object[]): string | undefined {
  const text = `# header\n${toYamlDocuments(docs)}`;
  const fast = readSynthYaml(text);
  if (fast === undefined) return `the fast reader refused synth output:\n${text}`;
  if (JSON.stringify(fast) !== JSON.stringify(docs)) return `read ${JSON.stringify(fast)} from:\n${text}`;
  if (JSON.stringify(reference(text)) !== JSON.stringify(fast)) return `the yaml package reads otherwise:\n${text}`;
  return undefined;
}

/** Smaller variants of `docs`: a document, a key or an item fewer, a collection replaced by null. */
function* smaller(docs: object[]): Generator<object[]> {
  for (let i = 0; i < docs.length && docs.length > 1; i++) yield docs.filter((_, j) => j !== i);
  function* inside(node: unknown): Generator<unknown> {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) yield node.filter((_, j) => j !== i);
      for (let i = 0; i < node.length; i++)
        for (const item of inside(node[i])) yield node.map((old, j) => (j === i ? item : old));
    } else if (node && typeof node === 'object') {
      const entries = Object.entries(node);
      for (const [key] of entries) yield Object.fromEntries(entries.filter(([k]) => k !== key));
      for (const [key, old] of entries)
        for (const item of inside(old)) yield Object.fromEntries(entries.map(([k, v]) => [k, k === key ? item : v]));
    }
  }
  for (let i = 0; i < docs.length; i++)
    for (const document of inside(docs[i]))
      if (document && typeof document === 'object') yield docs.map((old, j) => (j === i ? document : old));
}

function shrink(docs: object[]): object[] {
  let best = docs;
  for (let progress = true; progress;) {
    progress = false;
    for (const candidate of smaller(best))
      if (disagreement(candidate)) {
        best = candidate;
        progress = true;
        break;
      }
  }
  return best;
}

describe('readSynthYaml', () => {
  test('generated objects written as synth writes them read back unchanged, as the yaml package reads them', () => {
    const seed = Number(process.env.PULLFLEET_READ_YAML_SEED ?? 20261128);
    const random = rng(seed);
    for (let i = 0; i < 500; i++) {
      const docs = documents(random);
      if (!disagreement(docs)) continue;
      const small = shrink(docs);
      throw new Error(
        `seed ${seed}, case ${i}: ${disagreement(small)}\nsmallest case: ${JSON.stringify(small)}\nrerun: PULLFLEET_READ_YAML_SEED=${seed}`,
      );
    }
  });

  test("GIVEN the repository's dist/ THEN every file is read by the fast reader, as the yaml package reads it", () => {
    const dist = path.join(process.cwd(), 'dist');
    const files = fs.readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => /\.ya?ml$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = fs.readFileSync(path.join(dist, file), 'utf8');
      expect({ file, documents: readSynthYaml(text) }).toStrictEqual({ file, documents: reference(text) });
    }
  });

  test('GIVEN empty files, comments and document markers THEN the same documents as the yaml package', () => {
    for (const text of [
      '',
      '# only\n',
      '---\n',
      'a: 1\n---\n',
      '---\na: 1\n',
      '# h\n---\na: 1\n---\n- 1\n',
      '{}\n---\n[]\n',
    ])
      expect({ text, documents: readSynthYaml(text) }).toStrictEqual({ text, documents: reference(text) });
  });

  test('GIVEN YAML synth does not write THEN the fast reader answers undefined', () => {
    for (const text of [
      'a: yes\n', // plain word another YAML version reads as a boolean
      'a: 010\n',
      'a: -0\n',
      'a: 12345678901234567890\n',
      'a:\n- 1\n', // a sequence not indented under its key
      'a: b\n  c\n', // a plain scalar continued on the next line
      'a: 1 # note\n',
      'a: &x 1\nb: *x\n',
      'a: {b: 1}\n',
      "a: 'single'\n",
      'a: |\n  text\n',
      'a:\n',
      'a: 1\na: 2\n',
      '__proto__: 1\n',
      'a: 1\r\n',
      'a: 1\n\nb: 2\n',
      'a: 1 \n',
      '  a: 1\n',
      'a:\n   b: 1\n',
      'a: "\u2028"\n',
      'a: "raw\ttab"\n',
      '%YAML 1.2\n---\na: 1\n',
      'a: 1\n...\n',
      'a: 1',
    ])
      expect({ text, documents: readSynthYaml(text) }).toStrictEqual({ text, documents: undefined });
  });
});

describe('readYamlDocuments', () => {
  test('GIVEN YAML outside what synth writes THEN the YAML 1.2 core schema reads it', () => {
    expect(
      readYamlDocuments('a: yes\nb: on\nc: 0o17\nd: 017\ne: 0x1f\nf: ~\ng: &x [1]\nh: *x\n<<: {i: 1}\n'),
    ).toStrictEqual([{ a: 'yes', b: 'on', c: 15, d: 17, e: 31, f: null, g: [1], h: [1], '<<': { i: 1 } }]);
    expect(readYamlDocuments('%YAML 1.1\n---\na: yes\n')).toStrictEqual([{ a: 'yes' }]);
  });

  test('GIVEN broken YAML, a duplicate key or an unknown tag THEN it throws the first problem, one line', () => {
    for (const text of ['a: [unclosed\n', 'a: 1\na: 2\n', 'a: !!binary aGk=\n', 'a: !custom x\n']) {
      expect(() => readYamlDocuments(text)).toThrow(/^[^\n]+$/);
    }
  });
});
