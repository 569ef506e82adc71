/**
 * The pullfleet controller's install on a hub: Namespace, ServiceAccount, least-privilege RBAC (each rule
 * lists exactly the verbs one duty needs), a two-replica Deployment with probes, resources and a
 * restricted security context, a PodDisruptionBudget, a metrics Service, and the FleetReport CRD; with
 * `monitoring`, also a ServiceMonitor, a PrometheusRule and a Grafana dashboard (_monitoring.ts).
 */
import { ApiObject, Duration } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { ARGOCD_GROUP, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../model/core/keys.js';
import { enumMember, FeedbackScrape, type EnumValue, type JsonObject } from '../model/core/types.js';
import { fleetReportCrd, fleetReportRbacRules } from '../model/report/report-crd.js';
import { stampProvenance } from './_output.js';
import { heldObjects, pickRendered } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';
import { OutputFiles, routeOutput } from './output.js';
import { controllerDeployment } from './_controller-deployment.js';
import { dnsLabelProblem } from '../model/core/names.js';
import { isShardCount, MAX_SHARDS } from '../model/reconcile/shards.js';
import { pullfleetVersion } from '../version.js';
import {
  bool,
  checkProps,
  duration,
  enumOf,
  num,
  propsOf,
  shape,
  str,
  stringMap,
  type PropSpec,
} from './_props-check.js';
import { METRICS_JOB, alertRuleSpec, dashboardJson, type MonitoringTarget } from './_monitoring.js';

export { FeedbackScrape };

/**
 * Monitoring of the controller by a Prometheus Operator and a Grafana dashboard sidecar (opt-in through
 * `ControllerInstallProps.monitoring`). The objects land in the install's file; the ServiceMonitor and the
 * PrometheusRule need the Prometheus Operator's CRDs (monitoring.coreos.com/v1) on the hub.
 */
export interface ControllerMonitoring {
  /**
   * Render a ServiceMonitor that scrapes the metrics Service (job `pullfleet-controller-metrics`).
   * @default true
   */
  readonly serviceMonitor?: boolean;
  /**
   * Render a PrometheusRule with the controller's alerts (docs/controller/metrics.md#monitoring).
   * @default true
   */
  readonly alerts?: boolean;
  /**
   * Render the Grafana dashboard as a ConfigMap labelled `grafana_dashboard: "1"`, the label Grafana's
   * dashboard sidecar looks for.
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * Labels added to the ServiceMonitor and the PrometheusRule, such as the `release` label a Prometheus
   * selects them by.
   * @default - none
   */
  readonly labels?: Record<string, string>;
  /**
   * How often Prometheus scrapes each replica.
   * @default Duration.seconds(30)
   */
  readonly scrapeInterval?: Duration;
  /**
   * Namespace of the dashboard ConfigMap (one Grafana's sidecar watches; it must exist).
   * @default - the controller's namespace
   */
  readonly dashboardNamespace?: string;
  /**
   * Address of the page describing the alerts; each alert's `runbook_url` is this address followed by
   * `#<alert name in lower case>`.
   * @default - docs/controller/metrics.md of this pullfleet version on GitHub (github.com/pullfleet/pullfleet)
   */
  readonly runbookUrl?: string;
}

/** The runtime type of every {@link ControllerMonitoring} key (see props-check.ts). */
const CONTROLLER_MONITORING: PropSpec<ControllerMonitoring> = {
  serviceMonitor: bool(),
  alerts: bool(),
  dashboard: bool(),
  labels: stringMap('label', '{ release: "kube-prometheus-stack" }'),
  scrapeInterval: duration<Duration>(),
  dashboardNamespace: str(),
  runbookUrl: str(),
};

/** Settings of a {@link ControllerInstall}. */
export interface ControllerInstallProps {
  /**
   * Namespace the controller runs in (created unless it is the Argo CD namespace).
   * @default 'pullfleet-system'
   */
  readonly namespace?: string;
  /**
   * Namespace of the hub Argo CD (blank cluster Secrets live there).
   * @default 'argocd'
   */
  readonly argoNamespace?: string;
  /**
   * Image repository of the controller.
   * @default 'ghcr.io/pullfleet/pullfleet-controller'
   */
  readonly imageRepository?: string;
  /**
   * Image tag.
   * @default - the version of the pullfleet package synthesizing the fleet (package.json `version`), the tag its image is published under
   */
  readonly imageTag?: string;
  /**
   * Replicas (one leads through a Lease, or with `shards` each holds shards; the others stand by).
   * @default 2, or `shards` + 1 with more than one shard
   */
  readonly replicas?: number;
  /**
   * Shards the fleet's clusters are split into (`--shards`): each has a Lease of its own and the replicas
   * share them out, so several replicas reconcile at once, each for its clusters (docs/controller/scale.md).
   * @default 1
   */
  readonly shards?: number;
  /**
   * Feedback scrape type put on the works the controller writes.
   * @default FeedbackScrape.POLL
   */
  readonly feedbackScrape?: EnumValue<FeedbackScrape>;
  /**
   * Feedback older than this raises a FeedbackStaleWarning on the hub app.
   * @default Duration.minutes(15)
   */
  readonly staleAfter?: Duration;
  /**
   * Let any namespace target any ManagedCluster (single-tenant hubs only).
   * @default false
   */
  readonly relaxTenancy?: boolean;
  /**
   * On a hub taken over from ACM: an `AcmTenancyWarning` on each pull Application pullfleet did not render that
   * it delivers although ACM's propagation controller would not (no PlacementDecision in the app's namespace
   * selects the cluster). Has no effect with `relaxTenancy`.
   * @default false
   */
  readonly acmTenancyWarnings?: boolean;
  /**
   * Bounded periodic resync.
   * @default Duration.minutes(5)
   */
  readonly resync?: Duration;
  /**
   * Concurrent Application reconciles (each has at most one API request in flight).
   * @default 32
   */
  readonly workers?: number;
  /**
   * Also write ACM's MulticlusterApplicationSetReport (grants RBAC for it).
   * @default false
   */
  readonly multiclusterReports?: boolean;
  /**
   * Works the controller writes ask work agents for a resource summary (`--resource-summaries`; a condition
   * rule, OCM 1.0 and later). Set false for a hub whose cluster manager is older (its ManifestWork CRD has no
   * `conditionRules`); left true, the controller notices such a hub by itself and leaves the rule out.
   * @default true
   */
  readonly resourceSummaries?: boolean;
  /**
   * Log level.
   * @default 'info'
   */
  readonly logLevel?: string;
  /**
   * Monitoring: a ServiceMonitor, a PrometheusRule with the controller's alerts and a Grafana dashboard
   * (each can be left out). `monitoring: {}` renders all three.
   * @default - none: no monitoring object is rendered
   */
  readonly monitoring?: ControllerMonitoring;
}

/** @internal the runtime type of every {@link ControllerInstallProps} key (see props-check.ts). */
export const CONTROLLER_INSTALL_PROPS = propsOf<ControllerInstallProps>('ControllerInstall', {
  namespace: str(),
  argoNamespace: str(),
  imageRepository: str(),
  imageTag: str(),
  replicas: num('a whole number'),
  shards: num('a whole number'),
  feedbackScrape: enumOf(FeedbackScrape, 'FeedbackScrape'),
  staleAfter: duration(),
  relaxTenancy: bool(),
  acmTenancyWarnings: bool(),
  resync: duration(),
  workers: num('a whole number'),
  multiclusterReports: bool(),
  resourceSummaries: bool(),
  logLevel: str(),
  monitoring: shape<ControllerMonitoring>('monitoring settings', CONTROLLER_MONITORING),
});

const APP_LABELS = { 'app.kubernetes.io/name': 'pullfleet-controller', 'app.kubernetes.io/component': 'controller' };
const PORT = 8080;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];

/** {@link ControllerInstallProps} (monitoring aside) with its defaults applied. */
interface InstallSettings {
  readonly namespace: string;
  readonly argoNamespace: string;
  readonly image: string;
  readonly shards: number;
  readonly replicas: number;
  readonly feedbackScrape: FeedbackScrape;
  readonly staleAfter: Duration;
  readonly relaxTenancy: boolean;
  readonly acmTenancyWarnings: boolean;
  readonly resync: Duration;
  readonly workers: number;
  readonly multiclusterReports: boolean;
  readonly resourceSummaries: boolean;
  readonly logLevel: string;
}

/** {@link ControllerMonitoring} with its defaults applied. */
interface ResolvedMonitoring {
  readonly serviceMonitor: boolean;
  readonly alerts: boolean;
  readonly dashboard: boolean;
  readonly labels: Record<string, string>;
  readonly scrapeInterval: string;
  readonly dashboardNamespace: string;
  readonly runbookUrl: string;
}

/** The namespaces with their defaults; a name that is not a DNS label is pushed to `problems`. */
function resolveNamespaces(props: ControllerInstallProps, problems: string[]) {
  const namespace = props.namespace ?? 'pullfleet-system';
  const argoNamespace = props.argoNamespace ?? 'argocd';
  for (const [prop, value] of [
    ['namespace', namespace],
    ['argoNamespace', argoNamespace],
  ] as const) {
    const problem = dnsLabelProblem(value);
    if (problem) problems.push(`${prop} "${value}" ${problem}: use a valid namespace name`);
  }
  return { namespace, argoNamespace };
}

/** The image reference `<repository>:<tag>`; a bad repository or tag is pushed to `problems`. */
function resolveImage(props: ControllerInstallProps, problems: string[]): string {
  const repository = props.imageRepository ?? 'ghcr.io/pullfleet/pullfleet-controller';
  const tag = props.imageTag ?? pullfleetVersion();
  if (!/^[a-z0-9]+([._\-/:][a-z0-9]+)*$/.test(repository))
    problems.push(
      `imageRepository "${repository}" is not an image repository: use for example "ghcr.io/acme/pullfleet-controller"`,
    );
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag))
    problems.push(`imageTag "${tag}" is not a valid tag: use for example "0.1.0"`);
  if (tag === 'latest')
    problems.push(`imageTag "latest" makes the install unreproducible: pin a version such as "0.1.0"`);
  return `${repository}:${tag}`;
}

/** The install's settings with their defaults; a bad value is pushed to `problems`. */
function resolveInstallSettings(props: ControllerInstallProps, problems: string[]): InstallSettings {
  const { namespace, argoNamespace } = resolveNamespaces(props, problems);
  const image = resolveImage(props, problems);
  const shards = props.shards ?? 1;
  if (!isShardCount(shards))
    problems.push(`shards ${shards} must be an integer from 1 to ${MAX_SHARDS}: use 1 (one active replica) or more`);
  const replicas = props.replicas ?? (shards > 1 ? shards + 1 : 2);
  if (!Number.isInteger(replicas) || replicas < 1)
    problems.push(`replicas ${replicas} must be an integer >= 1: use 1 or more (the default is 2)`);
  const feedbackScrape = enumMember(props.feedbackScrape ?? FeedbackScrape.POLL);
  const staleAfter = props.staleAfter ?? Duration.minutes(15);
  const relaxTenancy = props.relaxTenancy ?? false;
  const acmTenancyWarnings = props.acmTenancyWarnings ?? false;
  const resync = props.resync ?? Duration.minutes(5);
  if (resync.toSeconds() < 10) problems.push(`resync ${resync.toSeconds()}s is too short: use at least 10 seconds`);
  const workers = props.workers ?? 32;
  if (!Number.isInteger(workers) || workers < 1)
    problems.push(`workers ${workers} must be an integer >= 1: use 1 or more (the default is 32)`);
  const multiclusterReports = props.multiclusterReports ?? false;
  const resourceSummaries = props.resourceSummaries ?? true;
  const logLevel = props.logLevel ?? 'info';
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`logLevel "${logLevel}" must be one of ${LOG_LEVELS.join(', ')}: use one of them`);
  return {
    namespace,
    argoNamespace,
    image,
    shards,
    replicas,
    feedbackScrape,
    staleAfter,
    relaxTenancy,
    acmTenancyWarnings,
    resync,
    workers,
    multiclusterReports,
    resourceSummaries,
    logLevel,
  };
}

/** The monitoring settings with their defaults; a bad value is pushed to `problems`. */
function resolveMonitoring(given: ControllerMonitoring, namespace: string, problems: string[]): ResolvedMonitoring {
  const interval = given.scrapeInterval?.toSeconds({ integral: false }) ?? 30;
  if (!Number.isInteger(interval) || interval < 1)
    problems.push(
      `monitoring.scrapeInterval ${interval}s must be a whole number of seconds >= 1: use for example Duration.seconds(30)`,
    );
  const dashboardNamespace = given.dashboardNamespace ?? namespace;
  const problem = dnsLabelProblem(dashboardNamespace);
  if (problem)
    problems.push(`monitoring.dashboardNamespace "${dashboardNamespace}" ${problem}: use a valid namespace name`);
  const runbookUrl =
    given.runbookUrl ?? `https://github.com/pullfleet/pullfleet/blob/v${pullfleetVersion()}/docs/controller/metrics.md`;
  if (!/^https?:\/\/[^\s#]+$/.test(runbookUrl))
    problems.push(
      `monitoring.runbookUrl "${runbookUrl}" must be an http(s) address without a fragment: use for example "https://wiki.example.com/pullfleet-alerts"`,
    );
  const labels = given.labels ?? {};
  for (const [key, value] of Object.entries(labels)) {
    if (!/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(key))
      problems.push(`monitoring.labels key "${key}" is not a valid label key: use for example "release"`);
    if (!/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/.test(value))
      problems.push(
        `monitoring.labels["${key}"] "${value}" is not a valid label value: use at most 63 letters, digits, "-", "_" or "."`,
      );
  }
  return {
    serviceMonitor: given.serviceMonitor ?? true,
    alerts: given.alerts ?? true,
    dashboard: given.dashboard ?? true,
    labels,
    scrapeInterval: `${interval}s`,
    dashboardNamespace,
    runbookUrl,
  };
}

/** One RBAC rule of the controller's ClusterRole. */
export interface PolicyRule {
  /**
   * API groups the rule covers (`''` is the core group).
   * @default - none
   */
  readonly apiGroups?: string[];
  /**
   * Resources the rule covers.
   * @default - none
   */
  readonly resources?: string[];
  /**
   * Names the rule is limited to.
   * @default - every name
   */
  readonly resourceNames?: string[];
  /** Verbs the rule allows. */
  readonly verbs: string[];
}

/**
 * The pullfleet controller on a hub (`dist/<hub>/hub/controller.yaml`): namespace, CRD, service account,
 * least-privilege RBAC, a Deployment with leader election, a PodDisruptionBudget and a metrics Service.
 * A Hub creates one as `hub.controller` unless `controller.enabled` is false.
 */
export class ControllerInstall extends Construct implements IRendersObjects {
  /** Namespace the controller runs in. */
  public readonly namespace: string;
  /** Namespace of the hub Argo CD (the cluster Secrets it manages). */
  public readonly argoNamespace: string;
  /** Full image reference `<repository>:<tag>`. */
  public readonly image: string;
  /** Replicas (one leads, or with shards each holds some; the others stand by). */
  public readonly replicas: number;
  /** Shards the clusters are split into, each with its own Lease. */
  public readonly shards: number;
  /** How work agents report status (the controller reads either). */
  public readonly feedbackScrape: FeedbackScrape;
  /** Feedback older than this raises a FeedbackStaleWarning on the hub app. */
  public readonly staleAfter: Duration;
  /** Any namespace may target any ManagedCluster (single-tenant hubs only). */
  public readonly relaxTenancy: boolean;
  /** Pull Applications ACM would not deliver get an `AcmTenancyWarning` (see {@link ControllerInstallProps.acmTenancyWarnings}). */
  public readonly acmTenancyWarnings: boolean;
  /** Period of the full resync. */
  public readonly resync: Duration;
  /** Concurrent reconciles. */
  public readonly workers: number;
  /** Also write ACM's MulticlusterApplicationSetReport. */
  public readonly multiclusterReports: boolean;
  /** Works ask work agents for a resource summary. */
  public readonly resourceSummaries: boolean;
  /** Log level. */
  public readonly logLevel: string;
  /** Name of the ServiceAccount (and of the Deployment, roles and Service). */
  public readonly name = 'pullfleet-controller';
  /**
   * The ServiceMonitor (escape hatch), when `monitoring` asks for it.
   * @deprecated use `renderedObject({ kind: 'ServiceMonitor' })`, the same object.
   */
  public readonly serviceMonitor?: ApiObject;
  /**
   * The PrometheusRule with the controller's alerts (escape hatch), when `monitoring` asks for it.
   * @deprecated use `renderedObject({ kind: 'PrometheusRule' })`, the same object.
   */
  public readonly prometheusRule?: ApiObject;
  /**
   * The ConfigMap holding the Grafana dashboard (escape hatch), when `monitoring` asks for it.
   * @deprecated use `renderedObject({ kind: 'ConfigMap', name: 'pullfleet-controller-dashboard' })`, the same object.
   */
  public readonly dashboard?: ApiObject;

  constructor(scope: Construct, id: string, props: ControllerInstallProps = {}) {
    super(scope, id);
    props = checkProps(this, CONTROLLER_INSTALL_PROPS, props);
    // Bad values are problems of the fleet, reported at synth with every other one; with any of them
    // the install renders nothing (docs/reference/errors.md).
    const problems: string[] = [];
    this.node.addValidation({ validate: () => [...problems] });
    const settings = resolveInstallSettings(props, problems);
    this.namespace = settings.namespace;
    this.argoNamespace = settings.argoNamespace;
    this.image = settings.image;
    this.shards = settings.shards;
    this.replicas = settings.replicas;
    this.feedbackScrape = settings.feedbackScrape;
    this.staleAfter = settings.staleAfter;
    this.relaxTenancy = settings.relaxTenancy;
    this.acmTenancyWarnings = settings.acmTenancyWarnings;
    this.resync = settings.resync;
    this.workers = settings.workers;
    this.multiclusterReports = settings.multiclusterReports;
    this.resourceSummaries = settings.resourceSummaries;
    this.logLevel = settings.logLevel;
    const monitoring = props.monitoring && resolveMonitoring(props.monitoring, this.namespace, problems);
    if (problems.length > 0) return;

    routeOutput(this, OutputFiles.CONTROLLER);
    const labels = { ...APP_LABELS, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
    const objects: ApiObject[] = [
      ...this.renderBase(labels),
      ...this.renderRbac(labels),
      ...this.renderWorkload(labels),
    ];
    if (monitoring) {
      const { serviceMonitor, prometheusRule, dashboard } = this.renderMonitoring(monitoring, labels);
      this.serviceMonitor = serviceMonitor;
      this.prometheusRule = prometheusRule;
      this.dashboard = dashboard;
      for (const object of [serviceMonitor, prometheusRule, dashboard]) if (object) objects.push(object);
    }
    for (const object of objects) stampProvenance(object);
    this.node.defaultChild = this.node.findChild('Deployment');
  }

  /** The Namespace (unless it is the Argo CD one), the FleetReport CRD and the ServiceAccount. */
  private renderBase(labels: Record<string, string>): ApiObject[] {
    const objects: ApiObject[] = [];
    if (this.namespace !== this.argoNamespace) {
      objects.push(new k8s.KubeNamespace(this, 'Namespace', { metadata: { name: this.namespace, labels } }));
    }
    objects.push(new ApiObject(this, 'FleetReportCrd', fleetReportCrd() as never));
    objects.push(
      new k8s.KubeServiceAccount(this, 'ServiceAccount', {
        metadata: { name: this.name, namespace: this.namespace, labels },
      }),
    );
    return objects;
  }

  /** The ClusterRole of {@link clusterRules}, the Argo CD namespace's Role and the leader-election Role, each bound. */
  private renderRbac(labels: Record<string, string>): ApiObject[] {
    const subjects = () => [{ kind: 'ServiceAccount', name: this.name, namespace: this.namespace }];
    const argoRole = `${this.name}-cluster-secrets`;
    const leaseRole = `${this.name}-leader-election`;
    return [
      new k8s.KubeClusterRole(this, 'ClusterRole', {
        metadata: { name: this.name, labels },
        rules: this.clusterRules(),
      }),
      new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
        metadata: { name: this.name, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: this.name },
        subjects: subjects(),
      }),
      // Cluster Secrets and the rollout ConfigMaps of waved apps (policy read, state written): only in the
      // Argo CD namespace.
      new k8s.KubeRole(this, 'ArgoRole', {
        metadata: { name: argoRole, namespace: this.argoNamespace, labels },
        rules: [
          { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'watch'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'watch'] },
        ],
      }),
      new k8s.KubeRoleBinding(this, 'ArgoRoleBinding', {
        metadata: { name: argoRole, namespace: this.argoNamespace, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: argoRole },
        subjects: subjects(),
      }),
      // Leader election: Leases in the controller's own namespace only (one, or one per shard; not limited
      // by name, so `--lease-name` keeps working), and only the verbs the election uses.
      new k8s.KubeRole(this, 'LeaseRole', {
        metadata: { name: leaseRole, namespace: this.namespace, labels },
        rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] }],
      }),
      new k8s.KubeRoleBinding(this, 'LeaseRoleBinding', {
        metadata: { name: leaseRole, namespace: this.namespace, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leaseRole },
        subjects: subjects(),
      }),
    ];
  }

  /** The Deployment, its PodDisruptionBudget and the metrics Service. */
  private renderWorkload(labels: Record<string, string>): ApiObject[] {
    return [
      controllerDeployment(this, {
        name: this.name,
        namespace: this.namespace,
        replicas: this.replicas,
        shards: this.shards,
        image: this.image,
        args: this.args(),
        labels,
        selector: APP_LABELS,
        port: PORT,
      }),
      new k8s.KubePodDisruptionBudget(this, 'PodDisruptionBudget', {
        metadata: { name: this.name, namespace: this.namespace, labels },
        spec: { minAvailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: APP_LABELS } },
      }),
      new k8s.KubeService(this, 'MetricsService', {
        // Its name is the Prometheus job of the scraped series (METRICS_JOB), which alerts select by.
        metadata: { name: METRICS_JOB, namespace: this.namespace, labels },
        spec: {
          type: 'ClusterIP',
          selector: APP_LABELS,
          ports: [{ name: 'metrics', port: PORT, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
        },
      }),
    ];
  }

  /** The monitoring objects `monitoring` asks for: a ServiceMonitor, a PrometheusRule, a dashboard ConfigMap. */
  private renderMonitoring(
    monitoring: ResolvedMonitoring,
    labels: Record<string, string>,
  ): { serviceMonitor?: ApiObject; prometheusRule?: ApiObject; dashboard?: ApiObject } {
    const target: MonitoringTarget = {
      namespace: this.namespace,
      shards: this.shards,
      runbookUrl: monitoring.runbookUrl,
    };
    const monitoringLabels = { ...labels, ...monitoring.labels };
    const serviceMonitor = monitoring.serviceMonitor
      ? new ApiObject(this, 'ServiceMonitor', {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          metadata: { name: this.name, namespace: this.namespace, labels: monitoringLabels },
          // The job of the scraped series is the Service's name, `pullfleet-controller-metrics`, which the
          // alerts and the dashboard select by.
          spec: {
            selector: { matchLabels: APP_LABELS },
            namespaceSelector: { matchNames: [this.namespace] },
            endpoints: [{ port: 'metrics', path: '/metrics', scheme: 'http', interval: monitoring.scrapeInterval }],
          },
        })
      : undefined;
    const prometheusRule = monitoring.alerts
      ? new ApiObject(this, 'PrometheusRule', {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'PrometheusRule',
          metadata: { name: this.name, namespace: this.namespace, labels: monitoringLabels },
          spec: alertRuleSpec(target),
        })
      : undefined;
    const dashboard = monitoring.dashboard
      ? new k8s.KubeConfigMap(this, 'Dashboard', {
          metadata: {
            name: `${this.name}-dashboard`,
            namespace: monitoring.dashboardNamespace,
            labels: { ...labels, grafana_dashboard: '1' },
          },
          data: { 'pullfleet-controller.json': `${JSON.stringify(dashboardJson(target), null, 2)}\n` },
        })
      : undefined;
    return { serviceMonitor, prometheusRule, dashboard };
  }

  /** The flags the controller runs with (documented in docs/controller/install.md). */
  public args(): string[] {
    return [
      // Also in POD_NAMESPACE (downward API); passed as a flag too so the Lease namespace never depends on it.
      `--namespace=${this.namespace}`,
      `--argo-namespace=${this.argoNamespace}`,
      `--feedback-scrape-type=${this.feedbackScrape}`,
      `--stale-after=${this.staleAfter.toSeconds()}`,
      `--relax-tenancy=${this.relaxTenancy}`,
      // Only when set, so that an install without it renders as before.
      ...(this.acmTenancyWarnings ? ['--acm-tenancy-warnings=true'] : []),
      `--resync=${this.resync.toSeconds()}`,
      `--workers=${this.workers}`,
      ...(this.shards > 1 ? [`--shards=${this.shards}`] : []),
      `--multicluster-reports=${this.multiclusterReports}`,
      ...(this.resourceSummaries ? [] : ['--resource-summaries=false']),
      `--port=${PORT}`,
      `--log-level=${this.logLevel}`,
    ];
  }

  /**
   * The ApiObject the install renders for `query` (`dist/<hub>/hub/controller.yaml`), for example
   * `{ kind: 'Deployment' }` (also `ApiObject.of(install)`) or `{ kind: 'Role', name: 'pullfleet-controller-cluster-secrets' }`.
   * Every object exists from the install's declaration. Throws, listing the kinds the install renders, for a
   * kind it does not render, and when more than one object matches (give `name` or `namespace`).
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return pickRendered(this, query, {
      what: `controller install "${this.node.path}"`,
      kinds: [],
      objects: heldObjects(this),
    });
  }

  /**
   * Escape hatch: every object of the install, in output order (`dist/<hub>/hub/controller.yaml`).
   * `ApiObject.of(install)` is the Deployment.
   * @deprecated use `renderedObject({ kind, name })` for each, the same objects.
   */
  public get apiObjects(): ApiObject[] {
    return this.node.children.filter((c): c is ApiObject => ApiObject.isApiObject(c));
  }

  /** Cluster-wide rules, one per duty, each with exactly the verbs that duty uses. */
  public clusterRules(): PolicyRule[] {
    const rules: JsonObject[] = [
      // Propagation and status write-back: read apps, add/remove the finalizer, merge-patch status and forwarded fields.
      { apiGroups: [ARGOCD_GROUP], resources: ['applications'], verbs: ['get', 'list', 'patch', 'watch'] },
      // Propagation: server-side apply creates and updates works (create + patch), retarget/opt-out/sweep deletes them.
      {
        apiGroups: ['work.open-cluster-management.io'],
        resources: ['manifestworks'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'watch'],
      },
      // Tenancy and cluster Secrets: read the cluster inventory.
      {
        apiGroups: ['cluster.open-cluster-management.io'],
        resources: ['managedclusters', 'managedclustersetbindings', 'managedclustersets'],
        verbs: ['get', 'list', 'watch'],
      },
      // Propagation: a cluster namespace appearing (ManagedCluster accepted) lets a waiting work be written at once.
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      // Cluster Secrets and fleet reports: which clusters pull ApplicationSets select.
      { apiGroups: [ARGOCD_GROUP], resources: ['applicationsets'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['cluster.open-cluster-management.io'],
        resources: ['placementdecisions'],
        verbs: ['get', 'list', 'watch'],
      },
      // Cluster Secrets: clusters a GitOpsCluster (either flavour) registers get none from pullfleet.
      {
        apiGroups: ['apps.open-cluster-management.io'],
        resources: ['gitopsclusters'],
        verbs: ['get', 'list', 'watch'],
      },
      // Fleet reports.
      ...fleetReportRbacRules(this.multiclusterReports),
    ];
    return rules as unknown as PolicyRule[];
  }
}
