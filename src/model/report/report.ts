/**
 * The fleet report: for one pull ApplicationSet, one row per cluster its Placement(s) selected, built
 * from what the hub can see (PlacementDecisions, hub Applications, ManifestWorks and their status
 * feedback). Pure: the controller and `pullfleet status` both call these functions with observed
 * objects and a clock.
 *
 * Row states, decided in this order:
 * 1. `Missing`: no hub Application for the cluster, or no ManifestWork for it.
 * 2. `Degraded`: the work is not applied (`Applied=False`) or reports `Degraded=True`.
 * 3. `Stale`: the last feedback (`reconciledAt` of the spoke Application) is older than the stale
 *    threshold, or the work is older than the threshold and has never reported feedback.
 * 4. From the feedback: `Degraded` when the last operation Failed/Errored or health is Degraded;
 *    `Progressing` while an operation runs or health is Progressing; `Degraded` when health is Missing
 *    (resources absent and nothing creating them); `Healthy` when health is Healthy or Suspended;
 *    otherwise `Unknown` (including "no feedback yet").
 * Sync status is a separate facet: a Healthy row can be OutOfSync.
 *
 * Rows of agent-model Applications (label `pullfleet.io/delivery-model: agent-managed|agent-autonomous`)
 * come from the hub Application's own status, which the argocd-agent principal keeps in step with the
 * spoke: `Missing` when the principal has no Application for the cluster, `Stale` when its
 * `status.reconciledAt` is older than the threshold (or, with none, the Application is older than the
 * threshold), then the same feedback rules (step 4). There is no ManifestWork for them. For
 * agent-autonomous spokes the hub learns what to expect from the lists synth renders (see
 * expected-apps.ts): an expected Application the principal does not mirror is `Missing`.
 *
 * Stored rows are sorted by cluster, then application, so a report only changes when the fleet does;
 * {@link sortRowsProblemsFirst} gives the display order (worst state first).
 */
import { type ApplicationFeedback, readApplicationFeedback, workCondition } from '../runtime/feedback.js';
import {
  ARGOCD_API_VERSION,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
  LOCAL_CLUSTER,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  PLACEMENT_LABEL,
  PULL_LABEL,
} from '../core/keys.js';
import { owningApplicationSet, spokeAppNamespace, targetCluster } from '../delivery/manifestwork.js';
import { manifestWorkName, parseBool } from '../core/names.js';
import { FLEET_REPORT_API_VERSION, FLEET_REPORT_KIND, FLEET_REPORT_STATES } from './report-crd.js';
import type { Application, Condition, JsonObject, KubeObject, ManifestWork } from '../core/types.js';
import { DELIVERY_MODEL_LABEL, SPOKE_APPS_APPLICATION } from '../delivery/delivery-model.js';
import type { ExpectedApplications } from '../runtime/expected-apps.js';
import { canonicalJson } from '../core/canonical-json.js';
import { matchesSelector } from '../core/selectors.js';
import { kubeTime } from '../core/time.js';
import {
  countResources,
  imagesFromStatus,
  omittedText,
  readResourceSummary,
  resourceRank,
  resourcesFromStatus,
  type ResourceCounts,
  type ResourceSummaryReading,
  type SummaryResource,
} from '../runtime/resource-summary.js';

/** The hub Application condition the controller sets when it cannot deliver (same value as the status model's). */
const DELIVERY_ERROR_CONDITION_TYPE = 'DeliveryError';
/** Feedback older than this makes a row Stale unless the caller chooses another threshold. */
export const DEFAULT_STALE_AFTER_SECONDS = 900;
/**
 * Most bytes of rows a report stores. An object must stay under etcd's 1.5 MiB; at about 280 bytes a row
 * this keeps every row up to roughly 3,500 clusters. Beyond it the least interesting rows are left out
 * (synced and healthy first, then by state, best first) and counted in `omittedRows`; the summary still
 * counts every cluster.
 */
export const MAX_ROWS_BYTES = 1_000_000;
/** Longest operation message kept in a row (a report holds hundreds of rows; objects are capped at ~1.5 MB). */
export const MAX_ROW_MESSAGE_LENGTH = 512;
/** Most resources a row names in `problemResources` (the first Degraded, Missing and OutOfSync ones). */
export const MAX_ROW_PROBLEM_RESOURCES = 3;
/** Most images a row lists. */
export const MAX_ROW_IMAGES = 10;
/** Longest health message kept per resource in a row. */
export const MAX_ROW_RESOURCE_MESSAGE_LENGTH = 120;

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

function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function truncate(text: string | undefined, max = MAX_ROW_MESSAGE_LENGTH): string | undefined {
  if (text === undefined) return undefined;
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Whether an ApplicationSet delivers through the pull model (its template carries the pull label). */
export function isPullApplicationSet(appSet: Pick<ApplicationSet, 'spec'>): boolean {
  return parseBool(appSet.spec?.template?.metadata?.labels?.[PULL_LABEL]);
}

/** Label carrying an Application's (or ApplicationSet template's) delivery model. */
/** The delivery-model label synth puts on hub Applications and ApplicationSets (one key: {@link DELIVERY_MODEL_LABEL}). */
export const REPORT_DELIVERY_MODEL_LABEL = DELIVERY_MODEL_LABEL;
/** The ApplicationSet template destination that routes each generated Application to its agent. */
const AGENT_DESTINATION_TEMPLATES: readonly string[] = ['{{name}}', '{{ name }}', '{{.name}}', '{{ .name }}'];

/** Whether an object's delivery-model label names an argocd-agent model (`agent-…`). */
export function isAgentModel(
  object: Pick<KubeObject, 'metadata'> | { metadata?: { labels?: Record<string, string> } } | undefined,
): boolean {
  const value = object?.metadata?.labels?.[REPORT_DELIVERY_MODEL_LABEL]?.trim();
  return value !== undefined && value.startsWith('agent-');
}

/**
 * The cluster (agent) an agent-model hub Application belongs to: `spec.destination.name` when set
 * (destination-based mapping, and what pullfleet renders for managed agents), else the Application's
 * namespace (the principal keeps each agent's Applications, and mirrors an autonomous agent's, in a
 * namespace named after the agent).
 */
export function agentCluster(app: Pick<Application, 'metadata' | 'spec'>): string | undefined {
  const destination = app.spec?.destination?.name?.trim();
  if (destination && destination !== 'in-cluster') return destination;
  if (app.metadata.labels?.[REPORT_DELIVERY_MODEL_LABEL]?.trim() === 'agent-autonomous')
    return app.metadata.namespace || undefined;
  return destination ? undefined : app.metadata.namespace || undefined;
}

/** The cluster a report row of `app` is about, whatever its model. */
export function reportCluster(app: Application): string | undefined {
  return isAgentModel(app) ? agentCluster(app) : targetCluster(app);
}

/**
 * Whether an ApplicationSet delivers through argocd-agent in managed mode: its template carries the
 * delivery-model label `agent-managed` and routes by `destination.name: '{{name}}'`.
 */
export function isAgentApplicationSet(appSet: Pick<ApplicationSet, 'spec'>): boolean {
  const template = appSet.spec?.template as
    { metadata?: { labels?: Record<string, string> }; spec?: { destination?: { name?: unknown } } } | undefined;
  if (template?.metadata?.labels?.[REPORT_DELIVERY_MODEL_LABEL]?.trim() !== 'agent-managed') return false;
  const name = template.spec?.destination?.name;
  return typeof name === 'string' && AGENT_DESTINATION_TEMPLATES.includes(name.trim());
}

/** Whether an ApplicationSet gets a FleetReport: it delivers through the pull model or through managed agents. */
export function isReportedApplicationSet(appSet: Pick<ApplicationSet, 'spec'>): boolean {
  return isPullApplicationSet(appSet) || isAgentApplicationSet(appSet);
}

/** Every clusterDecisionResource generator of an ApplicationSet, including those nested in matrix/merge. */
export function clusterDecisionGenerators(
  appSet: Pick<ApplicationSet, 'spec'>,
): NonNullable<ApplicationSetGenerator['clusterDecisionResource']>[] {
  const found: NonNullable<ApplicationSetGenerator['clusterDecisionResource']>[] = [];
  const visit = (generators: ApplicationSetGenerator[] | undefined): void => {
    for (const generator of generators ?? []) {
      if (generator.clusterDecisionResource) found.push(generator.clusterDecisionResource);
      visit(generator.matrix?.generators);
      visit(generator.merge?.generators);
    }
  };
  visit(appSet.spec?.generators);
  return found;
}

/** Names of the Placements an ApplicationSet's generators select decisions from (sorted). */
export function placementNames(appSet: Pick<ApplicationSet, 'spec'>): string[] {
  const names = new Set<string>();
  for (const generator of clusterDecisionGenerators(appSet)) {
    const name = generator.labelSelector?.matchLabels?.[PLACEMENT_LABEL];
    if (name) names.add(name);
  }
  return [...names].sort();
}

/** Whether a PlacementDecision feeds one of the ApplicationSet's generators. */
export function decisionFeedsApplicationSet(
  appSet: ApplicationSet,
  decision: Pick<PlacementDecision, 'metadata'>,
): boolean {
  if (decision.metadata.namespace !== appSet.metadata.namespace) return false;
  return clusterDecisionGenerators(appSet).some((generator) =>
    matchesSelector(generator.labelSelector ?? {}, decision.metadata.labels),
  );
}

/**
 * The clusters an ApplicationSet is expected to reach: the union of `status.decisions[].clusterName`
 * over every PlacementDecision its generators read (a Placement spreads its decisions over several
 * objects of at most 100 entries), without the hub's own `local-cluster`. Sorted, no duplicates.
 */
export function expectedClusters(appSet: ApplicationSet, decisions: readonly PlacementDecision[]): string[] {
  const clusters = new Set<string>();
  for (const decision of decisions) {
    if (!decisionFeedsApplicationSet(appSet, decision)) continue;
    for (const entry of decision.status?.decisions ?? []) {
      const name = entry.clusterName?.trim();
      if (name && name !== LOCAL_CLUSTER) clusters.add(name);
    }
  }
  return [...clusters].sort();
}

/** ManifestWorks as a list, or grouped by namespace (cluster) for large fleets. */
export type WorkSet = readonly ManifestWork[] | ReadonlyMap<string, readonly ManifestWork[]>;

/** Groups works by namespace, so finding a cluster's works does not scan the whole fleet. */
export function worksByNamespace(works: readonly ManifestWork[]): Map<string, ManifestWork[]> {
  const grouped = new Map<string, ManifestWork[]>();
  for (const work of works) {
    const ns = work.metadata.namespace ?? '';
    const list = grouped.get(ns);
    if (list) list.push(work);
    else grouped.set(ns, [work]);
  }
  return grouped;
}

/** The ManifestWork delivering `app`: by the pullfleet name first, else by the hub-application annotations. */
export function findWorkForApplication(app: Application, works: WorkSet): ManifestWork | undefined {
  const cluster = targetCluster(app);
  if (!cluster) return undefined;
  const hubNamespace = app.metadata.namespace ?? '';
  const name = manifestWorkName(hubNamespace, app.metadata.name);
  const inCluster = Array.isArray(works)
    ? works.filter((work) => work.metadata.namespace === cluster)
    : ((works as ReadonlyMap<string, readonly ManifestWork[]>).get(cluster) ?? []);
  return (
    inCluster.find((work) => work.metadata.name === name) ??
    inCluster.find(
      (work) =>
        work.metadata.annotations?.[HUB_APP_NAMESPACE_ANNOTATION] === hubNamespace &&
        work.metadata.annotations?.[HUB_APP_NAME_ANNOTATION] === app.metadata.name,
    )
  );
}

function conditionStatus(work: ManifestWork, type: string): ConditionStatus {
  return workCondition(work, type)?.status ?? 'Unknown';
}

function conditionMessage(condition: Condition | undefined): string {
  return condition?.message || condition?.reason || 'no reason given';
}

/** The state of a row from the spoke Application's feedback alone (step 4 of the rules above). */
/** Copies what the spoke reported into a row (messages truncated to the row limit). */
function copyFeedback(row: FleetReportRow, feedback: ApplicationFeedback): void {
  if (feedback.syncStatus) row.syncStatus = feedback.syncStatus;
  if (feedback.healthStatus) row.healthStatus = feedback.healthStatus;
  const revision = feedback.syncRevisions?.length ? feedback.syncRevisions.join(',') : feedback.syncRevision;
  if (revision) row.revision = revision;
  if (feedback.operationStatePhase) row.operationPhase = feedback.operationStatePhase;
  if (feedback.operationStateStartedAt) row.operationStartedAt = feedback.operationStateStartedAt;
  const opMessage = truncate(feedback.operationStateMessage);
  if (opMessage) row.operationMessage = opMessage;
}

/** Row counts: `total` and every count that is not zero. */
function rowCounts(counts: ResourceCounts): ReportResourceCounts {
  const row: ReportResourceCounts = { total: counts.total };
  const keys = ['healthy', 'progressing', 'degraded', 'suspended', 'missing', 'unknown', 'outOfSync'] as const;
  for (const key of keys) if (counts[key] > 0) row[key] = counts[key];
  return row;
}

/** The resources a row names: the first Degraded, Missing and OutOfSync ones, worst first. */
function problemResourcesOf(resources: readonly SummaryResource[]): ReportResource[] {
  // Only problems are ranked and sorted (this runs for every row of every report).
  const problems: Array<{ resource: SummaryResource; index: number; rank: number }> = [];
  resources.forEach((resource, index) => {
    const rank = resourceRank(resource);
    if (rank <= 3) problems.push({ resource, index, rank });
  });
  return problems
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .slice(0, MAX_ROW_PROBLEM_RESOURCES)
    .map(({ resource }) => ({
      kind: resource.kind,
      ...(resource.namespace ? { namespace: resource.namespace } : {}),
      name: resource.name,
      ...(resource.health ? { health: resource.health } : {}),
      ...(resource.sync ? { sync: resource.sync } : {}),
      ...(resource.message ? { message: truncate(resource.message, MAX_ROW_RESOURCE_MESSAGE_LENGTH)! } : {}),
    }));
}

function setResources(
  row: FleetReportRow,
  counts: ResourceCounts,
  resources: readonly SummaryResource[],
  images: readonly string[],
): void {
  row.resources = rowCounts(counts);
  const problems = problemResourcesOf(resources);
  if (problems.length > 0) row.problemResources = problems;
  if (images.length > 0) row.images = images.slice(0, MAX_ROW_IMAGES);
}

/** Copies what the work agent's resource summary says into a row (counts, first problems, images, notes). */
function copyResourceSummary(
  row: FleetReportRow,
  reading: ResourceSummaryReading,
  appHealth: string | undefined,
): void {
  const notes: string[] = [];
  if (reading.state === 'Reported') {
    const summary = reading.summary;
    setResources(row, summary.counts, summary.resources, summary.images);
    if (summary.healthSource === 'appTree' && appHealth !== undefined && appHealth !== 'Healthy')
      notes.push(
        "the spoke's Argo CD keeps no per-resource health (resourceHealthSource appTree): set controller.resource.health.persist=true there",
      );
    const more = omittedText(summary);
    if (more) notes.push(`the summary lists ${summary.resources.length} of ${summary.counts.total} resources, ${more}`);
  } else if (reading.state === 'Rejected') {
    notes.push(`the work agent could not build the resource summary: ${reading.message}`);
  } else if (reading.state === 'Unsupported') {
    notes.push(
      'the work agent reports no resource summary (conditionRules need OCM 1.0 or later); scalar status still flows',
    );
  }
  if (notes.length > 0) row.resourceMessage = truncate(notes.join('; '));
}

/** Resource data of an Application whose own status lists its resources (agent-model apps; hub apps pullfleet wrote). */
function copyStatusResources(row: FleetReportRow, app: Pick<Application, 'status'>): void {
  if (!Array.isArray(app.status?.resources)) return;
  const resources = resourcesFromStatus(app.status);
  setResources(row, countResources(resources), resources, imagesFromStatus(app.status));
}

export function feedbackState(feedback: ApplicationFeedback | undefined): ReportState {
  if (!feedback) return 'Unknown';
  const phase = feedback.operationStatePhase;
  const health = feedback.healthStatus;
  if (phase === 'Failed' || phase === 'Error' || health === 'Degraded') return 'Degraded';
  if (phase === 'Running' || phase === 'Terminating' || health === 'Progressing') return 'Progressing';
  if (health === 'Missing') return 'Degraded';
  if (health === 'Healthy' || health === 'Suspended') return 'Healthy';
  return 'Unknown';
}

/** A hint naming the likely fix when no hub Application exists for an expected cluster. */
function missingApplicationMessage(appSetName: string, cluster: string, agent = false): string {
  if (agent) {
    return `ApplicationSet ${appSetName} has not generated an Application for cluster ${cluster} (the principal needs an Argo CD cluster Secret named "${cluster}" for its agent: check the GitOpsCluster that registers it and that the agent is connected)`;
  }
  return `ApplicationSet ${appSetName} has not generated an Application for cluster ${cluster} (an Argo CD cluster Secret named "${cluster}" must exist on the hub)`;
}

interface RowResult {
  row: FleetReportRow;
  /** Epoch ms at which this row turns stale when nothing changes. */
  staleAt?: number;
}

/** One row: the hub Application `app` (if any) delivering to `cluster`. */
export function computeRow(
  cluster: string,
  app: Application | undefined,
  works: WorkSet,
  now: Date,
  staleAfterSeconds: number,
  appSetName = '',
): RowResult {
  if (!app) return { row: { cluster, state: 'Missing', message: missingApplicationMessage(appSetName, cluster) } };
  if (isAgentModel(app)) return computeAgentRow(cluster, app, now, staleAfterSeconds);
  const hubNamespace = app.metadata.namespace ?? '';
  const row: FleetReportRow = { cluster, state: 'Unknown', application: app.metadata.name };
  const work = findWorkForApplication(app, works);
  if (!work) {
    row.manifestWork = manifestWorkName(hubNamespace, app.metadata.name);
    row.state = 'Missing';
    const deliveryError = app.status?.conditions?.find(
      (condition) => condition.type === DELIVERY_ERROR_CONDITION_TYPE,
    )?.message;
    row.message = truncate(
      `ManifestWork ${cluster}/${row.manifestWork} does not exist${deliveryError ? `: ${deliveryError}` : ''}`,
    );
    return { row };
  }
  row.manifestWork = work.metadata.name;
  row.workApplied = conditionStatus(work, 'Applied');
  row.workAvailable = conditionStatus(work, 'Available');

  const feedback = readApplicationFeedback(work, spokeAppNamespace(app), app.metadata.name);
  if (feedback) copyFeedback(row, feedback);
  copyResourceSummary(
    row,
    readResourceSummary(work, spokeAppNamespace(app), app.metadata.name),
    feedback?.healthStatus,
  );
  const lastFeedback = parseTime(feedback?.reconciledAt);
  if (lastFeedback !== undefined) row.lastFeedbackTime = kubeTime(new Date(lastFeedback));

  const applied = workCondition(work, 'Applied');
  const degraded = workCondition(work, 'Degraded');
  if (applied?.status === 'False') {
    row.state = 'Degraded';
    row.message = truncate(`ManifestWork not applied on the spoke: ${conditionMessage(applied)}`);
    return { row };
  }
  if (degraded?.status === 'True') {
    row.state = 'Degraded';
    row.message = truncate(`ManifestWork reports Degraded: ${conditionMessage(degraded)}`);
    return { row };
  }

  const thresholdMs = staleAfterSeconds * 1000;
  const nowMs = now.getTime();
  if (thresholdMs <= 0) {
    // Staleness checks switched off.
    row.state = feedbackState(feedback);
    if (!feedback) row.message = 'waiting for the first status feedback from the spoke';
    return { row };
  }
  if (lastFeedback !== undefined) {
    const staleAt = lastFeedback + thresholdMs;
    if (nowMs >= staleAt) {
      row.state = 'Stale';
      row.message = `no status feedback from the spoke since ${row.lastFeedbackTime} (threshold ${staleAfterSeconds}s)`;
      return { row };
    }
    row.state = feedbackState(feedback);
    return { row, staleAt };
  }
  const created = parseTime(work.metadata.creationTimestamp);
  if (!feedback) {
    if (created !== undefined && nowMs >= created + thresholdMs) {
      row.state = 'Stale';
      row.message = `no status feedback from the spoke since the ManifestWork was created at ${kubeTime(new Date(created))} (threshold ${staleAfterSeconds}s)`;
      return { row };
    }
    row.message = 'waiting for the first status feedback from the spoke';
    return { row, staleAt: created === undefined ? undefined : created + thresholdMs };
  }
  // Feedback without a reconcile time: its age cannot be judged, so it is taken as current.
  row.state = feedbackState(feedback);
  return { row };
}

/** A non-empty list of strings (a multi-source app's `status.sync.revisions`), else undefined. */
function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string') ? value : undefined;
}

/** What the principal mirrored onto an agent-model hub Application, in feedback terms. */
export function applicationStatusFeedback(app: Pick<Application, 'status'>): ApplicationFeedback | undefined {
  const status = app.status;
  if (!status) return undefined;
  // Plain assignments: this runs once per row of reports with thousands of rows.
  const feedback: { -readonly [K in keyof ApplicationFeedback]: ApplicationFeedback[K] } = {};
  let any = false;
  const sync = status.sync;
  if (sync?.status) {
    feedback.syncStatus = sync.status;
    any = true;
  }
  if (sync?.revision) {
    feedback.syncRevision = sync.revision;
    any = true;
  }
  const revisions = stringList(sync?.revisions);
  if (revisions) {
    feedback.syncRevisions = revisions;
    any = true;
  }
  const health = status.health?.status;
  if (health) {
    feedback.healthStatus = health;
    any = true;
  }
  const operation = status.operationState;
  if (operation?.phase) {
    feedback.operationStatePhase = operation.phase;
    any = true;
  }
  if (operation?.startedAt) {
    feedback.operationStateStartedAt = operation.startedAt;
    any = true;
  }
  if (operation?.message) {
    feedback.operationStateMessage = operation.message;
    any = true;
  }
  if (status.reconciledAt) {
    feedback.reconciledAt = status.reconciledAt;
    any = true;
  }
  return any ? feedback : undefined;
}

/**
 * One row for an agent-model hub Application: from its own status (the principal mirrors the spoke's),
 * staleness from `status.reconciledAt`. No ManifestWork is involved.
 */
export function computeAgentRow(cluster: string, app: Application, now: Date, staleAfterSeconds: number): RowResult {
  const row: FleetReportRow = { cluster, state: 'Unknown', application: app.metadata.name };
  const feedback = applicationStatusFeedback(app);
  if (feedback) copyFeedback(row, feedback);
  copyStatusResources(row, app);
  const lastReconcile = parseTime(feedback?.reconciledAt);
  if (lastReconcile !== undefined) row.lastFeedbackTime = kubeTime(new Date(lastReconcile));
  const thresholdMs = staleAfterSeconds * 1000;
  const nowMs = now.getTime();
  const waiting = 'waiting for the first status from the agent (the principal mirrors it onto this Application)';
  if (thresholdMs <= 0) {
    row.state = feedbackState(feedback);
    if (!feedback) row.message = waiting;
    return { row };
  }
  if (lastReconcile !== undefined) {
    const staleAt = lastReconcile + thresholdMs;
    if (nowMs >= staleAt) {
      row.state = 'Stale';
      row.message = `no status from the agent of ${cluster} since ${row.lastFeedbackTime} (threshold ${staleAfterSeconds}s): check that the agent is connected to the principal`;
      return { row };
    }
    row.state = feedbackState(feedback);
    return { row, staleAt };
  }
  const created = parseTime(app.metadata.creationTimestamp);
  if (!feedback) {
    if (created !== undefined && nowMs >= created + thresholdMs) {
      row.state = 'Stale';
      row.message = `no status from the agent of ${cluster} since the Application was created at ${kubeTime(new Date(created))} (threshold ${staleAfterSeconds}s): check that the agent is connected to the principal`;
      return { row };
    }
    row.message = waiting;
    return { row, staleAt: created === undefined ? undefined : created + thresholdMs };
  }
  // Status without a reconcile time: its age cannot be judged, so it is taken as current.
  row.state = feedbackState(feedback);
  return { row };
}

const EMPTY_SUMMARY: FleetReportSummary = {
  clusters: 0,
  synced: 0,
  outOfSync: 0,
  healthy: 0,
  progressing: 0,
  degraded: 0,
  missing: 0,
  stale: 0,
  unknown: 0,
};

/**
 * Integer counts over rows. `healthy`, `progressing`, `degraded`, `missing`, `stale` and `unknown`
 * count rows by state (with one Application per cluster they add up to `clusters`); `synced` and
 * `outOfSync` count rows whose current (neither missing nor stale) feedback says so; `clusters` is the
 * number of distinct expected clusters.
 */
export function summarize(rows: readonly FleetReportRow[]): FleetReportSummary {
  const summary = { ...EMPTY_SUMMARY };
  summary.clusters = new Set(rows.map((row) => row.cluster)).size;
  for (const row of rows) {
    switch (row.state) {
      case 'Healthy':
        summary.healthy++;
        break;
      case 'Progressing':
        summary.progressing++;
        break;
      case 'Degraded':
        summary.degraded++;
        break;
      case 'Missing':
        summary.missing++;
        break;
      case 'Stale':
        summary.stale++;
        break;
      case 'Unknown':
        summary.unknown++;
        break;
    }
    if (row.state !== 'Missing' && row.state !== 'Stale') {
      if (row.syncStatus === 'Synced') summary.synced++;
      else if (row.syncStatus === 'OutOfSync') summary.outOfSync++;
    }
  }
  return summary;
}

/** Whether a row needs attention in a CI gate: degraded, missing or stale. */
export function isProblemRow(row: Pick<FleetReportRow, 'state'>): boolean {
  return row.state === 'Degraded' || row.state === 'Missing' || row.state === 'Stale';
}

function clusterList(rows: readonly FleetReportRow[], limit = 10): string {
  const names = [...new Set(rows.map((row) => row.cluster))];
  const shown = names.slice(0, limit).join(', ');
  return names.length > limit ? `${shown} and ${names.length - limit} more` : shown;
}

/**
 * Carries `lastTransitionTime` over from the previous condition of the same type when its status did
 * not change; otherwise stamps `now`.
 */
export function withTransitionTime(
  next: Omit<Condition, 'lastTransitionTime'>,
  previous: readonly Condition[] | undefined,
  now: Date,
): Condition {
  const before = previous?.find((condition) => condition.type === next.type);
  const lastTransitionTime =
    before && before.status === next.status && before.lastTransitionTime ? before.lastTransitionTime : kubeTime(now);
  return { ...next, lastTransitionTime };
}

/** The Ready and Degraded conditions for a set of rows. */
export function reportConditions(
  rows: readonly FleetReportRow[],
  summary: FleetReportSummary,
  previous: readonly Condition[] | undefined,
  now: Date,
  generation?: number,
): Condition[] {
  const withGeneration = generation === undefined ? {} : { observedGeneration: generation };
  const problems = rows.filter(isProblemRow);
  let degraded: Omit<Condition, 'lastTransitionTime'>;
  if (problems.length === 0) {
    degraded = {
      type: 'Degraded',
      status: 'False',
      reason: 'NoProblems',
      message: 'no cluster is degraded, missing or stale',
      ...withGeneration,
    };
  } else {
    const reason =
      summary.degraded > 0 ? 'ClustersDegraded' : summary.missing > 0 ? 'ClustersMissing' : 'FeedbackStale';
    degraded = {
      type: 'Degraded',
      status: 'True',
      reason,
      message: `${summary.degraded} degraded, ${summary.missing} missing, ${summary.stale} stale of ${summary.clusters} clusters: ${clusterList(problems)}`,
      ...withGeneration,
    };
  }
  let ready: Omit<Condition, 'lastTransitionTime'>;
  const notReady = rows.filter((row) => row.state !== 'Healthy' || row.syncStatus !== 'Synced');
  if (rows.length === 0) {
    ready = {
      type: 'Ready',
      status: 'False',
      reason: 'NoClusters',
      message: 'the placement selects no clusters',
      ...withGeneration,
    };
  } else if (notReady.length === 0) {
    ready = {
      type: 'Ready',
      status: 'True',
      reason: 'AllSyncedAndHealthy',
      message: `all ${summary.clusters} clusters are synced and healthy`,
      ...withGeneration,
    };
  } else {
    ready = {
      type: 'Ready',
      status: 'False',
      reason: 'NotAllSyncedAndHealthy',
      message: `${summary.clusters - new Set(notReady.map((row) => row.cluster)).size} of ${summary.clusters} clusters are synced and healthy; waiting for ${clusterList(notReady)}`,
      ...withGeneration,
    };
  }
  return [withTransitionTime(ready, previous, now), withTransitionTime(degraded, previous, now)];
}

function compareText(a: string | undefined, b: string | undefined): number {
  const x = a ?? '';
  const y = b ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Rows in storage order: by cluster, then application. */
export function sortRowsByCluster<T extends Pick<FleetReportRow, 'cluster' | 'application'>>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => compareText(a.cluster, b.cluster) || compareText(a.application, b.application));
}

/** Rows in display order: worst state first (Degraded, Missing, Stale, Unknown, Progressing, Healthy), OutOfSync before Synced, then by cluster. */
export function sortRowsProblemsFirst<T extends FleetReportRow>(rows: readonly T[]): T[] {
  const rank = (row: FleetReportRow): number => FLEET_REPORT_STATES.indexOf(row.state);
  const syncRank = (row: FleetReportRow): number => (row.syncStatus === 'Synced' ? 1 : 0);
  return [...rows].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      syncRank(a) - syncRank(b) ||
      compareText(a.cluster, b.cluster) ||
      compareText(a.application, b.application),
  );
}

/**
 * Rows that fit in `maxBytes` of JSON: all of them when they fit; otherwise the least interesting are
 * dropped first (reverse display order: synced healthy, out-of-sync healthy, progressing, unknown, stale,
 * missing, degraded; later clusters first). Kept rows stay in their original order.
 */
export function fitRows(
  rows: readonly FleetReportRow[],
  maxBytes: number,
): { kept: FleetReportRow[]; omitted: number; omittedDetails: number } {
  const sizeOf = (row: FleetReportRow) => Buffer.byteLength(JSON.stringify(row), 'utf8') + 1;
  const sizes = rows.map(sizeOf);
  let total = sizes.reduce((sum, size) => sum + size, 2);
  if (total <= maxBytes) return { kept: [...rows], omitted: 0, omittedDetails: 0 };
  const dropOrder = sortRowsProblemsFirst(rows.map((row, index) => ({ ...row, index }))).reverse();
  // First the resource details (names of resources, images) of the least interesting rows go; their counts stay.
  const slim = [...rows];
  let omittedDetails = 0;
  for (const candidate of dropOrder) {
    if (total <= maxBytes) break;
    const row = slim[candidate.index];
    if (!row.problemResources && !row.images) continue;
    const { problemResources: _problems, images: _images, ...rest } = row;
    slim[candidate.index] = rest;
    const size = sizeOf(rest);
    total -= sizes[candidate.index] - size;
    sizes[candidate.index] = size;
    omittedDetails++;
  }
  const dropped = new Set<number>();
  for (const candidate of dropOrder) {
    if (total <= maxBytes) break;
    dropped.add(candidate.index);
    total -= sizes[candidate.index];
  }
  return { kept: slim.filter((_, index) => !dropped.has(index)), omitted: dropped.size, omittedDetails };
}

/** The rows and status for an ApplicationSet, given everything observed. */
export function computeFleetReportStatus(input: FleetReportInput & { applicationSet: ApplicationSet }): {
  status: FleetReportStatus;
  recheckAt?: Date;
} {
  const appSet = input.applicationSet;
  const staleAfter = input.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS;
  const key = `${appSet.metadata.namespace}/${appSet.metadata.name}`;
  const owned = input.applications.filter(
    (app) => !app.metadata.deletionTimestamp && owningApplicationSet(app) === key,
  );
  const byCluster = new Map<string, Application[]>();
  for (const app of owned) {
    const cluster = reportCluster(app);
    if (!cluster) continue;
    const list = byCluster.get(cluster) ?? [];
    list.push(app);
    byCluster.set(cluster, list);
  }
  const rows: FleetReportRow[] = [];
  let recheck: number | undefined;
  const works = worksByNamespace(input.works);
  const agentAppSet = isAgentApplicationSet(appSet);
  for (const cluster of expectedClusters(appSet, input.decisions)) {
    const apps = byCluster.get(cluster) ?? [];
    if (apps.length === 0) {
      rows.push({
        cluster,
        state: 'Missing',
        message: missingApplicationMessage(appSet.metadata.name, cluster, agentAppSet),
      });
      continue;
    }
    for (const app of apps) {
      const { row, staleAt } = computeRow(cluster, app, works, input.now, staleAfter, appSet.metadata.name);
      rows.push(row);
      if (staleAt !== undefined && (recheck === undefined || staleAt < recheck)) recheck = staleAt;
    }
  }
  const sorted = sortRowsByCluster(rows);
  const summary = summarize(sorted);
  const { kept, omitted, omittedDetails } = fitRows(sorted, input.maxRowsBytes ?? MAX_ROWS_BYTES);
  const status: FleetReportStatus = {
    ...(appSet.metadata.generation === undefined ? {} : { observedGeneration: appSet.metadata.generation }),
    placements: placementNames(appSet),
    summary,
    clusters: kept,
    ...(omitted > 0 ? { omittedRows: omitted } : {}),
    ...(omittedDetails > 0 ? { omittedResourceDetails: omittedDetails } : {}),
    conditions: reportConditions(sorted, summary, input.previous?.conditions, input.now, appSet.metadata.generation),
  };
  return recheck === undefined ? { status } : { status, recheckAt: new Date(recheck) };
}

/**
 * The FleetReport an ApplicationSet should have, or undefined when it should have none (the
 * ApplicationSet is gone, being deleted, or delivers neither through the pull model nor through managed
 * agents). The report has
 * the ApplicationSet's name and namespace and is owned by it, so Kubernetes deletes it with it.
 */
export function computeFleetReport(input: FleetReportInput): FleetReportResult | undefined {
  const appSet = input.applicationSet;
  if (!appSet || appSet.metadata.deletionTimestamp || !isReportedApplicationSet(appSet)) return undefined;
  const staleAfter = input.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS;
  const { status, recheckAt } = computeFleetReportStatus({ ...input, applicationSet: appSet });
  const report: FleetReport = {
    apiVersion: FLEET_REPORT_API_VERSION,
    kind: FLEET_REPORT_KIND,
    metadata: {
      name: appSet.metadata.name,
      namespace: appSet.metadata.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      ...(appSet.metadata.uid ? { ownerReferences: [applicationSetOwnerReference(appSet)] } : {}),
    },
    spec: { applicationSet: appSet.metadata.name, ...(staleAfter > 0 ? { staleAfterSeconds: staleAfter } : {}) },
    status,
  };
  return recheckAt ? { report, recheckAt } : { report };
}

/** The owner reference tying a report to its ApplicationSet (garbage-collected with it). */
export function applicationSetOwnerReference(appSet: ApplicationSet): {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
} {
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'ApplicationSet',
    name: appSet.metadata.name,
    uid: appSet.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: false,
  };
}

/**
 * Whether two report statuses carry the same content (so the write can be skipped). Compares the
 * canonical JSON of both, ignoring key order.
 */
export function sameReportStatus(a: FleetReportStatus | undefined, b: FleetReportStatus | undefined): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Rows for statically delivered hub Applications (synth rendered their works, so no ApplicationSet
 * groups them): one row per Application, from its ManifestWork when `works` is given, else from the
 * status the controller wrote back onto the hub Application (staleness cannot be judged then).
 */
export function staticApplicationRows(
  apps: readonly Application[],
  works: WorkSet | undefined,
  now: Date,
  staleAfterSeconds = DEFAULT_STALE_AFTER_SECONDS,
): FleetReportRow[] {
  const rows: FleetReportRow[] = [];
  for (const app of apps) {
    const cluster = targetCluster(app) ?? '';
    if (works) {
      rows.push(computeRow(cluster, app, works, now, staleAfterSeconds).row);
      continue;
    }
    const status = app.status ?? {};
    const feedback: ApplicationFeedback = {
      ...(status.sync?.status ? { syncStatus: status.sync.status } : {}),
      ...(status.health?.status ? { healthStatus: status.health.status } : {}),
      ...(status.sync?.revision ? { syncRevision: status.sync.revision } : {}),
      ...(stringList(status.sync?.revisions) ? { syncRevisions: stringList(status.sync?.revisions) } : {}),
      ...(status.operationState?.phase ? { operationStatePhase: status.operationState.phase } : {}),
      ...(status.operationState?.message ? { operationStateMessage: status.operationState.message } : {}),
    };
    const row: FleetReportRow = {
      cluster,
      application: app.metadata.name,
      state: feedbackState(Object.keys(feedback).length ? feedback : undefined),
    };
    copyFeedback(row, feedback);
    copyStatusResources(row, app);
    row.message = 'from the hub Application status (ManifestWorks not readable)';
    rows.push(row);
  }
  return sortRowsByCluster(rows);
}

/**
 * Rows for agent-model hub Applications no ApplicationSet groups (agent-autonomous Applications the
 * principal mirrors, and managed ones rendered one by one): one row per Application, from its status.
 *
 * With `expected` (the lists synth recorded for agent-autonomous spokes, see
 * {@link parseExpectedApplications}), every expected (cluster, Application) pair gets a row too: from the
 * Application the principal mirrors into the namespace named after the cluster when there is one (with or
 * without the delivery-model label), else `Missing` with a message naming the spoke's folder and the
 * bootstrap Application that syncs it. Mirrored Applications nobody expects keep their rows.
 */
export function agentApplicationRows(
  apps: readonly Application[],
  now: Date,
  staleAfterSeconds = DEFAULT_STALE_AFTER_SECONDS,
  expected: readonly ExpectedApplications[] = [],
): FleetReportRow[] {
  const rows: FleetReportRow[] = [];
  const used = new Set<Application>();
  if (expected.length > 0) {
    const byKey = new Map<string, Application>();
    for (const app of apps) byKey.set(`${app.metadata.namespace ?? ''}/${app.metadata.name}`, app);
    const seen = new Set<string>();
    for (const list of expected) {
      for (const name of list.applications) {
        const key = `${list.cluster}/${name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const app = byKey.get(key);
        if (app) {
          used.add(app);
          rows.push(computeAgentRow(list.cluster, app, now, staleAfterSeconds).row);
        } else {
          rows.push({
            cluster: list.cluster,
            application: name,
            state: 'Missing',
            message: truncate(missingAutonomousMessage(list, name)),
          });
        }
      }
    }
  }
  for (const app of apps) {
    if (used.has(app) || !isAgentModel(app)) continue;
    rows.push(computeAgentRow(agentCluster(app) ?? '', app, now, staleAfterSeconds).row);
  }
  return sortRowsByCluster(rows);
}

/** Why an expected autonomous Application has no row of its own, and where to look. */
function missingAutonomousMessage(list: ExpectedApplications, name: string): string {
  const argoNamespace = list.source.split('/')[0] || 'the Argo CD namespace';
  const folder = list.folder ? `${list.folder.replace(/\/+$/, '')}/` : `dist/<hub>/spokes/${list.cluster}/`;
  return `the argocd-agent principal mirrors no Application ${list.cluster}/${name}: the spoke's Argo CD has not created it from its folder ${folder} (expected by ${list.source}); on spoke ${list.cluster} check the bootstrap Application ${argoNamespace}/${SPOKE_APPS_APPLICATION} (synced, pointing at that folder) and that the agent is connected to the principal`;
}

export const MCAS_REPORT_API_VERSION = 'apps.open-cluster-management.io/v1alpha1';
export const MCAS_REPORT_KIND = 'MulticlusterApplicationSetReport';
/** Label ACM puts on a MulticlusterApplicationSetReport: `<namespace>.<applicationset>`. */
export const MCAS_HOSTING_APPSET_LABEL = 'apps.open-cluster-management.io/hosting-applicationset';

/** ACM's MulticlusterApplicationSetReport (apps.open-cluster-management.io/v1alpha1); counts are strings there. */
export interface MulticlusterApplicationSetReport extends KubeObject {
  statuses?: {
    summary?: {
      clusters?: string;
      healthy?: string;
      inProgress?: string;
      notHealthy?: string;
      notSynced?: string;
      synced?: string;
    };
    clusterConditions?: Array<{
      cluster?: string;
      app?: string;
      healthStatus?: string;
      syncStatus?: string;
      syncRevision?: string;
      operationStatePhase?: string;
      operationStateStartedAt?: string;
      conditions?: Array<{ type?: string; message?: string }>;
    }>;
    resources?: Array<{ apiVersion?: string; kind?: string; name?: string; namespace?: string }>;
  };
}

/**
 * The same report in ACM's MulticlusterApplicationSetReport shape, for consoles that read it: same
 * name and namespace as the ApplicationSet, labelled `<namespace>.<name>`. Every expected cluster
 * appears (ACM's own report omits clusters that never reported); a failed sync becomes a `SyncError`
 * condition with the spoke's message, any other problem a condition whose type is the row state.
 * Spoke resources are not known on the hub and are left out.
 */
/**
 * The `hosting-applicationset` label value `<namespace>.<applicationset>` as ACM writes it: cut to the 63
 * characters a label value may have (`%.63s` in ACM's status aggregation), and, where the cut leaves a
 * character a label value may not end with, without it (ACM's own write would be refused there).
 */
function hostingAppSetLabel(value: string): string {
  return value.slice(0, 63).replace(/[^A-Za-z0-9]+$/, '');
}

export function toMulticlusterApplicationSetReport(report: FleetReport): MulticlusterApplicationSetReport {
  const status = report.status;
  const summary = status?.summary ?? EMPTY_SUMMARY;
  const rows = status?.clusters ?? [];
  const namespace = report.metadata.namespace;
  return {
    apiVersion: MCAS_REPORT_API_VERSION,
    kind: MCAS_REPORT_KIND,
    metadata: {
      name: report.metadata.name,
      ...(namespace ? { namespace } : {}),
      labels: {
        [MCAS_HOSTING_APPSET_LABEL]: hostingAppSetLabel(`${namespace}.${report.spec.applicationSet}`),
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
      },
      ...(report.metadata.ownerReferences ? { ownerReferences: report.metadata.ownerReferences } : {}),
    },
    statuses: {
      summary: {
        clusters: String(summary.clusters),
        healthy: String(summary.healthy),
        inProgress: String(summary.progressing),
        // As ACM counts it: a Progressing cluster is also not healthy.
        notHealthy: String(summary.clusters - summary.healthy),
        notSynced: String(summary.clusters - summary.synced),
        synced: String(summary.synced),
      },
      clusterConditions: rows.map((row) => {
        const message = row.operationMessage ?? row.message;
        const syncFailed = row.operationPhase === 'Failed' || row.operationPhase === 'Error';
        const type = row.state === 'Degraded' && syncFailed ? 'SyncError' : row.state;
        return {
          cluster: row.cluster,
          ...(row.application ? { app: `${namespace}/${row.application}` } : {}),
          ...(row.healthStatus ? { healthStatus: row.healthStatus } : {}),
          ...(row.syncStatus ? { syncStatus: row.syncStatus } : {}),
          ...(row.revision ? { syncRevision: row.revision } : {}),
          ...(row.operationPhase ? { operationStatePhase: row.operationPhase } : {}),
          ...(row.operationStartedAt ? { operationStateStartedAt: row.operationStartedAt } : {}),
          ...(row.state !== 'Healthy' && message ? { conditions: [{ type, message }] } : {}),
        };
      }),
    },
  };
}
