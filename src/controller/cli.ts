/**
 * `pullfleet-controller`: flags, environment and start-up (src/controller/main.ts runs it). Flags win over
 * environment variables (PULLFLEET_*, and POD_NAMESPACE / POD_NAME from the downward API), which win over
 * defaults. Out of cluster it reads --kubeconfig (or $KUBECONFIG / ~/.kube/config); in a pod it
 * uses the service account. SIGTERM and SIGINT stop it gracefully.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Command, InvalidArgumentError, Option } from 'commander';
import { pino } from 'pino';
import { defaultConfig, type ControllerConfig } from './runtime/config.js';
import { loadKubeConfig } from '../kube/client.js';
import { startController } from './runtime/manager.js';
import { pullfleetVersion } from '../version.js';

function int(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new InvalidArgumentError(`expected a number, got "${value}"`);
  return parsed;
}

function bool(value: string): boolean {
  const v = value.toLowerCase();
  if (['1', 't', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'f', 'false', 'no', 'off'].includes(v)) return false;
  throw new InvalidArgumentError(`expected true or false, got "${value}"`);
}

/** Seconds as a number >= 0 (fractions allowed). */
function seconds(value: string): number {
  const parsed = int(value);
  if (parsed < 0) throw new InvalidArgumentError(`expected seconds >= 0, got "${value}"`);
  return parsed;
}

/**
 * An address to listen on: an IPv4 or IPv6 address (`0.0.0.0` every IPv4 interface, `::` every interface,
 * `127.0.0.1` loopback only) or a host name. Brackets around an IPv6 address are dropped.
 */
function bindAddress(value: string): string {
  const address = value.trim().replace(/^\[(.*)\]$/, '$1');
  if (isIP(address) !== 0) return address;
  if (
    /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
      address,
    )
  )
    return address;
  throw new InvalidArgumentError(
    `expected an IP address or host name such as 0.0.0.0, :: or 127.0.0.1, got "${value}"`,
  );
}

/**
 * One flag of the command line: its commander flags and description, the environment variables it may come
 * from (the first set one wins) before its default, its parser and its choices.
 */
interface FlagSpec {
  readonly flags: string;
  readonly description: string;
  readonly env?: readonly string[];
  readonly parse?: (value: string) => unknown;
  readonly fallback?: unknown;
  readonly choices?: readonly string[];
}

/**
 * The option of a flag, its value read from the environment before its default. The environment is passed
 * in (not read from process.env at parse time) so tests can resolve the exact env a Deployment renders.
 */
function option(spec: FlagSpec, env: NodeJS.ProcessEnv): Option {
  const { flags, description, parse, choices } = spec;
  const result = new Option(flags, description);
  if (choices) result.choices(choices);
  if (parse) result.argParser(parse);
  const names = spec.env ?? [];
  const from = names.find((name) => env[name] !== undefined && env[name] !== '');
  let value = spec.fallback;
  if (from) {
    const raw = env[from]!;
    try {
      value = parse ? parse(raw) : raw;
    } catch (error) {
      throw new InvalidArgumentError(
        `environment variable ${from}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (choices && !choices.includes(String(value)))
      throw new InvalidArgumentError(`environment variable ${from}: "${raw}" is not one of ${choices.join(', ')}`);
  }
  if (value !== undefined) result.default(value, from ? `${JSON.stringify(value)} from ${from}` : undefined);
  if (names.length > 0) result.description = `${description} [env: ${names.join(', ')}]`;
  return result;
}

/** Where the controller connects and which namespaces it works in. */
function connectionFlags(d: ControllerConfig): FlagSpec[] {
  return [
    {
      flags: '--kubeconfig <path>',
      description: 'kubeconfig file (default: in-cluster service account, else ~/.kube/config)',
      env: ['KUBECONFIG'],
    },
    { flags: '--context <name>', description: 'kubeconfig context to use' },
    {
      flags: '--argo-namespace <ns>',
      description: 'namespace of the hub Argo CD (cluster Secrets)',
      env: ['PULLFLEET_ARGO_NAMESPACE'],
      fallback: d.argoNamespace,
    },
    {
      flags: '--namespace <ns>',
      description: 'namespace of the controller (leader Lease)',
      env: ['PULLFLEET_NAMESPACE', 'POD_NAMESPACE'],
      fallback: d.namespace,
    },
  ];
}

/** How feedback is collected and judged, and which Applications are delivered. */
function deliveryFlags(d: ControllerConfig): FlagSpec[] {
  return [
    {
      flags: '--feedback-scrape-type <type>',
      description: 'how work agents collect feedback',
      env: ['PULLFLEET_FEEDBACK_SCRAPE_TYPE'],
      choices: ['Poll', 'Watch'],
      fallback: d.feedbackScrapeType,
    },
    {
      flags: '--stale-after <seconds>',
      description:
        'feedback older than this raises FeedbackStaleWarning and marks fleet report rows Stale (0 disables)',
      env: ['PULLFLEET_STALE_AFTER'],
      parse: int,
      fallback: d.staleAfterSeconds,
    },
    {
      flags: '--operation-timeout <seconds>',
      description:
        'a forwarded operation the spoke has not started after this long raises OperationPendingWarning (0 disables)',
      env: ['PULLFLEET_OPERATION_TIMEOUT'],
      parse: int,
      fallback: d.operationTimeoutSeconds,
    },
    {
      flags: '--relax-tenancy [bool]',
      description: 'let any namespace target any ManagedCluster (single-tenant hubs)',
      env: ['PULLFLEET_RELAX_TENANCY'],
      parse: bool,
      fallback: d.relaxTenancy,
    },
    {
      flags: '--acm-tenancy-warnings [bool]',
      description:
        "warn on pull Applications pullfleet did not render that ACM's propagation controller would not deliver (hubs taken over from ACM)",
      env: ['PULLFLEET_ACM_TENANCY_WARNINGS'],
      parse: bool,
      fallback: d.acmTenancyWarnings,
    },
  ];
}

/** How much work runs at once, and how it is split between replicas. */
function shardingFlags(d: ControllerConfig): FlagSpec[] {
  return [
    {
      flags: '--resync <seconds>',
      description: 'periodic full resync',
      env: ['PULLFLEET_RESYNC'],
      parse: int,
      fallback: d.resyncSeconds,
    },
    {
      flags: '--workers <n>',
      description: 'concurrent Application reconciles (each has at most one API request in flight)',
      env: ['PULLFLEET_WORKERS'],
      parse: int,
      fallback: d.workers,
    },
    {
      flags: '--shards <n>',
      description: 'split the clusters into this many shards, each with its own Lease (replicas share them)',
      env: ['PULLFLEET_SHARDS'],
      parse: int,
      fallback: d.shards,
    },
  ];
}

/** Which duties besides propagation the controller takes on. */
function dutyFlags(d: ControllerConfig): FlagSpec[] {
  return [
    {
      flags: '--cluster-secrets [bool]',
      description: 'keep blank Argo CD cluster Secrets for pull ApplicationSet clusters',
      env: ['PULLFLEET_CLUSTER_SECRETS'],
      parse: bool,
      fallback: d.clusterSecrets,
    },
    {
      flags: '--fleet-reports [bool]',
      description: 'keep a FleetReport per pull ApplicationSet',
      env: ['PULLFLEET_FLEET_REPORTS'],
      parse: bool,
      fallback: d.fleetReports,
    },
    {
      flags: '--multicluster-reports [bool]',
      description: "also write ACM's MulticlusterApplicationSetReport per pull ApplicationSet",
      env: ['PULLFLEET_MULTICLUSTER_REPORTS'],
      parse: bool,
      fallback: d.multiclusterReports,
    },
    {
      flags: '--resource-summaries [bool]',
      description:
        'ask work agents for a resource summary (OCM 1.0 and later; off for a hub whose ManifestWork CRD has no conditionRules)',
      env: ['PULLFLEET_RESOURCE_SUMMARIES'],
      parse: bool,
      fallback: d.resourceSummaries,
    },
  ];
}

/** Leader election on a Lease. */
function leaderFlags(d: ControllerConfig): FlagSpec[] {
  return [
    {
      flags: '--leader-elect [bool]',
      description: 'leader election on a Lease',
      env: ['PULLFLEET_LEADER_ELECT'],
      parse: bool,
      fallback: d.leaderElection,
    },
    {
      flags: '--lease-name <name>',
      description: 'name of the leader Lease',
      env: ['PULLFLEET_LEASE_NAME'],
      fallback: d.leaseName,
    },
    {
      flags: '--lease-duration <seconds>',
      description: 'how long a Lease not renewed keeps other replicas waiting',
      env: ['PULLFLEET_LEASE_DURATION'],
      parse: seconds,
      fallback: d.leaseDurationSeconds,
    },
    {
      flags: '--renew-deadline <seconds>',
      description: 'a leader that cannot renew within this stops at once',
      env: ['PULLFLEET_RENEW_DEADLINE'],
      parse: seconds,
      fallback: d.renewDeadlineSeconds,
    },
    {
      flags: '--retry-period <seconds>',
      description: 'time between Lease acquire/renew attempts',
      env: ['PULLFLEET_RETRY_PERIOD'],
      parse: seconds,
      fallback: d.retryPeriodSeconds,
    },
  ];
}

/** The timeouts of API requests and watches. */
function timeoutFlags(d: ControllerConfig): FlagSpec[] {
  return [
    {
      flags: '--request-timeout <seconds>',
      description: 'timeout of every API request (watches: --watch-timeout plus a margin)',
      env: ['PULLFLEET_REQUEST_TIMEOUT'],
      parse: seconds,
      fallback: d.requestTimeoutSeconds,
    },
    {
      flags: '--watch-timeout <seconds>',
      description: 'server-side timeout of each watch before it is reopened',
      env: ['PULLFLEET_WATCH_TIMEOUT'],
      parse: seconds,
      fallback: d.watchTimeoutSeconds,
    },
  ];
}

/** The replica's identity, its /metrics and health server, and logging. */
function servingFlags(d: ControllerConfig): FlagSpec[] {
  return [
    {
      flags: '--identity <id>',
      description: 'identity in the Lease',
      env: ['PULLFLEET_IDENTITY', 'POD_NAME'],
      fallback: d.identity,
    },
    {
      flags: '--port <port>',
      description: '/metrics, /healthz and /readyz port',
      env: ['PULLFLEET_PORT'],
      parse: int,
      fallback: 8080,
    },
    {
      flags: '--bind-address <address>',
      description: 'address the /metrics, /healthz and /readyz server listens on',
      env: ['PULLFLEET_BIND_ADDRESS'],
      parse: bindAddress,
      fallback: d.httpHost,
    },
    {
      flags: '--log-level <level>',
      description: 'log level',
      env: ['PULLFLEET_LOG_LEVEL'],
      choices: ['trace', 'debug', 'info', 'warn', 'error'],
      fallback: 'info',
    },
  ];
}

/** Every flag of the controller, in the order `--help` lists them, with the defaults of `d`. */
function controllerFlags(d: ControllerConfig): FlagSpec[] {
  return [
    ...connectionFlags(d),
    ...deliveryFlags(d),
    ...shardingFlags(d),
    ...dutyFlags(d),
    ...leaderFlags(d),
    ...timeoutFlags(d),
    ...servingFlags(d),
  ];
}

/**
 * The command line. Flags win over environment variables, which win over defaults. `env` is where
 * environment variables are read from (@default process.env).
 */
export function buildCommand(env: NodeJS.ProcessEnv = process.env): Command {
  const command = new Command('pullfleet-controller')
    .description('Hub controller for Argo CD pull delivery on OCM: propagation, status write-back, cluster secrets.')
    .version(pullfleetVersion(), '--version', 'print the version of the controller and exit');
  for (const spec of controllerFlags(defaultConfig())) command.addOption(option(spec, env));
  return command;
}

export function configFromOptions(options: Record<string, unknown>): Partial<ControllerConfig> {
  return {
    argoNamespace: options.argoNamespace as string,
    namespace: options.namespace as string,
    feedbackScrapeType: options.feedbackScrapeType as ControllerConfig['feedbackScrapeType'],
    staleAfterSeconds: options.staleAfter as number,
    operationTimeoutSeconds: options.operationTimeout as number,
    relaxTenancy: options.relaxTenancy as boolean,
    acmTenancyWarnings: options.acmTenancyWarnings as boolean,
    resyncSeconds: options.resync as number,
    workers: options.workers as number,
    shards: options.shards as number,
    clusterSecrets: options.clusterSecrets as boolean,
    fleetReports: options.fleetReports as boolean,
    multiclusterReports: options.multiclusterReports as boolean,
    resourceSummaries: options.resourceSummaries as boolean,
    leaderElection: options.leaderElect as boolean,
    leaseName: options.leaseName as string,
    leaseDurationSeconds: options.leaseDuration as number,
    renewDeadlineSeconds: options.renewDeadline as number,
    retryPeriodSeconds: options.retryPeriod as number,
    requestTimeoutSeconds: options.requestTimeout as number,
    watchTimeoutSeconds: options.watchTimeout as number,
    identity: options.identity as string,
    httpPort: options.port as number,
    httpHost: options.bindAddress as string,
  };
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The environment the command line reads: in a pod without POD_NAMESPACE (a controller deployed some other
 * way than the install), POD_NAMESPACE becomes the namespace of the pod's service account, so the Lease is
 * sought where the pod runs rather than in a default namespace it may have no rights in.
 */
export function controllerEnv(
  env: NodeJS.ProcessEnv = process.env,
  namespaceFile = SERVICE_ACCOUNT_NAMESPACE,
): NodeJS.ProcessEnv {
  if (env.POD_NAMESPACE || !env.KUBERNETES_SERVICE_HOST) return env;
  try {
    const namespace = readFileSync(namespaceFile, 'utf8').trim();
    return namespace ? { ...env, POD_NAMESPACE: namespace } : env;
  } catch {
    return env;
  }
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const command = buildCommand(controllerEnv());
  command.parse(argv);
  const options = command.opts();
  const logger = pino({ name: 'pullfleet-controller', level: options.logLevel as string });
  const controller = await startController({
    kubeConfig: loadKubeConfig({
      path: options.kubeconfig as string | undefined,
      context: options.context as string | undefined,
      preferInCluster: true,
    }),
    config: configFromOptions(options),
    logger,
    // Everything is stopped by then (no write can be issued any more): exit non-zero at once so the
    // restart is visible and nothing left open can keep a former leader around.
    onLeadershipLost: () => {
      logger.error('exiting: leadership lost');
      process.exit(1);
    },
  });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    controller.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await controller.ready();
  logger.info('controller ready');
}
