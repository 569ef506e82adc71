import { describe, expect, test } from '@jest/globals';
import { kubeMicroTime, kubeTime } from '../../../src/model/core/time.js';
import { kubeTime as publicKubeTime } from '../../../src/model/core/time.js';

describe('kubeTime (metav1.Time)', () => {
  test.each([
    ['a whole second', '2024-05-06T07:08:09Z', '2024-05-06T07:08:09Z'],
    ['milliseconds dropped', '2024-05-06T07:08:09.123Z', '2024-05-06T07:08:09Z'],
    ['truncated, not rounded, as Go does', '2024-12-31T23:59:59.999Z', '2024-12-31T23:59:59Z'],
    ['before the epoch, toward the earlier second', '1969-12-31T23:59:59.999Z', '1969-12-31T23:59:59Z'],
    ['an offset written as UTC', '2024-05-06T09:08:09+02:00', '2024-05-06T07:08:09Z'],
  ])('RFC 3339 in UTC with second precision: %s', (_case, input, expected) => {
    expect(kubeTime(new Date(input))).toBe(expected);
  });

  test('throws on an invalid date', () => {
    expect(() => kubeTime(new Date(Number.NaN))).toThrow(RangeError);
  });

  test('is the function the model package exports', () => {
    expect(publicKubeTime).toBe(kubeTime);
  });
});

describe('kubeMicroTime (metav1.MicroTime)', () => {
  test('writes six fractional digits', () => {
    expect(kubeMicroTime(new Date('2024-05-06T07:08:09.123Z'))).toBe('2024-05-06T07:08:09.123000Z');
  });

  test('keeps a whole second as .000000', () => {
    expect(kubeMicroTime(new Date('2024-05-06T07:08:09Z'))).toBe('2024-05-06T07:08:09.000000Z');
  });

  test('parses back to the same instant', () => {
    const date = new Date('2024-05-06T07:08:09.987Z');
    expect(Date.parse(kubeMicroTime(date))).toBe(date.getTime());
  });
});
