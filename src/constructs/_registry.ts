/**
 * The constructs a hub knows by name: its declared spokes, its cluster sets (declared and imported) and
 * its GitOpsClusters. Each registers itself when it is declared, through the interfaces of interfaces.ts
 * and the registrations below, so the hub never imports their classes. A second spoke or cluster set of
 * one name, or a GitOpsCluster of another flavour, is a problem of the fleet (recorded, not thrown).
 */
import type { SpokeArgoSetup, SpokeDelivery } from '../model/delivery/bootstrap.js';
import type { DeliveryModel } from '../model/delivery/delivery-model.js';
import type { HubFlavor, IClusterSet, IGitOpsCluster, IHub, ISpoke } from './interfaces.js';
import { recordProblem } from './_problems.js';

/** What a declared spoke tells its hub when it registers. */
export interface SpokeRegistration<S extends ISpoke = ISpoke> {
  readonly spoke: S;
  /** The model `moveTo` asked for, if any. */
  moveTarget(): DeliveryModel | undefined;
  /** An app deploys to the spoke: its bootstrap brings the app's namespace, RBAC, project and repositories. */
  addDelivery(delivery: SpokeDelivery): void;
}

/** What a GitOpsCluster tells its hub when it registers. */
export interface GitOpsClusterRegistration {
  readonly gitOpsCluster: IGitOpsCluster;
  /** The Argo CD its add-on runs on each spoke it selects (spoke bootstraps bind its application controller). */
  readonly spokeArgoSetup: SpokeArgoSetup;
}

/** The hub as the registry names it in messages. */
interface RegistryHub {
  readonly hub: IHub;
  readonly flavor: HubFlavor;
}

/** The spokes, cluster sets and GitOpsClusters of one hub, in declaration order. */
export class HubRegistry<S extends ISpoke = ISpoke> {
  private readonly spokeList: Array<SpokeRegistration<S>> = [];
  private readonly spokeByName = new Map<string, SpokeRegistration<S>>();
  private readonly clusterSetList: IClusterSet[] = [];
  private readonly gitOpsClusterList: GitOpsClusterRegistration[] = [];

  constructor(private readonly owner: RegistryHub) {}

  /**
   * Registers a declared spoke; false for a second spoke of the same name (a problem naming both when
   * they sit in different scopes; in one scope the construct id already reported it).
   */
  public addSpoke(registration: SpokeRegistration<S>): boolean {
    const { spoke } = registration;
    const existing = this.spokeByName.get(spoke.name);
    if (existing) {
      if (existing.spoke.node.scope !== spoke.node.scope)
        recordProblem(
          spoke,
          spoke.node.path,
          `hub "${this.owner.hub.name}" already has a spoke named "${spoke.name}" (${existing.spoke.node.path}): spoke names are ManagedCluster names and must be unique per hub`,
        );
      return false;
    }
    this.spokeList.push(registration);
    this.spokeByName.set(spoke.name, registration);
    return true;
  }

  /** The declared spokes, in declaration order (a copy). */
  public get spokes(): S[] {
    return this.spokeList.map((r) => r.spoke);
  }

  /** The declared spoke called `name`, if any. */
  public spokeNamed(name: string): S | undefined {
    return this.spokeByName.get(name)?.spoke;
  }

  /** The model spoke `name` moves to (`moveTo`), if it is declared and moving. */
  public moveTargetOf(name: string): DeliveryModel | undefined {
    return this.spokeByName.get(name)?.moveTarget();
  }

  /** The declared spokes that declare a move (`moveTo`). */
  public movingSpokes(): S[] {
    return this.spokeList.filter((r) => r.moveTarget() !== undefined).map((r) => r.spoke);
  }

  /**
   * An app deploys to spoke `name`: a declared spoke's bootstrap brings what the app needs; an imported
   * spoke has no bootstrap, so nothing happens.
   */
  public deliverTo(name: string, delivery: SpokeDelivery): void {
    this.spokeByName.get(name)?.addDelivery(delivery);
  }

  /** Registers a cluster set; false for a second set of the same name (a problem naming both). */
  public addClusterSet(set: IClusterSet): boolean {
    const existing = this.clusterSetList.find((s) => s.name === set.name);
    if (existing) {
      if (existing.node.scope !== set.node.scope)
        recordProblem(
          set,
          set.node.path,
          `hub "${this.owner.hub.name}" already has a cluster set named "${set.name}" (${existing.node.path}): use one ClusterSet per name`,
        );
      return false;
    }
    this.clusterSetList.push(set);
    return true;
  }

  /** The cluster sets, declared and imported, in declaration order (a copy). */
  public get clusterSets(): IClusterSet[] {
    return [...this.clusterSetList];
  }

  /**
   * Registers a GitOpsCluster. A flavour other than the hub's or another GitOpsCluster's is a problem
   * naming both: a hub installs one GitOpsCluster CRD.
   */
  public addGitOpsCluster(registration: GitOpsClusterRegistration): void {
    const gc = registration.gitOpsCluster;
    const hub = this.owner.hub;
    const other = this.gitOpsClusterList.find((g) => g.gitOpsCluster.flavor !== gc.flavor)?.gitOpsCluster;
    if (other) {
      recordProblem(
        gc,
        gc.node.path,
        `GitOpsCluster ${gc.node.path} is ${gc.flavor} but GitOpsCluster ${other.node.path} is ${other.flavor}: a hub installs one GitOpsCluster CRD, so every GitOpsCluster of hub "${hub.name}" uses one flavour`,
      );
    } else if (gc.flavor !== this.owner.flavor) {
      recordProblem(
        gc,
        gc.node.path,
        `GitOpsCluster ${gc.node.path} is ${gc.flavor} but hub ${hub.node.path} is ${this.owner.flavor}: a hub installs its own flavour's GitOpsCluster CRD; make it with GitOpsCluster.${this.owner.flavor.toLowerCase()}`,
      );
    }
    this.gitOpsClusterList.push(registration);
  }

  /** The GitOpsClusters, in declaration order (a copy). */
  public get gitOpsClusters(): IGitOpsCluster[] {
    return this.gitOpsClusterList.map((r) => r.gitOpsCluster);
  }

  /** The GitOpsCluster whose placement is `placement` (an ApplicationSet on it takes its model). */
  public gitOpsClusterOfPlacement(placement: unknown): IGitOpsCluster | undefined {
    return this.gitOpsClusterList.find((r) => r.gitOpsCluster.placement === placement)?.gitOpsCluster;
  }

  /** The GitOpsCluster at construct path `path`, if any. */
  public gitOpsClusterAt(path: string | undefined): IGitOpsCluster | undefined {
    return this.gitOpsClusterList.find((r) => r.gitOpsCluster.node.path === path)?.gitOpsCluster;
  }

  /** The Argo CD the first GitOpsCluster selecting spoke `name` (offline) runs there, if any selects it. */
  public spokeArgoSetupOf(name: string): SpokeArgoSetup | undefined {
    return this.gitOpsClusterList.find((r) => r.gitOpsCluster.selectedSpokes().some((s) => s.name === name))
      ?.spokeArgoSetup;
  }
}
