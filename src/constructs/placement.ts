import { ApiObject, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { PLACEMENT_API_VERSION } from '../model/core/keys.js';
import { withOcmGitOpsClusterTolerations } from '../model/delivery/delivery-model.js';
import { SelectorOperator, type SelectorRequirement } from '../model/core/selectors.js';
import { enumMember, type EnumValue } from '../model/core/types.js';
import {
  evaluatePlacement,
  TaintEffect,
  TolerationOperator,
  type ClusterPredicate,
  type PlacementSpec,
  type PrioritizerConfiguration,
  type Toleration,
} from '../model/placement/placement.js';
import { dnsLabelRule } from '../model/validation/rules.js';
import { Hub, hubContaining, HubFlavor } from './hub.js';
import { hubParts } from './_hub-parts.js';
import { claimId, kindOf, markKind, nameFromId } from './_ids.js';
import type { IClusterSet, IPlacement, ISpoke } from './interfaces.js';
import { apiObjectFrom } from './_output.js';
import { pickRendered } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';
import { OutputFiles, routeOutput } from './output.js';
import {
  checkProps,
  clusterSetRef,
  listOf,
  num,
  propsOf,
  ref,
  required,
  shape,
  str,
  stringMap,
} from './_props-check.js';

export type { IPlacement } from './interfaces.js';
export { SelectorOperator, TaintEffect, TolerationOperator };

/** An existing Placement, as `Placement.fromPlacementName` sees it. */
export interface PlacementImportOptions {
  /**
   * Namespace of the Placement.
   * @default - the hub's Argo CD namespace
   */
  readonly namespace?: string;
}

/** The runtime type of every {@link PlacementImportOptions} key (see props-check.ts). */
const PLACEMENT_IMPORT_OPTIONS = propsOf<PlacementImportOptions>('Placement.fromPlacementName options', {
  namespace: str(),
});

/**
 * A Placement that exists on the hub ({@link Placement.fromPlacementName}): renders nothing, and synth
 * cannot know what it selects.
 */
class ImportedPlacement extends Construct implements IPlacement {
  public readonly name: string;
  public readonly namespace: string;
  public readonly hub: Hub;
  public readonly evaluatedOffline = false;

  constructor(scope: Construct, id: string, hub: Hub, name: string, options: PlacementImportOptions) {
    super(scope, id);
    markKind(this, 'Placement');
    options = checkProps(this, PLACEMENT_IMPORT_OPTIONS, options);
    this.hub = hub;
    this.name = name;
    const namespace = (this.namespace = options.namespace ?? hub.argoNamespace);
    const problems = [dnsLabelRule('placement name', name), dnsLabelRule('placement namespace', namespace)].filter(
      (p): p is string => !!p,
    );
    this.node.addValidation({
      validate: () => {
        const same = hub.node
          .findAll()
          .filter(
            (c) =>
              kindOf(c) === 'Placement' &&
              (c as Partial<IPlacement>).name === name &&
              (c as Partial<IPlacement>).namespace === namespace,
          );
        // A declared Placement is evaluated offline; an import (of this copy of the library or another) is not.
        const declared = same.find((c) => (c as Partial<IPlacement>).evaluatedOffline !== false);
        if (declared)
          return [
            ...problems,
            `placement "${namespace}/${name}" is imported with Placement.fromPlacementName, but the fleet also declares it (${declared.node.path}): use the declared Placement`,
          ];
        if (same[0] !== this)
          return [
            ...problems,
            `placement "${namespace}/${name}" is already imported (${same[0].node.path}): import each placement once and reuse the result`,
          ];
        return problems;
      },
    });
  }

  public selectedSpokes(): ISpoke[] {
    throw new Error(
      `${this.node.path}: placement "${this.namespace}/${this.name}" is imported (Placement.fromPlacementName), so synth cannot evaluate it offline: deliver through it with PullApplicationSet, or give PullApplication spokes`,
    );
  }
}

/** One `requiredClusterSelector`: every given selector must match (predicates are ORed). */
export interface ClusterPredicateProps {
  /**
   * ManagedCluster labels that must all be present with these values.
   * @default {}
   */
  readonly labels?: Record<string, string>;
  /**
   * ManagedCluster label expressions, for example
   * `{ key: 'region', operator: SelectorOperator.IN, values: ['us-east-1'] }`; all must hold.
   * @default []
   */
  readonly labelExpressions?: readonly SelectorRequirement[];
  /**
   * ClusterClaim expressions, written as label expressions over the cluster's claims; all must hold.
   * @default []
   */
  readonly claimExpressions?: readonly SelectorRequirement[];
}

/** How prioritizer scores combine. */
export enum PrioritizerMode {
  /** Configured prioritizers add to the default ones. */
  ADDITIVE = 'Additive',
  /** Only the configured prioritizers count. */
  EXACT = 'Exact',
}

/** A prioritizer: a built-in score or an add-on score, with a weight. */
export class Prioritizer {
  /** A built-in prioritizer such as `Balance`, `Steady`, `ResourceAllocatableCPU`, `ResourceAllocatableMemory`. */
  public static builtIn(name: string, weight = 1): Prioritizer {
    return new Prioritizer({ scoreCoordinate: { type: 'BuiltIn', builtIn: name }, weight });
  }

  /** A score published by an add-on through AddOnPlacementScore. */
  public static addOn(resourceName: string, scoreName: string, weight = 1): Prioritizer {
    return new Prioritizer({ scoreCoordinate: { type: 'AddOn', addOn: { resourceName, scoreName } }, weight });
  }

  private constructor(private readonly config: PrioritizerConfiguration) {}

  /** The prioritizer as it appears in `spec.prioritizerPolicy.configurations` (a copy). */
  public get configuration(): PrioritizerConfiguration {
    return JSON.parse(JSON.stringify(this.config)) as PrioritizerConfiguration;
  }
}

/** Settings of a {@link Placement}. */
export interface PlacementProps {
  /**
   * Cluster sets to select from; each must be bound to the Placement's namespace.
   * @default - every cluster set bound to the namespace
   */
  readonly clusterSets?: readonly IClusterSet[];
  /**
   * Predicates; a cluster is selected when any predicate matches.
   * @default - every cluster of the sets
   */
  readonly predicates?: readonly ClusterPredicateProps[];
  /**
   * How many clusters to select.
   * @default - all matching clusters
   */
  readonly numberOfClusters?: number;
  /**
   * Tolerations for ManagedCluster taints.
   * @default []
   */
  readonly tolerations?: readonly Toleration[];
  /**
   * Prioritizers, used with `numberOfClusters`.
   * @default - OCM's defaults
   */
  readonly prioritizers?: readonly Prioritizer[];
  /**
   * Prioritizer mode.
   * @default PrioritizerMode.ADDITIVE
   */
  readonly prioritizerMode?: EnumValue<PrioritizerMode>;
  /**
   * Namespace of the Placement. ApplicationSets only read placement decisions from their own
   * namespace, so keep the default for PullApplicationSet.
   * @default - the hub's Argo CD namespace
   */
  readonly namespace?: string;
}

const selectorRequirements = listOf(
  shape<SelectorRequirement>('selector requirement', {
    key: required(str()),
    operator: required(str<SelectorRequirement['operator']>()),
    values: listOf(str(), "['us-east-1']"),
  }),
  "[{ key: 'region', operator: SelectorOperator.IN, values: ['us-east-1'] }]",
);

/** The runtime type of every {@link PlacementProps} key (see props-check.ts). */
const PLACEMENT_PROPS = propsOf<PlacementProps>('Placement', {
  clusterSets: listOf(clusterSetRef<IClusterSet>(), '[prod]'),
  predicates: listOf(
    shape<ClusterPredicateProps>('predicate', {
      labels: stringMap('label', "{ region: 'us-east-1' }"),
      labelExpressions: selectorRequirements,
      claimExpressions: selectorRequirements,
    }),
    "[{ labels: { region: 'us-east-1' } }]",
  ),
  numberOfClusters: num('a whole number'),
  tolerations: listOf(
    shape<Toleration>('toleration', {
      key: str(),
      operator: str<NonNullable<Toleration['operator']>>(),
      value: str(),
      effect: str<NonNullable<Toleration['effect']>>(),
      tolerationSeconds: num(),
    }),
    "[{ key: 'gpu', operator: TolerationOperator.EXISTS }]",
  ),
  prioritizers: listOf(
    ref<Prioritizer>(
      (v) =>
        v instanceof Prioritizer ||
        (typeof v === 'object' && v !== null && typeof (v as { configuration?: unknown }).configuration === 'object'),
      'a Prioritizer',
      "use Prioritizer.builtIn('Steady') or Prioritizer.addOn(resource, score)",
    ),
    "[Prioritizer.builtIn('Steady')]",
  ),
  prioritizerMode: str<PrioritizerMode>(),
  namespace: str(),
});

/**
 * An OCM Placement (cluster.open-cluster-management.io/v1beta1). Synth also evaluates it offline
 * against the hub's spokes to deliver static apps and bootstrap namespaces. `ApiObject.of(placement)`
 * is the rendered Placement.
 */
export class Placement extends Construct implements IPlacement, IRendersObjects {
  /**
   * A Placement that already exists on the hub (made by hand or by another tool): renders nothing.
   * PullApplicationSet delivers through it (its decisions choose the spokes at runtime); synth cannot
   * evaluate it, so a PullApplication given it is a problem at synth, and the spokes it selects get no
   * namespace or RBAC for the app in their bootstrap. Import each placement once and reuse the result:
   * a second import of the same placement, or one the fleet also declares, is a problem at synth.
   * @param scope the hub, or any construct inside it: the hub the placement lives on
   * @param id the construct id of the import under `scope` (unique there, as every construct id)
   * @param name the name of the existing Placement
   * @param options where the Placement is
   */
  public static fromPlacementName(
    scope: Construct,
    id: string,
    name: string,
    options: PlacementImportOptions = {},
  ): IPlacement {
    return new ImportedPlacement(scope, id, hubContaining(scope, { kind: 'Placement', id }), name, options);
  }

  /** The Placement name (the `id` given to the constructor). */
  public readonly name: string;
  /** The Placement namespace: `props.namespace`, else the hub's Argo CD namespace. */
  public readonly namespace: string;
  /** The hub the Placement lives on. */
  public readonly hub: Hub;
  /** Always true: synth evaluates a declared Placement against the hub's spokes. */
  public readonly evaluatedOffline = true;
  private readonly renderedSpec: PlacementSpec;
  private readonly rendered: ApiObject;
  private readonly clusterSetRefs: readonly IClusterSet[];
  private readonly problems: string[] = [];
  private readonly numberOfClusters?: number;

  constructor(scope: Construct, id: string, props: PlacementProps = {}) {
    super(scope, claimId(scope, 'Placement', id));
    markKind(this, 'Placement');
    props = checkProps(this, PLACEMENT_PROPS, props);
    this.hub = hubContaining(scope, { kind: 'Placement', id });
    this.name = nameFromId(this, id);
    this.namespace = props.namespace ?? this.hub.argoNamespace;
    if (
      props.numberOfClusters !== undefined &&
      !(Number.isInteger(props.numberOfClusters) && props.numberOfClusters >= 0)
    ) {
      this.problems.push(
        `numberOfClusters ${props.numberOfClusters} must be a whole number >= 0: use 1 or more, or leave it out to select every matching cluster`,
      );
    }
    this.numberOfClusters = props.numberOfClusters;
    this.clusterSetRefs = [...(props.clusterSets ?? [])];
    const predicates: ClusterPredicate[] = (props.predicates ?? []).map((p) => {
      const labelSelector = {
        ...(p.labels ? { matchLabels: { ...p.labels } } : {}),
        ...(p.labelExpressions?.length ? { matchExpressions: p.labelExpressions.map((e) => ({ ...e })) } : {}),
      };
      return {
        requiredClusterSelector: {
          ...(Object.keys(labelSelector).length ? { labelSelector } : {}),
          ...(p.claimExpressions?.length
            ? { claimSelector: { matchExpressions: p.claimExpressions.map((e) => ({ ...e })) } }
            : {}),
        },
      };
    });
    const spec: PlacementSpec = {};
    if (this.clusterSetRefs.length) spec.clusterSets = this.clusterSetRefs.map((s) => s.name);
    if (props.numberOfClusters !== undefined) spec.numberOfClusters = props.numberOfClusters;
    if (predicates.length) spec.predicates = predicates;
    if (props.tolerations?.length) spec.tolerations = props.tolerations.map((t) => ({ ...t }));
    if (props.prioritizers?.length || props.prioritizerMode) {
      spec.prioritizerPolicy = {
        mode: enumMember(props.prioritizerMode ?? PrioritizerMode.ADDITIVE),
        ...(props.prioritizers?.length ? { configurations: props.prioritizers.map((p) => p.configuration) } : {}),
      };
    }
    this.renderedSpec = spec;

    for (const problem of [
      dnsLabelRule('placement name', this.name),
      dnsLabelRule('placement namespace', this.namespace),
    ]) {
      if (problem) this.problems.push(problem);
    }
    this.node.addValidation({ validate: () => [...this.problems, ...this.bindingProblems()] });

    routeOutput(this, OutputFiles.PLACEMENTS);
    this.rendered = apiObjectFrom(this, 'Placement', {
      apiVersion: PLACEMENT_API_VERSION,
      kind: 'Placement',
      metadata: { name: this.name, namespace: this.namespace },
      spec: JSON.parse(JSON.stringify(spec)) as object,
    });
    this.node.defaultChild = this.rendered;
    hubParts(this.hub).order.register(this);
  }

  /**
   * The spec as it is rendered and evaluated offline: when an OCM GitOpsCluster reads this Placement, with
   * the tolerations its controller adds (so the hub Argo CD and that controller do not rewrite the
   * Placement against each other, and a spoke that goes unreachable keeps its delivery model).
   */
  private convergedSpec(): PlacementSpec {
    const gitOpsCluster = hubParts(this.hub).registry.gitOpsClusterOfPlacement(this);
    if (gitOpsCluster?.flavor !== HubFlavor.OCM) return this.renderedSpec;
    return { ...this.renderedSpec, tolerations: withOcmGitOpsClusterTolerations(this.renderedSpec.tolerations ?? []) };
  }

  /** @internal renders what the whole hub decides: the tolerations an OCM GitOpsCluster adds. */
  public _render(): void {
    const tolerations = this.convergedSpec().tolerations;
    if (tolerations && tolerations.length !== (this.renderedSpec.tolerations?.length ?? 0))
      this.rendered.addJsonPatch(
        JsonPatch.add('/spec/tolerations', JSON.parse(JSON.stringify(tolerations)) as unknown),
      );
  }

  /**
   * The rendered spec (a copy: changing it changes neither the Placement nor what synth selects).
   * @deprecated its type is the generated wire type; the Placement is `renderedObject({ kind: 'Placement' })`
   * (`toJson().spec` once the fleet rendered: before, it lacks the tolerations an OCM GitOpsCluster adds).
   */
  public get spec(): PlacementSpec {
    return JSON.parse(JSON.stringify(this.convergedSpec())) as PlacementSpec;
  }

  /**
   * The ApiObject the placement renders: `{ kind: 'Placement' }` (`dist/<hub>/hub/placements.yaml`), also
   * `ApiObject.of(placement)`, created with the placement. Throws for any other kind.
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return pickRendered(this, query, {
      what: `placement "${this.namespace}/${this.name}"`,
      kinds: ['Placement'],
      objects: [{ obj: this.rendered }],
    });
  }

  /** @internal legal but almost certainly wrong (shown by synth and validate; errors with --strict). */
  public _warnings(): string[] {
    if (this.numberOfClusters === 0)
      return [
        'numberOfClusters is 0, so this placement selects no cluster and its apps go nowhere: raise it, or leave it out to select every matching cluster',
      ];
    const steady = this.renderedSpec.prioritizerPolicy?.configurations?.find(
      (c) => (c.scoreCoordinate.type ?? 'BuiltIn') === 'BuiltIn' && c.scoreCoordinate.builtIn === 'Steady',
    );
    if (this.numberOfClusters !== undefined && (steady?.weight ?? 1) < 0)
      return [
        `Prioritizer.builtIn('Steady') has weight ${steady?.weight}: OCM re-schedules the placement whenever its decisions change, and a negative Steady weight then ranks the clusters just chosen last, so its decisions keep moving: use a weight of 0 or more`,
      ];
    if (this.bindingProblems().length > 0) return [];
    const spokes = this.hub.spokes.length;
    if (this.selectedSpokes().length === 0) {
      return [
        `selects none of the hub's ${spokes} spoke${spokes === 1 ? '' : 's'} (evaluated offline): check its cluster sets, predicates and tolerations against the spokes' labels and taints`,
      ];
    }
    return [];
  }

  private bindingProblems(): string[] {
    const problems: string[] = [];
    for (const set of this.clusterSetRefs) {
      if (set.hub !== this.hub) {
        problems.push(
          `cluster set "${set.name}" (${set.node.path}) is not a cluster set of hub "${this.hub.name}": use a ClusterSet declared on this hub`,
        );
      } else if (!set.bindings.includes(this.namespace)) {
        problems.push(
          `cluster set "${set.name}" is not bound to namespace "${this.namespace}", so this placement would select nothing from it: add "${this.namespace}" to the set's bindings (clusterSet.bindTo('${this.namespace}'))`,
        );
      }
    }
    return problems;
  }

  /** Names of the cluster sets bound to this Placement's namespace. */
  private boundSets(): string[] {
    return this.hub.clusterSets.filter((s) => s.bindings.includes(this.namespace)).map((s) => s.name);
  }

  /** The spokes this Placement selects from the hub's declared spokes, evaluated offline (sorted by name). */
  public selectedSpokes(): ISpoke[] {
    const spokes = this.hub.spokes;
    const names = new Set(
      evaluatePlacement(
        this.convergedSpec(),
        spokes.map((s) => s.inventoryEntry()),
        this.boundSets(),
      ),
    );
    return spokes.filter((s) => names.has(s.name)).sort((a, b) => (a.name < b.name ? -1 : 1));
  }
}
