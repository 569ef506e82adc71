/**
 * Duty 4: the fleet report. Key = ApplicationSet (`<namespace>/<name>`). Events on ApplicationSets,
 * PlacementDecisions, hub Applications, ManifestWorks and the reports themselves map to the affected
 * ApplicationSet keys; each reconcile reads the cache, calls the pure computeFleetReport, and writes the
 * FleetReport (object via server-side apply, status via the status subresource) only when its content
 * changed. The only timer is the moment a row would turn Stale, returned as a requeue.
 */
import {
  FLEET_REPORT_API_VERSION,
  FLEET_REPORT_GROUP,
  FLEET_REPORT_KIND,
  FLEET_REPORT_PLURAL,
  FLEET_REPORT_VERSION,
  HOSTING_APPSET_ANNOTATION,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MCAS_REPORT_KIND,
  canonicalJson,
  computeFleetReport,
  decisionFeedsApplicationSet,
  isPullApplicationSet,
  manifestWorkName,
  owningApplicationSet,
  sameReportStatus,
  targetCluster,
  toMulticlusterApplicationSetReport,
  type Application,
  type ApplicationSet,
  type FleetReport,
  type FleetReportStatus,
  type KubeObject,
  type ManifestWork,
  type PlacementDecision,
} from '../../model/index.js';
import { objectKey, splitKey, type CacheReader } from '../cache.js';
import type { KubeWriter } from '../kube-client.js';
import type { ReconcileResult, Reconciler, ReconcilerContext, WatchSpec } from '../reconciler.js';
import { APPLICATION, APPLICATION_SET, MANIFEST_WORK, PLACEMENT_DECISION, type ResourceKind } from '../resources.js';

export const FLEET_REPORT: ResourceKind = {
  id: FLEET_REPORT_KIND,
  group: FLEET_REPORT_GROUP,
  version: FLEET_REPORT_VERSION,
  kind: FLEET_REPORT_KIND,
  plural: FLEET_REPORT_PLURAL,
  namespaced: true,
};

export const MULTICLUSTER_APPSET_REPORT: ResourceKind = {
  id: MCAS_REPORT_KIND,
  group: 'apps.open-cluster-management.io',
  version: 'v1alpha1',
  kind: MCAS_REPORT_KIND,
  plural: 'multiclusterapplicationsetreports',
  namespaced: true,
};

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

/** What was last written for a key, so a cache that has not yet seen the write does not cause a second one. */
interface Written {
  readonly statusJson: string;
  readonly status: FleetReportStatus;
  /** resourceVersions of the report from before the write: a cache still showing one of these lags behind. */
  readonly staleVersions: ReadonlySet<string>;
}

/** Writes a FleetReport's status through the status subresource. */
export type StatusWriter = (kind: ResourceKind, object: KubeObject & { status: unknown }) => Promise<KubeObject>;

export class ReportReconciler implements Reconciler {
  readonly name = 'fleet-report';
  readonly workers: number;
  readonly watches: readonly WatchSpec[];
  private readonly written = new Map<string, Written>();
  private readonly writtenMcas = new Map<string, string>();

  constructor(
    private readonly cache: CacheReader,
    private readonly writer: KubeWriter,
    private readonly writeStatus: StatusWriter,
    private readonly now: () => Date,
    private readonly options: ReportReconcilerOptions,
  ) {
    this.workers = options.workers ?? 2;
    this.watches = [
      { kind: APPLICATION_SET, indexes: { [REPORT_NAMESPACE_INDEX]: namespaceOf }, keysFor: (object) => [objectKey(object)] },
      {
        kind: PLACEMENT_DECISION,
        indexes: { [REPORT_NAMESPACE_INDEX]: namespaceOf },
        keysFor: (object, previous) => this.keysForDecision(object as PlacementDecision, previous as PlacementDecision | undefined),
      },
      {
        kind: APPLICATION,
        indexes: { [REPORT_APPSET_INDEX]: (object) => appSetKeyOfApp(object) },
        keysFor: (object, previous) => [...new Set([...appSetKeyOfApp(object), ...appSetKeyOfApp(previous)])],
      },
      {
        kind: MANIFEST_WORK,
        indexes: { [REPORT_HUB_APP_INDEX]: hubAppKey },
        keysFor: (object, previous) => [...new Set([...this.keysForWork(object), ...(previous ? this.keysForWork(previous) : [])])],
      },
      { kind: FLEET_REPORT, keysFor: (object) => [objectKey(object)] },
    ];
  }

  private keysForDecision(decision: PlacementDecision, previous: PlacementDecision | undefined): string[] {
    const keys = new Set<string>();
    const namespace = decision.metadata.namespace;
    if (!namespace) return [];
    for (const appSet of this.cache.byIndex<ApplicationSet>(APPLICATION_SET.id, REPORT_NAMESPACE_INDEX, namespace)) {
      if (!isPullApplicationSet(appSet)) continue;
      if (decisionFeedsApplicationSet(appSet, decision) || (previous && decisionFeedsApplicationSet(appSet, previous))) keys.add(objectKey(appSet));
    }
    return [...keys];
  }

  private keysForWork(work: KubeObject): string[] {
    const hosting = work.metadata.annotations?.[HOSTING_APPSET_ANNOTATION];
    if (hosting && hosting.includes('/')) return [hosting];
    // Works written by other tools may lack the hosting annotation: go through the hub Application.
    return hubAppKey(work).flatMap((key) => appSetKeyOfApp(this.cache.get(APPLICATION.id, key)));
  }

  resyncKeys(): string[] {
    const keys = new Set<string>();
    for (const appSet of this.cache.list<ApplicationSet>(APPLICATION_SET.id)) if (isPullApplicationSet(appSet)) keys.add(objectKey(appSet));
    // Reports whose ApplicationSet is gone (or no longer pull) are cleaned up by their own reconcile.
    for (const report of this.cache.list(FLEET_REPORT.id)) keys.add(objectKey(report));
    return [...keys].sort();
  }

  /** The works that may deliver `apps`: by the pullfleet name, plus any pointing back at the app. */
  private candidateWorks(apps: readonly Application[]): ManifestWork[] {
    const works = new Map<string, ManifestWork>();
    for (const app of apps) {
      const cluster = targetCluster(app);
      if (!cluster) continue;
      const byName = this.cache.get<ManifestWork>(MANIFEST_WORK.id, `${cluster}/${manifestWorkName(app.metadata.namespace ?? '', app.metadata.name)}`);
      if (byName) works.set(objectKey(byName), byName);
      for (const work of this.cache.byIndex<ManifestWork>(MANIFEST_WORK.id, REPORT_HUB_APP_INDEX, objectKey(app))) works.set(objectKey(work), work);
    }
    return [...works.values()];
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const { namespace = '', name } = splitKey(key);
    const appSet = this.cache.get<ApplicationSet>(APPLICATION_SET.id, key);
    const current = this.cache.get<FleetReport>(FLEET_REPORT.id, key);
    const written = this.written.get(key);
    const cacheLags = current?.metadata.resourceVersion !== undefined && written?.staleVersions.has(current.metadata.resourceVersion) === true;
    const observedStatus = cacheLags ? written!.status : current?.status;
    const now = this.now();

    const applications = appSet ? this.cache.byIndex<Application>(APPLICATION.id, REPORT_APPSET_INDEX, key) : [];
    const result = computeFleetReport({
      applicationSet: appSet,
      decisions: appSet ? this.cache.byIndex<PlacementDecision>(PLACEMENT_DECISION.id, REPORT_NAMESPACE_INDEX, namespace) : [],
      applications,
      works: this.candidateWorks(applications),
      now,
      ...(observedStatus ? { previous: observedStatus } : {}),
      staleAfterSeconds: this.options.staleAfterSeconds,
    });

    if (!result) {
      // ApplicationSet gone, being deleted or no longer pull: its report goes too (garbage collection
      // does the same through the owner reference; this also covers reports left by a no-longer-pull set).
      this.written.delete(key);
      if (current && current.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE) {
        await this.writer.delete(FLEET_REPORT, namespace, name, current.metadata.uid ? { uid: current.metadata.uid } : {});
      }
      if (this.options.multiclusterReports && this.writtenMcas.has(key)) {
        await this.writer.delete(MULTICLUSTER_APPSET_REPORT, namespace, name);
        this.writtenMcas.delete(key);
      }
      return;
    }

    const desired = result.report;
    const staleVersions = new Set<string>();
    if (current?.metadata.resourceVersion) staleVersions.add(current.metadata.resourceVersion);
    if (!current || !sameShell(current, desired)) {
      const stored = await this.writer.apply<FleetReport>(FLEET_REPORT, shellOf(desired));
      if (stored.metadata.resourceVersion) staleVersions.add(stored.metadata.resourceVersion);
    }
    if (!sameReportStatus(observedStatus, desired.status)) {
      const status = desired.status!;
      await this.writeStatus(FLEET_REPORT, { apiVersion: FLEET_REPORT_API_VERSION, kind: FLEET_REPORT_KIND, metadata: { name, namespace }, status });
      this.written.set(key, { statusJson: canonicalJson(status), status, staleVersions });
    } else if (written && !cacheLags) {
      this.written.delete(key);
    }

    if (this.options.multiclusterReports) {
      const mcas = toMulticlusterApplicationSetReport(desired);
      const json = canonicalJson(mcas);
      if (this.writtenMcas.get(key) !== json) {
        await this.writer.apply(MULTICLUSTER_APPSET_REPORT, mcas);
        this.writtenMcas.set(key, json);
      }
    }

    if (result.recheckAt) return { requeueAfterMs: Math.max(0, result.recheckAt.getTime() - now.getTime()) + RECHECK_MARGIN_MS };
    return undefined;
  }
}

/** The report without status: what server-side apply on the main resource sets. */
function shellOf(report: FleetReport): FleetReport {
  return { apiVersion: report.apiVersion, kind: report.kind, metadata: report.metadata, spec: report.spec };
}

function sameShell(current: FleetReport, desired: FleetReport): boolean {
  const labelsOk = Object.entries(desired.metadata.labels ?? {}).every(([k, v]) => current.metadata.labels?.[k] === v);
  const owners = (report: FleetReport): string => canonicalJson((report.metadata.ownerReferences ?? []).map((ref) => ({ kind: ref.kind, name: ref.name, uid: ref.uid })));
  return labelsOk && owners(current) === owners(desired) && canonicalJson(current.spec) === canonicalJson(desired.spec);
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
  });
}
