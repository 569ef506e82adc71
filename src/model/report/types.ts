/**
 * The shapes of the fleet report: the FleetReport object (pullfleet.io/v1alpha1) with its rows and summary,
 * the ApplicationSet and PlacementDecision parts the report reads, and the input and result of
 * {@link computeFleetReport}. Types only.
 */
import type { Application, Condition, JsonObject, KubeObject, ManifestWork } from '../core/types.js';
import type { FLEET_REPORT_STATES } from './report-crd.js';

/** The state of a report row: one of {@link FLEET_REPORT_STATES}, worst first. */
export type ReportState = (typeof FLEET_REPORT_STATES)[number];
/** The status of a {@link Condition}: `True`, `False` or `Unknown`. */
export type ConditionStatus = Condition['status'];

/** The label selector of a clusterDecisionResource generator. */
export interface GeneratorLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

/** An ApplicationSet generator; only the parts the report reads are typed. */
export interface ApplicationSetGenerator {
  clusterDecisionResource?: { configMapRef?: string; labelSelector?: GeneratorLabelSelector; [key: string]: unknown };
  matrix?: { generators?: ApplicationSetGenerator[]; [key: string]: unknown };
  merge?: { generators?: ApplicationSetGenerator[]; [key: string]: unknown };
  [key: string]: unknown;
}

/** An Argo CD ApplicationSet (argoproj.io/v1alpha1). */
export interface ApplicationSet extends KubeObject {
  spec: {
    generators?: ApplicationSetGenerator[];
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };
      [key: string]: unknown;
    };
    [key: string]: unknown;
  };
  status?: JsonObject;
}

/** An OCM PlacementDecision (cluster.open-cluster-management.io/v1beta1). */
export interface PlacementDecision extends KubeObject {
  status?: { decisions?: Array<{ clusterName: string; reason?: string }> };
}

/**
 * One row of a FleetReport (`status.clusters[]`): a hub Application on one cluster the ApplicationSet's
 * placements selected, or a selected cluster that has none.
 */
export interface FleetReportRow {
  /** The ManagedCluster (spoke) the row is about. */
  cluster: string;
  /** The row's state, decided from what the hub sees; sync status is a separate facet (`syncStatus`). */
  state: ReportState;
  /** Name of the hub Application delivering to the cluster; absent when the ApplicationSet generated none for it. */
  application?: string;
  /**
   * Name of the ManifestWork (in the cluster's namespace on the hub) that carries the hub Application to
   * the spoke, or the name it should have when it is missing; absent without a hub Application, and in
   * rows of the agent models (they have no ManifestWork).
   */
  manifestWork?: string;
  /** The spoke Application's Argo CD sync status (`status.sync.status`, such as `Synced`), as last reported. */
  syncStatus?: string;
  /** The spoke Application's Argo CD health status (`status.health.status`, such as `Healthy`), as last reported. */
  healthStatus?: string;
  /**
   * The revision the spoke Application last synced to (`status.sync.revision`), such as a Git commit SHA; for
   * a multi-source app its `status.sync.revisions`, one per source in `spec.sources` order, joined with `,`.
   */
  revision?: string;
  /** Phase of the spoke Application's last sync operation (`status.operationState.phase`, such as `Failed`). */
  operationPhase?: string;
  /** When that sync operation started (`status.operationState.startedAt`). */
  operationStartedAt?: string;
  /**
   * The message of that sync operation (`status.operationState.message`): the spoke's own error text, cut
   * to 512 characters.
   */
  operationMessage?: string;
  /** Status of the ManifestWork's `Applied` condition: whether the work agent applied the Application on the spoke. */
  workApplied?: ConditionStatus;
  /** Status of the ManifestWork's `Available` condition: whether the Application it applied exists on the spoke. */
  workAvailable?: ConditionStatus;
  /** When the spoke's Argo CD last reconciled the Application (`status.reconciledAt`); staleness is judged by it. */
  lastFeedbackTime?: string;
  /** Why the row is in its state and what to check, when the hub can tell (such as a missing ManifestWork). */
  message?: string;
  /**
   * Counts of the app's resources on the spoke, from the resource summary the work agent reports (only the
   * counts that are not zero, and `total`); absent when the hub has none.
   */
  resources?: ReportResourceCounts;
  /** The first resources that are Degraded, Missing or OutOfSync, worst first (at most 3). */
  problemResources?: ReportResource[];
  /** Images the app runs on the spoke (`status.summary.images` there; at most 10). */
  images?: string[];
  /** Why the resource data is absent or partial (the agent cannot build the summary, or the list was cut). */
  resourceMessage?: string;
}

/** Resource counts of a report row: how many of the app's resources are in each health state, and out of sync. */
export interface ReportResourceCounts {
  /** Every resource of the app. */
  total: number;
  /** Resources whose health is `Healthy`. */
  healthy?: number;
  /** Resources whose health is `Progressing`. */
  progressing?: number;
  /** Resources whose health is `Degraded`. */
  degraded?: number;
  /** Resources whose health is `Suspended`. */
  suspended?: number;
  /** Resources whose health is `Missing`. */
  missing?: number;
  /** Resources whose health is `Unknown`. */
  unknown?: number;
  /** Resources whose sync status is `OutOfSync`. */
  outOfSync?: number;
}

/** A resource named in a report row. */
export interface ReportResource {
  /** The resource's kind, such as `Deployment`. */
  kind: string;
  /** Its namespace on the spoke; absent for cluster-scoped kinds. */
  namespace?: string;
  /** Its name. */
  name: string;
  /** Its Argo CD health, when the spoke reports one. */
  health?: string;
  /** Its Argo CD sync status. */
  sync?: string;
  /** Its health message (cut to 120 characters). */
  message?: string;
}

/**
 * Counts over a report's rows (`status.summary`), taken before any row is left out for size. With one
 * Application per cluster, the counts by state add up to `clusters`.
 */
export interface FleetReportSummary {
  /** How many distinct clusters the ApplicationSet is expected to reach (its placements' decisions). */
  clusters: number;
  /** Rows whose current feedback (the row neither Missing nor Stale) says `Synced`. */
  synced: number;
  /** Rows whose current feedback (the row neither Missing nor Stale) says `OutOfSync`. */
  outOfSync: number;
  /** Rows in state `Healthy`. */
  healthy: number;
  /** Rows in state `Progressing`. */
  progressing: number;
  /** Rows in state `Degraded`. */
  degraded: number;
  /** Rows in state `Missing`. */
  missing: number;
  /** Rows in state `Stale`. */
  stale: number;
  /** Rows in state `Unknown`. */
  unknown: number;
}

/** The `status` of a FleetReport, which the hub controller writes through the status subresource. */
export interface FleetReportStatus {
  /** The ApplicationSet's `metadata.generation` the report was computed from. */
  observedGeneration?: number;
  /** Names of the Placements whose decisions the ApplicationSet's clusterDecisionResource generators read, sorted. */
  placements?: string[];
  /** Counts over every row, including the ones left out of `clusters`. */
  summary: FleetReportSummary;
  /** The rows, sorted by cluster and then application, without the ones counted in `omittedRows`. */
  clusters: FleetReportRow[];
  /** Rows left out to keep the object under the size limit (see {@link MAX_ROWS_BYTES}); absent when none. */
  omittedRows?: number;
  /**
   * Rows whose resource details (`problemResources`, `images`) were left out to stay under the size limit before
   * any row was; their counts stay. Absent when none.
   */
  omittedResourceDetails?: number;
  /** `Ready` (every cluster synced and healthy) and `Degraded` (some cluster degraded, missing or stale). */
  conditions: Condition[];
}

/** A FleetReport object (pullfleet.io/v1alpha1). */
export interface FleetReport extends KubeObject {
  /** What the report describes: the ApplicationSet, and the staleness threshold its rows were judged by. */
  spec: {
    /** Name of the ApplicationSet the report describes, in the same namespace (the report has its name too). */
    applicationSet: string;
    /**
     * Seconds without feedback after which a row is `Stale` (the controller's `--stale-after`); absent
     * when staleness checks are switched off.
     */
    staleAfterSeconds?: number;
  };
  /** Rows, summary and conditions, as the hub controller last wrote them; absent until its first write. */
  status?: FleetReportStatus;
}

export interface FleetReportInput {
  /** The ApplicationSet; undefined when it no longer exists. */
  readonly applicationSet: ApplicationSet | undefined;
  /** PlacementDecisions in the ApplicationSet's namespace (extra ones are filtered out by label). */
  readonly decisions: readonly PlacementDecision[];
  /** Hub Applications (those not owned by the ApplicationSet are ignored). */
  readonly applications: readonly Application[];
  /** ManifestWorks that may deliver those Applications (others are ignored). */
  readonly works: readonly ManifestWork[];
  readonly now: Date;
  /** The report as last written, so condition transition times survive unchanged conditions. */
  readonly previous?: FleetReportStatus;
  /** Seconds without feedback after which a row is Stale; 0 switches staleness off. @default DEFAULT_STALE_AFTER_SECONDS */
  readonly staleAfterSeconds?: number;
  /** Row budget in bytes. @default MAX_ROWS_BYTES */
  readonly maxRowsBytes?: number;
}

export interface FleetReportResult {
  readonly report: FleetReport;
  /**
   * When a fresh row turns Stale if nothing else happens: the earliest such moment, or undefined when
   * no row can go stale. A reconciler re-checks then (staleness is the only change without an event).
   */
  readonly recheckAt?: Date;
}
