import { Construct } from 'constructs';
import { type EnumValue } from '../model/core/types.js';
import { type SpokeArgoSetup } from '../model/delivery/bootstrap.js';
import {
  agentMode,
  AGENT_ADDON_DEFAULTS,
  buildAcmGitOpsCluster,
  buildOcmGitOpsCluster,
  DeliveryModel,
  type SpokeFolderSource,
} from '../model/delivery/delivery-model.js';
import { dnsLabelRule } from '../model/validation/rules.js';
import { Hub, hubContaining, HubFlavor } from './hub.js';
import { hubParts } from './_hub-parts.js';
import { claimId, markKind, nameFromId } from './_ids.js';
import { apiObjectFrom } from './_output.js';
import { heldObjects, pickRendered } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';
import type { ApiObject } from 'cdk8s';
import { OutputFiles, routeOutput } from './output.js';
import {
  bool,
  checkProps,
  enumOf,
  num,
  placementRef,
  propReported,
  propsOf,
  required,
  shape,
  str,
} from './_props-check.js';
import type { IPlacement } from './interfaces.js';
import type { ISpoke } from './interfaces.js';

export { DeliveryModel };

/** Whether OLM installs operator updates by itself (an OLM Subscription's `installPlanApproval`). */
export enum InstallPlanApproval {
  /** OLM installs every update as soon as the channel offers it. */
  AUTOMATIC = 'Automatic',
  /** Each update waits until someone approves its InstallPlan. */
  MANUAL = 'Manual',
}

/** The OLM subscription the ACM gitops add-on uses to install the spoke Argo CD operator. */
export interface GitOpsOlmSubscription {
  /**
   * Name of the OLM Subscription of the GitOps operator.
   * @default - left out of the GitOpsCluster: the gitops add-on uses its own
   */
  readonly name?: string;
  /**
   * Namespace of the Subscription.
   * @default - left out of the GitOpsCluster: the gitops add-on uses its own
   */
  readonly namespace?: string;
  /**
   * Operator channel.
   * @default - left out of the GitOpsCluster: the gitops add-on uses its own
   */
  readonly channel?: string;
  /**
   * CatalogSource of the operator.
   * @default - left out of the GitOpsCluster: the gitops add-on uses its own
   */
  readonly source?: string;
  /**
   * Namespace of the CatalogSource.
   * @default - left out of the GitOpsCluster: the gitops add-on uses its own
   */
  readonly sourceNamespace?: string;
  /**
   * Whether OLM installs updates by itself.
   * @default - left out of the GitOpsCluster: the gitops add-on uses its own
   */
  readonly installPlanApproval?: EnumValue<InstallPlanApproval>;
}

/** Where an agent-autonomous spoke's own folder (`dist/<hub>/spokes/<spoke>/`) lives in Git. */
export interface SpokeFolderRepository {
  /** The fleet repository holding `dist/`. */
  readonly repoURL: string;
  /**
   * Branch, tag or commit.
   * @default 'HEAD'
   */
  readonly targetRevision?: string;
  /**
   * Path of the output folder in the repository.
   * @default 'dist'
   */
  readonly outputPath?: string;
}

/** Props every GitOpsCluster takes, whatever its flavour and delivery model. */
export interface GitOpsClusterCommonProps {
  /** The Placement whose clusters this GitOpsCluster registers. Must be in the GitOpsCluster's namespace. */
  readonly placement: IPlacement;
  /**
   * Namespace of the GitOpsCluster (it only sees PlacementDecisions in its own namespace). On an OCM hub
   * it must be the hub's Argo CD namespace: the OCM controller takes its own namespace for Argo CD's.
   * @default - the hub's Argo CD namespace
   */
  readonly namespace?: string;
  /**
   * Agent models only (DeliveryModel.BASIC ignores it): the address the agents dial
   * (`principalServerAddress` on OCM, `serverAddress` on ACM). Give it together with `principalServerPort`
   * or not at all: the upstream controller discovers both when either is missing and overwrites the one given.
   * @default - discovered by the upstream controller from the principal's Service, with the port
   */
  readonly principalServerAddress?: string;
  /**
   * Agent models only (DeliveryModel.BASIC ignores it): the port the agents dial (`principalServerPort` on
   * OCM, `serverPort` on ACM; rendered as a string, the type of those fields), a whole number from 1 to
   * 65535. Give it together with `principalServerAddress` or not at all.
   * @default - discovered by the upstream controller from the principal's Service, with the address
   */
  readonly principalServerPort?: number;
}

/**
 * Props of an ACM GitOpsCluster ({@link GitOpsCluster.acm}) whose spokes run the basic or the
 * agent-managed model. For agent-autonomous spokes see {@link AcmAutonomousGitOpsClusterProps}.
 */
export interface AcmGitOpsClusterProps extends GitOpsClusterCommonProps {
  /**
   * The delivery model of every spoke the placement selects.
   * @default DeliveryModel.BASIC
   */
  readonly model?: EnumValue<DeliveryModel.BASIC | DeliveryModel.AGENT_MANAGED>;
  /**
   * Install the spoke Argo CD through the gitops add-on. The agent models need it (false is then a problem).
   * @default - true for the agent models, false for DeliveryModel.BASIC
   */
  readonly gitopsAddon?: boolean;
  /**
   * Let the add-on replace an existing spoke Argo CD configuration.
   * @default false
   */
  readonly overrideExistingConfigs?: boolean;
  /**
   * Install the operator through this OLM subscription.
   * @default - the add-on's own install
   */
  readonly olmSubscription?: GitOpsOlmSubscription;
  /**
   * Agent models only: hand the hub CA to the agents.
   * @default true
   */
  readonly propagateHubCA?: boolean;
  /**
   * Only agent-autonomous spokes sync a folder of their own: see {@link AcmAutonomousGitOpsClusterProps}.
   * @default - none: the compiler refuses it here
   */
  readonly spokeFolderRepository?: never;
}

/** Props of an ACM GitOpsCluster ({@link GitOpsCluster.acm}) whose spokes run the agent-autonomous model. */
export interface AcmAutonomousGitOpsClusterProps extends Omit<
  AcmGitOpsClusterProps,
  'model' | 'spokeFolderRepository'
> {
  /** The delivery model of every spoke the placement selects: agent-autonomous. */
  readonly model: EnumValue<DeliveryModel.AGENT_AUTONOMOUS>;
  /** The repository the spokes' own Argo CD syncs their folder (`dist/<hub>/spokes/<spoke>/`) from. */
  readonly spokeFolderRepository: SpokeFolderRepository;
}

/**
 * Props of an OCM GitOpsCluster ({@link GitOpsCluster.ocm}) whose spokes run the agent-managed model
 * (an OCM GitOpsCluster always runs the agent). For agent-autonomous spokes see
 * {@link OcmAutonomousGitOpsClusterProps}.
 */
export interface OcmGitOpsClusterProps extends GitOpsClusterCommonProps {
  /**
   * The delivery model of every spoke the placement selects.
   * @default DeliveryModel.AGENT_MANAGED
   */
  readonly model?: EnumValue<DeliveryModel.AGENT_MANAGED>;
  /**
   * Namespace of the agent on each spoke.
   * @default 'argocd'
   */
  readonly agentNamespace?: string;
  /**
   * Namespace of the Argo CD operator on each spoke.
   * @default 'argocd-operator-system'
   */
  readonly operatorNamespace?: string;
  /**
   * Only agent-autonomous spokes sync a folder of their own: see {@link OcmAutonomousGitOpsClusterProps}.
   * @default - none: the compiler refuses it here
   */
  readonly spokeFolderRepository?: never;
}

/** Props of an OCM GitOpsCluster ({@link GitOpsCluster.ocm}) whose spokes run the agent-autonomous model. */
export interface OcmAutonomousGitOpsClusterProps extends Omit<
  OcmGitOpsClusterProps,
  'model' | 'spokeFolderRepository'
> {
  /** The delivery model of every spoke the placement selects: agent-autonomous. */
  readonly model: EnumValue<DeliveryModel.AGENT_AUTONOMOUS>;
  /** The repository the spokes' own Argo CD syncs their folder (`dist/<hub>/spokes/<spoke>/`) from. */
  readonly spokeFolderRepository: SpokeFolderRepository;
}

/** Every key an ACM factory accepts, as the runtime checks see them (any model). */
type AcmAnyProps = Omit<AcmGitOpsClusterProps, 'model' | 'spokeFolderRepository'> & {
  readonly model?: DeliveryModel;
  readonly spokeFolderRepository?: SpokeFolderRepository;
};

/** Every key an OCM factory accepts, as the runtime checks see them (any model). */
type OcmAnyProps = Omit<OcmGitOpsClusterProps, 'model' | 'spokeFolderRepository'> & {
  readonly model?: DeliveryModel;
  readonly spokeFolderRepository?: SpokeFolderRepository;
};

/** The props of either flavour, after the runtime checks. */
type AnyProps = Partial<AcmAnyProps & OcmAnyProps>;

/** The runtime type of the keys both flavours share (see props-check.ts). */
const COMMON_CHECKS = {
  placement: placementRef<IPlacement>(),
  namespace: str(),
  model: str<DeliveryModel>(),
  principalServerAddress: str(),
  principalServerPort: num('a port number'),
  spokeFolderRepository: shape<SpokeFolderRepository>('spoke folder repository', {
    repoURL: required(str()),
    targetRevision: str(),
    outputPath: str(),
  }),
};

/** The runtime type of every key of the ACM props (see props-check.ts). */
const ACM_PROPS = propsOf<AcmAnyProps>('GitOpsCluster.acm', {
  ...COMMON_CHECKS,
  gitopsAddon: bool(),
  overrideExistingConfigs: bool(),
  olmSubscription: shape<GitOpsOlmSubscription>('OLM subscription', {
    name: str(),
    namespace: str(),
    channel: str(),
    source: str(),
    sourceNamespace: str(),
    installPlanApproval: enumOf(InstallPlanApproval, 'InstallPlanApproval'),
  }),
  propagateHubCA: bool(),
});

/** The runtime type of every key of the OCM props (see props-check.ts). */
const OCM_PROPS = propsOf<OcmAnyProps>('GitOpsCluster.ocm', {
  ...COMMON_CHECKS,
  agentNamespace: str(),
  operatorNamespace: str(),
});

/** The keys only an OCM GitOpsCluster takes. */
const OCM_ONLY = ['agentNamespace', 'operatorNamespace'] as const;
/** The keys only an ACM GitOpsCluster takes. */
const ACM_ONLY = ['gitopsAddon', 'overrideExistingConfigs', 'olmSubscription', 'propagateHubCA'] as const;

/**
 * The principal address and port go together. Both upstream GitOpsCluster controllers (OCM v1alpha1 and ACM
 * v1beta1) discover the principal's endpoint whenever either field is empty and write both into the spec,
 * so one without the other (or an empty address) is replaced on the hub and drifts from Git.
 */
function principalEndpointProblems(props: AnyProps, ocm: boolean): string[] {
  const field = ocm ? 'spec.argoCDAgentAddon' : 'spec.gitopsAddon.argoCDAgent';
  const source = ocm ? "the principal's Service" : "the principal's Route or Service";
  const address = props.principalServerAddress;
  const port = props.principalServerPort;
  if (address !== undefined && address.trim() === '')
    return [
      'principalServerAddress is empty: leave it out (and principalServerPort too) to let the controller discover both, or give the address',
    ];
  if ((address !== undefined) === (port !== undefined)) return [];
  const [key, value, missing, example] =
    address !== undefined
      ? (['principalServerAddress', `"${address}"`, 'principalServerPort', '443'] as const)
      : (['principalServerPort', String(port), 'principalServerAddress', "'principal.example.com'"] as const);
  return [
    `${key} ${value} is given without ${missing}: the ${ocm ? 'OCM' : 'ACM'} GitOpsCluster controller discovers both from ${source} when either is empty and writes them into ${field}, replacing the ${key === 'principalServerAddress' ? 'address' : 'port'} given here, so the object drifts from Git: give ${missing} too (for example ${example}), or neither to let the controller discover both`,
  ];
}

/**
 * The keys of `props` only the other flavour takes, and `props` without them (values from JavaScript or
 * JSON, which the compiler did not check): each is reported as a problem rather than as an unknown key.
 */
function splitForeign(props: unknown, foreign: readonly string[]): { props: unknown; given: string[] } {
  if (props === null || typeof props !== 'object' || Array.isArray(props)) return { props, given: [] };
  const record = props as Record<string, unknown>;
  const given = foreign.filter((key) => record[key] !== undefined);
  if (given.length === 0) return { props, given };
  return { props: Object.fromEntries(Object.entries(record).filter(([key]) => !given.includes(key))), given };
}

/** The Argo CD the GitOpsCluster's add-on runs on each spoke it selects (see GitOpsCluster.spokeArgoSetup). */
function spokeArgoSetupOf(props: AnyProps, ocm: boolean, model: DeliveryModel, argoNamespace: string): SpokeArgoSetup {
  if (ocm)
    return { kind: 'ocm-agent-addon', agentNamespace: props.agentNamespace ?? AGENT_ADDON_DEFAULTS.agentNamespace };
  return (props.gitopsAddon ?? agentMode(model) !== undefined)
    ? { kind: 'acm-gitops-addon' }
    : { kind: 'openshift-gitops', namespace: argoNamespace };
}

/**
 * Where agent-autonomous spokes sync their own folder from, with its defaults; a missing repository (that
 * model) or one given to another model is a problem.
 */
function folderSourceOf(props: AnyProps, model: DeliveryModel): { source?: SpokeFolderSource; problems: string[] } {
  const repo = props.spokeFolderRepository;
  if (model !== DeliveryModel.AGENT_AUTONOMOUS)
    return {
      problems: repo
        ? [`spokeFolderRepository is only used by agent-autonomous spokes, but the model is ${model}: drop it`]
        : [],
    };
  if (!repo || typeof repo.repoURL !== 'string' || repo.repoURL.length === 0)
    return {
      problems: [
        "an agent-autonomous spoke syncs its own folder from Git: give spokeFolderRepository { repoURL: '<the fleet repository>' }",
      ],
    };
  return {
    source: {
      repoURL: repo.repoURL,
      targetRevision: repo.targetRevision ?? 'HEAD',
      outputPath: repo.outputPath ?? 'dist',
    },
    problems: [],
  };
}

/** The `gitopsAddon` of an ACM GitOpsCluster: left out when nothing about the add-on is set or needed. */
function acmGitopsAddon(props: AnyProps, mode: ReturnType<typeof agentMode>) {
  const addonEnabled = props.gitopsAddon ?? mode !== undefined;
  const olm = props.olmSubscription ? { enabled: true, ...props.olmSubscription } : undefined;
  if (!(addonEnabled || props.overrideExistingConfigs !== undefined || olm)) return undefined;
  return {
    enabled: addonEnabled,
    overrideExistingConfigs: props.overrideExistingConfigs ?? false,
    ...(olm ? { olmSubscription: olm } : {}),
    ...(mode
      ? {
          argoCDAgent: {
            mode,
            serverAddress: props.principalServerAddress,
            serverPort: props.principalServerPort,
            propagateHubCA: props.propagateHubCA ?? true,
          },
        }
      : {}),
  };
}

/**
 * A GitOpsCluster: registers the clusters of a Placement with the hub Argo CD and, for the agent
 * models, runs argocd-agent on them. Make one with the factory of the hub's flavour:
 * {@link GitOpsCluster.acm} renders the ACM `v1beta1` GitOpsCluster (`createBlankClusterSecrets: true`,
 * `gitopsAddon`), {@link GitOpsCluster.ocm} the OCM `v1alpha1` one (`argoCDAgentAddon`). Every spoke its
 * placement selects (offline) gets its model; spokes no GitOpsCluster selects stay basic.
 */
export class GitOpsCluster extends Construct implements IRendersObjects {
  /**
   * A GitOpsCluster for an ACM hub (`apps.open-cluster-management.io/v1beta1`): the hub Argo CD registers
   * the placement's clusters with blank cluster Secrets, the gitops add-on installs the spoke Argo CD,
   * and for the agent models it runs argocd-agent.
   * @param scope the hub (or any construct inside it)
   * @param id the construct id, which is also the GitOpsCluster's name (a DNS label)
   * @param props the ACM settings; `model: DeliveryModel.AGENT_AUTONOMOUS` needs `spokeFolderRepository`
   */
  public static acm(
    scope: Construct,
    id: string,
    props: AcmGitOpsClusterProps | AcmAutonomousGitOpsClusterProps,
  ): GitOpsCluster {
    return new GitOpsCluster(scope, id, HubFlavor.ACM, props);
  }

  /**
   * A GitOpsCluster for an OCM hub (`apps.open-cluster-management.io/v1alpha1`): the argocd-agent add-on
   * runs the agent on every cluster of the placement and registers it with the hub Argo CD.
   * @param scope the hub (or any construct inside it)
   * @param id the construct id, which is also the GitOpsCluster's name (a DNS label)
   * @param props the OCM settings; `model: DeliveryModel.AGENT_AUTONOMOUS` needs `spokeFolderRepository`
   */
  public static ocm(
    scope: Construct,
    id: string,
    props: OcmGitOpsClusterProps | OcmAutonomousGitOpsClusterProps,
  ): GitOpsCluster {
    return new GitOpsCluster(scope, id, HubFlavor.OCM, props);
  }

  /** Name of the GitOpsCluster object. */
  public readonly name: string;
  /** Its namespace (the Placement must be in the same one: a GitOpsCluster reads decisions there only). */
  public readonly namespace: string;
  /** The hub it belongs to. */
  public readonly hub: Hub;
  /** The Placement whose clusters it registers. */
  public readonly placement: IPlacement;
  /** The delivery model of the spokes it selects. */
  public readonly model: DeliveryModel;
  /** The flavour rendered: the factory's (`acm` or `ocm`), which must be the hub's. */
  public readonly flavor: HubFlavor;
  /**
   * The Argo CD its add-on runs on each spoke it selects (ACM: the gitops add-on's `acm-openshift-gitops`
   * when enabled, else OpenShift GitOps' default instance; OCM: the argocd-agent add-on's `argocd` in the
   * agent namespace). Spoke bootstraps bind that instance's application controller.
   * @internal
   */
  public readonly spokeArgoSetup: SpokeArgoSetup;
  private readonly folderSource?: SpokeFolderSource;
  private readonly problems: string[] = [];

  private constructor(scope: Construct, id: string, flavor: HubFlavor, given: unknown) {
    super(scope, claimId(scope, 'GitOpsCluster', id));
    markKind(this, 'GitOpsCluster');
    const ocm = flavor === HubFlavor.OCM;
    const foreign = splitForeign(given, ocm ? ACM_ONLY : OCM_ONLY);
    const props: AnyProps = ocm
      ? checkProps(this, OCM_PROPS, foreign.props)
      : checkProps(this, ACM_PROPS, foreign.props);
    this.hub = hubContaining(scope, { kind: 'GitOpsCluster', id });
    this.name = nameFromId(this, id);
    this.flavor = flavor;
    this.placement = props.placement!;
    this.namespace = props.namespace ?? this.hub.argoNamespace;
    this.model = props.model ?? (ocm ? DeliveryModel.AGENT_MANAGED : DeliveryModel.BASIC);
    this.node.addValidation({ validate: () => [...this.problems] });
    for (const p of [
      dnsLabelRule('GitOpsCluster name', this.name),
      dnsLabelRule('GitOpsCluster namespace', this.namespace),
    ])
      if (p) this.problems.push(p);
    if (!Object.values(DeliveryModel).includes(this.model)) {
      this.problems.push(
        `model ${JSON.stringify(props.model)} is not a delivery model: use DeliveryModel.BASIC, DeliveryModel.AGENT_MANAGED or DeliveryModel.AGENT_AUTONOMOUS`,
      );
      this.model = DeliveryModel.BASIC;
    }
    this.spokeArgoSetup = spokeArgoSetupOf(props, ocm, this.model, this.hub.argoNamespace);
    if (!this.placementUsable(props.placement)) return;
    this.problems.push(...this.settingProblems(props, ocm, foreign.given));
    const folder = folderSourceOf(props, this.model);
    this.problems.push(...folder.problems);
    this.folderSource = folder.source;

    hubParts(this.hub).registry.addGitOpsCluster({ gitOpsCluster: this, spokeArgoSetup: this.spokeArgoSetup });
    routeOutput(this, OutputFiles.GITOPS_CLUSTERS);
    this.renderResource(props, ocm);
  }

  /**
   * Whether `placement` can be rendered against: given, and of this hub (else the problem is reported). A
   * placement in another namespace is reported too, but rendered against.
   */
  private placementUsable(placement: IPlacement | undefined): placement is IPlacement {
    if (!placement || typeof placement.selectedSpokes !== 'function') {
      if (!propReported(this, 'placement'))
        this.problems.push('placement is missing: give the Placement whose clusters this GitOpsCluster registers');
      return false;
    }
    if (placement.hub !== this.hub) {
      this.problems.push(
        `placement ${placement.node.path} belongs to hub "${placement.hub.name}", not "${this.hub.name}": use a placement of this hub`,
      );
      return false;
    }
    if (placement.namespace !== this.namespace) {
      this.problems.push(
        `placement ${placement.node.path} is in namespace "${placement.namespace}", but GitOpsCluster ${this.node.path} is in "${this.namespace}" and only sees PlacementDecisions there: put both in the same namespace`,
      );
    }
    return true;
  }

  /** The problems of the settings: the namespace and model an OCM hub needs, the other flavour's keys, the agent's. */
  private settingProblems(props: AnyProps, ocm: boolean, foreign: readonly string[]): string[] {
    const problems: string[] = [];
    if (ocm && this.namespace !== this.hub.argoNamespace)
      problems.push(
        `namespace "${this.namespace}" is not the hub Argo CD's ("${this.hub.argoNamespace}"): the OCM GitOpsCluster controller takes its own namespace for the Argo CD namespace and puts the agents' cluster Secrets and the principal's certificates there, where a principal in "${this.hub.argoNamespace}" never looks; create the GitOpsCluster (and its placement) in "${this.hub.argoNamespace}"`,
      );
    const mode = agentMode(this.model);
    if (ocm && !mode)
      problems.push(
        'model BASIC needs no GitOpsCluster on an OCM hub (the v1alpha1 GitOpsCluster always runs the agent): drop the GitOpsCluster, or choose AGENT_MANAGED or AGENT_AUTONOMOUS',
      );
    for (const key of foreign) {
      problems.push(
        ocm
          ? `${key} is an ACM (v1beta1) setting, but GitOpsCluster.ocm renders the OCM (v1alpha1) GitOpsCluster: drop it`
          : `${key} is an OCM (v1alpha1) setting, but GitOpsCluster.acm renders the ACM (v1beta1) GitOpsCluster: drop it`,
      );
    }
    if (!ocm && mode && props.gitopsAddon === false)
      problems.push(
        `model ${this.model} runs argocd-agent, which the ACM gitops add-on installs: leave gitopsAddon on (or choose DeliveryModel.BASIC)`,
      );
    const port = props.principalServerPort;
    if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535)) {
      problems.push(
        `principalServerPort ${port} is not a port number: give a whole number from 1 to 65535, for example 443`,
      );
    }
    if (mode) problems.push(...principalEndpointProblems(props, ocm));
    return problems;
  }

  /** Renders the GitOpsCluster object of the flavour (`Resource`). */
  private renderResource(props: AnyProps, ocm: boolean): void {
    const mode = agentMode(this.model);
    const common = {
      name: this.name,
      namespace: this.namespace,
      placement: this.placement.name,
      constructPath: `${this.node.path}/Resource`,
    };
    const object = ocm
      ? buildOcmGitOpsCluster({
          ...common,
          mode: mode ?? 'managed',
          principalServerAddress: props.principalServerAddress,
          principalServerPort: props.principalServerPort,
          agentNamespace: props.agentNamespace ?? AGENT_ADDON_DEFAULTS.agentNamespace,
          operatorNamespace: props.operatorNamespace ?? AGENT_ADDON_DEFAULTS.operatorNamespace,
        })
      : buildAcmGitOpsCluster({
          ...common,
          argoNamespace: this.hub.argoNamespace,
          gitopsAddon: acmGitopsAddon(props, mode),
        });
    apiObjectFrom(this, 'Resource', object);
  }

  /**
   * The ApiObject it renders: `{ kind: 'GitOpsCluster' }` (`dist/<hub>/hub/gitops-clusters.yaml`), also
   * `ApiObject.of(gitOpsCluster)`, created with it. Throws for any other kind, and when a problem of its
   * own (reported at synth) left it rendering nothing.
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return pickRendered(this, query, {
      what: `GitOpsCluster "${this.name}"`,
      kinds: ['GitOpsCluster'],
      objects: heldObjects(this),
    });
  }

  /** Where agent-autonomous spokes sync their own folder from (a copy); undefined for the other models. */
  public get spokeFolderSource(): SpokeFolderSource | undefined {
    return this.folderSource ? { ...this.folderSource } : undefined;
  }

  /** The spokes this GitOpsCluster selects (its placement, evaluated offline). */
  public selectedSpokes(): ISpoke[] {
    if (!this.placement || typeof this.placement.selectedSpokes !== 'function' || this.placement.hub !== this.hub)
      return [];
    return this.placement.selectedSpokes();
  }
}
