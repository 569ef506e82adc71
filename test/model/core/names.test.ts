import { describe, expect, test } from '@jest/globals';
import { dnsLabelProblem, fitName, manifestWorkName, parseBool, shortHash } from '../../../src/model/core/names.js';

describe('fitName', () => {
  test('keeps a name that fits unchanged', () => {
    expect(fitName('argocd-guestbook')).toBe('argocd-guestbook');
  });

  test('shortens a long name to exactly the limit with a hash of the full name', () => {
    const long = `argocd-${'a'.repeat(80)}`;
    const fitted = fitName(long);
    expect(fitted).toHaveLength(63);
    expect(fitted.endsWith(`-${shortHash(long)}`)).toBe(true);
    expect(dnsLabelProblem(fitted)).toBeUndefined();
  });

  test('two long names sharing a prefix stay distinct', () => {
    const prefix = 'x'.repeat(70);
    expect(fitName(`${prefix}-one`)).not.toBe(fitName(`${prefix}-two`));
  });

  test('never leaves a dash before the hash separator', () => {
    const name = `${'a'.repeat(53)}-${'b'.repeat(20)}`;
    expect(fitName(name)).toMatch(/^a{53}-[0-9a-f]{8}$/);
  });
});

describe('manifestWorkName', () => {
  test('is derived from the hub namespace and app name, not a UID', () => {
    expect(manifestWorkName('argocd', 'guestbook')).toBe('argocd-guestbook');
  });

  test('fits 63 characters for any app name', () => {
    expect(manifestWorkName('argocd', 'cluster-with-a-long-name-'.repeat(10)).length).toBeLessThanOrEqual(63);
  });
});

describe('parseBool', () => {
  test.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('accepts %s like Go ParseBool', (value) => {
    expect(parseBool(value)).toBe(true);
  });
  test.each(['', 'yes', 'on', 'tRUE', undefined])('rejects %s', (value) => {
    expect(parseBool(value)).toBe(false);
  });
});
