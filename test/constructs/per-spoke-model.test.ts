/**
 * The pure parts of values per spoke (src/model/delivery/per-spoke.ts): the merge rule, the mirrored label keys,
 * and the offline replacement that plays the applicationset-controller's non-Go templates.
 */
import { describe, expect, test } from '@jest/globals';
import {
  applySourceOverride,
  mergeValues,
  mirroredLabelKey,
  spokeLabelParam,
  spokeLabelsRead,
  substituteSpokeParams,
  unmirroredLabelKey,
} from '../../src/model/delivery/per-spoke.js';

describe('mergeValues', () => {
  test('objects merge key by key; arrays, scalars and null replace', () => {
    expect(
      mergeValues(
        { a: { b: 1, c: [1, 2] }, d: 'x', e: { f: 1 }, g: 1 },
        { a: { c: [3] }, d: null, e: 'flat', h: { i: true } },
      ),
    ).toStrictEqual({ a: { b: 1, c: [3] }, d: null, e: 'flat', g: 1, h: { i: true } });
  });

  test('neither input is changed', () => {
    const base = { a: { b: 1 } };
    const over = { a: { c: 2 } };
    mergeValues(base, over);
    expect(base).toStrictEqual({ a: { b: 1 } });
    expect(over).toStrictEqual({ a: { c: 2 } });
  });
});

describe('applySourceOverride', () => {
  test('an image for the same name replaces in place; others are added; the source is not changed', () => {
    const source = { repoURL: 'r', path: 'p', kustomize: { images: ['nginx:1.25', 'ghcr.io/x/redis@sha256:ab'] } };
    expect(applySourceOverride(source, { images: ['ghcr.io/x/redis:7', 'busybox=busybox:1'] }).kustomize).toStrictEqual(
      { images: ['nginx:1.25', 'ghcr.io/x/redis:7', 'busybox=busybox:1'] },
    );
    expect(source.kustomize.images).toStrictEqual(['nginx:1.25', 'ghcr.io/x/redis@sha256:ab']);
  });
});

describe('mirrored label keys', () => {
  test.each(['region', 'topology.kubernetes.io/zone', 'example.com/tier_a', 'a_b', 'x.y', 'x.y_z', 'x.y/z'])(
    '%s round-trips through the cluster Secret label',
    (key) => {
      const mirrored = mirroredLabelKey(key)!;
      expect(mirrored.split('/')[0].endsWith('spoke.pullfleet.io')).toBe(true);
      expect(unmirroredLabelKey(mirrored)).toBe(key);
      expect(spokeLabelsRead({ v: spokeLabelParam(key) })).toStrictEqual([key]);
    },
  );

  test('a key whose prefix is too long to mirror has no mirrored form', () => {
    expect(mirroredLabelKey(`${'a'.repeat(240)}.com/zone`)).toBeUndefined();
  });

  test('keys that look alike mirror to different labels', () => {
    expect(mirroredLabelKey('x.y_z')).toBe('spoke.pullfleet.io/x.y_z');
    expect(mirroredLabelKey('x.y/z')).toBe('x.y.spoke.pullfleet.io/z');
  });
});

describe('substituteSpokeParams (the applicationset-controller without Go templates)', () => {
  const spoke = { name: 'east', labels: { region: 'us-east' } };

  test('replaces the whole tag, spaces trimmed, in every string, also inside Helm values', () => {
    expect(
      substituteSpokeParams(
        { a: '{{ name }}', b: ['x-{{metadata.labels.spoke.pullfleet.io/region}}-y'], c: { d: 1 } },
        spoke,
      ),
    ).toStrictEqual({ a: 'east', b: ['x-us-east-y'], c: { d: 1 } });
  });

  test('leaves unknown tags as written: Helm templates and labels the spoke lacks', () => {
    const json = { a: '{{ .Values.x }}', b: '{{metadata.labels.spoke.pullfleet.io/zone}}', c: '{{server}}' };
    expect(substituteSpokeParams(json, spoke)).toStrictEqual(json);
  });
});
