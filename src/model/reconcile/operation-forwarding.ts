/**
 * Forwarding a hub Application's `operation` to the spoke through its ManifestWork. Pure:
 * {@link forwardOperation} decides, from the hub app and the work's feedback, what the payload carries and
 * what the hub app records, so a restarted controller carries on where the last one stopped.
 *
 * The operation stays on the hub app, and so in the work payload, until the spoke's feedback shows it
 * started; the record ({@link ForwardedOperation}, annotation {@link FORWARDED_OPERATION_ANNOTATION}) is what
 * survives a controller restart. While the spoke runs an operation, a new one is recorded but held back.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { FORWARDED_OPERATION_ANNOTATION, PULLFLEET_PREFIX } from '../core/keys.js';
import { kubeTime } from '../core/time.js';
import type { Application, JsonObject, ManifestWork } from '../core/types.js';
import { isStandBy, spokeAppNamespace } from '../delivery/manifestwork.js';
import { readApplicationFeedback, type ApplicationFeedback } from './feedback.js';

/**
 * Annotation the controller leaves on a hub app when it forwards `operation` (or holds it back while the spoke
 * runs another one): JSON `{id, at, after}` (see
 * {@link ForwardedOperation}). The operation itself stays on the hub app, and so in the work payload, until
 * the spoke's feedback shows it started; this record is what survives a controller restart.
 */
export { FORWARDED_OPERATION_ANNOTATION };

/** The record left on a hub app when the controller forwards an `operation` (annotation {@link FORWARDED_OPERATION_ANNOTATION}). */
export interface ForwardedOperation {
  /** Identity of the forwarded operation (hash of its canonical JSON): a different operation is forwarded afresh. */
  readonly id: string;
  /** Hub time the operation was first forwarded. */
  readonly at: string;
  /** The spoke's `operationState.startedAt` seen at that moment ('' when none): a different value means the spoke started it. */
  readonly after: string;
}

/** What to do about the hub app's `operation`. */
export type OperationAction =
  /** Forwarded now for the first time: record it on the hub app (it stays in the payload until taken). */
  | { readonly kind: 'record'; readonly record: ForwardedOperation }
  /** The spoke started it (or it was withdrawn): remove `operation` and the record from the hub app. */
  | { readonly kind: 'clear' };

/** The forwarding record on a hub app, or undefined when it has none (or one that does not parse). */
export function parseForwardedOperation(app: Pick<Application, 'metadata'>): ForwardedOperation | undefined {
  const raw = app.metadata.annotations?.[FORWARDED_OPERATION_ANNOTATION];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<ForwardedOperation>;
    if (typeof parsed.at !== 'string') return undefined;
    return {
      id: typeof parsed.id === 'string' ? parsed.id : '',
      at: parsed.at,
      after: typeof parsed.after === 'string' ? parsed.after : '',
    };
  } catch {
    return undefined;
  }
}

/** Identity of an `operation` value: the same operation always gives the same id. */
export function operationId(operation: JsonObject): string {
  return createHash('sha256').update(canonicalJson(operation)).digest('hex').slice(0, 16);
}

/** How far a spoke's clock may lag the hub's before a `startedAt` counts as older than the forwarding. */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;

/**
 * Whether the spoke's reported operation shows that the forwarded one was taken: a `startedAt` other than
 * the one seen when forwarding. When nothing was seen then (no feedback yet), a `startedAt` clearly older
 * than the forwarding is an earlier operation reported late, not this one.
 */
export function operationTaken(
  record: ForwardedOperation,
  spokeStartedAt: string | undefined,
  spokeForwardId?: string,
): boolean {
  // The spoke runs (or ran) exactly this forwarding: its operation state carries the mark.
  if (spokeForwardId !== undefined && spokeForwardId === forwardId(record)) return true;
  if (spokeStartedAt === undefined || spokeStartedAt === '' || spokeStartedAt === record.after) return false;
  if (record.after === '') {
    const started = Date.parse(spokeStartedAt);
    const forwarded = Date.parse(record.at);
    if (!Number.isNaN(started) && !Number.isNaN(forwarded) && started < forwarded - CLOCK_SKEW_ALLOWANCE_MS)
      return false;
  }
  return true;
}

/**
 * Name of the `operation.info` entry the controller adds to a forwarded operation in the payload: its value
 * ({@link forwardId}) comes back through feedback (`operationForwardId`) from the spoke's
 * `operationState.operation`, so a forwarding is known taken even when the spoke starts it in the same second
 * as the one before (a `startedAt` has whole seconds only).
 */
export const FORWARD_INFO_NAME = `${PULLFLEET_PREFIX}forwarded`;

/** The mark of one forwarding: the operation, when it was forwarded and what the spoke had run before. */
export function forwardId(record: ForwardedOperation): string {
  return createHash('sha256').update(`${record.id}|${record.at}|${record.after}`).digest('hex').slice(0, 12);
}

/** The hub app with its operation marked as forwarded by `record` (the mark travels in the payload only). */
function withForwardMark(app: Application, record: ForwardedOperation): Application {
  const operation = app.operation;
  if (!operation) return app;
  const entries: unknown[] = Array.isArray(operation.info) ? operation.info : [];
  const info = entries.filter(
    (entry) => (entry as { name?: unknown } | null)?.name !== FORWARD_INFO_NAME,
  ) as JsonObject[];
  return {
    ...app,
    operation: { ...operation, info: [...info, { name: FORWARD_INFO_NAME, value: forwardId(record) }] },
  };
}

/** Argo CD's operation phases that are not over yet (`OperationPhase.Completed()` is false for them). */
const PHASES_IN_PROGRESS = new Set(['Running', 'Terminating']);

/** Whether the spoke reports an operation still in progress (Running, or Terminating after a terminate). */
export function operationInProgress(feedback: { readonly operationStatePhase?: string } | undefined): boolean {
  return feedback?.operationStatePhase !== undefined && PHASES_IN_PROGRESS.has(feedback.operationStatePhase);
}

/**
 * Whether the payload Application `namespace/name` in `work` carries the operation `record` forwarded (its mark).
 * False while the operation is recorded but held back behind one the spoke still runs.
 */
export function workCarriesForward(
  work: ManifestWork,
  namespace: string,
  name: string,
  record: ForwardedOperation,
): boolean {
  const info = operationInWork(work, namespace, name)?.info;
  const mark = forwardId(record);
  return (
    Array.isArray(info) &&
    info.some((entry) => {
      const e = entry as { name?: unknown; value?: unknown } | null;
      return e?.name === FORWARD_INFO_NAME && e.value === mark;
    })
  );
}

/** The `operation` of the payload Application `namespace/name` in a work, if it carries one. */
function operationInWork(work: ManifestWork, namespace: string, name: string): JsonObject | undefined {
  const payload = work.spec?.workload?.manifests?.find(
    (manifest) =>
      manifest.kind === 'Application' &&
      (manifest.metadata as { name?: unknown } | undefined)?.name === name &&
      ((manifest.metadata as { namespace?: unknown } | undefined)?.namespace ?? namespace) === namespace,
  ) as { operation?: unknown } | undefined;
  const operation = payload?.operation;
  return operation !== null && typeof operation === 'object' && !Array.isArray(operation)
    ? (operation as JsonObject)
    : undefined;
}

/** The hub app with `operation` (or none) as the payload's operation. */
function withPayloadOperation(app: Application, operation: JsonObject | undefined): Application {
  const { operation: _hub, ...rest } = app;
  return operation ? { ...rest, operation } : rest;
}

/** What {@link forwardOperation} decides from. */
export interface OperationForwardingInput {
  /** The hub Application being delivered. */
  readonly app: Application;
  /** The observed work at the app's target, whoever wrote it: its feedback shows what the spoke runs. */
  readonly work?: ManifestWork;
  /** Whether `work` is the controller's own work for the app (only then is a running operation held in it). @default false */
  readonly ownWork?: boolean;
  /** Current time (recorded when an operation is first forwarded). @default new Date() */
  readonly now?: Date;
}

/** What the work's payload carries of the hub app's `operation`, and what the hub app records of it. */
export interface OperationForwarding {
  /** The hub Application as the work's payload carries it (its `operation` forwarded, held back or left out). */
  readonly payloadApp: Application;
  /** Change to the hub app's forwarded `operation` bookkeeping, if any. */
  readonly operation?: OperationAction;
}

/**
 * Forward the hub app's `operation`: it stays in the payload until the spoke's feedback shows a new
 * startedAt, and after that for as long as the spoke reports the phase Running or Terminating. A
 * standing-by work (step 1 of a move between models) writes nothing to the spoke Application, so it
 * forwards neither operations nor refreshes: both stay on the hub app (for the principal, or for step 2).
 */
export function forwardOperation(input: OperationForwardingInput): OperationForwarding {
  const { app, work } = input;
  const record = parseForwardedOperation(app);
  const feedback = work ? readApplicationFeedback(work, spokeAppNamespace(app), app.metadata.name) : undefined;
  if (isStandBy(app)) {
    const { operation: _principals, ...rest } = app;
    return { payloadApp: rest };
  }
  if (work !== undefined && input.ownWork === true && operationInProgress(feedback))
    return holdBehindRunning(app, work, record, feedback, input.now);
  if (app.operation !== undefined) return forwardInPayload(app, app.operation, record, feedback, input.now);
  // Withdrawn from the hub app (or already cleared): the record has nothing left to track.
  return record ? { payloadApp: app, operation: { kind: 'clear' } } : { payloadApp: app };
}

/**
 * The spoke runs an operation: the payload keeps exactly the operation the work carries now. Dropping it
 * would make the work agent remove `.operation` from the spoke Application (it owns the field since the
 * forward), and Argo CD only goes on with an operation while `.operation` is there, so the sync would stop
 * half done, Running for ever; a new one written now would be taken for the running one and lost when that
 * ends. A new hub operation waits for the spoke's phase to end (docs/reference/upstream-contract.md).
 */
function holdBehindRunning(
  app: Application,
  work: ManifestWork,
  record: ForwardedOperation | undefined,
  feedback: ApplicationFeedback | undefined,
  now: Date | undefined,
): OperationForwarding {
  const payloadApp = withPayloadOperation(app, operationInWork(work, spokeAppNamespace(app), app.metadata.name));
  if (app.operation === undefined) return record ? { payloadApp, operation: { kind: 'clear' } } : { payloadApp };
  if (!record || record.id !== operationId(app.operation)) {
    // Recorded now, forwarded once the phase ends: the record survives a restart, and the operation timeout
    // (OperationPendingWarning) counts from here, so one held for ever behind a stuck spoke is said.
    const held = {
      id: operationId(app.operation),
      at: kubeTime(now ?? new Date()),
      after: feedback?.operationStateStartedAt ?? '',
    };
    return { payloadApp, operation: { kind: 'record', record: held } };
  }
  if (operationTaken(record, feedback?.operationStateStartedAt, feedback?.operationForwardId))
    return { payloadApp, operation: { kind: 'clear' } };
  return { payloadApp };
}

/**
 * No operation runs on the spoke: the hub app's operation goes into the payload with the mark of its
 * forwarding, recorded the first time, and leaves the payload (and the hub app) once the spoke took it.
 */
function forwardInPayload(
  app: Application,
  operation: JsonObject,
  record: ForwardedOperation | undefined,
  feedback: ApplicationFeedback | undefined,
  now: Date | undefined,
): OperationForwarding {
  const id = operationId(operation);
  if (!record || record.id !== id) {
    const fresh = { id, at: kubeTime(now ?? new Date()), after: feedback?.operationStateStartedAt ?? '' };
    return { payloadApp: withForwardMark(app, fresh), operation: { kind: 'record', record: fresh } };
  }
  if (operationTaken(record, feedback?.operationStateStartedAt, feedback?.operationForwardId)) {
    const { operation: _taken, ...rest } = app;
    return { payloadApp: rest, operation: { kind: 'clear' } };
  }
  return { payloadApp: withForwardMark(app, record) };
}
