/**
 * A hub: one OCM (or ACM) hub cluster with its Argo CD. One cdk8s Chart per hub; spokes, cluster sets,
 * placements and apps are plain constructs under it, so synth time stays linear in fleet size.
 */
import { Chart } from 'cdk8s';
import { Construct, type IConstruct } from 'constructs';
import { type FeedbackScrapeType } from '../model/core/types.js';
import {
  buildGeneratorConfigMap,
  buildPlacementReaderRole,
  buildPlacementReaderRoleBinding,
} from '../model/delivery/appset.js';
import {
  buildAgentAppProject,
  DeliveryModel,
  isAgentDeliveryModel,
  resolveDeliveryModels,
  spokeFolderPath,
} from '../model/delivery/delivery-model.js';
import { type AppDefinition } from '../model/delivery/hub-application.js';
import {
  decideTransition,
  type DeleteOption,
  type PreviousSpoke,
  type PreviousWork,
  type TransitionDecision,
} from '../model/delivery/transition.js';
import { type PlanState, type PlanStateSpoke } from '../model/plan/state.js';
import { buildExpectedApplicationsConfigMap } from '../model/runtime/expected-apps.js';
import { ETCD_OBJECT_LIMIT } from '../model/validation/object-rules.js';
import { DEFAULT_WORK_SIZE_BUDGET, dnsLabelRule } from '../model/validation/rules.js';
import { apiObjectFrom, OutputFiles, routeOutput } from './_output.js';
import {
  CONTROLLER_INSTALL_PROPS,
  ControllerInstall,
  FeedbackScrape,
  type ControllerInstallProps,
} from './controller-install.js';
import type { IClusterSet, IHub } from './interfaces.js';
import type { Spoke } from './spoke.js';
import type { GitOpsCluster } from './gitops-cluster.js';
import { ADD_INVENTORY_OPTIONS, addInventoryTo, type AddInventoryOptions, type Inventory } from './inventory.js';
import { bool, checkProps, enumOf, num, propsOf, shape, str } from './_props-check.js';

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

/** Settings of a {@link Hub}. */
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

const {
  argoNamespace: _argoNamespace,
  feedbackScrape: _feedbackScrape,
  ...controllerSettings
} = CONTROLLER_INSTALL_PROPS.spec;

/** The runtime type of every {@link HubProps} key (see props-check.ts). */
const HUB_PROPS = propsOf<HubProps>('Hub', {
  flavor: enumOf(HubFlavor, 'HubFlavor'),
  argoNamespace: str(),
  feedbackScrape: enumOf(FeedbackScrape, 'FeedbackScrape'),
  workSizeBudget: num('a number of bytes'),
  controller: shape<HubControllerSettings>('controller settings', { enabled: bool(), ...controllerSettings }),
});

/** Internal: constructs that render late (once every spoke, placement and app is declared). */
export interface Renderable extends IConstruct {
  /** @internal */
  _render(): void;
  /**
   * @internal the works that deliver this construct's apps to `spoke` in the basic model whatever model
   * the spoke runs (a basic ApplicationSet): a move of the spoke leaves them in place.
   */
  _worksKeptOn?(spoke: string): string[];
}

const hubSymbol = Symbol.for('pullfleet.Hub');
const kindSymbol = Symbol.for('pullfleet.kind');
const recorded = new WeakMap<IConstruct, Array<{ path: string; message: string }>>();

/**
 * @internal Records a problem for the fleet report when there is no construct to attach it to yet
 * (found before `super()`), or when a construct must keep going after bad input. Fleet lists it with
 * every other problem.
 */
export function recordProblem(scope: IConstruct, path: string, message: string): void {
  const root = scope.node.root;
  const list = recorded.get(root);
  if (list) list.push({ path, message });
  else recorded.set(root, [{ path, message }]);
}

/** @internal problems recorded under `root` by {@link recordProblem}. */
export function recordedProblems(root: IConstruct): ReadonlyArray<{ path: string; message: string }> {
  return recorded.get(root) ?? [];
}

/**
 * @internal the name a construct takes from its id: the id itself, or, for an empty id that
 * {@link claimId} already reported, the placeholder id it was given (so nothing else fails on it).
 */
export function nameFromId(c: IConstruct, id: string): string {
  return typeof id === 'string' && id !== '' ? id : c.node.id;
}

/** @internal the pullfleet kind of a construct (Hub, Spoke, Placement...), or undefined. */
export function kindOf(c: IConstruct): string | undefined {
  return (c as unknown as Record<symbol, string | undefined>)[kindSymbol];
}

/** @internal marks a construct as a pullfleet construct of `kind` (the owner of what it renders). */
export function markKind(c: IConstruct, kind: string): void {
  Object.defineProperty(c, kindSymbol, { value: kind });
}

/**
 * Kinds whose construct id is their name. Every other kind is scoped by kind (`Placement:prod`), as
 * Kubernetes names are, so a ClusterSet, a Placement and a GitOpsCluster may all be called `prod`.
 * Spokes keep their name because cluster names are the fleet's key (bootstrap folders, work namespaces).
 */
const BARE_ID_KINDS: ReadonlySet<string> = new Set(['Hub', 'Spoke']);

/**
 * @internal The construct id for a pullfleet construct of `kind` called `name` under `scope`: the name
 * for a Hub or a Spoke, `<Kind>:<name>` for every other kind. The id depends on the kind and the name
 * only, never on what was declared before, so reordering declarations never changes a construct path.
 * A second construct of the same kind and name is a problem (reported, not thrown, so every problem
 * shows in one run); it gets a numbered id so the rest of the fleet can still be checked.
 */
export function claimId(scope: IConstruct, kind: string, name: string): string {
  if (typeof name !== 'string' || name === '') {
    // The constructs library refuses an empty id with a bare stack trace; say what the id is for instead.
    const examples: Record<string, string> = {
      Hub: 'hub',
      ClusterSet: 'prod',
      Placement: 'all-prod',
      Spoke: 'prod-east',
      GitOpsCluster: 'agents',
    };
    const example = `new ${kind}(${kind === 'Hub' ? 'fleet' : 'hub'}, '${examples[kind] ?? 'guestbook'}'${kind === 'Hub' ? '' : ', …'})`;
    recordProblem(
      scope,
      scope.node.path || kind,
      `a ${kind} was given ${name === '' ? 'an empty id' : `the id ${JSON.stringify(name) ?? String(name)}`}: the id is its name (a DNS label), for example ${example}`,
    );
    let n = 1;
    while (scope.node.tryFindChild(`unnamed-${kind.toLowerCase()}-${n}`)) n++;
    return `unnamed-${kind.toLowerCase()}-${n}`;
  }
  const wanted = BARE_ID_KINDS.has(kind) ? name : `${kind}:${name}`;
  const holder = scope.node.tryFindChild(wanted);
  if (!holder) return wanted;
  const holderKind = kindOf(holder);
  const at = scope.node.path ? `${scope.node.path}/${wanted}` : wanted;
  recordProblem(
    scope,
    at,
    `${scope.node.path ? `"${scope.node.path}"` : 'the fleet'} already has ${holderKind === kind ? `a ${kind}` : 'a construct'} with the id "${name}" (${holder.node.path}): give each ${kind} its own name`,
  );
  let n = 2;
  while (scope.node.tryFindChild(`${wanted}#${n}`)) n++;
  return `${wanted}#${n}`;
}

/**
 * A hub: a cdk8s Chart whose objects land in `dist/<hub>/`. Spokes, cluster sets, placements and apps
 * are created with the hub (or a construct inside it) as scope.
 */
export class Hub extends Chart implements IHub {
  /**
   * Whether `x` is a Hub. Checks a `Symbol.for` marker, so it also recognises a Hub made by another
   * copy of this package.
   */
  public static isHub(x: unknown): x is Hub {
    return x !== null && typeof x === 'object' && (x as Record<symbol, unknown>)[hubSymbol] === true;
  }

  /** The Hub a construct belongs to. Throws when `scope` is not inside a Hub. */
  public static of(scope: IConstruct): Hub {
    for (const s of [...scope.node.scopes].reverse()) {
      if (Hub.isHub(s)) return s;
    }
    throw new Error(
      `${scope.node.path || '<root>'} is not inside a Hub: create it with a Hub (or one of its constructs) as scope`,
    );
  }

  /** The hub name (its folder under dist/). */
  public readonly name: string;
  /** The hub distribution. */
  public readonly flavor: HubFlavor;
  /** Namespace of the hub Argo CD. */
  public readonly argoNamespace: string;
  /** How work agents report status. */
  public readonly feedbackScrape: FeedbackScrape;
  /** Largest ManifestWork allowed, in bytes (JSON). */
  public readonly workSizeBudget: number;
  /** The controller install, or undefined when `controller.enabled` is false. */
  public readonly controller?: ControllerInstall;
  /** Service account of the hub's applicationset-controller. */
  public readonly applicationSetControllerServiceAccount: string;

  private readonly spokeList: Spoke[] = [];
  private readonly spokeByName = new Map<string, Spoke>();
  private readonly clusterSetList: IClusterSet[] = [];
  private readonly renderables: Renderable[] = [];
  private readonly runtimeObjects: Array<{
    apiVersion: string;
    kind: string;
    namespace?: string;
    name: string;
    path: string;
  }> = [];
  private readonly late: Array<() => void> = [];
  private rendered = false;
  private renderedBy?: string;
  private appSetSupport?: Construct;
  private readonly gitOpsClusterList: GitOpsCluster[] = [];
  private spokeModels?: Map<string, { model: DeliveryModel; path: string }>;
  private readonly decisions = new Map<string, TransitionDecision & { gitOpsCluster?: string }>();
  private previousState?: Map<string, PlanStateSpoke>;
  /** Why Fleet found no plan state for this hub, when it looked. */
  private previousStateMissing?: string;
  private readonly transitionWarnings: string[] = [];
  private readonly renderedWorks = new Map<string, PreviousWork[]>();
  /** Spoke Applications (`<namespace>/<name>`) handed over to a managed agent, per spoke (basic → agent-managed). */
  private readonly handOverApps = new Map<string, Set<string>>();
  private readonly agentProjects = new Map<
    string,
    Array<{ cluster: string; namespace: string; sourceRepos: string[] }>
  >();
  private readonly spokeApps = new Map<string, { model: DeliveryModel; path: string }>();
  private readonly autonomousApps = new Map<string, Set<string>>();

  constructor(scope: Construct, id: string, props: HubProps = {}) {
    super(scope, claimId(scope, 'Hub', id));
    Object.defineProperty(this, hubSymbol, { value: true });
    markKind(this, 'Hub');
    props = checkProps(this, HUB_PROPS, props);
    this.name = nameFromId(this, id);
    this.flavor = props.flavor ?? HubFlavor.OCM;
    this.argoNamespace = props.argoNamespace ?? (this.flavor === HubFlavor.ACM ? 'openshift-gitops' : 'argocd');
    this.feedbackScrape = props.feedbackScrape ?? FeedbackScrape.POLL;
    this.workSizeBudget = props.workSizeBudget ?? DEFAULT_WORK_SIZE_BUDGET;
    const problems = [dnsLabelRule('hub name', this.name), dnsLabelRule('argoNamespace', this.argoNamespace)].filter(
      (p): p is string => !!p,
    );
    if (!(
      typeof this.workSizeBudget === 'number' &&
      this.workSizeBudget > 0 &&
      this.workSizeBudget <= ETCD_OBJECT_LIMIT
    )) {
      problems.push(
        `workSizeBudget ${this.workSizeBudget} must be a number of bytes above 0 and at most ${ETCD_OBJECT_LIMIT} (the etcd object limit): use the default ${DEFAULT_WORK_SIZE_BUDGET} or a smaller budget`,
      );
      this.workSizeBudget = DEFAULT_WORK_SIZE_BUDGET;
    }
    this.applicationSetControllerServiceAccount =
      this.flavor === HubFlavor.ACM ? 'openshift-gitops-applicationset-controller' : 'argocd-applicationset-controller';
    this.node.addValidation({ validate: () => problems });
    if (problems.length > 0) return; // the install would repeat the namespace problem; validation reports it once
    const { enabled = true, ...install } = props.controller ?? {};
    if (enabled) {
      this.controller = new ControllerInstall(this, 'Controller', {
        ...install,
        argoNamespace: this.argoNamespace,
        feedbackScrape: this.feedbackScrape,
      });
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

  /** The cluster sets of this hub, declared and imported, in declaration order (a copy). */
  public get clusterSets(): IClusterSet[] {
    return [...this.clusterSetList];
  }

  /**
   * Declares a Spoke for every cluster of `inventory` (`Inventory.fromFile('inventory/<hub>.yaml')`), under
   * the construct `Inventory`. Entries change through `options.overrides` and give way to hand-written
   * spokes through `options.exclude`; any other clash with a declared spoke throws, naming both.
   */
  public addInventory(inventory: Inventory, options: AddInventoryOptions = {}): Spoke[] {
    return addInventoryTo(this, inventory, checkProps(this, ADD_INVENTORY_OPTIONS, options));
  }

  /** @internal */
  public _addSpoke(spoke: Spoke): boolean {
    this.checkNotRendered(spoke);
    const existing = this.spokeByName.get(spoke.name);
    if (existing) {
      if (existing.node.scope !== spoke.node.scope)
        recordProblem(
          spoke,
          spoke.node.path,
          `hub "${this.name}" already has a spoke named "${spoke.name}" (${existing.node.path}): spoke names are ManagedCluster names and must be unique per hub`,
        );
      return false;
    }
    this.spokeList.push(spoke);
    this.spokeByName.set(spoke.name, spoke);
    return true;
  }

  /** The GitOpsClusters of this hub, in declaration order (a copy). */
  public get gitOpsClusters(): GitOpsCluster[] {
    return [...this.gitOpsClusterList];
  }

  /** @internal a GitOpsCluster registers; a flavour other than the hub's or another GitOpsCluster's is a problem naming both. */
  public _addGitOpsCluster(gc: GitOpsCluster): void {
    const other = this.gitOpsClusterList.find((g) => g.flavor !== gc.flavor);
    if (other) {
      recordProblem(
        gc,
        gc.node.path,
        `GitOpsCluster ${gc.node.path} is ${gc.flavor} but GitOpsCluster ${other.node.path} is ${other.flavor}: a hub installs one GitOpsCluster CRD, so every GitOpsCluster of hub "${this.name}" uses one flavour`,
      );
    } else if (gc.flavor !== this.flavor) {
      recordProblem(
        gc,
        gc.node.path,
        `GitOpsCluster ${gc.node.path} is ${gc.flavor} but hub ${this.node.path} is ${this.flavor}: a hub installs its own flavour's GitOpsCluster CRD; drop the flavor prop`,
      );
    }
    this.gitOpsClusterList.push(gc);
  }

  /** @internal the plan state the previous synth left for this hub (read by Fleet before rendering). */
  public _setPreviousState(state: PlanState): void {
    this.previousState = new Map(state.spokes.map((s) => [s.name, s]));
  }

  /** @internal Fleet looked for this hub's plan state and found none: `why` (`dist/hub/plan-state.json does not exist`). */
  public _setPreviousStateMissing(why: string): void {
    this.previousStateMissing = why;
  }

  /**
   * @internal what spoke `name` renders: the model of the GitOpsCluster whose placement selects it
   * (evaluated offline), else basic, held back by a move in progress (see decideTransition), and the
   * deleteOption of its works. Computed once per spoke, during rendering; conflicts are reported.
   */
  public _deliveryModelOf(name: string): TransitionDecision & { gitOpsCluster?: string } {
    const known = this.decisions.get(name);
    if (known) return known;
    if (!this.spokeModels) {
      const { models, problems } = resolveDeliveryModels(
        this.gitOpsClusterList.map((g) => ({
          path: g.node.path,
          model: g.model,
          spokes: g.selectedSpokes().map((s) => s.name),
        })),
      );
      for (const p of problems) recordProblem(this, p.path, p.message);
      this.spokeModels = models;
    }
    const found = this.spokeModels.get(name);
    const spoke = this.spokeByName.get(name);
    const decision = decideTransition(
      name,
      found?.model ?? DeliveryModel.BASIC,
      spoke?._moveTarget,
      this.movingWorksOf(name),
    );
    if (decision.problem) recordProblem(this, spoke?.node.path ?? this.node.path, decision.problem);
    if (decision.warning) this.transitionWarnings.push(decision.warning);
    const result = { ...decision, ...(found ? { gitOpsCluster: found.path } : {}) };
    this.decisions.set(name, result);
    return result;
  }

  /**
   * The previous plan state of spoke `name` as a change of its model sees it: without the works that
   * basic ApplicationSets keep delivering to it whatever model it runs (a move neither drops nor hands
   * them over, so they never call for a two-step move).
   */
  private movingWorksOf(name: string): PlanStateSpoke | undefined {
    const previous = this.previousState?.get(name);
    if (!previous?.works?.length) return previous;
    const kept = new Set(this.renderables.flatMap((r) => r._worksKeptOn?.(name) ?? []));
    return kept.size === 0 ? previous : { ...previous, works: previous.works.filter((w) => !kept.has(w.name)) };
  }

  /** @internal spoke `name` as the previous synth left it (its plan state), if any. */
  public _previousSpoke(name: string): PlanStateSpoke | undefined {
    return this.previousState?.get(name);
  }

  /**
   * @internal a ManifestWork synth renders for spoke `spoke` (recorded in the plan state); `fromAgent`:
   * its Application was taken back from a managed agent and keeps the agent's destination.
   */
  public _addRenderedWork(spoke: string, name: string, deleteOption: DeleteOption, fromAgent = false): void {
    const list = this.renderedWorks.get(spoke) ?? [];
    list.push({ name, deleteOption, ...(fromAgent ? { fromAgent: true } : {}) });
    this.renderedWorks.set(spoke, list);
  }

  /**
   * @internal during basic → agent-managed, a spoke Application (`<namespace>/<name>`) the move hands to
   * the agent (recorded in the plan state, named by `pullfleet plan` as briefly unmanaged).
   */
  public _addHandOver(spoke: string, application: string): void {
    const set = this.handOverApps.get(spoke) ?? new Set<string>();
    set.add(application);
    this.handOverApps.set(spoke, set);
  }

  /**
   * @internal spoke `name` in the plan state: the model rendered, its works, a move in progress. The
   * spoke is recorded as taken back from the agent only while one of its works keeps the agent's destination.
   */
  public _spokeDeliveryState(name: string): PreviousSpoke & { readonly deliveryModel: DeliveryModel } {
    const decision = this._deliveryModelOf(name);
    const works = [...(this.renderedWorks.get(name) ?? [])];
    const handOver = decision.moveStep !== undefined ? [...(this.handOverApps.get(name) ?? [])].sort() : [];
    return {
      deliveryModel: decision.model,
      works,
      ...(decision.movingTo ? { movingTo: decision.movingTo } : {}),
      ...(decision.moveStep !== undefined ? { moveStep: decision.moveStep } : {}),
      ...(handOver.length ? { handOver } : {}),
      ...(decision.fromAgent && works.some((w) => w.fromAgent) ? { fromAgent: true } : {}),
    };
  }

  /** @internal legal but almost certainly wrong: a finished move still declared. */
  public _warnings(): string[] {
    return [...this.transitionWarnings, ...this.unjudgedMoves()];
  }

  /**
   * A move judged without a plan state: synth cannot tell what the spokes run now, so it renders the
   * model they move to as if nothing had been delivered (no step 1), and a check comparing the committed
   * output with such a synth differs.
   */
  private unjudgedMoves(): string[] {
    if (this.previousState) return [];
    const moving = this.spokeList.filter((s) => s._moveTarget !== undefined);
    if (moving.length === 0) return [];
    const names = moving.map((s) => `"${s.name}"`).join(', ');
    const where = this.previousStateMissing ?? 'no previous output was given';
    return [
      `spoke${moving.length === 1 ? '' : 's'} ${names} ${moving.length === 1 ? 'declares' : 'declare'} moveTo(...), but synth read no plan state of hub "${this.name}" (${where}): a move is judged against the committed plan state, and without it synth renders the model moved to as if nothing had been delivered, with no step 1. Synthesize into the committed output folder, or name it: pullfleet synth --plan-state dist (a first synth of a new hub may ignore this)`,
    ];
  }

  /** @internal the GitOpsCluster whose placement is `placement` (an ApplicationSet on it takes its model). */
  public _gitOpsClusterOfPlacement(placement: IConstruct): GitOpsCluster | undefined {
    return this.gitOpsClusterList.find((g) => g.placement === placement);
  }

  /**
   * @internal an Application one construct delivers to one spoke (`<spoke>/<namespace>/<name>` on the
   * spoke). A basic-model and an agent-model delivery of the same Application is a problem naming both.
   */
  public _claimSpokeApplication(
    spoke: string,
    namespace: string,
    name: string,
    model: DeliveryModel,
    path: string,
  ): void {
    const key = `${spoke}/${namespace}/${name}`;
    if (model === DeliveryModel.AGENT_AUTONOMOUS) {
      // Rendered into the spoke's own folder: the hub records it so status can tell when it never shows up.
      const names = this.autonomousApps.get(spoke) ?? new Set<string>();
      names.add(name);
      this.autonomousApps.set(spoke, names);
    }
    const prior = this.spokeApps.get(key);
    if (!prior) {
      this.spokeApps.set(key, { model, path });
      return;
    }
    if (isAgentDeliveryModel(prior.model) !== isAgentDeliveryModel(model)) {
      recordProblem(
        this,
        path,
        `${path} delivers Application ${namespace}/${name} to spoke "${spoke}" in the ${model} model, and ${prior.path} delivers the same Application there in the ${prior.model} model: the two would fight over it; deliver it from one construct (move the spoke with moveTo for a hand-over)`,
      );
    }
  }

  /**
   * @internal an agent-managed app targets `cluster`: a project other than `default` gets a hub
   * AppProject whose destinations name the agents (the principal checks them before routing).
   */
  public _addAgentProjectDestination(def: AppDefinition, cluster: string): void {
    if (def.project === 'default') return;
    const list = this.agentProjects.get(def.project) ?? [];
    list.push({
      cluster,
      namespace: def.destinationNamespace,
      sourceRepos: def.sources.map((s) => s.repoURL).filter((r): r is string => typeof r === 'string'),
    });
    this.agentProjects.set(def.project, list);
  }

  /**
   * One ConfigMap per agent-autonomous spoke listing the Applications its folder holds
   * (`hub/expected-applications.yaml`): the hub cannot otherwise tell an Application that never showed
   * up from one that was never meant to exist.
   */
  private renderExpectedApplications(): void {
    if (this.autonomousApps.size === 0) return;
    const scope = new Construct(this, 'ExpectedApplications');
    routeOutput(scope, OutputFiles.EXPECTED_APPLICATIONS);
    for (const spoke of [...this.autonomousApps.keys()].sort()) {
      const gitOpsCluster = this._deliveryModelOf(spoke).gitOpsCluster;
      const source = this.gitOpsClusterList.find((g) => g.node.path === gitOpsCluster)?.spokeFolderSource;
      const folder = source ? spokeFolderPath(source, this.name, spoke) : `dist/${this.name}/spokes/${spoke}`;
      apiObjectFrom(
        scope,
        spoke,
        buildExpectedApplicationsConfigMap({
          spoke,
          namespace: this.argoNamespace,
          applications: [...this.autonomousApps.get(spoke)!],
          folder,
        }),
      );
    }
  }

  /** @internal the declared spoke called `name`, if any. */
  public _spokeNamed(name: string): Spoke | undefined {
    return this.spokeByName.get(name);
  }

  /** @internal */
  public _addClusterSet(set: IClusterSet): boolean {
    this.checkNotRendered(set);
    const existing = this.clusterSetList.find((s) => s.name === set.name);
    if (existing) {
      if (existing.node.scope !== set.node.scope)
        recordProblem(
          set,
          set.node.path,
          `hub "${this.name}" already has a cluster set named "${set.name}" (${existing.node.path}): use one ClusterSet per name`,
        );
      return false;
    }
    this.clusterSetList.push(set);
    return true;
  }

  /**
   * @internal an object that will exist on the hub at runtime (an ApplicationSet-generated Application
   * for a spoke its placement selects offline), checked for collisions with synthesized objects.
   */
  public _addRuntimeObject(obj: {
    apiVersion: string;
    kind: string;
    namespace?: string;
    name: string;
    path: string;
  }): void {
    this.runtimeObjects.push(obj);
  }

  /** @internal */
  public get _runtimeObjects(): ReadonlyArray<{
    apiVersion: string;
    kind: string;
    namespace?: string;
    name: string;
    path: string;
  }> {
    return this.runtimeObjects;
  }

  /**
   * Rendering is done once, when the whole hub is declared; an escape hatch (`manifestWork(spoke)`,
   * `bootstrapWork`...) renders early. A construct declared after that would be left out of the
   * bootstraps, so it is a problem that names the first escape hatch used.
   */
  private checkNotRendered(c: IConstruct): void {
    if (!this.rendered) return;
    recordProblem(
      c,
      c.node.path,
      `declared after hub "${this.name}" rendered its apps and bootstraps (the escape hatch ${this.renderedBy ?? 'used'} renders them): use escape hatches after the last declaration of the hub, just before fleet.synth()`,
    );
  }

  /** @internal registers a construct that renders once the whole hub is declared. */
  public _registerRenderable(renderable: Renderable): void {
    this.checkNotRendered(renderable);
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
    apiObjectFrom(
      this.appSetSupport,
      'PlacementReaderRoleBinding',
      buildPlacementReaderRoleBinding(this.argoNamespace, this.applicationSetControllerServiceAccount),
    );
  }

  /**
   * @internal renders late objects (static works, bootstrap) exactly once. `by` names the escape hatch
   * that asked for it before synth.
   */
  public _render(by?: string): void {
    if (this.rendered) return;
    this.rendered = true;
    this.renderedBy = by;
    for (const r of this.renderables) r._render();
    if (this.agentProjects.size > 0) {
      const scope = new Construct(this, 'AgentProjects');
      routeOutput(scope, OutputFiles.AGENT_PROJECTS);
      for (const project of [...this.agentProjects.keys()].sort()) {
        apiObjectFrom(
          scope,
          project,
          buildAgentAppProject(project, this.argoNamespace, this.agentProjects.get(project)!),
        );
      }
    }
    this.renderExpectedApplications();
    for (const fn of this.late) fn();
  }
}
