/** The controller's HTTP endpoints: /metrics (Prometheus), /healthz and /readyz. */
import http from 'node:http';
import type { Logger } from 'pino';
import type { ControllerConfig } from './config.js';
import type { LeaderElectionHealth } from './leader.js';
import type { ControllerMetrics } from './metrics.js';

/** What the health endpoints report on, read at each request. */
export interface HealthView {
  stopping(): boolean;
  cachesSynced(): boolean;
  /** Health of the shard Leases; undefined before leader election started (or without it). */
  leaseHealth(): LeaderElectionHealth | undefined;
  /** The shards this replica holds (none before leader election started). */
  heldShards(): readonly number[];
}

/** /readyz: 503 with the reason while not ready, else 200 with this replica's role. */
export function readiness(
  config: Pick<ControllerConfig, 'leaderElection' | 'shards'>,
  view: HealthView,
): { status: number; text: string } {
  // A standby replica is ready (it serves metrics and can take over); it just does not reconcile.
  // One that cannot read or write the Lease is not: it could never take over.
  const health = view.leaseHealth();
  const why = view.stopping()
    ? 'stopping'
    : !view.cachesSynced()
      ? 'caches not synced'
      : health && !health.healthy
        ? health.reason
        : undefined;
  const held = view.heldShards();
  const role = !config.leaderElection
    ? 'ok (leader)'
    : held.length === 0
      ? 'ok (standby)'
      : config.shards > 1
        ? `ok (shards ${held.join(', ')} of ${config.shards})`
        : 'ok (leader)';
  return why ? { status: 503, text: `${why}\n` } : { status: 200, text: `${role}\n` };
}

function handle(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  config: ControllerConfig,
  metrics: ControllerMetrics,
  view: HealthView,
): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/metrics') {
    metrics
      .text()
      .then((text) => {
        res.writeHead(200, { 'Content-Type': metrics.contentType });
        res.end(text);
      })
      .catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
    return;
  }
  if (path === '/healthz') {
    const stopping = view.stopping();
    res.writeHead(stopping ? 503 : 200, { 'Content-Type': 'text/plain' });
    res.end(stopping ? 'stopping\n' : 'ok\n');
    return;
  }
  if (path === '/readyz') {
    const { status, text } = readiness(config, view);
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    res.end(text);
    return;
  }
  res.writeHead(404);
  res.end();
}

/** The server of the endpoints, not listening yet; undefined (no server) when `config.httpPort` is unset. */
export function createHttpServer(
  config: ControllerConfig,
  metrics: ControllerMetrics,
  view: HealthView,
): http.Server | undefined {
  if (config.httpPort === undefined) return undefined;
  return http.createServer((req, res) => handle(req, res, config, metrics, view));
}

/** Listens on `config.httpPort` and `config.httpHost`; resolves once listening. */
export async function listen(server: http.Server, config: ControllerConfig, logger: Logger): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.httpPort, config.httpHost, () => resolve());
  });
  logger.info({ address: server.address() }, 'serving /metrics, /healthz and /readyz');
}

/** Closes `server` (if any), dropping its open connections. */
export async function closeServer(server: http.Server | undefined): Promise<void> {
  if (!server) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

/** The port `server` listens on, if any. */
export function listeningPort(server: http.Server | undefined): number | undefined {
  const address = server?.address();
  return address && typeof address === 'object' ? address.port : undefined;
}
