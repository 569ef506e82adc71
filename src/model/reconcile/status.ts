/**
 * Hub Application status from ManifestWork feedback (docs/controller/duties.md, "Status write-back"). Pure: given the
 * hub app, the observed work and the delivery problem (if any), compute the status the hub app should show and the
 * merge patch that gets it there (undefined when nothing changed, so no-op writes are skipped).
 */
import {
  readApplicationFeedback,
  validateApplicationFeedback,
  workCondition,
  type ApplicationFeedback,
  type InvalidFeedback,
} from './feedback.js';
import { SKIP_RECONCILE_ANNOTATION, SPEC_HASH_ANNOTATION } from '../core/keys.js';
import {
  MAX_REVISION_FEEDBACK_SOURCES,
  buildPayloadApplication,
  isStandBy,
  multiSourceCount,
  payloadSpecHash,
  spokeAppNamespace,
} from '../delivery/manifestwork.js';
import {
  operationInProgress,
  operationTaken,
  parseForwardedOperation,
  workCarriesForward,
} from './operation-forwarding.js';
import {
  INHERITED_DESTINATION_NAMESPACE_ANNOTATION,
  LEGACY_CONTROLLER_CONDITION,
  withDestinationNamespace,
} from './takeover.js';
import { ROLLOUT_HALTED_CONDITION } from '../rollout/policy.js';
import { canonicalJson } from '../core/canonical-json.js';
import { kubeTime } from '../core/time.js';
import {
  MAX_SUMMARY_CHARS,
  RESOURCE_LIST_TRUNCATED_CONDITION,
  RESOURCE_SUMMARY_CONDITION,
  RESOURCE_SUMMARY_WARNING_CONDITION,
  currentResourcesDigest,
  readResourceSummary,
  resourcesDigest,
  toArgoResources,
  type ResourceSummaryReading,
} from './resource-summary.js';
import { truncatedListMessage, truncatedResourceList } from './omitted-resources.js';
import type {
  Application,
  ApplicationCondition,
  ApplicationStatus,
  Condition,
  JsonObject,
  ManifestWork,
} from '../core/types.js';

/** Condition type for anything that stops delivery (cluster missing, namespace not allowed, work not applied). */
export const DELIVERY_ERROR_CONDITION = 'DeliveryError';
/** Condition type for spoke feedback older than the staleness threshold. */
export const FEEDBACK_STALE_CONDITION = 'FeedbackStaleWarning';
/** Condition type for a forwarded `operation` the spoke has not started within the timeout. */
export const OPERATION_PENDING_CONDITION = 'OperationPendingWarning';
/** Condition type for spoke feedback values the Application status cannot hold (dropped from the write-back). */
export const INVALID_FEEDBACK_CONDITION = 'InvalidFeedbackWarning';
/** Condition type for an opted-in app the hub's own Argo CD would also reconcile (no `skip-reconcile: "true"`). */
export const SKIP_RECONCILE_CONDITION = 'SkipReconcileWarning';
/** On an agent-model hub Application that also carries the pull label (set by the controller, never wrapped). */
export const DELIVERY_MODEL_CONFLICT_CONDITION = 'DeliveryModelConflict';
/**
 * Condition type on a pull Application pullfleet did not render that it delivers although ACM's propagation
 * controller would refuse it (no PlacementDecision in its namespace selects the target cluster): pullfleet's
 * tenancy rule (a ManagedClusterSet bound to the namespace) is wider than ACM's.
 */
export const ACM_TENANCY_CONDITION = 'AcmTenancyWarning';
/**
 * Condition type on a multi-source app with more sources than the work asks revisions for
 * (MAX_REVISION_FEEDBACK_SOURCES): its `status.sync.revisions` and `operationState.syncResult.revisions` list only
 * the first ones.
 */
export const REVISIONS_TRUNCATED_CONDITION = 'RevisionsTruncatedWarning';
const OWN_CONDITIONS = new Set([
  ACM_TENANCY_CONDITION,
  REVISIONS_TRUNCATED_CONDITION,
  DELIVERY_ERROR_CONDITION,
  FEEDBACK_STALE_CONDITION,
  OPERATION_PENDING_CONDITION,
  INVALID_FEEDBACK_CONDITION,
  SKIP_RECONCILE_CONDITION,
  LEGACY_CONTROLLER_CONDITION,
  DELIVERY_MODEL_CONFLICT_CONDITION,
  ROLLOUT_HALTED_CONDITION,
  RESOURCE_SUMMARY_WARNING_CONDITION,
  RESOURCE_LIST_TRUNCATED_CONDITION,
]);

/** The sync / health value written while the spoke has not reported one. */
export const UNKNOWN = 'Unknown';

export interface StatusInput {
  readonly app: Application;
  /** The work the app's status comes from (at its current target), if it exists. */
  readonly work?: ManifestWork;
  /** Delivery problem from propagation or tenancy; becomes a DeliveryError condition. */
  readonly problem?: string;
  /** Current time. */
  readonly now: Date;
  /** Feedback whose `reconciledAt` is older than this many milliseconds is stale. 0 disables the check. */
  readonly staleAfterMs: number;
  /** A forwarded operation the spoke has not started after this many milliseconds raises a condition. 0 disables. @default 0 */
  readonly operationTimeoutMs?: number;
  /** An old propagation controller fighting the hand-over of this app's work; becomes a LegacyControllerWarning condition. */
  readonly legacyController?: string;
  /** Why ACM's propagation controller would not deliver this app, which pullfleet delivers (ACM_TENANCY_CONDITION). */
  readonly acmTenancy?: string;
  /** The rollout of this waved app halted on failures (the message names the clusters); becomes a RolloutHalted condition. */
  readonly rolloutHalted?: string;
  /**
   * The hub's ManifestWork CRD drops `conditionRules` (a cluster manager before OCM 1.0), so the controller asks
   * no work for a resource summary; a work without the rule then gets a ResourceSummaryWarning saying so.
   */
  readonly summaryRuleDroppedByHub?: boolean;
}

export interface StatusResult {
  /** The status fields pullfleet owns, as they should be. */
  readonly desired: ApplicationStatus;
  /** Merge patch for the hub Application (`{status: …}`), or undefined when nothing changed. */
  readonly patch?: { status: JsonObject };
  /** The next moment the status would change with time alone (feedback going stale, an operation timing out). */
  readonly recheckAt?: Date;
}

/** Feedback of the app's work, checked against the status schema. */
function feedbackOf(input: StatusInput): { feedback: ApplicationFeedback | undefined; invalid: InvalidFeedback[] } {
  const { app, work } = input;
  return validateApplicationFeedback(
    work ? readApplicationFeedback(work, spokeAppNamespace(app), app.metadata.name) : undefined,
  );
}

/** The resource summary the app's work carries, if the app has a work. */
function summaryOf(input: StatusInput): ResourceSummaryReading | undefined {
  const { app, work } = input;
  return work ? readResourceSummary(work, spokeAppNamespace(app), app.metadata.name) : undefined;
}

/** Conditions about the resource summary: why there is none, or that the list is cut. */
function summaryConditions(
  reading: ResourceSummaryReading | undefined,
  cluster: string,
  appHealth: string | undefined,
  droppedByHub: boolean,
): Map<string, string> {
  const messages = new Map<string, string>();
  const kept =
    'status.resources and status.summary.images keep their last values, and sync, health and operation still come through status feedback';
  if (reading?.state === 'NotRequested' && droppedByHub) {
    messages.set(
      RESOURCE_SUMMARY_WARNING_CONDITION,
      `the hub's ManifestWork CRD has no manifestConfigs[].conditionRules (a cluster manager before OCM 1.0): the API server refuses or drops the resource summary rule, so the work for cluster ${cluster} goes without it and status.resources is not written; upgrade the hub's cluster manager (the controller tries the rule again every hour, and synth leaves it out with the Hub prop resourceSummaries: false); sync, health and operation still come through status feedback`,
    );
  } else if (reading?.state === 'Rejected') {
    const said = reading.message.length > 300 ? `${reading.message.slice(0, 299)}…` : reading.message;
    messages.set(
      RESOURCE_SUMMARY_WARNING_CONDITION,
      `the work agent on cluster ${cluster} could not build the resource summary (condition ${RESOURCE_SUMMARY_CONDITION}): ${said}; ${kept}`,
    );
  } else if (reading?.state === 'Unsupported') {
    messages.set(
      RESOURCE_SUMMARY_WARNING_CONDITION,
      `the work agent on cluster ${cluster} reports status feedback but no resource summary (condition ${RESOURCE_SUMMARY_CONDITION}): work agents before OCM 1.0 do not evaluate conditionRules, and a hub whose ManifestWork CRD predates them drops the rule; upgrade the klusterlet there (and the hub) to see the app's resources; ${kept}`,
    );
  } else if (reading?.state === 'Reported') {
    const summary = reading.summary;
    if (summary.healthSource === 'appTree' && appHealth !== undefined && appHealth !== 'Healthy') {
      messages.set(
        RESOURCE_SUMMARY_WARNING_CONDITION,
        `the app is ${appHealth}, but the Argo CD on cluster ${cluster} does not keep the health of single resources in the Application (status.resourceHealthSource: appTree, the Argo CD 3 default), so status.resources shows sync status only; set controller.resource.health.persist: "true" in argocd-cmd-params-cm there to see which resource is unhealthy`,
      );
    }
    const truncated = truncatedResourceList(summary, MAX_SUMMARY_CHARS);
    if (truncated) messages.set(RESOURCE_LIST_TRUNCATED_CONDITION, truncatedListMessage(truncated));
  }
  return messages;
}

/** The first moment after `now` at which time alone changes the status, if any. */
function recheckAt(input: StatusInput, feedback: ApplicationFeedback | undefined): Date | undefined {
  const now = input.now.getTime();
  const moments: number[] = [];
  if (input.work && feedback?.reconciledAt && input.staleAfterMs > 0) {
    const staleAt = Date.parse(feedback.reconciledAt) + input.staleAfterMs + 1;
    if (!Number.isNaN(staleAt) && staleAt > now) moments.push(staleAt);
  }
  const forwarded = parseForwardedOperation(input.app);
  if (
    forwarded &&
    input.app.operation !== undefined &&
    (input.operationTimeoutMs ?? 0) > 0 &&
    !operationTaken(forwarded, feedback?.operationStateStartedAt, feedback?.operationForwardId)
  ) {
    const due = Date.parse(forwarded.at) + input.operationTimeoutMs! + 1;
    if (!Number.isNaN(due) && due > now) moments.push(due);
  }
  return moments.length > 0 ? new Date(Math.min(...moments)) : undefined;
}

/**
 * Why a work is not applied, in the spoke's words: OCM's work agent puts the cause on each manifest's own
 * Applied condition and only a fixed sentence ("Failed to apply manifest work") on the work's, so the
 * manifests that failed are named with theirs; the work's message stands in when no manifest says more.
 */
function notAppliedReason(work: ManifestWork, applied: Condition): string {
  const failed = (work.status?.resourceStatus?.manifests ?? []).flatMap((manifest) => {
    const condition = manifest.conditions?.find((c) => c.type === 'Applied');
    if (condition?.status !== 'False' || !condition.message) return [];
    const meta = manifest.resourceMeta ?? {};
    const object = `${meta.kind ?? 'manifest'} ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? `#${meta.ordinal ?? '?'}`}`;
    return [`${object}: ${condition.message}`];
  });
  return failed.length > 0 ? failed.join('; ') : (applied.message ?? applied.reason ?? 'no reason given');
}

function conditionsFor(
  input: StatusInput,
  feedback: ApplicationFeedback | undefined,
  invalid: readonly InvalidFeedback[],
): ApplicationCondition[] {
  const work = input.work;
  const messages = work
    ? summaryConditions(
        summaryOf(input),
        work.metadata.namespace ?? 'the target cluster',
        feedback?.healthStatus,
        input.summaryRuleDroppedByHub === true,
      )
    : new Map<string, string>();
  if (input.problem) messages.set(DELIVERY_ERROR_CONDITION, input.problem);
  else if (work) {
    const applied = workCondition(work, 'Applied');
    if (applied?.status === 'False') {
      messages.set(
        DELIVERY_ERROR_CONDITION,
        `ManifestWork ${work.metadata.namespace}/${work.metadata.name} is not applied on the spoke: ${notAppliedReason(work, applied)}`,
      );
    }
  }
  if (work && feedback?.reconciledAt && input.staleAfterMs > 0) {
    const reconciled = Date.parse(feedback.reconciledAt);
    if (!Number.isNaN(reconciled) && input.now.getTime() - reconciled > input.staleAfterMs) {
      // The message only changes when the feedback does: no "N min ago" that would rewrite the app every minute.
      messages.set(
        FEEDBACK_STALE_CONDITION,
        `spoke feedback is stale: the spoke Application last reconciled at ${feedback.reconciledAt}, more than ${Math.round(input.staleAfterMs / 1000)} s before the hub last checked; check the work agent and Argo CD on cluster ${work.metadata.namespace}`,
      );
    }
  }
  const forwarded = parseForwardedOperation(input.app);
  const timeout = input.operationTimeoutMs ?? 0;
  if (
    forwarded &&
    input.app.operation !== undefined &&
    timeout > 0 &&
    !operationTaken(forwarded, feedback?.operationStateStartedAt, feedback?.operationForwardId)
  ) {
    const at = Date.parse(forwarded.at);
    if (!Number.isNaN(at) && input.now.getTime() - at > timeout) {
      const cluster = work?.metadata.namespace ?? 'the target cluster';
      const seconds = Math.round(timeout / 1000);
      // Held back (the spoke still runs an earlier operation) rather than forwarded: say what it waits for.
      const held =
        work !== undefined &&
        operationInProgress(feedback) &&
        !workCarriesForward(work, spokeAppNamespace(input.app), input.app.metadata.name, forwarded);
      messages.set(
        OPERATION_PENDING_CONDITION,
        held
          ? `the operation requested at ${forwarded.at} has waited more than ${seconds} s for the spoke to end the operation it runs (phase ${feedback?.operationStatePhase}); it is forwarded once that phase ends: check the sync running on ${cluster} (terminate it there if it is stuck), or remove the operation from this Application to cancel it`
          : `the operation forwarded at ${forwarded.at} has not been started by the spoke within ${seconds} s; it stays in the ManifestWork until it is: check that the work agent on ${cluster} is connected and its Argo CD is running, or remove the operation from this Application to cancel it`,
      );
    }
  }
  if (invalid.length > 0) {
    const shown = (value: string) => JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
    const converted = invalid
      .filter((i) => i.convertedTo !== undefined)
      .map((i) => `${i.name} ${shown(i.value)} written as ${i.convertedTo}`);
    const dropped = invalid.filter((i) => i.convertedTo === undefined).map((i) => `${i.name} ${shown(i.value)}`);
    const parts = [
      ...(dropped.length > 0 ? [`left out: ${dropped.join(', ')}`] : []),
      ...(converted.length > 0 ? [`converted from a Unix timestamp: ${converted.join(', ')}`] : []),
    ];
    messages.set(
      INVALID_FEEDBACK_CONDITION,
      `spoke feedback is not the RFC 3339 time the Application status expects (${parts.join('; ')}); check the work agent's feedback rules on cluster ${work?.metadata.namespace ?? 'the target cluster'}`,
    );
  }
  const sources = multiSourceCount(input.app.spec ?? {});
  if (work && sources > MAX_REVISION_FEEDBACK_SOURCES) {
    messages.set(
      REVISIONS_TRUNCATED_CONDITION,
      `the app has ${sources} sources and pullfleet asks the work agent for the revisions of the first ${MAX_REVISION_FEEDBACK_SOURCES} only (OCM status feedback carries one value per path, two paths per source), so status.sync.revisions and status.operationState.syncResult.revisions list ${MAX_REVISION_FEEDBACK_SOURCES} of ${sources}; split the app into Applications of at most ${MAX_REVISION_FEEDBACK_SOURCES} sources to see every revision`,
    );
  }
  if (input.legacyController) messages.set(LEGACY_CONTROLLER_CONDITION, input.legacyController);
  if (input.acmTenancy && !input.problem) messages.set(ACM_TENANCY_CONDITION, input.acmTenancy);
  if (input.rolloutHalted) messages.set(ROLLOUT_HALTED_CONDITION, input.rolloutHalted);
  if (input.app.metadata.annotations?.[SKIP_RECONCILE_ANNOTATION] !== 'true') {
    messages.set(
      SKIP_RECONCILE_CONDITION,
      `annotation ${SKIP_RECONCILE_ANNOTATION} is not "true": the hub's own Argo CD reconciles this Application too (against the hub); set it to "true" on pull-delivered Applications`,
    );
  }
  const previous = input.app.status?.conditions ?? [];
  const others = previous.filter((condition) => !OWN_CONDITIONS.has(condition.type));
  const own = [...messages.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([type, message]) => {
      const before = previous.find((condition) => condition.type === type);
      // Presence is the condition's status: the transition time moves only when it appears.
      return { type, message, lastTransitionTime: before?.lastTransitionTime ?? kubeTime(input.now) };
    });
  return [...others, ...own];
}

/** The status the hub app should show, built from the world every time. */
export function desiredStatus(input: StatusInput): ApplicationStatus {
  const { app, work } = input;
  const { feedback, invalid } = feedbackOf(input);
  const status: ApplicationStatus = {};
  const current = app.status ?? {};
  if (work) {
    // A multi-source spoke Application reports `revisions` (one per source) and no `revision`; both are copied
    // as the spoke has them.
    status.sync = {
      status: feedback?.syncStatus ?? UNKNOWN,
      ...(feedback?.syncRevision ? { revision: feedback.syncRevision } : {}),
      ...(feedback?.syncRevisions?.length ? { revisions: [...feedback.syncRevisions] } : {}),
    };
    status.health = { status: feedback?.healthStatus ?? UNKNOWN };
    const summary = summaryOf(input);
    if (summary?.state === 'Reported') {
      // Only a summary the agent reported replaces what the hub shows; otherwise the last one stays.
      status.resources = toArgoResources(summary.summary);
      status.summary = { images: [...summary.summary.images] };
    } else if (summary?.state === 'NotRequested') {
      // The work no longer asks for a summary (turned off, or a hub that drops the rule): nothing the hub
      // showed from one stays, rather than a list frozen at the moment it was turned off.
      status.resources = [];
      status.summary = { images: [] };
    }
    // The spoke's operation state, copied as it is: never a phase or a startedAt the spoke did not report
    // (ApplicationSet RollingSync takes a later startedAt for a sync that happened). Until the spoke reports
    // one, the last one stays.
    const operation = current.operationState?.operation ?? {};
    if (feedback?.operationStatePhase && feedback.operationStateStartedAt) {
      const syncResult = syncResultOf(feedback);
      status.operationState = {
        operation,
        phase: feedback.operationStatePhase,
        startedAt: feedback.operationStateStartedAt,
        ...(feedback.operationStateMessage ? { message: feedback.operationStateMessage } : {}),
        ...(syncResult ? { syncResult } : {}),
      };
    }
    if (feedback?.reconciledAt) status.reconciledAt = feedback.reconciledAt;
    // A sync status only once the spoke runs the spec the hub asks for now: RollingSync takes a Synced and
    // Healthy app whose spec just changed as done without syncing it. Unknown until then, so the spoke's first
    // word on the new spec (OutOfSync until it syncs) is a change the applicationset-controller requeues on.
    if (!spokeRunsCurrentSpec(app, work, feedback)) status.sync = { ...status.sync, status: UNKNOWN };
  }
  status.conditions = conditionsFor(input, feedback, invalid);
  return status;
}

/**
 * Whether the spoke Application runs the spec the hub Application asks for now: its fed-back spec hash
 * equals the hash of the payload the hub app makes. A work whose payload carries no spec hash (written
 * before pullfleet added it, or another controller's in a hand-over) cannot tell, and counts as running it,
 * as does a standing-by work (it never writes the spoke Application).
 */
export function spokeRunsCurrentSpec(
  app: Application,
  work: ManifestWork,
  feedback: ApplicationFeedback | undefined,
): boolean {
  // A standing-by work (a move between models) never writes the running spoke Application: its spec is not
  // the hub's to judge, and the spoke's own sync status stands.
  if (isStandBy(app)) return true;
  const carried = findPayload(work, app.metadata.name)?.metadata?.annotations?.[SPEC_HASH_ANNOTATION];
  if (carried === undefined) return true;
  // The payload of a taken-over app may keep the destination namespace the legacy controller filled in.
  const inherited = app.spec?.destination?.namespace
    ? undefined
    : work.metadata.annotations?.[INHERITED_DESTINATION_NAMESPACE_ANNOTATION];
  return feedback?.specHash === payloadSpecHash(buildPayloadApplication(withDestinationNamespace(app, inherited)).spec);
}

function findPayload(
  work: ManifestWork,
  name: string,
): { metadata?: { annotations?: Record<string, string> } } | undefined {
  return (
    work.spec?.workload?.manifests as
      Array<{ kind?: string; metadata?: { name?: string; annotations?: Record<string, string> } }> | undefined
  )?.find((m) => m.kind === 'Application' && m.metadata?.name === name);
}

/** What the hub shows of the spoke's `operationState.syncResult`. */
export interface SyncResultRevisions {
  /** `syncResult.revision` (required by the Application schema; empty for a multi-source app, as Argo CD leaves it). */
  revision: string;
  /** `syncResult.revisions`: a multi-source app's revision per source. */
  revisions?: string[];
}

/**
 * The part of the spoke's `operationState.syncResult` the hub shows: the revision (a multi-source app: the
 * revisions, one per source) its last sync applied, never the resources list. An Argo CD 2.x hub's RollingSync
 * (up to v2.14.2) moves an app from Pending to Progressing only when `syncResult.revisions` (else
 * `[syncResult.revision]`) equal the step's target revisions (the app's `status.sync.revisions`, else
 * `[status.sync.revision]`), and on a `Succeeded` phase it reads `syncResult` without a nil check (argo-cd
 * v2.14.0 applicationset/controllers/applicationset_controller.go:1091-1100): a Succeeded phase always carries
 * one, with an empty revision while the spoke has not reported it (no match, so no move).
 */
export function syncResultOf(feedback: ApplicationFeedback | undefined): SyncResultRevisions | undefined {
  const revisions = feedback?.operationStateSyncRevisions;
  if (revisions?.length) return { revision: feedback?.operationStateSyncRevision ?? '', revisions: [...revisions] };
  if (feedback?.operationStateSyncRevision !== undefined) return { revision: feedback.operationStateSyncRevision };
  return feedback?.operationStatePhase === 'Succeeded' ? { revision: '' } : undefined;
}

/** Equal as JSON, whatever the order of keys (the API server returns the keys of stored objects sorted). */
function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

/**
 * Desired status plus the merge patch from the current status. Only fields pullfleet owns appear in the
 * patch: `sync.status`, `sync.revision`, `sync.revisions`, `health.status`, `operationState` (operation, phase,
 * startedAt, message, `syncResult.revision` and `syncResult.revisions`), `reconciledAt` (the spoke's, as reported), `conditions`, and `resources` with `summary.images` when the spoke reported a resource summary
 * (compared by digest, so an unchanged list is never rewritten). Fields pullfleet did not compute are left as
 * they are.
 */
export function computeApplicationStatus(input: StatusInput): StatusResult {
  const desired = desiredStatus(input);
  const current = input.app.status ?? {};
  const patch: JsonObject = {};
  if (desired.sync) {
    const sync: JsonObject = {};
    if (current.sync?.status !== desired.sync.status) sync.status = desired.sync.status;
    if ((current.sync?.revision ?? undefined) !== desired.sync.revision) sync.revision = desired.sync.revision ?? null;
    const wantRevisions = desired.sync.revisions as string[] | undefined;
    if (!same(current.sync?.revisions, wantRevisions)) sync.revisions = wantRevisions ?? null;
    // The schema rejects `sync` without `sync.status`: always send it alongside a revision change.
    if (Object.keys(sync).length > 0) patch.sync = { ...sync, status: desired.sync.status };
  }
  if (desired.health && current.health?.status !== desired.health.status)
    patch.health = { status: desired.health.status ?? UNKNOWN };
  if (desired.reconciledAt !== undefined && current.reconciledAt !== desired.reconciledAt)
    patch.reconciledAt = desired.reconciledAt;
  if (desired.operationState) {
    const want = desired.operationState;
    const have = current.operationState;
    const wantResult = want.syncResult as SyncResultRevisions | undefined;
    const haveResult = have?.syncResult as { revision?: string; revisions?: unknown } | undefined;
    const changed =
      !have ||
      have.phase !== want.phase ||
      have.startedAt !== want.startedAt ||
      (have.message ?? undefined) !== want.message ||
      have.operation === undefined ||
      haveResult?.revision !== wantResult?.revision ||
      !same(haveResult?.revisions, wantResult?.revisions);
    if (changed) {
      patch.operationState = {
        operation: want.operation,
        phase: want.phase,
        startedAt: want.startedAt,
        message: want.message ?? null,
        // Only the revision(s): a resources list another writer left is removed with it.
        syncResult: wantResult
          ? {
              revision: wantResult.revision,
              // Named only for a multi-source app, or to remove the list one left: single-source patches stay as they were.
              ...(wantResult.revisions || haveResult?.revisions !== undefined
                ? { revisions: wantResult.revisions ?? null }
                : {}),
              resources: null,
            }
          : null,
      };
    }
  }
  if (Array.isArray(desired.resources)) {
    const images = (desired.summary as { images?: string[] } | undefined)?.images ?? [];
    if (resourcesDigest(desired.resources, images) !== currentResourcesDigest(current)) {
      // Lists are replaced whole by a merge patch; empty ones are removed rather than written empty.
      patch.resources = desired.resources.length > 0 ? desired.resources : null;
      patch.summary = { images: images.length > 0 ? images : null };
    }
  }
  const currentConditions = current.conditions ?? [];
  if (!same(currentConditions, desired.conditions))
    patch.conditions = (desired.conditions?.length ? desired.conditions : null) as JsonObject['conditions'];
  if (patch.conditions === null && currentConditions.length === 0) delete patch.conditions;
  const recheck = recheckAt(input, feedbackOf(input).feedback);
  return {
    desired,
    ...(Object.keys(patch).length === 0 ? {} : { patch: { status: patch } }),
    ...(recheck ? { recheckAt: recheck } : {}),
  };
}
