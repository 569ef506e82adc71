import { describe, expect, test } from '@jest/globals';
import { formatPlan, planFleet, type PlannedObject } from '../../src/model/index.js';

const work = (name: string, ns: string): PlannedObject => ({ file: `hub/hub/works/${ns}.yaml`, object: { apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { name, namespace: ns } } });
const app = (name: string, rev: string): PlannedObject => ({ file: 'hub/hub/applications.yaml', object: { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name, namespace: 'argocd' }, spec: { rev } } as never });

describe('planFleet', () => {
  test('GIVEN a removed work THEN it is a spoke deletion, listed apart from other changes', () => {
    const plan = planFleet([work('argocd-a-east', 'east'), app('a-east', '1'), app('b-east', '1')], [app('a-east', '2'), app('c-east', '1')]);
    expect(plan.workDeletions.map((c) => c.name)).toStrictEqual(['argocd-a-east']);
    expect(plan.removed.map((c) => c.name)).toStrictEqual(['b-east']);
    expect(plan.changed.map((c) => c.name)).toStrictEqual(['a-east']);
    expect(plan.added.map((c) => c.name)).toStrictEqual(['c-east']);
    expect(formatPlan(plan).split('\n')[0]).toBe('DELETIONS ON SPOKES (1): deleting these ManifestWorks deletes what they delivered');
  });

  test('moving an object between files with the same content is no change', () => {
    const moved = { ...app('a', '1'), file: 'hub/hub/other.yaml' };
    expect(formatPlan(planFleet([app('a', '1')], [moved]))).toBe('no changes: dist/ matches fleet.config.ts\n');
  });
});
