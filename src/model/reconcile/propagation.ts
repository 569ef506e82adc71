/**
 * What the controller must do to the ManifestWorks of one hub Application, given what it observes. Pure:
 * the controller reads its caches, calls {@link computePropagation}, and performs the returned plan.
 *
 * {@link computePropagation} runs in steps: what keeps the app from being delivered (it is gone, being
 * deleted, static, opted out, without a target, undeliverable, or another work is in the way), the
 * forwarding of its `operation` (operation-forwarding.ts), the work it wants (inherited destination
 * namespace, rollout gate), the hand-over from another controller's works (takeover.ts), and the plan.
 */
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
  type TakeoverPlan,
} from './takeover.js';
import { forwardOperation, type OperationAction } from './operation-forwarding.js';
import type { Application, JsonObject, ManifestWork } from '../core/types.js';

// The forwarding of `operation` lives in operation-forwarding.ts; its names stay importable from here.
export {
  CLOCK_SKEW_ALLOWANCE_MS,
  FORWARD_INFO_NAME,
  FORWARDED_OPERATION_ANNOTATION,
  forwardId,
  operationId,
  operationInProgress,
  operationTaken,
  parseForwardedOperation,
  workCarriesForward,
  type ForwardedOperation,
  type OperationAction,
} from './operation-forwarding.js';

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

  // The app is gone: sweep whatever the controller wrote for it.
  if (!app) return { deletes: deletable(owned) };

  const subject: Subject = {
    input,
    app,
    owned,
    hasFinalizer: app.metadata.finalizers?.includes(CLEANUP_FINALIZER) ?? false,
  };
  return deliveryEnded(subject) ?? deliveryBlocked(subject) ?? deliveryPlan(subject);
}

/** The hub Application {@link computePropagation} plans for (it exists), with what the steps share. */
interface Subject {
  readonly input: PropagationInput;
  readonly app: Application;
  /** The works the controller wrote for the app (any cluster namespace, terminating ones included). */
  readonly owned: readonly ManifestWork[];
  /** Whether the hub app carries the cleanup finalizer. */
  readonly hasFinalizer: boolean;
}

/**
 * What blocks delivery, part 1: the app is not (or no longer) one the controller delivers (being deleted,
 * static, opted out). Undefined when it is.
 */
function deliveryEnded({ input, app, owned, hasFinalizer }: Subject): PropagationPlan | undefined {
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
  return undefined;
}

/**
 * What blocks delivery, part 2: the app asks for delivery but cannot have it now (no target, undeliverable,
 * another work in the way). The plan keeps what runs and says why; undefined when delivery may go ahead.
 */
function deliveryBlocked(subject: Subject): PropagationPlan | undefined {
  const { input, app, owned, hasFinalizer } = subject;
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

  const inTheWay = workInTheWay(subject);
  return inTheWay ? { deletes: [], problem: inTheWay, ...finalizer } : undefined;
}

/** Why the work at the app's target may not be written over (another owner's, or synth's outside the waves). */
function workInTheWay({ input, app }: Subject): string | undefined {
  const { namespace, name } = input;
  const existing = input.workAtTarget;
  if (!existing) return undefined;
  const targetName = manifestWorkName(app.metadata.namespace ?? 'argocd', app.metadata.name);
  const waved = isWavedApplication(app);
  // Synth hands a static work to a waved app only through Prune=false; one without it belongs to a spoke
  // outside the waves (a move's step), and a waved hub Application still in the cache must not write over it.
  if (waved && isStaticWorkFor(existing, namespace, name) && !isPruneProtected(existing))
    return `ManifestWork ${existing.metadata.namespace}/${targetName} is rendered by synth without Argo CD's Prune=false, so it is not handed to the rollout of this waved app: the spoke is outside the app's waves (a move between delivery models); nothing is written over it. This clears once the hub applies the commit that renders this Application (static for a spoke outside the waves), or synthesize again`;
  if (!isControllerWorkFor(existing, namespace, name) && !(waved && isStaticWorkFor(existing, namespace, name)))
    return `ManifestWork ${existing.metadata.namespace}/${targetName} already exists and ${describeOwner(existing)}: refusing to take it over; delete it or rename the Application`;
  return undefined;
}

/**
 * The app is delivered: forward its operation, build the work it wants, hand over from another
 * controller's works, and plan the writes (apply, retarget deletes, refresh, adoption, finalizer).
 */
function deliveryPlan(subject: Subject): PropagationPlan {
  const { input, app, owned, hasFinalizer } = subject;
  const { namespace, name } = input;
  const existing = input.workAtTarget;
  const ownExisting = existing !== undefined && isControllerWorkFor(existing, namespace, name);
  const finalizer = hasFinalizer ? {} : { finalizer: 'add' as const };

  // `operation` stays in the payload until the spoke takes it, and is held back while the spoke runs one.
  const forwarding = forwardOperation({ app, work: existing, ownWork: ownExisting, now: input.now });
  const { desired, target, heldByRollout } = desiredWork(subject, forwarding.payloadApp, ownExisting);
  // Nothing reaches the spoke while the rollout holds the work: the operation and the refresh wait on the hub
  // app with the spec.
  const operation = heldByRollout ? undefined : forwarding.operation;
  const adopt = adoption(subject, target);

  const takeover = computeTakeover({ app, works: input.works, ...(existing ? { ownWork: existing } : {}) });
  const handover = handoverFields(takeover);
  if (!takeover.mayApply) {
    // The operation and the refresh annotation stay on the hub app: pullfleet's work forwards them once written.
    return { deletes: [], target, ...handover, ...finalizer };
  }

  const clearRefresh =
    !isStandBy(app) &&
    !heldByRollout &&
    app.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined &&
    spokeReconciledSince(app, existing);
  const deletes = [...(newTargetReady(existing, namespace, name) ? deletable(owned, target) : []), ...takeover.deletes];
  return {
    ...(!desired || (existing && workUpToDate(existing, desired)) ? {} : { apply: desired }),
    ...(adopt ? { adopt } : {}),
    ...(heldByRollout ? { heldByRollout } : {}),
    deletes,
    ...(operation ? { operation } : {}),
    ...(clearRefresh ? { clearRefresh } : {}),
    target,
    ...handover,
    ...finalizer,
  };
}

/** The work the app wants at its target, and whether its rollout holds it back (nothing written now). */
interface DesiredWork {
  /** Undefined when the rollout holds the work back. */
  readonly desired?: ManifestWork;
  readonly target: { readonly namespace: string; readonly name: string };
  readonly heldByRollout: boolean;
}

/** The work for `payloadApp` (the hub app as the payload carries its operation), gated by the app's rollout. */
function desiredWork({ input, app }: Subject, payloadApp: Application, ownExisting: boolean): DesiredWork {
  // A taken-over app whose destination namespace the legacy controller filled in keeps it (see takeover.ts).
  const inherited = inheritedDestinationNamespace(app, input.works, ownExisting ? input.workAtTarget : undefined);
  const built = buildManifestWork(withDestinationNamespace(payloadApp, inherited), input.wrapOptions);
  const desired = inherited
    ? {
        ...built,
        metadata: {
          ...built.metadata,
          annotations: {
            ...(built.metadata.annotations ?? {}),
            [INHERITED_DESTINATION_NAMESPACE_ANNOTATION]: inherited,
          },
        },
      }
    : built;
  const target = { namespace: desired.metadata.namespace!, name: desired.metadata.name };
  // A waved app's work carries what its rollout allows: nothing new until the cluster's wave comes.
  if (!isWavedApplication(app)) return { desired, target, heldByRollout: false };
  const gated = gatedWork(desired, input.workAtTarget, input.rolloutGate ?? { kind: 'hold' }, app.metadata.name);
  return gated ? { desired: gated, target, heldByRollout: false } : { target, heldByRollout: true };
}

/** A waved app taking over the work synth rendered for it before: the patch removing Argo CD's marks from it. */
function adoption({ input, app }: Subject, target: DesiredWork['target']): PropagationPlan['adopt'] {
  const existing = input.workAtTarget;
  if (!existing || !isWavedApplication(app) || !isStaticWorkFor(existing, input.namespace, input.name))
    return undefined;
  const patch = adoptionPatch(existing);
  return patch ? { namespace: target.namespace, name: target.name, patch } : undefined;
}

/**
 * Works another controller left for this app are handed over orphan-first (see takeover.ts): until each
 * is Orphan and the agent saw it, pullfleet writes nothing of its own and the legacy work keeps delivering.
 */
function handoverFields(
  takeover: TakeoverPlan,
): Pick<PropagationPlan, 'orphan' | 'statusWork' | 'legacyControllerActive' | 'takeoverWaiting'> {
  return {
    ...(takeover.orphan.length > 0 ? { orphan: takeover.orphan } : {}),
    ...(takeover.statusWork ? { statusWork: takeover.statusWork } : {}),
    ...(takeover.legacyControllerActive ? { legacyControllerActive: takeover.legacyControllerActive } : {}),
    ...(takeover.waiting ? { takeoverWaiting: takeover.waiting } : {}),
  };
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
