import { describe, expect, test } from '@jest/globals';
import { canonicalJson } from '../../../src/model/core/canonical-json.js';
import { canonicalJson as publicCanonicalJson } from '../../../src/model/core/canonical-json.js';

describe('canonicalJson', () => {
  test('sorts object keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  test('gives one string for the same content in any key order', () => {
    expect(canonicalJson({ x: 1, y: { p: 'a', q: 'b' } })).toBe(canonicalJson({ y: { q: 'b', p: 'a' }, x: 1 }));
  });

  test('keeps array order', () => {
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  test('sorts integer-like keys by code point, as Go sorts map keys', () => {
    expect(canonicalJson({ '2': 'b', '10': 'a', x: 'c' })).toBe('{"10":"a","2":"b","x":"c"}');
  });

  test('leaves out object members that are undefined', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson({ a: undefined, b: 1 })).toBe(canonicalJson({ b: 1 }));
  });

  test('writes undefined inside an array as null, as JSON.stringify does', () => {
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
  });

  test('writes undefined at the top level as null', () => {
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(null)).toBe('null');
  });

  test('encodes scalars as JSON.stringify does', () => {
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson(1.5)).toBe('1.5');
    expect(canonicalJson(false)).toBe('false');
    expect(canonicalJson(Number.NaN)).toBe('null');
    expect(canonicalJson({ n: Number.POSITIVE_INFINITY })).toBe('{"n":null}');
  });

  test('escapes keys', () => {
    expect(canonicalJson({ 'a"b': 1 })).toBe('{"a\\"b":1}');
  });

  test('honours toJSON (a Date becomes its ISO string)', () => {
    expect(canonicalJson({ at: new Date('2024-01-02T03:04:05.000Z') })).toBe('{"at":"2024-01-02T03:04:05.000Z"}');
  });

  test('matches JSON.stringify for plain data whose keys are already sorted', () => {
    const value = { a: [1, 'x', null, { b: true }], c: { d: 'e' } };
    expect(canonicalJson(value)).toBe(JSON.stringify(value));
  });

  test('is the function the model package exports', () => {
    expect(publicCanonicalJson).toBe(canonicalJson);
  });
});
