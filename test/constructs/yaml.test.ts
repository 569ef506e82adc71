import { describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { toYaml, toYamlDocuments } from '../../src/constructs/_yaml.js';

const tricky = [
  'true',
  'False',
  'yes',
  'No',
  'on',
  'OFF',
  'y',
  'n',
  'null',
  '~',
  '',
  ' ',
  '1',
  '1.0',
  '0x1f',
  '1e3',
  '.inf',
  '-.Inf',
  '.nan',
  '1:20',
  '2024-01-01',
  '{{name}}-app',
  '*alias',
  '&anchor',
  '!tag',
  '%dir',
  '@at',
  '`tick',
  '- item',
  '? key',
  ': colon',
  'key: value',
  'a #comment',
  '#hash',
  'trailing:',
  "it's",
  '"quoted"',
  'line1\nline2',
  'tab\there',
  'unicode é ✓',
  '\u2028',
  'https://kubernetes.default.svc',
  'app.kubernetes.io/managed-by',
  '---',
  '...',
  'ServerSideApply=true',
  '[flow]',
  '{flow}',
  '|',
  '>',
  'a,b',
  '0',
  '-1',
  '+1',
  '=',
];

describe('toYaml', () => {
  test('GIVEN a minimal object THEN block YAML', () => {
    expect(toYaml({ a: 'b', c: { d: [1, 'x', { e: true }] }, f: [], g: {}, h: null })).toBe(
      'a: b\nc:\n  d:\n    - 1\n    - x\n    - e: true\nf: []\ng: {}\nh: null\n',
    );
  });

  test('GIVEN sequences in sequences and mappings in them THEN each item opens with its dash, nested ones on one line', () => {
    expect(toYaml({ a: [[1, [2, { b: [{ c: 'd', e: [] }] }]], { f: 1, g: { h: 2 } }], i: [[]] })).toBe(
      [
        'a:',
        '  - - 1',
        '    - - 2',
        '      - b:',
        '          - c: d',
        '            e: []',
        '  - f: 1',
        '    g:',
        '      h: 2',
        'i:',
        '  - []',
        '',
      ].join('\n'),
    );
    expect(toYaml([[['x']]])).toBe('- - - x\n');
  });

  test('GIVEN the same strings in many objects THEN each is written the same way every time', () => {
    const doc = { 'key: x': 'on', plain: 'value', quoted: 'yes' };
    const once = toYaml(doc);
    expect(once).toBe('"key: x": "on"\nplain: value\nquoted: "yes"\n');
    for (let i = 0; i < 3; i++) expect(toYaml(doc)).toBe(once);
  });

  test.each(['1.1', '1.2'] as const)(
    'every tricky string reads back unchanged as a value and as a key (YAML %s)',
    (version) => {
      const doc = {
        values: tricky,
        keys: Object.fromEntries(tricky.map((t, i) => [t, i])),
        nested: [[['deep']], [{}], [[]]],
      };
      const parsed = parseAllDocuments(toYamlDocuments([doc, { second: 2 }]), { version }).map((d) => d.toJS());
      expect(parsed).toStrictEqual([doc, { second: 2 }]);
    },
  );

  test('GIVEN DEL, every C1 control and the Unicode separators THEN they are written escaped and read back unchanged', () => {
    const controls = [
      '\u007f',
      ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)),
      '\u2028',
      '\u2029',
      '\ufeff',
      '\ufffe',
      '\uffff',
    ];
    const doc = {
      values: controls.map((c) => `a${c}b`),
      keys: Object.fromEntries(controls.map((c, i) => [`k${c}`, i])),
      bare: '\u0085',
    };
    const text = toYaml(doc);
    expect(text).not.toMatch(/[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/);
    expect(text).toContain('- "a\\u0085b"');
    expect(text).toContain('"k\\u007f": 0');
    expect(text).toContain('bare: "\\u0085"');
    for (const version of ['1.1', '1.2'] as const)
      expect(parseAllDocuments(text, { version }).map((d) => d.toJS())).toStrictEqual([doc]);
  });

  test('fails when a value is a BigInt', () => {
    expect(() => toYaml({ a: 12n })).toThrow('cannot write the BigInt 12n to YAML');
  });

  test('fails when a value is not JSON', () => {
    expect(() => toYaml({ a: Number.NaN })).toThrow('cannot write NaN to YAML');
  });
});
