/**
 * Duties 1 and 2 for one hub Application key: propagate it into a ManifestWork (create, update,
 * retarget, opt-out, deletion with the cleanup finalizer, orphan sweep, `operation` forwarding) and
 * write the spoke's feedback back into its status. Reads the cache, calls the pure model, writes once.
 *
 * `reconcile` dispatches to the parts: the agent-model path (application-agent.ts), and the basic path
 * (application-basic.ts: observe the cache, plan with the model, write the works, with the takeover of
 * other writers' works in application-takeover.ts, then write the hub Application once with the patch
 * model/reconcile/hub-application-patch.ts computes). The watches and cache trims are in
 * application-watches.ts, the writes and the state kept between reconciles in application-writes.ts.
 *
 * Hub Applications labelled `pullfleet.io/delivery-model: agent-…` belong to the argocd-agent principal:
 * they are never wrapped and their status is never written, except for one condition when the pull label
 * is on them too (a conflict only the user can resolve). Works the controller wrote for them during an
 * earlier basic delivery are handed off orphan-first: switched to `deleteOption: Orphan`, then deleted once
 * the work agent observed that, so the spoke Application the agent now owns is never deleted.
 */
import { objectKey } from '../../kube/cache.js';
import { APPLICATION, MANIFEST_WORK } from '../../kube/resources.js';
import type { Application, ManifestWork } from '../../model/core/types.js';
import { isAgentModel } from '../../model/delivery/classification.js';
import { computePropagation, workOwnerKey, type PropagationPlan } from '../../model/reconcile/propagation.js';
import { applicationShard, writablePlan } from '../../model/reconcile/shards.js';
import { DELIVERY_MODEL_CONFLICT_CONDITION } from '../../model/reconcile/status.js';
import type { Reconciler, ReconcilerContext, ReconcileInfo, ReconcileResult } from '../runtime/reconciler.js';
import { reconcileAgentApplication } from './application-agent.js';
import { observeApplication, writeHubApplication, writeWorks } from './application-basic.js';
import { LAGGING_REQUEUE_MS, WORK_OWNER_INDEX, tenancyInventory, type ApplicationParts } from './application-parts.js';
import { orphanLegacyWorks } from './application-takeover.js';
import { applicationWatches } from './application-watches.js';
import { ApplicationWrites } from './application-writes.js';
import { rolloutReader } from './rollout-cache.js';

export {
  APP_CLUSTER_INDEX,
  APP_NAMESPACE_INDEX,
  APP_TARGET_WORK_INDEX,
  BINDING_SET_INDEX,
  DECISION_NAMESPACE_INDEX,
  FIRST_WRITE_WAIT_MS,
  LAGGING_REQUEUE_MS,
  MAX_WORK_BYTES,
  UNSEEN_WORK_RECHECK_MS,
  WORK_OWNER_INDEX,
} from './application-parts.js';
export { trimApplication } from './application-watches.js';
export { SUMMARY_RULE_RECHECK_MS } from './application-writes.js';

/** Condition on an agent-model hub Application that also carries the pull label (a basic reconcile drops it). */
export const AGENT_PULL_CONFLICT_CONDITION = DELIVERY_MODEL_CONFLICT_CONDITION;

export function createApplicationReconciler(
  context: ReconcilerContext,
): Reconciler & { pendingExpectations(): number } {
  const { cache, config } = context;
  const writes = new ApplicationWrites(context);
  let inventory: ReturnType<typeof tenancyInventory> | undefined;
  const parts: ApplicationParts = {
    context,
    writes,
    rollouts: rolloutReader(cache),
    inventory: () => (inventory ??= tenancyInventory(cache)),
  };
  const sharding = context.sharding;

  /** Reads the cache, asks the model, writes the works, then the hub Application at most once. */
  async function reconcile(key: string, info: ReconcileInfo): Promise<void | ReconcileResult> {
    const app = cache.get<Application>(APPLICATION.id, key);
    if (app && isAgentModel(app)) return reconcileAgentApplication(parts, key, app);
    const seen = observeApplication(parts, key, app);
    if (seen.lagging) return { requeueAfterMs: LAGGING_REQUEUE_MS };
    let plan: PropagationPlan = computePropagation(seen.propagation);
    // Sharded: the works of clusters of other shards are theirs to write (a retarget's old work included).
    if (sharding) plan = writablePlan(plan, (ref) => writes.mayWrite(MANIFEST_WORK, ref.namespace, ref.name));
    await orphanLegacyWorks(parts, key, plan);
    const written = await writeWorks(parts, seen, plan, info);
    if (!('plan' in written)) return written;
    if (!app) {
      writes.firstWriteWaiting.delete(key);
      return;
    }
    if (!writes.mayWrite(APPLICATION, app.metadata.namespace, app.metadata.name)) return;
    return writeHubApplication(parts, { ...seen, app }, written, info);
  }

  return {
    name: 'application',
    workers: config.workers,
    watches: applicationWatches(cache, config, writes, () => (inventory = undefined)),
    shardsOf: (key) => {
      const app = cache.get<Application>(APPLICATION.id, key);
      const shards = new Set<number>();
      if (!sharding) return [0];
      if (app) shards.add(applicationShard(app, sharding.count));
      for (const work of cache.byIndex<ManifestWork>(MANIFEST_WORK.id, WORK_OWNER_INDEX, key))
        shards.add(sharding.shardOfCluster(work.metadata.namespace ?? ''));
      if (shards.size === 0) shards.add(sharding.shardOfKey(key));
      return [...shards];
    },
    resyncKeys: () => {
      const keys = new Set(cache.list<Application>(APPLICATION.id).map((app) => objectKey(app)));
      // Works whose hub app is gone are swept by reconciling their owner key.
      for (const work of cache.list<ManifestWork>(MANIFEST_WORK.id)) {
        const owner = workOwnerKey(work);
        if (owner) keys.add(owner);
      }
      return [...keys];
    },
    reconcile,
    /** Writes whose watch event has not arrived yet (a gauge for leaks). */
    pendingExpectations: () => writes.expectations.size,
  };
}
