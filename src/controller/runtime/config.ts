/** Controller settings, their defaults, and how flags and environment variables map onto them. */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { FeedbackScrape } from '../../model/core/types.js';
import { isShardCount, MAX_SHARDS } from '../../model/reconcile/shards.js';

/** The controller's settings; the binary sets each from a flag or an environment variable. */
export interface ControllerConfig {
  /** Namespace of the hub Argo CD, where blank cluster Secrets are kept. @default 'argocd' */
  argoNamespace: string;
  /** Namespace the controller runs in; holds the leader Lease. @default 'pullfleet-system' */
  namespace: string;
  /** How spoke work agents collect feedback for the works the controller writes. @default FeedbackScrape.POLL */
  feedbackScrapeType: FeedbackScrape;
  /** Feedback older than this (seconds since the spoke Application's reconciledAt) raises a FeedbackStaleWarning. 0 disables. @default 900 */
  staleAfterSeconds: number;
  /** A forwarded `operation` the spoke has not started after this many seconds raises an OperationPendingWarning (it stays forwarded). 0 disables. @default 600 */
  operationTimeoutSeconds: number;
  /** Single-tenant hubs: allow any namespace to target any ManagedCluster (never local-cluster). @default false */
  relaxTenancy: boolean;
  /**
   * Hubs taken over from ACM: a pull Application pullfleet did not render, which pullfleet delivers although ACM's
   * propagation controller would refuse it (no PlacementDecision in its namespace selects the cluster), carries an
   * `AcmTenancyWarning` condition. @default false
   */
  acmTenancyWarnings: boolean;
  /** Every key is reconciled again at least this often (level-triggered safety net). @default 300 */
  resyncSeconds: number;
  /** Concurrent reconciles for hub Applications (each has at most one API request in flight). @default 32 */
  workers: number;
  /**
   * Shards the fleet's clusters are split into; each shard has a Lease of its own
   * (`<leaseName>-shard-<i>`) and replicas share them out. 1: one Lease, one active replica. @default 1
   */
  shards: number;
  /** Keep blank Argo CD cluster Secrets for clusters pull ApplicationSets may select. @default true */
  clusterSecrets: boolean;
  /** Keep a FleetReport per pull ApplicationSet (needs the FleetReport CRD installed). @default true */
  fleetReports: boolean;
  /** Also write ACM's MulticlusterApplicationSetReport per pull ApplicationSet (needs that CRD). @default false */
  multiclusterReports: boolean;
  /**
   * Works ask work agents for a resource summary (a condition rule, OCM 1.0 and later). Off for a hub whose
   * ManifestWork CRD has no `conditionRules`; left on, the controller notices such a hub by itself. @default true
   */
  resourceSummaries: boolean;
  /** Only the holder of the Lease reconciles (safe with several replicas). @default true */
  leaderElection: boolean;
  /** Name of the coordination.k8s.io/v1 Lease. @default 'pullfleet-controller' */
  leaseName: string;
  /** Lease duration. @default 15 */
  leaseDurationSeconds: number;
  /** A leader that cannot renew within this many seconds stops reconciling. @default 10 */
  renewDeadlineSeconds: number;
  /** How often candidates try to acquire and leaders renew. @default 2 */
  retryPeriodSeconds: number;
  /** This replica's identity in the Lease. @default `<hostname>-<random>` */
  identity: string;
  /** Port of the /metrics, /healthz and /readyz server; undefined runs no server, 0 picks a free port. @default undefined (the CLI uses 8080) */
  httpPort?: number;
  /** Address the HTTP server binds. @default '0.0.0.0' */
  httpHost: string;
  /** Server-side timeout of each watch request before it is reopened; the client gives up 30 s after it. @default 300 */
  watchTimeoutSeconds: number;
  /** Timeout of every other API request (list pages, gets, writes); Lease requests also stay within the renew deadline. @default 30 */
  requestTimeoutSeconds: number;
}

export function defaultConfig(): ControllerConfig {
  return {
    argoNamespace: 'argocd',
    namespace: 'pullfleet-system',
    feedbackScrapeType: FeedbackScrape.POLL,
    staleAfterSeconds: 900,
    operationTimeoutSeconds: 600,
    relaxTenancy: false,
    acmTenancyWarnings: false,
    resyncSeconds: 300,
    workers: 32,
    shards: 1,
    clusterSecrets: true,
    fleetReports: true,
    multiclusterReports: false,
    resourceSummaries: true,
    leaderElection: true,
    leaseName: 'pullfleet-controller',
    leaseDurationSeconds: 15,
    renewDeadlineSeconds: 10,
    retryPeriodSeconds: 2,
    identity: `${hostname()}-${randomBytes(4).toString('hex')}`,
    httpHost: '0.0.0.0',
    watchTimeoutSeconds: 300,
    requestTimeoutSeconds: 30,
  };
}

/** Defaults overlaid with `overrides` (undefined values ignored), validated. */
export function resolveConfig(overrides: Partial<ControllerConfig> = {}): ControllerConfig {
  const config = defaultConfig();
  for (const [key, value] of Object.entries(overrides))
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  const problems: string[] = [];
  if (!Object.values(FeedbackScrape).includes(config.feedbackScrapeType))
    problems.push(`feedbackScrapeType must be Poll or Watch, got "${String(config.feedbackScrapeType)}"`);
  for (const key of [
    'staleAfterSeconds',
    'operationTimeoutSeconds',
    'resyncSeconds',
    'leaseDurationSeconds',
    'renewDeadlineSeconds',
    'retryPeriodSeconds',
    'watchTimeoutSeconds',
    'requestTimeoutSeconds',
  ] as const) {
    if (!Number.isFinite(config[key]) || config[key] < 0)
      problems.push(`${key} must be a number >= 0, got ${config[key]}`);
  }
  if (!Number.isInteger(config.workers) || config.workers < 1)
    problems.push(`workers must be an integer >= 1, got ${config.workers}`);
  if (!isShardCount(config.shards))
    problems.push(`shards must be an integer from 1 to ${MAX_SHARDS}, got ${config.shards}`);
  else if (config.shards > 1 && !config.leaderElection)
    problems.push(
      `shards ${config.shards} needs leader election: each shard's Lease is what keeps two replicas off the same clusters; remove --leader-elect=false or use one shard`,
    );
  if (config.leaderElection && config.renewDeadlineSeconds >= config.leaseDurationSeconds) {
    problems.push(
      `renewDeadlineSeconds (${config.renewDeadlineSeconds}) must be shorter than leaseDurationSeconds (${config.leaseDurationSeconds})`,
    );
  }
  if (config.leaderElection && config.retryPeriodSeconds >= config.renewDeadlineSeconds) {
    problems.push(
      `retryPeriodSeconds (${config.retryPeriodSeconds}) must be shorter than renewDeadlineSeconds (${config.renewDeadlineSeconds})`,
    );
  }
  // Zero here would mean a hot loop (retry period) or requests that give up at once.
  for (const key of [
    'resyncSeconds',
    'retryPeriodSeconds',
    'leaseDurationSeconds',
    'watchTimeoutSeconds',
    'requestTimeoutSeconds',
  ] as const) {
    if (config[key] === 0) problems.push(`${key} must be > 0`);
  }
  if (problems.length > 0) throw new Error(`invalid controller configuration: ${problems.join('; ')}`);
  return config;
}
