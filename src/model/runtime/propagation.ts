/**
 * What the controller must do to the ManifestWorks of one hub Application, given what it observes. Pure:
 * the controller reads its caches, calls {@link computePropagation}, and performs the returned plan.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { readApplicationFeedback, workCondition } from './feedback.js';
import {
  APPLICATION_SET_LABEL,
  ARGOCD_RESOURCES_FINALIZERS,
  CLEANUP_FINALIZER,
  CONSTRUCT_PATH_ANNOTATION,
  DELIVERY_ANNOTATION,
  DELIVERY_LABEL,
  DELIVERY_STATIC,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
  HUB_APP_UID_ANNOTATION,
  HOSTING_APPSET_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MANAGED_CLUSTER_ANNOTATION,
  PULLFLEET_PREFIX,
  PULL_LABEL,
  REFRESH_ANNOTATION,
  SKIP_RECONCILE_ANNOTATION,
  FORWARDED_OPERATION_ANNOTATION,
  ARGOCD_TRACKING_ANNOTATION,
  LAST_APPLIED_ANNOTATION,
  LOCAL_CLUSTER,
} from '../core/keys.js';
import { gatedWork, type RolloutGate } from '../rollout/gate.js';
import { isPruneProtected, isWavedApplication } from '../rollout/static.js';

/** The label Argo CD's label-based resource tracking sets on what it applies. */
const ARGOCD_INSTANCE_LABEL = 'app.kubernetes.io/instance';
import {
  buildManifestWork,
  isStandBy,
  isPullApplication,
  spokeAppNamespace,
  targetCluster,
  wrapProblem,
  type WrapOptions,
} from '../delivery/manifestwork.js';
import { manifestWorkName, parseBool } from '../core/names.js';
import { isAgentModel } from '../delivery/classification.js';
import {
  computeTakeover,
  INHERITED_DESTINATION_NAMESPACE_ANNOTATION,
  inheritedDestinationNamespace,
  isLegacyWorkFor,
  legacyKeptProblem,
  withDestinationNamespace,
  type LegacyWorkRef,
} from './takeover.js';
import { kubeTime } from '../core/time.js';
import type { Application, JsonObject, ManifestWork } from '../core/types.js';

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

export interface WorkRef {
  readonly namespace: string;
  readonly name: string;
  /** UID precondition for the delete, so a re-created object of the same name is never removed by mistake. */
  readonly uid?: string;
  /** resourceVersion precondition (legacy works in a hand-over): the delete is refused if the work changed since it was judged safe. */
  readonly resourceVersion?: string;
}

export interface PropagationInput {
  /** Identity of the hub Application being reconciled. */
  readonly namespace: string;
  readonly name: string;
  /** The hub Application, or undefined when it no longer exists. */
  readonly app?: Application;
  /** Every observed work whose hub annotations point at this Application (any cluster namespace). */
  readonly works: readonly ManifestWork[];
  /** The observed work at the name and namespace the desired work would take, whoever owns it. */
  readonly workAtTarget?: ManifestWork;
  /** Why delivery to the target cluster is not allowed right now (tenancy, cluster missing), if so. */
  readonly deliveryProblem?: string;
  /** The target ManagedCluster is the hub itself (named or labelled `local-cluster`). @default false */
  readonly targetIsHub?: boolean;
  readonly wrapOptions?: WrapOptions;
  /** Current time (recorded when an operation is first forwarded). @default new Date() */
  readonly now?: Date;
  /**
   * A waved static app: which payload its work may carry now, from the app's rollout state (hold when
   * there is none yet).
   * @default hold
   */
  readonly rolloutGate?: RolloutGate;
}

/** What to do about the hub app's `operation`. */
export type OperationAction =
  /** Forwarded now for the first time: record it on the hub app (it stays in the payload until taken). */
  | { readonly kind: 'record'; readonly record: ForwardedOperation }
  /** The spoke started it (or it was withdrawn): remove `operation` and the record from the hub app. */
  | { readonly kind: 'clear' };

export interface PropagationPlan {
  /** The work to server-side apply; undefined when nothing needs writing. */
  readonly apply?: ManifestWork;
  /** Controller-owned works to delete (already terminating works are left out). */
  readonly deletes: readonly WorkRef[];
  /** Finalizer change on the hub Application. */
  readonly finalizer?: 'add' | 'remove';
  /**
   * Argo CD resources finalizers to remove from the hub Application: it is being deleted, it is pull-delivered
   * with `skip-reconcile` (so the hub Argo CD never processes it and would never remove them), and no work
   * for it is left.
   */
  readonly releaseArgoFinalizers?: readonly string[];
  /** Change to the hub app's forwarded `operation` bookkeeping, if any. */
  readonly operation?: OperationAction;
  /** After the apply, remove the refresh annotation from the hub app (it has been forwarded). */
  readonly clearRefresh?: boolean;
  /** Why the app is not delivered (becomes a condition on the hub app); undefined when all is well. */
  readonly problem?: string;
  /** Where the app's work lives (or should live) when the app is delivered; status is read from it. */
  readonly target?: { readonly namespace: string; readonly name: string };
  /** Legacy works (another controller's) to patch to deleteOption Orphan before pullfleet delivers the app itself. */
  readonly orphan?: readonly LegacyWorkRef[];
  /** During a hand-over, until the agent has reported on pullfleet's own work: the legacy work status is read from. */
  readonly statusWork?: { readonly namespace: string; readonly name: string };
  /** The old controller is seen fighting the hand-over (becomes a warning condition on the hub app). */
  readonly legacyControllerActive?: string;
  /** What a hand-over from another controller's work waits for (for logs). */
  readonly takeoverWaiting?: string;
  /**
   * A waved app takes over the work synth rendered for it before (left in place by Argo CD's Prune=false):
   * a merge patch removing Argo CD's tracking marks from it, so the hub's Argo CD forgets it.
   */
  readonly adopt?: { readonly namespace: string; readonly name: string; readonly patch: JsonObject };
  /** A waved app whose work waits for its wave (nothing is written for it now). */
  readonly heldByRollout?: boolean;
}

/** Whether a hub Application's work is rendered by synth (the controller never writes such works). */
export function isStaticApplication(app: Pick<Application, 'metadata'>): boolean {
  return app.metadata.annotations?.[DELIVERY_ANNOTATION] === DELIVERY_STATIC;
}

/** Whether a work was written by the controller (pullfleet-managed, not static) for the app `namespace/name`. */
export function isControllerWorkFor(work: ManifestWork, namespace: string, name: string): boolean {
  const labels = work.metadata.labels ?? {};
  const annotations = work.metadata.annotations ?? {};
  return (
    labels[MANAGED_BY_LABEL] === MANAGED_BY_VALUE &&
    labels[DELIVERY_LABEL] !== DELIVERY_STATIC &&
    annotations[HUB_APP_NAMESPACE_ANNOTATION] === namespace &&
    annotations[HUB_APP_NAME_ANNOTATION] === name
  );
}

/** The hub Application `namespace/name` a work points back at, if it carries the hub annotations. */
export function workOwnerKey(work: Pick<ManifestWork, 'metadata'>): string | undefined {
  const namespace = work.metadata.annotations?.[HUB_APP_NAMESPACE_ANNOTATION];
  const name = work.metadata.annotations?.[HUB_APP_NAME_ANNOTATION];
  return namespace && name ? `${namespace}/${name}` : undefined;
}

/**
 * Whether every field of `desired` is present with the same value in `observed` (objects compared key by
 * key, arrays element by element with equal length). Fields only the server added are ignored.
 */
export function containsFields(observed: unknown, desired: unknown): boolean {
  if (desired === null || typeof desired !== 'object') return observed === desired;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(observed) &&
      observed.length === desired.length &&
      desired.every((item, i) => containsFields(observed[i], item))
    );
  }
  if (observed === null || typeof observed !== 'object' || Array.isArray(observed)) return false;
  const record = observed as Record<string, unknown>;
  return Object.entries(desired as Record<string, unknown>).every(
    ([key, value]) => value === undefined || containsFields(record[key], value),
  );
}

/** Work label keys pullfleet writes (besides anything under `pullfleet.io/`). */
const OWNED_WORK_LABELS = new Set([PULL_LABEL, MANAGED_BY_LABEL, APPLICATION_SET_LABEL, DELIVERY_LABEL]);
/** Work annotation keys pullfleet writes (besides anything under `pullfleet.io/`). */
const OWNED_WORK_ANNOTATIONS = new Set([
  HUB_APP_NAMESPACE_ANNOTATION,
  HUB_APP_NAME_ANNOTATION,
  HOSTING_APPSET_ANNOTATION,
  HUB_APP_UID_ANNOTATION,
  CONSTRUCT_PATH_ANNOTATION,
]);

/** The entries of `record` under keys pullfleet owns, in canonical form. */
function ownedEntries(record: Record<string, string> | undefined, owned: ReadonlySet<string>): string {
  const kept = Object.entries(record ?? {}).filter(([key]) => owned.has(key) || key.startsWith(PULLFLEET_PREFIX));
  return canonicalJson(Object.fromEntries(kept));
}

/**
 * A ManifestWork spec with the defaults the API server fills in (from the ManifestWork CRD) made explicit,
 * so a work the server defaulted compares equal to the one pullfleet asked for, and a field pullfleet
 * stopped asking for (Watch → Poll) shows as a difference.
 */
function ownedSpec(spec: ManifestWork['spec'] | undefined): unknown {
  const manifestConfigs = (spec?.manifestConfigs ?? []).map((config) => {
    const strategy = config.updateStrategy as Record<string, unknown> | undefined;
    const ssa = strategy?.serverSideApply as Record<string, unknown> | undefined;
    const ignoreFields = (ssa?.ignoreFields as Array<Record<string, unknown>> | undefined)?.map((field) => ({
      ...field,
      condition: field.condition ?? 'OnSpokePresent',
    }));
    return {
      ...config,
      feedbackScrapeType: config.feedbackScrapeType ?? 'Poll',
      updateStrategy: {
        ...(strategy ?? {}),
        type: strategy?.type ?? 'Update',
        ...(ssa
          ? {
              serverSideApply: {
                ...ssa,
                fieldManager: ssa.fieldManager ?? 'work-agent',
                ...(ignoreFields ? { ignoreFields } : {}),
              },
            }
          : {}),
      },
    };
  });
  const deleteOption = spec?.deleteOption as Record<string, unknown> | undefined;
  return {
    manifests: spec?.workload?.manifests ?? [],
    manifestConfigs,
    deleteOption: { ...(deleteOption ?? {}), propagationPolicy: deleteOption?.propagationPolicy ?? 'Foreground' },
  };
}

/**
 * Whether the observed work is exactly what pullfleet wants, on everything pullfleet owns: labels and
 * annotations under its keys (a key that should be gone must be gone), the payload manifests, the
 * manifestConfigs and the delete option. Fields of other writers (other label keys, status, server
 * defaults) are ignored.
 */
export function workUpToDate(observed: ManifestWork, desired: ManifestWork): boolean {
  return (
    ownedEntries(observed.metadata.labels, OWNED_WORK_LABELS) ===
      ownedEntries(desired.metadata.labels, OWNED_WORK_LABELS) &&
    ownedEntries(observed.metadata.annotations, OWNED_WORK_ANNOTATIONS) ===
      ownedEntries(desired.metadata.annotations, OWNED_WORK_ANNOTATIONS) &&
    canonicalJson(ownedSpec(observed.spec)) === canonicalJson(ownedSpec(desired.spec))
  );
}

function deletable(works: readonly ManifestWork[], keep?: { namespace: string; name: string }): WorkRef[] {
  return works
    .filter((work) => !work.metadata.deletionTimestamp)
    .filter((work) => !keep || work.metadata.namespace !== keep.namespace || work.metadata.name !== keep.name)
    .map((work) => ({
      namespace: work.metadata.namespace!,
      name: work.metadata.name,
      ...(work.metadata.uid ? { uid: work.metadata.uid } : {}),
    }))
    .sort((a, b) => (a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1));
}

/**
 * THE retarget rule: works at an old target are deleted only once the work at the new target exists (seen
 * in the cache, so the write landed), belongs to this app, is not being deleted and has not been refused
 * by the spoke (Applied=False). Until then both stay: a spoke briefly runs the app twice rather than a
 * failed write (foreign work in the way, 403/422, tenancy, size) leaving it delivered nowhere.
 */
export function newTargetReady(workAtTarget: ManifestWork | undefined, namespace: string, name: string): boolean {
  if (!workAtTarget || workAtTarget.metadata.deletionTimestamp) return false;
  if (!isControllerWorkFor(workAtTarget, namespace, name)) return false;
  return workCondition(workAtTarget, 'Applied')?.status !== 'False';
}

function describeOwner(work: ManifestWork): string {
  if (work.metadata.labels?.[DELIVERY_LABEL] === DELIVERY_STATIC) return 'it is delivered statically by synth';
  const owner = workOwnerKey(work);
  if (work.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) return 'it is not managed by pullfleet';
  return owner ? `it belongs to Application ${owner}` : 'it names no hub Application';
}

/**
 * The Argo CD resources finalizers a hub Application being deleted should lose now. Argo CD's application
 * controller is the only one that removes them, and it skips an Application annotated `skip-reconcile`
 * (on a pull hub it may not even run), so without this such an app stays Terminating forever. Released
 * only for an app pullfleet pull-delivers (pull label, not agent-model, `skip-reconcile` true), and only
 * once no work points at it any more (pullfleet's, synth's or another controller's): by then the spoke
 * Application, with the same finalizer, has pruned the workload where it ran.
 */
function argoFinalizersToRelease(app: Application, works: readonly ManifestWork[]): string[] {
  if (!isPullApplication(app) || isAgentModel(app) || !parseBool(app.metadata.annotations?.[SKIP_RECONCILE_ANNOTATION]))
    return [];
  if (works.length > 0) return [];
  return (app.metadata.finalizers ?? []).filter((finalizer) => ARGOCD_RESOURCES_FINALIZERS.includes(finalizer));
}

/**
 * The plan for one hub Application: create/update its work, delete works it no longer wants (retarget
 * once the new work exists, opt-out, deletion, app gone), manage the cleanup finalizer, and forward
 * `operation` until the spoke takes it.
 */
export function computePropagation(input: PropagationInput): PropagationPlan {
  const { app, namespace, name } = input;
  const owned = input.works.filter((work) => isControllerWorkFor(work, namespace, name));
  const hasFinalizer = app?.metadata.finalizers?.includes(CLEANUP_FINALIZER) ?? false;

  // The app is gone: sweep whatever the controller wrote for it.
  if (!app) return { deletes: deletable(owned) };

  // Being deleted: delete the works first, release the finalizers once none remain.
  if (app.metadata.deletionTimestamp) {
    const release = argoFinalizersToRelease(app, input.works);
    return {
      deletes: deletable(owned),
      ...(hasFinalizer && owned.length === 0 ? { finalizer: 'remove' as const } : {}),
      ...(release.length > 0 ? { releaseArgoFinalizers: release } : {}),
    };
  }

  // Synth renders this app's work: never write or delete it, only report status.
  if (isStaticApplication(app)) {
    const cluster = targetCluster(app);
    const target = cluster
      ? { namespace: cluster, name: manifestWorkName(app.metadata.namespace ?? 'argocd', app.metadata.name) }
      : undefined;
    return { deletes: [], ...(hasFinalizer ? { finalizer: 'remove' as const } : {}), ...(target ? { target } : {}) };
  }

  // Opted out (label removed or false): the user asked for the delivery to end.
  if (!isPullApplication(app)) {
    return { deletes: deletable(owned), ...(hasFinalizer ? { finalizer: 'remove' as const } : {}) };
  }

  // Opted in but no target: most likely a broken template or a typo, never a request to delete. Say so, keep what runs.
  if (!targetCluster(app)) {
    const value = app.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION];
    return {
      deletes: [],
      problem: `the Application has the pull label but annotation ${MANAGED_CLUSTER_ANNOTATION} is ${value === undefined ? 'missing' : 'empty'}: set it to the target ManagedCluster name, or remove the pull label to stop delivery`,
      ...(!hasFinalizer && owned.length > 0 ? { finalizer: 'add' as const } : {}),
    };
  }

  const finalizer = hasFinalizer ? {} : { finalizer: 'add' as const };
  const problem = wrapProblem(app) ?? input.deliveryProblem;
  // Nothing new is delivered, and nothing already delivered is taken away, while the app is undeliverable; a
  // work another controller left for it stays as it is (ACM 2.17 delivers to the hub itself, pullfleet never).
  if (problem) {
    const legacy = input.works.filter((work) => !work.metadata.deletionTimestamp && isLegacyWorkFor(work, app));
    const shown =
      legacy.length > 0
        ? legacyKeptProblem(problem, legacy, input.targetIsHub === true || targetCluster(app) === LOCAL_CLUSTER)
        : problem;
    return { deletes: [], problem: shown, ...finalizer };
  }

  const existing = input.workAtTarget;
  const targetName = manifestWorkName(app.metadata.namespace ?? 'argocd', app.metadata.name);
  const waved = isWavedApplication(app);
  // Synth hands a static work to a waved app only through Prune=false; one without it belongs to a spoke
  // outside the waves (a move's step), and a waved hub Application still in the cache must not write over it.
  if (waved && existing && isStaticWorkFor(existing, namespace, name) && !isPruneProtected(existing))
    return {
      deletes: [],
      problem: `ManifestWork ${existing.metadata.namespace}/${targetName} is rendered by synth without Argo CD's Prune=false, so it is not handed to the rollout of this waved app: the spoke is outside the app's waves (a move between delivery models); nothing is written over it. This clears once the hub applies the commit that renders this Application (static for a spoke outside the waves), or synthesize again`,
      ...finalizer,
    };
  const adopt = waved && existing && isStaticWorkFor(existing, namespace, name) ? adoptionPatch(existing) : undefined;
  if (
    existing &&
    !isControllerWorkFor(existing, namespace, name) &&
    !(waved && isStaticWorkFor(existing, namespace, name))
  ) {
    return {
      deletes: [],
      problem: `ManifestWork ${existing.metadata.namespace}/${targetName} already exists and ${describeOwner(existing)}: refusing to take it over; delete it or rename the Application`,
      ...finalizer,
    };
  }

  // `operation` stays in the payload until the spoke's feedback shows a new startedAt, and after that for as
  // long as the spoke reports the phase Running or Terminating (see spokeBusy below). A standing-by work
  // (step 1 of a move between models) writes nothing to the spoke Application, so it forwards neither
  // operations nor refreshes: both stay on the hub app (for the principal, or for step 2).
  const standBy = isStandBy(app);
  let operation: OperationAction | undefined;
  let payloadApp = app;
  const record = parseForwardedOperation(app);
  const spokeFeedback = existing
    ? readApplicationFeedback(existing, spokeAppNamespace(app), app.metadata.name)
    : undefined;
  const spokeStartedAt = spokeFeedback?.operationStateStartedAt;
  const spokeBusy =
    existing !== undefined && isControllerWorkFor(existing, namespace, name) && operationInProgress(spokeFeedback);
  if (standBy) {
    const { operation: _principals, ...rest } = app;
    payloadApp = rest;
  } else if (spokeBusy) {
    // The spoke runs an operation: the payload keeps exactly the operation the work carries now. Dropping it
    // would make the work agent remove `.operation` from the spoke Application (it owns the field since the
    // forward), and Argo CD only goes on with an operation while `.operation` is there, so the sync would stop
    // half done, Running for ever; a new one written now would be taken for the running one and lost when that
    // ends. A new hub operation waits for the spoke's phase to end (docs/reference/upstream-contract.md).
    payloadApp = withPayloadOperation(app, operationInWork(existing, spokeAppNamespace(app), app.metadata.name));
    if (app.operation === undefined) {
      if (record) operation = { kind: 'clear' };
    } else if (!record || record.id !== operationId(app.operation)) {
      // Recorded now, forwarded once the phase ends: the record survives a restart, and the operation timeout
      // (OperationPendingWarning) counts from here, so one held for ever behind a stuck spoke is said.
      operation = {
        kind: 'record',
        record: { id: operationId(app.operation), at: kubeTime(input.now ?? new Date()), after: spokeStartedAt ?? '' },
      };
    } else if (operationTaken(record, spokeStartedAt, spokeFeedback?.operationForwardId)) operation = { kind: 'clear' };
  } else if (app.operation !== undefined) {
    const id = operationId(app.operation);
    if (!record || record.id !== id) {
      const fresh = { id, at: kubeTime(input.now ?? new Date()), after: spokeStartedAt ?? '' };
      operation = { kind: 'record', record: fresh };
      payloadApp = withForwardMark(app, fresh);
    } else if (operationTaken(record, spokeStartedAt, spokeFeedback?.operationForwardId)) {
      operation = { kind: 'clear' };
      const { operation: _taken, ...rest } = app;
      payloadApp = rest;
    } else payloadApp = withForwardMark(app, record);
  } else if (record) {
    // Withdrawn from the hub app (or already cleared): the record has nothing left to track.
    operation = { kind: 'clear' };
  }

  // A taken-over app whose destination namespace the legacy controller filled in keeps it (see takeover.ts).
  const inherited = inheritedDestinationNamespace(
    app,
    input.works,
    existing && isControllerWorkFor(existing, namespace, name) ? existing : undefined,
  );
  let desired: ManifestWork | undefined = buildManifestWork(
    withDestinationNamespace(payloadApp, inherited),
    input.wrapOptions,
  );
  if (inherited)
    desired = {
      ...desired,
      metadata: {
        ...desired.metadata,
        annotations: {
          ...(desired.metadata.annotations ?? {}),
          [INHERITED_DESTINATION_NAMESPACE_ANNOTATION]: inherited,
        },
      },
    };
  const target = { namespace: desired.metadata.namespace!, name: desired.metadata.name };
  // A waved app's work carries what its rollout allows: nothing new until the cluster's wave comes.
  let heldByRollout = false;
  if (waved) {
    desired = gatedWork(desired, existing, input.rolloutGate ?? { kind: 'hold' }, app.metadata.name);
    if (!desired) {
      heldByRollout = true;
      // Nothing reaches the spoke now: the operation and the refresh wait on the hub app with the spec.
      operation = undefined;
    }
  }
  const adoption = adopt ? { adopt: { namespace: target.namespace, name: target.name, patch: adopt } } : {};

  // Works another controller left for this app are handed over orphan-first (see takeover.ts): until each
  // is Orphan and the agent saw it, pullfleet writes nothing of its own and the legacy work keeps delivering.
  const takeover = computeTakeover({ app, works: input.works, ...(existing ? { ownWork: existing } : {}) });
  const handover = {
    ...(takeover.orphan.length > 0 ? { orphan: takeover.orphan } : {}),
    ...(takeover.statusWork ? { statusWork: takeover.statusWork } : {}),
    ...(takeover.legacyControllerActive ? { legacyControllerActive: takeover.legacyControllerActive } : {}),
    ...(takeover.waiting ? { takeoverWaiting: takeover.waiting } : {}),
  };
  if (!takeover.mayApply) {
    // The operation and the refresh annotation stay on the hub app: pullfleet's work forwards them once written.
    return { deletes: [], target, ...handover, ...finalizer };
  }

  const clearRefresh =
    !standBy &&
    !heldByRollout &&
    app.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined &&
    spokeReconciledSince(app, existing);
  const deletes = [...(newTargetReady(existing, namespace, name) ? deletable(owned, target) : []), ...takeover.deletes];
  return {
    ...(!desired || (existing && workUpToDate(existing, desired)) ? {} : { apply: desired }),
    ...adoption,
    ...(heldByRollout ? { heldByRollout } : {}),
    deletes,
    ...(operation ? { operation } : {}),
    ...(clearRefresh ? { clearRefresh } : {}),
    target,
    ...handover,
    ...finalizer,
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

/** Whether a work is the one synth rendered for the app `namespace/name` (static delivery). */
function isStaticWorkFor(work: ManifestWork, namespace: string, name: string): boolean {
  const annotations = work.metadata.annotations ?? {};
  return (
    work.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE &&
    work.metadata.labels?.[DELIVERY_LABEL] === DELIVERY_STATIC &&
    annotations[HUB_APP_NAMESPACE_ANNOTATION] === namespace &&
    annotations[HUB_APP_NAME_ANNOTATION] === name
  );
}

/** Argo CD's tracking marks on a work synth rendered, removed when a waved app takes it over (undefined: none). */
function adoptionPatch(work: ManifestWork): JsonObject | undefined {
  const annotations: JsonObject = {};
  const labels: JsonObject = {};
  for (const key of [ARGOCD_TRACKING_ANNOTATION, LAST_APPLIED_ANNOTATION])
    if (work.metadata.annotations?.[key] !== undefined) annotations[key] = null;
  if (work.metadata.labels?.[ARGOCD_INSTANCE_LABEL] !== undefined) labels[ARGOCD_INSTANCE_LABEL] = null;
  if (Object.keys(annotations).length === 0 && Object.keys(labels).length === 0) return undefined;
  return {
    metadata: {
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(Object.keys(labels).length ? { labels } : {}),
    },
  };
}

/**
 * Whether a forwarded refresh may leave the hub app: once the spoke reports a `reconciledAt` other than the
 * one the hub app shows (the spoke reconciled since: compared for a change, not an order, so a spoke clock
 * behind the hub's does not hold it), or at once when either is unknown: the refresh has then done what it
 * was put there for on the spoke. (Removing it is also an annotation change the applicationset-controller
 * requeues on; no released Argo CD up to 3.5.1 waits for a refresh, so nothing relies on that.) A reconcile
 * in the same second as the last one is caught by the spoke's next periodic one.
 */
function spokeReconciledSince(app: Application, work: ManifestWork | undefined): boolean {
  const reported = work
    ? readApplicationFeedback(work, spokeAppNamespace(app), app.metadata.name)?.reconciledAt
    : undefined;
  const shown = app.status?.reconciledAt;
  if (!reported || !shown) return true;
  return reported !== shown;
}
