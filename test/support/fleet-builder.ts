/**
 * One builder for the fleets tests declare: a Fleet, one hub, its cluster sets and its spokes, built on the
 * public constructs only and in that order (so a fleet built here renders exactly what the same constructs
 * declared by hand render). Placements, apps and moves stay with the caller, on the returned constructs.
 */
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Spoke,
  type ClusterSetProps,
  type FleetProps,
  type HubProps,
  type SpokeProps,
} from '../../src/constructs/index.js';

/** The outdir of a fleet a test renders in memory and never writes. */
export const NEVER_WRITTEN = '/nonexistent/never-written';

/** A spoke of {@link testFleet}: its name alone (labels none, in the first set), or a spec. */
export type TestSpoke =
  | string
  | (Omit<SpokeProps, 'clusterSet'> & {
      readonly name: string;
      /** The exclusive set, by name; `null` for none. @default the first set, if any */
      readonly set?: string | null;
    });

export interface TestFleetSpec {
  /** The Fleet's props. @default { outdir: NEVER_WRITTEN } */
  readonly fleet?: FleetProps;
  /** @default 'hub' */
  readonly hubName?: string;
  /** @default {} */
  readonly hub?: HubProps;
  /** Cluster sets, created before the spokes: a name, or a name with props. @default none */
  readonly sets?: ReadonlyArray<string | { readonly name: string; readonly props: ClusterSetProps }>;
  /** @default none */
  readonly spokes?: readonly TestSpoke[];
}

export interface TestFleet {
  readonly fleet: Fleet;
  readonly hub: Hub;
  /** The sets by name. */
  readonly sets: Readonly<Record<string, ClusterSet>>;
  /** The spokes in declaration order. */
  readonly spokes: Spoke[];
  /** The spoke named `name`; throws when the spec declared none. */
  spoke(name: string): Spoke;
}

/** Builds the Fleet, hub, sets and spokes `spec` describes. */
export function testFleet(spec: TestFleetSpec = {}): TestFleet {
  const fleet = new Fleet(spec.fleet ?? { outdir: NEVER_WRITTEN });
  const hub = new Hub(fleet, spec.hubName ?? 'hub', spec.hub ?? {});
  const sets: Record<string, ClusterSet> = {};
  let first: ClusterSet | undefined;
  for (const s of spec.sets ?? []) {
    const name = typeof s === 'string' ? s : s.name;
    const set = typeof s === 'string' ? new ClusterSet(hub, s) : new ClusterSet(hub, s.name, s.props);
    sets[name] = set;
    first ??= set;
  }
  const spokes = (spec.spokes ?? []).map((s) => {
    const { name, set, ...props } = typeof s === 'string' ? { name: s } : s;
    const clusterSet = set === null ? undefined : set === undefined ? first : sets[set];
    if (set && !clusterSet)
      throw new Error(`testFleet: spoke ${name} names set ${set}, which the spec does not declare`);
    return new Spoke(hub, name, { ...(clusterSet ? { clusterSet } : {}), ...props });
  });
  return {
    fleet,
    hub,
    sets,
    spokes,
    spoke(name) {
      const hit = spokes.find((spoke) => spoke.name === name);
      if (!hit)
        throw new Error(`testFleet: no spoke ${name}; the spec declares ${spokes.map((s) => s.name).join(', ')}`);
      return hit;
    },
  };
}

/** The Git source test apps use: repository apps.git on git.example.com, folder `path`. */
export function appsRepo(path: string, targetRevision?: string): AppSource {
  return AppSource.git({
    repoURL: 'https://git.example.com/apps.git',
    path,
    ...(targetRevision !== undefined ? { targetRevision } : {}),
  });
}
