/**
 * A small one-hub fleet for plan tests (never the repository's fleet.config.ts): cluster set prod,
 * placement all-prod (env=prod by default), optionally a PullApplicationSet podinfo and a static
 * PullApplication web following it.
 */
import {
  AppSource,
  ClusterSet,
  Fleet,
  Placement,
  PullApplication,
  PullApplicationSet,
} from '../../src/constructs/index.js';
import { planStateFiles } from '../../src/constructs/_plan-state.js';
import { type PlanSide } from '../../src/model/plan/controller-deletions.js';
import { parsePlanState } from '../../src/model/plan/state.js';
import { NEVER_WRITTEN, testFleet } from './fleet-builder.js';

export interface SpokeSpec {
  name: string;
  labels?: Record<string, string>;
  set?: 'prod' | 'none';
  /** Taints on the spoke's ManagedCluster. */
  taints?: Array<{ key: string; effect: 'NoSelect' | 'NoSelectIfNew' | 'PreferNoSelect' }>;
}

export interface FleetSpec {
  spokes?: SpokeSpec[];
  /** Predicate labels of placement all-prod. */
  match?: Record<string, string>;
  numberOfClusters?: number;
  /** Placement all-prod with `prioritizerMode: Exact` and no prioritizers (ties by name on the hub). */
  exactPrioritizers?: boolean;
  /** Add cluster set gpu (members by label gpu=true) to placement all-prod. */
  gpuSet?: boolean;
  /** Render PullApplicationSet podinfo following all-prod. @default true */
  appSet?: boolean;
  appSetPrune?: boolean;
  /** Render static PullApplication web to all-prod. */
  staticApp?: boolean;
  webRevision?: string;
}

const DEFAULT_SPOKES: SpokeSpec[] = [
  { name: 'east', labels: { env: 'prod' } },
  { name: 'west', labels: { env: 'prod' } },
];

/** The fleet described by `spec`, writing into `outdir` on synth. */
export function planFleetFixture(spec: FleetSpec = {}, outdir = NEVER_WRITTEN): Fleet {
  const { fleet, hub, sets } = testFleet({
    fleet: { outdir },
    hub: { argoNamespace: 'argocd', controller: { enabled: false } },
    sets: ['prod'],
    spokes: (spec.spokes ?? DEFAULT_SPOKES).map((s) => ({
      name: s.name,
      labels: s.labels ?? {},
      ...(s.set === 'none' ? { set: null } : {}),
      ...(s.taints ? { taints: s.taints } : {}),
    })),
  });
  const prod = sets.prod;
  const gpu = spec.gpuSet ? new ClusterSet(hub, 'gpu', { matchLabels: { gpu: 'true' } }) : undefined;
  const placement = new Placement(hub, 'all-prod', {
    clusterSets: gpu ? [prod, gpu] : [prod],
    predicates: [{ labels: spec.match ?? { env: 'prod' } }],
    ...(spec.numberOfClusters !== undefined ? { numberOfClusters: spec.numberOfClusters } : {}),
    ...(spec.exactPrioritizers ? { prioritizerMode: 'Exact' as const } : {}),
  });
  if (spec.appSet ?? true) {
    new PullApplicationSet(hub, 'podinfo', {
      source: AppSource.helm({
        repoURL: 'https://stefanprodan.github.io/podinfo',
        chart: 'podinfo',
        targetRevision: '6.7.1',
      }),
      destinationNamespace: 'podinfo',
      placement,
      ...(spec.appSetPrune ? { pruneOnDelete: true } : {}),
    });
  }
  if (spec.staticApp) {
    new PullApplication(hub, 'web', {
      source: AppSource.git({
        repoURL: 'https://git.example.com/web.git',
        path: 'deploy',
        targetRevision: spec.webRevision ?? 'main',
      }),
      destinationNamespace: 'web',
      placement,
    });
  }
  return fleet;
}

/** Renders the fixture the way synth does: objects per file and the hub's plan state. */
export function output(spec: FleetSpec = {}): PlanSide {
  return planSideOf(planFleetFixture(spec));
}

/** Renders any fleet the way synth does, as one side of a plan: objects per file and each hub's plan state. */
export function planSideOf(fleet: Fleet): PlanSide {
  const objects = [...fleet.renderObjects()].flatMap(([file, list]) => list.map((object) => ({ file, object })));
  const states = new Map(
    [...planStateFiles(fleet.hubs)].map(([file, text]) => [file.split('/')[0], parsePlanState(text, file)]),
  );
  return { objects, states };
}
