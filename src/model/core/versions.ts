/**
 * Kubernetes versions as pullfleet compares them: `major.minor` (the API a server serves changes with the
 * minor version; patch and build suffixes never change it).
 */

/** `v1.29.5+rke2r1`, `1.29.5`, `v1.29` or `1.29` → `1.29`; undefined for anything else. */
export function kubernetesMinor(version: string): string | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(version.trim());
  return match ? `${Number(match[1])}.${Number(match[2])}` : undefined;
}

/** Whether `version` (`major.minor`) is `minimum` (`major.minor`) or later. */
export function atLeastMinor(version: string, minimum: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  const [wantMajor, wantMinor] = minimum.split('.').map(Number);
  return major !== wantMajor ? major > wantMajor : minor >= wantMinor;
}

/**
 * A release of an upstream component (Argo CD, OCM, ACM, Kubernetes, OpenShift) as a fleet declares it:
 * `major.minor`, or `major.minor.patch` where the patch matters (Argo CD 3.3.7 and 3.4.7 changed RollingSync).
 * Without a patch, the declaration stands for every patch of that minor release.
 */
export interface Version {
  readonly major: number;
  readonly minor: number;
  /** undefined: any patch of the minor release. */
  readonly patch?: number;
}

/**
 * `3.4`, `3.4.7`, `v3.4.7`, `v3.4.7+abc`, `2.15.1-rc1` (a pre-release or build suffix is ignored) → the
 * version; undefined for anything else (`latest`, `3`, `3.x`).
 */
export function parseVersion(text: string): Version | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^[vV]?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,5}))?(?:[-+][0-9A-Za-z.+-]*)?$/.exec(text.trim());
  if (!match) return undefined;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    ...(match[3] !== undefined ? { patch: Number(match[3]) } : {}),
  };
}

/** `3.4` or `3.4.7`. */
export function formatVersion(v: Version): string {
  return v.patch === undefined ? `${v.major}.${v.minor}` : `${v.major}.${v.minor}.${v.patch}`;
}

/** Orders two exact versions (a missing patch counts as 0). */
function compare(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || (a.patch ?? 0) - (b.patch ?? 0);
}

/** The lowest and highest exact release a declaration stands for (a missing patch: every patch). */
function bounds(v: Version): [Version, Version] {
  return v.patch === undefined
    ? [
        { major: v.major, minor: v.minor, patch: 0 },
        { major: v.major, minor: v.minor, patch: Number.MAX_SAFE_INTEGER },
      ]
    : [v, v];
}

/**
 * Whether a declared version lies in the range `from`–`to` (both inclusive; `to` undefined: no upper end):
 * `yes` when every release it stands for does, `no` when none does, `maybe` when only some do (`3.4`
 * against 3.4.0–3.4.6).
 */
export function versionIn(declared: Version, from: Version, to?: Version): 'yes' | 'no' | 'maybe' {
  const [low, high] = bounds(declared);
  const fromLow = bounds(from)[0];
  const toHigh = to ? bounds(to)[1] : undefined;
  const inside = (v: Version) => compare(v, fromLow) >= 0 && (toHigh === undefined || compare(v, toHigh) <= 0);
  const lowIn = inside(low);
  const highIn = inside(high);
  if (lowIn && highIn) return 'yes';
  if (!lowIn && !highIn && (compare(high, fromLow) < 0 || (toHigh !== undefined && compare(low, toHigh) > 0)))
    return 'no';
  return 'maybe';
}

/** Whether every release a declared version stands for is `minimum` or later (`3.4` ≥ `3.2`; `3.4` is not ≥ `3.4.7`). */
export function atLeastVersion(declared: Version, minimum: Version): boolean {
  return versionIn(declared, minimum) === 'yes';
}

/**
 * The Kubernetes minor an OpenShift release runs (4.x runs 1.(x + 13): 4.16 runs 1.29, 4.17 runs 1.30), for
 * OpenShift 4.6 and later; undefined for other releases.
 */
export function openShiftKubernetesMinor(openshift: Version): string | undefined {
  if (openshift.major !== 4 || openshift.minor < 6) return undefined;
  return `1.${openshift.minor + 13}`;
}
