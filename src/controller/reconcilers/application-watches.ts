/**
 * What the Application reconciler informs, what its cache keeps of each object, its indexes, and which hub
 * Application keys an event touches. Only keys whose result can change are returned, so the frequent
 * status updates of ManagedClusters and works of other apps cost nothing.
 */
import { objectKey, type CacheReader } from '../../kube/cache.js';
import {
  APPLICATION,
  CONFIG_MAP,
  MANAGED_CLUSTER,
  MANAGED_CLUSTER_SET,
  MANAGED_CLUSTER_SET_BINDING,
  MANIFEST_WORK,
  NAMESPACE,
  PLACEMENT_DECISION,
} from '../../kube/resources.js';
import { canonicalJson } from '../../model/core/canonical-json.js';
import { CLEANUP_FINALIZER, LAST_APPLIED_ANNOTATION, PULL_LABEL } from '../../model/core/keys.js';
import { manifestWorkName } from '../../model/core/names.js';
import type { Application, ApplicationStatus, KubeObject, ManifestWork } from '../../model/core/types.js';
import { isAgentModel } from '../../model/delivery/classification.js';
import { isPullApplication, owningApplicationSet, targetCluster } from '../../model/delivery/manifestwork.js';
import type { ManagedClusterSetBinding } from '../../model/placement/tenancy.js';
import { ROLLOUT_APP_LABEL } from '../../model/rollout/policy.js';
import { workOwnerKey } from '../../model/reconcile/propagation.js';
import { RESOURCES_DIGEST_FIELD, resourcesDigest, trimWorkSummary } from '../../model/reconcile/resource-summary.js';
import { DELIVERY_MODEL_CONFLICT_CONDITION } from '../../model/reconcile/status.js';
import type { PlacementDecisionLike } from '../../model/reconcile/takeover.js';
import type { WatchEventType, WatchSpec } from '../runtime/reconciler.js';
import type { ControllerConfig } from '../runtime/config.js';
import {
  APP_CLUSTER_INDEX,
  APP_NAMESPACE_INDEX,
  APP_TARGET_WORK_INDEX,
  BINDING_SET_INDEX,
  DECISION_NAMESPACE_INDEX,
  WORK_OWNER_INDEX,
} from './application-parts.js';
import type { ApplicationWrites } from './application-writes.js';
import { ROLLOUT_APP_INDEX, rolloutConfigMapScope, rolloutKeyOf } from './rollout-cache.js';

const appTarget = (object: KubeObject) => {
  const app = object as Application;
  const cluster = isPullApplication(app) ? targetCluster(app) : undefined;
  return cluster ? [cluster] : [];
};
const appTargetWork = (object: KubeObject) =>
  appTarget(object).map(
    (cluster) => `${cluster}/${manifestWorkName(object.metadata.namespace ?? '', object.metadata.name)}`,
  );
const namespaceOf = (object: KubeObject) => (object.metadata.namespace ? [object.metadata.namespace] : []);
const boundSet = (object: KubeObject) => {
  const set = (object as ManagedClusterSetBinding).spec?.clusterSet ?? object.metadata.name;
  return set ? [set] : [];
};
/** The hub app a ManifestWork points back at. */
export const ownerKeys = (object: KubeObject) => {
  const owner = workOwnerKey(object);
  return owner ? [owner] : [];
};

/**
 * What the cache keeps of a hub Application. Applications cannot be label-selected (an app whose pull
 * label was just removed must still be seen, to delete its work and release the finalizer), so push-mode
 * apps are cached as metadata only, and every app drops the status fields no reconciler reads (the
 * resource tree, sync history, sync results: most of a push app's size) and kubectl's last-applied copy.
 */
export function trimApplication(object: KubeObject): KubeObject {
  let app = object as Application;
  // kubectl's copy of the whole object: never read (and never forwarded to a spoke).
  if (app.metadata.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) {
    const { [LAST_APPLIED_ANNOTATION]: _lastApplied, ...annotations } = app.metadata.annotations;
    app = { ...app, metadata: { ...app.metadata, annotations } };
  }
  const labels = app.metadata.labels ?? {};
  const involved =
    PULL_LABEL in labels ||
    (app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER) ||
    owningApplicationSet(app) !== undefined;
  if (!involved) {
    // An agent-model app keeps the conflict condition this controller set, so it can clear it later.
    const conflict = isAgentModel(app)
      ? app.status?.conditions?.filter((condition) => condition.type === DELIVERY_MODEL_CONFLICT_CONDITION)
      : undefined;
    return {
      apiVersion: app.apiVersion,
      kind: app.kind,
      metadata: app.metadata,
      ...(conflict?.length ? { status: { conditions: conflict } } : {}),
    };
  }
  if (!app.status) return app;
  return { ...app, status: trimStatus(app.status) } as KubeObject;
}

/** The status fields of an involved app a reconciler reads. */
function trimStatus(full: ApplicationStatus): ApplicationStatus {
  const {
    resources: _resources,
    history: _history,
    summary: _summary,
    ...status
  } = full as ApplicationStatus & Record<string, unknown>;
  // The resource list pullfleet writes back is kept as a digest only: enough to skip unchanged writes.
  if (_resources !== undefined || _summary !== undefined)
    status[RESOURCES_DIGEST_FIELD] = resourcesDigest(
      _resources,
      (_summary as { images?: unknown } | undefined)?.images,
    );
  if (status.operationState) {
    const { syncResult, ...operationState } = status.operationState as NonNullable<
      ApplicationStatus['operationState']
    > &
      Record<string, unknown>;
    // Of the sync result only the revision(s) are kept (the write-back compares them; an Argo CD 2.x hub's
    // RollingSync reads them), never its resources list.
    const { revision, revisions } = (syncResult ?? {}) as { revision?: unknown; revisions?: unknown };
    status.operationState =
      typeof revision === 'string'
        ? { ...operationState, syncResult: { revision, ...(Array.isArray(revisions) ? { revisions } : {}) } }
        : operationState;
  }
  return status;
}

/** What the cache keeps of a ManifestWork: one copy of the resource summary (see trimWorkSummary). */
const trimWork = (object: KubeObject): KubeObject => trimWorkSummary(object as ManifestWork);

/** An update that leaves what `view` reads unchanged (adds and deletes always count). */
function unchanged(
  view: (object: KubeObject | undefined) => unknown,
  object: KubeObject,
  previous: KubeObject | undefined,
  type: WatchEventType | undefined,
): boolean {
  return (
    (type ?? (previous ? 'update' : 'add')) === 'update' &&
    canonicalJson(view(object)) === canonicalJson(view(previous))
  );
}

/** The watches of the Application reconciler; `tenancyChanged` drops its tenancy inventory. */
export function applicationWatches(
  cache: CacheReader,
  config: ControllerConfig,
  writes: ApplicationWrites,
  tenancyChanged: () => void,
): WatchSpec[] {
  const appsTargeting = (clusterName: string) =>
    cache.byIndex<Application>(APPLICATION.id, APP_CLUSTER_INDEX, clusterName).map((app) => objectKey(app));
  /** The apps whose work would take this work's name (a foreign work in the way appearing or going). */
  const appsAt = (work: KubeObject) =>
    cache.byIndex<Application>(APPLICATION.id, APP_TARGET_WORK_INDEX, objectKey(work)).map((app) => objectKey(app));
  const appsIn = (namespace: string) =>
    cache
      .byIndex<Application>(APPLICATION.id, APP_NAMESPACE_INDEX, namespace)
      .filter((app) => isPullApplication(app))
      .map((app) => objectKey(app));
  /** Records a write the watch has now delivered; a deletion forgets the object's expectation whatever version it carried. */
  const observe = (kindId: string, object: KubeObject, type: WatchEventType | undefined) => {
    if (type === 'delete') writes.expectations.forget(kindId, object.metadata.namespace, object.metadata.name);
    else writes.expectations.observe(kindId, object);
  };
  return [
    {
      kind: APPLICATION,
      trim: trimApplication,
      indexes: {
        [APP_CLUSTER_INDEX]: appTarget,
        [APP_TARGET_WORK_INDEX]: appTargetWork,
        [APP_NAMESPACE_INDEX]: namespaceOf,
        [ROLLOUT_APP_INDEX]: rolloutKeyOf,
      },
      keysFor: (object, _previous, type) => {
        observe(APPLICATION.id, object, type);
        return [objectKey(object)];
      },
    },
    {
      // A waved app's rollout state decides what its work may carry: a change re-runs its hub Applications.
      kind: CONFIG_MAP,
      scope: rolloutConfigMapScope(config.argoNamespace),
      keysFor: (object) => {
        const fleetApp = object.metadata.labels?.[ROLLOUT_APP_LABEL];
        if (!fleetApp) return [];
        return cache
          .byIndex<Application>(APPLICATION.id, ROLLOUT_APP_INDEX, `${object.metadata.namespace ?? ''}/${fleetApp}`)
          .map((hubApp) => objectKey(hubApp));
      },
    },
    {
      kind: MANIFEST_WORK,
      // Newer agents copy the resource summary onto the work as well: the cache keeps one copy.
      trim: trimWork,
      indexes: { [WORK_OWNER_INDEX]: ownerKeys },
      keysFor: (object, previous, type) => {
        observe(MANIFEST_WORK.id, object, type);
        return [...new Set([...ownerKeys(object), ...(previous ? ownerKeys(previous) : []), ...appsAt(object)])];
      },
    },
    ...tenancyWatches(cache, appsTargeting, appsIn, tenancyChanged),
    {
      // A cluster namespace appearing (the ManagedCluster was accepted) lets waiting works be written at once.
      kind: NAMESPACE,
      keysFor: (object, previous, type) =>
        (type ?? (previous ? 'update' : 'add')) === 'add' ? appsTargeting(object.metadata.name) : [],
    },
  ];
}

/** The watches of what tenancy (pullfleet's and ACM's rule) reads. */
function tenancyWatches(
  cache: CacheReader,
  appsTargeting: (cluster: string) => string[],
  appsIn: (namespace: string) => string[],
  tenancyChanged: () => void,
): WatchSpec[] {
  const decided = (o: KubeObject | undefined) =>
    ((o as PlacementDecisionLike | undefined)?.status?.decisions ?? []).map((d) => d.clusterName).sort();
  return [
    {
      // Tenancy reads a cluster's existence and labels (set membership); agents rewrite status all the time.
      kind: MANAGED_CLUSTER,
      keysFor: (object, previous, type) => {
        if (unchanged((o) => o?.metadata.labels, object, previous, type)) return [];
        tenancyChanged();
        return appsTargeting(object.metadata.name);
      },
    },
    {
      kind: MANAGED_CLUSTER_SET,
      keysFor: (object, previous, type) => {
        if (unchanged((o) => (o && 'spec' in o ? o.spec : undefined), object, previous, type)) return [];
        tenancyChanged();
        const namespaces = new Set(
          cache
            .byIndex<ManagedClusterSetBinding>(MANAGED_CLUSTER_SET_BINDING.id, BINDING_SET_INDEX, object.metadata.name)
            .map((binding) => binding.metadata.namespace ?? ''),
        );
        return [...namespaces].flatMap(appsIn);
      },
    },
    {
      kind: MANAGED_CLUSTER_SET_BINDING,
      indexes: { [BINDING_SET_INDEX]: boundSet },
      keysFor: (object, previous, type) => {
        if (unchanged((o) => (o ? boundSet(o) : undefined), object, previous, type)) return [];
        tenancyChanged();
        return appsIn(object.metadata.namespace ?? '');
      },
    },
    {
      // ACM's tenancy rule reads the decisions of an app's namespace (which clusters they list).
      kind: PLACEMENT_DECISION,
      indexes: { [DECISION_NAMESPACE_INDEX]: namespaceOf },
      keysFor: (object, previous, type) =>
        unchanged(decided, object, previous, type) ? [] : appsIn(object.metadata.namespace ?? ''),
    },
  ];
}
