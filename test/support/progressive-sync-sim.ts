/**
 * The ApplicationSet controller's progressive sync (RollingSync) of one released Argo CD version, played
 * against a real API server for one ApplicationSet, so that a test can check that pullfleet's status
 * write-back lets a rollout advance in the pull model the way that release decides it. The test plays the
 * placement (the generator yields a fixed list of cluster names) and drives the controller: a reconcile pass
 * runs only when the test calls `pass()`, and `queued` says whether upstream would have queued one by now (an
 * event `shouldRequeueForApplication` accepts, a change of the ApplicationSet, or of its own
 * `status.applicationStatus`, which upstream persists and whose watch event queues the next pass). The
 * generators' requeue interval is never played: a rollout that needs it stalls, and the test sees that. The
 * clock is the test's, so every time the state machine compares is the test's choice.
 *
 * The release is an option (`release`, default 3.5.1, the newest one the 2026-11-27 audit of
 * ../shared/upstream-audit.md read). Modelled: 3.3.0 to 3.5.1, which share one state machine
 * (argo-cd v3.3.0 `applicationset/controllers/applicationset_controller.go`:1180-1228, :1585-1596; from 3.5
 * `applicationset/progressivesync/progressive_sync.go`) and differ in how a spec change is seen (audit W2):
 * - 3.3.0-3.3.6: only a change of `status.sync.revision(s)` makes an Application Waiting; a spec-only change
 *   is never synced;
 * - 3.3.7-3.3.14, 3.4.0-3.4.6 and 3.5.0: a spec that differs from the generated one, compared raw; the live
 *   spec carries `automated.enabled: false` and the generated one does not, so an Application with an
 *   automated policy goes back to Waiting on every pass (argo-cd #27577, fixed by #29044);
 * - 3.4.7 and later 3.4, 3.5.1: the specs compared after normalisation, automated sync disabled on the
 *   generated side (`utils.SpecsEquivalent`).
 *
 * 2.14 and 3.0-3.2 (`release` '2.14', '3.0', '3.1', '3.2', or any patch of them) run an older state machine
 * (audit W3), modelled from argo-cd v2.14.0 and v3.0.0/v3.2.0 `applicationset/controllers/applicationset_controller.go`
 * (`updateApplicationSetApplicationStatus` v2.14.0 :1044-1141, v3.2.0 :1137-1225; `buildAppSyncMap` and
 * `appSyncEnabledForNextStep` v2.14.0 :960-1007; `syncValidApplications` / `syncApplication` v2.14.0 :1410-1465,
 * v3.2.0 :1528-1588):
 * - no spec comparison; 3.0-3.2 make an Application Waiting when its `status.sync.revision(s)` differ from the
 *   entry's target revisions (and record the new ones), 2.14 only fills in empty target revisions; both make an
 *   `OutOfSync` Application Waiting unless it is Waiting or Pending (2.14 records the target revisions then);
 * - Pending → Progressing: operation phase `Running` or health `Progressing`, or phase `Succeeded` when
 *   (3.0-3.2) the Application is not `OutOfSync`, or (2.14) `operationState.syncResult.revisions` (else
 *   `[syncResult.revision]`) equal the target revisions; 2.14 reads `syncResult` without a nil check, so a
 *   Succeeded phase without one fails the pass here (upstream: a nil pointer dereference);
 * - Waiting or Progressing → Healthy when `isApplicationHealthy`: health Healthy, not `OutOfSync`, phase
 *   `Succeeded` or none; the transitions run one after the other in one pass, as upstream;
 * - a step may sync once every Application of the steps before has an entry `Healthy` and is itself healthy
 *   (`isApplicationHealthy`); an Application without an entry holds the next step;
 * - the automated policy is removed from every generated Application (`Automated = nil`, keeping its prune for
 *   the operation), and the operation is written only on a Pending Application of a step that may sync and
 *   that is `OutOfSync`;
 * - only post-delete finalizers are preserved (v2.14.0 :643-650, v3.2.0 :732-741).
 *
 * What every modelled release does (audit, CONFIRMED and W1/W8): `buildAppDependencyList` and
 * `labelMatchedExpression` (steps select Applications by label with `In` / `NotIn` only; an `In` on a missing
 * label does not select; an Application no step selects is step -1); `UpdateApplicationSetApplicationStatus`
 * (an Application without an entry starts Waiting; a change makes it Waiting, and in the same pass a Waiting
 * one that is Synced goes to Healthy, or Progressing when not Healthy, without a sync; Pending moves to
 * Progressing only when `status.reconciledAt` is unset or later than the Pending transition and
 * `status.operationState.startedAt` is strictly later than it, or on an InvalidSpecError / UnknownError
 * condition; Progressing moves to Healthy only with health Healthy and sync Synced); `getAppsToSync` (the
 * steps up to the first one that is not all Healthy); `UpdateApplicationSetApplicationStatusProgress`
 * (Waiting → Pending within `maxUpdate`, an int or a percentage rounded down but at least 1 above 0 %,
 * counting Pending and Progressing ones of the step); `SyncDesiredApplications` / `syncApplication` (every
 * generated Application keeps its automated policy with `enabled: false`; a Pending one in a step allowed to
 * sync gets an `operation` on every pass whatever its sync status, with no revision pinned, retry limit 5,
 * prune from the automated policy); `createOrUpdateInCluster` (a merge patch without optimistic locking: spec
 * replaced, `operation` set only when the generated one has it, annotations, labels and finalizers replaced
 * by the template's except annotations in `preservedFields.annotations` and the defaults
 * `notified.notifications.argoproj.io` and `argocd.argoproj.io/refresh`, labels in `preservedFields.labels`,
 * and `pre-delete-` / `post-delete-finalizer.argocd.argoproj.io*` finalizers); `shouldRequeueForApplication`
 * (an owned Application's change queues a pass only when its spec, annotations, labels or finalizers differ,
 * or, with progressive syncs, its health or sync status, or the phase or startedAt of an operation state
 * both versions have; `reconciledAt` alone does not).
 *
 * Not in any release up to 3.5.1, so not here: the hold of argo-cd PR #27467 (`ensureApplicationsReconciled`,
 * refresh annotations on lagging Applications, revisions pinned in the operation), audit W7. Without it a
 * later step's Application whose new revision is compared before an earlier step's is synced first
 * (argo-cd #22852, #29347, #29410); the simulator reproduces that.
 *
 * Left out: generator evaluation (the clusters are given), validation of projects and destinations, deletion
 * and reverse deletion order, `ignoreApplicationDifferences`, the ApplicationSet's conditions and metrics
 * annotations.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ARGOCD_API_VERSION, REFRESH_ANNOTATION } from '../../src/model/core/keys.js';
import type { TestCluster } from './cluster.js';
import { streamObjects, type ObjectStream } from './object-watch.js';
import { RawClient } from './raw-client.js';

export type ProgressiveSyncState = 'Waiting' | 'Pending' | 'Progressing' | 'Healthy';

/** One entry of `status.applicationStatus`. */
export interface AppStatusEntry {
  readonly application: string;
  readonly status: ProgressiveSyncState;
  readonly message: string;
  /** RFC 3339, whole seconds (as stored). */
  readonly lastTransitionTime: string;
  /** 1-based step, or "-1". */
  readonly step: string;
  readonly targetRevisions: readonly string[];
}

/** A transition of one Application's progressive sync state. */
export interface AppTransition {
  readonly seq: number;
  readonly application: string;
  readonly from?: ProgressiveSyncState;
  readonly to: ProgressiveSyncState;
  readonly step: string;
  readonly message: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

interface App {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: Array<{ kind: string; name: string; controller?: boolean; uid?: string; apiVersion?: string }>;
    deletionTimestamp?: string;
  };
  spec: Obj;
  operation?: Obj;
  status?: {
    health?: { status?: string };
    sync?: { status?: string; revision?: string; revisions?: string[] };
    operationState?: { phase?: string; startedAt?: string; syncResult?: { revision?: string; revisions?: string[] } };
    reconciledAt?: string;
    conditions?: Array<{ type: string }>;
  };
}

interface ApplicationSetObject {
  metadata: { name: string; namespace?: string; uid?: string; deletionTimestamp?: string };
  spec: {
    generators?: Array<Record<string, { requeueAfterSeconds?: number } | undefined>>;
    template: { metadata: Obj; spec: Obj };
    strategy?: {
      type?: string;
      rollingSync?: {
        steps?: Array<{
          matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
          maxUpdate?: number | string;
        }>;
      };
    };
    preservedFields?: { annotations?: string[]; labels?: string[] };
  };
}

const NOTIFIED_ANNOTATION = 'notified.notifications.argoproj.io';
const PRESERVED_FINALIZER_PREFIXES = [
  'pre-delete-finalizer.argocd.argoproj.io',
  'post-delete-finalizer.argocd.argoproj.io',
];
/** Waiting because of a change. */
const REVISION_CHANGED = 'Waiting: the revision changed';
const SPEC_CHANGED = 'Waiting: the spec changed';
const BOTH_CHANGED = 'Waiting: the revision and the spec changed';

/** How a release sees a change of the generated spec (see the file comment). */
export type SpecComparison = 'none' | 'raw' | 'normalized';

/**
 * Which state machine a release runs: 2.14, 3.0-3.2 (one machine, see the file comment), or 3.3 and later.
 */
export type StateMachine = '2.14' | '3.0' | '3.3';

/** What distinguishes the modelled releases; throws for one that is not modelled. */
export function releaseSemantics(release: string): {
  readonly specComparison: SpecComparison;
  readonly machine: StateMachine;
} {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/.exec(release);
  if (!match)
    throw new Error(
      `release "${release}": give an Argo CD release as MAJOR.MINOR.PATCH (or 2.14, 3.0-3.2), e.g. 3.5.1`,
    );
  const [major, minor] = match.slice(1, 3).map(Number);
  if (major === 2 && minor === 14) return { specComparison: 'none', machine: '2.14' };
  if (major === 3 && minor <= 2) return { specComparison: 'none', machine: '3.0' };
  if (major !== 3) throw new Error(`release ${release} is not modelled: give 2.14, 3.0 to 3.2, or 3.3.0 to 3.5.1`);
  if (match[3] === undefined)
    throw new Error(`release "${release}": give a 3.3+ Argo CD release as MAJOR.MINOR.PATCH, e.g. 3.5.1`);
  const patch = Number(match[3]);
  if (minor > 5 || (minor === 5 && patch > 1))
    throw new Error(`release ${release} is not modelled: the audit read releases up to 3.5.1; give 3.3.0 to 3.5.1`);
  if (minor === 3) return { specComparison: patch <= 6 ? 'none' : 'raw', machine: '3.3' };
  if (minor === 4) return { specComparison: patch <= 6 ? 'raw' : 'normalized', machine: '3.3' };
  return { specComparison: patch === 0 ? 'raw' : 'normalized', machine: '3.3' };
}

/** Whole seconds, as a metav1.Time is stored. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** JSON with empty arrays, empty objects, null and undefined removed, keys sorted (go-cmp EquateEmpty). */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(normalized);
    return items.length === 0 ? undefined : items;
  }
  if (value !== null && typeof value === 'object') {
    const out: Obj = {};
    for (const key of Object.keys(value).sort()) {
      const v = normalized((value as Obj)[key]);
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value === null ? undefined : value;
}

function equivalent(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalized(a) ?? null) === JSON.stringify(normalized(b) ?? null);
}

/**
 * The JSON merge patch (RFC 7386) that turns `before` into `after`, as jsonpatch.CreateMergePatch computes the
 * body of the applicationset-controller's `client.MergeFrom` patch: keys gone become null, arrays are replaced.
 */
export function mergePatchOf(before: unknown, after: unknown): unknown {
  const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(before) || !isObject(after))
    return JSON.stringify(before) === JSON.stringify(after) ? undefined : after;
  const patch: Obj = {};
  for (const key of Object.keys(before)) if (!(key in after) || after[key] === undefined) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue;
    if (!(key in before) || before[key] === undefined) patch[key] = value;
    else {
      const inner = mergePatchOf(before[key], value);
      if (inner !== undefined) patch[key] = inner;
    }
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

function revisionsOf(app: App): string[] {
  const sync = app.status?.sync;
  if (sync?.revisions?.length) return [...sync.revisions];
  return sync?.revision ? [sync.revision] : [];
}

/** `isApplicationHealthy` (2.14, 3.0-3.2): health Healthy, not OutOfSync, operation phase Succeeded or none. */
function isApplicationHealthy(app: App): boolean {
  const phase = app.status?.operationState?.phase ?? '';
  return (
    app.status?.health?.status === 'Healthy' &&
    app.status?.sync?.status !== 'OutOfSync' &&
    (phase === 'Succeeded' || phase === '')
  );
}

function isAutomated(spec: Obj): boolean {
  const automated = spec.syncPolicy?.automated;
  return automated !== undefined && automated !== null && automated.enabled !== false;
}

/** `syncPolicy.automated.enabled = false` where an automated policy exists (`disableAutomatedSync`). */
function withAutomatedDisabled(spec: Obj): Obj {
  if (!spec.syncPolicy?.automated) return spec;
  return { ...spec, syncPolicy: { ...spec.syncPolicy, automated: { ...spec.syncPolicy.automated, enabled: false } } };
}

function ownedBy(app: App, appSet: string): boolean {
  return (app.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.kind === 'ApplicationSet' && ref.name === appSet,
  );
}

/** upstream shouldRequeueForApplication, progressive syncs enabled. */
export function shouldRequeueForApplication(before: App, after: App): boolean {
  if (
    !equivalent(before.spec, after.spec) ||
    !equivalent(before.metadata.annotations, after.metadata.annotations) ||
    !equivalent(before.metadata.labels, after.metadata.labels) ||
    !equivalent(before.metadata.finalizers, after.metadata.finalizers)
  )
    return true;
  if (
    (before.status?.health?.status ?? '') !== (after.status?.health?.status ?? '') ||
    (before.status?.sync?.status ?? '') !== (after.status?.sync?.status ?? '')
  )
    return true;
  const a = before.status?.operationState;
  const b = after.status?.operationState;
  return a !== undefined && b !== undefined && (a.phase !== b.phase || a.startedAt !== b.startedAt);
}

export interface ProgressiveSyncSimOptions {
  /** The ApplicationSet's namespace (the hub Argo CD namespace) and name. */
  readonly namespace: string;
  readonly name: string;
  /** The cluster names the generator yields (the test plays the placement). */
  readonly clusters: readonly string[];
  /** The Argo CD release whose applicationset-controller is played (2.14, 3.0 to 3.2, 3.3.0 to 3.5.1). @default '3.5.1' */
  readonly release?: string;
  /** The controller's clock (milliseconds). @default Date.now */
  readonly clock?: () => number;
}

/** The applicationset-controller of one RollingSync ApplicationSet, one reconcile pass at a time. */
export class ProgressiveSyncSim {
  /** `status.applicationStatus` as the controller would persist it. */
  applicationStatus: AppStatusEntry[] = [];
  /** Every state transition, in order. */
  readonly transitions: AppTransition[] = [];
  /** Passes run, and Application writes made (creates, patches). */
  passes = 0;
  writes = 0;
  readonly release: string;
  private readonly specComparison: SpecComparison;
  private readonly machine: StateMachine;
  private readonly clock: () => number;
  private readonly seen = new Map<string, App>();
  private appSetVersion?: string;
  private streams: ObjectStream[] = [];
  private queuedBy: string[] = [];
  private readonly raw: RawClient;

  constructor(
    private readonly cluster: TestCluster,
    private readonly kubeConfig: KubeConfig,
    private readonly options: ProgressiveSyncSimOptions,
  ) {
    this.raw = new RawClient(kubeConfig);
    this.release = options.release ?? '3.5.1';
    const semantics = releaseSemantics(this.release);
    this.specComparison = semantics.specComparison;
    this.machine = semantics.machine;
    this.clock = options.clock ?? Date.now;
  }

  /** Starts watching the ApplicationSet and its Applications (the events that queue a pass). */
  async start(): Promise<void> {
    const { namespace, name } = this.options;
    this.streams.push(
      await streamObjects<App>(
        this.kubeConfig,
        `/apis/argoproj.io/v1alpha1/namespaces/${namespace}/applications`,
        {},
        (type, app) => {
          const before = this.seen.get(app.metadata.name);
          if (type === 'DELETED') this.seen.delete(app.metadata.name);
          else this.seen.set(app.metadata.name, app);
          if (!ownedBy(app, name) && !(before && ownedBy(before, name))) return;
          if (type !== 'MODIFIED' || !before || shouldRequeueForApplication(before, app))
            this.queuedBy.push(`Application ${app.metadata.name} ${type}`);
        },
      ),
    );
    this.streams.push(
      await streamObjects<ApplicationSetObject & { metadata: { resourceVersion?: string } }>(
        this.kubeConfig,
        `/apis/argoproj.io/v1alpha1/namespaces/${namespace}/applicationsets`,
        { fieldSelector: `metadata.name=${name}` },
        (type, appSet) => {
          this.appSetVersion = appSet.metadata.resourceVersion;
          this.queuedBy.push(`ApplicationSet ${type}`);
        },
      ),
    );
  }

  /** Stops watching; throws what a watch met. */
  stop(): void {
    for (const stream of this.streams) stream.stop();
    for (const stream of this.streams) {
      const error = stream.error();
      if (error) throw error instanceof Error ? error : new Error(String(error));
    }
  }

  /** Whether upstream would have queued a pass by now, and why (the events since the last pass). */
  get queued(): readonly string[] {
    return [...this.queuedBy];
  }

  /** The resourceVersion of an Application (or, with no name, of the ApplicationSet) the watch delivered last. */
  seenVersion(application?: string): string | undefined {
    return application === undefined ? this.appSetVersion : this.seen.get(application)?.metadata.resourceVersion;
  }

  /** The entry of one Application. */
  statusOf(application: string): AppStatusEntry | undefined {
    return this.applicationStatus.find((entry) => entry.application === application);
  }

  /** Runs one reconcile pass now (what the controller does when it takes the ApplicationSet off its queue). */
  async pass(): Promise<void> {
    this.queuedBy = [];
    const { namespace, name } = this.options;
    const appSet = await this.cluster.get<ApplicationSetObject>({
      apiVersion: ARGOCD_API_VERSION,
      kind: 'ApplicationSet',
      namespace,
      name,
    });
    if (!appSet || appSet.metadata.deletionTimestamp) return;
    this.passes += 1;
    const desired = this.generate(appSet);
    const current = (await this.cluster.list<App>(ARGOCD_API_VERSION, 'Application', { namespace })).filter((app) =>
      ownedBy(app, name),
    );
    const before = JSON.stringify(this.applicationStatus);
    let appsToSync = new Map<string, boolean>();
    if (!appSet.spec.strategy && this.applicationStatus.length > 0) this.applicationStatus = [];
    else if (appSet.spec.strategy) appsToSync = this.performProgressiveSyncs(appSet, current, desired);
    const valid = !this.rollingSyncEnabled(appSet)
      ? desired
      : this.machine === '3.3'
        ? this.syncDesiredApplications(appsToSync, desired)
        : this.syncValidApplications(appsToSync, desired, current);
    // The status write comes first upstream, and its watch event queues the next pass.
    if (JSON.stringify(this.applicationStatus) !== before) this.queuedBy.push('status.applicationStatus changed');
    await this.createOrUpdateInCluster(appSet, valid);
  }

  private rollingSyncEnabled(appSet: ApplicationSetObject): boolean {
    const strategy = appSet.spec.strategy;
    return strategy?.type === 'RollingSync' && (strategy.rollingSync?.steps?.length ?? 0) > 0;
  }

  /** The Applications the template yields for each cluster (`{{name}}` filled in). */
  private generate(appSet: ApplicationSetObject): App[] {
    return this.options.clusters.map((cluster) => {
      const rendered = JSON.parse(JSON.stringify(appSet.spec.template).replace(/\{\{\s*name\s*\}\}/g, cluster)) as {
        metadata: Obj;
        spec: Obj;
      };
      return {
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        metadata: {
          ...rendered.metadata,
          name: rendered.metadata.name as string,
          namespace: (rendered.metadata.namespace as string | undefined) || (appSet.metadata.namespace ?? ''),
        },
        spec: rendered.spec,
      };
    });
  }

  private performProgressiveSyncs(appSet: ApplicationSetObject, current: App[], desired: App[]): Map<string, boolean> {
    const { steps, stepOf } = this.buildAppDependencyList(appSet, desired);
    if (this.machine === '3.3') this.updateApplicationStatus(current, desired, stepOf);
    else this.updateApplicationStatusBefore33(current, stepOf);
    const appsToSync =
      this.machine === '3.3' ? this.getAppsToSync(steps, current) : this.buildAppSyncMap(steps, current);
    this.updateApplicationStatusProgress(appSet, appsToSync, stepOf);
    return appsToSync;
  }

  private buildAppDependencyList(
    appSet: ApplicationSetObject,
    apps: App[],
  ): { steps: string[][]; stepOf: Map<string, number> } {
    const stepDefs = this.rollingSyncEnabled(appSet) ? (appSet.spec.strategy?.rollingSync?.steps ?? []) : [];
    const steps = stepDefs.map((): string[] => []);
    const stepOf = new Map<string, number>();
    for (const app of apps) {
      stepDefs.forEach((step, i) => {
        let selected = true;
        for (const expression of step.matchExpressions ?? []) {
          const value = app.metadata.labels?.[expression.key];
          if (value !== undefined) {
            if (expression.operator !== 'In' && expression.operator !== 'NotIn') {
              selected = false;
              break;
            }
            const listed = (expression.values ?? []).includes(value);
            if (!(expression.operator === 'In' ? listed : !listed)) {
              selected = false;
              break;
            }
          } else if (expression.operator === 'In') {
            selected = false;
            break;
          }
        }
        if (selected) {
          steps[i].push(app.metadata.name);
          if (!stepOf.has(app.metadata.name)) stepOf.set(app.metadata.name, i);
        }
      });
    }
    return { steps, stepOf };
  }

  private record(entry: AppStatusEntry, from: ProgressiveSyncState | undefined): void {
    this.transitions.push({
      seq: this.transitions.length,
      application: entry.application,
      ...(from ? { from } : {}),
      to: entry.status,
      step: entry.step,
      message: entry.message,
    });
  }

  private updateApplicationStatus(current: App[], desired: App[], stepOf: Map<string, number>): void {
    const now = stamp(this.clock());
    const desiredByName = new Map(desired.map((app) => [app.metadata.name, app]));
    const stepText = (name: string) => String(stepOf.has(name) ? stepOf.get(name)! + 1 : -1);
    const next: AppStatusEntry[] = [];
    for (const app of current) {
      const name = app.metadata.name;
      const health = app.status?.health?.status ?? '';
      const sync = app.status?.sync?.status ?? '';
      const existing = this.statusOf(name);
      const currentEntry: AppStatusEntry = existing ?? {
        application: name,
        status: 'Waiting',
        message: 'Waiting: new Application',
        lastTransitionTime: now,
        step: stepText(name),
        targetRevisions: revisionsOf(app),
      };
      if (!existing) this.record(currentEntry, undefined);
      let entry: AppStatusEntry = { ...currentEntry, step: stepText(name) };
      const revisions = revisionsOf(app);
      const revisionsChanged = JSON.stringify(currentEntry.targetRevisions) !== JSON.stringify(revisions);
      const wanted = desiredByName.get(name);
      const specChanged =
        wanted !== undefined &&
        (this.specComparison === 'normalized'
          ? !equivalent(withAutomatedDisabled(wanted.spec), app.spec)
          : this.specComparison === 'raw'
            ? !equivalent(wanted.spec, app.spec)
            : false);
      const set = (status: ProgressiveSyncState, message: string, extra: Partial<AppStatusEntry> = {}) => {
        const from = entry.status;
        entry = { ...entry, ...extra, status, message, lastTransitionTime: now };
        this.record(entry, from);
      };
      if (revisionsChanged || specChanged) {
        set(
          'Waiting',
          revisionsChanged && specChanged ? BOTH_CHANGED : revisionsChanged ? REVISION_CHANGED : SPEC_CHANGED,
          { targetRevisions: revisions },
        );
      }
      if (entry.status === 'Waiting') {
        if (sync === 'Synced') {
          if (health === 'Healthy') set('Healthy', 'Healthy: Synced and Healthy while Waiting, no sync needed');
          else set('Progressing', 'Progressing: Synced but not Healthy while Waiting');
        }
      } else {
        if (currentEntry.status === 'Pending') {
          const reconciledAt = app.status?.reconciledAt;
          if (reconciledAt === undefined || Date.parse(reconciledAt) > Date.parse(entry.lastTransitionTime)) {
            const startedAt = app.status?.operationState?.startedAt;
            const hasError = (app.status?.conditions ?? []).some(
              (c) => c.type === 'InvalidSpecError' || c.type === 'UnknownError',
            );
            if (startedAt !== undefined && Date.parse(startedAt) > Date.parse(currentEntry.lastTransitionTime))
              set(
                'Progressing',
                `Progressing: an operation (${app.status?.operationState?.phase ?? '?'}) started after Pending`,
              );
            else if (hasError) set('Progressing', 'Progressing: the Application has an error condition');
          }
        }
        if (currentEntry.status === 'Progressing' && health === 'Healthy' && sync === 'Synced')
          set('Healthy', 'Healthy: Healthy and Synced after Progressing');
      }
      next.push(entry);
    }
    this.applicationStatus = next;
  }

  /** `updateApplicationSetApplicationStatus` of 2.14 and 3.0-3.2 (see the file comment). */
  private updateApplicationStatusBefore33(current: App[], stepOf: Map<string, number>): void {
    const now = stamp(this.clock());
    const stepText = (name: string) => String(stepOf.has(name) ? stepOf.get(name)! + 1 : -1);
    const next: AppStatusEntry[] = [];
    for (const app of current) {
      const name = app.metadata.name;
      const health = app.status?.health?.status ?? '';
      const sync = app.status?.sync?.status ?? '';
      const phase = app.status?.operationState?.phase ?? '';
      const revisions = revisionsOf(app);
      const existing = this.statusOf(name);
      let entry: AppStatusEntry =
        existing ??
        ({
          application: name,
          status: 'Waiting',
          message: 'Waiting: no Application status found',
          lastTransitionTime: now,
          step: stepText(name),
          // 2.14 records the revisions of a new entry; 3.0-3.2 leave them empty (so they differ just below).
          targetRevisions: this.machine === '2.14' ? revisions : [],
        } satisfies AppStatusEntry);
      if (!existing) this.record(entry, undefined);
      const set = (status: ProgressiveSyncState, message: string, extra: Partial<AppStatusEntry> = {}) => {
        const from = entry.status;
        entry = { ...entry, ...extra, status, message, lastTransitionTime: now, step: stepText(name) };
        this.record(entry, from);
      };
      const sameRevisions = JSON.stringify(entry.targetRevisions) === JSON.stringify(revisions);
      if (this.machine === '2.14') {
        if (entry.targetRevisions.length === 0) entry = { ...entry, targetRevisions: revisions };
      } else if (!sameRevisions) set('Waiting', REVISION_CHANGED, { targetRevisions: revisions });
      const outdated = sync === 'OutOfSync';
      if (outdated && entry.status !== 'Waiting' && entry.status !== 'Pending')
        set('Waiting', 'Waiting: OutOfSync', this.machine === '2.14' ? { targetRevisions: revisions } : {});
      if (entry.status === 'Pending') {
        if (phase === 'Succeeded' && this.machine === '2.14') {
          const result = app.status?.operationState?.syncResult;
          if (result === undefined)
            throw new Error(
              `Argo CD 2.14: Application ${name} is Pending with phase Succeeded and no operationState.syncResult: the applicationset-controller dereferences a nil pointer (v2.14.0 applicationset_controller.go:1094)`,
            );
          const synced = result.revisions?.length ? result.revisions : result.revision ? [result.revision] : [];
          if (JSON.stringify(synced) === JSON.stringify(entry.targetRevisions))
            set('Progressing', 'Progressing: a sync of the target revisions Succeeded');
        } else if (phase === 'Succeeded' && this.machine === '3.0' && !outdated)
          set('Progressing', 'Progressing: a sync Succeeded and the Application is not OutOfSync');
        else if (phase === 'Running' || health === 'Progressing')
          set('Progressing', `Progressing: operation ${phase || 'none'}, health ${health || 'none'}`);
      }
      const healthy = isApplicationHealthy(app);
      if (entry.status === 'Waiting' && healthy) set('Healthy', 'Healthy: healthy while Waiting, no sync needed');
      if (entry.status === 'Progressing' && healthy) set('Healthy', 'Healthy: healthy after Progressing');
      next.push(entry);
    }
    this.applicationStatus = next;
  }

  /** `buildAppSyncMap` of 2.14 and 3.0-3.2: a step may sync once every Application before it is healthy and has a Healthy entry. */
  private buildAppSyncMap(steps: string[][], current: App[]): Map<string, boolean> {
    const toSync = new Map<string, boolean>();
    const byName = new Map(current.map((app) => [app.metadata.name, app]));
    let enabled = true;
    for (const step of steps) {
      for (const name of step) toSync.set(name, enabled);
      for (const name of step) {
        const entry = this.statusOf(name);
        const app = byName.get(name);
        enabled = entry !== undefined && app !== undefined && isApplicationHealthy(app) && entry.status === 'Healthy';
        if (!enabled) break;
      }
    }
    return toSync;
  }

  /** `syncValidApplications` / `syncApplication` of 2.14 and 3.0-3.2. */
  private syncValidApplications(appsToSync: Map<string, boolean>, desired: App[], current: App[]): App[] {
    const live = new Map(current.map((app) => [app.metadata.name, app]));
    return desired.map((app) => {
      let spec = app.spec;
      let prune = false;
      if (isAutomated(spec)) {
        prune = spec.syncPolicy.automated.prune === true;
        const { automated: _removed, ...syncPolicy } = spec.syncPolicy as Obj;
        spec = { ...spec, syncPolicy };
      }
      const entry = this.statusOf(app.metadata.name);
      const outOfSync = live.get(app.metadata.name)?.status?.sync?.status === 'OutOfSync';
      if (!(appsToSync.get(app.metadata.name) && outOfSync && entry?.status === 'Pending')) return { ...app, spec };
      const sync: Obj = {};
      const operation: Obj = {
        initiatedBy: { username: 'applicationset-controller', automated: true },
        info: [{ name: 'Reason', value: `RollingSync step (simulated applicationset-controller ${this.release})` }],
        sync,
      };
      if (spec.syncPolicy) {
        if (spec.syncPolicy.retry) operation.retry = spec.syncPolicy.retry;
        if (spec.syncPolicy.syncOptions) sync.syncOptions = spec.syncPolicy.syncOptions;
        sync.prune = prune;
      }
      return { ...app, spec, operation };
    });
  }

  private getAppsToSync(steps: string[][], current: App[]): Map<string, boolean> {
    const toSync = new Map<string, boolean>();
    const existing = new Set(current.map((app) => app.metadata.name));
    for (const step of steps) {
      for (const name of step) toSync.set(name, true);
      const done = step.every((name) => existing.has(name) && this.statusOf(name)?.status === 'Healthy');
      if (!done) break;
    }
    return toSync;
  }

  private updateApplicationStatusProgress(
    appSet: ApplicationSetObject,
    appsToSync: Map<string, boolean>,
    stepOf: Map<string, number>,
  ): void {
    const steps = appSet.spec.strategy?.rollingSync?.steps ?? [];
    if (steps.length === 0) return;
    const now = stamp(this.clock());
    // A Go map answers 0 for a name it lacks: Applications in no step count towards the first.
    const stepIndex = (name: string) => stepOf.get(name) ?? 0;
    const updating = steps.map(() => 0);
    const total = steps.map(() => 0);
    for (const entry of this.applicationStatus) {
      total[stepIndex(entry.application)] += 1;
      if (entry.status === 'Pending' || entry.status === 'Progressing') updating[stepIndex(entry.application)] += 1;
    }
    this.applicationStatus = this.applicationStatus.map((entry) => {
      const index = stepIndex(entry.application);
      const maxUpdate = steps[index]?.maxUpdate;
      let allowed = true;
      if (maxUpdate !== undefined) {
        let limit: number;
        if (typeof maxUpdate === 'number') limit = maxUpdate;
        else {
          const percent = Number.parseInt(maxUpdate.replace(/%$/, ''), 10);
          limit = Math.floor((total[index] * percent) / 100);
          if (maxUpdate !== '0%' && limit < 1) limit = 1;
        }
        if (updating[index] >= limit) allowed = false;
      }
      if (entry.status === 'Waiting' && appsToSync.get(entry.application) && allowed) {
        const next: AppStatusEntry = {
          ...entry,
          status: 'Pending',
          message: 'Pending: its step may sync; an operation is set',
          lastTransitionTime: now,
        };
        this.record(next, 'Waiting');
        updating[index] += 1;
        return next;
      }
      return entry;
    });
  }

  private syncDesiredApplications(appsToSync: Map<string, boolean>, desired: App[]): App[] {
    return desired.map((app) => {
      const prune = isAutomated(app.spec) ? app.spec.syncPolicy.automated.prune === true : false;
      const spec = withAutomatedDisabled(app.spec);
      const entry = this.statusOf(app.metadata.name);
      if (!(entry?.status === 'Pending' && appsToSync.get(app.metadata.name))) return { ...app, spec };
      // No revision: the spoke syncs what the spec resolves to when it runs the operation.
      const sync: Obj = {};
      const operation: Obj = {
        initiatedBy: { username: 'applicationset-controller', automated: true },
        info: [{ name: 'Reason', value: `RollingSync step (simulated applicationset-controller ${this.release})` }],
        sync,
        retry: { limit: 5 },
      };
      if (spec.syncPolicy) {
        if (spec.syncPolicy.retry) operation.retry = spec.syncPolicy.retry;
        if (spec.syncPolicy.syncOptions) sync.syncOptions = spec.syncPolicy.syncOptions;
        sync.prune = prune;
      }
      return { ...app, spec, operation };
    });
  }

  private async createOrUpdateInCluster(appSet: ApplicationSetObject, apps: App[]): Promise<void> {
    const preservedAnnotations = [
      ...(appSet.spec.preservedFields?.annotations ?? []),
      NOTIFIED_ANNOTATION,
      REFRESH_ANNOTATION,
    ];
    const preservedLabels = appSet.spec.preservedFields?.labels ?? [];
    const owner = {
      apiVersion: ARGOCD_API_VERSION,
      kind: 'ApplicationSet',
      name: appSet.metadata.name,
      uid: appSet.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    for (const generated of apps) {
      const ref = {
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        namespace: generated.metadata.namespace,
        name: generated.metadata.name,
      };
      const live = await this.cluster.get<App>(ref);
      if (!live) {
        await this.raw.create({
          ...generated,
          apiVersion: ARGOCD_API_VERSION,
          kind: 'Application',
          metadata: { ...generated.metadata, ownerReferences: [owner] },
        });
        this.writes += 1;
        continue;
      }
      const annotations: Record<string, string> = { ...(generated.metadata.annotations ?? {}) };
      for (const key of preservedAnnotations)
        if (live.metadata.annotations?.[key] !== undefined) annotations[key] = live.metadata.annotations[key];
      const labels: Record<string, string> = { ...(generated.metadata.labels ?? {}) };
      for (const key of preservedLabels)
        if (live.metadata.labels?.[key] !== undefined) labels[key] = live.metadata.labels[key];
      const finalizers = [
        ...(generated.metadata.finalizers ?? []),
        ...(live.metadata.finalizers ?? []).filter((f) =>
          (this.machine === '3.3' ? PRESERVED_FINALIZER_PREFIXES : PRESERVED_FINALIZER_PREFIXES.slice(1)).some(
            (prefix) => f.startsWith(prefix),
          ),
        ),
      ];
      const owners = live.metadata.ownerReferences ?? [];
      const before = {
        metadata: {
          annotations: live.metadata.annotations ?? {},
          labels: live.metadata.labels ?? {},
          finalizers: live.metadata.finalizers ?? [],
          ownerReferences: owners,
        },
        spec: live.spec,
        ...(live.operation ? { operation: live.operation } : {}),
      };
      const after = {
        metadata: {
          annotations,
          labels,
          finalizers,
          ownerReferences: owners.some((o) => o.controller && o.uid === owner.uid)
            ? owners
            : [...owners.filter((o) => !o.controller), owner],
        },
        spec: generated.spec,
        ...(generated.operation
          ? { operation: generated.operation }
          : live.operation
            ? { operation: live.operation }
            : {}),
      };
      if (equivalent(before, after)) continue;
      const patch = mergePatchOf(before, after);
      if (patch === undefined) continue;
      // No resourceVersion: upstream's merge patch cannot conflict.
      await this.cluster.mergePatch(ref, patch as object);
      this.writes += 1;
    }
  }
}
