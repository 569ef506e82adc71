/**
 * The fleet inventory file (`inventory/<hub>.yaml`): what a hub knows about its ManagedClusters and
 * ManagedClusterSets, reduced to the fields placement evaluation and spokes need (names, labels, claims,
 * taints, cluster-set membership, OpenShift or not), sorted, with no volatile fields. Pure: building it
 * from listed objects, parsing and validating the file, rendering it byte-for-byte stable, and the
 * field-level diff between two inventories.
 */
import { parseDocument, stringify } from 'yaml';
import { CLUSTERSET_LABEL } from '../core/keys.js';
import { dnsLabelProblem, labelValueProblem } from '../core/names.js';
import { type Taint, TaintEffect } from './placement.js';
import { kubernetesMinor } from '../core/versions.js';
import { sortKeys } from '../core/records.js';
import { matchesSelector, type LabelSelector, SelectorOperator } from '../core/selectors.js';

export const INVENTORY_API_VERSION = 'pullfleet.io/v1alpha1';
export const INVENTORY_KIND = 'Inventory';
/** The ClusterClaim OCM sets to the cluster's product (`OpenShift`, `EKS`, …). */
export const PRODUCT_CLAIM = 'product.open-cluster-management.io';
/** The label OCM sets to the cluster's vendor. */
export const VENDOR_LABEL = 'vendor';
/**
 * Labels OCM rewrites as add-ons come and go or change health (`feature.open-cluster-management.io/addon-<name>:
 * available|unhealthy|unreachable`); they are left out of the inventory so it does not drift with add-on health.
 */
export const VOLATILE_LABEL_PREFIXES: readonly string[] = ['feature.open-cluster-management.io/addon-'];

const TAINT_EFFECTS: readonly string[] = Object.values(TaintEffect);
const OPERATORS: readonly SelectorOperator[] = Object.values(SelectorOperator);

/**
 * The selector the inventory records for a `LabelSelector` ManagedClusterSet that has no `labelSelector`:
 * OCM selects no cluster for it, and no label map satisfies both requirements.
 */
export const SELECTS_NOTHING: LabelSelector = {
  matchExpressions: [
    { key: CLUSTERSET_LABEL, operator: SelectorOperator.EXISTS },
    { key: CLUSTERSET_LABEL, operator: SelectorOperator.DOES_NOT_EXIST },
  ],
};

/** A ManagedClusterSet as the inventory records it. */
export interface InventoryClusterSet {
  readonly name: string;
  /** Members by label selector; undefined for the exclusive `cluster.open-cluster-management.io/clusterset` label. */
  readonly labelSelector?: LabelSelector;
}

/** One ManagedCluster as the inventory records it. */
export interface InventorySpoke {
  /** The ManagedCluster name (also its namespace on the hub). */
  readonly name: string;
  /**
   * The ManagedCluster's labels, sorted by key, without the add-on health labels OCM keeps rewriting
   * (`feature.open-cluster-management.io/addon-<name>`).
   */
  readonly labels: Readonly<Record<string, string>>;
  /** The cluster's ClusterClaims (`status.clusterClaims` of the ManagedCluster), name to value, sorted by name. */
  readonly claims: Readonly<Record<string, string>>;
  /** Taints on the ManagedCluster (`spec.taints`, without their `timeAdded`), sorted. */
  readonly taints: readonly Taint[];
  /** Names of the ManagedClusterSets that select this cluster, sorted. */
  readonly clusterSets: readonly string[];
  /** From the `vendor: OpenShift` label or the `product.open-cluster-management.io: OpenShift` claim. */
  readonly openshift: boolean;
  /**
   * The cluster's Kubernetes version as `major.minor` (`status.version.kubernetes` of the ManagedCluster,
   * without the patch version, which changes too often to commit); absent when the cluster reports none.
   */
  readonly kubernetesVersion?: string;
}

/** A hub's inventory. */
export interface HubInventory {
  readonly hub: string;
  readonly clusterSets: readonly InventoryClusterSet[];
  readonly clusters: readonly InventorySpoke[];
}

/** Bad inventory input (a file or a hub's objects); nothing has been written. Lists every problem. */
export class InventoryError extends Error {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(
      `${source}: ${problems.length === 1 ? problems[0] : `${problems.length} problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`}`,
    );
    this.name = 'InventoryError';
  }
}

/** The parts of a ManagedCluster the inventory reads (cluster.open-cluster-management.io/v1). */
export interface ManagedClusterObject {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { taints?: Array<{ key: string; value?: string; effect: string; timeAdded?: string | null }> };
  status?: { clusterClaims?: Array<{ name: string; value: string }>; version?: { kubernetes?: string } };
}

/** The parts of a ManagedClusterSet the inventory reads (cluster.open-cluster-management.io/v1beta2). */
export interface ManagedClusterSetObject {
  metadata: { name: string };
  spec?: { clusterSelector?: { selectorType?: string; labelSelector?: LabelSelector } };
}

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sortTaints(taints: readonly Taint[]): Taint[] {
  return [...taints]
    .map((t) =>
      t.value === undefined || t.value === ''
        ? { key: t.key, effect: t.effect }
        : { key: t.key, value: t.value, effect: t.effect },
    )
    .sort((a, b) => cmp(a.key, b.key) || cmp(a.effect, b.effect) || cmp(a.value ?? '', b.value ?? ''));
}

function normalSelector(selector: LabelSelector | undefined): LabelSelector {
  const out: LabelSelector = {};
  if (selector?.matchLabels && Object.keys(selector.matchLabels).length > 0)
    out.matchLabels = sortKeys(selector.matchLabels);
  const expressions = (selector?.matchExpressions ?? []).map((e) => ({
    key: e.key,
    operator: e.operator,
    ...(e.values?.length ? { values: [...e.values].sort(cmp) } : {}),
  }));
  if (expressions.length > 0)
    out.matchExpressions = expressions.sort(
      (a, b) =>
        cmp(a.key, b.key) || cmp(a.operator, b.operator) || cmp((a.values ?? []).join(','), (b.values ?? []).join(',')),
    );
  return out;
}

/** Whether a set with this record selects a cluster with these labels. */
function isMember(set: InventoryClusterSet, labels: Readonly<Record<string, string>>): boolean {
  return set.labelSelector ? matchesSelector(set.labelSelector, labels) : labels[CLUSTERSET_LABEL] === set.name;
}

function isOpenShift(labels: Readonly<Record<string, string>>, claims: Readonly<Record<string, string>>): boolean {
  return labels[VENDOR_LABEL] === 'OpenShift' || claims[PRODUCT_CLAIM] === 'OpenShift';
}

/** Problems of one spoke entry (name, labels, taints), each naming the cluster and the fix. */
function spokeProblems(where: string, spoke: InventorySpoke): string[] {
  const problems: string[] = [];
  const nameProblem = dnsLabelProblem(spoke.name);
  if (nameProblem)
    problems.push(
      `${where} name "${spoke.name}" ${nameProblem}: ManagedCluster names are namespace names on the hub; rename the cluster (re-import it) or remove the entry`,
    );
  for (const [key, value] of Object.entries(spoke.labels)) {
    const problem = labelValueProblem(value);
    if (problem) problems.push(`${where} label ${key}="${value}" ${problem}: fix the label on the ManagedCluster`);
  }
  for (const taint of spoke.taints) {
    if (!TAINT_EFFECTS.includes(taint.effect))
      problems.push(
        `${where} taint "${taint.key}" has effect "${taint.effect}": use one of ${TAINT_EFFECTS.join(', ')}`,
      );
  }
  return problems;
}

function duplicateProblems(what: string, names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  for (const name of names) seen.set(name, (seen.get(name) ?? 0) + 1);
  return [...seen]
    .filter(([, n]) => n > 1)
    .map(([name, n]) => `${what} "${name}" appears ${n} times: each name may appear once; remove the duplicates`);
}

/**
 * The inventory of hub `hub` from its listed ManagedClusters and ManagedClusterSets. Throws an
 * InventoryError listing every problem (a name that is not a DNS label, a duplicate, a bad label) so
 * the caller writes nothing.
 */
export function inventoryFromHub(
  hub: string,
  clusters: readonly ManagedClusterObject[],
  sets: readonly ManagedClusterSetObject[],
): HubInventory {
  const clusterSets: InventoryClusterSet[] = sets
    .map((s) => {
      const selector = s.spec?.clusterSelector;
      // A LabelSelector set without a selector selects no cluster (OCM converts the absent selector with
      // LabelSelectorAsSelector, which yields Nothing), recorded as a selector no labels satisfy.
      return selector?.selectorType === 'LabelSelector'
        ? { name: s.metadata.name, labelSelector: normalSelector(selector.labelSelector ?? SELECTS_NOTHING) }
        : { name: s.metadata.name };
    })
    .sort(byName);
  const spokes: InventorySpoke[] = clusters
    .map((mc) => {
      const labels = sortKeys(
        Object.fromEntries(
          Object.entries(mc.metadata.labels ?? {}).filter(
            ([key]) => !VOLATILE_LABEL_PREFIXES.some((p) => key.startsWith(p)),
          ),
        ),
      );
      const claims = sortKeys(Object.fromEntries((mc.status?.clusterClaims ?? []).map((c) => [c.name, c.value])));
      const taints = sortTaints(
        (mc.spec?.taints ?? []).map((t) => ({ key: t.key, value: t.value, effect: t.effect as TaintEffect })),
      );
      const version = mc.status?.version?.kubernetes;
      const kubernetesVersion = version !== undefined ? kubernetesMinor(version) : undefined;
      return {
        name: mc.metadata.name,
        labels,
        claims,
        taints,
        clusterSets: clusterSets.filter((set) => isMember(set, labels)).map((set) => set.name),
        openshift: isOpenShift(labels, claims),
        ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
      };
    })
    .sort(byName);
  const inventory = { hub, clusterSets, clusters: spokes };
  const problems = inventoryProblems(inventory, 'ManagedCluster');
  if (problems.length > 0) throw new InventoryError(`hub "${hub}"`, problems);
  return inventory;
}

function inventoryProblems(inventory: HubInventory, what: string, checkHub = true): string[] {
  const problems: string[] = [];
  const hubProblem = checkHub ? dnsLabelProblem(inventory.hub) : undefined;
  if (hubProblem)
    problems.push(`hub name "${inventory.hub}" ${hubProblem}: use the name of the Hub in fleet.config.ts`);
  problems.push(
    ...duplicateProblems(
      what,
      inventory.clusters.map((c) => c.name),
    ),
  );
  problems.push(
    ...duplicateProblems(
      'ManagedClusterSet',
      inventory.clusterSets.map((s) => s.name),
    ),
  );
  for (const spoke of inventory.clusters) problems.push(...spokeProblems(`${what} "${spoke.name}":`, spoke));
  for (const set of inventory.clusterSets) {
    const problem = dnsLabelProblem(set.name);
    if (problem) problems.push(`ManagedClusterSet name "${set.name}" ${problem}`);
  }
  return problems;
}

/** The header every generated inventory starts with. */
export function inventoryHeader(hub: string): string {
  return [
    `# Generated by \`pullfleet inventory pull --hub ${hub}\` from the hub's ManagedClusters and ManagedClusterSets.`,
    '# Do not edit by hand: pull again to refresh, and run `pullfleet inventory diff` in CI to catch drift.',
    '# Change spokes in fleet.config.ts with the overrides of hub.addInventory(...).',
    '',
  ].join('\n');
}

/** The file text: header, then sorted keys and entries; two renders of equal inventories are byte-identical. */
export function renderInventory(inventory: HubInventory): string {
  const doc = {
    apiVersion: INVENTORY_API_VERSION,
    kind: INVENTORY_KIND,
    hub: inventory.hub,
    clusterSets: [...inventory.clusterSets]
      .sort(byName)
      .map((s) =>
        s.labelSelector ? { name: s.name, labelSelector: normalSelector(s.labelSelector) } : { name: s.name },
      ),
    clusters: [...inventory.clusters].sort(byName).map((c) => ({
      name: c.name,
      openshift: c.openshift,
      ...(c.kubernetesVersion !== undefined ? { kubernetesVersion: c.kubernetesVersion } : {}),
      clusterSets: [...c.clusterSets].sort(cmp),
      labels: sortKeys(c.labels ?? {}),
      claims: sortKeys(c.claims ?? {}),
      taints: sortTaints(c.taints),
    })),
  };
  return (
    inventoryHeader(inventory.hub) + stringify(doc, { lineWidth: 0, indentSeq: true, aliasDuplicateObjects: false })
  );
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownKeys(where: string, value: Record<string, Json>, allowed: readonly string[], problems: string[]): void {
  for (const key of Object.keys(value))
    if (!allowed.includes(key)) problems.push(`${where}: unknown field "${key}" (allowed: ${allowed.join(', ')})`);
}

function stringMap(where: string, value: Json | undefined, problems: string[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    problems.push(`${where} must be a map of strings`);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string') problems.push(`${where}.${key} must be a string (quote it), got ${JSON.stringify(v)}`);
    else out[key] = v;
  }
  return out;
}

function stringList(where: string, value: Json | undefined, problems: string[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    problems.push(`${where} must be a list of strings`);
    return [];
  }
  return value as string[];
}

function parseSelector(where: string, value: Json, problems: string[]): LabelSelector {
  if (!isObject(value)) {
    problems.push(`${where} must be a label selector (matchLabels, matchExpressions)`);
    return {};
  }
  unknownKeys(where, value, ['matchLabels', 'matchExpressions'], problems);
  const selector: LabelSelector = {};
  if (value.matchLabels !== undefined)
    selector.matchLabels = stringMap(`${where}.matchLabels`, value.matchLabels, problems);
  if (value.matchExpressions !== undefined) {
    if (!Array.isArray(value.matchExpressions)) problems.push(`${where}.matchExpressions must be a list`);
    else {
      selector.matchExpressions = value.matchExpressions.map((e, i) => {
        const at = `${where}.matchExpressions[${i}]`;
        if (!isObject(e) || typeof e.key !== 'string' || !OPERATORS.includes(e.operator as SelectorOperator)) {
          problems.push(`${at} needs a key and an operator (${OPERATORS.join(', ')})`);
          return { key: '', operator: SelectorOperator.EXISTS };
        }
        return {
          key: e.key,
          operator: e.operator as SelectorOperator,
          ...(e.values !== undefined ? { values: stringList(`${at}.values`, e.values, problems) } : {}),
        };
      });
    }
  }
  return selector;
}

/**
 * Parses and validates an inventory file. `source` names it in errors (its path). Throws an
 * InventoryError listing every problem: not YAML, wrong apiVersion/kind, unknown fields, a cluster name
 * that is not a DNS label, duplicates, a clusterSets list that contradicts the labels.
 */
export function parseInventory(text: string, source: string): HubInventory {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0)
    throw new InventoryError(
      source,
      doc.errors.map((e) => `not valid YAML: ${e.message}`),
    );
  const root = doc.toJS() as Json;
  const problems: string[] = [];
  if (!isObject(root))
    throw new InventoryError(source, [
      `expected an ${INVENTORY_KIND} document (apiVersion ${INVENTORY_API_VERSION}): regenerate it with \`pullfleet inventory pull\``,
    ]);
  unknownKeys('the file', root, ['apiVersion', 'kind', 'hub', 'clusterSets', 'clusters'], problems);
  if (root.apiVersion !== INVENTORY_API_VERSION || root.kind !== INVENTORY_KIND) {
    problems.push(
      `expected apiVersion ${INVENTORY_API_VERSION} and kind ${INVENTORY_KIND}, got ${JSON.stringify(root.apiVersion)} / ${JSON.stringify(root.kind)}: regenerate it with \`pullfleet inventory pull\``,
    );
  }
  const hub = typeof root.hub === 'string' ? root.hub : '';
  if (typeof root.hub !== 'string') problems.push('hub (the hub name) must be a string');
  const clusterSets: InventoryClusterSet[] = [];
  if (root.clusterSets !== undefined && root.clusterSets !== null && !Array.isArray(root.clusterSets))
    problems.push('clusterSets must be a list');
  for (const [i, s] of (Array.isArray(root.clusterSets) ? root.clusterSets : []).entries()) {
    const at = `clusterSets[${i}]`;
    if (!isObject(s) || typeof s.name !== 'string') {
      problems.push(`${at} needs a name`);
      continue;
    }
    unknownKeys(`${at} (${s.name})`, s, ['name', 'labelSelector'], problems);
    clusterSets.push(
      s.labelSelector === undefined || s.labelSelector === null
        ? { name: s.name }
        : { name: s.name, labelSelector: parseSelector(`${at}.labelSelector`, s.labelSelector, problems) },
    );
  }
  const clusters: InventorySpoke[] = [];
  if (root.clusters !== undefined && root.clusters !== null && !Array.isArray(root.clusters))
    problems.push('clusters must be a list');
  for (const [i, c] of (Array.isArray(root.clusters) ? root.clusters : []).entries()) {
    if (!isObject(c) || typeof c.name !== 'string') {
      problems.push(`clusters[${i}] needs a name (a string)`);
      continue;
    }
    const at = `cluster "${c.name}"`;
    unknownKeys(
      at,
      c,
      ['name', 'openshift', 'kubernetesVersion', 'clusterSets', 'labels', 'claims', 'taints'],
      problems,
    );
    if (c.openshift !== undefined && typeof c.openshift !== 'boolean')
      problems.push(`${at}: openshift must be true or false`);
    const kubernetesVersion =
      typeof c.kubernetesVersion === 'string' ? kubernetesMinor(c.kubernetesVersion) : undefined;
    if (c.kubernetesVersion !== undefined && kubernetesVersion === undefined)
      problems.push(`${at}: kubernetesVersion must be major.minor, for example "1.29"`);
    const taints: Taint[] = [];
    if (c.taints !== undefined && c.taints !== null && !Array.isArray(c.taints))
      problems.push(`${at}: taints must be a list`);
    for (const [j, t] of (Array.isArray(c.taints) ? c.taints : []).entries()) {
      if (
        !isObject(t) ||
        typeof t.key !== 'string' ||
        typeof t.effect !== 'string' ||
        (t.value !== undefined && typeof t.value !== 'string')
      ) {
        problems.push(`${at}: taints[${j}] needs a key and an effect (strings) and an optional string value`);
        continue;
      }
      unknownKeys(`${at}: taints[${j}]`, t, ['key', 'value', 'effect'], problems);
      taints.push({
        key: t.key,
        effect: t.effect as TaintEffect,
        ...(t.value !== undefined ? { value: t.value } : {}),
      });
    }
    const labels = stringMap(`${at}: labels`, c.labels, problems);
    const claims = stringMap(`${at}: claims`, c.claims, problems);
    clusters.push({
      name: c.name,
      labels,
      claims,
      taints,
      clusterSets: stringList(`${at}: clusterSets`, c.clusterSets, problems),
      openshift: c.openshift === true,
      ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
    });
  }
  const inventory: HubInventory = { hub, clusterSets, clusters };
  problems.push(...inventoryProblems(inventory, 'cluster', typeof root.hub === 'string'));
  // The recorded membership must follow from the labels and the sets, or placements would be evaluated wrongly.
  for (const spoke of clusters) {
    const expected = clusterSets.filter((set) => isMember(set, spoke.labels)).map((set) => set.name);
    const recorded = [...spoke.clusterSets].sort(cmp);
    if (expected.join(',') !== recorded.join(',')) {
      problems.push(
        `cluster "${spoke.name}": clusterSets [${recorded.join(', ')}] do not follow from its labels and the sets' selectors ([${expected.join(', ')}]): regenerate the file with \`pullfleet inventory pull\``,
      );
    }
  }
  if (problems.length > 0) throw new InventoryError(source, problems);
  return {
    hub,
    clusterSets: [...clusterSets]
      .sort(byName)
      .map((s) => (s.labelSelector ? { name: s.name, labelSelector: normalSelector(s.labelSelector) } : s)),
    clusters: clusters
      .map((c) => ({
        ...c,
        labels: sortKeys(c.labels ?? {}),
        claims: sortKeys(c.claims ?? {}),
        taints: sortTaints(c.taints),
        clusterSets: [...c.clusterSets].sort(cmp),
      }))
      .sort(byName),
  };
}

/** One field that differs between the committed and the live entry. */
export interface InventoryFieldChange {
  /** `labels.<key>`, `claims.<key>`, `taints`, `clusterSets`, `openshift`, `kubernetesVersion` or `labelSelector`. */
  readonly field: string;
  /** The committed value (undefined: absent). */
  readonly from?: string;
  /** The live value (undefined: absent). */
  readonly to?: string;
}

export interface EntryChange {
  readonly name: string;
  readonly changes: readonly InventoryFieldChange[];
}

export interface InventoryDiff {
  readonly clustersAdded: readonly string[];
  readonly clustersRemoved: readonly string[];
  readonly clustersChanged: readonly EntryChange[];
  readonly clusterSetsAdded: readonly string[];
  readonly clusterSetsRemoved: readonly string[];
  readonly clusterSetsChanged: readonly EntryChange[];
}

function mapChanges(
  prefix: string,
  from: Readonly<Record<string, string>>,
  to: Readonly<Record<string, string>>,
): InventoryFieldChange[] {
  const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])].sort(cmp);
  return keys
    .filter((k) => from[k] !== to[k])
    .map((k) => ({
      field: `${prefix}.${k}`,
      ...(from[k] !== undefined ? { from: from[k] } : {}),
      ...(to[k] !== undefined ? { to: to[k] } : {}),
    }));
}

const taintText = (taints: readonly Taint[]): string =>
  sortTaints(taints)
    .map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`)
    .join(', ');
function selectorText(selector: LabelSelector | undefined): string {
  if (!selector) return `exclusive (${CLUSTERSET_LABEL} label)`;
  const s = normalSelector(selector);
  const parts = [
    ...Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(s.matchExpressions ?? []).map(
      (e) => `${e.key} ${e.operator}${e.values?.length ? ` (${e.values.join(', ')})` : ''}`,
    ),
  ];
  return parts.length ? parts.join(', ') : 'every cluster';
}

/** What changed from `committed` to `live`: clusters and sets added, removed, and changed field by field. */
export function diffInventory(committed: HubInventory, live: HubInventory): InventoryDiff {
  const before = new Map(committed.clusters.map((c) => [c.name, c]));
  const after = new Map(live.clusters.map((c) => [c.name, c]));
  const clustersChanged: EntryChange[] = [];
  for (const [name, was] of [...before].sort(([a], [b]) => cmp(a, b))) {
    const now = after.get(name);
    if (!now) continue;
    const changes: InventoryFieldChange[] = [];
    if (was.openshift !== now.openshift)
      changes.push({ field: 'openshift', from: String(was.openshift), to: String(now.openshift) });
    if (was.kubernetesVersion !== now.kubernetesVersion)
      changes.push({
        field: 'kubernetesVersion',
        ...(was.kubernetesVersion !== undefined ? { from: was.kubernetesVersion } : {}),
        ...(now.kubernetesVersion !== undefined ? { to: now.kubernetesVersion } : {}),
      });
    const setsFrom = [...was.clusterSets].sort(cmp).join(', ');
    const setsTo = [...now.clusterSets].sort(cmp).join(', ');
    if (setsFrom !== setsTo) changes.push({ field: 'clusterSets', from: `[${setsFrom}]`, to: `[${setsTo}]` });
    changes.push(...mapChanges('labels', was.labels, now.labels), ...mapChanges('claims', was.claims, now.claims));
    if (taintText(was.taints) !== taintText(now.taints))
      changes.push({ field: 'taints', from: `[${taintText(was.taints)}]`, to: `[${taintText(now.taints)}]` });
    if (changes.length > 0) clustersChanged.push({ name, changes });
  }
  const setsBefore = new Map(committed.clusterSets.map((s) => [s.name, s]));
  const setsAfter = new Map(live.clusterSets.map((s) => [s.name, s]));
  const clusterSetsChanged: EntryChange[] = [];
  for (const [name, was] of [...setsBefore].sort(([a], [b]) => cmp(a, b))) {
    const now = setsAfter.get(name);
    if (now && selectorText(was.labelSelector) !== selectorText(now.labelSelector)) {
      clusterSetsChanged.push({
        name,
        changes: [
          { field: 'labelSelector', from: selectorText(was.labelSelector), to: selectorText(now.labelSelector) },
        ],
      });
    }
  }
  return {
    clustersAdded: [...after.keys()].filter((n) => !before.has(n)).sort(cmp),
    clustersRemoved: [...before.keys()].filter((n) => !after.has(n)).sort(cmp),
    clustersChanged,
    clusterSetsAdded: [...setsAfter.keys()].filter((n) => !setsBefore.has(n)).sort(cmp),
    clusterSetsRemoved: [...setsBefore.keys()].filter((n) => !setsAfter.has(n)).sort(cmp),
    clusterSetsChanged,
  };
}

/** Whether the diff shows any drift. */
export function hasDrift(diff: InventoryDiff): boolean {
  return (
    diff.clustersAdded.length +
      diff.clustersRemoved.length +
      diff.clustersChanged.length +
      diff.clusterSetsAdded.length +
      diff.clusterSetsRemoved.length +
      diff.clusterSetsChanged.length >
    0
  );
}

/** The diff as text for a terminal or a CI log; empty when there is no drift. */
export function renderInventoryDiff(diff: InventoryDiff): string {
  const lines: string[] = [];
  const value = (v: string | undefined): string => (v === undefined ? '(absent)' : JSON.stringify(v));
  const section = (
    title: string,
    added: readonly string[],
    removed: readonly string[],
    changed: readonly EntryChange[],
  ): void => {
    for (const name of added) lines.push(`+ ${title} ${name} (on the hub, not in the file)`);
    for (const name of removed) lines.push(`- ${title} ${name} (in the file, gone from the hub)`);
    for (const entry of changed) {
      lines.push(`~ ${title} ${entry.name}`);
      for (const c of entry.changes) lines.push(`    ${c.field}: ${value(c.from)} -> ${value(c.to)}`);
    }
  };
  section('ManagedClusterSet', diff.clusterSetsAdded, diff.clusterSetsRemoved, diff.clusterSetsChanged);
  section('ManagedCluster', diff.clustersAdded, diff.clustersRemoved, diff.clustersChanged);
  return lines.length ? `${lines.join('\n')}\n` : '';
}
