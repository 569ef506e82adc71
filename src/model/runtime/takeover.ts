/**
 * Taking over the ManifestWorks that argocd-pull-integration (basic mode) or ACM's propagation controller
 * left on a hub, without the spoke Application ever being deleted. Pure: {@link computeTakeover} derives
 * every step from the objects it is given, so a restarted controller carries on where the last one stopped.
 *
 * The hand-over orphans first:
 * 1. every legacy work of the app is patched to `deleteOption: Orphan` (whole work, so ACM's Namespace and
 *    AppProject are orphaned too) and labelled {@link TAKEOVER_LABEL};
 * 2. once the work agent has observed that change (its Applied condition carries the new generation),
 *    pullfleet writes its own work, delivering the same spoke Application;
 * 3. once pullfleet's work is Applied at its current generation, the legacy works are deleted, each
 *    guarded by its uid and resourceVersion, so a work rewritten in between (Foreground again) is never
 *    deleted: the next reconcile orphans it afresh.
 */
import { workCondition } from './feedback.js';
import {
  ARGOCD_GROUP,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  PULLFLEET_PREFIX,
  LEGACY_CONTROLLER_SEEN_ANNOTATION,
} from '../core/keys.js';
import { spokeAppNamespace, targetCluster } from '../delivery/manifestwork.js';
import { kubeTime } from '../core/time.js';
import type { Application, ManifestWork } from '../core/types.js';

/** Label pullfleet puts on a legacy work it has orphaned for a hand-over (value {@link TAKEOVER_ORPHANED}). */
export const TAKEOVER_LABEL = `${PULLFLEET_PREFIX}takeover`;
export const TAKEOVER_ORPHANED = 'orphaned';
/** Annotation on a hub app: hub time the controller last saw the old controller rewrite a legacy work. */
export { LEGACY_CONTROLLER_SEEN_ANNOTATION };
/** Condition on a hub app while an old propagation controller is seen fighting the hand-over. */
export const LEGACY_CONTROLLER_CONDITION = 'LegacyControllerWarning';
/** How long the condition stays after the old controller was last seen writing. */
export const LEGACY_CONTROLLER_WINDOW_MS = 10 * 60_000;

/** A legacy work to delete: the preconditions make the API server refuse if it changed since it was judged safe. */
export interface LegacyWorkRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export interface TakeoverInput {
  readonly app: Application;
  /** Every observed work whose hub annotations point at the app (pullfleet's and others'). */
  readonly works: readonly ManifestWork[];
  /** pullfleet's own work for the app at its target, if observed. */
  readonly ownWork?: ManifestWork;
}

export interface TakeoverPlan {
  /** Legacy works still to orphan (merge patch: deleteOption Orphan, {@link TAKEOVER_LABEL}). */
  readonly orphan: readonly LegacyWorkRef[];
  /** Legacy works safe to delete now: Orphan, observed by the agent, and pullfleet's work is Applied. */
  readonly deletes: readonly LegacyWorkRef[];
  /** Whether pullfleet may write its own work (no legacy work left, or every one orphaned and observed). */
  readonly mayApply: boolean;
  /** Until the agent has reported on pullfleet's work, the legacy work whose feedback the hub status comes from. */
  readonly statusWork?: { readonly namespace: string; readonly name: string };
  /** Set when the old controller is seen rewriting or re-creating a legacy work next to pullfleet's. */
  readonly legacyControllerActive?: string;
  /** What the hand-over waits for, if anything (for logs). */
  readonly waiting?: string;
}

/** The payload Application inside a work, matched by identity, never by position. */
function payloadApplication(work: ManifestWork, name: string, namespace: string): boolean {
  return (work.spec?.workload?.manifests ?? []).some((manifest) => {
    const apiVersion = typeof manifest.apiVersion === 'string' ? manifest.apiVersion : '';
    const metadata = (manifest.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    return (
      manifest.kind === 'Application' &&
      apiVersion.startsWith(`${ARGOCD_GROUP}/`) &&
      metadata.name === name &&
      metadata.namespace === namespace
    );
  });
}

/**
 * Whether `work` is a work another controller (argocd-pull-integration, ACM's propagation controller) wrote
 * for `app`: in the app's cluster namespace, its hub annotations naming the app, not pullfleet-managed, and
 * its payload the same spoke Application (name and namespace) pullfleet's work would deliver.
 */
export function isLegacyWorkFor(work: ManifestWork, app: Application): boolean {
  const annotations = work.metadata.annotations ?? {};
  const cluster = targetCluster(app);
  return (
    cluster !== undefined &&
    work.metadata.namespace === cluster &&
    work.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE &&
    annotations[HUB_APP_NAMESPACE_ANNOTATION] === (app.metadata.namespace ?? 'argocd') &&
    annotations[HUB_APP_NAME_ANNOTATION] === app.metadata.name &&
    payloadApplication(work, app.metadata.name, spokeAppNamespace(app))
  );
}

/** Whether deleting the work would leave every manifest on the spoke. */
export function isOrphanWork(work: ManifestWork): boolean {
  return work.spec?.deleteOption?.propagationPolicy === 'Orphan';
}

/** Whether the work agent has reported on the work's current spec (Applied carries its generation). */
export function observedByAgent(work: ManifestWork): boolean {
  const generation = work.metadata.generation;
  const applied = workCondition(work, 'Applied');
  return (
    generation !== undefined && applied?.observedGeneration !== undefined && applied.observedGeneration >= generation
  );
}

/** Whether the work agent applied the work's current spec successfully. */
function appliedCurrent(work: ManifestWork): boolean {
  return observedByAgent(work) && workCondition(work, 'Applied')?.status === 'True';
}

function ref(work: ManifestWork): LegacyWorkRef {
  return {
    namespace: work.metadata.namespace!,
    name: work.metadata.name,
    ...(work.metadata.uid ? { uid: work.metadata.uid } : {}),
    ...(work.metadata.resourceVersion ? { resourceVersion: work.metadata.resourceVersion } : {}),
  };
}

const byKey = (a: LegacyWorkRef, b: LegacyWorkRef) =>
  `${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1;

/**
 * The hand-over step for one app. Terminating legacy works are left alone (their deletion is under way and
 * not pullfleet's); pullfleet's own work counts only when it is not terminating.
 */
export function computeTakeover(input: TakeoverInput): TakeoverPlan {
  const legacy = input.works.filter((work) => !work.metadata.deletionTimestamp && isLegacyWorkFor(work, input.app));
  if (legacy.length === 0) return { orphan: [], deletes: [], mayApply: true };

  const own = input.ownWork && !input.ownWork.metadata.deletionTimestamp ? input.ownWork : undefined;
  const orphan = legacy
    .filter((work) => !isOrphanWork(work) || work.metadata.labels?.[TAKEOVER_LABEL] !== TAKEOVER_ORPHANED)
    .map(ref)
    .sort(byKey);
  // pullfleet writes its work only after every legacy work was orphaned: a legacy work that is not Orphan
  // next to it was rewritten or re-created since, which only a running old controller does.
  const reverted = own ? legacy.filter((work) => !isOrphanWork(work)) : [];
  const legacyControllerActive =
    reverted.length > 0
      ? `another controller rewrote or re-created ManifestWork ${reverted.map((work) => `${work.metadata.namespace}/${work.metadata.name}`).join(', ')} (deleteOption ${reverted[0].spec?.deleteOption?.propagationPolicy ?? 'Foreground'}) after pullfleet took this Application over: scale argocd-pull-integration or ACM's propagation controller down (pullfleet keeps the spoke Application and finishes the hand-over once it stops)`
      : undefined;

  const ready = legacy.filter((work) => isOrphanWork(work) && observedByAgent(work));
  const mayApply = own !== undefined || ready.length === legacy.length;
  // A work still to be labelled is deleted on a later pass (the patch changes its resourceVersion).
  const patching = new Set(orphan.map((item) => `${item.namespace}/${item.name}`));
  const deletes =
    own && appliedCurrent(own)
      ? ready
          .map(ref)
          .filter((item) => !patching.has(`${item.namespace}/${item.name}`))
          .sort(byKey)
      : [];
  const first = [...legacy].sort((a, b) => byKey(ref(a), ref(b)))[0];

  let waiting: string | undefined;
  if (!mayApply)
    waiting = `the work agent on ${first.metadata.namespace} to observe deleteOption Orphan on ${legacy
      .filter((work) => !ready.includes(work))
      .map((work) => work.metadata.name)
      .join(', ')}`;
  else if (deletes.length < legacy.length)
    waiting = own
      ? `ManifestWork ${own.metadata.namespace}/${own.metadata.name} to be applied on the spoke`
      : 'ManifestWork of pullfleet to be written';

  return {
    orphan,
    deletes,
    mayApply,
    // The hub status stays with the legacy work until the agent has reported on pullfleet's (no flap to Unknown).
    ...(own && observedByAgent(own)
      ? {}
      : { statusWork: { namespace: first.metadata.namespace!, name: first.metadata.name } }),
    ...(legacyControllerActive ? { legacyControllerActive } : {}),
    ...(waiting ? { waiting } : {}),
  };
}

/** The merge patch that orphans a legacy work (guarded by its resourceVersion). */
export function orphanPatch(work: LegacyWorkRef): object {
  return {
    metadata: {
      labels: { [TAKEOVER_LABEL]: TAKEOVER_ORPHANED },
      ...(work.resourceVersion ? { resourceVersion: work.resourceVersion } : {}),
    },
    spec: { deleteOption: { propagationPolicy: 'Orphan', selectivelyOrphans: null } },
  };
}

/**
 * Whether the hub app should show {@link LEGACY_CONTROLLER_CONDITION}: the old controller is fighting now,
 * or was seen within {@link LEGACY_CONTROLLER_WINDOW_MS}. Returns the message and when to look again.
 */
export function legacyControllerWarning(
  app: Pick<Application, 'metadata'>,
  active: string | undefined,
  now: Date,
): { message?: string; recheckAt?: Date } {
  if (active) return { message: active, recheckAt: new Date(now.getTime() + LEGACY_CONTROLLER_WINDOW_MS + 1) };
  const seen = Date.parse(app.metadata.annotations?.[LEGACY_CONTROLLER_SEEN_ANNOTATION] ?? '');
  if (Number.isNaN(seen) || now.getTime() - seen > LEGACY_CONTROLLER_WINDOW_MS) return {};
  return {
    message: `another controller last rewrote or re-created a legacy ManifestWork of this Application at ${kubeTime(new Date(seen))}, after pullfleet took it over: scale argocd-pull-integration or ACM's propagation controller down (it re-creates its work whenever the Application changes)`,
    recheckAt: new Date(seen + LEGACY_CONTROLLER_WINDOW_MS + 1),
  };
}

/** What a hub Application that moved to an agent model still has to do with the works pullfleet wrote for it. */
export interface AgentHandoffPlan {
  /** pullfleet's works still to switch to `deleteOption: Orphan` (merge patch guarded by resourceVersion). */
  readonly orphan: readonly LegacyWorkRef[];
  /** Works safe to delete now (Orphan and observed by the work agent), guarded by uid and resourceVersion. */
  readonly deletes: readonly LegacyWorkRef[];
  /** Whether no work of the app is left (terminating ones included): only then may the finalizer go. */
  readonly done: boolean;
  /** What the hand-off waits for, if anything (for logs). */
  readonly waiting?: string;
}

/**
 * The hand-off of an app that moved from basic to an agent model (its ApplicationSet template changed): the
 * argocd-agent now owns the spoke Application, so every work the controller wrote for it is orphaned first
 * and deleted only once the work agent has observed that, so removing the work never removes the spoke app.
 * Only the controller's own works count (pullfleet-managed, not static); another controller's works and
 * synth's static works are left as they are. Pure and level-triggered like {@link computeTakeover}.
 */
export function computeAgentHandoff(
  app: Pick<Application, 'metadata'>,
  works: readonly ManifestWork[],
  isOwnWork: (work: ManifestWork) => boolean,
): AgentHandoffPlan {
  const own = works.filter(isOwnWork);
  const live = own.filter((work) => !work.metadata.deletionTimestamp);
  const orphan = live
    .filter((work) => !isOrphanWork(work))
    .map(ref)
    .sort(byKey);
  const ready = live.filter((work) => isOrphanWork(work) && observedByAgent(work));
  const deletes = ready.map(ref).sort(byKey);
  const unobserved = live.filter((work) => isOrphanWork(work) && !observedByAgent(work));
  const terminating = own.filter((work) => work.metadata.deletionTimestamp);
  const names = (list: readonly ManifestWork[]) =>
    list
      .map((work) => `${work.metadata.namespace}/${work.metadata.name}`)
      .sort()
      .join(', ');
  let waiting: string | undefined;
  if (unobserved.length > 0)
    waiting = `the work agent to observe deleteOption Orphan on ManifestWork ${names(unobserved)} (hub Application ${app.metadata.namespace ?? 'argocd'}/${app.metadata.name})`;
  else if (terminating.length > 0 && orphan.length === 0 && deletes.length === 0)
    waiting = `ManifestWork ${names(terminating)} to finish terminating`;
  return { orphan, deletes, done: own.length === 0, ...(waiting ? { waiting } : {}) };
}

/** The merge patch that switches a work of an app handed to the argocd-agent to `deleteOption: Orphan` (guarded by resourceVersion). */
export function handoffOrphanPatch(work: LegacyWorkRef): object {
  return {
    ...(work.resourceVersion ? { metadata: { resourceVersion: work.resourceVersion } } : {}),
    spec: { deleteOption: { propagationPolicy: 'Orphan', selectivelyOrphans: null } },
  };
}
