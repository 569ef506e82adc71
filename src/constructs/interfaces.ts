/**
 * What constructs need from each other. Every prop and parameter that takes another construct takes
 * one of these interfaces, so a declared construct (`new Spoke(...)`) and an imported one
 * (`Spoke.fromSpokeName(...)`) are interchangeable, and so is any other implementation.
 */
import type { IConstruct } from 'constructs';
import type { DeliveryModel, SpokeFolderSource } from '../model/delivery/delivery-model.js';
import type { InventoryCluster } from '../model/placement/placement.js';

/** Which hub distribution runs OCM and Argo CD. */
export enum HubFlavor {
  /** Upstream Open Cluster Management with upstream Argo CD (namespace `argocd`). */
  OCM = 'OCM',
  /** Red Hat Advanced Cluster Management with OpenShift GitOps (namespace `openshift-gitops`). */
  ACM = 'ACM',
}

/** A hub: one OCM (or ACM) hub cluster with its Argo CD. */
export interface IHub extends IConstruct {
  /** The hub name (its folder under dist/). */
  readonly name: string;
  /** Namespace of the hub Argo CD (hub Applications, ApplicationSets, cluster Secrets). */
  readonly argoNamespace: string;
  /** The spokes declared on this hub (imported spokes are not among them), in declaration order (a copy). */
  readonly spokes: ISpoke[];
  /** The cluster sets of this hub, declared and imported, in declaration order (a copy). */
  readonly clusterSets: IClusterSet[];
}

/** A managed cluster of a hub. */
export interface ISpoke extends IConstruct {
  /** The ManagedCluster name (also its namespace on the hub). */
  readonly name: string;
  /** The hub the cluster is registered with. */
  readonly hub: IHub;
  /** Effective ManagedCluster labels (including the cluster-set and vendor labels), a copy. */
  readonly labels: Record<string, string>;
  /** The cluster runs OpenShift. */
  readonly openshift: boolean;
  /** This spoke as offline placement evaluation sees it. */
  inventoryEntry(): InventoryCluster;
}

/** A ManagedClusterSet of a hub. */
export interface IClusterSet extends IConstruct {
  /** The ManagedClusterSet name. */
  readonly name: string;
  /** The hub the set lives on. */
  readonly hub: IHub;
  /** Namespaces this set is bound to (a copy). */
  readonly bindings: string[];
  /**
   * Members are chosen by this label selector; undefined for exclusive membership (the
   * `cluster.open-cluster-management.io/clusterset` label) or a set whose selector the fleet does not know.
   * @default - exclusive membership
   */
  readonly matchLabels?: Record<string, string>;
  /** Whether a spoke is a member of this set. */
  isMember(spoke: ISpoke): boolean;
  /** Binds the set into `namespace` (renders a ManagedClusterSetBinding). */
  bindTo(namespace: string): void;
}

/** A Placement of a hub. */
export interface IPlacement extends IConstruct {
  /** The Placement name. */
  readonly name: string;
  /** The Placement namespace. */
  readonly namespace: string;
  /** The hub the Placement lives on. */
  readonly hub: IHub;
  /**
   * Synth can evaluate the Placement against the hub's spokes. False for a Placement imported with
   * `Placement.fromPlacementName`: only the hub knows what it selects, at runtime.
   */
  readonly evaluatedOffline: boolean;
  /**
   * The spokes this Placement selects from the hub's declared spokes, evaluated offline (sorted by
   * name). Throws when `evaluatedOffline` is false.
   */
  selectedSpokes(): ISpoke[];
}

/** A GitOpsCluster of a hub: registers the clusters of a Placement with the hub Argo CD, in one delivery model. */
export interface IGitOpsCluster extends IConstruct {
  /** Name of the GitOpsCluster object. */
  readonly name: string;
  /** Its namespace (the Placement's: a GitOpsCluster reads decisions in its own namespace only). */
  readonly namespace: string;
  /** The hub it belongs to. */
  readonly hub: IHub;
  /** The Placement whose clusters it registers. */
  readonly placement: IPlacement;
  /** The delivery model of the spokes it selects. */
  readonly model: DeliveryModel;
  /** The flavour rendered (the hub's). */
  readonly flavor: HubFlavor;
  /**
   * Where agent-autonomous spokes' own folders are synced from.
   * @default - none (models other than agent-autonomous)
   */
  readonly spokeFolderSource?: SpokeFolderSource;
  /** The spokes it selects (its placement, evaluated offline). */
  selectedSpokes(): ISpoke[];
}
