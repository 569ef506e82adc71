/**
 * The blank Argo CD cluster Secret that makes a ManagedCluster visible to the ApplicationSet
 * clusterDecisionResource generator. The hub never contacts the server it names and the Secret never
 * holds credentials: no `config`, no token, no TLS material.
 */
import { ARGOCD_SECRET_TYPE_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, PLACEMENT_LABEL } from '../core/keys.js';
import { fitName, labelValueProblem } from '../core/names.js';
import { sortKeys } from '../core/records.js';
import type { KubeObject } from '../core/types.js';
import { applicationSetPlacements } from './appset.js';
import { isPullApplicationSet } from './classification.js';
import { mirroredLabelKey, SECRET_CLUSTER_LABEL, spokeLabelsRead, unmirroredLabelKey } from './per-spoke.js';

export interface ClusterSecret extends KubeObject {
  type: 'Opaque';
  stringData: { name: string; server: string };
}

/** Placeholder API server for a cluster; never dialled by the hub. */
export function placeholderServer(cluster: string): string {
  return `https://${cluster}-control-plane:6443`;
}

/** Name of the cluster Secret for `cluster` (fits 253 characters and stays stable). */
export function clusterSecretName(cluster: string): string {
  return fitName(`${cluster}-cluster-secret`, 253);
}

/** Keys a cluster Secret may carry; anything else (config, bearerToken, tls…) is refused. */
export const CLUSTER_SECRET_KEYS: readonly string[] = ['name', 'server'];

/**
 * The blank cluster Secret for `cluster` in the Argo CD namespace. `extraLabels` carries provenance
 * (who created it); the secret-type label always wins.
 */
export function buildClusterSecret(
  cluster: string,
  argoNamespace: string,
  extraLabels: Record<string, string> = {},
): ClusterSecret {
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, ...extraLabels, [ARGOCD_SECRET_TYPE_LABEL]: 'cluster' };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: clusterSecretName(cluster),
      namespace: argoNamespace,
      labels: sortKeys(labels),
    },
    type: 'Opaque',
    stringData: { name: cluster, server: placeholderServer(cluster) },
  };
}

// ----- spoke-label mirrors on the cluster Secrets the controller owns -----

/** What decides the spoke-label mirrors of one cluster Secret the controller owns. */
export interface SpokeLabelMirrorInput {
  /** The cluster the Secret registers. */
  readonly cluster: string;
  /** The Secret's labels now. */
  readonly secretLabels: Readonly<Record<string, string>>;
  /** The live ManagedCluster's labels. */
  readonly clusterLabels: Readonly<Record<string, string>>;
  /** ManagedCluster label keys that any pull ApplicationSet's template reads (`SpokeParam.label`). */
  readonly readKeys: readonly string[];
  /**
   * Keys read by the pull ApplicationSets whose Placement decides this cluster; undefined when no ApplicationSet
   * that reads spoke labels decides it.
   */
  readonly requiredKeys?: readonly string[];
}

/** The spoke-label mirrors one controller-owned cluster Secret should carry, and why. */
export interface SpokeLabelMirror {
  /** Every label the Secret should carry: its own labels with the mirrors and the cluster label brought in line. */
  readonly labels: Record<string, string>;
  /** The JSON merge patch of `metadata.labels` (`null` removes a label); undefined when the labels are right. */
  readonly patch?: Record<string, string | null>;
  /** Whether the Secret carries `pullfleet.io/cluster`, which the matrix's cluster generator selects it by. */
  readonly selectable: boolean;
  /** Keys whose mirror keeps its last value: the ManagedCluster lost the label while the Secret was selectable. */
  readonly held: readonly string[];
  /** Keys an ApplicationSet deciding the cluster reads that the ManagedCluster lacks, with no mirror to keep. */
  readonly missing: readonly string[];
  /** Why the Secret can never be selected (the cluster name is no label value), or undefined. */
  readonly problem?: string;
}

/** Whether a cluster Secret label is one the spoke-label mirrors manage: a mirror, or `pullfleet.io/cluster`. */
export function isSpokeLabelMirrorKey(key: string): boolean {
  return key === SECRET_CLUSTER_LABEL || (key.includes('/') && unmirroredLabelKey(key) !== undefined);
}

/**
 * The spoke-label mirrors of a cluster Secret the controller owns, from the live ManagedCluster (pure; see
 * docs/concepts/per-spoke-values.md). Each key a pull ApplicationSet reads is mirrored from the ManagedCluster's
 * label. The Secret becomes selectable (`pullfleet.io/cluster`) once an ApplicationSet that reads spoke labels
 * decides the cluster and the cluster has every key those ApplicationSets read, and then stays selectable (taking
 * the label away would make the ApplicationSet delete the cluster's Applications). A label the ManagedCluster loses
 * while the Secret is selectable keeps its last mirrored value (removing it would render the `{{...}}` text into
 * the Applications). Mirrors of keys no ApplicationSet reads are removed; no other label is touched.
 */
export function mirrorSpokeLabels(input: SpokeLabelMirrorInput): SpokeLabelMirror {
  const { cluster, secretLabels, clusterLabels } = input;
  const wasSelectable = secretLabels[SECRET_CLUSTER_LABEL] !== undefined;
  const problem = labelValueProblem(cluster);
  const mirrors: Record<string, string> = {};
  const held: string[] = [];
  for (const key of [...new Set(input.readKeys)].sort()) {
    const mirrored = mirroredLabelKey(key);
    if (mirrored === undefined) continue;
    const live = clusterLabels[key];
    if (live !== undefined) mirrors[mirrored] = live;
    else if (wasSelectable && secretLabels[mirrored] !== undefined) {
      mirrors[mirrored] = secretLabels[mirrored];
      held.push(key);
    }
  }
  const required = input.requiredKeys === undefined ? undefined : [...new Set(input.requiredKeys)].sort();
  const missing = (required ?? []).filter((key) => clusterLabels[key] === undefined && !held.includes(key));
  const selectable = wasSelectable || (required !== undefined && missing.length === 0 && problem === undefined);

  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(secretLabels)) if (!isSpokeLabelMirrorKey(key)) labels[key] = value;
  Object.assign(labels, mirrors);
  if (selectable) labels[SECRET_CLUSTER_LABEL] = problem === undefined ? cluster : secretLabels[SECRET_CLUSTER_LABEL];

  const patch: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(labels)) if (secretLabels[key] !== value) patch[key] = value;
  for (const key of Object.keys(secretLabels)) if (!(key in labels)) patch[key] = null;
  return {
    labels: sortKeys(labels),
    ...(Object.keys(patch).length ? { patch: sortKeys(patch) } : {}),
    selectable,
    held,
    missing,
    ...(problem === undefined
      ? {}
      : { problem: `cluster name "${cluster}" is no label value (${problem}), so no matrix can select its Secret` }),
  };
}

// ----- which Placements and spoke labels the pull ApplicationSets use (read by the cluster-Secret duty) -----

/** An ApplicationSet as the cluster-Secret duty reads it. */
export interface ApplicationSetLike extends KubeObject {
  spec?: { generators?: unknown[]; template?: { metadata?: { labels?: Record<string, string> } } };
}

/** A PlacementDecision as the cluster-Secret duty reads it. */
export interface PlacementDecisionLike extends KubeObject {
  status?: { decisions?: Array<{ clusterName?: string }> };
}

/** `<namespace>/<placement>` of every Placement a pull ApplicationSet generates from. */
export function pullPlacements(appSets: readonly ApplicationSetLike[]): Set<string> {
  const result = new Set<string>();
  for (const appSet of appSets) {
    if (!isPullApplicationSet(appSet)) continue;
    for (const name of applicationSetPlacements(appSet.spec?.generators))
      result.add(`${appSet.metadata.namespace}/${name}`);
  }
  return result;
}

/** Which spoke labels the pull ApplicationSets read: all of them, and per cluster those read by the ones deciding it. */
export interface SpokeLabelReaders {
  /** ManagedCluster label keys any pull ApplicationSet reads, sorted. */
  readonly readKeys: readonly string[];
  /** Per decided cluster, the keys read by the pull ApplicationSets (that read any) whose Placement decides it. */
  readonly requiredKeys: ReadonlyMap<string, readonly string[]>;
}

/** The spoke labels pull ApplicationSets read (`spokeLabelsRead` over each one's spec), overall and per cluster. */
export function spokeLabelReaders(
  appSets: readonly ApplicationSetLike[],
  decisions: readonly PlacementDecisionLike[],
): SpokeLabelReaders {
  const all = new Set<string>();
  const byPlacement = new Map<string, Set<string>>();
  for (const appSet of appSets) {
    if (!isPullApplicationSet(appSet)) continue;
    const keys = spokeLabelsRead(appSet.spec);
    if (keys.length === 0) continue;
    for (const key of keys) all.add(key);
    for (const placement of applicationSetPlacements(appSet.spec?.generators)) {
      const at = `${appSet.metadata.namespace}/${placement}`;
      const set = byPlacement.get(at) ?? new Set<string>();
      for (const key of keys) set.add(key);
      byPlacement.set(at, set);
    }
  }
  const perCluster = new Map<string, Set<string>>();
  for (const decision of decisions) {
    const keys = byPlacement.get(`${decision.metadata.namespace}/${decision.metadata.labels?.[PLACEMENT_LABEL] ?? ''}`);
    if (!keys) continue;
    for (const entry of decision.status?.decisions ?? []) {
      if (!entry.clusterName) continue;
      const set = perCluster.get(entry.clusterName) ?? new Set<string>();
      for (const key of keys) set.add(key);
      perCluster.set(entry.clusterName, set);
    }
  }
  return {
    readKeys: [...all].sort(),
    requiredKeys: new Map([...perCluster].map(([cluster, keys]) => [cluster, [...keys].sort()])),
  };
}
