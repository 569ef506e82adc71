/**
 * The fleet of a real-OCM suite (test/ocm/): the e2e fleet's hub objects on the runner's hub, OCM's real work
 * agent on a spoke API server of its own, and the controller as it ships, set up before the suite and torn
 * down after it the same way by every suite.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { fleetFor, setUpFleet, tearDownFleet, type Fleet } from '../e2e/scenarios.js';
import { realCluster, type TestCluster } from './cluster.js';
import { startOcmSpoke, type OcmSpoke } from './real-ocm.js';
import { shippedControllerStarter } from './shipped-controller.js';

/** How {@link OcmFleet.setUp} starts the suite's world. */
export interface OcmFleetOptions {
  /** Whether every cluster of the fleet gets an agent of its own, or only the first. @default false */
  readonly allClusters?: boolean;
  /** Whether the controller is started before the suite (otherwise each test starts it). @default true */
  readonly startController?: boolean;
}

/** What {@link OcmFleet.setUp} started. */
export interface OcmFleetRun {
  readonly ocm: OcmSpoke;
  readonly controllers: ReturnType<typeof shippedControllerStarter>;
}

/** One real-OCM suite's fleet, named `${prefix}` plus a run-unique suffix. */
export class OcmFleet {
  readonly kubeConfig = new KubeConfig();
  readonly cluster: TestCluster;
  readonly fleet: Fleet;
  /** The first cluster of the fleet (the one with an agent in every suite). */
  readonly spokeCluster: string;
  private ocm?: OcmSpoke;
  private controllers?: ReturnType<typeof shippedControllerStarter>;

  constructor(
    private readonly hubKubeconfig: string,
    prefix: string,
  ) {
    this.kubeConfig.loadFromFile(hubKubeconfig);
    this.cluster = realCluster(this.kubeConfig);
    this.fleet = fleetFor(`${prefix}${Date.now().toString(36).slice(-5)}`);
    this.spokeCluster = this.fleet.clusters[0];
  }

  /**
   * Creates the fleet's hub objects, starts the spoke with its agents (payloads in the fleet's hub namespace)
   * and the controller's starter, and starts the controller unless told not to.
   */
  async setUp(options: OcmFleetOptions = {}): Promise<OcmFleetRun> {
    await setUpFleet(this.cluster, this.fleet);
    const ocm = await startOcmSpoke(this.hubKubeconfig, {
      clusters: options.allClusters ? this.fleet.clusters : [this.spokeCluster],
      spokeNamespaces: [this.fleet.hubNamespace],
    });
    this.ocm = ocm;
    const controllers = shippedControllerStarter(this.kubeConfig, {
      namespace: this.fleet.controllerNamespace,
      argoNamespace: this.fleet.argoNamespace,
    });
    this.controllers = controllers;
    if (options.startController ?? true) await controllers.start();
    return { ocm, controllers };
  }

  /**
   * Stops the controller, removes the fleet's hub objects (best effort), stops the spoke; resolves with the
   * requests of the controller its RBAC forbade.
   */
  async tearDown(): Promise<string[]> {
    await this.controllers?.stopAll();
    const forbidden = this.controllers?.forbidden() ?? [];
    await tearDownFleet(this.cluster, this.fleet).catch(() => undefined);
    await this.ocm?.stop();
    return forbidden;
  }
}
