/** Pieces the synth and plan benchmarks build their generated fleets from. */
import { AppSource, PullApplication, type Hub, type ISpoke } from '../src/constructs/index.js';

/** What every generated app declares it renders. */
export const BENCH_GRANTS = [
  { apiGroup: '', resources: ['configmaps', 'services'] },
  { apiGroup: 'apps', resources: ['deployments'] },
];

/** `count` apps from one Git repository, each delivered statically to every one of `spokes`. */
export function addStaticApps(hub: Hub, spokes: readonly ISpoke[], count: number): void {
  const grants = BENCH_GRANTS;
  for (let a = 0; a < count; a++) {
    new PullApplication(hub, `app-${a}`, {
      source: AppSource.git({
        repoURL: 'https://git.example.com/platform/apps.git',
        path: `apps/app-${a}`,
        targetRevision: 'main',
      }),
      destinationNamespace: `app-${a}`,
      resources: grants,
      spokes: [...spokes],
    });
  }
}
