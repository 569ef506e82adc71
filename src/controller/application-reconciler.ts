/**
 * Duties 1 and 2 for one hub Application key: propagate it into a ManifestWork (create, update,
 * retarget, opt-out, deletion with the cleanup finalizer, orphan sweep, `operation` forwarding) and
 * write the spoke's feedback back into its status. Reads the cache, calls the pure model, writes once.
 */
import {
  CLEANUP_FINALIZER,
  FORWARDED_OPERATION_ANNOTATION,
  REFRESH_ANNOTATION,
  computeApplicationStatus,
  computePropagation,
  isPullApplication,
  isStaticApplication,
  jsonSize,
  manifestWorkName,
  readApplicationFeedback,
  spokeAppNamespace,
  targetCluster,
  tenancyProblem,
  workOwnerKey,
  type Application,
  type KubeObject,
  type ManagedCluster,
  type ManagedClusterSet,
  type ManagedClusterSetBinding,
  type ManifestWork,
  type PropagationPlan,
} from '../model/index.js';
import { objectKey, splitKey, type CacheReader } from './cache.js';
import { WriteExpectations } from './expectations.js';
import { KubeApiError } from './kube-client.js';
import type { Reconciler, ReconcilerContext, ReconcileInfo } from './reconciler.js';
import { APPLICATION, MANAGED_CLUSTER, MANAGED_CLUSTER_SET, MANAGED_CLUSTER_SET_BINDING, MANIFEST_WORK } from './resources.js';

/** Largest work the controller writes (OCM rejects works whose manifests exceed 500 KiB). */
export const MAX_WORK_BYTES = 500 * 1024;
/** Index of ManifestWorks by the hub Application they point back at. */
export const WORK_OWNER_INDEX = 'hub-application';

function tenancyInventory(cache: CacheReader) {
  return {
    clusters: new Map(cache.list<ManagedCluster>(MANAGED_CLUSTER.id).map((cluster) => [cluster.metadata.name, cluster])),
    clusterSets: cache.list<ManagedClusterSet>(MANAGED_CLUSTER_SET.id),
    bindings: cache.list<ManagedClusterSetBinding>(MANAGED_CLUSTER_SET_BINDING.id),
  };
}

/** HTTP statuses that retrying cannot fix: they become a condition on the hub app instead. */
function isTerminal(error: unknown): error is KubeApiError {
  return error instanceof KubeApiError && error.statusCode >= 400 && error.statusCode < 500 && ![404, 409, 429].includes(error.statusCode);
}

export function createApplicationReconciler(context: ReconcilerContext): Reconciler {
  const { cache, writer, config, metrics, logger } = context;
  let inventory: ReturnType<typeof tenancyInventory> | undefined;
  const inventoryNow = () => (inventory ??= tenancyInventory(cache));
  const invalidateInventory = () => {
    inventory = undefined;
    return 'all' as const;
  };

  const expectations = new WriteExpectations();

  async function patchApp(app: Application, patch: object): Promise<Application> {
    const written = await writer.mergePatch<Application>(APPLICATION, app.metadata.namespace, app.metadata.name, patch);
    expectations.wrote(APPLICATION.id, written);
    return written;
  }

  async function reconcile(key: string, info: ReconcileInfo): Promise<void> {
    const { namespace = '', name } = splitKey(key);
    const app = cache.get<Application>(APPLICATION.id, key);
    const works = cache.byIndex<ManifestWork>(MANIFEST_WORK.id, WORK_OWNER_INDEX, key);
    const cluster = app ? targetCluster(app) : undefined;
    const delivering = app && isPullApplication(app) && !isStaticApplication(app) && cluster;
    const deliveryProblem = delivering ? tenancyProblem(namespace, cluster, inventoryNow(), { relaxed: config.relaxTenancy }) : undefined;
    const workAtTarget = cluster ? cache.get<ManifestWork>(MANIFEST_WORK.id, `${cluster}/${manifestWorkName(namespace, name)}`) : undefined;
    // The cache has not seen this controller's own last write yet: the watch event will bring the key back.
    if (expectations.lagging(APPLICATION.id, namespace, name, app)) return;
    if (cluster && expectations.lagging(MANIFEST_WORK.id, cluster, manifestWorkName(namespace, name), workAtTarget)) return;
    let plan: PropagationPlan = computePropagation({
      namespace,
      name,
      ...(app ? { app } : {}),
      works,
      ...(workAtTarget ? { workAtTarget } : {}),
      ...(deliveryProblem ? { deliveryProblem } : {}),
      // Poll is the agent default: synth leaves it out, and so does the controller, so both works are identical.
      wrapOptions: config.feedbackScrapeType === 'Watch' ? { feedbackScrapeType: 'Watch' } : {},
    });

    if (plan.apply && jsonSize(plan.apply) > MAX_WORK_BYTES) {
      plan = { deletes: [], clearForwarded: false, problem: `the ManifestWork would be ${jsonSize(plan.apply)} bytes; the limit is ${MAX_WORK_BYTES}: make the Application smaller`, ...(plan.finalizer === 'add' ? { finalizer: 'add' } : {}) };
    }

    let appliedWork: ManifestWork | undefined;
    if (plan.apply) {
      try {
        appliedWork = await writer.apply<ManifestWork>(MANIFEST_WORK, plan.apply);
        expectations.wrote(MANIFEST_WORK.id, appliedWork);
        metrics.propagationLatency.observe((Date.now() - info.enqueuedAt) / 1000);
      } catch (error) {
        if (!isTerminal(error)) throw error;
        logger.warn({ app: key, err: error.message }, 'ManifestWork rejected by the API server');
        plan = { ...plan, problem: `the API server rejected ManifestWork ${plan.apply.metadata.namespace}/${plan.apply.metadata.name}: ${error.message}`, clearForwarded: false };
      }
    }

    for (const ref of plan.deletes) {
      await writer.delete(MANIFEST_WORK, ref.namespace, ref.name, ref.uid ? { uid: ref.uid } : {});
      expectations.forget(MANIFEST_WORK.id, ref.namespace, ref.name);
      logger.info({ app: key, work: `${ref.namespace}/${ref.name}` }, 'deleted ManifestWork');
    }

    const work = appliedWork ?? (plan.target ? cache.get<ManifestWork>(MANIFEST_WORK.id, `${plan.target.namespace}/${plan.target.name}`) : undefined);
    if (!app) return;

    // One write to the hub app carries everything: the finalizer change, the removal of the forwarded
    // `operation` and refresh annotation, and the status. Changes to metadata or `operation` are guarded by
    // resourceVersion (a 409 retries on fresh data); a status-only patch is not.
    const patch: Record<string, unknown> = {};
    const metadata: Record<string, unknown> = {};
    let view: Application = app;
    if (plan.finalizer === 'add') metadata.finalizers = [...(app.metadata.finalizers ?? []), CLEANUP_FINALIZER];
    if (plan.finalizer === 'remove') {
      const finalizers = (app.metadata.finalizers ?? []).filter((finalizer) => finalizer !== CLEANUP_FINALIZER);
      metadata.finalizers = finalizers.length > 0 ? finalizers : null;
    }
    // `operation` and the refresh annotation were carried to the spoke with this write: remove them from the hub app once.
    if (plan.clearForwarded && !plan.problem) {
      const annotations: Record<string, string | null> = {};
      const viewAnnotations = { ...(app.metadata.annotations ?? {}) };
      if (viewAnnotations[REFRESH_ANNOTATION] !== undefined) {
        annotations[REFRESH_ANNOTATION] = null;
        delete viewAnnotations[REFRESH_ANNOTATION];
      }
      if (app.operation !== undefined) {
        const feedback = work ? readApplicationFeedback(work, spokeAppNamespace(app), app.metadata.name) : undefined;
        const record = JSON.stringify({ at: context.now().toISOString().replace(/\.\d{3}Z$/, 'Z'), after: feedback?.operationStateStartedAt ?? '' });
        annotations[FORWARDED_OPERATION_ANNOTATION] = record;
        viewAnnotations[FORWARDED_OPERATION_ANNOTATION] = record;
        patch.operation = null;
      }
      metadata.annotations = annotations;
      const { operation: _forwarded, ...rest } = app;
      view = { ...rest, metadata: { ...app.metadata, annotations: viewAnnotations } };
    }
    const guarded = Object.keys(metadata).length > 0 || 'operation' in patch;
    if (guarded) patch.metadata = { ...metadata, resourceVersion: app.metadata.resourceVersion };

    // Status write-back for apps pullfleet delivers (dynamic) or synth delivered (static).
    let statusChanged = false;
    if (!app.metadata.deletionTimestamp && isPullApplication(app) && cluster) {
      const statusWork = plan.target ? work : undefined;
      const result = computeApplicationStatus({
        app: view,
        ...(statusWork ? { work: statusWork } : {}),
        ...(plan.problem ? { problem: plan.problem } : {}),
        now: context.now(),
        staleAfterMs: config.staleAfterSeconds * 1000,
      });
      if (result.patch) {
        patch.status = result.patch.status;
        statusChanged = true;
      }
    }
    if (Object.keys(patch).length === 0) return;
    await patchApp(app, patch);
    if (statusChanged) metrics.statusLatency.observe((Date.now() - info.enqueuedAt) / 1000);
  }

  const ownerKeys = (object: KubeObject) => {
    const owner = workOwnerKey(object as ManifestWork);
    return owner ? [owner] : [];
  };

  return {
    name: 'application',
    workers: config.workers,
    watches: [
      {
        kind: APPLICATION,
        keysFor: (object) => {
          expectations.observe(APPLICATION.id, object);
          return [objectKey(object)];
        },
      },
      {
        kind: MANIFEST_WORK,
        indexes: { [WORK_OWNER_INDEX]: ownerKeys },
        keysFor: (object, previous) => {
          expectations.observe(MANIFEST_WORK.id, object);
          return [...new Set([...ownerKeys(object), ...(previous ? ownerKeys(previous) : [])])];
        },
      },
      { kind: MANAGED_CLUSTER, keysFor: invalidateInventory },
      { kind: MANAGED_CLUSTER_SET, keysFor: invalidateInventory },
      { kind: MANAGED_CLUSTER_SET_BINDING, keysFor: invalidateInventory },
    ],
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
  };
}
