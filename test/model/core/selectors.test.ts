import { describe, expect, test } from '@jest/globals';
import { matchesSelector, type LooseLabelSelector } from '../../../src/model/core/selectors.js';
import { matchesSelector as publicMatchesSelector } from '../../../src/model/core/selectors.js';

const labels = { env: 'prod', region: 'eu' };

describe('matchesSelector', () => {
  test('an empty selector matches everything', () => {
    expect(matchesSelector({}, labels)).toBe(true);
    expect(matchesSelector({ matchLabels: {}, matchExpressions: [] }, {})).toBe(true);
  });

  test('an absent selector matches everything', () => {
    expect(matchesSelector(undefined, labels)).toBe(true);
    expect(matchesSelector(undefined, undefined)).toBe(true);
  });

  test('absent labels are the empty map', () => {
    expect(matchesSelector({ matchLabels: { env: 'prod' } }, undefined)).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, undefined)).toBe(true);
  });

  test('matchLabels needs every pair', () => {
    expect(matchesSelector({ matchLabels: { env: 'prod' } }, labels)).toBe(true);
    expect(matchesSelector({ matchLabels: { env: 'prod', region: 'us' } }, labels)).toBe(false);
    expect(matchesSelector({ matchLabels: { tier: 'web' } }, labels)).toBe(false);
  });

  test('matchLabels with an empty value needs the key present with that value', () => {
    expect(matchesSelector({ matchLabels: { gpu: '' } }, { gpu: '' })).toBe(true);
    expect(matchesSelector({ matchLabels: { gpu: '' } }, {})).toBe(false);
  });

  test('In needs the key present with one of the values', () => {
    expect(
      matchesSelector({ matchExpressions: [{ key: 'env', operator: 'In', values: ['dev', 'prod'] }] }, labels),
    ).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }] }, labels)).toBe(
      false,
    );
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] }, labels)).toBe(
      false,
    );
  });

  test('In with no values matches nothing', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'In', values: [] }] }, labels)).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'In' }] }, labels)).toBe(false);
  });

  test('NotIn matches a missing key', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] }, labels)).toBe(
      true,
    );
  });

  test('NotIn refuses a listed value and accepts another', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, labels)).toBe(
      false,
    );
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] }, labels)).toBe(
      true,
    );
  });

  test('NotIn with no values matches everything', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'NotIn' }] }, labels)).toBe(true);
  });

  test('Exists and DoesNotExist look only at the key', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'Exists' }] }, labels)).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels)).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels)).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, labels)).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, { gpu: '' })).toBe(true);
  });

  test('matchLabels and matchExpressions are ANDed', () => {
    const selector: LooseLabelSelector = {
      matchLabels: { env: 'prod' },
      matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }],
    };
    expect(matchesSelector(selector, labels)).toBe(false);
    expect(matchesSelector(selector, { env: 'prod', region: 'us' })).toBe(true);
  });

  test('an unknown operator matches nothing', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'env', operator: 'Equals', values: ['prod'] }] }, labels)).toBe(
      false,
    );
    expect(
      matchesSelector({ matchExpressions: [{ key: 'env', operator: 'NotEquals', values: ['dev'] }] }, labels),
    ).toBe(false);
  });

  test('Object.prototype members are not labels', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {})).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'constructor', operator: 'DoesNotExist' }] }, {})).toBe(true);
    expect(matchesSelector({ matchLabels: { toString: 'x' } }, {})).toBe(false);
  });

  test('is the function the model package exports', () => {
    expect(publicMatchesSelector).toBe(matchesSelector);
  });
});
