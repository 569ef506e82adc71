/**
 * Duties 1 and 2 for one hub Application key: propagate it into a ManifestWork (create, update,
 * retarget, opt-out, deletion with the cleanup finalizer, orphan sweep, `operation` forwarding) and
 * write the spoke's feedback back into its status. Reads the cache, calls the pure model, writes once.
 *
 * Hub Applications labelled `pullfleet.io/delivery-model: agent-…` belong to the argocd-agent principal:
 * they are never wrapped and their status is never written, except for one condition when the pull label
 * is on them too (a conflict only the user can resolve). Works the controller wrote for them during an
 * earlier basic delivery are handed off orphan-first: switched to `deleteOption: Orphan`, then deleted once
 * the work agent observed that, so the spoke Application the agent now owns is never deleted.
 */
import {
  CLEANUP_FINALIZER,
  LAST_APPLIED_ANNOTATION,
  PULL_LABEL,
  REFRESH_ANNOTATION,
  isHubItself,
} from '../../model/core/keys.js';
import { manifestWorkName } from '../../model/core/names.js';
import {
  type Application,
  type ApplicationCondition,
  type ApplicationStatus,
  FeedbackScrape,
  type KubeObject,
  type ManifestWork,
} from '../../model/core/types.js';
import {
  isConditionRulesUnknown,
  isRoutedToAgent,
  isPullApplication,
  jsonSize,
  owningApplicationSet,
  targetCluster,
  undeclaredFieldOf,
  withoutResourceSummaryRule,
} from '../../model/delivery/manifestwork.js';
import {
  tenancyProblem,
  type ManagedCluster,
  type ManagedClusterSet,
  type ManagedClusterSetBinding,
} from '../../model/placement/tenancy.js';
import { isAgentModel } from '../../model/delivery/classification.js';
import { DELIVERY_MODEL_LABEL as REPORT_DELIVERY_MODEL_LABEL } from '../../model/delivery/delivery-model.js';
import {
  FORWARDED_OPERATION_ANNOTATION,
  isControllerWorkFor,
  computePropagation,
  isStaticApplication,
  workOwnerKey,
  type PropagationInput,
  type PropagationPlan,
} from '../../model/runtime/propagation.js';
import {
  INVALID_FEEDBACK_CONDITION,
  computeApplicationStatus,
  DELIVERY_MODEL_CONFLICT_CONDITION,
} from '../../model/runtime/status.js';
import {
  LEGACY_CONTROLLER_SEEN_ANNOTATION,
  LEGACY_CONTROLLER_WINDOW_MS,
  acmTenancyDifference,
  computeAgentHandoff,
  type PlacementDecisionLike,
  handoffOrphanPatch,
  legacyControllerWarning,
  orphanPatch,
} from '../../model/runtime/takeover.js';
import { canonicalJson } from '../../model/core/canonical-json.js';
import {
  RESOURCES_DIGEST_FIELD,
  requestsResourceSummary,
  resourcesDigest,
  trimWorkSummary,
} from '../../model/runtime/resource-summary.js';
import { kubeTime } from '../../model/core/time.js';
import { objectKey, splitKey, type CacheReader } from '../../kube/cache.js';
import { WriteExpectations } from '../runtime/expectations.js';
import { applicationShard, writablePlan } from '../runtime/shards.js';
import { FLEET_APP_LABEL } from '../../model/delivery/hub-application.js';
import { ROLLOUT_APP_LABEL, ROLLOUT_RESUME_ANNOTATION } from '../../model/rollout/policy.js';
import { gateOf, type RolloutGate } from '../../model/rollout/runtime.js';
import { isWavedApplication, rolloutPolicyName } from '../../model/rollout/static.js';
import { ROLLOUT_APP_INDEX, rolloutConfigMapScope, rolloutKeyOf, rolloutReader } from './rollout.js';
import { KubeApiError, isConflict, isNotFound } from '../../kube/client.js';
import type {
  Reconciler,
  ReconcilerContext,
  ReconcileInfo,
  ReconcileResult,
  WatchEventType,
} from '../runtime/reconciler.js';
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

/** Largest work the controller writes (OCM rejects works whose manifests exceed 500 KiB). */
export const MAX_WORK_BYTES = 500 * 1024;
/** Index of ManifestWorks by the hub Application they point back at. */
export const WORK_OWNER_INDEX = 'hub-application';
/** Index of hub Applications by the ManagedCluster they target (pull-labelled apps only). */
export const APP_CLUSTER_INDEX = 'target-cluster';
/**
 * Index of hub Applications by the ManifestWork they would write (`cluster/name`), pull-labelled apps only:
 * a work that carries no hub annotations (another tool's, at the app's name) still wakes the app when it
 * appears, changes or goes.
 */
export const APP_TARGET_WORK_INDEX = 'target-work';
/** Index of hub Applications by namespace (tenancy is per namespace). */
export const APP_NAMESPACE_INDEX = 'namespace';
/** Index of ManagedClusterSetBindings by the set they bind. */
export const BINDING_SET_INDEX = 'cluster-set';
/** Index of PlacementDecisions by namespace (ACM's tenancy rule, ACM_TENANCY_CONDITION). */
export const DECISION_NAMESPACE_INDEX = 'app-decision-namespace';
/** Condition on an agent-model hub Application that also carries the pull label (a basic reconcile drops it). */
export const AGENT_PULL_CONFLICT_CONDITION = DELIVERY_MODEL_CONFLICT_CONDITION;
/** A reconcile that finds the cache behind its own last write comes back after this long (the watch event usually comes first). */
export const LAGGING_REQUEUE_MS = 250;

/** How long works leave out the resource summary rule after the hub dropped it, before the rule is tried again. */
export const SUMMARY_RULE_RECHECK_MS = 3_600_000;
/**
 * An app refused because of a work its cache has not seen (judged from a live read) looks again after this
 * long, until the cache holds that work: if the work goes before its watch event ever arrives (a watch down
 * meanwhile), no event would bring the app back.
 */
export const UNSEEN_WORK_RECHECK_MS = 10_000;
/** Longest a new app's first write (finalizer and first status) waits behind a burst of other keys. */
export const FIRST_WRITE_WAIT_MS = 30_000;

function tenancyInventory(cache: CacheReader) {
  return {
    clusters: new Map(
      cache.list<ManagedCluster>(MANAGED_CLUSTER.id).map((cluster) => [cluster.metadata.name, cluster]),
    ),
    clusterSets: cache.list<ManagedClusterSet>(MANAGED_CLUSTER_SET.id),
    bindings: cache.list<ManagedClusterSetBinding>(MANAGED_CLUSTER_SET_BINDING.id),
  };
}

/** HTTP statuses that retrying cannot fix: they become a condition on the hub app instead. */
function isTerminal(error: unknown): error is KubeApiError {
  return (
    error instanceof KubeApiError &&
    ((error.statusCode >= 400 && error.statusCode < 500 && ![404, 409, 429].includes(error.statusCode)) ||
      isUndeclaredField(error))
  );
}

/**
 * A server-side apply refused because the object carries a field its CRD does not declare: kube-apiserver
 * answers 500, but trying again changes nothing until the CRD does.
 */
function isUndeclaredField(error: KubeApiError): boolean {
  return error.statusCode === 500 && undeclaredFieldOf(error.message) !== undefined;
}

/**
 * The resourceVersion a server-side apply carries when it must only create: no stored object ever has it
 * (the largest uint64), so an object of that name existing already makes the API server refuse the apply
 * with 409 Conflict, while a name still free is created as by any apply (kube-apiserver ignores the
 * precondition on create, and the fields are owned by the apply, as for every later write).
 */
const CREATE_ONLY_RESOURCE_VERSION = '18446744073709551615';

const appTarget = (object: KubeObject) => {
  const app = object as Application;
  const cluster = isPullApplication(app) ? targetCluster(app) : undefined;
  return cluster ? [cluster] : [];
};
const appTargetWork = (object: KubeObject) =>
  appTarget(object).map(
    (cluster) => `${cluster}/${manifestWorkName(object.metadata.namespace ?? '', object.metadata.name)}`,
  );
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
      ? app.status?.conditions?.filter((condition) => condition.type === AGENT_PULL_CONFLICT_CONDITION)
      : undefined;
    return {
      apiVersion: app.apiVersion,
      kind: app.kind,
      metadata: app.metadata,
      ...(conflict?.length ? { status: { conditions: conflict } } : {}),
    };
  }
  if (!app.status) return app;
  const {
    resources: _resources,
    history: _history,
    summary: _summary,
    ...status
  } = app.status as ApplicationStatus & Record<string, unknown>;
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
  return { ...app, status } as KubeObject;
}

/** What the cache keeps of a ManifestWork: one copy of the resource summary (see trimWorkSummary). */
const trimWork = (object: KubeObject): KubeObject => trimWorkSummary(object as ManifestWork);

const namespaceOf = (object: KubeObject) => (object.metadata.namespace ? [object.metadata.namespace] : []);
const boundSet = (object: KubeObject) => {
  const set = (object as ManagedClusterSetBinding).spec?.clusterSet ?? object.metadata.name;
  return set ? [set] : [];
};

export function createApplicationReconciler(
  context: ReconcilerContext,
): Reconciler & { pendingExpectations(): number } {
  const { cache, writer, config, metrics, logger } = context;
  let inventory: ReturnType<typeof tenancyInventory> | undefined;
  const inventoryNow = () => (inventory ??= tenancyInventory(cache));

  const expectations = new WriteExpectations();
  /** Keys whose first app write (finalizer and first status) waits behind a burst, since when (ms epoch). */
  const firstWriteWaiting = new Map<string, number>();
  const sharding = context.sharding;
  /** Sharded, a replica writes only the ManifestWorks and hub Applications of the shards it holds. */
  const mayWrite = (kind: typeof APPLICATION, namespace: string | undefined, name: string) =>
    sharding?.mayWrite(kind, namespace, name) ?? true;

  async function patchApp(app: Application, patch: object): Promise<Application> {
    const written = await writer.mergePatch<Application>(APPLICATION, app.metadata.namespace, app.metadata.name, patch);
    expectations.wrote(APPLICATION.id, written);
    return written;
  }

  /**
   * An agent-model hub Application: nothing is wrapped and its status stays the principal's. The writes
   * that can happen: the hand-off of works this controller wrote for it while it was basic (Orphan first,
   * then a guarded delete once the work agent observed it), the conflict condition (added or cleared) when
   * the pull label is (or was) on it, and the release of this controller's finalizer when the app is being
   * deleted, only once the hand-off left no work (a deleted app is handed off the same way: the agent owns
   * the spoke Application, so it is never deleted through a work).
   */
  async function reconcileAgentApplication(key: string, app: Application): Promise<void | ReconcileResult> {
    if (expectations.lagging(APPLICATION.id, app.metadata.namespace, app.metadata.name, app))
      return { requeueAfterMs: LAGGING_REQUEUE_MS };
    const { namespace = '', name } = splitKey(key);
    const works = cache.byIndex<ManifestWork>(MANIFEST_WORK.id, WORK_OWNER_INDEX, key);
    if (works.some((work) => expectations.lagging(MANIFEST_WORK.id, work.metadata.namespace, work.metadata.name, work)))
      return { requeueAfterMs: LAGGING_REQUEUE_MS };
    const model = app.metadata.labels?.[REPORT_DELIVERY_MODEL_LABEL]?.trim();
    const computed = computeAgentHandoff(app, works, (work) => isControllerWorkFor(work, namespace, name));
    const handoff = {
      ...computed,
      orphan: computed.orphan.filter((ref) => mayWrite(MANIFEST_WORK, ref.namespace, ref.name)),
      deletes: computed.deletes.filter((ref) => mayWrite(MANIFEST_WORK, ref.namespace, ref.name)),
    };
    // Step 1: deleting the work must not delete the spoke Application. Guarded by the resourceVersion the
    // plan judged: a concurrent rewrite gives a 409 and a fresh look.
    for (const ref of handoff.orphan) {
      try {
        const orphaned = await writer.mergePatch<ManifestWork>(
          MANIFEST_WORK,
          ref.namespace,
          ref.name,
          handoffOrphanPatch(ref),
        );
        expectations.wrote(MANIFEST_WORK.id, orphaned);
        logger.info(
          { app: key, model, work: `${ref.namespace}/${ref.name}` },
          'agent-model Application: its ManifestWork set to deleteOption Orphan for the hand-off to the argocd-agent',
        );
      } catch (error) {
        if (!(error instanceof KubeApiError && error.statusCode === 404)) throw error;
      }
    }
    // Step 2: the work agent has observed Orphan, so deleting the work leaves the spoke Application. The
    // preconditions refuse the delete if the work changed since (it is judged afresh on the next pass).
    for (const ref of handoff.deletes) {
      if (expectations.deletionPending(MANIFEST_WORK.id, ref.namespace, ref.name, ref.uid)) continue;
      try {
        await writer.delete(MANIFEST_WORK, ref.namespace, ref.name, {
          ...(ref.uid ? { uid: ref.uid } : {}),
          ...(ref.resourceVersion ? { resourceVersion: ref.resourceVersion } : {}),
        });
        expectations.deleted(MANIFEST_WORK.id, ref.namespace, ref.name, ref.uid);
        logger.info(
          { app: key, model, work: `${ref.namespace}/${ref.name}` },
          'agent-model Application: orphaned ManifestWork deleted, the spoke Application stays with the argocd-agent',
        );
      } catch (error) {
        if (!(error instanceof KubeApiError && (error.statusCode === 404 || error.statusCode === 409))) throw error;
      }
    }
    if (handoff.waiting)
      logger.debug(
        { app: key, model, waiting: handoff.waiting },
        'agent-model Application: hand-off of its ManifestWork in progress',
      );
    const patch: Record<string, unknown> = {};
    if (app.metadata.deletionTimestamp) {
      // Released only once no work of the app is left: with the app gone, its key would reach the basic
      // sweep, and a work not yet handed off must not be judged there.
      if ((app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER) && handoff.done) {
        const finalizers = (app.metadata.finalizers ?? []).filter((finalizer) => finalizer !== CLEANUP_FINALIZER);
        patch.metadata = {
          finalizers: finalizers.length > 0 ? finalizers : null,
          resourceVersion: app.metadata.resourceVersion,
        };
        logger.info(
          { app: key, model },
          'agent-model Application deleted: its works handed off, releasing the finalizer',
        );
      }
    } else {
      const conditions = app.status?.conditions ?? [];
      const current = conditions.find((condition) => condition.type === AGENT_PULL_CONFLICT_CONDITION);
      if (isPullApplication(app)) {
        const message = `the Application is labelled ${REPORT_DELIVERY_MODEL_LABEL}=${model} and also ${PULL_LABEL}: the argocd-agent principal delivers agent-model Applications, so pullfleet does not wrap it into a ManifestWork; remove the ${PULL_LABEL} label, or set ${REPORT_DELIVERY_MODEL_LABEL} to basic to deliver it through a ManifestWork`;
        if (current?.message !== message) {
          const condition: ApplicationCondition = {
            type: AGENT_PULL_CONFLICT_CONDITION,
            message,
            lastTransitionTime: kubeTime(context.now()),
          };
          patch.status = {
            conditions: [...conditions.filter((other) => other.type !== AGENT_PULL_CONFLICT_CONDITION), condition],
          };
          logger.warn({ app: key, model }, 'agent-model Application carries the pull label: not wrapped');
        }
      } else if (current) {
        const rest = conditions.filter((other) => other.type !== AGENT_PULL_CONFLICT_CONDITION);
        patch.status = { conditions: rest.length > 0 ? rest : null };
      }
    }
    if (Object.keys(patch).length > 0 && mayWrite(APPLICATION, namespace, name)) await patchApp(app, patch);
    // The work agent's report on an orphaned work (or its removal) is a ManifestWork event for this key.
  }

  const rollouts = rolloutReader(cache);

  // A hub whose ManifestWork CRD predates condition rules (cluster manager before OCM 1.0) drops them from
  // every work it stores: a written work comes back without the rule. Asking for it would then make every
  // work differ from what the hub holds, and be rewritten at each resync; the rule is left out instead (the
  // apps say why) and tried again once an hour, so a hub that was upgraded gets it back.
  let summaryRuleDroppedAt: number | undefined;
  const summaryRuleOff = () =>
    !config.resourceSummaries ||
    (summaryRuleDroppedAt !== undefined && context.now().getTime() - summaryRuleDroppedAt < SUMMARY_RULE_RECHECK_MS);
  function summaryRuleRefused(work: string): void {
    if (summaryRuleDroppedAt === undefined)
      logger.warn(
        { work },
        "the hub's ManifestWork CRD has no manifestConfigs[].conditionRules (a cluster manager before OCM 1.0): works ask for no resource summary until the hub takes the field (tried again every hour); upgrade the hub's cluster manager",
      );
    summaryRuleDroppedAt = context.now().getTime();
  }
  /**
   * Server-side applies `work`; `createOnly` when the cache holds no work at its name: an apply with force
   * would take over a work of that name the cache has not seen yet (just created by someone else), so the
   * apply carries a resourceVersion precondition no stored object meets, and such a work makes the API
   * server refuse it (409) instead. A hub without the rule in its CRD refuses the apply ("field not declared
   * in schema"), or stores the work without it: the work is written without the rule, and so are the next ones.
   */
  async function applyWork(work: ManifestWork, createOnly: boolean): Promise<ManifestWork> {
    const name = `${work.metadata.namespace ?? ''}/${work.metadata.name}`;
    const write = (object: ManifestWork) =>
      writer.apply<ManifestWork>(
        MANIFEST_WORK,
        createOnly
          ? { ...object, metadata: { ...object.metadata, resourceVersion: CREATE_ONLY_RESOURCE_VERSION } }
          : object,
      );
    let stored: ManifestWork;
    try {
      stored = await write(work);
    } catch (error) {
      if (!(error instanceof KubeApiError && requestsResourceSummary(work) && isConditionRulesUnknown(error.message)))
        throw error;
      summaryRuleRefused(name);
      return write(withoutResourceSummaryRule(work));
    }
    if (requestsResourceSummary(work)) {
      if (!requestsResourceSummary(stored)) summaryRuleRefused(name);
      else if (summaryRuleDroppedAt !== undefined) {
        summaryRuleDroppedAt = undefined;
        logger.info(
          { work: name },
          'the hub takes manifestConfigs[].conditionRules again: works ask for resource summaries',
        );
      }
    }
    return stored;
  }

  /** What the rollout of a waved app lets the work on `cluster` carry now (hold without a policy or state). */
  function rolloutGateFor(app: Application, cluster: string): RolloutGate {
    const namespace = app.metadata.namespace ?? '';
    const fleetApp = app.metadata.labels?.[FLEET_APP_LABEL] ?? '';
    return gateOf(rollouts.policy(namespace, fleetApp), rollouts.state(namespace, fleetApp).state, cluster);
  }

  /**
   * The halt of a waved app's rollout, as a condition message (nothing while it runs): halted by a failure,
   * or held because its policy ConfigMap cannot be read (nothing is promoted until it is fixed).
   */
  function rolloutHaltedOf(app: Application): { rolloutHalted?: string } {
    const fleetApp = app.metadata.labels?.[FLEET_APP_LABEL] ?? '';
    const unreadable = rollouts.parsedPolicy(app.metadata.namespace ?? '', fleetApp)?.problem;
    if (unreadable)
      return {
        rolloutHalted: `the rollout of app ${fleetApp} is held: ${unreadable}. Every cluster keeps the revision it has until then`,
      };
    const halted = rollouts.state(app.metadata.namespace ?? '', fleetApp).state?.halted;
    if (!halted) return {};
    return {
      rolloutHalted: `the rollout of app ${fleetApp} halted at ${halted.at}: ${halted.reason}; failed clusters: ${halted.clusters.join(', ')}. Every other cluster keeps the revision it has. Fix the spec (a new revision starts a new rollout), or set annotation ${ROLLOUT_RESUME_ANNOTATION} on ConfigMap ${app.metadata.namespace ?? ''}/${rolloutPolicyName(fleetApp)} to a new value to retry them`,
    };
  }

  /**
   * The work `namespace/name` as the API server has it now (found without a work: it is gone), for a
   * create-only apply refused while the cache is behind. Without a reader (pure tests) or when the read
   * fails: not found, and why.
   */
  async function readWork(
    namespace: string,
    name: string,
  ): Promise<{ found: true; work?: ManifestWork } | { found: false; why: string }> {
    const reader = context.reader;
    if (!reader?.get) return { found: false, why: 'no reader' };
    try {
      const work = await reader.get<ManifestWork>(MANIFEST_WORK, namespace, name, {
        timeoutMs: config.requestTimeoutSeconds * 1000,
      });
      return { found: true, work };
    } catch (error) {
      if (isNotFound(error)) return { found: true };
      return { found: false, why: error instanceof Error ? error.message : String(error) };
    }
  }

  async function reconcile(key: string, info: ReconcileInfo): Promise<void | ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const app = cache.get<Application>(APPLICATION.id, key);
    if (app && isAgentModel(app)) return reconcileAgentApplication(key, app);
    const works = cache.byIndex<ManifestWork>(MANIFEST_WORK.id, WORK_OWNER_INDEX, key);
    const cluster = app ? targetCluster(app) : undefined;
    const delivering = app && isPullApplication(app) && !isStaticApplication(app) && cluster;
    const deliveryProblem = delivering
      ? tenancyProblem(namespace, cluster, inventoryNow(), { relaxed: config.relaxTenancy })
      : undefined;
    const targetIsHub = cluster ? isHubItself(cluster, inventoryNow().clusters.get(cluster)?.metadata.labels) : false;
    // An app pullfleet did not render, delivered although ACM's narrower rule would refuse it: said on the app.
    const acmTenancy =
      delivering && !deliveryProblem && config.acmTenancyWarnings && !config.relaxTenancy
        ? acmTenancyDifference(
            app,
            cluster,
            cache.byIndex<KubeObject>(PLACEMENT_DECISION.id, DECISION_NAMESPACE_INDEX, namespace),
          )
        : undefined;
    const workAtTarget = cluster
      ? cache.get<ManifestWork>(MANIFEST_WORK.id, `${cluster}/${manifestWorkName(namespace, name)}`)
      : undefined;
    // The cache has not seen this controller's own last write yet: come back shortly (the watch event
    // usually brings the key back first; the requeue covers an event that never comes).
    if (expectations.lagging(APPLICATION.id, namespace, name, app)) return { requeueAfterMs: LAGGING_REQUEUE_MS };
    if (cluster && expectations.lagging(MANIFEST_WORK.id, cluster, manifestWorkName(namespace, name), workAtTarget))
      return { requeueAfterMs: LAGGING_REQUEUE_MS };
    // The same for legacy works this controller orphaned in a hand-over.
    if (works.some((work) => expectations.lagging(MANIFEST_WORK.id, work.metadata.namespace, work.metadata.name, work)))
      return { requeueAfterMs: LAGGING_REQUEUE_MS };
    // A waved static app: its work carries what the app's rollout lets it carry now (rollout.ts keeps the state).
    const rolloutGate = app && isWavedApplication(app) && cluster ? rolloutGateFor(app, cluster) : undefined;
    const propagation: PropagationInput = {
      ...(rolloutGate ? { rolloutGate } : {}),
      namespace,
      name,
      ...(app ? { app } : {}),
      works,
      ...(workAtTarget ? { workAtTarget } : {}),
      ...(deliveryProblem ? { deliveryProblem } : {}),
      ...(targetIsHub ? { targetIsHub } : {}),
      // Poll is the agent default: synth leaves it out, and so does the controller, so both works are identical.
      wrapOptions: {
        ...(config.feedbackScrapeType === FeedbackScrape.WATCH ? { feedbackScrapeType: FeedbackScrape.WATCH } : {}),
        ...(summaryRuleOff() ? { resourceSummary: false } : {}),
      },
      now: context.now(),
    };
    let plan: PropagationPlan = computePropagation(propagation);
    // Sharded: the works of clusters of other shards are theirs to write (a retarget's old work included).
    if (sharding) plan = writablePlan(plan, (ref) => mayWrite(MANIFEST_WORK, ref.namespace, ref.name));

    // Hand-over from another controller's work, step 1: make deleting it harmless to the spoke. Each patch
    // is guarded by the resourceVersion the plan judged, so a concurrent rewrite gives a 409 and a fresh look.
    for (const ref of plan.orphan ?? []) {
      try {
        const orphaned = await writer.mergePatch<ManifestWork>(
          MANIFEST_WORK,
          ref.namespace,
          ref.name,
          orphanPatch(ref),
        );
        expectations.wrote(MANIFEST_WORK.id, orphaned);
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

    // Nothing of the plan but the finalizer survives a work that cannot be written: no deletes, no
    // operation bookkeeping, the refresh annotation stays for the next attempt.
    const refused = (problem: string): PropagationPlan => ({
      deletes: [],
      problem,
      ...(plan.target ? { target: plan.target } : {}),
      ...(plan.finalizer === 'add' ? { finalizer: 'add' as const } : {}),
    });

    if (plan.apply && jsonSize(plan.apply) > MAX_WORK_BYTES) {
      plan = refused(
        `the ManifestWork would be ${jsonSize(plan.apply)} bytes; the limit is ${MAX_WORK_BYTES}: make the Application smaller`,
      );
    }

    // A waved app takes over the work synth rendered before: Argo CD's tracking marks go first.
    if (plan.adopt && plan.apply) {
      const adopted = await writer.mergePatch<ManifestWork>(
        MANIFEST_WORK,
        plan.adopt.namespace,
        plan.adopt.name,
        plan.adopt.patch,
      );
      expectations.wrote(MANIFEST_WORK.id, adopted);
      logger.info(
        { app: key, work: `${plan.adopt.namespace}/${plan.adopt.name}` },
        'took over the ManifestWork synth rendered for this app (now waved)',
      );
    }

    let appliedWork: ManifestWork | undefined;
    /** The plan was refused on a live read of a work the cache has not seen. */
    let refusedUnseen = false;
    if (plan.apply) {
      // No work at the name in the cache: the apply must create one, never take over one the cache missed.
      const createOnly = !workAtTarget;
      try {
        appliedWork = await applyWork(plan.apply, createOnly);
        expectations.wrote(MANIFEST_WORK.id, appliedWork);
        metrics.propagationLatency.observe((Date.now() - info.enqueuedAt) / 1000);
      } catch (error) {
        const target = `${plan.apply.metadata.namespace}/${plan.apply.metadata.name}`;
        if (error instanceof KubeApiError && error.statusCode === 404) {
          // The cluster namespace does not exist (yet): OCM creates it when the ManagedCluster is accepted.
          // The Namespace watch brings this key back the moment it appears.
          logger.info({ app: key, work: target }, 'cluster namespace missing: waiting for it');
          plan = refused(
            `namespace "${plan.apply.metadata.namespace}" does not exist on the hub yet, so ManifestWork ${target} cannot be written: accept the ManagedCluster (OCM creates its namespace then); delivery follows as soon as the namespace appears`,
          );
        } else if (createOnly && isConflict(error)) {
          // A work of that name exists, and the cache has not seen it yet (just created by someone else, its
          // watch event still on the way): judge the live work as the cache would have. The app's entry in
          // the target-work index brings it back when that work changes or goes.
          const live = await readWork(plan.apply.metadata.namespace ?? '', plan.apply.metadata.name);
          const problem = live.found
            ? live.work
              ? computePropagation({ ...propagation, workAtTarget: live.work }).problem
              : undefined
            : `ManifestWork ${target} already exists and could not be read (${live.why}): refusing to take it over; delete it or rename the Application`;
          if (!problem) {
            // Gone again, or this app's own (written by an earlier leader): look again once the cache has it.
            logger.info({ app: key, work: target }, 'ManifestWork created meanwhile: looking again');
            return { requeueAfterMs: LAGGING_REQUEUE_MS };
          }
          logger.warn({ app: key, work: target, problem }, 'ManifestWork name taken by a work the cache had not seen');
          plan = { deletes: [], problem, ...(plan.finalizer === 'add' ? { finalizer: 'add' as const } : {}) };
          refusedUnseen = true;
        } else if (isTerminal(error)) {
          logger.warn({ app: key, err: error.message }, 'ManifestWork rejected by the API server');
          plan = refused(
            `the API server rejected ManifestWork ${target}: ${error.message}${
              isUndeclaredField(error)
                ? ": the hub's ManifestWork CRD is older than the fields this work uses; upgrade the hub's cluster manager (or stop using the setting that needs the field)"
                : ''
            }`,
          );
        } else {
          throw error;
        }
      }
    }

    for (const ref of plan.deletes) {
      // Deleted by an earlier pass whose watch event has not reached the cache yet: once is enough.
      if (expectations.deletionPending(MANIFEST_WORK.id, ref.namespace, ref.name, ref.uid)) continue;
      await writer.delete(MANIFEST_WORK, ref.namespace, ref.name, {
        ...(ref.uid ? { uid: ref.uid } : {}),
        ...(ref.resourceVersion ? { resourceVersion: ref.resourceVersion } : {}),
      });
      expectations.deleted(MANIFEST_WORK.id, ref.namespace, ref.name, ref.uid);
      logger.info({ app: key, work: `${ref.namespace}/${ref.name}` }, 'deleted ManifestWork');
    }

    const work =
      // Mid hand-over, until the agent reported on pullfleet's own work, the legacy work delivers: show its feedback.
      (plan.statusWork
        ? cache.get<ManifestWork>(MANIFEST_WORK.id, `${plan.statusWork.namespace}/${plan.statusWork.name}`)
        : undefined) ??
      appliedWork ??
      (plan.target
        ? cache.get<ManifestWork>(MANIFEST_WORK.id, `${plan.target.namespace}/${plan.target.name}`)
        : undefined);
    if (!app) {
      firstWriteWaiting.delete(key);
      return;
    }
    if (!mayWrite(APPLICATION, namespace, name)) return;

    // One write to the hub app carries everything: the finalizer change, the forwarded-operation
    // bookkeeping, the removal of the refresh annotation, and the status. Changes to metadata or
    // `operation` are guarded by resourceVersion (a 409 retries on fresh data); a status-only patch is not.
    const patch: Record<string, unknown> = {};
    const metadata: Record<string, unknown> = {};
    const annotations: Record<string, string | null> = {};
    const viewAnnotations = { ...(app.metadata.annotations ?? {}) };
    let view: Application = app;
    if (plan.finalizer === 'add') metadata.finalizers = [...(app.metadata.finalizers ?? []), CLEANUP_FINALIZER];
    const release = new Set(plan.releaseArgoFinalizers ?? []);
    if (plan.finalizer === 'remove') release.add(CLEANUP_FINALIZER);
    if (release.size > 0) {
      // Argo CD's resources finalizers go with this controller's own once no work is left (the hub Argo CD
      // never processes a skip-reconcile app): otherwise the app would stay Terminating forever.
      const finalizers = (app.metadata.finalizers ?? []).filter((finalizer) => !release.has(finalizer));
      metadata.finalizers = finalizers.length > 0 ? finalizers : null;
      if (plan.releaseArgoFinalizers?.length)
        logger.info(
          { app: key, finalizers: plan.releaseArgoFinalizers },
          'hub Application deleted and its works gone: releasing Argo CD resources finalizers',
        );
    }
    // The refresh annotation went to the spoke with this write: remove it from the hub app once.
    if (plan.clearRefresh && !plan.problem && viewAnnotations[REFRESH_ANNOTATION] !== undefined) {
      annotations[REFRESH_ANNOTATION] = null;
      delete viewAnnotations[REFRESH_ANNOTATION];
    }
    if (plan.operation?.kind === 'record' && !plan.problem) {
      // Remembered on the hub app itself, so a restarted controller keeps forwarding the same operation.
      const record = JSON.stringify(plan.operation.record);
      annotations[FORWARDED_OPERATION_ANNOTATION] = record;
      viewAnnotations[FORWARDED_OPERATION_ANNOTATION] = record;
    }
    if (plan.operation?.kind === 'clear') {
      if (viewAnnotations[FORWARDED_OPERATION_ANNOTATION] !== undefined) {
        annotations[FORWARDED_OPERATION_ANNOTATION] = null;
        delete viewAnnotations[FORWARDED_OPERATION_ANNOTATION];
      }
      if (app.operation !== undefined) patch.operation = null;
    }
    // An old controller seen fighting the hand-over is remembered on the hub app (a restart keeps the
    // warning), refreshed at most every half window so the record itself does not wake that controller often.
    const now = context.now();
    const seenRaw = viewAnnotations[LEGACY_CONTROLLER_SEEN_ANNOTATION];
    const seen = seenRaw === undefined ? Number.NaN : Date.parse(seenRaw);
    if (plan.legacyControllerActive && !app.metadata.deletionTimestamp) {
      if (Number.isNaN(seen) || now.getTime() - seen > LEGACY_CONTROLLER_WINDOW_MS / 2) {
        const at = kubeTime(now);
        annotations[LEGACY_CONTROLLER_SEEN_ANNOTATION] = at;
        viewAnnotations[LEGACY_CONTROLLER_SEEN_ANNOTATION] = at;
        logger.warn(
          { app: key, message: plan.legacyControllerActive },
          'another controller is fighting the hand-over of a legacy ManifestWork',
        );
      }
    } else if (seenRaw !== undefined && (Number.isNaN(seen) || now.getTime() - seen > LEGACY_CONTROLLER_WINDOW_MS)) {
      annotations[LEGACY_CONTROLLER_SEEN_ANNOTATION] = null;
      delete viewAnnotations[LEGACY_CONTROLLER_SEEN_ANNOTATION];
    }
    if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
    if (Object.keys(annotations).length > 0 || 'operation' in patch) {
      const { operation, ...rest } = app;
      view = {
        ...rest,
        ...('operation' in patch || operation === undefined ? {} : { operation }),
        metadata: { ...app.metadata, annotations: viewAnnotations },
      };
    }
    const guarded = Object.keys(metadata).length > 0 || 'operation' in patch;
    if (guarded) patch.metadata = { ...metadata, resourceVersion: app.metadata.resourceVersion };

    // Status write-back for opted-in apps pullfleet delivers (dynamic) or synth delivered (static).
    let statusChanged = false;
    let conditions: ApplicationCondition[] | undefined;
    let recheckAt: Date | undefined;
    const legacy = legacyControllerWarning(
      { metadata: { ...app.metadata, annotations: viewAnnotations } },
      plan.legacyControllerActive,
      now,
    );
    // While the app is still routed to a managed argocd-agent (step 1 of a move back to basic), the principal
    // writes its status; writing it too would fight the principal, so problems only go to the log.
    const principals = isRoutedToAgent(app);
    if (principals && plan.problem)
      logger.warn(
        { app: key, problem: plan.problem },
        'app routed to argocd-agent while its work stands by: the work cannot be written',
      );
    if (!app.metadata.deletionTimestamp && isPullApplication(app) && !principals && (cluster || plan.problem)) {
      const statusWork = plan.target || plan.statusWork ? work : undefined;
      if (legacy.recheckAt && (!recheckAt || legacy.recheckAt < recheckAt)) recheckAt = legacy.recheckAt;
      const result = computeApplicationStatus({
        app: view,
        ...(statusWork ? { work: statusWork } : {}),
        ...(plan.problem ? { problem: plan.problem } : {}),
        now: context.now(),
        staleAfterMs: config.staleAfterSeconds * 1000,
        operationTimeoutMs: config.operationTimeoutSeconds * 1000,
        ...(legacy.message ? { legacyController: legacy.message } : {}),
        ...(acmTenancy ? { acmTenancy } : {}),
        ...(isWavedApplication(view) ? rolloutHaltedOf(view) : {}),
        ...(summaryRuleDroppedAt !== undefined ? { summaryRuleDroppedByHub: true } : {}),
      });
      conditions = result.desired.conditions;
      if (result.recheckAt && (!recheckAt || result.recheckAt < recheckAt)) recheckAt = result.recheckAt;
      if (result.patch) {
        patch.status = result.patch.status;
        statusChanged = true;
      }
    }
    if (refusedUnseen) {
      const unseenRecheck = new Date(context.now().getTime() + UNSEEN_WORK_RECHECK_MS);
      if (!recheckAt || unseenRecheck < recheckAt) recheckAt = unseenRecheck;
    }
    const requeue = recheckAt
      ? { requeueAfterMs: Math.max(0, recheckAt.getTime() - context.now().getTime()) }
      : undefined;
    if (Object.keys(patch).length === 0) return requeue;
    // A burst of new apps (other keys waiting): the work went out with this reconcile; the app's first write
    // (the cleanup finalizer and the first status) waits until no other key does, so the works of the burst
    // go out first (FIRST_WRITE_WAIT_MS at the longest). An agent report meanwhile is folded into the same
    // write. An app deleted before it carries the finalizer has its work swept all the same.
    const firstWriteOnly =
      plan.finalizer === 'add' &&
      !plan.problem &&
      !('operation' in patch) &&
      Object.keys(metadata).every((field) => field === 'finalizers');
    const waitingSince = firstWriteOnly ? firstWriteWaiting.get(key) : undefined;
    if (firstWriteOnly && (info.backlog ?? 0) > 0 && (waitingSince !== undefined || appliedWork)) {
      const since = waitingSince ?? Date.now();
      const left = since + FIRST_WRITE_WAIT_MS - Date.now();
      if (left > 0) {
        firstWriteWaiting.set(key, since);
        return { whenIdle: true, requeueAfterMs: left };
      }
    }
    firstWriteWaiting.delete(key);
    try {
      await patchApp(app, patch);
    } catch (error) {
      // A status the API server refuses (a feedback value outside the Application schema) must not freeze
      // the write-back in a retry loop: write the rest without the spoke's values, and say why.
      if (!(error instanceof KubeApiError && error.statusCode === 422 && patch.status)) throw error;
      logger.warn({ app: key, err: error.message }, 'status write-back rejected: writing conditions only');
      const previous = app.status?.conditions?.find((condition) => condition.type === INVALID_FEEDBACK_CONDITION);
      const rejected: ApplicationCondition = {
        type: INVALID_FEEDBACK_CONDITION,
        message: `the API server rejected the status write-back, so the spoke's sync, health and operation are not shown: ${error.message}`,
        lastTransitionTime: previous?.lastTransitionTime ?? kubeTime(context.now()),
      };
      const kept = (conditions ?? []).filter((condition) => condition.type !== INVALID_FEEDBACK_CONDITION);
      const fallbackConditions = [...kept, rejected];
      const { status: _rejected, ...rest } = patch;
      const fallback =
        canonicalJson(app.status?.conditions) === canonicalJson(fallbackConditions)
          ? rest
          : { ...rest, status: { conditions: fallbackConditions } };
      if (Object.keys(fallback).length > 0) await patchApp(app, fallback);
      return requeue;
    }
    if (statusChanged) metrics.statusLatency.observe((Date.now() - info.enqueuedAt) / 1000);
    return requeue;
  }

  const ownerKeys = (object: KubeObject) => {
    const owner = workOwnerKey(object);
    return owner ? [owner] : [];
  };
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
    if (type === 'delete') expectations.forget(kindId, object.metadata.namespace, object.metadata.name);
    else expectations.observe(kindId, object);
  };

  return {
    name: 'application',
    workers: config.workers,
    watches: [
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
      {
        // Tenancy reads a cluster's existence and labels (set membership); agents rewrite status all the time.
        kind: MANAGED_CLUSTER,
        keysFor: (object, previous, type) => {
          if (
            (type ?? (previous ? 'update' : 'add')) === 'update' &&
            canonicalJson(object.metadata.labels) === canonicalJson(previous?.metadata.labels)
          )
            return [];
          inventory = undefined;
          return appsTargeting(object.metadata.name);
        },
      },
      {
        kind: MANAGED_CLUSTER_SET,
        keysFor: (object, previous, type) => {
          if (
            (type ?? (previous ? 'update' : 'add')) === 'update' &&
            canonicalJson((object as ManagedClusterSet).spec) ===
              // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- wrong here: without it `previous` is a KubeObject, with no spec
              canonicalJson((previous as ManagedClusterSet | undefined)?.spec)
          )
            return [];
          inventory = undefined;
          const namespaces = new Set(
            cache
              .byIndex<ManagedClusterSetBinding>(
                MANAGED_CLUSTER_SET_BINDING.id,
                BINDING_SET_INDEX,
                object.metadata.name,
              )
              .map((binding) => binding.metadata.namespace ?? ''),
          );
          return [...namespaces].flatMap(appsIn);
        },
      },
      {
        kind: MANAGED_CLUSTER_SET_BINDING,
        indexes: { [BINDING_SET_INDEX]: boundSet },
        keysFor: (object, previous, type) => {
          if (
            (type ?? (previous ? 'update' : 'add')) === 'update' &&
            canonicalJson(boundSet(object)) === canonicalJson(previous ? boundSet(previous) : undefined)
          )
            return [];
          inventory = undefined;
          return appsIn(object.metadata.namespace ?? '');
        },
      },
      {
        // ACM's tenancy rule reads the decisions of an app's namespace (which clusters they list).
        kind: PLACEMENT_DECISION,
        indexes: { [DECISION_NAMESPACE_INDEX]: namespaceOf },
        keysFor: (object, previous, type) => {
          const clusters = (o: KubeObject | undefined) =>
            canonicalJson(
              ((o as PlacementDecisionLike | undefined)?.status?.decisions ?? []).map((d) => d.clusterName).sort(),
            );
          if ((type ?? (previous ? 'update' : 'add')) === 'update' && clusters(object) === clusters(previous))
            return [];
          return appsIn(object.metadata.namespace ?? '');
        },
      },
      {
        // A cluster namespace appearing (the ManagedCluster was accepted) lets waiting works be written at once.
        kind: NAMESPACE,
        keysFor: (object, previous, type) =>
          (type ?? (previous ? 'update' : 'add')) === 'add' ? appsTargeting(object.metadata.name) : [],
      },
    ],
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
    pendingExpectations: () => expectations.size,
  };
}
