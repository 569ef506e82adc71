/**
 * The ApplicationSet controller's progressive sync (RollingSync), played against a real API server for one
 * ApplicationSet, so that a test can check that pullfleet's status write-back lets a rollout advance in the
 * pull model the way Argo CD's own code decides it. The test plays the placement: the generator yields a
 * fixed list of cluster names. The per-Application progressive sync status is kept in memory (upstream
 * persists it in `status.applicationStatus`), and a change of it queues another reconcile, as the status
 * write's own watch event does upstream.
 *
 * Read from argoproj/argo-cd (main, Argo CD 3.5 line):
 * - `applicationset/progressivesync/progressive_sync.go`: `PerformProgressiveSyncs` (the order below),
 *   `buildAppDependencyList` and `labelMatchedExpression` (steps select Applications by label with `In` /
 *   `NotIn` only; an `In` on a missing label does not select; an Application no step selects is step -1),
 *   `UpdateApplicationSetApplicationStatus` (an Application without an entry starts Waiting; a change of
 *   `status.sync.revision(s)` or of the spec against the generated one (automated sync disabled on both)
 *   makes it Waiting, and a Waiting one that is Synced goes straight to Healthy (or Progressing when not
 *   Healthy) without a sync; Pending moves to Progressing only when `status.reconciledAt` is unset or later
 *   than the transition and `status.operationState.startedAt` is strictly later than the Pending transition,
 *   or on an InvalidSpecError / UnknownError condition; Progressing moves to Healthy only with health
 *   Healthy and sync Synced), `GetLatestWaitingTransitionTimeOfAppset` / `hasPendingChanges`,
 *   `ensureApplicationsReconciled` / `checkAllApplicationsReconciled` / `needsReconcile` (after a change
 *   every Application must report a `reconciledAt` not before the latest Waiting transition, else it gets
 *   the `argocd.argoproj.io/refresh` annotation and nothing progresses in that pass), `getAppsToSync` (the
 *   steps up to the first one that is not all Healthy), `UpdateApplicationSetApplicationStatusProgress`
 *   (Waiting → Pending within `maxUpdate`, an int or a percentage rounded down but at least 1 above 0 %,
 *   counting Pending and Progressing ones of the step), `SyncDesiredApplications` / `disableAutomatedSync`
 *   / `syncApplication` (every generated Application gets `syncPolicy.automated.enabled: false`; a Pending
 *   one in a step allowed to sync gets an `operation` on every pass, pinned to the revisions recorded for it,
 *   retry limit 5, prune from the automated policy).
 * - `applicationset/controllers/applicationset_controller.go`: `Reconcile` (generate, progressive sync,
 *   then `createOrUpdateInCluster`), `createOrUpdateInCluster` (spec replaced; `operation` set only when the
 *   generated one has it; annotations, labels and finalizers replaced by the template's, except annotations
 *   in `preservedFields.annotations` and the defaults `notified.notifications.argoproj.io` and
 *   `argocd.argoproj.io/refresh`, labels in `preservedFields.labels`, and `post-delete-finalizer.argocd.argoproj.io*`
 *   finalizers; an update that conflicts fails the pass, which is retried with backoff),
 *   `shouldRequeueApplicationSet` (an owned Application's change queues a reconcile only when its spec,
 *   annotations, labels or finalizers differ, or, with progressive syncs, its health or sync status, or the
 *   phase or startedAt of an operation state both versions have; `reconciledAt` alone does not), and
 *   `getMinRequeueAfter` (the generators' requeue interval, 180 s for clusterDecisionResource here).
 * - `pkg/apis/application/v1alpha1/types.go`: `ApplicationStatus.GetRevisions` (`sync.revisions`, else
 *   `[sync.revision]` when set, else empty).
 *
 * Left out: generator evaluation (the clusters are given), validation of projects and destinations, deletion
 * and reverse deletion order, the ApplicationSet's conditions and metrics annotations.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ARGOCD_API_VERSION, REFRESH_ANNOTATION } from '../../src/model/core/keys.js';
import { errorCode, type TestCluster } from './cluster.js';
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
    operationState?: { phase?: string; startedAt?: string };
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
const POST_DELETE_FINALIZER_PREFIX = 'post-delete-finalizer.argocd.argoproj.io';
/** Waiting because of a change (upstream tells these apart from new Applications by their message). */
const REVISION_CHANGED = 'Waiting: the revision changed';
const SPEC_CHANGED = 'Waiting: the spec changed';
const BOTH_CHANGED = 'Waiting: the revision and the spec changed';
const PENDING_CHANGE_MESSAGES = new Set([REVISION_CHANGED, SPEC_CHANGED, BOTH_CHANGED]);

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

function revisionsOf(app: App): string[] {
  const sync = app.status?.sync;
  if (sync?.revisions?.length) return [...sync.revisions];
  return sync?.revision ? [sync.revision] : [];
}

function isAutomated(spec: Obj): boolean {
  const automated = spec.syncPolicy?.automated;
  return automated !== undefined && automated !== null && automated.enabled !== false;
}

/** `syncPolicy.automated.enabled = false` where an automated policy exists. */
function withAutomatedDisabled(spec: Obj): Obj {
  if (!spec.syncPolicy?.automated) return spec;
  return { ...spec, syncPolicy: { ...spec.syncPolicy, automated: { ...spec.syncPolicy.automated, enabled: false } } };
}

function ownedBy(app: App, appSet: string): boolean {
  return (app.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.kind === 'ApplicationSet' && ref.name === appSet,
  );
}

/** upstream shouldRequeueApplicationSet, progressive syncs enabled. */
export function shouldRequeueApplicationSet(before: App, after: App): boolean {
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
  /** `applicationsetcontroller.refresh.grace.period` (seconds). @default 0 */
  readonly refreshGracePeriodSeconds?: number;
}

/** The applicationset-controller of one RollingSync ApplicationSet. */
export class ProgressiveSyncSim {
  /** `status.applicationStatus` as the controller would persist it. */
  applicationStatus: AppStatusEntry[] = [];
  /** Every state transition, in order. */
  readonly transitions: AppTransition[] = [];
  /** Reconciles run, and Application writes made (creates, updates, refresh annotations). */
  reconciles = 0;
  writes = 0;
  private readonly errors: unknown[] = [];
  private readonly seen = new Map<string, App>();
  private streams: ObjectStream[] = [];
  private running = false;
  private dirty = false;
  private stopped = false;
  private failures = 0;
  private requeueTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private idle: Promise<void> = Promise.resolve();
  private readonly raw: RawClient;

  constructor(
    private readonly cluster: TestCluster,
    private readonly kubeConfig: KubeConfig,
    private readonly options: ProgressiveSyncSimOptions,
  ) {
    this.raw = new RawClient(kubeConfig);
  }

  /** Starts watching the ApplicationSet and its Applications, and reconciles. */
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
          if (type !== 'MODIFIED' || !before || shouldRequeueApplicationSet(before, app)) this.enqueue();
        },
      ),
    );
    this.streams.push(
      await streamObjects<ApplicationSetObject>(
        this.kubeConfig,
        `/apis/argoproj.io/v1alpha1/namespaces/${namespace}/applicationsets`,
        { fieldSelector: `metadata.name=${name}` },
        () => this.enqueue(),
      ),
    );
  }

  /** Stops reconciling; throws the first error a reconcile met that was not a retried conflict. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const stream of this.streams) stream.stop();
    clearTimeout(this.requeueTimer);
    clearTimeout(this.retryTimer);
    await this.idle;
    for (const stream of this.streams) {
      const error = stream.error();
      if (error) throw error instanceof Error ? error : new Error(String(error));
    }
    const fatal = this.errors.find((e) => errorCode(e) !== 409);
    if (fatal) throw fatal instanceof Error ? fatal : new Error(String(fatal));
  }

  /** The entry of one Application. */
  statusOf(application: string): AppStatusEntry | undefined {
    return this.applicationStatus.find((entry) => entry.application === application);
  }

  /** Problems met so far, for failure messages. */
  problems(): string[] {
    return this.errors.map((e) => String((e as Error)?.message ?? e));
  }

  private enqueue(): void {
    if (this.stopped) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = true;
    this.idle = (async () => {
      do {
        this.dirty = false;
        try {
          await this.reconcile();
          this.failures = 0;
        } catch (error) {
          this.errors.push(error);
          // controller-runtime's rate limiter: exponential from 5 ms, capped here at 1 s.
          const delay = Math.min(1000, 5 * 2 ** this.failures++);
          clearTimeout(this.retryTimer);
          this.retryTimer = setTimeout(() => this.enqueue(), delay);
        }
      } while (this.dirty && !this.stopped);
      this.running = false;
    })();
  }

  private async reconcile(): Promise<void> {
    const { namespace, name } = this.options;
    const appSet = await this.cluster.get<ApplicationSetObject>({
      apiVersion: ARGOCD_API_VERSION,
      kind: 'ApplicationSet',
      namespace,
      name,
    });
    if (!appSet || appSet.metadata.deletionTimestamp || this.stopped) return;
    this.reconciles += 1;
    const desired = this.generate(appSet);
    const current = (await this.cluster.list<App>(ARGOCD_API_VERSION, 'Application', { namespace })).filter((app) =>
      ownedBy(app, name),
    );
    const before = JSON.stringify(this.applicationStatus);
    let appsToSync = new Map<string, boolean>();
    const rollingSync = this.rollingSyncEnabled(appSet);
    if (!appSet.spec.strategy && this.applicationStatus.length > 0) this.applicationStatus = [];
    else if (appSet.spec.strategy) appsToSync = await this.performProgressiveSyncs(appSet, current, desired);
    const valid = rollingSync ? this.syncDesiredApplications(appsToSync, desired) : desired;
    // The status write comes first upstream, and its watch event queues the next pass.
    if (JSON.stringify(this.applicationStatus) !== before) this.dirty = true;
    await this.createOrUpdateInCluster(appSet, valid);
    const requeueSeconds = Math.min(
      ...(appSet.spec.generators ?? []).flatMap((g) =>
        Object.values(g)
          .map((v) => v?.requeueAfterSeconds)
          .filter((v): v is number => typeof v === 'number' && v > 0),
      ),
    );
    clearTimeout(this.requeueTimer);
    if (Number.isFinite(requeueSeconds)) {
      this.requeueTimer = setTimeout(() => this.enqueue(), requeueSeconds * 1000);
      this.requeueTimer.unref();
    }
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

  private async performProgressiveSyncs(
    appSet: ApplicationSetObject,
    current: App[],
    desired: App[],
  ): Promise<Map<string, boolean>> {
    const { steps, stepOf } = this.buildAppDependencyList(appSet, desired);
    const previousWaitingTime = this.latestWaitingTransition();
    this.updateApplicationStatus(current, desired, stepOf);
    if (!(await this.ensureApplicationsReconciled(current, previousWaitingTime))) return new Map();
    const appsToSync = this.getAppsToSync(steps, current);
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

  private latestWaitingTransition(): string | undefined {
    let latest: string | undefined;
    for (const entry of this.applicationStatus) {
      if (entry.status !== 'Waiting' || !PENDING_CHANGE_MESSAGES.has(entry.message)) continue;
      if (latest === undefined || Date.parse(entry.lastTransitionTime) > Date.parse(latest))
        latest = entry.lastTransitionTime;
    }
    return latest;
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
    const now = stamp(Date.now());
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
      const specChanged = wanted !== undefined && !equivalent(withAutomatedDisabled(wanted.spec), app.spec);
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

  private async ensureApplicationsReconciled(
    current: App[],
    previousWaitingTime: string | undefined,
  ): Promise<boolean> {
    const since = previousWaitingTime ?? this.latestWaitingTransition();
    if (since === undefined) return true;
    const grace = this.options.refreshGracePeriodSeconds ?? 0;
    if (grace > 0 && Date.now() - Date.parse(since) < grace * 1000) return false;
    const behind = current.filter((app) => {
      const reconciledAt = app.status?.reconciledAt;
      return reconciledAt === undefined || Date.parse(reconciledAt) < Date.parse(since);
    });
    if (behind.length === 0) return true;
    for (const app of behind) {
      if (app.metadata.annotations?.[REFRESH_ANNOTATION]) continue;
      await this.cluster.mergePatch(
        {
          apiVersion: ARGOCD_API_VERSION,
          kind: 'Application',
          namespace: app.metadata.namespace,
          name: app.metadata.name,
        },
        { metadata: { annotations: { [REFRESH_ANNOTATION]: 'normal' } } },
      );
      this.writes += 1;
    }
    return false;
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
    const now = stamp(Date.now());
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
      const revisions = entry.targetRevisions;
      const sync: Obj = {};
      if (spec.sources?.length) sync.revisions = [...revisions];
      else if (revisions.length > 0) sync.revision = revisions[0];
      const operation: Obj = {
        initiatedBy: { username: 'applicationset-controller', automated: true },
        info: [{ name: 'Reason', value: 'RollingSync step (simulated applicationset-controller)' }],
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
    let firstError: unknown;
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
      try {
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
          ...(live.metadata.finalizers ?? []).filter((f) => f.startsWith(POST_DELETE_FINALIZER_PREFIX)),
        ];
        const owners = live.metadata.ownerReferences ?? [];
        const next: App = {
          ...live,
          metadata: {
            ...live.metadata,
            annotations,
            labels,
            finalizers,
            ownerReferences: owners.some((o) => o.controller && o.uid === owner.uid)
              ? owners
              : [...owners.filter((o) => !o.controller), owner],
          },
          spec: generated.spec,
          ...(generated.operation ? { operation: generated.operation } : {}),
        };
        if (equivalent(live, next)) continue;
        await this.raw.replace(next as never);
        this.writes += 1;
      } catch (error) {
        firstError ??= error;
      }
    }
    if (firstError !== undefined) throw firstError instanceof Error ? firstError : new Error(String(firstError));
  }
}
