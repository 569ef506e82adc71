/**
 * The one write the Application reconciler makes to a hub Application per reconcile, computed from what
 * the cache holds: the cleanup finalizer (added, or released with Argo CD's resources finalizers), the
 * refresh and forwarded-operation annotations and the hub app's `operation`, the record of an old
 * controller fighting a hand-over, and the status write-back. Changes to metadata or `operation` are
 * guarded by the resourceVersion the patch was judged on (a 409 retries on fresh data); a status-only
 * patch is not. Pure: the reconciler reads the cache, calls {@link computeHubApplicationPatch} and writes
 * what it returns, at most once.
 */
import {
  CLEANUP_FINALIZER,
  FORWARDED_OPERATION_ANNOTATION,
  LEGACY_CONTROLLER_SEEN_ANNOTATION,
  PULL_LABEL,
  REFRESH_ANNOTATION,
} from '../core/keys.js';
import { canonicalJson } from '../core/canonical-json.js';
import { kubeTime } from '../core/time.js';
import type { Application, ApplicationCondition, ManifestWork } from '../core/types.js';
import { isPullApplication, isRoutedToAgent } from '../delivery/manifestwork.js';
import { DELIVERY_MODEL_LABEL } from '../delivery/delivery-model.js';
import type { PropagationPlan } from './propagation.js';
import { computeApplicationStatus, DELIVERY_MODEL_CONFLICT_CONDITION, INVALID_FEEDBACK_CONDITION } from './status.js';
import { LEGACY_CONTROLLER_WINDOW_MS, legacyControllerWarning } from './takeover.js';

/** A merge patch for a hub Application. */
export type HubApplicationMergePatch = Record<string, unknown>;

/** What the patch of a hub Application pullfleet delivers through a ManifestWork (the basic model) is judged on. */
export interface BasicHubApplicationPatchInput {
  readonly delivery: 'basic';
  /** The hub Application as the cache holds it. */
  readonly app: Application;
  /** What propagation decided for it (after the writes of this reconcile: a refused work leaves a problem). */
  readonly plan: PropagationPlan;
  /** The ManagedCluster the app targets, if it names one. */
  readonly cluster?: string;
  /**
   * The work whose feedback the status shows: the legacy work mid hand-over, else the work just written,
   * else the one at the target (read only when the plan has a target or a status work).
   */
  readonly work?: ManifestWork;
  readonly now: Date;
  /** Feedback older than this is stale (0: never). */
  readonly staleAfterMs: number;
  /** A forwarded operation not started after this long raises a condition (0: never). */
  readonly operationTimeoutMs: number;
  /** Why ACM's narrower tenancy rule would refuse the app pullfleet delivers. */
  readonly acmTenancy?: string;
  /** The halt of the waved app's rollout, as a condition message. */
  readonly rolloutHalted?: string;
  /** The hub's ManifestWork CRD drops the resource summary rule. */
  readonly summaryRuleDroppedByHub?: boolean;
}

/** What the patch of a hub Application the argocd-agent principal delivers (an agent model) is judged on. */
export interface AgentHubApplicationPatchInput {
  readonly delivery: 'agent';
  readonly app: Application;
  /** Whether the hand-off left no work of the app (only then may a deleted app's finalizer go). */
  readonly handoffDone: boolean;
  readonly now: Date;
}

export type HubApplicationPatchInput = BasicHubApplicationPatchInput | AgentHubApplicationPatchInput;

export interface HubApplicationPatch {
  /** The merge patch to write; undefined when the hub app is as it should be. */
  readonly patch?: HubApplicationMergePatch;
  /** The patch only adds the cleanup finalizer (a new app's first write, which may wait behind a burst). */
  readonly firstWriteOnly: boolean;
  /** The patch carries a status change. */
  readonly statusChanged: boolean;
  /** The conditions the status should carry (what a write without the spoke's values keeps). */
  readonly conditions?: readonly ApplicationCondition[];
  /** The next moment the patch would change with time alone. */
  readonly recheckAt?: Date;
  /** Why the app is not delivered, which only a change of its objects can fix (a terminal reconcile). */
  readonly problem?: string;
  /** What the patch does that the log should say. */
  readonly notes: HubApplicationPatchNotes;
}

/** Events of a patch worth a log line. */
export interface HubApplicationPatchNotes {
  /** Argo CD resources finalizers released with the cleanup finalizer. */
  readonly releasedArgoFinalizers?: readonly string[];
  /** An old controller fighting the hand-over, recorded on the app now (the plan's message). */
  readonly legacyControllerSeen?: string;
  /** A problem of an app the argocd-agent principal still writes the status of (so it goes to the log only). */
  readonly unwritableProblem?: string;
  /** A deleted agent-model app's finalizer is released (its hand-off is done). */
  readonly releasedFinalizer?: boolean;
}

/** The patch of a hub Application, for either delivery model. */
export function computeHubApplicationPatch(input: HubApplicationPatchInput): HubApplicationPatch {
  return input.delivery === 'agent' ? agentPatch(input) : basicPatch(input);
}

/** The metadata half of a basic app's patch, and the app as it will be once that half is written. */
interface MetadataChanges {
  readonly patch: HubApplicationMergePatch;
  /** Metadata fields changed (the resourceVersion guard is added once any is). */
  readonly fields: readonly string[];
  /** The app with the new annotations and `operation` (what the status is judged on). */
  readonly view: Application;
  readonly releasedArgoFinalizers?: readonly string[];
  readonly legacyControllerSeen?: string;
}

function basicPatch(input: BasicHubApplicationPatchInput): HubApplicationPatch {
  const { plan } = input;
  const meta = metadataChanges(input);
  const patch: HubApplicationMergePatch = { ...meta.patch };
  const status = statusChanges(input, meta.view);
  if (status.patch) patch.status = status.patch;
  const notes: HubApplicationPatchNotes = {
    ...(meta.releasedArgoFinalizers ? { releasedArgoFinalizers: meta.releasedArgoFinalizers } : {}),
    ...(meta.legacyControllerSeen ? { legacyControllerSeen: meta.legacyControllerSeen } : {}),
    ...(status.unwritableProblem ? { unwritableProblem: status.unwritableProblem } : {}),
  };
  const written = Object.keys(patch).length > 0;
  return {
    ...(written ? { patch } : {}),
    firstWriteOnly:
      written &&
      plan.finalizer === 'add' &&
      !plan.problem &&
      !('operation' in patch) &&
      meta.fields.every((field) => field === 'finalizers'),
    statusChanged: status.patch !== undefined,
    ...(status.conditions ? { conditions: status.conditions } : {}),
    ...(status.recheckAt ? { recheckAt: status.recheckAt } : {}),
    ...(status.problemShown && plan.problem ? { problem: plan.problem } : {}),
    notes,
  };
}

/** Finalizers, annotations and `operation` of a basic app, guarded by its resourceVersion. */
function metadataChanges(input: BasicHubApplicationPatchInput): MetadataChanges {
  const { app, plan, now } = input;
  const patch: HubApplicationMergePatch = {};
  const metadata: Record<string, unknown> = {};
  const annotations: Record<string, string | null> = {};
  const viewAnnotations = { ...(app.metadata.annotations ?? {}) };
  const finalizers = finalizerChange(app, plan);
  if (finalizers !== undefined) metadata.finalizers = finalizers;
  // The refresh annotation went to the spoke with this write: removed from the hub app once.
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
  const legacyControllerSeen = legacySeenChange(app, plan, now, annotations, viewAnnotations);
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  let view: Application = app;
  if (Object.keys(annotations).length > 0 || 'operation' in patch) {
    const { operation, ...rest } = app;
    view = {
      ...rest,
      ...('operation' in patch || operation === undefined ? {} : { operation }),
      metadata: { ...app.metadata, annotations: viewAnnotations },
    };
  }
  if (Object.keys(metadata).length > 0 || 'operation' in patch)
    patch.metadata = { ...metadata, resourceVersion: app.metadata.resourceVersion };
  const released = plan.releaseArgoFinalizers?.length ? plan.releaseArgoFinalizers : undefined;
  return {
    patch,
    fields: Object.keys(metadata),
    view,
    ...(released ? { releasedArgoFinalizers: released } : {}),
    ...(legacyControllerSeen ? { legacyControllerSeen } : {}),
  };
}

/**
 * The finalizers a basic app should carry after this reconcile (null: none; undefined: unchanged). Argo
 * CD's resources finalizers go with pullfleet's own once no work is left (the hub Argo CD never processes
 * a skip-reconcile app): otherwise the app would stay Terminating forever.
 */
function finalizerChange(app: Application, plan: PropagationPlan): string[] | null | undefined {
  const release = new Set(plan.releaseArgoFinalizers ?? []);
  if (plan.finalizer === 'remove') release.add(CLEANUP_FINALIZER);
  if (release.size > 0) {
    const kept = (app.metadata.finalizers ?? []).filter((finalizer) => !release.has(finalizer));
    return kept.length > 0 ? kept : null;
  }
  if (plan.finalizer === 'add') return [...(app.metadata.finalizers ?? []), CLEANUP_FINALIZER];
  return undefined;
}

/**
 * An old controller seen fighting the hand-over is remembered on the hub app (a restart keeps the
 * warning), refreshed at most every half window so the record itself does not wake that controller
 * often, and dropped a window after it was last seen. Edits `annotations` and `viewAnnotations`; returns
 * the plan's message when the sighting is recorded now.
 */
function legacySeenChange(
  app: Application,
  plan: PropagationPlan,
  now: Date,
  annotations: Record<string, string | null>,
  viewAnnotations: Record<string, string>,
): string | undefined {
  const seenRaw = viewAnnotations[LEGACY_CONTROLLER_SEEN_ANNOTATION];
  const seen = seenRaw === undefined ? Number.NaN : Date.parse(seenRaw);
  if (plan.legacyControllerActive && !app.metadata.deletionTimestamp) {
    if (Number.isNaN(seen) || now.getTime() - seen > LEGACY_CONTROLLER_WINDOW_MS / 2) {
      const at = kubeTime(now);
      annotations[LEGACY_CONTROLLER_SEEN_ANNOTATION] = at;
      viewAnnotations[LEGACY_CONTROLLER_SEEN_ANNOTATION] = at;
      return plan.legacyControllerActive;
    }
  } else if (seenRaw !== undefined && (Number.isNaN(seen) || now.getTime() - seen > LEGACY_CONTROLLER_WINDOW_MS)) {
    annotations[LEGACY_CONTROLLER_SEEN_ANNOTATION] = null;
    delete viewAnnotations[LEGACY_CONTROLLER_SEEN_ANNOTATION];
  }
  return undefined;
}

/** The status half of a basic app's patch. */
interface StatusChanges {
  readonly patch?: unknown;
  readonly conditions?: ApplicationCondition[];
  readonly recheckAt?: Date;
  /** A problem of an app the principal writes the status of (for the log). */
  readonly unwritableProblem?: string;
  /** The plan's problem is shown: on the app's status, or in the log. */
  readonly problemShown: boolean;
}

/**
 * The status write-back of a basic app pullfleet delivers (dynamic) or synth delivered (static), judged
 * on `view` (the app with this patch's annotations). While the app is still routed to a managed
 * argocd-agent (step 1 of a move back to basic), the principal writes its status; writing it too would
 * fight the principal, so a problem only goes to the log.
 */
function statusChanges(input: BasicHubApplicationPatchInput, view: Application): StatusChanges {
  const { app, plan, now } = input;
  const principals = isRoutedToAgent(app);
  const unwritableProblem = principals && plan.problem ? plan.problem : undefined;
  if (app.metadata.deletionTimestamp || !isPullApplication(app) || principals || !(input.cluster || plan.problem))
    return unwritableProblem ? { unwritableProblem, problemShown: true } : { problemShown: false };
  const legacy = legacyControllerWarning(view, plan.legacyControllerActive, now);
  const statusWork = plan.target || plan.statusWork ? input.work : undefined;
  const result = computeApplicationStatus({
    app: view,
    ...(statusWork ? { work: statusWork } : {}),
    ...(plan.problem ? { problem: plan.problem } : {}),
    now,
    staleAfterMs: input.staleAfterMs,
    operationTimeoutMs: input.operationTimeoutMs,
    ...(legacy.message ? { legacyController: legacy.message } : {}),
    ...(input.acmTenancy ? { acmTenancy: input.acmTenancy } : {}),
    ...(input.rolloutHalted ? { rolloutHalted: input.rolloutHalted } : {}),
    ...(input.summaryRuleDroppedByHub ? { summaryRuleDroppedByHub: true } : {}),
  });
  const recheckAt = earliest(legacy.recheckAt, result.recheckAt);
  return {
    problemShown: plan.problem !== undefined,
    ...(result.patch ? { patch: result.patch.status } : {}),
    ...(result.desired.conditions ? { conditions: result.desired.conditions } : {}),
    ...(recheckAt ? { recheckAt } : {}),
  };
}

/** The earlier of two moments (undefined: none). */
export function earliest(a: Date | undefined, b: Date | undefined): Date | undefined {
  if (!a) return b;
  if (!b) return a;
  return b < a ? b : a;
}

/**
 * When the API server refuses a status write-back (a feedback value outside the Application schema), the
 * patch to write instead: everything but the spoke's values, with an InvalidFeedbackWarning saying why, so
 * the write-back does not freeze in a retry loop. Undefined when that leaves nothing to write.
 */
export function rejectedStatusPatch(
  app: Application,
  patch: HubApplicationMergePatch,
  conditions: readonly ApplicationCondition[] | undefined,
  rejection: string,
  now: Date,
): HubApplicationMergePatch | undefined {
  const previous = app.status?.conditions?.find((condition) => condition.type === INVALID_FEEDBACK_CONDITION);
  const rejected: ApplicationCondition = {
    type: INVALID_FEEDBACK_CONDITION,
    message: `the API server rejected the status write-back, so the spoke's sync, health and operation are not shown: ${rejection}`,
    lastTransitionTime: previous?.lastTransitionTime ?? kubeTime(now),
  };
  const kept = (conditions ?? []).filter((condition) => condition.type !== INVALID_FEEDBACK_CONDITION);
  const fallbackConditions = [...kept, rejected];
  const { status: _rejected, ...rest } = patch;
  const fallback =
    canonicalJson(app.status?.conditions) === canonicalJson(fallbackConditions)
      ? rest
      : { ...rest, status: { conditions: fallbackConditions } };
  return Object.keys(fallback).length > 0 ? fallback : undefined;
}

/**
 * An agent-model app: its status stays the principal's, but for one condition pullfleet sets while the
 * pull label is on it too (a conflict only the user can resolve) and clears once it is gone; a deleted
 * app's cleanup finalizer goes once the hand-off left no work (with the app gone, its key would reach the
 * basic sweep, and a work not yet handed off must not be judged there).
 */
function agentPatch(input: AgentHubApplicationPatchInput): HubApplicationPatch {
  const { app } = input;
  const none = { firstWriteOnly: false, statusChanged: false, notes: {} };
  if (app.metadata.deletionTimestamp) {
    if (!(app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER) || !input.handoffDone) return none;
    const finalizers = (app.metadata.finalizers ?? []).filter((finalizer) => finalizer !== CLEANUP_FINALIZER);
    return {
      ...none,
      patch: {
        metadata: {
          finalizers: finalizers.length > 0 ? finalizers : null,
          resourceVersion: app.metadata.resourceVersion,
        },
      },
      notes: { releasedFinalizer: true },
    };
  }
  const conditions = app.status?.conditions ?? [];
  const current = conditions.find((condition) => condition.type === DELIVERY_MODEL_CONFLICT_CONDITION);
  const others = conditions.filter((other) => other.type !== DELIVERY_MODEL_CONFLICT_CONDITION);
  if (!isPullApplication(app))
    return current
      ? { ...none, patch: { status: { conditions: others.length > 0 ? others : null } }, statusChanged: true }
      : none;
  const message = agentPullConflict(app);
  if (current?.message === message) return { ...none, problem: message };
  const condition: ApplicationCondition = {
    type: DELIVERY_MODEL_CONFLICT_CONDITION,
    message,
    lastTransitionTime: kubeTime(input.now),
  };
  return { ...none, patch: { status: { conditions: [...others, condition] } }, statusChanged: true, problem: message };
}

/** The conflict of an agent-model app that also carries the pull label. */
function agentPullConflict(app: Application): string {
  const model = app.metadata.labels?.[DELIVERY_MODEL_LABEL]?.trim();
  return `the Application is labelled ${DELIVERY_MODEL_LABEL}=${model} and also ${PULL_LABEL}: the argocd-agent principal delivers agent-model Applications, so pullfleet does not wrap it into a ManifestWork; remove the ${PULL_LABEL} label, or set ${DELIVERY_MODEL_LABEL} to basic to deliver it through a ManifestWork`;
}
