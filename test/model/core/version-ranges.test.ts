/**
 * Declared upstream versions (src/model/core/versions.ts): what a fleet may write, and how a declaration
 * with or without a patch release compares with a minimum and with a range of releases.
 */
import { describe, expect, test } from '@jest/globals';
import {
  atLeastVersion,
  formatVersion,
  openShiftKubernetesMinor,
  parseVersion,
  versionIn,
  type Version,
} from '../../../src/model/core/versions.js';

const v = (text: string) => parseVersion(text)!;

describe('parseVersion', () => {
  test('GIVEN what users and servers write THEN major.minor[.patch], and nothing for what is not a version', () => {
    expect(parseVersion('3.4')).toStrictEqual({ major: 3, minor: 4 });
    expect(parseVersion('v3.4.7')).toStrictEqual({ major: 3, minor: 4, patch: 7 });
    expect(parseVersion(' V3.4.7+abc ')).toStrictEqual({ major: 3, minor: 4, patch: 7 });
    expect(parseVersion('2.15.1-rc1')).toStrictEqual({ major: 2, minor: 15, patch: 1 });
    expect(parseVersion('0.16')).toStrictEqual({ major: 0, minor: 16 });
    for (const bad of ['latest', '3', '3.x', 'v', '', '3.4.7.1', 'release-2.15', '4.16 (OpenShift)'])
      expect([bad, parseVersion(bad)]).toStrictEqual([bad, undefined]);
    expect(formatVersion(v('v03.04.07'))).toBe('3.4.7');
    expect(formatVersion(v('1.0'))).toBe('1.0');
  });
});

describe('versionIn and atLeastVersion', () => {
  test('GIVEN a minor without a patch THEN it stands for every patch of it', () => {
    expect(versionIn(v('3.4'), v('3.4.0'), v('3.4.6'))).toBe('maybe');
    expect(versionIn(v('3.4.3'), v('3.4.0'), v('3.4.6'))).toBe('yes');
    expect(versionIn(v('3.4.7'), v('3.4.0'), v('3.4.6'))).toBe('no');
    expect(versionIn(v('3.5'), v('3.4.0'), v('3.4.6'))).toBe('no');
    expect(versionIn(v('1.0'), v('1.0'), v('1.0'))).toBe('yes');
    expect(atLeastVersion(v('3.4'), v('3.2'))).toBe(true);
    expect(atLeastVersion(v('3.1.16'), v('3.2'))).toBe(false);
    expect(atLeastVersion(v('3.4'), v('3.4.7'))).toBe(false);
    expect(atLeastVersion(v('1.10'), v('1.9'))).toBe(true);
  });

  test('GIVEN random declarations and ranges (seeded) THEN the answer agrees with every patch release enumerated', () => {
    const seed = Number(process.env.SEED ?? 26);
    let state = seed;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const random = (withPatch: boolean): Version => ({
      major: 3,
      minor: next(4),
      ...(withPatch ? { patch: next(8) } : {}),
    });
    const exact = (x: Version, p: number): Version => ({ major: x.major, minor: x.minor, patch: x.patch ?? p });
    const cmp = (a: Version, b: Version) => a.major - b.major || a.minor - b.minor || (a.patch ?? 0) - (b.patch ?? 0);
    for (let i = 0; i < 500; i++) {
      const declared = random(next(2) === 0);
      let from = random(next(2) === 0);
      let to = random(next(2) === 0);
      if (cmp(from, to) > 0) [from, to] = [to, from];
      const patches = declared.patch === undefined ? [...Array(12).keys()] : [declared.patch];
      const inside = patches.map((p) => {
        const e = exact(declared, p);
        const hi = to.patch === undefined ? { ...to, patch: Number.MAX_SAFE_INTEGER } : to;
        return cmp(e, { ...from, patch: from.patch ?? 0 }) >= 0 && cmp(e, hi) <= 0;
      });
      const expected = inside.every(Boolean) ? 'yes' : inside.some(Boolean) ? 'maybe' : 'no';
      const got = versionIn(declared, from, to);
      if (got !== expected)
        throw new Error(
          `seed ${seed}: versionIn(${formatVersion(declared)}, ${formatVersion(from)}, ${formatVersion(to)}) is ${got}, expected ${expected}`,
        );
    }
  });
});

describe('openShiftKubernetesMinor', () => {
  test('GIVEN OpenShift 4.x THEN the Kubernetes minor it runs', () => {
    expect(openShiftKubernetesMinor(v('4.16'))).toBe('1.29');
    expect(openShiftKubernetesMinor(v('4.17.3'))).toBe('1.30');
    expect(openShiftKubernetesMinor(v('4.12'))).toBe('1.25');
    expect(openShiftKubernetesMinor(v('3.11'))).toBeUndefined();
  });
});
