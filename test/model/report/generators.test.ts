import { describe, expect, test } from '@jest/globals';
import { PULL_LABEL } from '../../../src/model/core/keys.js';
import { pullPlacements } from '../../../src/model/delivery/cluster-secret.js';
import { placementNames } from '../../../src/model/report/report.js';
import { placementApplicationSet, placementGenerator } from '../../support/appsets.js';

/** A pull ApplicationSet reading Placement `zeta` alone and `alpha` and `zeta` again inside a matrix and a merge. */
function nestedAppSet() {
  const appSet = placementApplicationSet({
    name: 'guestbook',
    placement: 'zeta',
    matrixWith: { merge: { generators: [placementGenerator('alpha'), placementGenerator('zeta')] } },
    template: { metadata: { labels: { [PULL_LABEL]: 'true' } } },
  });
  appSet.spec.generators!.push({ list: { elements: [] } });
  return appSet;
}

describe('the Placements of an ApplicationSet', () => {
  test('GIVEN generators nested in matrix and merge WHEN the report names its placements THEN each is listed once, sorted', () => {
    expect(placementNames(nestedAppSet())).toStrictEqual(['alpha', 'zeta']);
  });

  test('GIVEN a pull ApplicationSet WHEN the report and the cluster-Secret duty read its Placements THEN they name the same ones', () => {
    const appSet = nestedAppSet();
    expect([...pullPlacements([appSet])].sort()).toStrictEqual(placementNames(appSet).map((name) => `argocd/${name}`));
  });

  test('GIVEN an ApplicationSet without generators WHEN the report names its placements THEN there are none', () => {
    expect(placementNames({ spec: {} })).toStrictEqual([]);
  });
});
