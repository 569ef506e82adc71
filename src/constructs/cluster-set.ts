import { ApiObject } from 'cdk8s';
import { Construct, type IConstruct } from 'constructs';
import { CLUSTERSET_LABEL } from '../model/core/keys.js';
import { matchesSelector } from '../model/core/selectors.js';
import { labelKeyRule } from '../model/validation/object-rules.js';
import { dnsLabelRule, labelRule } from '../model/validation/rules.js';
import {
  ManagedClusterSet,
  ManagedClusterSetSpecClusterSelectorSelectorType,
} from '../../imports/managedclusterset-cluster.open-cluster-management.io.js';
import { ManagedClusterSetBinding as Binding } from '../../imports/managedclustersetbinding-cluster.open-cluster-management.io.js';
import { Hub, hubContaining } from './hub.js';
import { hubParts } from './_hub-parts.js';
import { claimId, kindOf, markKind, nameFromId } from './_ids.js';
import { assertNotRendered } from './_render-order.js';
import { heldObjects, pickRendered, renderedObjectCall } from './_hatch.js';
import type { IRendersObjects, RenderedObjectQuery } from './rendered.js';
import type { IClusterSet, ISpoke } from './interfaces.js';
import { stampProvenance } from './_output.js';
import { OutputFiles, routeOutput } from './output.js';
import { checkProps, listOf, propsOf, str, stringMap } from './_props-check.js';
import { SPOKE_VERSIONS_CHECK, type SpokeVersions } from './spoke.js';
import { normalizeVersions } from '../model/validation/versions.js';

export type { IClusterSet } from './interfaces.js';

/** The cluster set OCM creates that holds every ManagedCluster (an empty label selector). */
export const GLOBAL_CLUSTER_SET = 'global';
/** The cluster set OCM creates for clusters without an exclusive set of their own. */
export const DEFAULT_CLUSTER_SET = 'default';

/** An existing ManagedClusterSet, as `ClusterSet.fromClusterSetName` sees it. */
export interface ClusterSetImportOptions {
  /**
   * The set selects its members by these ManagedCluster labels.
   * @default - `global` selects every cluster; `default` the clusters without an exclusive set or
   * labelled with it; any other set the clusters labelled `cluster.open-cluster-management.io/clusterset: <name>`
   */
  readonly matchLabels?: Record<string, string>;
  /**
   * Namespaces where a ManagedClusterSetBinding for the set already exists on the hub (rendered by
   * nothing here). Placements in these namespaces may use the set. `bindTo` adds bindings the fleet renders.
   * @default []
   */
  readonly existingBindings?: readonly string[];
  /**
   * What the set's member spokes run (spoke Argo CD, klusterlet, Kubernetes or OpenShift), unless a spoke
   * declares otherwise (`versions`); it overrides the hub's `versions.spokes`. A spoke in two sets that
   * declare different releases of one component is a problem at synth: declare it on the spoke.
   * @default - undeclared: the spokes' own or the hub's declarations apply
   */
  readonly spokeVersions?: SpokeVersions;
}

/** The runtime type of every {@link ClusterSetImportOptions} key (see props-check.ts). */
const CLUSTER_SET_IMPORT_OPTIONS = propsOf<ClusterSetImportOptions>('ClusterSet.fromClusterSetName options', {
  matchLabels: stringMap('label', "{ gpu: 'true' }"),
  existingBindings: listOf(str('a namespace'), "['argocd']"),
  spokeVersions: SPOKE_VERSIONS_CHECK,
});

/** The ManagedClusterSetBinding of `set` into `namespace`, with its problems pushed to `problems`. */
function renderBinding(
  set: IConstruct & { readonly name: string },
  namespace: string,
  bound: string[],
  problems: string[],
): void {
  assertNotRendered(set, `bindTo(${JSON.stringify(namespace)}) called`);
  if (bound.includes(namespace)) {
    problems.push(`cluster set "${set.name}" is already bound to namespace "${namespace}": bind each namespace once`);
    return;
  }
  const problem = dnsLabelRule(`binding namespace of cluster set "${set.name}"`, namespace);
  if (problem) problems.push(problem);
  bound.push(namespace);
  const binding = new Binding(set, `Binding-${namespace}`, {
    metadata: { name: set.name, namespace },
    spec: { clusterSet: set.name },
  });
  stampProvenance(binding);
}

const imports = new WeakSet<IConstruct>();

/**
 * A ManagedClusterSet that exists on the hub ({@link ClusterSet.fromClusterSetName}): renders no
 * ManagedClusterSet, only the bindings added with `bindTo`.
 */
class ImportedClusterSet extends Construct implements IClusterSet, IRendersObjects {
  public readonly name: string;
  public readonly hub: Hub;
  private readonly labelSelector?: Record<string, string>;
  private readonly bindingList: string[] = [];
  private readonly existing: string[];
  private readonly problems: string[] = [];
  /** What member spokes run (`options.spokeVersions`), canonical. */
  public readonly spokeVersions?: SpokeVersions;

  constructor(scope: Construct, id: string, hub: Hub, name: string, options: ClusterSetImportOptions) {
    super(scope, id);
    markKind(this, 'ClusterSet');
    imports.add(this);
    options = checkProps(this, CLUSTER_SET_IMPORT_OPTIONS, options);
    this.hub = hub;
    this.name = name;
    this.labelSelector = options.matchLabels
      ? { ...options.matchLabels }
      : name === GLOBAL_CLUSTER_SET
        ? {}
        : undefined;
    this.existing = [...(options.existingBindings ?? [])];
    const nameProblem = dnsLabelRule('cluster set name', name);
    if (nameProblem) this.problems.push(nameProblem);
    if (options.spokeVersions) {
      const declared = normalizeVersions('spokeVersions', options.spokeVersions);
      this.problems.push(...declared.problems);
      this.spokeVersions = declared.versions;
    }
    for (const ns of this.existing) {
      const problem = dnsLabelRule(`existing binding namespace of cluster set "${name}"`, ns);
      if (problem) this.problems.push(problem);
    }
    this.problems.push(...selectorProblems(this.labelSelector));
    hubParts(hub).registry.addClusterSet(this);
    routeOutput(this, OutputFiles.CLUSTER_SETS);
    this.node.addValidation({
      validate: () => {
        const same = hub.node
          .findAll()
          .filter((c) => kindOf(c) === 'ClusterSet' && (c as Partial<IClusterSet>).name === name);
        const declared = same.find((c) => !imports.has(c));
        if (declared)
          return [
            ...this.problems,
            `cluster set "${name}" is imported with ClusterSet.fromClusterSetName, but the fleet also declares it (${declared.node.path}): use the declared ClusterSet`,
          ];
        if (same[0] !== this)
          return [
            ...this.problems,
            `cluster set "${name}" is already imported (${same[0].node.path}): import each cluster set once and reuse the result`,
          ];
        return [...this.problems];
      },
    });
  }

  /** The label selector of its members (a copy), or undefined when the set is exclusive. */
  public get matchLabels(): Record<string, string> | undefined {
    return this.labelSelector ? { ...this.labelSelector } : undefined;
  }

  public get bindings(): string[] {
    return [...this.existing, ...this.bindingList];
  }

  public bindTo(namespace: string): void {
    if (this.existing.includes(namespace)) {
      this.problems.push(
        `cluster set "${this.name}" already has a binding in namespace "${namespace}" (existingBindings): do not bind it again`,
      );
      return;
    }
    renderBinding(this, namespace, this.bindingList, this.problems);
  }

  /** The ManagedClusterSetBinding the fleet renders into a namespace: `{ kind: 'ManagedClusterSetBinding', namespace }`. */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return clusterSetObject(this, query, ['ManagedClusterSetBinding']);
  }

  /**
   * Escape hatch: the ManagedClusterSetBinding the fleet renders into `namespace`.
   * @deprecated use `renderedObject({ kind: 'ManagedClusterSetBinding', namespace })`, the same object.
   */
  public bindingFor(namespace: string): ApiObject {
    return this.renderedObject({ kind: 'ManagedClusterSetBinding', namespace });
  }

  public isMember(spoke: ISpoke): boolean {
    const labels = spoke.labels;
    if (this.labelSelector) return matchesSelector({ matchLabels: this.labelSelector }, labels);
    if (this.name === DEFAULT_CLUSTER_SET)
      return labels[CLUSTERSET_LABEL] === undefined || labels[CLUSTERSET_LABEL] === DEFAULT_CLUSTER_SET;
    return labels[CLUSTERSET_LABEL] === this.name;
  }
}

function selectorProblems(matchLabels: Record<string, string> | undefined): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(matchLabels ?? {})) {
    const keyProblem = labelKeyRule('matchLabels', key);
    if (keyProblem) problems.push(keyProblem);
    const valueProblem = labelRule('matchLabels', key, value);
    if (valueProblem) problems.push(valueProblem);
  }
  return problems;
}

/**
 * `renderedObject(query)` of a cluster set: its ManagedClusterSet (a declared set) or one of its
 * ManagedClusterSetBindings; a binding asked for by a namespace the set is not bound to says how to bind it.
 */
function clusterSetObject(
  set: IConstruct & { readonly name: string },
  query: RenderedObjectQuery,
  kinds: readonly string[],
): ApiObject {
  return pickRendered(set, query, {
    what: `cluster set "${set.name}"`,
    kinds,
    objects: heldObjects(set),
    missing: ({ kind, namespace }) =>
      kind === 'ManagedClusterSetBinding' && namespace !== undefined && !set.node.tryFindChild(`Binding-${namespace}`)
        ? `${query.name === undefined ? '' : `${renderedObjectCall(query)}: `}cluster set "${set.name}" renders no binding into namespace "${namespace}" (rendered: ${JSON.stringify(set.node.children.filter((c) => c.node.id.startsWith('Binding-')).map((c) => c.node.id.slice('Binding-'.length)))}): bind it with bindTo('${namespace}')`
        : undefined,
  });
}

/** Settings of a {@link ClusterSet}. */
export interface ClusterSetProps {
  /**
   * Select members by ManagedCluster labels instead of the exclusive
   * `cluster.open-cluster-management.io/clusterset` label. A spoke may belong to many label-selected
   * sets but to only one exclusive set (its `clusterSet` prop).
   * @default - exclusive membership: the spokes whose `clusterSet` is this set
   */
  readonly matchLabels?: Record<string, string>;
  /**
   * Namespaces to bind the set into (ManagedClusterSetBinding). Placements only see sets bound to
   * their namespace.
   * @default - the hub's Argo CD namespace
   */
  readonly bindings?: readonly string[];
  /**
   * What the set's member spokes run (spoke Argo CD, klusterlet, Kubernetes or OpenShift), unless a spoke
   * declares otherwise (`versions`); it overrides the hub's `versions.spokes`. A spoke in two sets that
   * declare different releases of one component is a problem at synth: declare it on the spoke.
   * @default - undeclared: the spokes' own or the hub's declarations apply
   */
  readonly spokeVersions?: SpokeVersions;
}

/** The runtime type of every {@link ClusterSetProps} key (see props-check.ts). */
const CLUSTER_SET_PROPS = propsOf<ClusterSetProps>('ClusterSet', {
  matchLabels: stringMap('label', "{ gpu: 'true' }"),
  bindings: listOf(str('a namespace'), "['argocd', 'team-a']"),
  spokeVersions: SPOKE_VERSIONS_CHECK,
});

/**
 * A ManagedClusterSet and its ManagedClusterSetBindings. `ApiObject.of(clusterSet)` is the
 * ManagedClusterSet; {@link bindingFor} returns a binding.
 */
export class ClusterSet extends Construct implements IClusterSet, IRendersObjects {
  /**
   * A ManagedClusterSet that already exists on the hub, such as OCM's `default` and `global`: renders no
   * ManagedClusterSet, but `bindTo(namespace)` still renders a ManagedClusterSetBinding, under the
   * import's construct path. Placements evaluate its membership offline from `options.matchLabels` (see
   * {@link ClusterSetImportOptions}). Import each set once and reuse the result: a second import of the
   * same name, or one the fleet also declares, is a problem at synth.
   * @param scope the hub, or any construct inside it: the hub the set lives on
   * @param id the construct id of the import under `scope` (unique there, as every construct id)
   * @param name the name of the existing ManagedClusterSet
   * @param options how the set selects its members and where it is already bound
   */
  public static fromClusterSetName(
    scope: Construct,
    id: string,
    name: string,
    options: ClusterSetImportOptions = {},
  ): IClusterSet {
    return new ImportedClusterSet(scope, id, hubContaining(scope, { kind: 'ClusterSet', id }), name, options);
  }

  /** The ManagedClusterSet name (the `id` given to the constructor). */
  public readonly name: string;
  /** The hub the set lives on. */
  public readonly hub: Hub;
  /** What member spokes run (`props.spokeVersions`), canonical; undefined when undeclared. */
  public readonly spokeVersions?: SpokeVersions;
  private readonly labelSelector?: Record<string, string>;
  private readonly bindingList: string[] = [];
  private readonly problems: string[] = [];

  constructor(scope: Construct, id: string, props: ClusterSetProps = {}) {
    super(scope, claimId(scope, 'ClusterSet', id));
    markKind(this, 'ClusterSet');
    props = checkProps(this, CLUSTER_SET_PROPS, props);
    this.hub = hubContaining(scope, { kind: 'ClusterSet', id });
    this.name = nameFromId(this, id);
    this.labelSelector = props.matchLabels ? { ...props.matchLabels } : undefined;
    const nameProblem = dnsLabelRule('cluster set name', this.name);
    if (nameProblem) this.problems.push(nameProblem);
    if (props.spokeVersions) {
      const declared = normalizeVersions('spokeVersions', props.spokeVersions);
      this.problems.push(...declared.problems);
      this.spokeVersions = declared.versions;
    }
    this.problems.push(...selectorProblems(this.labelSelector));
    hubParts(this.hub).registry.addClusterSet(this);
    routeOutput(this, OutputFiles.CLUSTER_SETS);

    const set = new ManagedClusterSet(this, 'ManagedClusterSet', {
      metadata: { name: this.name },
      spec: {
        clusterSelector: this.labelSelector
          ? {
              selectorType: ManagedClusterSetSpecClusterSelectorSelectorType.LABEL_SELECTOR,
              labelSelector: { matchLabels: { ...this.labelSelector } },
            }
          : { selectorType: ManagedClusterSetSpecClusterSelectorSelectorType.EXCLUSIVE_CLUSTER_SET_LABEL },
      },
    });
    stampProvenance(set);
    this.node.defaultChild = set;
    for (const ns of props.bindings ?? [this.hub.argoNamespace]) this.bindTo(ns);
    this.node.addValidation({ validate: () => [...this.problems] });
  }

  /** Label selector for membership (a copy), or undefined for exclusive membership. */
  public get matchLabels(): Record<string, string> | undefined {
    return this.labelSelector ? { ...this.labelSelector } : undefined;
  }

  /** Namespaces this set is bound to (a copy). */
  public get bindings(): string[] {
    return [...this.bindingList];
  }

  /** Binds the set into `namespace`. Binding a namespace twice is a problem reported at synth. */
  public bindTo(namespace: string): void {
    renderBinding(this, namespace, this.bindingList, this.problems);
  }

  /**
   * The ApiObject the set renders for `query`: `{ kind: 'ManagedClusterSet' }` (also `ApiObject.of(set)`),
   * or `{ kind: 'ManagedClusterSetBinding', namespace }`, created by `bindTo` (so ask after binding).
   * Throws when the set renders no such object (a namespace it is not bound to), or more than one (give
   * `namespace`).
   */
  public renderedObject(query: RenderedObjectQuery): ApiObject {
    return clusterSetObject(this, query, ['ManagedClusterSet', 'ManagedClusterSetBinding']);
  }

  /**
   * Escape hatch: the ManagedClusterSetBinding into `namespace`. Throws when the set is not bound there.
   * @deprecated use `renderedObject({ kind: 'ManagedClusterSetBinding', namespace })`, the same object.
   */
  public bindingFor(namespace: string): ApiObject {
    return this.renderedObject({ kind: 'ManagedClusterSetBinding', namespace });
  }

  /** Whether a spoke is a member: its labels match `matchLabels`, or it carries this set's exclusive label. */
  public isMember(spoke: ISpoke): boolean {
    if (this.labelSelector) return matchesSelector({ matchLabels: this.labelSelector }, spoke.labels);
    return spoke.labels[CLUSTERSET_LABEL] === this.name;
  }
}
