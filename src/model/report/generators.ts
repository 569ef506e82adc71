/**
 * Which clusters an ApplicationSet is expected to reach: its clusterDecisionResource generators (nested
 * matrix and merge ones too), the Placements they read, and the PlacementDecisions that feed them.
 */
import { LOCAL_CLUSTER } from '../core/keys.js';
import { matchesSelector } from '../core/selectors.js';
import { applicationSetPlacements } from '../delivery/appset.js';
import type { ApplicationSet, ApplicationSetGenerator, PlacementDecision } from './types.js';

/** Every clusterDecisionResource generator of an ApplicationSet, including those nested in matrix/merge. */
export function clusterDecisionGenerators(
  appSet: Pick<ApplicationSet, 'spec'>,
): NonNullable<ApplicationSetGenerator['clusterDecisionResource']>[] {
  const found: NonNullable<ApplicationSetGenerator['clusterDecisionResource']>[] = [];
  const visit = (generators: ApplicationSetGenerator[] | undefined): void => {
    for (const generator of generators ?? []) {
      if (generator.clusterDecisionResource) found.push(generator.clusterDecisionResource);
      visit(generator.matrix?.generators);
      visit(generator.merge?.generators);
    }
  };
  visit(appSet.spec?.generators);
  return found;
}

/** Names of the Placements an ApplicationSet's generators select decisions from (sorted). */
export function placementNames(appSet: Pick<ApplicationSet, 'spec'>): string[] {
  return applicationSetPlacements(appSet.spec?.generators).sort();
}

/** Whether a PlacementDecision feeds one of the ApplicationSet's generators. */
export function decisionFeedsApplicationSet(
  appSet: ApplicationSet,
  decision: Pick<PlacementDecision, 'metadata'>,
): boolean {
  if (decision.metadata.namespace !== appSet.metadata.namespace) return false;
  return clusterDecisionGenerators(appSet).some((generator) =>
    matchesSelector(generator.labelSelector ?? {}, decision.metadata.labels),
  );
}

/**
 * The clusters an ApplicationSet is expected to reach: the union of `status.decisions[].clusterName`
 * over every PlacementDecision its generators read (a Placement spreads its decisions over several
 * objects of at most 100 entries), without the hub's own `local-cluster`. Sorted, no duplicates.
 */
export function expectedClusters(appSet: ApplicationSet, decisions: readonly PlacementDecision[]): string[] {
  const clusters = new Set<string>();
  for (const decision of decisions) {
    if (!decisionFeedsApplicationSet(appSet, decision)) continue;
    for (const entry of decision.status?.decisions ?? []) {
      const name = entry.clusterName?.trim();
      if (name && name !== LOCAL_CLUSTER) clusters.add(name);
    }
  }
  return [...clusters].sort();
}
