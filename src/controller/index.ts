/**
 * `pullfleet/controller`: the hub controller as a library, to run it inside a process of your own (an
 * operator that embeds it, an integration test against a real hub). The `pullfleet-controller` binary
 * and its image are the usual way to run it; both take the same settings ({@link ControllerConfig}) as
 * flags and environment variables (docs/controller/install.md).
 *
 * Every name is listed on purpose; `npm run api:check` (api/pullfleet-controller.api.md) fails CI when
 * this list changes unintentionally. Reconcilers, queues, caches and the API client are internal.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerConfig } from './runtime/config.js';
import { startController as startManager, type RunningController } from './runtime/manager.js';

export type { ControllerConfig, RunningController };
export { FeedbackScrape } from '../model/core/types.js';
export { loadKubeConfig, type LoadKubeConfigOptions } from '../kube/client.js';

/** What {@link startController} runs the controller with. */
export interface ControllerOptions {
  /** Credentials and API server of the hub, for example from {@link loadKubeConfig}. */
  readonly kubeConfig: KubeConfig;
  /** Settings that differ from the defaults (each field of {@link ControllerConfig} names its default). */
  readonly config?: Partial<ControllerConfig>;
  /** Where the controller logs. @default a pino logger named `pullfleet-controller`, JSON on stdout */
  readonly logger?: Logger;
  /** Called after the controller stopped itself because another replica may lead now. */
  readonly onLeadershipLost?: () => void;
  /** Longest wait in `stop()` for in-flight reconciles; past it the Lease is left to expire. @default 20000 */
  readonly stopTimeoutMs?: number;
}

/**
 * Starts the controller: watches, caches, leader election, the reconcilers and, with `config.httpPort`,
 * the /metrics, /healthz and /readyz server. Throws when the settings are invalid.
 */
export async function startController(options: ControllerOptions): Promise<RunningController> {
  const { kubeConfig, config, logger, onLeadershipLost, stopTimeoutMs } = options;
  return startManager({ kubeConfig, config, logger, onLeadershipLost, stopTimeoutMs });
}
