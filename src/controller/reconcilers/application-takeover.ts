/**
 * The takeover path of the Application reconciler: works pullfleet takes over from another writer before
 * it writes its own. A legacy work of another controller (argocd-pull-integration, ACM's propagation
 * controller) is first made harmless to delete (deleteOption Orphan, so the spoke Application stays); the
 * work synth rendered for an app that is now waved loses Argo CD's tracking marks, so the hub's Argo CD
 * forgets it. What to take over is decided by the model (computePropagation, computeTakeover).
 */
import { KubeApiError } from '../../kube/client.js';
import type { PropagationPlan } from '../../model/reconcile/propagation.js';
import { orphanPatch } from '../../model/reconcile/takeover.js';
import type { ApplicationParts } from './application-parts.js';

/**
 * Hand-over from another controller's work, step 1: makes deleting it harmless to the spoke. Each patch is
 * guarded by the resourceVersion the plan judged, so a concurrent rewrite gives a 409 and a fresh look; a
 * work gone meanwhile needs nothing.
 */
export async function orphanLegacyWorks(parts: ApplicationParts, key: string, plan: PropagationPlan): Promise<void> {
  const { logger } = parts.context;
  for (const ref of plan.orphan ?? []) {
    try {
      await parts.writes.patchWork(ref, orphanPatch(ref));
      logger.info(
        { app: key, work: `${ref.namespace}/${ref.name}` },
        'legacy ManifestWork set to deleteOption Orphan for the hand-over',
      );
    } catch (error) {
      if (!(error instanceof KubeApiError && error.statusCode === 404)) throw error;
    }
  }
  if (plan.takeoverWaiting)
    logger.debug({ app: key, waiting: plan.takeoverWaiting }, 'hand-over from a legacy ManifestWork in progress');
}

/** A waved app takes over the work synth rendered before (when it writes its own now): Argo CD's tracking marks go first. */
export async function adoptSynthWork(parts: ApplicationParts, key: string, plan: PropagationPlan): Promise<void> {
  if (!plan.adopt || !plan.apply) return;
  const { namespace, name, patch } = plan.adopt;
  await parts.writes.patchWork({ namespace, name }, patch);
  parts.context.logger.info(
    { app: key, work: `${namespace}/${name}` },
    'took over the ManifestWork synth rendered for this app (now waved)',
  );
}
