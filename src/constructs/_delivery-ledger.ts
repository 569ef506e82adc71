/**
 * The delivery ledger of one hub: what each spoke renders in which delivery model, and what the plan
 * state records about it (see src/model/plan/state.ts). It holds the previous synth's plan state (read
 * by the Fleet before rendering), the model decided for each spoke (held back by a move in progress),
 * the works rendered, the Applications handed over to an agent, the agent AppProjects' destinations,
 * the Applications agent-autonomous spokes should run, and the objects the hub will hold at runtime
 * (ApplicationSet-generated Applications, checked for collisions with synthesized objects).
 */
import { DeliveryModel, isAgentDeliveryModel, resolveDeliveryModels } from '../model/delivery/delivery-model.js';
import { type AppDefinition } from '../model/delivery/hub-application.js';
import {
  decideTransition,
  type DeleteOption,
  type PreviousSpoke,
  type PreviousWork,
  type TransitionDecision,
} from '../model/delivery/transition.js';
import { type PlanState, type PlanStateSpoke } from '../model/plan/state.js';
import type { IHub } from './interfaces.js';
import { recordProblem } from './_problems.js';
import { recordWarning } from './_props-check.js';
import type { HubRegistry } from './_registry.js';
import type { RenderOrder } from './_render-order.js';

/** What spoke rendering decides for one spoke: the transition decision and the GitOpsCluster that selects it. */
export type SpokeDecision = TransitionDecision & { readonly gitOpsCluster?: string };

/** An object the hub will hold at runtime that synth does not render (an ApplicationSet-generated Application). */
export interface RuntimeObject {
  readonly apiVersion: string;
  readonly kind: string;
  /**
   * Its namespace.
   * @default - cluster-scoped
   */
  readonly namespace?: string;
  readonly name: string;
  /** Who makes it, for collision messages. */
  readonly path: string;
}

/** One destination of an agent AppProject: an agent-managed app of the project targets `cluster`. */
export interface AgentProjectDestination {
  readonly cluster: string;
  readonly namespace: string;
  readonly sourceRepos: string[];
}

/** The delivery bookkeeping of one hub, read back as its plan state. */
export class DeliveryLedger {
  private spokeModels?: Map<string, { model: DeliveryModel; path: string }>;
  private readonly decisions = new Map<string, SpokeDecision>();
  private previousState?: Map<string, PlanStateSpoke>;
  /** Why the Fleet found no plan state for this hub, when it looked. */
  private previousStateMissing?: string;
  /** The previous synth's output folder holding this hub's folder, when the plan state came from one. */
  private previousFolder?: string;
  /** Warnings about a spoke that is not declared here, reported under the hub. */
  private readonly unplacedWarnings: string[] = [];
  private readonly renderedWorks = new Map<string, PreviousWork[]>();
  /** Spoke Applications (`<namespace>/<name>`) handed over to a managed agent, per spoke (basic → agent-managed). */
  private readonly handOverApps = new Map<string, Set<string>>();
  private readonly agentProjects = new Map<string, AgentProjectDestination[]>();
  private readonly spokeApps = new Map<string, { model: DeliveryModel; path: string }>();
  private readonly autonomousApps = new Map<string, Set<string>>();
  private readonly runtime: RuntimeObject[] = [];

  constructor(
    private readonly hub: IHub,
    private readonly registry: HubRegistry,
    private readonly order: RenderOrder,
  ) {}

  /** The plan state the previous synth left for this hub (set by the Fleet before rendering). */
  public setPreviousState(state: PlanState): void {
    this.previousState = new Map(state.spokes.map((s) => [s.name, s]));
  }

  /** The output folder the previous plan state was read from (it holds `<hub>/hub/works/...`). */
  public setPreviousOutputFolder(folder: string): void {
    this.previousFolder = folder;
  }

  /** The previous synth's output folder, when the plan state was read from one (not a single plan-state file). */
  public get previousOutputFolder(): string | undefined {
    return this.previousFolder;
  }

  /** Every spoke of the previous plan state, in its order (sorted by name). */
  public previousSpokes(): PlanStateSpoke[] {
    return [...(this.previousState?.values() ?? [])];
  }

  /** Names of the works this synth renders (or has the controller write, for waved apps) for spoke `spoke`. */
  public renderedWorkNames(spoke: string): Set<string> {
    return new Set((this.renderedWorks.get(spoke) ?? []).map((w) => w.name));
  }

  /** The Fleet looked for this hub's plan state and found none: `why` (`dist/hub/plan-state.json does not exist`). */
  public setPreviousStateMissing(why: string): void {
    this.previousStateMissing = why;
  }

  /** Spoke `name` as the previous synth left it (its plan state), if any. */
  public previousSpoke(name: string): PlanStateSpoke | undefined {
    return this.previousState?.get(name);
  }

  /**
   * What spoke `name` renders: the model of the GitOpsCluster whose placement selects it (evaluated
   * offline), else basic, held back by a move in progress (see decideTransition), and the deleteOption of
   * its works. Once the hub renders, each spoke's decision is made once and final, and its problems are
   * reported; asked before (a getter such as `spoke.deliveryModel`), it is worked out from what is
   * declared so far, and neither kept nor reported, so a construct declared later still counts.
   */
  public decisionFor(name: string): SpokeDecision {
    const known = this.decisions.get(name);
    if (known) return known;
    const final = this.order.started;
    const models = final ? (this.spokeModels ??= this.resolveModels(true)) : this.resolveModels(false);
    const found = models.get(name);
    const decision = decideTransition(
      name,
      found?.model ?? DeliveryModel.BASIC,
      this.registry.moveTargetOf(name),
      this.movingWorksOf(name),
    );
    const result: SpokeDecision = { ...decision, ...(found ? { gitOpsCluster: found.path } : {}) };
    if (!final) return result;
    if (decision.problem)
      recordProblem(this.hub, this.registry.spokeNamed(name)?.node.path ?? this.hub.node.path, decision.problem);
    // A leftover moveTo is the spoke's: reported under its path, as its other findings are.
    if (decision.warning) {
      const spoke = this.registry.spokeNamed(name);
      if (spoke) recordWarning(spoke, spoke.node.path, decision.warning);
      else this.unplacedWarnings.push(`spoke "${name}": ${decision.warning}`);
    }
    this.decisions.set(name, result);
    return result;
  }

  /** The model of every spoke some GitOpsCluster selects; conflicts are reported when `report` is set. */
  private resolveModels(report: boolean): Map<string, { model: DeliveryModel; path: string }> {
    const { models, problems } = resolveDeliveryModels(
      this.registry.gitOpsClusters.map((g) => ({
        path: g.node.path,
        model: g.model,
        spokes: g.selectedSpokes().map((s) => s.name),
      })),
    );
    if (report) for (const p of problems) recordProblem(this.hub, p.path, p.message);
    return models;
  }

  /**
   * The previous plan state of spoke `name` as a change of its model sees it: without the works that
   * basic ApplicationSets keep delivering to it whatever model it runs (a move neither drops nor hands
   * them over, so they never call for a two-step move).
   */
  private movingWorksOf(name: string): PlanStateSpoke | undefined {
    const previous = this.previousState?.get(name);
    if (!previous?.works?.length) return previous;
    const kept = new Set(this.order.worksKeptOn(name));
    return kept.size === 0 ? previous : { ...previous, works: previous.works.filter((w) => !kept.has(w.name)) };
  }

  /**
   * A ManifestWork synth renders for spoke `spoke` (recorded in the plan state); `fromAgent`: its
   * Application was taken back from a managed agent and keeps the agent's destination.
   */
  public addRenderedWork(
    spoke: string,
    name: string,
    deleteOption: DeleteOption,
    fromAgent = false,
    rollout: { readonly waved?: boolean; readonly pruneProtected?: boolean } = {},
  ): void {
    const list = this.renderedWorks.get(spoke) ?? [];
    list.push({
      name,
      deleteOption,
      ...(fromAgent ? { fromAgent: true } : {}),
      ...(rollout.waved ? { waved: true } : {}),
      ...(rollout.pruneProtected ? { pruneProtected: true } : {}),
    });
    this.renderedWorks.set(spoke, list);
  }

  /**
   * During basic → agent-managed, a spoke Application (`<namespace>/<name>`) the move hands to the agent
   * (recorded in the plan state, named by `pullfleet plan` as briefly unmanaged).
   */
  public addHandOver(spoke: string, application: string): void {
    const set = this.handOverApps.get(spoke) ?? new Set<string>();
    set.add(application);
    this.handOverApps.set(spoke, set);
  }

  /**
   * Spoke `name` in the plan state: the model rendered, its works, a move in progress. The spoke is
   * recorded as taken back from the agent only while one of its works keeps the agent's destination.
   */
  public spokeDeliveryState(name: string): PreviousSpoke & { readonly deliveryModel: DeliveryModel } {
    const decision = this.decisionFor(name);
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

  /**
   * The hub's warnings (legal but almost certainly wrong): a move judged without a plan state. A finished
   * move still declared is the spoke's warning, under its path.
   */
  public warnings(): string[] {
    return [...this.unplacedWarnings, ...this.unjudgedMoves()];
  }

  /**
   * A move judged without a plan state: synth cannot tell what the spokes run now, so it renders the
   * model they move to as if nothing had been delivered (no step 1), and a check comparing the committed
   * output with such a synth differs.
   */
  private unjudgedMoves(): string[] {
    if (this.previousState) return [];
    const moving = this.registry.movingSpokes();
    if (moving.length === 0) return [];
    const names = moving.map((s) => `"${s.name}"`).join(', ');
    const where = this.previousStateMissing ?? 'no previous output was given';
    return [
      `spoke${moving.length === 1 ? '' : 's'} ${names} ${moving.length === 1 ? 'declares' : 'declare'} moveTo(...), but synth read no plan state of hub "${this.hub.name}" (${where}): a move is judged against the committed plan state, and without it synth renders the model moved to as if nothing had been delivered, with no step 1. Synthesize into the committed output folder, or name it: pullfleet synth --plan-state dist (a first synth of a new hub may ignore this)`,
    ];
  }

  /**
   * An Application one construct delivers to one spoke (`<spoke>/<namespace>/<name>` on the spoke). A
   * basic-model and an agent-model delivery of the same Application is a problem naming both.
   */
  public claimSpokeApplication(
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
        this.hub,
        path,
        `${path} delivers Application ${namespace}/${name} to spoke "${spoke}" in the ${model} model, and ${prior.path} delivers the same Application there in the ${prior.model} model: the two would fight over it; deliver it from one construct (move the spoke with moveTo for a hand-over)`,
      );
    }
  }

  /**
   * An agent-managed app targets `cluster`: a project other than `default` gets a hub AppProject whose
   * destinations name the agents (the principal checks them before routing).
   */
  public addAgentProjectDestination(def: AppDefinition, cluster: string): void {
    if (def.project === 'default') return;
    const list = this.agentProjects.get(def.project) ?? [];
    list.push({
      cluster,
      namespace: def.destinationNamespace,
      sourceRepos: def.sources.map((s) => s.repoURL).filter((r): r is string => typeof r === 'string'),
    });
    this.agentProjects.set(def.project, list);
  }

  /** The agent AppProjects to render, sorted by project name, with their destinations. */
  public agentProjectDestinations(): Array<[project: string, destinations: AgentProjectDestination[]]> {
    return [...this.agentProjects.keys()].sort().map((project) => [project, this.agentProjects.get(project)!]);
  }

  /** The Applications each agent-autonomous spoke's folder holds, sorted by spoke name. */
  public autonomousApplications(): Array<[spoke: string, applications: string[]]> {
    return [...this.autonomousApps.keys()].sort().map((spoke) => [spoke, [...this.autonomousApps.get(spoke)!]]);
  }

  /**
   * An object that will exist on the hub at runtime (an ApplicationSet-generated Application for a spoke
   * its placement selects offline), checked for collisions with synthesized objects.
   */
  public addRuntimeObject(obj: RuntimeObject): void {
    this.runtime.push(obj);
  }

  /** The objects the hub will hold at runtime (see {@link addRuntimeObject}). */
  public get runtimeObjects(): ReadonlyArray<RuntimeObject> {
    return this.runtime;
  }
}
