import { Construct, type IConstruct } from 'constructs';
import { CLUSTERSET_LABEL, dnsLabelRule, labelKeyRule, labelRule, matchesSelector } from '../model/index.js';
import { ManagedClusterSet, ManagedClusterSetSpecClusterSelectorSelectorType } from '../../imports/managedclusterset-cluster.open-cluster-management.io.js';
import { ManagedClusterSetBinding as Binding } from '../../imports/managedclustersetbinding-cluster.open-cluster-management.io.js';
import { claimId, Hub, markKind } from './hub.js';
import { OutputFiles, routeOutput, stampProvenance } from './output.js';
import type { ISpoke } from './spoke.js';

/** A ManagedClusterSet of a hub. */
export interface IClusterSet extends IConstruct {
  readonly name: string;
  readonly hub: Hub;
  /** Namespaces this set is bound to (a copy). */
  readonly bindings: string[];
  /** Whether a spoke is a member of this set. */
  isMember(spoke: ISpoke): boolean;
}

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
}

/** A ManagedClusterSet and its ManagedClusterSetBindings. */
export class ClusterSet extends Construct implements IClusterSet {
  public readonly name: string;
  public readonly hub: Hub;
  /** Label selector for membership, or undefined for exclusive membership. */
  public readonly matchLabels?: Record<string, string>;
  private readonly bindingList: string[] = [];
  private readonly problems: string[] = [];

  constructor(scope: Construct, id: string, props: ClusterSetProps = {}) {
    super(scope, claimId(scope, 'ClusterSet', id));
    markKind(this, 'ClusterSet');
    this.hub = Hub.of(scope);
    this.name = id;
    this.matchLabels = props.matchLabels ? { ...props.matchLabels } : undefined;
    const nameProblem = dnsLabelRule('cluster set name', id);
    if (nameProblem) this.problems.push(nameProblem);
    for (const [key, value] of Object.entries(this.matchLabels ?? {})) {
      const keyProblem = labelKeyRule('matchLabels', key);
      if (keyProblem) this.problems.push(keyProblem);
      const valueProblem = labelRule('matchLabels', key, value);
      if (valueProblem) this.problems.push(valueProblem);
    }
    this.hub._addClusterSet(this);
    routeOutput(this, OutputFiles.CLUSTER_SETS);

    const set = new ManagedClusterSet(this, 'ManagedClusterSet', {
      metadata: { name: id },
      spec: {
        clusterSelector: this.matchLabels
          ? { selectorType: ManagedClusterSetSpecClusterSelectorSelectorType.LABEL_SELECTOR, labelSelector: { matchLabels: this.matchLabels } }
          : { selectorType: ManagedClusterSetSpecClusterSelectorSelectorType.EXCLUSIVE_CLUSTER_SET_LABEL },
      },
    });
    stampProvenance(set);
    for (const ns of props.bindings ?? [this.hub.argoNamespace]) this.bindTo(ns);
    this.node.addValidation({ validate: () => [...this.problems] });
  }

  /** Namespaces this set is bound to (a copy). */
  public get bindings(): string[] {
    return [...this.bindingList];
  }

  /** Binds the set into `namespace`. Throws when it is already bound there. */
  public bindTo(namespace: string): void {
    if (this.bindingList.includes(namespace)) {
      this.problems.push(`cluster set "${this.name}" is already bound to namespace "${namespace}": bind each namespace once`);
      return;
    }
    const problem = dnsLabelRule(`binding namespace of cluster set "${this.name}"`, namespace);
    if (problem) this.problems.push(problem);
    this.bindingList.push(namespace);
    const binding = new Binding(this, `Binding-${namespace}`, {
      metadata: { name: this.name, namespace },
      spec: { clusterSet: this.name },
    });
    stampProvenance(binding);
  }

  public isMember(spoke: ISpoke): boolean {
    if (this.matchLabels) return matchesSelector({ matchLabels: this.matchLabels }, spoke.labels);
    return spoke.labels[CLUSTERSET_LABEL] === this.name;
  }
}
