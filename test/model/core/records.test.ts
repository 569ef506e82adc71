import { describe, expect, test } from '@jest/globals';
import { sortKeys } from '../../../src/model/core/records.js';

describe('sortKeys', () => {
  test('orders keys by code point', () => {
    expect(Object.keys(sortKeys({ b: 1, a: 2, 'app.kubernetes.io/name': 3, B: 4 }))).toEqual([
      'B',
      'a',
      'app.kubernetes.io/name',
      'b',
    ]);
  });

  test('returns a copy and leaves the input alone', () => {
    const input = { b: '1', a: '2' };
    const out = sortKeys(input);
    expect(out).not.toBe(input);
    expect(Object.keys(input)).toEqual(['b', 'a']);
    expect(out).toEqual({ a: '2', b: '1' });
  });

  test('keeps undefined values', () => {
    const out = sortKeys<string | undefined>({ b: undefined, a: 'x' });
    expect(Object.keys(out)).toEqual(['a', 'b']);
    expect('b' in out).toBe(true);
  });

  test('the empty map stays empty', () => {
    expect(sortKeys({})).toEqual({});
  });

  test('integer-like keys come first in numeric order (a JavaScript object rule)', () => {
    expect(Object.keys(sortKeys({ x: 1, '10': 2, '2': 3 }))).toEqual(['2', '10', 'x']);
  });

  test('keeps a __proto__ key as an own property', () => {
    const input = JSON.parse('{"__proto__":"p","a":"b"}') as Record<string, string>;
    const out = sortKeys(input);
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});
