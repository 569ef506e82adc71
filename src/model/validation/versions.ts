/**
 * Declared upstream versions (HubProps.versions, SpokeProps.versions, ClusterSetProps.spokeVersions): their
 * format, how a spoke's versions are resolved from the spoke, its cluster sets and its hub, and the checks of
 * what a fleet uses against them (the table is src/model/core/features.ts). Pure: every function returns
 * problems instead of throwing.
 */
import { featureFindings, type FeatureFinding, type FeatureId } from '../core/features.js';
import {
  formatVersion,
  kubernetesMinor,
  openShiftKubernetesMinor,
  parseVersion,
  type Version,
} from '../core/versions.js';

/** The releases a spoke runs, as declared (strings as the fleet file writes them). */
export interface DeclaredSpokeVersions {
  readonly argoCD?: string;
  readonly klusterlet?: string;
  readonly kubernetes?: string;
  readonly openshift?: string;
}

/** The releases a hub runs, as declared. */
export interface DeclaredHubVersions {
  readonly argoCD?: string;
  readonly ocm?: string;
  readonly acm?: string;
}

const EXAMPLES: Record<string, [string, string]> = {
  argoCD: ['3.4', '3.4.7'],
  ocm: ['1.1', '1.1.0'],
  klusterlet: ['1.1', '1.1.0'],
  acm: ['2.15', '2.15.1'],
  openshift: ['4.16', '4.16.3'],
};

/**
 * The problem with one declared version, or undefined: `at` names the prop (`versions.argoCD`). Kubernetes
 * takes what servers report (`v1.29.5+rhcos`); the others `major.minor` or `major.minor.patch`, with an
 * optional leading `v`.
 */
export function versionFormatProblem(at: string, key: string, given: unknown): string | undefined {
  if (key === 'kubernetes') {
    return typeof given === 'string' && kubernetesMinor(given) !== undefined
      ? undefined
      : `${at} ${JSON.stringify(given)} is not a Kubernetes version: give major.minor, for example '1.29', or the version the server reports, for example 'v1.29.5'`;
  }
  if (typeof given === 'string' && parseVersion(given) !== undefined) {
    if (key === 'openshift' && openShiftKubernetesMinor(parseVersion(given)!) === undefined)
      return `${at} ${JSON.stringify(given)} is not an OpenShift 4 release pullfleet knows (4.6 or later): give the OpenShift version, for example '4.16', or declare kubernetes instead`;
    return undefined;
  }
  const [minor, patch] = EXAMPLES[key] ?? ['3.4', '3.4.7'];
  return `${at} ${JSON.stringify(given)} is not a version: give major.minor, for example '${minor}', or major.minor.patch, for example '${patch}'`;
}

/**
 * Every declared version in its canonical form (`v3.4.7` → `3.4.7`, Kubernetes as `major.minor`), and the
 * problems of those that are not versions (left out of the result). `at` is the prop (`versions`).
 */
export function normalizeVersions<T extends object>(at: string, given: T): { versions: T; problems: string[] } {
  const problems: string[] = [];
  const versions: Record<string, string> = {};
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined || typeof value === 'object') continue;
    const problem = versionFormatProblem(`${at}.${key}`, key, value);
    if (problem) problems.push(problem);
    else
      versions[key] =
        key === 'kubernetes' ? kubernetesMinor(value as string)! : formatVersion(parseVersion(value as string)!);
  }
  return { versions: versions as T, problems };
}

/** One level a spoke's versions come from, most specific first: the spoke, a cluster set, the hub. */
export interface VersionSource {
  /** `spoke "edge-1"`, `cluster set "edge"`, `hub "eu"`, for messages. */
  readonly name: string;
  readonly versions: DeclaredSpokeVersions;
}

/** What a spoke runs, resolved: each component from the most specific level that declares it. */
export interface ResolvedSpokeVersions {
  readonly argoCD?: string;
  readonly klusterlet?: string;
  /** `major.minor`: declared, or the one the declared OpenShift release runs. */
  readonly kubernetes?: string;
  readonly openshift?: string;
  /** The level each component came from (`cluster set "edge"`). */
  readonly from: Readonly<Record<string, string>>;
}

/**
 * Resolves a spoke's versions from `levels` (the spoke first, then its cluster sets, then its hub). Levels
 * of equal rank (two cluster sets the spoke is a member of) are given as one group: when they declare
 * different releases of one component, that is a problem asking to declare it on the spoke. `openshift` is
 * false for a spoke that does not run OpenShift: an OpenShift release of a group then does not apply to it.
 */
export function resolveSpokeVersions(
  levels: ReadonlyArray<readonly VersionSource[]>,
  openshift: boolean,
): { versions: ResolvedSpokeVersions; problems: string[] } {
  const problems: string[] = [];
  const out: Record<string, string> = {};
  const from: Record<string, string> = {};
  for (const key of ['argoCD', 'klusterlet', 'kubernetes', 'openshift'] as const) {
    for (const [rank, group] of levels.entries()) {
      const declaring = group.filter((s) => s.versions[key] !== undefined);
      if (key === 'openshift' && !openshift && rank > 0) continue;
      if (declaring.length === 0) continue;
      const values = new Set(declaring.map((s) => s.versions[key]));
      if (values.size > 1) {
        problems.push(
          `versions.${key}: ${declaring.map((s) => `${s.name} declares ${s.versions[key]}`).join(', ')}: declare versions.${key} on the spoke itself`,
        );
      }
      out[key] = declaring[0].versions[key]!;
      from[key] = declaring[0].name;
      break;
    }
  }
  if (out.openshift !== undefined) {
    const runs = openShiftKubernetesMinor(parseVersion(out.openshift)!);
    if (out.kubernetes === undefined && runs !== undefined) {
      out.kubernetes = runs;
      from.kubernetes = from.openshift!;
    } else if (runs !== undefined && out.kubernetes !== runs) {
      problems.push(
        `versions: ${from.openshift} declares OpenShift ${out.openshift}, which runs Kubernetes ${runs}, but ${from.kubernetes} declares Kubernetes ${out.kubernetes}: declare one of them, or both as they are`,
      );
    }
  }
  return { versions: { ...out, from }, problems };
}

/** A feature in use and who uses it, against one component's declared release. */
export interface FeatureUse {
  readonly feature: FeatureId;
  /** The construct path the finding is reported under. */
  readonly path: string;
  /** `PullApplicationSet "web"`. */
  readonly usedBy: string;
  /** Who declares the version (`hub "eu"`, `spoke "edge-1"` (from cluster set "edge")). */
  readonly subject: string;
  /** The declared release, canonical; undefined when undeclared. */
  readonly declared?: string;
  /** Known-broken ranges the caller handles itself (by their first release). */
  readonly handled?: readonly string[];
}

/** A finding at a construct path. */
export interface PathFinding extends FeatureFinding {
  readonly path: string;
}

/** The findings of every feature use, one per problem. */
export function featureUseFindings(uses: readonly FeatureUse[]): PathFinding[] {
  return uses.flatMap((use) =>
    featureFindings(
      use.feature,
      use.declared === undefined ? undefined : (parseVersion(use.declared) as Version),
      use.subject,
      use.usedBy,
      (range) => use.handled?.includes(range.from) ?? false,
    ).map((f) => ({ ...f, path: use.path })),
  );
}
