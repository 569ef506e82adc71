/**
 * `pullfleet status`: what runs where across the fleet, problems first. Reads FleetReports (and, for
 * statically delivered apps, the pull-labelled hub Applications and their works; for agent-model apps no
 * ApplicationSet generates, the hub Applications the argocd-agent principal keeps, checked against the
 * expected-Application lists synth renders for agent-autonomous spokes) through the user's
 * kubeconfig; rendering is in status-render.ts. Exit code 0 when all is well; 1 when anything is
 * degraded, missing, stale or unknown (an ApplicationSet without its report), or a name given matches
 * nothing; 2 when the hub could not be read. A list the user may not read (403) is left out with a line
 * on stderr saying what is not shown.
 */
import type { KubeConfig } from '../../kube/client.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { KubeApiError, KubeClient, KubeTimeoutError, loadKubeConfig } from '../../kube/client.js';
import { APPLICATION, APPLICATION_SET, CONFIG_MAP, MANIFEST_WORK } from '../../kube/resources.js';
import { FLEET_REPORT } from '../../kube/resources.js';
import {
  DELIVERY_ANNOTATION,
  DELIVERY_LABEL,
  DELIVERY_STATIC,
  DELIVERY_WAVED,
  HOSTING_APPSET_ANNOTATION,
  PULL_LABEL,
} from '../../model/core/keys.js';
import { type Application, type ConfigMapLike, type ManifestWork } from '../../model/core/types.js';
import { type ConfigMapObject } from '../../model/delivery/appset.js';
import { isPullApplication, owningApplicationSet, targetCluster } from '../../model/delivery/manifestwork.js';
import { nearestName } from '../../model/core/nearest.js';
import { FLEET_REPORT_CRD_NAME } from '../../model/report/report-crd.js';
import { isAgentModel } from '../../model/delivery/classification.js';
import { DELIVERY_MODEL_LABEL } from '../../model/delivery/delivery-model.js';
import {
  agentApplicationRows,
  isReportedApplicationSet,
  reportCluster,
  staticApplicationRows,
  type ApplicationSet,
  type FleetReportRow,
  type FleetReport,
} from '../../model/report/report.js';
import {
  EXPECTED_APPLICATIONS_LABEL,
  parseExpectedApplications,
  type ExpectedApplications,
} from '../../model/reconcile/expected-apps.js';
import {
  appResourcesFromApplication,
  appResourcesFromWork,
  type AppResources,
} from '../../model/reconcile/resource-views.js';
import {
  EXIT_ERROR,
  EXIT_PROBLEMS,
  renderResourceOutput,
  resourceExitCode,
  resourceQueryProblem,
  resourceRows,
  type ResourceQuery,
  groupFromAgentRows,
  groupFromReport,
  groupFromStaticRows,
  groupFromUnreportedApplicationSet,
  renderOutput,
  statusExitCode,
  useColor,
  type OutputFormat,
  type StatusGroup,
} from '../support/status-render.js';
import { abortableSleep } from '../../kube/timers.js';
import { ROLLOUT_STATE_SELECTOR } from '../../model/rollout/state.js';
import { isWavedApplication } from '../../model/rollout/static.js';
import { rolloutSummaries } from '../support/rollout-status.js';
import { secondsOption } from '../support/number-options.js';

/** Where status comes from: the hub API in real use, a fake in tests. */
export interface StatusSource {
  /** Human description of the hub, for error messages. */
  readonly description: string;
  listReports(namespace?: string): Promise<FleetReport[]>;
  /** Pull-labelled hub Applications. */
  listPullApplications(namespace?: string): Promise<Application[]>;
  /** ManifestWorks synth rendered (label pullfleet.io/delivery=static); undefined when not allowed to list them. */
  listStaticWorks(): Promise<ManifestWork[] | undefined>;
  /** Hub Applications labelled with an agent delivery model (agent-managed, agent-autonomous); none when left out. */
  listAgentApplications?(namespace?: string): Promise<Application[]>;
  /**
   * The expected-Application lists synth renders for agent-autonomous spokes (ConfigMaps labelled
   * `pullfleet.io/expected-applications-for`, in the hub's Argo CD namespace), all of them or only
   * those of spoke `cluster`; none when left out.
   */
  listExpectedApplications?(cluster?: string): Promise<ConfigMapLike[]>;
  /**
   * The pull ManifestWorks in a cluster's namespace (their resource summaries); undefined when not allowed to list
   * them. Left out: `--cluster` then reads the hub Applications instead.
   */
  listClusterWorks?(cluster: string): Promise<ManifestWork[] | undefined>;
  /** The rollout state ConfigMaps of waved static apps (label `pullfleet.io/rollout-kind=state`); none when left out. */
  listRolloutStates?(namespace?: string): Promise<ConfigMapObject[]>;
  /** The ApplicationSets (to find pull ApplicationSets without a FleetReport); none when left out. */
  listApplicationSets?(namespace?: string): Promise<ApplicationSet[]>;
  close(): void;
}

/** A failure the user can act on, with the message to print. */
export class StatusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StatusError';
  }
}

/** A name given on the command line (an ApplicationSet, `--cluster`, `--app`) that matches nothing on the hub: exit 1. */
export class StatusNotFoundError extends StatusError {
  constructor(
    message: string,
    /** Lists the user may not read, which may be why nothing matched (see {@link StatusReading}). */
    readonly unreadable: readonly string[] = [],
  ) {
    super(message);
    this.name = 'StatusNotFoundError';
  }
}

/** A list the user may not read (403 Forbidden): status goes on without it and says what it leaves out. */
export class StatusForbiddenError extends StatusError {
  constructor(message: string) {
    super(message);
    this.name = 'StatusForbiddenError';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
  'EAI_AGAIN',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

/** Turns a failed request into a message that says what is wrong and what to do. */
export function explainError(error: unknown, what: string, hub: string): StatusError {
  if (error instanceof StatusError) return error;
  if (error instanceof KubeTimeoutError) {
    return new StatusError(
      `the hub API server at ${hub} did not answer within ${error.timeoutMs / 1000}s while listing ${what}: check that it is up and reachable, or raise --timeout`,
    );
  }
  if (error instanceof KubeApiError) {
    if (error.statusCode === 401)
      return new StatusError(
        `the hub at ${hub} rejected the credentials (401 Unauthorized): refresh your kubeconfig login`,
      );
    if (error.statusCode === 403)
      return new StatusForbiddenError(
        `not allowed to list ${what} on the hub at ${hub} (403 Forbidden): ${error.message}`,
      );
    return new StatusError(`listing ${what} on the hub at ${hub} failed: ${error.message}`);
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) {
    return new StatusError(
      `cannot reach the hub API server at ${hub} (${code}): check --kubeconfig / --context and that the hub is up`,
    );
  }
  return new StatusError(
    `reading ${what} from the hub at ${hub} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** The user's kubeconfig (the file given, else $KUBECONFIG / ~/.kube/config), optionally switching context. */
export function loadUserKubeConfig(
  path: string | undefined,
  context: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): KubeConfig {
  try {
    return loadKubeConfig({ path, context, env });
  } catch (error) {
    throw new StatusError((error as Error).message);
  }
}

/** Reads from the hub's API server; every request gives up after `timeoutMs`. */
export function kubeStatusSource(kubeConfig: KubeConfig, options: { timeoutMs?: number } = {}): StatusSource {
  // No retries on 429 here: a person is waiting, and the timeout is the whole budget.
  const client = new KubeClient(kubeConfig, {
    requestTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_SECONDS * 1000,
    maxRetries: 0,
  });
  const hub = kubeConfig.getCurrentCluster()?.server ?? 'the hub';
  return {
    description: hub,
    async listReports(namespace) {
      try {
        return (await client.list<FleetReport>(FLEET_REPORT, namespace ? { namespace } : {})).items;
      } catch (error) {
        if (error instanceof KubeApiError && error.statusCode === 404) {
          throw new StatusError(
            `the FleetReport CRD (${FLEET_REPORT_CRD_NAME}) is not installed on the hub at ${hub}: apply the pullfleet controller install for this hub (dist/<hub>/), which includes it`,
          );
        }
        throw explainError(error, 'FleetReports', hub);
      }
    },
    async listPullApplications(namespace) {
      try {
        const scope = { labelSelector: PULL_LABEL, ...(namespace ? { namespace } : {}) };
        return (await client.list<Application>(APPLICATION, scope)).items.filter(isPullApplication);
      } catch (error) {
        // No Argo CD on this API server: there are no static apps to show.
        if (error instanceof KubeApiError && error.statusCode === 404) return [];
        throw explainError(error, `Applications labelled ${PULL_LABEL}`, hub);
      }
    },
    async listAgentApplications(namespace) {
      const scope = {
        labelSelector: `${DELIVERY_MODEL_LABEL} in (agent-managed,agent-autonomous)`,
        ...(namespace ? { namespace } : {}),
      };
      try {
        return (await client.list<Application>(APPLICATION, scope)).items.filter((app) => isAgentModel(app));
      } catch (error) {
        if (error instanceof KubeApiError && error.statusCode === 404) return [];
        throw explainError(error, `Applications labelled ${scope.labelSelector}`, hub);
      }
    },
    async listExpectedApplications(cluster) {
      try {
        // Cluster-wide: the lists live in the hub's Argo CD namespace, which status is not told.
        const labelSelector = cluster ? `${EXPECTED_APPLICATIONS_LABEL}=${cluster}` : EXPECTED_APPLICATIONS_LABEL;
        return (await client.list<ConfigMapObject>(CONFIG_MAP, { labelSelector })).items;
      } catch (error) {
        if (error instanceof KubeApiError && error.statusCode === 404) return [];
        throw explainError(error, `ConfigMaps labelled ${EXPECTED_APPLICATIONS_LABEL}`, hub);
      }
    },
    async listClusterWorks(cluster) {
      try {
        return (await client.list<ManifestWork>(MANIFEST_WORK, { namespace: cluster, labelSelector: PULL_LABEL }))
          .items;
      } catch (error) {
        if (error instanceof KubeApiError && (error.statusCode === 403 || error.statusCode === 404)) return undefined;
        throw explainError(error, `ManifestWorks in namespace ${cluster}`, hub);
      }
    },
    async listRolloutStates(namespace) {
      try {
        const scope = { labelSelector: ROLLOUT_STATE_SELECTOR, ...(namespace ? { namespace } : {}) };
        return (await client.list<ConfigMapObject>(CONFIG_MAP, scope)).items;
      } catch (error) {
        if (error instanceof KubeApiError && error.statusCode === 404) return [];
        throw explainError(error, `ConfigMaps labelled ${ROLLOUT_STATE_SELECTOR}`, hub);
      }
    },
    async listApplicationSets(namespace) {
      try {
        return (await client.list<ApplicationSet>(APPLICATION_SET, namespace ? { namespace } : {})).items;
      } catch (error) {
        // No Argo CD on this API server: no ApplicationSet can lack its report.
        if (error instanceof KubeApiError && error.statusCode === 404) return [];
        throw explainError(error, 'ApplicationSets', hub);
      }
    },
    async listStaticWorks() {
      try {
        // Static works and the works the controller writes for waved static apps.
        return (
          await client.list<ManifestWork>(MANIFEST_WORK, {
            labelSelector: `${DELIVERY_LABEL} in (${DELIVERY_STATIC},${DELIVERY_WAVED})`,
          })
        ).items;
      } catch (error) {
        if (error instanceof KubeApiError && (error.statusCode === 403 || error.statusCode === 404)) return undefined;
        throw explainError(error, 'ManifestWorks', hub);
      }
    },
    close: () => client.close(),
  };
}

export interface CollectOptions {
  readonly namespace?: string;
  /** Only the ApplicationSet of this name (static applications are then left out). */
  readonly name?: string;
  /** Include applications no ApplicationSet generates (statically delivered and agent-model ones). @default true */
  readonly includeStatic?: boolean;
  readonly now: Date;
}

/** What status read: the tables, and one line per list it was not allowed to read, saying what is left out. */
export interface StatusReading {
  readonly groups: StatusGroup[];
  readonly unreadable: string[];
}

/** Reads through `source`, noting lists the user may not read (403) in `unreadable` instead of failing. */
class Reader {
  readonly unreadable: string[] = [];

  /** `read(arg)` (none when the source has no such list); on 403, none and a line saying that `leftOut`. */
  async list<A, T>(read: ((arg: A) => Promise<T[]>) | undefined, arg: A, leftOut: string): Promise<T[]> {
    if (!read) return [];
    try {
      return await read(arg);
    } catch (error) {
      if (!(error instanceof StatusForbiddenError)) throw error;
      this.unreadable.push(`${leftOut}: ${error.message}`);
      return [];
    }
  }
}

const LEFT_OUT = {
  applicationSets:
    'pull ApplicationSets without a FleetReport are not shown (grant list on applicationsets.argoproj.io to see them)',
  pullApplications: 'statically delivered apps are not shown (grant list on applications.argoproj.io to see them)',
  agentApplications:
    'agent-model apps no ApplicationSet generates are not shown (grant list on applications.argoproj.io to see them)',
  expectedApplications:
    "the Missing rows of agent-autonomous spokes (expected Applications the principal does not mirror) are not shown (grant list on configmaps in the hub's Argo CD namespace to see them)",
  rolloutStates: 'the rollouts of waved static apps are not shown (grant list on configmaps to see them)',
} as const;

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** At most `max` names, sorted, then how many more. */
function someNames(names: Iterable<string>, max = 10): string {
  const sorted = [...new Set(names)].sort(byName);
  const shown = sorted.slice(0, max).join(', ');
  return sorted.length > max ? `${shown} and ${sorted.length - max} more` : shown;
}

/** `"given"`, with the known name it most likely stands for and the known ones (some), for a not-found message. */
function didYouMean(given: string, known: Iterable<string>, what: string): string {
  const names = [...new Set(known)];
  if (names.length === 0) return `the hub has no ${what}`;
  const near = nearestName(given, names);
  return `${near ? `did you mean "${near}"? ` : ''}${what}: ${someNames(names)}`;
}

/** Every table to show: one per FleetReport, plus one per namespace of static applications. */
export async function collectStatus(source: StatusSource, options: CollectOptions): Promise<StatusGroup[]> {
  return (await readStatus(source, options)).groups;
}

/**
 * Every table to show: one per FleetReport and per pull ApplicationSet that has none (a problem), plus one per
 * namespace of static applications and of agent-model applications no ApplicationSet generates. Throws
 * {@link StatusNotFoundError} when `options.name` names no such ApplicationSet.
 */
export async function readStatus(source: StatusSource, options: CollectOptions): Promise<StatusReading> {
  const reader = new Reader();
  const allReports = await source.listReports(options.namespace);
  const appSets = await reader.list(
    source.listApplicationSets?.bind(source),
    options.namespace,
    LEFT_OUT.applicationSets,
  );
  const key = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;
  const reportedName = (report: FleetReport) => report.spec?.applicationSet || report.metadata.name;
  const withReport = new Set(allReports.map((report) => key(report.metadata.namespace, reportedName(report))));
  const unreported = appSets.filter(
    (appSet) =>
      !appSet.metadata.deletionTimestamp &&
      isReportedApplicationSet(appSet) &&
      !withReport.has(key(appSet.metadata.namespace, appSet.metadata.name)),
  );
  const wanted = (name: string) => !options.name || name === options.name;
  const groups = [
    ...allReports.filter((report) => wanted(report.metadata.name) || wanted(reportedName(report))).map(groupFromReport),
    ...unreported.filter((appSet) => wanted(appSet.metadata.name)).map(groupFromUnreportedApplicationSet),
  ];
  if (options.name && groups.length === 0)
    throw unknownApplicationSet(source, options, allReports, appSets, reader.unreadable);
  if (options.includeStatic !== false && !options.name) {
    const apps = (
      await reader.list(source.listPullApplications.bind(source), options.namespace, LEFT_OUT.pullApplications)
    ).filter((app) =>
      [DELIVERY_STATIC, DELIVERY_WAVED].includes(app.metadata.annotations?.[DELIVERY_ANNOTATION] ?? ''),
    );
    if (apps.length > 0) {
      const works = await source.listStaticWorks();
      const rollouts = apps.some(isWavedApplication)
        ? rolloutSummaries(
            await reader.list(source.listRolloutStates?.bind(source), options.namespace, LEFT_OUT.rolloutStates),
          )
        : [];
      const byNamespace = new Map<string, Application[]>();
      for (const app of apps) {
        const ns = app.metadata.namespace ?? '';
        byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), app]);
      }
      for (const [ns, nsApps] of byNamespace) {
        const group = groupFromStaticRows(ns, staticApplicationRows(nsApps, works, options.now));
        const here = rollouts.filter((rollout) => rollout.namespace === ns);
        groups.push(here.length ? { ...group, rollouts: here } : group);
      }
    }
    // Agent-model apps an ApplicationSet generates are rows of its report; the others (autonomous agents'
    // Applications the principal mirrors, managed ones rendered one by one) get a table per namespace.
    // Agent-autonomous spokes' expected Applications (listed by synth) join the table of the namespace
    // the principal mirrors them into (the spoke's name): those it does not mirror are Missing.
    const agentApps = (
      await reader.list(source.listAgentApplications?.bind(source), options.namespace, LEFT_OUT.agentApplications)
    ).filter((app) => owningApplicationSet(app) === undefined);
    const expectations = await reader.list(
      source.listExpectedApplications?.bind(source),
      options.namespace,
      LEFT_OUT.expectedApplications,
    );
    const agentByNamespace = new Map<string, Application[]>();
    for (const app of agentApps) {
      const ns = app.metadata.namespace ?? '';
      agentByNamespace.set(ns, [...(agentByNamespace.get(ns) ?? []), app]);
    }
    const expectedByNamespace = new Map<string, ExpectedApplications[]>();
    const problemRows = new Map<string, FleetReportRow[]>();
    for (const configMap of expectations) {
      const parsed = parseExpectedApplications(configMap);
      const ns = parsed.expected?.cluster ?? parsed.cluster ?? configMap.metadata?.namespace ?? '';
      if (options.namespace && ns !== options.namespace) continue;
      if (parsed.expected) expectedByNamespace.set(ns, [...(expectedByNamespace.get(ns) ?? []), parsed.expected]);
      else
        problemRows.set(ns, [
          ...(problemRows.get(ns) ?? []),
          { cluster: ns, state: 'Unknown', message: parsed.problem },
        ]);
    }
    const namespaces = new Set([...agentByNamespace.keys(), ...expectedByNamespace.keys(), ...problemRows.keys()]);
    for (const ns of [...namespaces].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      const rows = agentApplicationRows(
        agentByNamespace.get(ns) ?? [],
        options.now,
        undefined,
        expectedByNamespace.get(ns) ?? [],
      );
      groups.push(groupFromAgentRows(ns, [...rows, ...(problemRows.get(ns) ?? [])]));
    }
  }
  return { groups, unreadable: reader.unreadable };
}

/** Why no table matches the ApplicationSet `options.name`: not a pull ApplicationSet, or no such name (with the known ones). */
function unknownApplicationSet(
  source: StatusSource,
  options: CollectOptions,
  reports: readonly FleetReport[],
  appSets: readonly ApplicationSet[],
  unreadable: readonly string[],
): StatusNotFoundError {
  const where = options.namespace ? ` in namespace ${options.namespace}` : '';
  const other = appSets.find((appSet) => appSet.metadata.name === options.name);
  if (other) {
    return new StatusNotFoundError(
      `ApplicationSet ${other.metadata.namespace ?? ''}/${other.metadata.name} is not a pull ApplicationSet (its template has no ${PULL_LABEL}: "true" label) nor an agent-managed one, so it has no FleetReport and status cannot show it: pass the name of a pull ApplicationSet, or leave the name out to see every one`,
      unreadable,
    );
  }
  const known = [
    ...reports.map((report) => report.spec?.applicationSet || report.metadata.name),
    ...appSets.filter(isReportedApplicationSet).map((appSet) => appSet.metadata.name),
  ];
  return new StatusNotFoundError(
    `no pull ApplicationSet "${options.name}"${where} on the hub at ${source.description}: ${didYouMean(options.name ?? '', known, 'pull ApplicationSets')}`,
    unreadable,
  );
}

/**
 * Every app `query` is about, with its resources: for `--cluster`, from the summaries on the cluster's works (or
 * the hub Applications targeting it when works cannot be read) plus the agent-model apps of that cluster; else from
 * the hub Applications (pull and agent-model) and the lists in their status.
 */
export async function collectResources(
  source: StatusSource,
  query: ResourceQuery,
  namespace?: string,
): Promise<AppResources[]> {
  return (await readResources(source, query, namespace)).apps;
}

/** One app the hub shows, whatever the query: for naming the known clusters and apps when nothing matches. */
interface SeenApp {
  readonly cluster: string;
  readonly application: string;
  /** The ApplicationSet generating it. */
  readonly owner?: string;
}

const seenApp = (cluster: string, application: string, owner: string | undefined): SeenApp => ({
  cluster,
  application,
  ...(owner ? { owner } : {}),
});

/**
 * {@link collectResources}, plus the lists the user may not read. Throws {@link StatusNotFoundError} when
 * `--cluster` or `--app` matches no app, naming the known ones.
 */
export async function readResources(
  source: StatusSource,
  query: ResourceQuery,
  namespace?: string,
): Promise<{ apps: AppResources[]; unreadable: string[] }> {
  const reader = new Reader();
  const inNamespace = (app: { namespace: string }) => namespace === undefined || app.namespace === namespace;
  const wanted = (app: { application: string; namespace: string }, owner?: string): boolean =>
    inNamespace(app) && (query.app === undefined || app.application === query.app || owner === query.app);
  const apps: AppResources[] = [];
  const seen: SeenApp[] = [];
  const agentApps = await reader.list(
    source.listAgentApplications?.bind(source),
    namespace,
    LEFT_OUT.agentApplications,
  );
  const ownerName = (app: Application) => owningApplicationSet(app)?.split('/')[1];
  // The cluster's works, unless they cannot be read or there are none yet: then the hub Applications targeting it.
  const clusterWorks = query.cluster !== undefined ? await source.listClusterWorks?.(query.cluster) : undefined;
  const works = clusterWorks?.length ? clusterWorks : undefined;
  let pullApps: Application[] | undefined;
  const readPullApps = async () =>
    (pullApps ??= await reader.list(source.listPullApplications.bind(source), namespace, LEFT_OUT.pullApplications));
  if (works) {
    for (const work of works) {
      const resources = appResourcesFromWork(work);
      const owner = work.metadata.annotations?.[HOSTING_APPSET_ANNOTATION]?.split('/')[1];
      if (resources && inNamespace(resources)) seen.push(seenApp(resources.cluster, resources.application, owner));
      if (resources && wanted(resources, owner)) apps.push(resources);
    }
  } else {
    for (const app of await readPullApps()) {
      const cluster = targetCluster(app) ?? '';
      const owner = ownerName(app);
      if (inNamespace({ namespace: app.metadata.namespace ?? '' }))
        seen.push(seenApp(cluster, app.metadata.name, owner));
      if (query.cluster !== undefined && cluster !== query.cluster) continue;
      const resources = appResourcesFromApplication(app, cluster);
      if (wanted(resources, owner)) apps.push(resources);
    }
  }
  for (const app of agentApps) {
    const cluster = reportCluster(app) ?? '';
    const owner = ownerName(app);
    if (inNamespace({ namespace: app.metadata.namespace ?? '' })) seen.push(seenApp(cluster, app.metadata.name, owner));
    if (query.cluster !== undefined && cluster !== query.cluster) continue;
    const resources = appResourcesFromApplication(app, cluster);
    if (wanted(resources, owner)) apps.push(resources);
  }
  if (apps.length === 0 && (query.cluster !== undefined || query.app !== undefined)) {
    // Read from the cluster's works only: the other clusters come from the hub Applications.
    if (works) {
      for (const app of await readPullApps())
        seen.push(seenApp(targetCluster(app) ?? '', app.metadata.name, ownerName(app)));
    }
    throw nothingFound(source, query, namespace, seen, reader.unreadable);
  }
  return { apps, unreadable: reader.unreadable };
}

/** Why `--cluster` / `--app` matched no app: which name is unknown, what it may stand for, the known ones. */
function nothingFound(
  source: StatusSource,
  query: ResourceQuery,
  namespace: string | undefined,
  seen: readonly SeenApp[],
  unreadable: readonly string[],
): StatusNotFoundError {
  const where = `${namespace ? ` in namespace ${namespace}` : ''} on the hub at ${source.description}`;
  const clusters = new Set(seen.map((app) => app.cluster).filter(Boolean));
  const names = new Set(seen.flatMap((app) => [app.application, ...(app.owner ? [app.owner] : [])]));
  if (query.cluster !== undefined && !clusters.has(query.cluster)) {
    return new StatusNotFoundError(
      `no application runs on cluster "${query.cluster}"${where}: ${didYouMean(query.cluster, clusters, 'clusters with applications')}`,
      unreadable,
    );
  }
  if (query.app !== undefined && !names.has(query.app)) {
    return new StatusNotFoundError(
      `no application or ApplicationSet "${query.app}"${where}: ${didYouMean(query.app, names, 'applications and ApplicationSets')}`,
      unreadable,
    );
  }
  if (query.app === undefined)
    return new StatusNotFoundError(`no application runs on cluster "${query.cluster}"${where}`, unreadable);
  const runsOn = seen
    .filter((app) => app.application === query.app || app.owner === query.app)
    .map((app) => app.cluster);
  return new StatusNotFoundError(
    `application "${query.app}" has nothing on cluster "${query.cluster ?? ''}"${where}: it runs on ${someNames(runsOn)}`,
    unreadable,
  );
}

/** Default of `--timeout`. */
export const DEFAULT_TIMEOUT_SECONDS = 10;
/** Default of `--interval`. */
export const DEFAULT_INTERVAL_SECONDS = 2;

export interface StatusOptions {
  /** Seconds each request to the hub may take. @default 10 */
  readonly timeout?: number;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly output: OutputFormat;
  readonly watch?: boolean;
  /** Seconds between refreshes with --watch. @default 2 */
  readonly interval?: number;
  readonly includeStatic?: boolean;
  /** false forces colour off (--no-color). */
  readonly color?: boolean;
  /** Show the resources of the apps on this cluster (one table, problems first). */
  readonly cluster?: string;
  /** Show the resources of this application (hub Application name, or the ApplicationSet generating it). */
  readonly app?: string;
  /** Show where this resource runs: `kind/name` or `kind/namespace/name`. */
  readonly resource?: string;
  /** Show where images containing this text run. */
  readonly image?: string;
}

export interface StatusIo {
  readonly stdout: { write(text: string): unknown; isTTY?: boolean };
  readonly stderr: { write(text: string): unknown };
  readonly env: NodeJS.ProcessEnv;
  readonly now: () => Date;
  /** Resolves after `ms`, or early when `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Aborts --watch (Ctrl-C). */
  readonly signal: AbortSignal;
  /** Builds the source (tests inject a fake). @default kubeStatusSource(loadUserKubeConfig(...), { timeoutMs: timeout }) */
  readonly source?: () => StatusSource;
}

const CLEAR_SCREEN = '\u001b[H\u001b[2J';

/** Runs the command; resolves with the exit code. */
export async function runStatus(options: StatusOptions, io: StatusIo): Promise<number> {
  let source: StatusSource;
  try {
    source = io.source
      ? io.source()
      : kubeStatusSource(loadUserKubeConfig(options.kubeconfig, options.context, io.env), {
          timeoutMs: (options.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
        });
  } catch (error) {
    io.stderr.write(`pullfleet status: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_ERROR;
  }
  const color = options.color !== false && options.output === 'table' && useColor(io.stdout, io.env);
  const query: ResourceQuery = {
    ...(options.cluster !== undefined ? { cluster: options.cluster } : {}),
    ...(options.app !== undefined ? { app: options.app } : {}),
    ...(options.resource !== undefined ? { resource: options.resource } : {}),
    ...(options.image !== undefined ? { image: options.image } : {}),
  };
  const resourceView = Object.keys(query).length > 0;
  // One reading of the hub: what goes to stdout (the tables), to stderr (what could not be read, or why
  // nothing could be shown) and the exit code.
  const snapshot = async (): Promise<{ out: string; err: string; code: number }> => {
    const now = io.now();
    const notes = (unreadable: readonly string[]) => unreadable.map((line) => `pullfleet status: ${line}\n`).join('');
    try {
      if (resourceView) {
        const { apps, unreadable } = await readResources(source, query, options.namespace);
        return {
          out: renderResourceOutput(apps, query, options.output, { now, color }),
          err: notes(unreadable),
          code: resourceExitCode(resourceRows(apps, query), query),
        };
      }
      const { groups, unreadable } = await readStatus(source, {
        namespace: options.namespace,
        name: options.name,
        includeStatic: options.includeStatic,
        now,
      });
      return {
        out: renderOutput(groups, options.output, { now, color }),
        err: notes(unreadable),
        code: statusExitCode(groups),
      };
    } catch (error) {
      if (error instanceof StatusNotFoundError)
        return { out: '', err: `${notes(error.unreadable)}pullfleet status: ${error.message}\n`, code: EXIT_PROBLEMS };
      const message = explainError(error, 'fleet status', source.description).message;
      return { out: '', err: `pullfleet status: ${message}\n`, code: EXIT_ERROR };
    }
  };
  try {
    if (!options.watch) {
      const { out, err, code } = await snapshot();
      io.stderr.write(err);
      io.stdout.write(out);
      return code;
    }
    // --watch: redraw in place on a terminal; elsewhere print each new state once (what could not be read
    // is part of the screen).
    const intervalMs = Math.max(0.5, options.interval ?? DEFAULT_INTERVAL_SECONDS) * 1000;
    const redraw = io.stdout.isTTY === true && options.output === 'table';
    let last = '';
    let code = EXIT_ERROR;
    while (!io.signal.aborted) {
      const result = await snapshot();
      const text = result.out + result.err;
      code = result.code;
      if (redraw) {
        io.stdout.write(
          `${CLEAR_SCREEN}${text}\nEvery ${intervalMs / 1000}s · ${io.now().toISOString().slice(11, 19)} UTC · Ctrl-C to stop\n`,
        );
      } else if (text !== last) {
        io.stdout.write(text);
        last = text;
      }
      await io.sleep(intervalMs, io.signal);
    }
    return code;
  } finally {
    source.close();
  }
}

/** Registers `pullfleet status`. */
export function registerStatus(program: Command): void {
  program
    .command('status')
    .description(
      'show what is running where: one table per pull ApplicationSet (and static apps), problems first; exits 1 when anything is degraded, missing, stale or unknown, or a name given matches nothing, 2 when the hub cannot be read',
    )
    .argument('[applicationset]', 'only this ApplicationSet')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context of the hub')
    .option('-n, --namespace <namespace>', 'only this namespace (default: all namespaces)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'))
    .option('-w, --watch', 'refresh until interrupted')
    .option(
      '--interval <seconds>',
      `refresh interval for --watch (default: ${DEFAULT_INTERVAL_SECONDS})`,
      secondsOption({ flag: '--interval', example: DEFAULT_INTERVAL_SECONDS }),
    )
    .option(
      '--timeout <seconds>',
      `give up on the hub after this many seconds per request (default: ${DEFAULT_TIMEOUT_SECONDS})`,
      secondsOption({ flag: '--timeout', example: DEFAULT_TIMEOUT_SECONDS }),
    )
    .option(
      '--no-static',
      'leave out applications no ApplicationSet generates (statically delivered and agent-model ones)',
    )
    .option('--no-color', 'never colour the table')
    .option(
      '--cluster <cluster>',
      "show the resources of every app on this cluster, problems first (reads the cluster's ManifestWorks)",
    )
    .option(
      '--app <name>',
      'show the resources of this app on every cluster (a hub Application, or the ApplicationSet generating it)',
    )
    .option(
      '--resource <kind/name>',
      'show where this resource runs: kind/name or kind/namespace/name',
      (value: string) => {
        const problem = resourceQueryProblem(value);
        if (problem) throw new InvalidArgumentError(problem);
        return value;
      },
    )
    .option('--image <text>', 'show where images containing this text run')
    .action(
      async (
        name: string | undefined,
        opts: {
          kubeconfig?: string;
          context?: string;
          namespace?: string;
          output: OutputFormat;
          watch?: boolean;
          interval?: number;
          timeout?: number;
          static: boolean;
          color: boolean;
          cluster?: string;
          app?: string;
          resource?: string;
          image?: string;
        },
      ) => {
        const controller = new AbortController();
        const stop = (): void => controller.abort();
        process.once('SIGINT', stop);
        try {
          process.exitCode = await runStatus(
            {
              kubeconfig: opts.kubeconfig,
              context: opts.context,
              namespace: opts.namespace,
              name,
              output: opts.output,
              watch: opts.watch,
              interval: opts.interval,
              timeout: opts.timeout,
              includeStatic: opts.static,
              color: opts.color,
              ...(opts.cluster !== undefined ? { cluster: opts.cluster } : {}),
              ...(opts.app !== undefined ? { app: opts.app } : {}),
              ...(opts.resource !== undefined ? { resource: opts.resource } : {}),
              ...(opts.image !== undefined ? { image: opts.image } : {}),
            },
            {
              stdout: process.stdout,
              stderr: process.stderr,
              env: process.env,
              now: () => new Date(),
              sleep: abortableSleep,
              signal: controller.signal,
            },
          );
        } finally {
          process.removeListener('SIGINT', stop);
        }
      },
    );
}
