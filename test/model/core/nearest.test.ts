/** "Did you mean": one edit distance for every suggestion pullfleet makes (props, grants, status names). */
import { describe, expect, test } from '@jest/globals';
import { editDistance, nearestName } from '../../../src/model/core/nearest.js';

describe('editDistance', () => {
  test.each([
    ['deployments', 'deployments', 0],
    ['deployment', 'deployments', 1],
    ['deplyoments', 'deployments', 1], // two neighbours swapped: one edit
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ])('%s → %s is %i', (a, b, expected) => {
    expect(editDistance(a, b)).toBe(expected);
    expect(editDistance(b, a)).toBe(expected);
  });
});

describe('nearestName', () => {
  test('GIVEN a key with two letters swapped THEN the key meant is suggested', () => {
    expect(nearestName('prnue', ['prune', 'selfHeal'])).toBe('prune');
  });

  test('GIVEN another case THEN the name as known is suggested; GIVEN nothing close THEN none', () => {
    expect(nearestName('SelfHeal', ['prune', 'selfHeal'])).toBe('selfHeal');
    expect(nearestName('replicas', ['prune', 'selfHeal'])).toBeUndefined();
  });
});
