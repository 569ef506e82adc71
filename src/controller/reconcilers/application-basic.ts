/**
 * The basic path of the Application reconciler: a hub Application pullfleet delivers through a
 * ManifestWork. {@link observeApplication} reads what the cache holds for a key, the model plans (in the
 * reconciler's dispatcher), {@link writeWorks} writes the works the plan asks for, and
 * {@link writeHubApplication} writes the hub Application once, with the patch the model computes.
 */
import { splitKey } from '../../kube/cache.js';
import { isConflict, KubeApiError } from '../../kube/client.js';
import { APPLICATION, MANIFEST_WORK, PLACEMENT_DECISION } from '../../kube/resources.js';
import { isHubItself } from '../../model/core/keys.js';
import { manifestWorkName } from '../../model/core/names.js';
import { type Application, FeedbackScrape, type KubeObject, type ManifestWork } from '../../model/core/types.js';
import { FLEET_APP_LABEL } from '../../model/delivery/hub-application.js';
import { isPullApplication, jsonSize, targetCluster, undeclaredFieldOf } from '../../model/delivery/manifestwork.js';
import { tenancyProblem } from '../../model/placement/tenancy.js';
import { ROLLOUT_RESUME_ANNOTATION } from '../../model/rollout/policy.js';
import { gateOf, type RolloutGate } from '../../model/rollout/gate.js';
import { isWavedApplication } from '../../model/rollout/static.js';
import { rolloutPolicyName } from '../../model/rollout/state.js';
import {
  computeHubApplicationPatch,
  earliest,
  rejectedStatusPatch,
  type HubApplicationPatch,
} from '../../model/reconcile/hub-application-patch.js';
import {
  computePropagation,
  isStaticApplication,
  type PropagationInput,
  type PropagationPlan,
} from '../../model/reconcile/propagation.js';
import { acmTenancyDifference } from '../../model/reconcile/takeover.js';
import type { ReconcileInfo, ReconcileResult } from '../runtime/reconciler.js';
import {
  DECISION_NAMESPACE_INDEX,
  FIRST_WRITE_WAIT_MS,
  LAGGING_REQUEUE_MS,
  MAX_WORK_BYTES,
  UNSEEN_WORK_RECHECK_MS,
  WORK_OWNER_INDEX,
  type ApplicationParts,
} from './application-parts.js';
import { adoptSynthWork } from './application-takeover.js';

/** What the cache holds for a key, as the plan and the hub app's patch read it. */
export interface ObservedApplication {
  readonly key: string;
  readonly app?: Application;
  readonly cluster?: string;
  /** The work at the app's target, as cached. */
  readonly workAtTarget?: ManifestWork;
  /** Why ACM's narrower tenancy rule would refuse the app pullfleet delivers. */
  readonly acmTenancy?: string;
  /** The cache is behind one of this reconciler's own writes (come back shortly). */
  readonly lagging: boolean;
  readonly propagation: PropagationInput;
}

/** Reads what the cache holds for `key` (never writes). */
export function observeApplication(
  parts: ApplicationParts,
  key: string,
  app: Application | undefined,
): ObservedApplication {
  const { context, writes } = parts;
  const { cache, config } = context;
  const { namespace = '', name } = splitKey(key);
  const works = cache.byIndex<ManifestWork>(MANIFEST_WORK.id, WORK_OWNER_INDEX, key);
  const cluster = app ? targetCluster(app) : undefined;
  const delivering = app && isPullApplication(app) && !isStaticApplication(app) && cluster;
  const deliveryProblem = delivering
    ? tenancyProblem(namespace, cluster, parts.inventory(), { relaxed: config.relaxTenancy })
    : undefined;
  const targetIsHub = cluster ? isHubItself(cluster, parts.inventory().clusters.get(cluster)?.metadata.labels) : false;
  // An app pullfleet did not render, delivered although ACM's narrower rule would refuse it: said on the app.
  const acmTenancy =
    delivering && !deliveryProblem && config.acmTenancyWarnings && !config.relaxTenancy
      ? acmTenancyDifference(
          app,
          cluster,
          cache.byIndex<KubeObject>(PLACEMENT_DECISION.id, DECISION_NAMESPACE_INDEX, namespace),
        )
      : undefined;
  const workName = manifestWorkName(namespace, name);
  const workAtTarget = cluster ? cache.get<ManifestWork>(MANIFEST_WORK.id, `${cluster}/${workName}`) : undefined;
  // The cache has not seen this controller's own last write yet (of the app, its work, or a legacy work it
  // orphaned in a hand-over): the watch event usually brings the key back first; a requeue covers the rest.
  const lagging =
    writes.lagging(APPLICATION, namespace, name, app) ||
    (cluster !== undefined && writes.lagging(MANIFEST_WORK, cluster, workName, workAtTarget)) ||
    writes.laggingAny(works);
  // A waved static app: its work carries what the app's rollout lets it carry now (rollout.ts keeps the state).
  const rolloutGate = app && isWavedApplication(app) && cluster ? rolloutGateFor(parts, app, cluster) : undefined;
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
      ...(writes.summaryRuleOff() ? { resourceSummary: false } : {}),
    },
    now: context.now(),
  };
  return {
    key,
    ...(app ? { app } : {}),
    ...(cluster ? { cluster } : {}),
    ...(workAtTarget ? { workAtTarget } : {}),
    ...(acmTenancy ? { acmTenancy } : {}),
    lagging,
    propagation,
  };
}

/** What the rollout of a waved app lets the work on `cluster` carry now (hold without a policy or state). */
function rolloutGateFor(parts: ApplicationParts, app: Application, cluster: string): RolloutGate {
  const namespace = app.metadata.namespace ?? '';
  const fleetApp = app.metadata.labels?.[FLEET_APP_LABEL] ?? '';
  return gateOf(parts.rollouts.policy(namespace, fleetApp), parts.rollouts.state(namespace, fleetApp).state, cluster);
}

/**
 * The halt of a waved app's rollout, as a condition message (nothing while it runs): halted by a failure,
 * or held because its policy ConfigMap cannot be read (nothing is promoted until it is fixed).
 */
function rolloutHaltedOf(parts: ApplicationParts, app: Application): string | undefined {
  const namespace = app.metadata.namespace ?? '';
  const fleetApp = app.metadata.labels?.[FLEET_APP_LABEL] ?? '';
  const unreadable = parts.rollouts.parsedPolicy(namespace, fleetApp)?.problem;
  if (unreadable)
    return `the rollout of app ${fleetApp} is held: ${unreadable}. Every cluster keeps the revision it has until then`;
  const halted = parts.rollouts.state(namespace, fleetApp).state?.halted;
  if (!halted) return undefined;
  return `the rollout of app ${fleetApp} halted at ${halted.at}: ${halted.reason}; failed clusters: ${halted.clusters.join(', ')}. Every other cluster keeps the revision it has. Fix the spec (a new revision starts a new rollout), or set annotation ${ROLLOUT_RESUME_ANNOTATION} on ConfigMap ${namespace}/${rolloutPolicyName(fleetApp)} to a new value to retry them`;
}

/** What writing the works left: the plan (a refused work leaves only a problem), and the work written. */
export interface WorksWritten {
  readonly plan: PropagationPlan;
  readonly appliedWork?: ManifestWork;
  /** The plan was refused on a live read of a work the cache has not seen. */
  readonly refusedUnseen: boolean;
}

/**
 * Nothing of the plan but the finalizer survives a work that cannot be written: no deletes, no operation
 * bookkeeping, the refresh annotation stays for the next attempt.
 */
function refused(plan: PropagationPlan, problem: string): PropagationPlan {
  return {
    deletes: [],
    problem,
    ...(plan.target ? { target: plan.target } : {}),
    ...(plan.finalizer === 'add' ? { finalizer: 'add' as const } : {}),
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
 * Writes the works `plan` asks for: the synth work a waved app takes over, the app's own work (refused
 * when too large, or when the API server refuses it in a way retrying cannot fix), and the deletes.
 * Returns a requeue when a work created meanwhile must be looked at again once the cache has it.
 */
export async function writeWorks(
  parts: ApplicationParts,
  seen: ObservedApplication,
  planned: PropagationPlan,
  info: ReconcileInfo,
): Promise<WorksWritten | ReconcileResult> {
  let plan = planned;
  if (plan.apply && jsonSize(plan.apply) > MAX_WORK_BYTES)
    plan = refused(
      plan,
      `the ManifestWork would be ${jsonSize(plan.apply)} bytes; the limit is ${MAX_WORK_BYTES}: make the Application smaller`,
    );
  await adoptSynthWork(parts, seen.key, plan);
  const applied = plan.apply ? await applyPlannedWork(parts, seen, plan, info) : { plan, refusedUnseen: false };
  if (!('plan' in applied)) return applied;
  for (const ref of applied.plan.deletes)
    if (await parts.writes.deleteWork(ref))
      parts.context.logger.info({ app: seen.key, work: `${ref.namespace}/${ref.name}` }, 'deleted ManifestWork');
  return applied;
}

/** Applies the plan's work; an error retrying cannot fix becomes the plan's problem. */
async function applyPlannedWork(
  parts: ApplicationParts,
  seen: ObservedApplication,
  plan: PropagationPlan,
  info: ReconcileInfo,
): Promise<WorksWritten | ReconcileResult> {
  const { context, writes } = parts;
  const { logger } = context;
  const work = plan.apply!;
  const key = seen.key;
  // No work at the name in the cache: the apply must create one, never take over one the cache missed.
  const createOnly = !seen.workAtTarget;
  try {
    const appliedWork = await writes.applyWork(work, createOnly);
    context.metrics.propagationLatency.observe((Date.now() - info.enqueuedAt) / 1000);
    return { plan, appliedWork, refusedUnseen: false };
  } catch (error) {
    const target = `${work.metadata.namespace}/${work.metadata.name}`;
    if (error instanceof KubeApiError && error.statusCode === 404) {
      // The cluster namespace does not exist (yet): OCM creates it when the ManagedCluster is accepted.
      // The Namespace watch brings this key back the moment it appears.
      logger.info({ app: key, work: target }, 'cluster namespace missing: waiting for it');
      const problem = `namespace "${work.metadata.namespace}" does not exist on the hub yet, so ManifestWork ${target} cannot be written: accept the ManagedCluster (OCM creates its namespace then); delivery follows as soon as the namespace appears`;
      return { plan: refused(plan, problem), refusedUnseen: false };
    }
    if (createOnly && isConflict(error)) return refuseUnseenWork(parts, seen, plan, target);
    if (!isTerminal(error)) throw error;
    logger.warn({ app: key, err: error.message }, 'ManifestWork rejected by the API server');
    const hint = isUndeclaredField(error)
      ? ": the hub's ManifestWork CRD is older than the fields this work uses; upgrade the hub's cluster manager (or stop using the setting that needs the field)"
      : '';
    return {
      plan: refused(plan, `the API server rejected ManifestWork ${target}: ${error.message}${hint}`),
      refusedUnseen: false,
    };
  }
}

/**
 * A create-only apply refused: a work of that name exists, and the cache has not seen it yet (just created
 * by someone else, its watch event still on the way). The live work is judged as the cache would have
 * judged it; the app's entry in the target-work index brings it back when that work changes or goes.
 */
async function refuseUnseenWork(
  parts: ApplicationParts,
  seen: ObservedApplication,
  plan: PropagationPlan,
  target: string,
): Promise<WorksWritten | ReconcileResult> {
  const { logger } = parts.context;
  const work = plan.apply!;
  const live = await parts.writes.readWork(work.metadata.namespace ?? '', work.metadata.name);
  const problem = live.found
    ? live.work
      ? computePropagation({ ...seen.propagation, workAtTarget: live.work }).problem
      : undefined
    : `ManifestWork ${target} already exists and could not be read (${live.why}): refusing to take it over; delete it or rename the Application`;
  if (!problem) {
    // Gone again, or this app's own (written by an earlier leader): look again once the cache has it.
    logger.info({ app: seen.key, work: target }, 'ManifestWork created meanwhile: looking again');
    return { requeueAfterMs: LAGGING_REQUEUE_MS };
  }
  logger.warn({ app: seen.key, work: target, problem }, 'ManifestWork name taken by a work the cache had not seen');
  return {
    plan: { deletes: [], problem, ...(plan.finalizer === 'add' ? { finalizer: 'add' as const } : {}) },
    refusedUnseen: true,
  };
}

/**
 * The work whose feedback the hub app's status shows: mid hand-over, until the agent reported on
 * pullfleet's own work, the legacy work (it delivers); else the work just written, else the one cached at
 * the target.
 */
function statusWorkOf(parts: ApplicationParts, written: WorksWritten): ManifestWork | undefined {
  const { cache } = parts.context;
  const { plan } = written;
  const at = (ref: { namespace: string; name: string } | undefined) =>
    ref ? cache.get<ManifestWork>(MANIFEST_WORK.id, `${ref.namespace}/${ref.name}`) : undefined;
  return at(plan.statusWork) ?? written.appliedWork ?? at(plan.target);
}

/**
 * Writes the hub Application once, with the patch the model computes (finalizers, annotations, status),
 * and says what the manager should do next: a recheck when time alone changes the status, a terminal
 * result when the app cannot be delivered until its objects change.
 */
export async function writeHubApplication(
  parts: ApplicationParts,
  seen: ObservedApplication & { readonly app: Application },
  written: WorksWritten,
  info: ReconcileInfo,
): Promise<void | ReconcileResult> {
  const { context, writes } = parts;
  const { app, key } = seen;
  const now = context.now();
  const rolloutHalted = isWavedApplication(app) ? rolloutHaltedOf(parts, app) : undefined;
  const decided = computeHubApplicationPatch({
    delivery: 'basic',
    app,
    plan: written.plan,
    ...(seen.cluster ? { cluster: seen.cluster } : {}),
    ...(written.plan.target || written.plan.statusWork ? { work: statusWorkOf(parts, written) } : {}),
    now,
    staleAfterMs: context.config.staleAfterSeconds * 1000,
    operationTimeoutMs: context.config.operationTimeoutSeconds * 1000,
    ...(seen.acmTenancy ? { acmTenancy: seen.acmTenancy } : {}),
    ...(rolloutHalted ? { rolloutHalted } : {}),
    ...(writes.summaryRuleDroppedByHub ? { summaryRuleDroppedByHub: true } : {}),
  });
  logPatchNotes(parts, key, decided);
  const recheckAt = earliest(
    decided.recheckAt,
    written.refusedUnseen ? new Date(now.getTime() + UNSEEN_WORK_RECHECK_MS) : undefined,
  );
  const next: ReconcileResult | undefined = recheckAt
    ? { requeueAfterMs: Math.max(0, recheckAt.getTime() - context.now().getTime()) }
    : decided.problem
      ? { terminal: decided.problem }
      : undefined;
  if (!decided.patch) return next;
  const waiting = firstWriteWait(parts, key, decided, written, info);
  if (waiting) return waiting;
  const whole = await writePatch(parts, app, decided);
  if (whole && decided.statusChanged) context.metrics.statusLatency.observe((Date.now() - info.enqueuedAt) / 1000);
  return next;
}

/**
 * A burst of new apps (other keys waiting): the work went out with this reconcile; the app's first write
 * (the cleanup finalizer and the first status) waits until no other key does, so the works of the burst go
 * out first (FIRST_WRITE_WAIT_MS at the longest). An agent report meanwhile is folded into the same write.
 * An app deleted before it carries the finalizer has its work swept all the same.
 */
function firstWriteWait(
  parts: ApplicationParts,
  key: string,
  decided: HubApplicationPatch,
  written: WorksWritten,
  info: ReconcileInfo,
): ReconcileResult | undefined {
  const waitingFor = parts.writes.firstWriteWaiting;
  const waitingSince = decided.firstWriteOnly ? waitingFor.get(key) : undefined;
  if (decided.firstWriteOnly && (info.backlog ?? 0) > 0 && (waitingSince !== undefined || written.appliedWork)) {
    const since = waitingSince ?? Date.now();
    const left = since + FIRST_WRITE_WAIT_MS - Date.now();
    if (left > 0) {
      waitingFor.set(key, since);
      return { whenIdle: true, requeueAfterMs: left };
    }
  }
  waitingFor.delete(key);
  return undefined;
}

/**
 * Writes the patch. A status the API server refuses (a feedback value outside the Application schema)
 * must not freeze the write-back in a retry loop: the rest is written without the spoke's values, and the
 * app says why. True when the whole patch was written.
 */
async function writePatch(parts: ApplicationParts, app: Application, decided: HubApplicationPatch): Promise<boolean> {
  const patch = decided.patch!;
  try {
    await parts.writes.patchApp(app, patch);
    return true;
  } catch (error) {
    if (!(error instanceof KubeApiError && error.statusCode === 422 && patch.status)) throw error;
    parts.context.logger.warn(
      { app: `${app.metadata.namespace ?? ''}/${app.metadata.name}`, err: error.message },
      'status write-back rejected: writing conditions only',
    );
    const fallback = rejectedStatusPatch(app, patch, decided.conditions, error.message, parts.context.now());
    if (fallback) await parts.writes.patchApp(app, fallback);
    return false;
  }
}

/** The log lines of what the patch does. */
function logPatchNotes(parts: ApplicationParts, key: string, decided: HubApplicationPatch): void {
  const { logger } = parts.context;
  const { notes } = decided;
  if (notes.releasedArgoFinalizers)
    logger.info(
      { app: key, finalizers: notes.releasedArgoFinalizers },
      'hub Application deleted and its works gone: releasing Argo CD resources finalizers',
    );
  if (notes.legacyControllerSeen)
    logger.warn(
      { app: key, message: notes.legacyControllerSeen },
      'another controller is fighting the hand-over of a legacy ManifestWork',
    );
  if (notes.unwritableProblem)
    logger.warn(
      { app: key, problem: notes.unwritableProblem },
      'app routed to argocd-agent while its work stands by: the work cannot be written',
    );
}
