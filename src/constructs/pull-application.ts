import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import {
  buildAgentManagedHubApplication,
  buildAutonomousSpokeApplication,
} from '../model/delivery/agent-applications.js';
import { DeliveryModel } from '../model/delivery/delivery-model.js';
import {
  applyAgentHandback,
  buildStaticHubApplication,
  staticHubApplicationName,
} from '../model/delivery/hub-application.js';
import { buildManifestWork, spokeAppNamespace, wrapProblem } from '../model/delivery/manifestwork.js';
import { manifestWorkName } from '../model/core/names.js';
import { DeleteOption, handbackOf } from '../model/delivery/transition.js';
import { localClusterRule, workSizeRule } from '../model/validation/rules.js';
import { PULL_APP_CHECKS, PullAppBase, type PullAppOptions } from './app-props.js';
import type { AppDefinition } from '../model/delivery/hub-application.js';
import { perSpokeRolloutRevision } from '../model/delivery/per-spoke.js';
import { definitionForSpoke, type SpokeInfo, type SpokeOverrides } from './per-spoke.js';
import type { SpokeVersions } from './spoke.js';
import { checkedProps, listOf, placementRef, propsOf, rolloutRef, spokeRef } from './_props-check.js';
import type { Rollout } from './rollout.js';
import { outsideWaves, withOutsideWaves, type OutsideWaves, type RolloutPolicy } from '../model/rollout/policy.js';
import { buildWavedHubApplication, protectFromPrune, rolloutRevision } from '../model/rollout/static.js';
import { buildRolloutPolicyConfigMap } from '../model/rollout/state.js';
import { apiObjectFrom } from './_output.js';
import { OutputFiles, routeOutput } from './output.js';
import type { IPlacement, ISpoke } from './interfaces.js';
import { appObjectHatch, appRenderedObject, placeObject, scopeFor, settleAppHatches } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';
import { hubParts } from './_hub-parts.js';
import type { SpokeDecision } from './_delivery-ledger.js';
import type { SpokeDelivery } from '../model/delivery/bootstrap.js';
import { assertNotRendered } from './_render-order.js';

/** Settings of a {@link PullApplication}: the app, and the spokes it is delivered to. */
export interface PullApplicationProps extends PullAppOptions {
  /**
   * Spokes to deliver to.
   * @default [] (add more with deployTo)
   */
  readonly spokes?: readonly ISpoke[];
  /**
   * A Placement evaluated offline against the hub's spokes at synth time; its selection is added to
   * `spokes`. For runtime selection use PullApplicationSet.
   * @default - none
   */
  readonly placement?: IPlacement;
  /**
   * Roll changes out in waves, driven by the hub controller: synth renders the hub Applications and the
   * rollout policy, and the controller writes each spoke's ManifestWork when the spoke's wave comes,
   * within the wave's in-flight limit, after the previous wave is healthy and has soaked, halting on
   * failures (docs/concepts/rollouts.md). Making an existing app waved takes two synths (the works are
   * handed to the controller, never deleted). Waves hold back basic spokes only: a spoke moving between
   * delivery models gets the app with each step of its move, and a spoke on an argocd-agent model as soon as
   * the hub applies a change (`pullfleet plan` names them; docs/concepts/moves.md, "Moves and waves").
   * @default - no waves: the works are rendered into dist/ and every spoke gets a change at once
   */
  readonly rollout?: Rollout;
}

/** The runtime type of every {@link PullApplicationProps} key (see props-check.ts). */
const PULL_APPLICATION_PROPS = propsOf<PullApplicationProps>('PullApplication', {
  ...PULL_APP_CHECKS,
  spokes: listOf(spokeRef<ISpoke>(), '[east, west]'),
  placement: placementRef<IPlacement>(),
  rollout: rolloutRef<Rollout>(),
});

/**
 * An app delivered statically: for every target spoke, synth renders the hub Application (pull label,
 * target cluster, skip-reconcile, `pullfleet.io/delivery: static`) and the ManifestWork built from it
 * by the same model function the controller uses.
 */
export class PullApplication extends PullAppBase implements IRendersObjects {
  private readonly spokeList: ISpoke[] = [];
  private readonly spokeSet = new Set<ISpoke>();
  private readonly placements: IPlacement[] = [];
  private delivered = 0;
  /** The rollout waves, if any. */
  public readonly rollout?: Rollout;
  private rolloutPolicy?: RolloutPolicy;
  private readonly perSpoke?: (spoke: SpokeInfo) => SpokeOverrides;

  constructor(scope: Construct, id: string, props: PullApplicationProps) {
    super(scope, id, props, 'PullApplication', PULL_APPLICATION_PROPS);
    props = checkedProps<PullApplicationProps>(this);
    if (typeof props.perSpoke === 'function') this.perSpoke = props.perSpoke;
    for (const spoke of props.spokes ?? []) this.deployTo(spoke);
    if (props.placement) this.deployToPlacement(props.placement);
    if (props.rollout) this.rollout = props.rollout;
    hubParts(this.hub).order.register(this);
  }

  /** The resolved rollout policy (problems reported); undefined without a rollout or with problems. */
  private resolveRollout(): RolloutPolicy | undefined {
    if (!this.rollout) return undefined;
    const { waves, problems } = this.rollout._resolve(
      this.targets().filter((spoke) => spoke.hub === this.hub),
      false,
    );
    this.problems.push(...problems);
    if (!waves) return undefined;
    return {
      app: this.name,
      waves,
      maxFailures: this.rollout.maxFailures,
      progressDeadlineSeconds: this.rollout._progressDeadlineSeconds(),
      onFailure: this.rollout._failureAction(),
    };
  }

  /** The work of this app on spoke `spoke` as the previous synth left it (plan state), if any. */
  private previousWork(spoke: ISpoke) {
    const name = manifestWorkName(this.hub.argoNamespace, staticHubApplicationName(this.name, spoke.name));
    return hubParts(this.hub)
      .ledger.previousSpoke(spoke.name)
      ?.works?.find((work) => work.name === name);
  }

  /**
   * Which target spokes of a waved app stay out of its waves now, and why (see {@link outsideWaves}): those
   * moving between delivery models (each step of the move delivers the app to them), those on an argocd-agent
   * model, and those back on basic whose static work the previous synth rendered unprotected while the app was
   * waved elsewhere (they rejoin their wave through Prune=false, as a whole app does when it becomes waved).
   */
  private spokesOutsideWaves(): Map<string, OutsideWaves> {
    const { ledger } = hubParts(this.hub);
    const targets = this.targets().filter((spoke) => spoke.hub === this.hub);
    const wavedBefore = targets.some((spoke) => this.previousWork(spoke)?.waved === true);
    const outside = new Map<string, OutsideWaves>();
    for (const spoke of targets) {
      const previous = this.previousWork(spoke);
      const rejoin = wavedBefore && previous !== undefined && !previous.waved && !previous.pruneProtected;
      const why = outsideWaves(ledger.decisionFor(spoke.name), rejoin);
      if (why) outside.set(spoke.name, why);
    }
    return outside;
  }

  /**
   * Whether the waved app renders step 1 of becoming waved: some spoke in its waves still has the static work
   * the previous synth rendered without Prune=false (plan state), and the app was waved nowhere before. Its
   * works are rendered once more, protected, so that Argo CD leaves them in place when they leave dist/ in
   * step 2. Spokes outside the waves (`outside`) do not count: a move renders their works as its steps need.
   */
  private becomingWaved(outside: ReadonlyMap<string, OutsideWaves>): boolean {
    return this.targets().some((spoke) => {
      if (outside.has(spoke.name)) return false;
      const previous = this.previousWork(spoke);
      return previous !== undefined && !previous.waved && !previous.pruneProtected;
    });
  }

  /** Warnings for waves that spokes outside the waves left without a cluster (the controller passes over them). */
  private emptiedWaveWarnings(policy: RolloutPolicy): string[] {
    return policy.waves
      .filter((wave) => wave.clusters.length === 0 && wave.outside)
      .map((wave) => {
        const why = Object.entries(wave.outside ?? {})
          .map(([cluster, o]) =>
            o.reason === 'agent'
              ? `${cluster} runs ${o.model}`
              : o.reason === 'moving'
                ? `${cluster} moves to ${o.model}`
                : `${cluster} rejoins with the next synth`,
          )
          .join(', ');
        return `rollout of app "${this.name}": wave "${wave.name}" has no spoke rolled out in it now (${why}, outside the waves), so the controller passes over it and the next wave starts at once: hold changes of the app until the spokes are back in the wave, or add a basic spoke to it`;
      });
  }

  /**
   * The spokes among `spokes` whose waved hub Application the controller refuses to wrap into a work, by OCM's
   * tenancy rule (model/placement/tenancy.ts): no cluster set the fleet binds to the hub's Argo CD namespace (or
   * declares bound there with `existingBindings`) contains the spoke. Empty when the hub's controller relaxes
   * tenancy. A binding the hub has but the fleet does not declare is invisible here, hence a warning, not an error.
   */
  private outsideBoundSets(spokes: readonly ISpoke[]): ISpoke[] {
    if (this.hub.controller?.relaxTenancy) return [];
    const namespace = this.hub.argoNamespace;
    const bound = this.hub.clusterSets.filter((set) => set.bindings.includes(namespace));
    return spokes.filter((spoke) => !bound.some((set) => set.isMember(spoke)));
  }

  /** The warning for waved hub Applications the controller will refuse (see {@link outsideBoundSets}). */
  private tenancyWarning(refused: readonly ISpoke[]): string {
    const ns = this.hub.argoNamespace;
    const names = refused.map((s) => `"${s.name}"`).join(', ');
    const one = refused.length === 1;
    return `rollout of app "${this.name}": no cluster set bound to namespace "${ns}" contains spoke${one ? '' : 's'} ${names}, so the controller refuses to write ${one ? 'its work' : 'their works'} (DeliveryError on the hub Application; the spoke keeps what it runs) and the rollout stops at ${one ? "the spoke's wave" : 'their waves'}: add the spoke${one ? '' : 's'} to a cluster set bound to "${ns}" (clusterSet.bindTo('${ns}')), declare a binding the hub already has (ClusterSet.fromClusterSetName(hub, 'Global', 'global', { existingBindings: ['${ns}'] })), or relax tenancy on a single-tenant hub (controller: { relaxTenancy: true })`;
  }

  /** Adds target spokes. A spoke added twice is a reported problem. */
  public deployTo(...spokes: ISpoke[]): void {
    assertNotRendered(this, 'deployTo(...) called');
    for (const spoke of spokes) {
      if (this.spokeSet.has(spoke)) {
        this.problems.push(`app "${this.name}" already deploys to spoke "${spoke.name}": add each spoke once`);
        continue;
      }
      this.spokeList.push(spoke);
      this.spokeSet.add(spoke);
    }
  }

  /**
   * Adds every spoke `placement` selects (evaluated offline at synth). A placement added twice, or one
   * synth cannot evaluate (imported with `Placement.fromPlacementName`), is a reported problem.
   */
  public deployToPlacement(placement: IPlacement): void {
    assertNotRendered(this, 'deployToPlacement(...) called');
    if (!placement.evaluatedOffline) {
      this.problems.push(
        `app "${this.name}" cannot deliver statically through placement "${placement.namespace}/${placement.name}": it is imported (${placement.node.path}), so synth cannot tell which spokes it selects: use a PullApplicationSet with this placement, or give the app spokes`,
      );
      return;
    }
    if (this.placements.includes(placement)) {
      this.problems.push(
        `app "${this.name}" already deploys to placement "${placement.name}": add each placement once`,
      );
      return;
    }
    this.placements.push(placement);
  }

  /** Target spokes: explicit ones plus placement selections, de-duplicated and sorted by name. */
  public targets(): ISpoke[] {
    const all = new Map<string, ISpoke>();
    for (const spoke of this.spokeList) all.set(spoke.name, spoke);
    for (const placement of this.placements)
      for (const spoke of placement.selectedSpokes()) if (!all.has(spoke.name)) all.set(spoke.name, spoke);
    return [...all.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * The spec each target spoke of this hub gets (`perSpoke` applied, spoke parameters replaced), by spoke name;
   * a spoke whose spec has problems (reported) is left out.
   */
  private specsBySpoke(): Map<string, AppDefinition> {
    const { ledger } = hubParts(this.hub);
    const specs = new Map<string, AppDefinition>();
    const plain = this.perSpoke === undefined && !JSON.stringify(this.app.sources).includes('{{');
    for (const spoke of this.targets()) {
      // Spokes the app cannot deliver to (another hub's, the hub itself) are reported by _render.
      if (spoke.hub !== this.hub || localClusterRule(this.name, spoke.name, spoke.labels)) continue;
      if (plain) {
        specs.set(spoke.name, this.app);
        continue;
      }
      const entry = spoke.inventoryEntry();
      const info: SpokeInfo = Object.freeze({
        name: spoke.name,
        labels: Object.freeze({ ...spoke.labels }),
        claims: Object.freeze({ ...(entry.claims ?? {}) }),
        clusterSets: Object.freeze([...(entry.clusterSets ?? [])].sort()),
        model: ledger.decisionFor(spoke.name).model,
        versions: Object.freeze({ ...((spoke as { versions?: SpokeVersions }).versions ?? {}) }),
        openshift: spoke.openshift,
      });
      const { def, problems } = definitionForSpoke(this.app, info, this.perSpoke);
      this.problems.push(...problems);
      if (def) specs.set(spoke.name, def);
    }
    return specs;
  }

  /** @internal */
  public _render(): void {
    const specs = this.specsBySpoke();
    for (const placement of this.placements) this.placementOnThisHub(placement);
    const { outside, revision } = this.renderRolloutPolicy(specs);
    // Spokes whose waved hub Application the controller will refuse (OCM's tenancy rule).
    const refused: ISpoke[] = [];
    for (const spoke of this.targets()) {
      if (spoke.hub !== this.hub) {
        this.problems.push(
          `spoke "${spoke.name}" (${spoke.node.path}) is not a spoke of hub "${this.hub.name}": declare it on this hub or deliver from its own hub`,
        );
        continue;
      }
      const local = localClusterRule(this.name, spoke.name, spoke.labels);
      if (local) {
        this.problems.push(local);
        continue;
      }
      // The spec this spoke gets; a spoke whose perSpoke result has problems (reported) renders nothing.
      const app = specs.get(spoke.name);
      if (!app) continue;
      if (this.renderSpoke(spoke, app, revision, outside.get(spoke.name)) === 'waved')
        refused.push(...this.outsideBoundSets([spoke]));
    }
    if (refused.length > 0) this.warnings.push(this.tenancyWarning(refused));
    // Objects the escape hatches asked for that the app did not render go, and synth says why.
    settleAppHatches(this);
  }

  /**
   * Resolves the rollout policy (with the spokes outside its waves) and, once the app is waved, renders the
   * policy ConfigMap; returns the spokes outside the waves and the rollout revision (undefined unless waved).
   */
  private renderRolloutPolicy(specs: ReadonlyMap<string, AppDefinition>): {
    outside: ReadonlyMap<string, OutsideWaves>;
    revision?: string;
  } {
    this.rolloutPolicy = this.resolveRollout();
    // Spokes moving between delivery models, or on an agent model, leave the waves (see outsideWaves).
    const outside = this.rolloutPolicy ? this.spokesOutsideWaves() : new Map<string, OutsideWaves>();
    if (this.rolloutPolicy && outside.size > 0) {
      this.rolloutPolicy = { ...this.rolloutPolicy, waves: withOutsideWaves(this.rolloutPolicy.waves, outside) };
      this.warnings.push(...this.emptiedWaveWarnings(this.rolloutPolicy));
    }
    const waved = this.rolloutPolicy !== undefined && !this.becomingWaved(outside);
    if (this.rolloutPolicy && !waved)
      this.warnings.push(
        `app "${this.name}" becomes waved: this synth is step 1 of 2: its works are rendered once more with Argo CD's Prune=false, so they stay when they leave dist/; commit, let the hub's Argo CD apply it, then synthesize again (step 2 hands the works to the controller's rollout)`,
      );
    // The revision hashes the definition, so a spoke joining a wave leaves the other hub Applications alone; the
    // specs of spokes that differ from it (perSpoke, spoke parameters) are part of it, so a change to one is seen.
    const revision =
      this.rolloutPolicy && waved ? perSpokeRolloutRevision(this.app, specs, rolloutRevision(this.app)) : undefined;
    if (this.rolloutPolicy && revision !== undefined) {
      const scope = new Construct(this, 'RolloutPolicy');
      placeObject(
        scopeFor(scope, 'ConfigMap', OutputFiles.APPLICATIONS),
        'ConfigMap',
        buildRolloutPolicyConfigMap(this.rolloutPolicy, this.hub.argoNamespace, scope.node.path, revision),
      );
    }
    return { outside, revision };
  }

  /**
   * Renders what spoke `spoke` of this hub gets of spec `app` by its delivery model: `'waved'` when the
   * controller writes its work (a waved hub Application only), else `'rendered'` (or `'skipped'` with a problem).
   */
  private renderSpoke(
    spoke: ISpoke,
    app: AppDefinition,
    revision: string | undefined,
    outsideWave: OutsideWaves | undefined,
  ): 'rendered' | 'waved' | 'skipped' {
    const { ledger } = hubParts(this.hub);
    const scope = scopeFor(this, spoke.name);
    const decision = ledger.decisionFor(spoke.name);
    const model = decision.model;
    const target = { cluster: spoke.name, namespace: this.hub.argoNamespace, constructPath: scope.node.path };
    ledger.claimSpokeApplication(
      spoke.name,
      this.hub.argoNamespace,
      staticHubApplicationName(this.name, spoke.name),
      model,
      scope.node.path,
    );
    if (model === DeliveryModel.AGENT_MANAGED) {
      // The principal owns the spec: a hub Application routed to the agent by destination name.
      placeObject(
        scopeFor(scope, 'HubApplication', OutputFiles.APPLICATIONS),
        'Application',
        buildAgentManagedHubApplication(app, target),
      );
      ledger.addAgentProjectDestination(app, spoke.name);
      // The principal hands the AppProject to the agent; the bootstrap brings only namespace and RBAC.
      this.countDelivery(spoke, { ...this.delivery(), project: undefined });
      return 'rendered';
    }
    if (model === DeliveryModel.AGENT_AUTONOMOUS) {
      // The spoke owns the spec: the Application goes into the spoke's own folder; the hub renders nothing.
      const appScope = new Construct(scope, 'SpokeApplication');
      routeOutput(appScope, OutputFiles.spokeApplications(spoke.name));
      apiObjectFrom(appScope, 'Application', buildAutonomousSpokeApplication(app, target) as never);
      this.countDelivery(spoke);
      return 'rendered';
    }
    return this.renderBasicSpoke(spoke, app, decision, scope, { revision, outsideWave });
  }

  /** Counts a delivery to `spoke` and tells the spoke's bootstrap what the app needs there. */
  private countDelivery(spoke: ISpoke, delivery: SpokeDelivery = this.delivery()): void {
    // An imported spoke has no bootstrap to carry the namespace and RBAC.
    hubParts(this.hub).registry.deliverTo(spoke.name, delivery);
    this.delivered++;
  }

  /**
   * Renders what a basic spoke gets: nothing in step 2 of a move to agent-managed, a waved hub Application whose
   * work the controller writes (`'waved'`), or a hub Application with its ManifestWork.
   */
  private renderBasicSpoke(
    spoke: ISpoke,
    app: AppDefinition,
    decision: SpokeDecision,
    scope: Construct,
    rollout: { revision?: string; outsideWave?: OutsideWaves },
  ): 'rendered' | 'waved' | 'skipped' {
    const { ledger } = hubParts(this.hub);
    const target = { cluster: spoke.name, namespace: this.hub.argoNamespace, constructPath: scope.node.path };
    // Taking the spoke back from argocd-agent: step 1 keeps the hub app routed to the agent (see AgentHandback).
    const hubApp = applyAgentHandback(buildStaticHubApplication(app, target), spoke.name, handbackOf(decision));
    const problem = wrapProblem(hubApp);
    if (problem) {
      this.problems.push(`cannot deliver to spoke "${spoke.name}": ${problem}`);
      return 'skipped';
    }
    // Basic → agent-managed: the spoke Application this move hands to the agent (named by plan).
    if (decision.moveStep !== undefined)
      ledger.addHandOver(spoke.name, `${spokeAppNamespace(hubApp)}/${hubApp.metadata.name}`);
    if (decision.clear) {
      // Step 2 of basic → agent-managed: neither hub Application nor work; removing the work (Foreground)
      // deletes the spoke Application, which step 1 left without the resources finalizer.
      this.countDelivery(spoke);
      return 'rendered';
    }
    if (rollout.revision !== undefined && rollout.outsideWave === undefined) {
      // The controller writes this work when the spoke's wave comes; synth renders the hub Application only.
      // A spoke taken back from a managed agent keeps the agent's destination in the work the controller writes.
      const wavedApp = applyAgentHandback(
        buildWavedHubApplication(app, target, rollout.revision),
        spoke.name,
        handbackOf(decision),
      );
      const workName = manifestWorkName(hubApp.metadata.namespace ?? this.hub.argoNamespace, hubApp.metadata.name);
      ledger.addRenderedWork(spoke.name, workName, decision.deleteOption, decision.fromAgent === true, {
        waved: true,
      });
      placeObject(scopeFor(scope, 'HubApplication', OutputFiles.APPLICATIONS), 'Application', wavedApp);
      this.countDelivery(spoke);
      return 'waved';
    }
    this.renderStaticWork(spoke, hubApp, decision, scope, rollout.outsideWave);
    this.countDelivery(spoke);
    return 'rendered';
  }

  /** Renders the hub Application `hubApp` of a basic spoke with the ManifestWork built from it. */
  private renderStaticWork(
    spoke: ISpoke,
    hubApp: ReturnType<typeof buildStaticHubApplication>,
    decision: SpokeDecision,
    scope: Construct,
    outsideWave: OutsideWaves | undefined,
  ): void {
    const { ledger } = hubParts(this.hub);
    let work = buildManifestWork(hubApp, {
      feedbackScrapeType: this.hub.workFeedbackScrapeType,
      ...(this.hub.resourceSummaries ? {} : { resourceSummary: false }),
    });
    // During a move between models the work orphans the spoke Application when it is deleted.
    if (decision.deleteOption === DeleteOption.ORPHAN)
      work.spec.deleteOption = { propagationPolicy: DeleteOption.ORPHAN };
    // Protected so that Argo CD leaves it when it leaves dist/ and the controller takes it over: the whole app
    // becoming waved, or a spoke rejoining the waves. A moving spoke's work goes as its move says (pruned).
    const protect =
      this.rolloutPolicy !== undefined && (outsideWave === undefined || outsideWave.reason === 'rejoining');
    if (protect) work = protectFromPrune(work);
    ledger.addRenderedWork(spoke.name, work.metadata.name, decision.deleteOption, decision.fromAgent === true, {
      ...(protect ? { pruneProtected: true } : {}),
    });
    const sizeProblem = workSizeRule(work.metadata.name, spoke.name, work, this.hub.workSizeBudget);
    if (sizeProblem) this.problems.push(sizeProblem);
    placeObject(scopeFor(scope, 'HubApplication', OutputFiles.APPLICATIONS), 'Application', hubApp);
    placeObject(scopeFor(scope, 'Work', OutputFiles.works(spoke.name)), 'ManifestWork', work);
  }

  /**
   * The ApiObject the app renders for `query`: `{ kind: 'Application', spoke }` is the hub Application of
   * `spoke` (`dist/<hub>/hub/applications.yaml`), `{ kind: 'ManifestWork', spoke }` its ManifestWork
   * (`dist/<hub>/hub/works/<spoke>.yaml`; agent models render none, and a waved app's work is written by
   * the controller). Ask at any time: before the fleet renders the object is created empty and filled in
   * when the app renders, and edits made through it stay; when the app then renders no such object for
   * `spoke` (it does not deliver there, or the spoke's delivery model renders none), synth reports it.
   * Once the fleet rendered, every object the app rendered is reachable (an agent-autonomous spoke's
   * Application, the rollout policy ConfigMap), and asking for one it did not render throws.
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return appRenderedObject(this, query);
  }

  /**
   * Escape hatch: the hub Application rendered for `spoke` (`dist/<hub>/hub/applications.yaml`). Read it
   * at any time: before the fleet renders it is created empty and filled in when the app renders, and
   * edits made through it stay. When the app renders no hub Application for `spoke` (it does not deliver
   * there, or the spoke runs the agent-autonomous model), synth reports it; once the fleet rendered, this
   * throws instead.
   * @deprecated use `renderedObject({ kind: 'Application', spoke })`, the same object.
   */
  public hubApplication(spoke: ISpoke | string): ApiObject {
    return appObjectHatch(this, typeof spoke === 'string' ? spoke : spoke.name, 'HubApplication');
  }

  /**
   * Escape hatch: the ManifestWork rendered for `spoke` (`dist/<hub>/hub/works/<spoke>.yaml`), read at any
   * time like {@link hubApplication} (agent models render no ManifestWork). A patch here changes the work
   * only: the hub Application it was built from stays as rendered.
   * @deprecated use `renderedObject({ kind: 'ManifestWork', spoke })`, the same object.
   */
  public manifestWork(spoke: ISpoke | string): ApiObject {
    return appObjectHatch(this, typeof spoke === 'string' ? spoke : spoke.name, 'Work');
  }

  /** @internal */
  public override _warnings(): string[] {
    const warnings = super._warnings();
    if (this.delivered === 0 && this.problems.length === 0) {
      warnings.push(
        `app "${this.name}" is delivered nowhere: ${this.placements.length ? 'its placements select no spoke; check them' : 'give it spokes, a placement, or call deployTo(...)'}`,
      );
    }
    return warnings;
  }
}
