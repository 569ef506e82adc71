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

/**
 * Annotation on pullfleet's own work of a taken-over app: the `spec.destination.namespace` its payload keeps
 * because the legacy work delivered the spoke Application with it while the hub app leaves it empty (ACM
 * 2.15 and later fill an empty one in, see {@link inheritedDestinationNamespace}).
 */
export const INHERITED_DESTINATION_NAMESPACE_ANNOTATION = `${PULLFLEET_PREFIX}inherited-destination-namespace`;

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

/** The `spec.destination.namespace` of the payload Application `namespace/name` in a work ('' when none). */
function payloadDestinationNamespace(work: ManifestWork, name: string, namespace: string): string {
  const payload = (work.spec?.workload?.manifests ?? []).find((manifest) => {
    const metadata = (manifest.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    return manifest.kind === 'Application' && metadata.name === name && metadata.namespace === namespace;
  }) as { spec?: { destination?: { namespace?: unknown } } } | undefined;
  const value = payload?.spec?.destination?.namespace;
  return typeof value === 'string' ? value : '';
}

/**
 * The destination namespace the payload of `app` keeps although the hub app leaves it empty: the one the
 * spoke Application was delivered with. ACM's propagation controller fills an empty destination namespace in
 * (with the hub app's namespace in 2.15 and 2.16, with the spoke Application's namespace in 2.17), and
 * emptying it on the spoke would place namespace-less manifests elsewhere and may prune what Argo CD tracked.
 * So while a legacy work of the app carries one, pullfleet's payload carries it too, and its own work
 * remembers it ({@link INHERITED_DESTINATION_NAMESPACE_ANNOTATION}) once the legacy work is gone. A namespace
 * the hub app sets itself always wins; undefined when there is nothing to keep.
 */
export function inheritedDestinationNamespace(
  app: Application,
  works: readonly ManifestWork[],
  ownWork?: ManifestWork,
): string | undefined {
  if (app.spec?.destination?.namespace) return undefined;
  const namespace = spokeAppNamespace(app);
  for (const work of works) {
    if (work.metadata.deletionTimestamp || !isLegacyWorkFor(work, app)) continue;
    const kept = payloadDestinationNamespace(work, app.metadata.name, namespace);
    if (kept) return kept;
  }
  const remembered = ownWork?.metadata.annotations?.[INHERITED_DESTINATION_NAMESPACE_ANNOTATION];
  return remembered || undefined;
}

/** `app` with `namespace` as its destination namespace (undefined: `app` as it is). */
export function withDestinationNamespace(app: Application, namespace: string | undefined): Application {
  if (!namespace) return app;
  return { ...app, spec: { ...app.spec, destination: { ...(app.spec?.destination ?? {}), namespace } } };
}

/** What ACM's propagation controller checks before it writes a work: the app namespace's PlacementDecisions. */
export interface PlacementDecisionLike {
  readonly metadata: { readonly namespace?: string; readonly name: string };
  readonly status?: { readonly decisions?: ReadonlyArray<{ readonly clusterName?: string }> };
}

/**
 * Why ACM's propagation controller would refuse to deliver `app` to `cluster`, or undefined when it would
 * deliver it or the app is pullfleet's own (rendered by synth, labelled managed-by pullfleet): ACM writes a work
 * only when a PlacementDecision in the Application's namespace lists the cluster (`isClusterBoundToNamespace`,
 * stolostron/multicloud-integrations release-2.13 to release-2.17). pullfleet's rule (a ManagedClusterSet bound
 * to the namespace that contains the cluster) is wider, so an app ACM left undelivered would start being
 * delivered when pullfleet takes over from ACM; pullfleet delivers it and says so.
 */
export function acmTenancyDifference(
  app: Application,
  cluster: string,
  decisions: readonly PlacementDecisionLike[],
): string | undefined {
  if (app.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE) return undefined;
  const namespace = app.metadata.namespace ?? 'argocd';
  const selected = decisions.some(
    (decision) =>
      (decision.metadata.namespace ?? '') === namespace &&
      (decision.status?.decisions ?? []).some((entry) => entry.clusterName === cluster),
  );
  if (selected) return undefined;
  return `ACM's propagation controller would not deliver this Application: no PlacementDecision in namespace "${namespace}" selects ManagedCluster "${cluster}"; pullfleet delivers it because a ManagedClusterSet bound to "${namespace}" contains the cluster. If it was meant to stay undelivered (as under ACM), remove the pull label; to make both rules agree, add a Placement in "${namespace}" that selects "${cluster}"`;
}

/**
 * The problem shown on an app pullfleet does not deliver while another controller's work still delivers it:
 * that work is left as it is (never orphaned, never deleted), so the spoke (or the hub) keeps running what it
 * last received, and nobody updates it. For the hub itself (ACM 2.17 delivers pull apps to local-cluster,
 * "embedded pull"), what to do instead.
 */
export function legacyKeptProblem(problem: string, legacy: readonly ManifestWork[], targetIsHub: boolean): string {
  const names = legacy
    .map((work) => `${work.metadata.namespace}/${work.metadata.name}`)
    .sort()
    .join(', ');
  if (targetIsHub)
    return `pullfleet does not deliver to the hub itself (ManagedCluster "${legacy[0].metadata.namespace}"), which ACM 2.17 does ("embedded pull"): ManifestWork ${names} that ACM wrote is left as it is, so the Application keeps running on the hub as last delivered, but nothing updates it any more. To manage it again, deploy it with the hub's own Argo CD (remove the pull label and the skip-reconcile annotation), or target a spoke cluster`;
  return `${problem}. ManifestWork ${names}, written by another controller, is left as it is: what it delivered keeps running, but nothing updates it until this is fixed`;
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
