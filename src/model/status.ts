/**
 * Hub Application status from ManifestWork feedback (DESIGN §2). Pure: given the hub app, the observed
 * work and the delivery problem (if any), compute the status the hub app should show and the merge patch
 * that gets it there (undefined when nothing changed, so no-op writes are skipped).
 */
import { readApplicationFeedback, workCondition, type ApplicationFeedback } from './feedback.js';
import { spokeAppNamespace } from './manifestwork.js';
import { FORWARDED_OPERATION_ANNOTATION } from './propagation.js';
import type { Application, ApplicationCondition, ApplicationStatus, JsonObject, ManifestWork } from './types.js';

/** Condition type for anything that stops delivery (cluster missing, namespace not allowed, work not applied). */
export const DELIVERY_ERROR_CONDITION = 'DeliveryError';
/** Condition type for spoke feedback older than the staleness threshold. */
export const FEEDBACK_STALE_CONDITION = 'FeedbackStaleWarning';
const OWN_CONDITIONS = new Set([DELIVERY_ERROR_CONDITION, FEEDBACK_STALE_CONDITION]);

/** The sync / health value written while the spoke has not reported one. */
export const UNKNOWN = 'Unknown';

/** The record left on a hub app when the controller forwards an `operation` (annotation {@link FORWARDED_OPERATION_ANNOTATION}). */
export interface ForwardedOperation {
  /** Hub time the operation was forwarded. */
  readonly at: string;
  /** The spoke's `operationState.startedAt` seen at that moment ('' when none): a different value means the spoke started it. */
  readonly after: string;
}

export function parseForwardedOperation(app: Pick<Application, 'metadata'>): ForwardedOperation | undefined {
  const raw = app.metadata.annotations?.[FORWARDED_OPERATION_ANNOTATION];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<ForwardedOperation>;
    if (typeof parsed.at !== 'string') return undefined;
    return { at: parsed.at, after: typeof parsed.after === 'string' ? parsed.after : '' };
  } catch {
    return undefined;
  }
}

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
}

export interface StatusResult {
  /** The status fields pullfleet owns, as they should be. */
  readonly desired: ApplicationStatus;
  /** Merge patch for the hub Application (`{status: …}`), or undefined when nothing changed. */
  readonly patch?: { status: JsonObject };
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function conditionsFor(input: StatusInput, feedback: ApplicationFeedback | undefined): ApplicationCondition[] {
  const messages = new Map<string, string>();
  const work = input.work;
  if (input.problem) messages.set(DELIVERY_ERROR_CONDITION, input.problem);
  else if (work) {
    const applied = workCondition(work, 'Applied');
    if (applied?.status === 'False') {
      messages.set(DELIVERY_ERROR_CONDITION, `ManifestWork ${work.metadata.namespace}/${work.metadata.name} is not applied on the spoke: ${applied.message ?? applied.reason ?? 'no reason given'}`);
    }
  }
  if (work && feedback?.reconciledAt && input.staleAfterMs > 0) {
    const reconciled = Date.parse(feedback.reconciledAt);
    if (!Number.isNaN(reconciled) && input.now.getTime() - reconciled > input.staleAfterMs) {
      const minutes = Math.round((input.now.getTime() - reconciled) / 60000);
      messages.set(
        FEEDBACK_STALE_CONDITION,
        `spoke feedback is stale: the spoke Application last reconciled at ${feedback.reconciledAt} (${minutes} min ago); check the work agent and Argo CD on cluster ${work.metadata.namespace}`,
      );
    }
  }
  const previous = input.app.status?.conditions ?? [];
  const others = previous.filter((condition) => !OWN_CONDITIONS.has(condition.type));
  const own = [...messages.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([type, message]) => {
      const before = previous.find((condition) => condition.type === type);
      // Presence is the condition's status: the transition time moves only when it appears.
      return { type, message, lastTransitionTime: before?.lastTransitionTime ?? iso(input.now) };
    });
  return [...others, ...own];
}

/** The status the hub app should show, built from the world every time. */
export function desiredStatus(input: StatusInput): ApplicationStatus {
  const { app, work } = input;
  const feedback = work ? readApplicationFeedback(work, spokeAppNamespace(app), app.metadata.name) : undefined;
  const status: ApplicationStatus = {};
  const current = app.status ?? {};
  if (work) {
    status.sync = { status: feedback?.syncStatus ?? UNKNOWN, ...(feedback?.syncRevision ? { revision: feedback.syncRevision } : {}) };
    status.health = { status: feedback?.healthStatus ?? UNKNOWN };
    const forwarded = parseForwardedOperation(app);
    const spokeStarted = feedback?.operationStateStartedAt ?? '';
    const operation = (current.operationState?.operation as JsonObject | undefined) ?? {};
    if (forwarded && spokeStarted === forwarded.after) {
      // Forwarded but not started on the spoke yet: show the sync as running so RollingSync sees Progressing.
      status.health = { status: 'Progressing' };
      status.operationState = { operation, phase: 'Running', startedAt: forwarded.at };
    } else if (feedback?.operationStatePhase) {
      status.operationState = {
        operation,
        phase: feedback.operationStatePhase,
        startedAt: feedback.operationStateStartedAt ?? current.operationState?.startedAt ?? iso(input.now),
        ...(feedback.operationStateMessage ? { message: feedback.operationStateMessage } : {}),
      };
    }
  }
  status.conditions = conditionsFor(input, feedback);
  return status;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Desired status plus the merge patch from the current status. Only fields pullfleet owns appear in the
 * patch: `sync.status`, `sync.revision`, `health.status`, `operationState` (operation, phase, startedAt,
 * message) and `conditions`. Fields pullfleet did not compute are left as they are.
 */
export function computeApplicationStatus(input: StatusInput): StatusResult {
  const desired = desiredStatus(input);
  const current = input.app.status ?? {};
  const patch: JsonObject = {};
  if (desired.sync) {
    const sync: JsonObject = {};
    if (current.sync?.status !== desired.sync.status) sync.status = desired.sync.status;
    if ((current.sync?.revision ?? undefined) !== desired.sync.revision) sync.revision = desired.sync.revision ?? null;
    // The schema rejects `sync` without `sync.status`: always send it alongside a revision change.
    if (Object.keys(sync).length > 0) patch.sync = { ...sync, status: desired.sync.status };
  }
  if (desired.health && current.health?.status !== desired.health.status) patch.health = { status: desired.health.status ?? UNKNOWN };
  if (desired.operationState) {
    const want = desired.operationState;
    const have = current.operationState;
    const changed =
      !have || have.phase !== want.phase || have.startedAt !== want.startedAt || (have.message ?? undefined) !== want.message || have.operation === undefined;
    if (changed) {
      patch.operationState = {
        operation: want.operation,
        phase: want.phase,
        startedAt: want.startedAt,
        message: want.message ?? null,
      } as JsonObject;
    }
  }
  const currentConditions = current.conditions ?? [];
  if (!same(currentConditions, desired.conditions)) patch.conditions = (desired.conditions?.length ? desired.conditions : null) as JsonObject['conditions'];
  if (patch.conditions === null && currentConditions.length === 0) delete patch.conditions;
  return Object.keys(patch).length === 0 ? { desired } : { desired, patch: { status: patch } };
}
