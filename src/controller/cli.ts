/**
 * `pullfleet-controller`: flags, environment and start-up (src/controller/main.ts runs it). Flags win over environment variables (PULLFLEET_*), which
 * win over defaults. Out of cluster it reads --kubeconfig (or $KUBECONFIG / ~/.kube/config); in a pod it
 * uses the service account. SIGTERM and SIGINT stop it gracefully.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { pino } from 'pino';
import { defaultConfig, type ControllerConfig } from './config.js';
import { loadKubeConfig } from './kube-client.js';
import { startController } from './manager.js';

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

export function buildCommand(): Command {
  const defaults = defaultConfig();
  const env = (name: string) => process.env[`PULLFLEET_${name}`];
  const command = new Command('pullfleet-controller')
    .description('Hub controller for Argo CD pull delivery on OCM: propagation, status write-back, cluster secrets.')
    .addOption(new Option('--kubeconfig <path>', 'kubeconfig file (default: in-cluster service account, else $KUBECONFIG or ~/.kube/config)').env('KUBECONFIG'))
    .addOption(new Option('--context <name>', 'kubeconfig context to use'))
    .addOption(new Option('--argo-namespace <ns>', 'namespace of the hub Argo CD (cluster Secrets)').env('PULLFLEET_ARGO_NAMESPACE').default(defaults.argoNamespace))
    .addOption(new Option('--namespace <ns>', 'namespace of the controller (leader Lease)').env('PULLFLEET_NAMESPACE').default(env('POD_NAMESPACE') ?? defaults.namespace))
    .addOption(new Option('--feedback-scrape-type <type>', 'how work agents collect feedback').choices(['Poll', 'Watch']).env('PULLFLEET_FEEDBACK_SCRAPE_TYPE').default(defaults.feedbackScrapeType))
    .addOption(new Option('--stale-after <seconds>', 'feedback older than this raises FeedbackStaleWarning and marks fleet report rows Stale (0 disables)').env('PULLFLEET_STALE_AFTER').argParser(int).default(defaults.staleAfterSeconds))
    .addOption(new Option('--operation-timeout <seconds>', 'a forwarded operation the spoke has not started after this long raises OperationPendingWarning (0 disables)').env('PULLFLEET_OPERATION_TIMEOUT').argParser(int).default(defaults.operationTimeoutSeconds))
    .addOption(new Option('--relax-tenancy [bool]', 'let any namespace target any ManagedCluster (single-tenant hubs)').env('PULLFLEET_RELAX_TENANCY').argParser(bool).default(defaults.relaxTenancy))
    .addOption(new Option('--resync <seconds>', 'periodic full resync').env('PULLFLEET_RESYNC').argParser(int).default(defaults.resyncSeconds))
    .addOption(new Option('--workers <n>', 'concurrent Application reconciles').env('PULLFLEET_WORKERS').argParser(int).default(defaults.workers))
    .addOption(new Option('--cluster-secrets [bool]', 'keep blank Argo CD cluster Secrets for pull ApplicationSet clusters').env('PULLFLEET_CLUSTER_SECRETS').argParser(bool).default(defaults.clusterSecrets))
    .addOption(new Option('--fleet-reports [bool]', 'keep a FleetReport per pull ApplicationSet').env('PULLFLEET_FLEET_REPORTS').argParser(bool).default(defaults.fleetReports))
    .addOption(new Option('--multicluster-reports [bool]', "also write ACM's MulticlusterApplicationSetReport per pull ApplicationSet").env('PULLFLEET_MULTICLUSTER_REPORTS').argParser(bool).default(defaults.multiclusterReports))
    .addOption(new Option('--leader-elect [bool]', 'leader election on a Lease').env('PULLFLEET_LEADER_ELECT').argParser(bool).default(defaults.leaderElection))
    .addOption(new Option('--lease-name <name>', 'name of the leader Lease').env('PULLFLEET_LEASE_NAME').default(defaults.leaseName))
    .addOption(new Option('--identity <id>', 'identity in the Lease').env('POD_NAME').default(defaults.identity))
    .addOption(new Option('--port <port>', '/metrics, /healthz and /readyz port').env('PULLFLEET_PORT').argParser(int).default(8080))
    .addOption(new Option('--log-level <level>', 'log level').choices(['trace', 'debug', 'info', 'warn', 'error']).env('PULLFLEET_LOG_LEVEL').default('info'));
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
    resyncSeconds: options.resync as number,
    workers: options.workers as number,
    clusterSecrets: options.clusterSecrets as boolean,
    fleetReports: options.fleetReports as boolean,
    multiclusterReports: options.multiclusterReports as boolean,
    leaderElection: options.leaderElect as boolean,
    leaseName: options.leaseName as string,
    identity: options.identity as string,
    httpPort: options.port as number,
  };
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const command = buildCommand();
  command.parse(argv);
  const options = command.opts();
  const logger = pino({ name: 'pullfleet-controller', level: options.logLevel as string });
  const controller = await startController({
    kubeConfig: loadKubeConfig({ path: options.kubeconfig as string | undefined, context: options.context as string | undefined, preferInCluster: true }),
    config: configFromOptions(options),
    logger,
    // Everything is closed by then: the process ends on its own, non-zero so the restart is visible.
    onLeadershipLost: () => {
      process.exitCode = 1;
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

