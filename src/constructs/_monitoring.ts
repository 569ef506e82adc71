/**
 * What the controller install's opt-in monitoring renders (internal): the alert rules of its PrometheusRule
 * and the Grafana dashboard. Every expression reads metrics the controller exports
 * (docs/controller/metrics.md, src/controller/runtime/metrics.ts); the alerts are documented there one
 * section each, and each alert's `runbook_url` points at its section.
 */
import type { JsonObject } from '../model/core/types.js';

/** The Prometheus job of the scraped metrics Service (a ServiceMonitor names the job after the Service). */
export const METRICS_JOB = 'pullfleet-controller-metrics';

/** What the rules and the dashboard are made for. */
export interface MonitoringTarget {
  /** Namespace the controller runs in (the `namespace` label of its series). */
  readonly namespace: string;
  /** Shards of the install (the shard alert is rendered only above 1). */
  readonly shards: number;
  /** Base of every alert's `runbook_url` (the metrics page); the alert's section anchor is appended. */
  readonly runbookUrl: string;
}

/** The label matchers every expression starts with: this install's series only. */
export function seriesSelector(target: Pick<MonitoringTarget, 'namespace'>): string {
  return `job="${METRICS_JOB}",namespace="${target.namespace}"`;
}

interface Alert {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly severity: 'critical' | 'warning';
  readonly summary: string;
  readonly description: string;
}

/** The alerts, in the order docs/controller/metrics.md describes them. */
function alerts(target: MonitoringTarget): Alert[] {
  const s = seriesSelector(target);
  return [...leadershipAlerts(s, target), ...replicaAlerts(s), ...reconcileAlerts(s)];
}

/** No replica up, no leader, shards without a replica (sharded installs only). `s` selects the install's series. */
function leadershipAlerts(s: string, target: MonitoringTarget): Alert[] {
  const list: Alert[] = [
    {
      alert: 'PullfleetControllerDown',
      expr: `absent(up{${s}} == 1)`,
      for: '5m',
      severity: 'critical',
      summary: 'No pullfleet controller replica is being scraped.',
      description: `No replica of the pullfleet controller in namespace ${target.namespace} has answered a scrape for 5 minutes: nothing propagates hub Applications or writes their status.`,
    },
    {
      alert: 'PullfleetNoLeader',
      expr: `sum(pullfleet_leader{${s}}) < 1`,
      for: '2m',
      severity: 'critical',
      summary: 'No pullfleet controller replica holds the leader Lease.',
      description: `Replicas of the pullfleet controller in namespace ${target.namespace} are running, but none has held a Lease for 2 minutes: they all stand by and nothing is reconciled.`,
    },
  ];
  if (target.shards > 1) {
    list.push({
      alert: 'PullfleetShardsUnheld',
      expr:
        `(count(count by (shard) (pullfleet_shard_leader{${s}} == 1)) or vector(0)) < ${target.shards}` +
        ` and on () count(up{${s}} == 1) > 0`,
      for: '5m',
      severity: 'critical',
      summary: 'Shards of the pullfleet controller are held by no replica.',
      description: `Only {{ $value }} of ${target.shards} shards have a replica holding their Lease: the clusters of the others are not reconciled.`,
    });
  }
  return list;
}

/** A replica that cannot reach its Lease, keeps restarting, or leads without having caught up. */
function replicaAlerts(s: string): Alert[] {
  return [
    {
      alert: 'PullfleetLeaseUnreachable',
      expr: `pullfleet_leader_election_seconds_since_success{${s}} > 45`,
      for: '1m',
      severity: 'warning',
      summary: 'A pullfleet controller replica cannot read or write its Lease.',
      description:
        'Replica {{ $labels.instance }} last read or wrote its Lease {{ $value | humanizeDuration }} ago: a leader stops leading once it cannot renew, a standby cannot take over, and /readyz answers 503.',
    },
    {
      alert: 'PullfleetControllerRestarting',
      expr: `changes(pullfleet_process_start_time_seconds{${s}}[30m]) > 2`,
      for: '0m',
      severity: 'warning',
      summary: 'A pullfleet controller replica keeps restarting.',
      description:
        'Replica {{ $labels.instance }} started {{ $value }} times in 30 minutes. The controller exits when it loses its Lease ("exiting: leadership lost" in its log), on a start-up error, or when it is killed.',
    },
    {
      alert: 'PullfleetNotCaughtUp',
      expr: `pullfleet_caught_up{${s}} == 0 and on (instance) pullfleet_leader{${s}} == 1`,
      for: '15m',
      severity: 'warning',
      summary: 'The leading pullfleet controller has not caught up.',
      description:
        'Replica {{ $labels.instance }} leads but has not reconciled every key it found when it started leading, 15 minutes on: hub Applications may still miss their work or status.',
    },
  ];
}

/** Failing reconciles, a throttled or saturated API client, slow or stale status, undelivered apps. */
function reconcileAlerts(s: string): Alert[] {
  return [
    {
      alert: 'PullfleetReconcileErrors',
      expr:
        `sum by (controller) (rate(pullfleet_reconcile_total{${s},result="error"}[10m]))` +
        ` / sum by (controller) (rate(pullfleet_reconcile_total{${s},result!="other-shard"}[10m])) > 0.1`,
      for: '15m',
      severity: 'warning',
      summary: 'pullfleet reconciles are failing.',
      description:
        '{{ $value | humanizePercentage }} of the {{ $labels.controller }} reconciles failed over the last 10 minutes (conflicts not counted): failed keys are retried with backoff, so their objects lag behind.',
    },
    {
      alert: 'PullfleetApiThrottled',
      expr: `sum(rate(pullfleet_api_requests_total{${s},code="429"}[5m])) > 0`,
      for: '10m',
      severity: 'warning',
      summary: 'The API server is throttling the pullfleet controller.',
      description:
        'The API server has answered {{ $value | humanize }} requests per second of the pullfleet controller with 429 for 10 minutes: the client halves its in-flight limit on each, so propagation and status slow down.',
    },
    {
      alert: 'PullfleetClientSaturated',
      expr: `min_over_time(pullfleet_api_client_waiting{${s}}[10m]) > 0`,
      for: '10m',
      severity: 'warning',
      summary: "The pullfleet controller's API client holds requests back all the time.",
      description:
        'Replica {{ $labels.instance }} has had requests waiting for its API client (in-flight limit reached, or a Retry-After pause) at every scrape for 20 minutes.',
    },
    {
      alert: 'PullfleetStatusWriteBackSlow',
      expr: `histogram_quantile(0.99, sum by (le) (rate(pullfleet_status_latency_seconds_bucket{${s}}[10m]))) > 10`,
      for: '15m',
      severity: 'warning',
      summary: 'Hub Application status lags behind spoke feedback.',
      description:
        'The 99th percentile from a feedback change to the hub Application status being written is {{ $value | humanizeDuration }}: hub status is stale.',
    },
    {
      alert: 'PullfleetFeedbackStale',
      expr: `max(pullfleet_applications_with_condition{${s},type="FeedbackStaleWarning"}) > 0`,
      for: '30m',
      severity: 'warning',
      summary: 'Hub Applications carry no fresh feedback from their spokes.',
      description:
        '{{ $value }} hub Applications carry FeedbackStaleWarning: their spoke has not reported within --stale-after, so their hub status is stale.',
    },
    {
      alert: 'PullfleetDeliveryErrors',
      expr: `max(pullfleet_applications_with_condition{${s},type="DeliveryError"}) > 0`,
      for: '15m',
      severity: 'warning',
      summary: 'Hub Applications are not delivered.',
      description:
        '{{ $value }} hub Applications carry DeliveryError (cluster missing, namespace not allowed, work not applied): their spoke does not get them.',
    },
  ];
}

/** The names of the alerts rendered for `target`, in order. */
export function alertNames(target: MonitoringTarget): string[] {
  return alerts(target).map((a) => a.alert);
}

/** The `spec` of the PrometheusRule: one group, an alerting rule per alert. */
export function alertRuleSpec(target: MonitoringTarget): JsonObject {
  return {
    groups: [
      {
        name: 'pullfleet-controller',
        rules: alerts(target).map((a) => ({
          alert: a.alert,
          expr: a.expr,
          for: a.for,
          labels: { severity: a.severity },
          annotations: {
            summary: a.summary,
            description: a.description,
            runbook_url: `${target.runbookUrl}#${a.alert.toLowerCase()}`,
          },
        })),
      },
    ],
  };
}

interface Panel {
  readonly title: string;
  readonly type: 'stat' | 'timeseries';
  readonly unit?: string;
  readonly targets: ReadonlyArray<{ readonly expr: string; readonly legend: string }>;
  readonly description?: string;
}

/** The panels, in rows of four stats then timeseries two to a row. */
function panels(target: MonitoringTarget): Panel[] {
  const s = seriesSelector(target);
  return [...statPanels(s, target.shards), ...reconcilePanels(s), ...apiPanels(s), ...processPanels(s)];
}

/** The four stats of the first row: replicas, leaders, shards held, caught up. `s` selects the install's series. */
function statPanels(s: string, shards: number): Panel[] {
  return [
    { title: 'Replicas up', type: 'stat', targets: [{ expr: `sum(up{${s}})`, legend: 'up' }] },
    {
      title: 'Leading replicas',
      type: 'stat',
      targets: [{ expr: `sum(pullfleet_leader{${s}})`, legend: 'leader' }],
    },
    {
      title: 'Shards held',
      type: 'stat',
      targets: [{ expr: `sum(pullfleet_shards_held{${s}})`, legend: `of ${shards}` }],
    },
    {
      title: 'Caught up (leaders)',
      type: 'stat',
      targets: [{ expr: `min(pullfleet_caught_up{${s}} and on (instance) pullfleet_leader{${s}} == 1)`, legend: '' }],
    },
  ];
}

/** Reconciles, the queue and the latencies of propagation and status. */
function reconcilePanels(s: string): Panel[] {
  return [
    {
      title: 'Reconciles by result',
      type: 'timeseries',
      unit: 'ops',
      targets: [
        {
          expr: `sum by (controller, result) (rate(pullfleet_reconcile_total{${s}}[5m]))`,
          legend: '{{controller}} {{result}}',
        },
      ],
    },
    {
      title: 'Queue depth',
      type: 'timeseries',
      targets: [{ expr: `sum by (controller) (pullfleet_queue_depth{${s}})`, legend: '{{controller}}' }],
    },
    {
      title: 'Reconcile duration p99',
      type: 'timeseries',
      unit: 's',
      targets: [
        {
          expr: `histogram_quantile(0.99, sum by (controller, le) (rate(pullfleet_reconcile_duration_seconds_bucket{${s}}[5m])))`,
          legend: '{{controller}}',
        },
      ],
    },
    {
      title: 'Propagation and status latency',
      type: 'timeseries',
      unit: 's',
      targets: [
        {
          expr: `histogram_quantile(0.5, sum by (le) (rate(pullfleet_propagation_latency_seconds_bucket{${s}}[5m])))`,
          legend: 'propagation p50',
        },
        {
          expr: `histogram_quantile(0.99, sum by (le) (rate(pullfleet_propagation_latency_seconds_bucket{${s}}[5m])))`,
          legend: 'propagation p99',
        },
        {
          expr: `histogram_quantile(0.5, sum by (le) (rate(pullfleet_status_latency_seconds_bucket{${s}}[5m])))`,
          legend: 'status p50',
        },
        {
          expr: `histogram_quantile(0.99, sum by (le) (rate(pullfleet_status_latency_seconds_bucket{${s}}[5m])))`,
          legend: 'status p99',
        },
      ],
    },
  ];
}

/** The controller's API client: requests, its limit, writes, durations. */
function apiPanels(s: string): Panel[] {
  return [
    {
      title: 'API requests by code',
      type: 'timeseries',
      unit: 'reqps',
      targets: [{ expr: `sum by (code) (rate(pullfleet_api_requests_total{${s}}[5m]))`, legend: '{{code}}' }],
    },
    {
      title: 'API client: limit, in flight, waiting',
      type: 'timeseries',
      targets: [
        { expr: `sum(pullfleet_api_client_limit{${s}})`, legend: 'limit' },
        { expr: `sum(pullfleet_api_client_in_flight{${s}})`, legend: 'in flight' },
        { expr: `sum(pullfleet_api_client_waiting{${s}})`, legend: 'waiting' },
      ],
    },
    {
      title: 'API writes',
      type: 'timeseries',
      unit: 'ops',
      targets: [
        {
          expr: `sum by (resource, verb) (rate(pullfleet_api_writes_total{${s}}[5m]))`,
          legend: '{{verb}} {{resource}}',
        },
      ],
    },
    {
      title: 'API request duration p99',
      type: 'timeseries',
      unit: 's',
      targets: [
        {
          expr: `histogram_quantile(0.99, sum by (verb, le) (rate(pullfleet_api_request_duration_seconds_bucket{${s}}[5m])))`,
          legend: '{{verb}}',
        },
      ],
    },
  ];
}

/** Conditions, leader election, watches and the cache, and the process. */
function processPanels(s: string): Panel[] {
  return [
    {
      title: 'Hub Applications by condition',
      type: 'timeseries',
      targets: [{ expr: `max by (type) (pullfleet_applications_with_condition{${s}})`, legend: '{{type}}' }],
    },
    {
      title: 'Lease: seconds since last success',
      type: 'timeseries',
      unit: 's',
      targets: [{ expr: `pullfleet_leader_election_seconds_since_success{${s}}`, legend: '{{instance}}' }],
    },
    {
      title: 'Watch relists',
      type: 'timeseries',
      unit: 'ops',
      targets: [{ expr: `sum by (resource) (rate(pullfleet_watch_relists_total{${s}}[15m]))`, legend: '{{resource}}' }],
    },
    {
      title: 'Cached objects',
      type: 'timeseries',
      targets: [{ expr: `max by (resource) (pullfleet_cached_objects{${s}})`, legend: '{{resource}}' }],
    },
    {
      title: 'Memory (resident)',
      type: 'timeseries',
      unit: 'bytes',
      targets: [{ expr: `pullfleet_process_resident_memory_bytes{${s}}`, legend: '{{instance}}' }],
    },
    {
      title: 'CPU',
      type: 'timeseries',
      unit: 'percentunit',
      targets: [{ expr: `rate(pullfleet_process_cpu_seconds_total{${s}}[5m])`, legend: '{{instance}}' }],
    },
  ];
}

/** The Grafana dashboard (schema 39), its data source chosen through the `datasource` variable. */
export function dashboardJson(target: MonitoringTarget): JsonObject {
  const datasource = { type: 'prometheus', uid: '${datasource}' };
  // The stats side by side on the first row (4 high), then the time series two to a row (8 high).
  let stats = 0;
  let series = 0;
  const rendered = panels(target).map((panel, i) => {
    const gridPos =
      panel.type === 'stat'
        ? { h: 4, w: 6, x: 6 * (stats++ % 4), y: 4 * Math.floor((stats - 1) / 4) }
        : { h: 8, w: 12, x: 12 * (series % 2), y: 4 + 8 * Math.floor(series++ / 2) };
    const defaults: JsonObject = panel.unit ? { unit: panel.unit } : {};
    return {
      id: i + 1,
      title: panel.title,
      type: panel.type,
      datasource,
      gridPos,
      fieldConfig: { defaults, overrides: [] },
      options: {},
      targets: panel.targets.map((t, j) => ({
        datasource,
        expr: t.expr,
        legendFormat: t.legend,
        refId: String.fromCharCode(65 + j),
      })),
    };
  });
  return {
    title: `pullfleet controller (${target.namespace})`,
    uid: `pullfleet-${target.namespace}`.slice(0, 40),
    tags: ['pullfleet'],
    timezone: 'browser',
    schemaVersion: 39,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    editable: true,
    templating: {
      list: [{ name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {} }],
    },
    panels: rendered,
  };
}
