/**
 * The agent-model path of the Application reconciler: a hub Application labelled
 * `pullfleet.io/delivery-model: agent-…` is delivered by the argocd-agent principal, so nothing is wrapped
 * and its status stays the principal's. The writes that can happen: the hand-off of works this controller
 * wrote for it while it was basic (Orphan first, then a guarded delete once the work agent observed it),
 * the conflict condition (added or cleared) when the pull label is (or was) on it, and the release of this
 * controller's finalizer when the app is being deleted, only once the hand-off left no work (a deleted app
 * is handed off the same way: the agent owns the spoke Application, so it is never deleted through a work).
 */
import { splitKey } from '../../kube/cache.js';
import { KubeApiError } from '../../kube/client.js';
import { APPLICATION, MANIFEST_WORK } from '../../kube/resources.js';
import type { Application, ManifestWork } from '../../model/core/types.js';
import { DELIVERY_MODEL_LABEL } from '../../model/delivery/delivery-model.js';
import { computeHubApplicationPatch } from '../../model/reconcile/hub-application-patch.js';
import { isControllerWorkFor } from '../../model/reconcile/propagation.js';
import { computeAgentHandoff, handoffOrphanPatch, type AgentHandoffPlan } from '../../model/reconcile/takeover.js';
import type { ReconcileResult } from '../runtime/reconciler.js';
import { LAGGING_REQUEUE_MS, WORK_OWNER_INDEX, type ApplicationParts } from './application-parts.js';

/** Reconciles an agent-model hub Application (its key `key`). */
export async function reconcileAgentApplication(
  parts: ApplicationParts,
  key: string,
  app: Application,
): Promise<void | ReconcileResult> {
  const { context, writes } = parts;
  if (writes.lagging(APPLICATION, app.metadata.namespace, app.metadata.name, app))
    return { requeueAfterMs: LAGGING_REQUEUE_MS };
  const { namespace = '', name } = splitKey(key);
  const works = context.cache.byIndex<ManifestWork>(MANIFEST_WORK.id, WORK_OWNER_INDEX, key);
  if (writes.laggingAny(works)) return { requeueAfterMs: LAGGING_REQUEUE_MS };
  const computed = computeAgentHandoff(app, works, (work) => isControllerWorkFor(work, namespace, name));
  const mine = (ref: { namespace: string; name: string }) => writes.mayWrite(MANIFEST_WORK, ref.namespace, ref.name);
  const handoff = { ...computed, orphan: computed.orphan.filter(mine), deletes: computed.deletes.filter(mine) };
  await handOffWorks(parts, key, app, handoff);
  const decided = computeHubApplicationPatch({
    delivery: 'agent',
    app,
    handoffDone: handoff.done,
    now: context.now(),
  });
  const model = app.metadata.labels?.[DELIVERY_MODEL_LABEL]?.trim();
  if (decided.notes.releasedFinalizer)
    context.logger.info(
      { app: key, model },
      'agent-model Application deleted: its works handed off, releasing the finalizer',
    );
  if (decided.patch && writes.mayWrite(APPLICATION, namespace, name)) await writes.patchApp(app, decided.patch);
  // The work agent's report on an orphaned work (or its removal) is a ManifestWork event for this key.
  return decided.problem ? { terminal: decided.problem } : undefined;
}

/**
 * The hand-off of the app's works to the argocd-agent. Step 1: deleting the work must not delete the spoke
 * Application, so it is switched to Orphan, guarded by the resourceVersion the plan judged (a concurrent
 * rewrite gives a 409 and a fresh look). Step 2: once the work agent has observed Orphan, deleting the work
 * leaves the spoke Application; the preconditions refuse the delete if the work changed since (it is
 * judged afresh on the next pass).
 */
async function handOffWorks(
  parts: ApplicationParts,
  key: string,
  app: Application,
  handoff: AgentHandoffPlan,
): Promise<void> {
  const { context, writes } = parts;
  const model = app.metadata.labels?.[DELIVERY_MODEL_LABEL]?.trim();
  for (const ref of handoff.orphan) {
    try {
      await writes.patchWork(ref, handoffOrphanPatch(ref));
      context.logger.info(
        { app: key, model, work: `${ref.namespace}/${ref.name}` },
        'agent-model Application: its ManifestWork set to deleteOption Orphan for the hand-off to the argocd-agent',
      );
    } catch (error) {
      if (!(error instanceof KubeApiError && error.statusCode === 404)) throw error;
    }
  }
  for (const ref of handoff.deletes) {
    try {
      if (!(await writes.deleteWork(ref))) continue;
      context.logger.info(
        { app: key, model, work: `${ref.namespace}/${ref.name}` },
        'agent-model Application: orphaned ManifestWork deleted, the spoke Application stays with the argocd-agent',
      );
    } catch (error) {
      if (!(error instanceof KubeApiError && (error.statusCode === 404 || error.statusCode === 409))) throw error;
    }
  }
  if (handoff.waiting)
    context.logger.debug(
      { app: key, model, waiting: handoff.waiting },
      'agent-model Application: hand-off of its ManifestWork in progress',
    );
}
