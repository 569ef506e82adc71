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
