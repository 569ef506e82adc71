import { Construct } from 'constructs';
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
import { claimId, nameFromId, Hub, HubFlavor, markKind } from './hub.js';
import { apiObjectFrom, OutputFiles, routeOutput } from './_output.js';
import {
  bool,
  checkProps,
  enumOf,
  oneOf,
  placementRef,
  propReported,
  propsOf,
  required,
  shape,
  str,
} from './_props-check.js';
import type { IPlacement } from './placement.js';
import type { ISpoke } from './interfaces.js';

export { DeliveryModel };

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
  readonly installPlanApproval?: 'Automatic' | 'Manual';
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

/** Props of a {@link GitOpsCluster}. */
export interface GitOpsClusterProps {
  /** The Placement whose clusters this GitOpsCluster registers. Must be in the GitOpsCluster's namespace. */
  readonly placement: IPlacement;
  /**
   * Which GitOpsCluster CRD to render. A hub installs one of them, so this must match the hub.
   * @default - the hub's flavour (ACM: v1beta1, OCM: v1alpha1)
   */
  readonly flavor?: HubFlavor;
  /**
   * Namespace of the GitOpsCluster (it only sees PlacementDecisions in its own namespace).
   * @default - the hub's Argo CD namespace
   */
  readonly namespace?: string;
  /**
   * The delivery model of every spoke the placement selects.
   * @default DeliveryModel.AGENT_MANAGED on OCM hubs (the add-on's default mode), DeliveryModel.BASIC on ACM hubs
   */
  readonly model?: DeliveryModel;
  /**
   * Address the agents dial (`principalServerAddress` on OCM, `serverAddress` on ACM). Give it together
   * with `principalServerPort` or not at all: the upstream controller discovers both when either is
   * missing and overwrites the one given.
   * @default - discovered by the upstream controller from the principal's Service, with the port
   */
  readonly principalServerAddress?: string;
  /**
   * Port the agents dial (`principalServerPort` on OCM, `serverPort` on ACM). Give it together with
   * `principalServerAddress` or not at all.
   * @default - discovered by the upstream controller from the principal's Service, with the address
   */
  readonly principalServerPort?: string;
  /**
   * OCM only: namespace of the agent on each spoke.
   * @default 'argocd'
   */
  readonly agentNamespace?: string;
  /**
   * OCM only: namespace of the Argo CD operator on each spoke.
   * @default 'argocd-operator-system'
   */
  readonly operatorNamespace?: string;
  /**
   * ACM only: install the spoke Argo CD through the gitops add-on. The agent models need it.
   * @default - true for agent models, false for basic
   */
  readonly gitopsAddon?: boolean;
  /**
   * ACM only: let the add-on replace an existing spoke Argo CD configuration.
   * @default false
   */
  readonly overrideExistingConfigs?: boolean;
  /**
   * ACM only: install the operator through this OLM subscription.
   * @default - the add-on's own install
   */
  readonly olmSubscription?: GitOpsOlmSubscription;
  /**
   * ACM only: hand the hub CA to the agents.
   * @default true
   */
  readonly propagateHubCA?: boolean;
  /**
   * Agent-autonomous only (required there): the repository the spokes' own Argo CD syncs their folder from.
   * @default - none
   */
  readonly spokeFolderRepository?: SpokeFolderRepository;
}

/** The runtime type of every {@link GitOpsClusterProps} key (see props-check.ts). */
const GITOPS_CLUSTER_PROPS = propsOf<GitOpsClusterProps>('GitOpsCluster', {
  placement: placementRef<IPlacement>(),
  flavor: enumOf(HubFlavor, 'HubFlavor'),
  namespace: str(),
  model: str<DeliveryModel>(),
  principalServerAddress: str(),
  principalServerPort: str(),
  agentNamespace: str(),
  operatorNamespace: str(),
  gitopsAddon: bool(),
  overrideExistingConfigs: bool(),
  olmSubscription: shape<GitOpsOlmSubscription>('OLM subscription', {
    name: str(),
    namespace: str(),
    channel: str(),
    source: str(),
    sourceNamespace: str(),
    installPlanApproval: oneOf('Automatic', 'Manual'),
  }),
  propagateHubCA: bool(),
  spokeFolderRepository: shape<SpokeFolderRepository>('spoke folder repository', {
    repoURL: required(str()),
    targetRevision: str(),
    outputPath: str(),
  }),
});

/**
 * The principal address and port go together. Both upstream GitOpsCluster controllers (OCM v1alpha1 and ACM
 * v1beta1) discover the principal's endpoint whenever either field is empty and write both into the spec,
 * so one without the other (or an empty string) is replaced on the hub and drifts from Git.
 */
function principalEndpointProblems(props: GitOpsClusterProps, ocm: boolean): string[] {
  const field = ocm ? 'spec.argoCDAgentAddon' : 'spec.gitopsAddon.argoCDAgent';
  const source = ocm ? "the principal's Service" : "the principal's Route or Service";
  const address = props.principalServerAddress;
  const port = props.principalServerPort;
  const problems: string[] = [];
  for (const [key, value] of [
    ['principalServerAddress', address],
    ['principalServerPort', port],
  ] as const) {
    if (value !== undefined && value.trim() === '') {
      const other = key === 'principalServerAddress' ? 'principalServerPort' : 'principalServerAddress';
      problems.push(
        `${key} is empty: leave it out (and ${other} too) to let the controller discover both, or give the ${key === 'principalServerAddress' ? 'address' : 'port'}`,
      );
    }
  }
  if (problems.length > 0) return problems;
  const given = (value: string | undefined) => value !== undefined;
  if (given(address) !== given(port)) {
    const [key, value, missing, example] = given(address)
      ? (['principalServerAddress', address, 'principalServerPort', "'443'"] as const)
      : (['principalServerPort', port, 'principalServerAddress', "'principal.example.com'"] as const);
    problems.push(
      `${key} "${value}" is given without ${missing}: the ${ocm ? 'OCM' : 'ACM'} GitOpsCluster controller discovers both from ${source} when either is empty and writes them into ${field}, replacing the ${key === 'principalServerAddress' ? 'address' : 'port'} given here, so the object drifts from Git: give ${missing} too (for example ${example}), or neither to let the controller discover both`,
    );
  }
  return problems;
}

/**
 * A GitOpsCluster: registers the clusters of a Placement with the hub Argo CD and, for the agent
 * models, runs argocd-agent on them. Renders the flavour the hub needs: `v1beta1` on ACM hubs
 * (`createBlankClusterSecrets: true`, `gitopsAddon`), `v1alpha1` on OCM hubs (`argoCDAgentAddon`).
 * Every spoke its placement selects (offline) gets this model; spokes no GitOpsCluster selects stay basic.
 */
export class GitOpsCluster extends Construct {
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
  /** The flavour rendered (the hub's). */
  public readonly flavor: HubFlavor;
  /** Where autonomous spokes' folders are synced from (agent-autonomous only). */
  public readonly spokeFolderSource?: SpokeFolderSource;
  /**
   * The Argo CD its add-on runs on each spoke it selects (ACM: the gitops add-on's `acm-openshift-gitops`
   * when enabled, else OpenShift GitOps' default instance; OCM: the argocd-agent add-on's `argocd` in the
   * agent namespace). Spoke bootstraps bind that instance's application controller.
   * @internal
   */
  public readonly spokeArgoSetup: SpokeArgoSetup;
  private readonly problems: string[] = [];

  constructor(scope: Construct, id: string, props: GitOpsClusterProps) {
    super(scope, claimId(scope, 'GitOpsCluster', id));
    markKind(this, 'GitOpsCluster');
    props = checkProps(this, GITOPS_CLUSTER_PROPS, props);
    this.hub = Hub.of(scope);
    this.name = nameFromId(this, id);
    this.flavor = props.flavor ?? this.hub.flavor;
    this.placement = props.placement;
    this.namespace = props.namespace ?? this.hub.argoNamespace;
    const ocm = this.flavor === HubFlavor.OCM;
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
    this.spokeArgoSetup = ocm
      ? { kind: 'ocm-agent-addon', agentNamespace: props.agentNamespace ?? AGENT_ADDON_DEFAULTS.agentNamespace }
      : (props.gitopsAddon ?? agentMode(this.model) !== undefined)
        ? { kind: 'acm-gitops-addon' }
        : { kind: 'openshift-gitops', namespace: this.hub.argoNamespace };
    if (!props.placement || typeof props.placement.selectedSpokes !== 'function') {
      if (!propReported(this, 'placement'))
        this.problems.push('placement is missing: give the Placement whose clusters this GitOpsCluster registers');
      return;
    }
    if (props.placement.hub !== this.hub) {
      this.problems.push(
        `placement ${props.placement.node.path} belongs to hub "${props.placement.hub.name}", not "${this.hub.name}": use a placement of this hub`,
      );
      return;
    }
    if (props.placement.namespace !== this.namespace) {
      this.problems.push(
        `placement ${props.placement.node.path} is in namespace "${props.placement.namespace}", but GitOpsCluster ${this.node.path} is in "${this.namespace}" and only sees PlacementDecisions there: put both in the same namespace`,
      );
    }
    const mode = agentMode(this.model);
    if (ocm && !mode)
      this.problems.push(
        'model BASIC needs no GitOpsCluster on an OCM hub (the v1alpha1 GitOpsCluster always runs the agent): drop the GitOpsCluster, or choose AGENT_MANAGED or AGENT_AUTONOMOUS',
      );
    if (ocm) {
      for (const key of ['gitopsAddon', 'overrideExistingConfigs', 'olmSubscription', 'propagateHubCA'] as const) {
        if (props[key] !== undefined)
          this.problems.push(`${key} is an ACM (v1beta1) setting, but hub "${this.hub.name}" is OCM: drop it`);
      }
    } else {
      for (const key of ['agentNamespace', 'operatorNamespace'] as const) {
        if (props[key] !== undefined)
          this.problems.push(`${key} is an OCM (v1alpha1) setting, but hub "${this.hub.name}" is ACM: drop it`);
      }
      if (mode && props.gitopsAddon === false)
        this.problems.push(
          `model ${this.model} runs argocd-agent, which the ACM gitops add-on installs: leave gitopsAddon on (or choose DeliveryModel.BASIC)`,
        );
    }
    if (
      props.principalServerPort !== undefined &&
      props.principalServerPort.trim() !== '' &&
      !/^[0-9]{1,5}$/.test(props.principalServerPort)
    ) {
      this.problems.push(
        `principalServerPort "${props.principalServerPort}" is not a port number: give it as a string of digits, for example '443'`,
      );
    }
    if (mode) this.problems.push(...principalEndpointProblems(props, ocm));
    if (this.model === DeliveryModel.AGENT_AUTONOMOUS) {
      const repo = props.spokeFolderRepository;
      if (!repo || typeof repo.repoURL !== 'string' || repo.repoURL.length === 0) {
        this.problems.push(
          "an agent-autonomous spoke syncs its own folder from Git: give spokeFolderRepository { repoURL: '<the fleet repository>' }",
        );
      } else {
        this.spokeFolderSource = {
          repoURL: repo.repoURL,
          targetRevision: repo.targetRevision ?? 'HEAD',
          outputPath: repo.outputPath ?? 'dist',
        };
      }
    } else if (props.spokeFolderRepository) {
      this.problems.push(
        `spokeFolderRepository is only used by agent-autonomous spokes, but the model is ${this.model}: drop it`,
      );
    }

    this.hub._addGitOpsCluster(this);
    routeOutput(this, OutputFiles.GITOPS_CLUSTERS);
    const common = {
      name: this.name,
      namespace: this.namespace,
      placement: props.placement.name,
      constructPath: `${this.node.path}/Resource`,
    };
    if (ocm) {
      apiObjectFrom(
        this,
        'Resource',
        buildOcmGitOpsCluster({
          ...common,
          mode: mode ?? 'managed',
          principalServerAddress: props.principalServerAddress,
          principalServerPort: props.principalServerPort,
          agentNamespace: props.agentNamespace ?? AGENT_ADDON_DEFAULTS.agentNamespace,
          operatorNamespace: props.operatorNamespace ?? AGENT_ADDON_DEFAULTS.operatorNamespace,
        }),
      );
    } else {
      const addonEnabled = props.gitopsAddon ?? mode !== undefined;
      const olm = props.olmSubscription ? { enabled: true, ...props.olmSubscription } : undefined;
      apiObjectFrom(
        this,
        'Resource',
        buildAcmGitOpsCluster({
          ...common,
          argoNamespace: this.hub.argoNamespace,
          gitopsAddon:
            addonEnabled || props.overrideExistingConfigs !== undefined || olm
              ? {
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
                }
              : undefined,
        }),
      );
    }
  }

  /** The spokes this GitOpsCluster selects (its placement, evaluated offline). */
  public selectedSpokes(): ISpoke[] {
    if (!this.placement || typeof this.placement.selectedSpokes !== 'function' || this.placement.hub !== this.hub)
      return [];
    return this.placement.selectedSpokes();
  }
}
