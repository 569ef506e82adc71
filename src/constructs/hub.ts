/**
 * A hub: one OCM (or ACM) hub cluster with its Argo CD. One cdk8s Chart per hub; spokes, cluster sets,
 * placements and apps are plain constructs under it, so synth time stays linear in fleet size.
 */
import { Chart } from 'cdk8s';
import { Construct, type IConstruct } from 'constructs';
import {
  buildGeneratorConfigMap,
  buildPlacementReaderRole,
  buildPlacementReaderRoleBinding,
  DEFAULT_WORK_SIZE_BUDGET,
  dnsLabelRule,
  type FeedbackScrapeType,
} from '../model/index.js';
import { apiObjectFrom, OutputFiles, routeOutput } from './output.js';
import { ControllerInstall, FeedbackScrape, type ControllerInstallProps } from './controller-install.js';
import type { ClusterSet } from './cluster-set.js';
import type { Spoke } from './spoke.js';
import { addInventoryTo, type AddInventoryOptions, type Inventory } from './inventory.js';

export { FeedbackScrape };

/** Which hub distribution runs OCM and Argo CD. */
export enum HubFlavor {
  /** Upstream Open Cluster Management with upstream Argo CD (namespace `argocd`). */
  OCM = 'OCM',
  /** Red Hat Advanced Cluster Management with OpenShift GitOps (namespace `openshift-gitops`). */
  ACM = 'ACM',
}

/**
 * Settings of the pullfleet controller installed on the hub (`dist/<hub>/hub/controller.yaml`). The
 * Argo CD namespace and the feedback scrape type come from the hub itself.
 */
export interface HubControllerSettings extends Omit<ControllerInstallProps, 'argoNamespace' | 'feedbackScrape'> {
  /**
   * Install the controller on this hub. Without it, pull ApplicationSets deliver nothing and hub
   * Applications get no status: turn it off only when the controller is installed some other way.
   * @default true
   */
  readonly enabled?: boolean;
}

export interface HubProps {
  /**
   * The hub distribution.
   * @default HubFlavor.OCM
   */
  readonly flavor?: HubFlavor;
  /**
   * Namespace of the hub Argo CD (hub Applications, ApplicationSets, cluster Secrets). Pulled
   * Applications land in the same namespace on each spoke.
   * @default 'argocd' for OCM, 'openshift-gitops' for ACM
   */
  readonly argoNamespace?: string;
  /**
   * How work agents report status.
   * @default FeedbackScrape.POLL
   */
  readonly feedbackScrape?: FeedbackScrape;
  /**
   * Largest ManifestWork allowed, in bytes (JSON).
   * @default 512000 (500 KiB)
   */
  readonly workSizeBudget?: number;
  /**
   * Controller settings.
   * @default - controller enabled with its defaults
   */
  readonly controller?: HubControllerSettings;
}

/** Internal: constructs that render late (once every spoke, placement and app is declared). */
export interface Renderable extends IConstruct {
  /** @internal */
  _render(): void;
}

const hubSymbol = Symbol.for('pullfleet.Hub');

export class Hub extends Chart {
  /** The Hub a construct belongs to. Throws when `scope` is not inside a Hub. */
  public static of(scope: IConstruct): Hub {
    for (const s of [...scope.node.scopes].reverse()) {
      if ((s as unknown as Record<symbol, unknown>)[hubSymbol]) return s as Hub;
    }
    throw new Error(`${scope.node.path || '<root>'} is not inside a Hub: create it with a Hub (or one of its constructs) as scope`);
  }

  /** The hub name (its folder under dist/). */
  public readonly name: string;
  public readonly flavor: HubFlavor;
  public readonly argoNamespace: string;
  public readonly feedbackScrape: FeedbackScrape;
  public readonly workSizeBudget: number;
  /** The controller install, or undefined when `controller.enabled` is false. */
  public readonly controller?: ControllerInstall;
  /** Service account of the hub's applicationset-controller. */
  public readonly applicationSetControllerServiceAccount: string;

  private readonly spokeList: Spoke[] = [];
  private readonly spokeByName = new Map<string, Spoke>();
  private readonly clusterSetList: ClusterSet[] = [];
  private readonly renderables: Renderable[] = [];
  private readonly runtimeObjects: Array<{ apiVersion: string; kind: string; namespace?: string; name: string; path: string }> = [];
  private readonly late: Array<() => void> = [];
  private rendered = false;
  private appSetSupport?: Construct;

  constructor(scope: Construct, id: string, props: HubProps = {}) {
    super(scope, id);
    Object.defineProperty(this, hubSymbol, { value: true });
    this.name = id;
    this.flavor = props.flavor ?? HubFlavor.OCM;
    this.argoNamespace = props.argoNamespace ?? (this.flavor === HubFlavor.ACM ? 'openshift-gitops' : 'argocd');
    this.feedbackScrape = props.feedbackScrape ?? FeedbackScrape.POLL;
    this.workSizeBudget = props.workSizeBudget ?? DEFAULT_WORK_SIZE_BUDGET;
    if (!(this.workSizeBudget > 0)) throw new Error(`Hub ${id}: workSizeBudget ${this.workSizeBudget} must be a positive number of bytes`);
    this.applicationSetControllerServiceAccount =
      this.flavor === HubFlavor.ACM ? 'openshift-gitops-applicationset-controller' : 'argocd-applicationset-controller';
    const problems = [dnsLabelRule('hub name', id), dnsLabelRule('argoNamespace', this.argoNamespace)].filter((p): p is string => !!p);
    this.node.addValidation({ validate: () => problems });
    if (problems.length > 0) return; // the install would repeat the namespace problem; validation reports it once
    const { enabled = true, ...install } = props.controller ?? {};
    if (enabled) {
      this.controller = new ControllerInstall(this, 'Controller', { ...install, argoNamespace: this.argoNamespace, feedbackScrape: this.feedbackScrape });
    }
  }

  /** The feedback scrape type to put on works, or undefined for the default (Poll). */
  public get workFeedbackScrapeType(): FeedbackScrapeType | undefined {
    return this.feedbackScrape === FeedbackScrape.WATCH ? 'Watch' : undefined;
  }

  /** The spokes of this hub, in declaration order (a copy). */
  public get spokes(): Spoke[] {
    return [...this.spokeList];
  }

  /** The cluster sets of this hub, in declaration order (a copy). */
  public get clusterSets(): ClusterSet[] {
    return [...this.clusterSetList];
  }

  /**
   * Declares a Spoke for every cluster of `inventory` (`Inventory.fromFile('inventory/<hub>.yaml')`), under
   * the construct `Inventory`. Entries change through `options.overrides` and give way to hand-written
   * spokes through `options.exclude`; any other clash with a declared spoke throws, naming both.
   */
  public addInventory(inventory: Inventory, options: AddInventoryOptions = {}): Spoke[] {
    return addInventoryTo(this, inventory, options);
  }

  /** @internal */
  public _addSpoke(spoke: Spoke): void {
    const existing = this.spokeByName.get(spoke.name);
    if (existing) throw new Error(`${spoke.node.path}: hub "${this.name}" already has a spoke named "${spoke.name}" (${existing.node.path}): spoke names are ManagedCluster names and must be unique per hub`);
    this.spokeList.push(spoke);
    this.spokeByName.set(spoke.name, spoke);
  }

  /** @internal */
  public _addClusterSet(set: ClusterSet): void {
    const existing = this.clusterSetList.find((s) => s.name === set.name);
    if (existing) throw new Error(`${set.node.path}: hub "${this.name}" already has a cluster set named "${set.name}" (${existing.node.path}): use one ClusterSet per name`);
    this.clusterSetList.push(set);
  }

  /**
   * @internal an object that will exist on the hub at runtime (an ApplicationSet-generated Application
   * for a spoke its placement selects offline), checked for collisions with synthesized objects.
   */
  public _addRuntimeObject(obj: { apiVersion: string; kind: string; namespace?: string; name: string; path: string }): void {
    this.runtimeObjects.push(obj);
  }

  /** @internal */
  public get _runtimeObjects(): ReadonlyArray<{ apiVersion: string; kind: string; namespace?: string; name: string; path: string }> {
    return this.runtimeObjects;
  }

  /** @internal registers a construct that renders once the whole hub is declared. */
  public _registerRenderable(renderable: Renderable): void {
    this.renderables.push(renderable);
  }

  /** @internal runs `fn` after every registered construct rendered (bootstrap needs all apps). */
  public _afterRender(fn: () => void): void {
    this.late.push(fn);
  }

  /** @internal the generator ConfigMap and applicationset-controller RBAC, created once per hub. */
  public _ensureApplicationSetSupport(): void {
    if (this.appSetSupport) return;
    this.appSetSupport = new Construct(this, 'ApplicationSetSupport');
    routeOutput(this.appSetSupport, OutputFiles.APPLICATION_SETS);
    apiObjectFrom(this.appSetSupport, 'GeneratorConfigMap', buildGeneratorConfigMap(this.argoNamespace));
    apiObjectFrom(this.appSetSupport, 'PlacementReaderRole', buildPlacementReaderRole(this.argoNamespace));
    apiObjectFrom(this.appSetSupport, 'PlacementReaderRoleBinding', buildPlacementReaderRoleBinding(this.argoNamespace, this.applicationSetControllerServiceAccount));
  }

  /** @internal renders late objects (static works, bootstrap) exactly once. */
  public _render(): void {
    if (this.rendered) return;
    this.rendered = true;
    for (const r of this.renderables) r._render();
    for (const fn of this.late) fn();
  }
}
