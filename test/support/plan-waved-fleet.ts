/**
 * A small one-hub fleet with a waved static app, for plan tests (never the repository's fleet.config.ts):
 * spokes s1 (ring canary), s2 and s3, and PullApplication `app` on some of them, rolled out by the hub
 * controller in two waves (canary, then the rest). Synth renders its hub Applications and the rollout
 * policy, no ManifestWork: the controller writes (and deletes) those.
 */
import { AppSource, Fleet, PullApplication, Rollout } from '../../src/constructs/index.js';
import type { PlanSide } from '../../src/model/plan/controller-deletions.js';
import { NEVER_WRITTEN, testFleet } from './fleet-builder.js';
import { planSideOf } from './plan-fleet.js';

export const WAVED_SPOKES = ['s1', 's2', 's3'] as const;

export interface WavedFleetSpec {
  /** The fleet app's name. @default 'web' */
  readonly app?: string;
  /** The spokes the app targets. @default every spoke */
  readonly targets?: readonly string[];
  readonly pruneOnDelete?: boolean;
  /** @default 'main' */
  readonly revision?: string;
  /** Render the app with its rollout (waved). @default true */
  readonly waved?: boolean;
}

export function wavedFleet(spec: WavedFleetSpec = {}, outdir = NEVER_WRITTEN): Fleet {
  const { fleet, hub, spokes } = testFleet({
    fleet: { outdir },
    hub: { argoNamespace: 'argocd', controller: { enabled: false } },
    sets: ['prod'],
    spokes: WAVED_SPOKES.map((name) => ({ name, labels: { ring: name === 's1' ? 'canary' : 'main' } })),
  });
  const targets = spec.targets ?? WAVED_SPOKES;
  new PullApplication(hub, spec.app ?? 'web', {
    source: AppSource.git({
      repoURL: 'https://git.example.com/web.git',
      path: 'deploy',
      targetRevision: spec.revision ?? 'main',
    }),
    destinationNamespace: 'web',
    spokes: spokes.filter((spoke) => targets.includes(spoke.name)),
    ...(spec.pruneOnDelete ? { pruneOnDelete: true } : {}),
    ...(spec.waved === false
      ? {}
      : {
          rollout: Rollout.waves([
            { name: 'canary', labels: { ring: 'canary' } },
            { name: 'rest', rest: true },
          ]),
        }),
  });
  return fleet;
}

/** The fleet's output the way synth writes it: objects per file and the hub's plan state. */
export function wavedOutput(spec: WavedFleetSpec = {}): PlanSide {
  return planSideOf(wavedFleet(spec));
}
