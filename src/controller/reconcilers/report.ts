/**
 * The fleet-report duty (docs/controller/fleet-reports.md). Key = ApplicationSet (`<namespace>/<name>`), pull or
 * agent-managed (rows of agent-model Applications come from their own status, which the argocd-agent principal keeps in
 * step with the spoke; they have no ManifestWork). Events on ApplicationSets, PlacementDecisions, hub Applications and
 * ManifestWorks map to the affected ApplicationSet keys; each reconcile reads the cache, calls the pure
 * computeFleetReport, and writes the FleetReport (object via server-side apply, status via the status subresource) only
 * when its content changed. The only timer is the moment a row would turn Stale, returned as a requeue.
 *
 * Reports are not watched (so a hub without the FleetReport CRD still runs every other duty, with this
 * one failing loudly and retrying): the reconciler remembers what each report holds. It learns it from
 * the server the first time it sees a key, and again every `verifyAfterMs`, by applying the report
 * object (a no-op on the server when nothing changed) and reading the status in the answer; a report
 * deleted or edited by hand is therefore put back within that interval, and condition transition times
 * survive controller restarts.
 */
import { canonicalJson } from '../../model/core/canonical-json.js';
import {
  HOSTING_APPSET_ANNOTATION,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
} from '../../model/core/keys.js';
import { manifestWorkName } from '../../model/core/names.js';
import { type Application, type KubeObject, type ManifestWork } from '../../model/core/types.js';
import { owningApplicationSet, targetCluster } from '../../model/delivery/manifestwork.js';
import {
  computeFleetReport,
  decisionFeedsApplicationSet,
  fleetReportShell,
  fleetReportStatusWrite,
  isReportedApplicationSet,
  toMulticlusterApplicationSetReport,
  type ApplicationSet,
  type FleetReport,
  type FleetReportStatus,
  type PlacementDecision,
} from '../../model/report/report.js';
import { objectKey, splitKey, type CacheReader } from '../../kube/cache.js';
import type { KubeWriter } from '../../kube/client.js';
import type { ReconcileResult, Reconciler, ReconcilerContext, WatchSpec } from '../runtime/reconciler.js';
import {
  APPLICATION,
  APPLICATION_SET,
  FLEET_REPORT,
  MANIFEST_WORK,
  MULTICLUSTER_APPSET_REPORT,
  PLACEMENT_DECISION,
  type ResourceKind,
} from '../../kube/resources.js';

/** Cache indexes this reconciler adds. */
export const REPORT_NAMESPACE_INDEX = 'report/namespace';
export const REPORT_APPSET_INDEX = 'report/applicationset';
export const REPORT_HUB_APP_INDEX = 'report/hub-application';

/** Margin added to the stale deadline so the recheck lands after it, not a hair before. */
const RECHECK_MARGIN_MS = 500;

export interface ReportReconcilerOptions {
  /** Seconds without feedback before a row is Stale; 0 switches staleness off. */
  readonly staleAfterSeconds: number;
  /** Also write ACM's MulticlusterApplicationSetReport next to each FleetReport. */
  readonly multiclusterReports: boolean;
  /** Concurrent reconciles. @default 2 */
  readonly workers?: number;
  /** Re-read a report from the server at least this often (the controller passes its resync period). @default 300000 */
  readonly verifyAfterMs?: number;
}

const namespaceOf = (object: KubeObject): string[] => (object.metadata.namespace ? [object.metadata.namespace] : []);

function appSetKeyOfApp(object: KubeObject | undefined): string[] {
  if (!object) return [];
  const key = owningApplicationSet(object);
  return key ? [key] : [];
}

function hubAppKey(object: KubeObject): string[] {
  const ns = object.metadata.annotations?.[HUB_APP_NAMESPACE_ANNOTATION];
  const name = object.metadata.annotations?.[HUB_APP_NAME_ANNOTATION];
  return ns && name ? [`${ns}/${name}`] : [];
}

/** What the server holds for a report, as last read or written. */
interface Known {
  /** Canonical JSON of the object without status (metadata this reconciler sets, and spec). */
  shell: string;
  status: FleetReportStatus | undefined;
  /** When the server's copy was last read (ms epoch). */
  checkedAt: number;
}

/** Writes a FleetReport's status through the status subresource. */
export type StatusWriter = (kind: ResourceKind, object: KubeObject & { status: unknown }) => Promise<KubeObject>;

/** The ApplicationSet keys a PlacementDecision (now or before an update) feeds. */
function keysForDecision(
  cache: CacheReader,
  decision: PlacementDecision,
  previous: PlacementDecision | undefined,
): string[] {
  const keys = new Set<string>();
  const namespace = decision.metadata.namespace;
  if (!namespace) return [];
  for (const appSet of cache.byIndex<ApplicationSet>(APPLICATION_SET.id, REPORT_NAMESPACE_INDEX, namespace)) {
    if (!isReportedApplicationSet(appSet)) continue;
    if (decisionFeedsApplicationSet(appSet, decision) || (previous && decisionFeedsApplicationSet(appSet, previous)))
      keys.add(objectKey(appSet));
  }
  return [...keys];
}

/** The ApplicationSet key of the Application a ManifestWork delivers. */
function keysForWork(cache: CacheReader, work: KubeObject): string[] {
  const hosting = work.metadata.annotations?.[HOSTING_APPSET_ANNOTATION];
  if (hosting && hosting.includes('/')) return [hosting];
  // Works written by other tools may lack the hosting annotation: go through the hub Application.
  return hubAppKey(work).flatMap((key) => appSetKeyOfApp(cache.get(APPLICATION.id, key)));
}

/** The events that bring an ApplicationSet's key: it, its decisions, its Applications and their works. */
function reportWatches(cache: CacheReader): WatchSpec[] {
  return [
    {
      kind: APPLICATION_SET,
      indexes: { [REPORT_NAMESPACE_INDEX]: namespaceOf },
      keysFor: (object) => [objectKey(object)],
    },
    {
      kind: PLACEMENT_DECISION,
      indexes: { [REPORT_NAMESPACE_INDEX]: namespaceOf },
      keysFor: (object, previous) => keysForDecision(cache, object, previous),
    },
    {
      kind: APPLICATION,
      indexes: { [REPORT_APPSET_INDEX]: (object) => appSetKeyOfApp(object) },
      keysFor: (object, previous) => [...new Set([...appSetKeyOfApp(object), ...appSetKeyOfApp(previous)])],
    },
    {
      kind: MANIFEST_WORK,
      indexes: { [REPORT_HUB_APP_INDEX]: hubAppKey },
      keysFor: (object, previous) => [
        ...new Set([...keysForWork(cache, object), ...(previous ? keysForWork(cache, previous) : [])]),
      ],
    },
  ];
}

/** The works that may deliver `apps`: by the pullfleet name, plus any pointing back at the app. */
function candidateWorks(cache: CacheReader, apps: readonly Application[]): ManifestWork[] {
  const works = new Map<string, ManifestWork>();
  for (const app of apps) {
    const cluster = targetCluster(app);
    if (!cluster) continue;
    const byName = cache.get<ManifestWork>(
      MANIFEST_WORK.id,
      `${cluster}/${manifestWorkName(app.metadata.namespace ?? '', app.metadata.name)}`,
    );
    if (byName) works.set(objectKey(byName), byName);
    for (const work of cache.byIndex<ManifestWork>(MANIFEST_WORK.id, REPORT_HUB_APP_INDEX, objectKey(app)))
      works.set(objectKey(work), work);
  }
  return [...works.values()];
}

export class ReportReconciler implements Reconciler {
  readonly name = 'fleet-report';
  readonly workers: number;
  readonly watches: readonly WatchSpec[];
  private readonly known = new Map<string, Known>();
  private readonly writtenMcas = new Map<string, string>();
  /** Keys whose report was deleted while their ApplicationSet is absent (so later events do not delete again). */
  private readonly removed = new Set<string>();

  constructor(
    private readonly cache: CacheReader,
    private readonly writer: KubeWriter,
    private readonly writeStatus: StatusWriter,
    private readonly now: () => Date,
    private readonly options: ReportReconcilerOptions,
  ) {
    this.workers = options.workers ?? 2;
    this.watches = reportWatches(cache);
  }

  /** Entries this replica keeps per report (known reports, ACM reports written, reports deleted): a gauge for leaks. */
  bookkeeping(): number {
    return this.known.size + this.writtenMcas.size + this.removed.size;
  }

  resyncKeys(): string[] {
    // Deleted reports are remembered only until the next resync, so ApplicationSets that come and go leave
    // nothing behind; a late event for one of them costs at most one more DELETE of a missing object.
    this.removed.clear();
    const keys = new Set<string>();
    for (const appSet of this.cache.list<ApplicationSet>(APPLICATION_SET.id))
      if (isReportedApplicationSet(appSet)) keys.add(objectKey(appSet));
    // Reports this replica wrote whose ApplicationSet has gone meanwhile are cleaned up by their own reconcile.
    for (const key of this.known.keys()) keys.add(key);
    return [...keys].sort();
  }

  /** One run: read the cache, compute the report, write the object, its status and ACM's report when they change. */
  async reconcile(key: string): Promise<ReconcileResult | void> {
    const { namespace = '' } = splitKey(key);
    const appSet = this.cache.get<ApplicationSet>(APPLICATION_SET.id, key);
    const now = this.now();
    let known = this.known.get(key);
    if (known && now.getTime() - known.checkedAt >= (this.options.verifyAfterMs ?? 300_000)) known = undefined;

    const applications = appSet ? this.cache.byIndex<Application>(APPLICATION.id, REPORT_APPSET_INDEX, key) : [];
    const compute = (previous: FleetReportStatus | undefined) =>
      computeFleetReport({
        applicationSet: appSet,
        decisions: appSet
          ? this.cache.byIndex<PlacementDecision>(PLACEMENT_DECISION.id, REPORT_NAMESPACE_INDEX, namespace)
          : [],
        applications,
        works: candidateWorks(this.cache, applications),
        now,
        ...(previous ? { previous } : {}),
        staleAfterSeconds: this.options.staleAfterSeconds,
      });
    let result = compute(known?.status);
    if (!result) return this.removeReport(key, appSet);

    this.removed.delete(key);
    const held = await this.confirmShell(key, result.report, known, now);
    // Conditions keep the transition times the server already holds.
    if (!known) result = compute(held.status)!;
    const statusWrite = fleetReportStatusWrite(result.report, held.status);
    if (statusWrite) {
      await this.writeStatus(FLEET_REPORT, statusWrite);
      held.status = statusWrite.status;
    }
    if (this.options.multiclusterReports) await this.writeMulticlusterReport(key, result.report);
    if (result.recheckAt)
      return { requeueAfterMs: Math.max(0, result.recheckAt.getTime() - now.getTime()) + RECHECK_MARGIN_MS };
    return undefined;
  }

  /**
   * The ApplicationSet is gone, being deleted or no longer reported: its report goes too (garbage collection
   * does the same through the owner reference when the ApplicationSet is deleted).
   */
  private async removeReport(key: string, appSet: ApplicationSet | undefined): Promise<void> {
    const { namespace = '', name } = splitKey(key);
    if (this.known.has(key) || ((!appSet || appSet.metadata.deletionTimestamp) && !this.removed.has(key))) {
      await this.writer.delete(FLEET_REPORT, namespace, name);
      if (this.options.multiclusterReports) await this.writer.delete(MULTICLUSTER_APPSET_REPORT, namespace, name);
      this.removed.add(key);
    }
    this.known.delete(key);
    this.writtenMcas.delete(key);
  }

  /**
   * What the server holds for the report: as known, unless the report object (without status) changed or is not
   * known, in which case it is applied (creating or confirming it) and the server's answer tells the status.
   */
  private async confirmShell(key: string, report: FleetReport, known: Known | undefined, now: Date): Promise<Known> {
    const shell = fleetReportShell(report);
    const shellJson = canonicalJson(shell);
    if (known && known.shell === shellJson) return known;
    const stored = await this.writer.apply<FleetReport>(FLEET_REPORT, shell);
    const confirmed: Known = { shell: shellJson, status: stored.status, checkedAt: now.getTime() };
    this.known.set(key, confirmed);
    return confirmed;
  }

  /** Writes ACM's MulticlusterApplicationSetReport of the report when it differs from the one last written. */
  private async writeMulticlusterReport(key: string, report: FleetReport): Promise<void> {
    const mcas = toMulticlusterApplicationSetReport(report);
    const json = canonicalJson(mcas);
    if (this.writtenMcas.get(key) === json) return;
    await this.writer.apply(MULTICLUSTER_APPSET_REPORT, mcas);
    this.writtenMcas.set(key, json);
  }
}

/** The factory the controller manager runs; undefined when fleet reports are switched off. */
export function createReportReconciler(context: ReconcilerContext): Reconciler | undefined {
  const config = context.config;
  if (!config.fleetReports) return undefined;
  const writer = context.writer;
  const writeStatus: StatusWriter = async (kind, object) => {
    if (!writer.applyStatus) throw new Error('the controller writer cannot write the status subresource');
    return writer.applyStatus(kind, object);
  };
  return new ReportReconciler(context.cache, writer, writeStatus, () => context.now(), {
    staleAfterSeconds: context.config.staleAfterSeconds,
    multiclusterReports: config.multiclusterReports,
    verifyAfterMs: config.resyncSeconds * 1000,
  });
}
