/**
 * Spokes from an inventory file (`pullfleet inventory pull`): `hub.addInventory(Inventory.fromFile(...))`
 * declares one Spoke per ManagedCluster the hub reported, under a construct `Inventory` (the path of an
 * inventory spoke is `<hub>/Inventory/<cluster>`). Hand-written spokes sit beside them; changing or
 * replacing an inventory entry is explicit (`overrides`, `exclude`), and any other name clash is a
 * problem reported at synth. An unreadable or invalid file throws at once, naming the file: nothing can be
 * declared from it (see docs/reference/errors.md).
 */
import { readFileSync } from 'node:fs';
import { Construct } from 'constructs';
import { parseInventory, type HubInventory, type InventorySpoke } from '../model/placement/inventory.js';
import { type Taint } from '../model/placement/placement.js';
import type { IClusterSet, IHub } from './interfaces.js';
import { Spoke } from './spoke.js';
import { recordProblem } from './_problems.js';
import { bool, clusterSetRef, listOf, propsOf, recordOf, shape, str, stringMap, TAINTS_CHECK } from './_props-check.js';

/** A hub's inventory, read from the file `pullfleet inventory pull` writes. */
export class Inventory {
  /** Reads and validates an inventory file. Throws naming the file and every problem in it. */
  public static fromFile(path: string): Inventory {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new Error(
        `cannot read inventory ${path}: ${(error as Error).message}: run \`pullfleet inventory pull --hub <name> -o ${path}\` to create it`,
      );
    }
    return new Inventory(parseInventory(text, path), path);
  }

  /** An inventory given as text (tests, or a file read some other way); `source` names it in errors. */
  public static fromText(text: string, source = 'inventory'): Inventory {
    return new Inventory(parseInventory(text, source), source);
  }

  /** Hub name recorded in the file. */
  public readonly hub: string;
  /** Where the inventory came from (its path), for messages. */
  public readonly source: string;
  private readonly data: HubInventory;

  private constructor(data: HubInventory, source: string) {
    this.data = data;
    this.hub = data.hub;
    this.source = source;
  }

  /** The cluster entries, sorted by name (copies). */
  public get clusters(): InventorySpoke[] {
    return this.data.clusters.map((c) => ({
      ...c,
      labels: { ...c.labels },
      claims: { ...c.claims },
      taints: [...c.taints],
      clusterSets: [...c.clusterSets],
    }));
  }

  /** Names of the ManagedClusterSets the hub reported, sorted. */
  public get clusterSetNames(): string[] {
    return this.data.clusterSets.map((s) => s.name);
  }
}

/** Changes to one inventory entry. Maps merge key by key over the entry; the rest replaces. */
export interface SpokeOverride {
  /**
   * Labels merged over the inventory labels (a key given here wins).
   * @default - the inventory labels
   */
  readonly labels?: Record<string, string>;
  /**
   * Claims merged over the inventory claims.
   * @default - the inventory claims
   */
  readonly claims?: Record<string, string>;
  /**
   * Taints replacing the inventory taints.
   * @default - the inventory taints
   */
  readonly taints?: readonly Taint[];
  /**
   * @default - the inventory's `openshift`
   */
  readonly openshift?: boolean;
  /**
   * Exclusive cluster set (sets the cluster-set label; the inventory label must agree or be overridden).
   * @default - membership from the inventory labels
   */
  readonly clusterSet?: IClusterSet;
  /**
   * @default - the Spoke default
   */
  readonly argoControllerServiceAccount?: string;
  /**
   * @default - the Spoke default
   */
  readonly argoControllerNamespace?: string;
}

/** How `hub.addInventory` declares the inventory's spokes. */
export interface AddInventoryOptions {
  /**
   * Per cluster name, changes to its inventory entry. Every name must be in the inventory.
   * @default - no overrides
   */
  readonly overrides?: Readonly<Record<string, SpokeOverride>>;
  /**
   * Cluster names not to declare from the inventory: a hand-written `Spoke` of the same name may then
   * stand in for the entry, or the cluster is left out of the fleet. Every name must be in the inventory.
   * @default []
   */
  readonly exclude?: readonly string[];
}

/** The runtime type of every {@link AddInventoryOptions} key (see props-check.ts). */
export const ADD_INVENTORY_OPTIONS = propsOf<AddInventoryOptions>('addInventory options', {
  overrides: recordOf(
    shape<SpokeOverride>('spoke override', {
      labels: stringMap('label', "{ env: 'prod' }"),
      claims: stringMap('claim', "{ platform: 'AWS' }"),
      taints: TAINTS_CHECK,
      openshift: bool(),
      clusterSet: clusterSetRef(),
      argoControllerServiceAccount: str(),
      argoControllerNamespace: str(),
    }),
    "{ 'store-001': { labels: { tier: 'gold' } } }",
  ),
  exclude: listOf(str(), "['store-001']"),
});

/**
 * @internal declares the inventory's spokes on `hub` (Hub.addInventory). An inventory of another hub, an
 * override or exclusion naming no entry, a name both overridden and excluded, or an entry clashing with a
 * spoke already declared is a problem of the fleet: each is reported at synth under the hub's path, and
 * then nothing is declared from the inventory (no half of it), so the result is empty.
 */
export function addInventoryTo(
  hub: Construct & IHub,
  inventory: Inventory,
  options: AddInventoryOptions = {},
): Spoke[] {
  const where = `inventory ${inventory.source}`;
  const problems: string[] = [];
  if (inventory.hub !== hub.name) {
    problems.push(
      `${where} is for hub "${inventory.hub}", not "${hub.name}": load inventory/${hub.name}.yaml (pullfleet inventory pull --hub ${hub.name})`,
    );
  }
  const entries = inventory.clusters;
  const names = new Set(entries.map((e) => e.name));
  const overrides = options.overrides ?? {};
  const exclude = new Set(options.exclude ?? []);
  const stale = [
    ...Object.keys(overrides).map((n) => ['overrides', n] as const),
    ...[...exclude].map((n) => ['exclude', n] as const),
  ].filter(([, n]) => !names.has(n));
  if (stale.length > 0) {
    problems.push(
      `${where}: ${stale.map(([what, n]) => `${what} names "${n}"`).join(', ')}, which is not in the inventory: remove it, or pull the inventory again if the cluster is new`,
    );
  }
  const both = Object.keys(overrides).filter((n) => exclude.has(n));
  if (both.length > 0) problems.push(`${where}: "${both.join('", "')}" is both overridden and excluded: keep one`);
  const declared = new Map(hub.spokes.map((s) => [s.name, s]));
  const clashes = entries.filter((e) => !exclude.has(e.name) && declared.has(e.name));
  if (clashes.length > 0) {
    problems.push(
      `${where}: ${clashes.map((e) => `cluster "${e.name}" is already declared as ${declared.get(e.name)!.node.path}`).join('; ')}: ` +
        `change the entry with addInventory(..., { overrides: { '<name>': {...} } }) or replace it with addInventory(..., { exclude: ['<name>'] }) and keep the hand-written Spoke`,
    );
  }
  if (problems.length > 0) {
    for (const message of problems) recordProblem(hub, hub.node.path, message);
    return [];
  }
  const taken = new Set(hub.node.children.map((c) => c.node.id));
  let id = 'Inventory';
  for (let n = 2; taken.has(id); n++) id = `Inventory${n}`;
  const scope = new Construct(hub, id);
  const spokes: Spoke[] = [];
  for (const entry of entries) {
    if (exclude.has(entry.name)) continue;
    const o = overrides[entry.name] ?? {};
    spokes.push(
      new Spoke(scope, entry.name, {
        labels: { ...entry.labels, ...(o.labels ?? {}) },
        claims: { ...entry.claims, ...(o.claims ?? {}) },
        taints: o.taints ?? entry.taints,
        openshift: o.openshift ?? entry.openshift,
        ...(entry.kubernetesVersion !== undefined ? { kubernetesVersion: entry.kubernetesVersion } : {}),
        ...(o.clusterSet ? { clusterSet: o.clusterSet } : {}),
        ...(o.argoControllerServiceAccount ? { argoControllerServiceAccount: o.argoControllerServiceAccount } : {}),
        ...(o.argoControllerNamespace ? { argoControllerNamespace: o.argoControllerNamespace } : {}),
      }),
    );
  }
  return spokes;
}
