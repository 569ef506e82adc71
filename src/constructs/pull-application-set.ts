import type { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { Construct as PlainConstruct } from 'constructs';
import { ARGOCD_API_VERSION } from '../model/core/keys.js';
import { manifestWorkName, MAX_LABEL_LENGTH } from '../model/core/names.js';
import { counted } from '../model/core/words.js';
import {
  applicationSetAppNamePattern,
  buildPullApplicationSet,
  DEFAULT_REQUEUE_AFTER_SECONDS,
  generatedApplicationName,
} from '../model/delivery/appset.js';
import { buildAutonomousSpokeApplication } from '../model/delivery/agent-applications.js';
import { DeliveryModel } from '../model/delivery/delivery-model.js';
import { NO_HANDBACK, type AgentHandback } from '../model/delivery/hub-application.js';
import { spokeAppNamespace } from '../model/delivery/manifestwork.js';
import {
  applicationSetDecision,
  applicationSetStep,
  DeleteOption,
  type TransitionDecision,
} from '../model/delivery/transition.js';
import { PULL_APP_CHECKS, PullAppBase, type PullAppOptions } from './app-props.js';
import { ApiObject as CdkApiObject } from 'cdk8s';
import { featureFindings } from '../model/core/features.js';
import { parseVersion } from '../model/core/versions.js';
import { clusterSecretSpokeLabels, substituteSpokeParams } from '../model/delivery/per-spoke.js';
import { spokeLabelKeyProblem, spokeLabelKeysIn } from './per-spoke.js';
import { checkedProps, num, placementRef, propReported, propsOf, rolloutRef } from './_props-check.js';
import type { Rollout } from './rollout.js';
import { type RolloutWave } from '../model/rollout/policy.js';
import { apiObjectFrom } from './_output.js';
import { OutputFiles, routeOutput } from './output.js';
import type { IPlacement } from './interfaces.js';
import { handOut, heldObjects, pickRendered, placeObject, reserveObject, settleApplicationSet } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';
import { hubParts } from './_hub-parts.js';
import { disablesAutomatedInTemplate, hubVersionsOf } from './_versions.js';

/** Settings of a {@link PullApplicationSet}: the app, and the Placement that chooses its spokes at runtime. */
export interface PullApplicationSetProps extends PullAppOptions {
  /** The Placement whose decisions (at runtime) choose the spokes. Must be in the hub's Argo CD namespace. */
  readonly placement: IPlacement;
  /**
   * How often the generator re-reads placement decisions, in seconds.
   * @default 180
   */
  readonly requeueAfterSeconds?: number;
  /**
   * Roll changes out in waves: rendered as Argo CD's RollingSync (`spec.strategy`), whose steps list the
   * clusters of each wave as synth resolves them against the spokes the placement selects; the last
   * wave also takes clusters the placement selects at runtime that the fleet does not declare. The hub's
   * applicationset-controller needs progressive syncs enabled (docs/concepts/rollouts.md).
   * @default - no waves: every generated Application updates at once
   */
  readonly rollout?: Rollout;
}

/** The runtime type of every {@link PullApplicationSetProps} key (see props-check.ts). */
const PULL_APPLICATION_SET_PROPS = propsOf<PullApplicationSetProps>('PullApplicationSet', {
  ...PULL_APP_CHECKS,
  placement: placementRef<IPlacement>(),
  requeueAfterSeconds: num('a whole number of seconds'),
  rollout: rolloutRef<Rollout>(),
});

/**
 * An app delivered to whatever a Placement selects at runtime: an ApplicationSet with a
 * clusterDecisionResource generator whose template carries the pull label, the target cluster and
 * skip-reconcile. The hub controller wraps each generated Application into a ManifestWork.
 * Spokes the Placement selects offline get the app's namespace and RBAC in their bootstrap.
 */
export class PullApplicationSet extends PullAppBase implements IRendersObjects {
  /** The Placement whose decisions choose the spokes. */
  public readonly placement: IPlacement;
  /** How often the generator re-reads placement decisions, in seconds. */
  public readonly requeueAfterSeconds: number;
  /** The rollout waves, if any. */
  public readonly rollout?: Rollout;
  private renderedApplicationSet?: ApiObject;

  /**
   * Escape hatch: the ApplicationSet (`dist/<hub>/hub/application-sets.yaml`); also `ApiObject.of(appSet)`.
   * Read it at any time: it is created with the app and filled in when the fleet renders (its shape
   * depends on the delivery model of the placement, known once the whole hub is declared). Undefined when
   * the placement is missing or on another hub (a problem reported at synth). Agent-autonomous apps render
   * no ApplicationSet (each spoke's own folder holds the Application), nor does step 2 of a move to the
   * agent-managed model: edits made through it are then reported at synth, and once the fleet rendered
   * this is undefined.
   * @deprecated use `renderedObject({ kind: 'ApplicationSet' })`, the same object (it throws where this is undefined).
   */
  public get applicationSet(): ApiObject | undefined {
    return this.renderedApplicationSet && handOut(this.renderedApplicationSet);
  }

  /**
   * The ApiObject the app renders for `query`: `{ kind: 'ApplicationSet' }` is its ApplicationSet
   * (`dist/<hub>/hub/application-sets.yaml`), also `ApiObject.of(appSet)`. Ask at any time: it is created
   * with the app and filled in when the fleet renders; when the fleet then renders none (agent-autonomous,
   * or step 2 of a move to agent-managed), synth reports the edits made through it. Once the fleet
   * rendered, the Applications of agent-autonomous spokes are reachable too (`{ kind: 'Application', spoke }`).
   * Throws when the app renders no such object (an ApplicationSet when its placement is missing or on
   * another hub).
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return pickRendered(this, query, {
      what: `app "${this.name}"`,
      kinds: ['ApplicationSet'],
      // `<appSet>/<spoke>/Application` for an agent-autonomous spoke.
      objects: heldObjects(this, (_obj, ids) => (ids.length > 1 ? ids[0] : undefined)),
      later: 'the Applications of agent-autonomous spokes exist once the fleet renders: read them after synth',
    });
  }

  constructor(scope: Construct, id: string, props: PullApplicationSetProps) {
    super(scope, id, props, 'PullApplicationSet', PULL_APPLICATION_SET_PROPS);
    props = checkedProps<PullApplicationSetProps>(this);
    this.placement = props.placement;
    this.requeueAfterSeconds = props.requeueAfterSeconds ?? DEFAULT_REQUEUE_AFTER_SECONDS;
    if (props.rollout) this.rollout = props.rollout;
    if (props.perSpoke !== undefined)
      this.problems.push(
        `perSpoke of app "${this.name}" cannot apply to a PullApplicationSet: the hub's applicationset-controller generates its Applications at runtime and cannot call a function per spoke; put SpokeParam.label('<key>') in the sources instead (the template reads the spoke's labels, docs/concepts/per-spoke-values.md), or deliver with a PullApplication`,
      );
    if (!(Number.isInteger(this.requeueAfterSeconds) && this.requeueAfterSeconds > 0)) {
      this.problems.push(
        `requeueAfterSeconds ${props.requeueAfterSeconds} must be a whole number of seconds > 0: use the default ${DEFAULT_REQUEUE_AFTER_SECONDS} or another positive number`,
      );
      this.requeueAfterSeconds = DEFAULT_REQUEUE_AFTER_SECONDS;
    }
    if (!props.placement || typeof props.placement.selectedSpokes !== 'function') {
      if (!propReported(this, 'placement'))
        this.problems.push(
          'placement is missing: give the Placement whose decisions choose the spokes (or use PullApplication with spokes)',
        );
      return;
    }
    if (this.placementOnThisHub(props.placement) && props.placement.namespace !== this.hub.argoNamespace) {
      this.problems.push(
        `placement "${props.placement.name}" is in namespace "${props.placement.namespace}", but the ApplicationSet generator only reads decisions in "${this.hub.argoNamespace}": create the placement in "${this.hub.argoNamespace}"`,
      );
    }
    // Created here, ahead of the ApplicationSets in the output, whatever model the placement turns out to have.
    const parts = hubParts(this.hub);
    parts.ensureApplicationSetSupport();
    parts.order.register(this);
    if (props.placement.hub !== this.hub) return;
    // The ApplicationSet exists from here on (its escape hatch never renders); its content comes when the fleet renders.
    routeOutput(this, OutputFiles.APPLICATION_SETS);
    this.renderedApplicationSet = reserveObject(
      this,
      'ApplicationSet',
      { apiVersion: ARGOCD_API_VERSION, kind: 'ApplicationSet', name: this.name, namespace: this.hub.argoNamespace },
      this,
    );
  }

  /**
   * The delivery model of this app: the model of the GitOpsCluster on its placement, else basic.
   * Known once the whole hub is declared.
   */
  public get model(): DeliveryModel {
    return hubParts(this.hub).registry.gitOpsClusterOfPlacement(this.placement)?.model ?? DeliveryModel.BASIC;
  }

  /** The ApplicationSet (basic and agent-managed models); agent-autonomous apps render per spoke instead. */
  private renderApplicationSet(
    model: DeliveryModel.BASIC | DeliveryModel.AGENT_MANAGED,
    handback: AgentHandback,
  ): void {
    routeOutput(this, OutputFiles.APPLICATION_SETS);
    const path = `${this.node.path}/ApplicationSet`;
    const spokeLabels = this.spokeLabelsRead();
    const appSet = buildPullApplicationSet(this.app, {
      ...(spokeLabels.length ? { spokeLabels: true } : {}),
      name: this.name,
      namespace: this.hub.argoNamespace,
      placement: this.placement.name,
      requeueAfterSeconds: this.requeueAfterSeconds,
      constructPath: path,
      model,
      handback,
      ...(this.rolloutWaves ? { waves: this.rolloutWaves } : {}),
      ...(this.rollout?.deletionOrder ? { deletionOrder: this.rollout.deletionOrder } : {}),
    });
    // A hub Argo CD that compares waved apps raw with their template loops unless the template says enabled: false (_versions.ts).
    const template = appSet.spec.template as { spec: { syncPolicy?: { automated?: Record<string, unknown> } } };
    const syncPolicy = template.spec.syncPolicy;
    if (this.rolloutWaves && disablesAutomatedInTemplate(hubVersionsOf(this.hub).argoCD, syncPolicy?.automated))
      template.spec = {
        ...template.spec,
        syncPolicy: { ...syncPolicy, automated: { ...syncPolicy!.automated, enabled: false } },
      };
    this.renderedApplicationSet = placeObject(this, 'ApplicationSet', appSet);
    this.node.defaultChild = this.renderedApplicationSet;
  }

  private rolloutWaves?: readonly RolloutWave[];

  /**
   * The spoke labels the template reads (`SpokeParam.label`), checked: the hub's Argo CD must run the matrix that
   * brings them (feature table), every spoke the placement selects offline must have them, and every declared
   * spoke's cluster Secret carries them (mirrored as `spoke.pullfleet.io/<key>`) with its own name to be selected by.
   */
  private spokeLabelsRead(): string[] {
    const keys = spokeLabelKeysIn(this.app);
    if (keys.length === 0) return keys;
    for (const key of keys) {
      const problem = spokeLabelKeyProblem(key);
      if (problem) this.problems.push(`app "${this.name}": ${problem}`);
    }
    const usedBy = `PullApplicationSet "${this.name}"`;
    const declared = hubVersionsOf(this.hub).argoCD;
    for (const finding of featureFindings(
      'spokeLabelParams',
      declared === undefined ? undefined : parseVersion(declared),
      `hub "${this.hub.name}"`,
      usedBy,
    ))
      (finding.severity === 'error' ? this.problems : this.warnings).push(finding.message);
    if (this.placement.evaluatedOffline)
      for (const spoke of this.placement.selectedSpokes()) {
        const gitOpsCluster = hubParts(this.hub).ledger.decisionFor(spoke.name).gitOpsCluster;
        if (gitOpsCluster !== undefined)
          this.problems.push(
            `app "${this.name}" reads spoke labels (SpokeParam.label), but spoke "${spoke.name}" is registered by GitOpsCluster ${gitOpsCluster}, whose cluster Secret carries no pullfleet labels, so the matrix generator would drop the spoke: leave SpokeParam.label out of this app, or deliver it with a PullApplication`,
          );
        const missing = keys.filter((key) => spoke.labels[key] === undefined);
        if (missing.length)
          this.problems.push(
            `app "${this.name}" reads label${missing.length > 1 ? 's' : ''} ${missing.map((k) => `"${k}"`).join(', ')} of spoke "${spoke.name}" (SpokeParam.label), which it does not have, so its Application would carry the parameter unreplaced: give the spoke the label, or narrow the placement`,
          );
      }
    for (const spoke of this.hub.spokes) {
      const secret = spoke.node.tryFindChild('ClusterSecret')?.node.defaultChild;
      if (!secret || !CdkApiObject.isApiObject(secret)) continue;
      for (const [key, value] of Object.entries(clusterSecretSpokeLabels(spoke.name, spoke.labels, keys)))
        secret.metadata.addLabel(key, value);
    }
    return keys;
  }

  /**
   * The waves resolved against the spokes the placement selects offline (problems reported); undefined
   * without a rollout or when the rollout has problems.
   */
  private resolveWaves(): readonly RolloutWave[] | undefined {
    if (!this.rollout) return undefined;
    const imported = this.placement.evaluatedOffline
      ? []
      : [
          `rollout: placement "${this.placement.namespace}/${this.placement.name}" is imported, so synth cannot put its spokes in waves: declare the placement in the fleet, or drop the rollout`,
        ];
    const { waves, problems } = this.rollout._resolve(
      imported.length > 0 ? [] : this.placement.selectedSpokes().filter((spoke) => spoke.hub === this.hub),
      true,
      imported,
    );
    this.problems.push(...problems);
    return waves;
  }

  /** The work the controller writes for the app generated for `spoke` (basic model). */
  private workOn(spoke: string): string {
    return manifestWorkName(
      this.hub.argoNamespace,
      generatedApplicationName(applicationSetAppNamePattern(this.name), spoke),
    );
  }

  /** @internal a basic ApplicationSet keeps delivering to the spokes its placement selects, whatever their model. */
  public _worksKeptOn(spoke: string): string[] {
    if (
      !this.placement ||
      typeof this.placement.selectedSpokes !== 'function' ||
      this.placement.hub !== this.hub ||
      !this.placement.evaluatedOffline
    )
      return [];
    if (this.model !== DeliveryModel.BASIC) return [];
    return this.placement.selectedSpokes().some((s) => s.name === spoke && s.hub === this.hub)
      ? [this.workOn(spoke)]
      : [];
  }

  /**
   * What the ApplicationSet renders now: see applicationSetStep (one template serves every spoke of the
   * placement), each spoke's decision as it applies to this ApplicationSet (applicationSetDecision: a
   * spoke's move reshapes only the ApplicationSets whose delivery to it changes model).
   */
  private rendering(): {
    model: DeliveryModel;
    handback: AgentHandback;
    decisions: Map<string, TransitionDecision>;
    clear?: boolean;
  } {
    const model = this.model;
    const decisions = new Map<string, TransitionDecision>();
    if (!this.placement.evaluatedOffline) return { model, handback: NO_HANDBACK, decisions };
    const spokes = this.placement.selectedSpokes().filter((spoke) => spoke.hub === this.hub);
    for (const spoke of spokes)
      decisions.set(
        spoke.name,
        applicationSetDecision(
          model,
          hubParts(this.hub).ledger.decisionFor(spoke.name),
          hubParts(this.hub).ledger.previousSpoke(spoke.name),
          this.workOn(spoke.name),
        ),
      );
    const step = applicationSetStep(
      model,
      spokes.map((spoke) => ({ name: spoke.name, decision: decisions.get(spoke.name)! })),
    );
    if (step.problem) this.problems.push(`placement "${this.placement.name}" ${step.problem}`);
    return { ...step, decisions };
  }

  /** @internal legal but almost certainly wrong (shown by synth and validate; errors with --strict). */
  public override _warnings(): string[] {
    const warnings = super._warnings();
    if (this.placement && typeof this.placement.selectedSpokes === 'function' && !this.placement.evaluatedOffline) {
      warnings.push(
        `placement "${this.placement.namespace}/${this.placement.name}" is imported, so synth cannot tell which spokes it selects: their bootstraps get no namespace "${this.app.destinationNamespace}" or RBAC for app "${this.name}"; create them on those spokes some other way`,
      );
    }
    warnings.push(...this.modelMismatches());
    return warnings;
  }

  /**
   * The spokes this ApplicationSet delivers to in a model other than their own: an ApplicationSet takes
   * the model of the GitOpsCluster on its own placement, and one template serves every spoke, so a spoke
   * some other GitOpsCluster puts on another model still gets this app the ApplicationSet's way. Said
   * once, with every such spoke, rather than delivered the other way without a word.
   */
  private modelMismatches(): string[] {
    if (
      !this.placement ||
      typeof this.placement.selectedSpokes !== 'function' ||
      this.placement.hub !== this.hub ||
      !this.placement.evaluatedOffline
    )
      return [];
    const own = this.model;
    const ledger = hubParts(this.hub).ledger;
    const others = new Map<string, { model: DeliveryModel; gitOpsCluster?: string; spokes: string[] }>();
    for (const spoke of this.placement.selectedSpokes()) {
      if (spoke.hub !== this.hub) continue;
      const decision = ledger.decisionFor(spoke.name);
      if (decision.model === own) continue;
      const key = `${decision.model} ${decision.gitOpsCluster ?? ''}`;
      const entry = others.get(key) ?? { model: decision.model, gitOpsCluster: decision.gitOpsCluster, spokes: [] };
      entry.spokes.push(spoke.name);
      others.set(key, entry);
    }
    const name = this.placement.name;
    return [...others.values()].map(({ model, gitOpsCluster, spokes }) => {
      const them = spokes.length === 1 ? 'it' : 'them';
      const fix = gitOpsCluster
        ? `give the ApplicationSet the placement of ${gitOpsCluster}, or leave ${spokes.length === 1 ? 'that spoke' : 'those spokes'} out of placement "${name}"`
        : `leave ${spokes.length === 1 ? 'that spoke' : 'those spokes'} out of placement "${name}"`;
      return `placement "${name}" selects ${counted(spokes.length, 'spoke')} on the ${model} model${gitOpsCluster ? ` (GitOpsCluster ${gitOpsCluster})` : ''}: ${spokes.join(', ')}; an ApplicationSet takes the model of the GitOpsCluster on its own placement (${own} here), so it delivers to ${them} the ${own} way, not the ${model} way: ${fix}`;
    });
  }

  /**
   * The Application the applicationset-controller generates for `spoke` should fit a label value:
   * Argo CD's label-based resource tracking and ACM's search carry the app name in a label. (Spoke and
   * app names are DNS labels, so the name itself is always a valid object name.)
   */
  private checkGeneratedName(appName: string, spoke: string): void {
    if (appName.length <= MAX_LABEL_LENGTH) return;
    const room = MAX_LABEL_LENGTH - spoke.length - 1;
    const fix =
      room > 0
        ? `shorten the app name "${this.name}" to at most ${room} characters`
        : `the spoke name alone leaves no room: shorten the spoke name`;
    this.warnings.push(
      `the Application generated for spoke "${spoke}" is named "${appName}" (${appName.length} characters, over ${MAX_LABEL_LENGTH}): Argo CD's label-based resource tracking and ACM's search carry the app name in a label value; ${fix}`,
    );
  }

  /** @internal spokes the placement selects offline get the destination namespace and RBAC. */
  public _render(): void {
    if (this.placement.hub !== this.hub) return;
    const { ledger, registry } = hubParts(this.hub);
    const { model, handback, decisions, clear } = this.rendering();
    this.rolloutWaves = this.resolveWaves();
    if (this.rollout && model === DeliveryModel.AGENT_AUTONOMOUS)
      this.problems.push(
        "rollout: the placement's spokes run the agent-autonomous model, where each spoke syncs its own folder and the hub renders no ApplicationSet to roll out: drop the rollout",
      );
    // Step 2 of basic → agent-managed: the ApplicationSet goes, with its generated apps and their works
    // (which delete the spoke copies step 1 left without the resources finalizer); step 3 brings it back.
    if (model !== DeliveryModel.AGENT_AUTONOMOUS && !clear) this.renderApplicationSet(model, handback);
    else {
      settleApplicationSet(this, model === DeliveryModel.AGENT_AUTONOMOUS);
      this.renderedApplicationSet = undefined;
    }
    // An imported placement is not evaluated offline: the spokes it selects are known only at runtime.
    if (!this.placement.evaluatedOffline) return;
    for (const spoke of this.placement.selectedSpokes()) {
      // Agent-managed: the principal hands the AppProject to the agent; the bootstrap brings namespace and RBAC.
      registry.deliverTo(
        spoke.name,
        model === DeliveryModel.AGENT_MANAGED ? { ...this.delivery(), project: undefined } : this.delivery(),
      );
      // The applicationset-controller names the app in full; the work name and plan ids follow from it.
      const appName = generatedApplicationName(applicationSetAppNamePattern(this.name), spoke.name);
      this.checkGeneratedName(appName, spoke.name);
      ledger.claimSpokeApplication(spoke.name, this.hub.argoNamespace, appName, model, `${this.node.path}`);
      if (handback.releaseFinalizer || clear) {
        // Basic → agent-managed: the spoke Application this move hands to the agent (named by plan).
        ledger.addHandOver(
          spoke.name,
          `${spokeAppNamespace({ metadata: { name: appName, namespace: this.hub.argoNamespace, annotations: this.app.annotations } })}/${appName}`,
        );
      }
      if (clear) continue;
      if (model === DeliveryModel.AGENT_AUTONOMOUS) {
        // The spoke owns the spec: each selected spoke gets the Application in its own folder.
        const scope = new PlainConstruct(this, spoke.name);
        routeOutput(scope, OutputFiles.spokeApplications(spoke.name));
        apiObjectFrom(
          scope,
          'Application',
          // No ApplicationSet fills the spoke parameters in here: synth does, as for a static app.
          buildAutonomousSpokeApplication(
            { ...this.app, sources: substituteSpokeParams(this.app.sources, spoke) },
            {
              cluster: spoke.name,
              namespace: this.hub.argoNamespace,
              constructPath: `${scope.node.path}/Application`,
              name: appName,
            },
          ) as never,
        );
        continue;
      }
      if (model === DeliveryModel.AGENT_MANAGED) ledger.addAgentProjectDestination(this.app, spoke.name);
      // The work the controller will write for this app, recorded in the plan state like a rendered one
      // (a later move of the spoke goes step by step from its deleteOption).
      if (model === DeliveryModel.BASIC)
        ledger.addRenderedWork(
          spoke.name,
          manifestWorkName(this.hub.argoNamespace, appName),
          handback.standBy ? DeleteOption.ORPHAN : DeleteOption.FOREGROUND,
          decisions.get(spoke.name)?.fromAgent === true,
        );
      ledger.addRuntimeObject({
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        namespace: this.hub.argoNamespace,
        name: appName,
        path: `${this.node.path} (generated at runtime for spoke ${spoke.name})`,
      });
    }
  }
}
