/**
 * A hub: one OCM (or ACM) hub cluster with its Argo CD. One cdk8s Chart per hub; spokes, cluster sets,
 * placements and apps are plain constructs under it, so synth time stays linear in fleet size. The hub's
 * bookkeeping lives in its internal parts (_hub-parts.ts): the registry of its spokes, cluster sets and
 * GitOpsClusters, the delivery ledger and the render order. The Hub creates them and keeps its public API.
 */
import { type ApiObject, Chart } from 'cdk8s';
import { type Construct, type IConstruct } from 'constructs';
import { enumMember, type EnumValue } from '../model/core/types.js';
import { ETCD_OBJECT_LIMIT } from '../model/validation/object-rules.js';
import { DEFAULT_WORK_SIZE_BUDGET, dnsLabelRule } from '../model/validation/rules.js';
import {
  CONTROLLER_INSTALL_PROPS,
  ControllerInstall,
  FeedbackScrape,
  type ControllerInstallProps,
} from './controller-install.js';
import { HubFlavor, type IClusterSet, type IGitOpsCluster, type IHub } from './interfaces.js';
import { ADD_INVENTORY_OPTIONS, addInventoryTo, type AddInventoryOptions, type Inventory } from './inventory.js';
import { SPOKE_VERSIONS_CHECK, type Spoke, type SpokeVersions } from './spoke.js';
import { attachHubParts, HubParts, hubParts, notInsideHub, type ConstructMade } from './_hub-parts.js';
import { normalizeVersions } from '../model/validation/versions.js';
import { checkDeclaredVersions } from './_versions.js';
import { renderLeftoverWorks } from './_leftover-works.js';
import { claimId, markKind, nameFromId } from './_ids.js';
import { bool, checkProps, enumOf, num, propsOf, shape, str } from './_props-check.js';
import { HubRegistry } from './_registry.js';
import { heldObjects, pickRendered } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';

/** The children of a Hub that hold the hub's own objects, and the objects of each. */
const HUB_OBJECT_SCOPES = ['ApplicationSetSupport', 'AgentProjects', 'ExpectedApplications', 'LeftoverWorks'];

export { FeedbackScrape, HubFlavor };

/**
 * Settings of the pullfleet controller installed on the hub (`dist/<hub>/hub/controller.yaml`). The
 * Argo CD namespace and the feedback scrape type come from the hub itself.
 */
export interface HubControllerSettings extends Omit<
  ControllerInstallProps,
  'argoNamespace' | 'feedbackScrape' | 'resourceSummaries'
> {
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
  readonly flavor?: EnumValue<HubFlavor>;
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
  readonly feedbackScrape?: EnumValue<FeedbackScrape>;
  /**
   * Works ask work agents for a resource summary of each app (a condition rule; OCM 1.0 and later), which
   * the controller writes into the hub Application's `status.resources`. Set false on a hub whose cluster
   * manager is older than OCM 1.0: its ManifestWork CRD has no `conditionRules`, and the API server refuses
   * works that carry them (the works synth renders, and the controller's until it notices).
   * @default true
   */
  readonly resourceSummaries?: boolean;
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
  /**
   * The releases the hub runs (hub Argo CD, OCM cluster manager, ACM), and in `spokes` what its spokes run
   * unless a cluster set or the spoke declares otherwise. Synth checks what the fleet uses against them
   * (docs/reference/compatibility.md): a feature a declared release lacks is a problem naming the construct,
   * the release and the fix, and a release known to mishandle it is a warning.
   * @default - nothing declared: every release is taken to have every feature (the output is what the newest
   * supported releases accept) and nothing is refused for its version
   */
  readonly versions?: HubVersions;
}

/**
 * The releases of the upstream components a hub runs. Each is `major.minor` (`'3.4'`) or
 * `major.minor.patch` (`'3.4.7'`) where the patch matters; a leading `v` and a build suffix are accepted.
 */
export interface HubVersions {
  /**
   * Argo CD on the hub (the applicationset-controller drives rollout waves). Give the patch release on
   * 3.3, 3.4 and 3.5: RollingSync changed within those lines.
   * @default - undeclared: no check against the hub's Argo CD
   */
  readonly argoCD?: string;
  /**
   * The OCM cluster manager (its ManifestWork CRD decides which work fields the hub accepts). On an ACM
   * hub, the OCM release that ACM ships (ACM 2.13 ships OCM 0.16, 2.14 ships 1.0, 2.15 ships 1.1).
   * @default - undeclared: no check against the cluster manager
   */
  readonly ocm?: string;
  /**
   * ACM (`flavor: HubFlavor.ACM` only): decides what a GitOpsCluster may ask for.
   * @default - undeclared: no check against ACM
   */
  readonly acm?: string;
  /**
   * What the hub's spokes run, unless a cluster set (`spokeVersions`) or the spoke (`versions`) declares
   * otherwise.
   * @default - undeclared
   */
  readonly spokes?: SpokeVersions;
}

const {
  argoNamespace: _argoNamespace,
  feedbackScrape: _feedbackScrape,
  resourceSummaries: _resourceSummaries,
  ...controllerSettings
} = CONTROLLER_INSTALL_PROPS.spec;

/** The runtime type of every {@link HubProps} key (see props-check.ts). */
const HUB_PROPS = propsOf<HubProps>('Hub', {
  flavor: enumOf(HubFlavor, 'HubFlavor'),
  argoNamespace: str(),
  feedbackScrape: enumOf(FeedbackScrape, 'FeedbackScrape'),
  resourceSummaries: bool(),
  workSizeBudget: num('a number of bytes'),
  controller: shape<HubControllerSettings>('controller settings', { enabled: bool(), ...controllerSettings }),
  versions: shape<HubVersions>('versions', {
    argoCD: str(),
    ocm: str(),
    acm: str(),
    spokes: SPOKE_VERSIONS_CHECK,
  }),
});

const hubSymbol = Symbol.for('pullfleet.Hub');

/**
 * A hub: a cdk8s Chart whose objects land in `dist/<hub>/`. Spokes, cluster sets, placements and apps
 * are created with the hub (or a construct inside it) as scope.
 */
export class Hub extends Chart implements IHub, IRendersObjects {
  /**
   * Whether `x` is a Hub. Checks a `Symbol.for` marker, so it also recognises a Hub made by another
   * copy of this package.
   */
  public static isHub(x: unknown): x is Hub {
    return x !== null && typeof x === 'object' && (x as Record<symbol, unknown>)[hubSymbol] === true;
  }

  /** The Hub a construct belongs to. Throws when `scope` is not inside a Hub. */
  public static of(scope: IConstruct): Hub {
    return hubContaining(scope);
  }

  /** The hub name (its folder under dist/). */
  public readonly name: string;
  /** The hub distribution. */
  public readonly flavor: HubFlavor;
  /** Namespace of the hub Argo CD. */
  public readonly argoNamespace: string;
  /** How work agents report status. */
  public readonly feedbackScrape: FeedbackScrape;
  /** Works ask work agents for a resource summary (condition rules, OCM 1.0 and later). */
  public readonly resourceSummaries: boolean;
  /** Largest ManifestWork allowed, in bytes (JSON). */
  public readonly workSizeBudget: number;
  /** The controller install, or undefined when `controller.enabled` is false. */
  public readonly controller?: ControllerInstall;
  /** Service account of the hub's applicationset-controller. */
  public readonly applicationSetControllerServiceAccount: string;
  /** The releases the hub declares (`props.versions`), canonical (`v3.4.7` → `3.4.7`); undeclared ones are absent. */
  public readonly versions: HubVersions;

  /** The hub's spokes, cluster sets and GitOpsClusters, typed with the Spoke class for {@link spokes}. */
  private readonly registry: HubRegistry<Spoke>;

  constructor(scope: Construct, id: string, props: HubProps = {}) {
    super(scope, claimId(scope, 'Hub', id));
    Object.defineProperty(this, hubSymbol, { value: true });
    markKind(this, 'Hub');
    props = checkProps(this, HUB_PROPS, props);
    this.name = nameFromId(this, id);
    this.flavor = enumMember(props.flavor ?? HubFlavor.OCM);
    this.argoNamespace = props.argoNamespace ?? (this.flavor === HubFlavor.ACM ? 'openshift-gitops' : 'argocd');
    this.feedbackScrape = enumMember(props.feedbackScrape ?? FeedbackScrape.POLL);
    this.resourceSummaries = props.resourceSummaries ?? true;
    this.workSizeBudget = props.workSizeBudget ?? DEFAULT_WORK_SIZE_BUDGET;
    const problems = [dnsLabelRule('hub name', this.name), dnsLabelRule('argoNamespace', this.argoNamespace)].filter(
      (p): p is string => !!p,
    );
    const { spokes: spokeVersions, ...hubVersions } = props.versions ?? {};
    const hubDeclared = normalizeVersions('versions', hubVersions);
    const spokesDeclared = normalizeVersions('versions.spokes', spokeVersions ?? {});
    problems.push(...hubDeclared.problems, ...spokesDeclared.problems);
    if (hubDeclared.versions.acm !== undefined && this.flavor !== HubFlavor.ACM)
      problems.push(
        `versions.acm ${hubDeclared.versions.acm} is declared on an OCM hub: set flavor: HubFlavor.ACM, or drop versions.acm`,
      );
    this.versions = {
      ...hubDeclared.versions,
      ...(Object.keys(spokesDeclared.versions).length > 0 ? { spokes: spokesDeclared.versions } : {}),
    };
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
    this.registry = new HubRegistry<Spoke>({ hub: this, flavor: this.flavor });
    attachHubParts(
      new HubParts(
        this,
        {
          flavor: this.flavor,
          applicationSetControllerServiceAccount: this.applicationSetControllerServiceAccount,
        },
        this.registry,
      ),
    );
    this.node.addValidation({ validate: () => problems });
    hubParts(this).order.afterRender(() => checkDeclaredVersions(this));
    hubParts(this).order.afterRender(() => renderLeftoverWorks(this));
    if (problems.length > 0) return; // the install would repeat the namespace problem; validation reports it once
    const { enabled = true, ...install } = props.controller ?? {};
    if (enabled) {
      this.controller = new ControllerInstall(this, 'Controller', {
        ...install,
        argoNamespace: this.argoNamespace,
        feedbackScrape: this.feedbackScrape,
        resourceSummaries: this.resourceSummaries,
      });
    }
  }

  /** The feedback scrape type to put on works, or undefined for the default (Poll). */
  public get workFeedbackScrapeType(): FeedbackScrape | undefined {
    return this.feedbackScrape === FeedbackScrape.WATCH ? FeedbackScrape.WATCH : undefined;
  }

  /** The spokes of this hub, in declaration order (a copy). */
  public get spokes(): Spoke[] {
    return this.registry.spokes;
  }

  /** The cluster sets of this hub, declared and imported, in declaration order (a copy). */
  public get clusterSets(): IClusterSet[] {
    return this.registry.clusterSets;
  }

  /** The GitOpsClusters of this hub, in declaration order (a copy). */
  public get gitOpsClusters(): IGitOpsCluster[] {
    return this.registry.gitOpsClusters;
  }

  /**
   * The ApiObject the hub itself renders for `query` (its constructs answer for theirs: `spoke.renderedObject`,
   * `hub.controller.renderedObject`, ...): the generator ConfigMap and the applicationset-controller's Role and
   * RoleBinding (`dist/<hub>/hub/application-sets.yaml`, created with the hub's first PullApplicationSet), and
   * once the fleet rendered, the agent AppProjects, the ConfigMaps of the Applications each agent-autonomous
   * spoke should run (`{ kind: 'ConfigMap', spoke }`) and the leftover ManifestWorks of apps that stopped being
   * waved. Throws, listing the kinds it renders, when it renders no such object or more than one.
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return pickRendered(this, query, {
      what: `hub "${this.name}"`,
      kinds: ['ConfigMap', 'Role', 'RoleBinding', 'AppProject', 'ManifestWork'],
      objects: HUB_OBJECT_SCOPES.flatMap((id) => {
        const scope = this.node.tryFindChild(id);
        if (!scope) return [];
        return heldObjects(scope, (obj, ids) =>
          id === 'ExpectedApplications' ? ids[0] : id === 'LeftoverWorks' ? obj.metadata.namespace : undefined,
        );
      }),
      later:
        'its agent AppProjects, expected-Applications ConfigMaps and leftover ManifestWorks exist once the fleet renders: read them after synth',
    });
  }

  /**
   * Declares a Spoke for every cluster of `inventory` (`Inventory.fromFile('inventory/<hub>.yaml')`), under
   * the construct `Inventory`. Entries change through `options.overrides` and give way to hand-written
   * spokes through `options.exclude`. An inventory of another hub, an override or exclusion naming no
   * entry, or an entry clashing with a declared spoke is a problem reported at synth (naming both), and
   * then nothing is declared from the inventory.
   */
  public addInventory(inventory: Inventory, options: AddInventoryOptions = {}): Spoke[] {
    return addInventoryTo(this, inventory, checkProps(this, ADD_INVENTORY_OPTIONS, options));
  }
}

/**
 * The Hub `scope` belongs to, like {@link Hub.of}; the mistake it throws names `made`, the construct
 * being made in `scope`.
 */
export function hubContaining(scope: IConstruct, made?: ConstructMade): Hub {
  for (const s of [...scope.node.scopes].reverse()) {
    if (Hub.isHub(s)) return s;
  }
  throw notInsideHub(scope, made);
}
