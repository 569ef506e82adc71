/**
 * Generative differential test: pullfleet's offline placement evaluation against OCM's real placement
 * controller (v1.3.1, test/support/real-placement.ts) on the hub API server of `npm run test:ocm`.
 *
 * Each seed draws an inventory (ManagedClusters with labels, ClusterClaims in status, taints of every
 * effect with `timeAdded`; exclusive and label-selector ManagedClusterSets, `global`-style `{}` sets;
 * ManagedClusterSetBindings in the Placements' namespace, one of them to a set that does not exist) and
 * Placements (cluster sets, predicates with label and claim selectors, tolerations with and without
 * `tolerationSeconds`, `numberOfClusters`, prioritizer policies in both modes, and now and then a spec OCM
 * refuses). It applies them to the hub, starts the controller (so its first schedule sees the whole
 * inventory: it syncs its informers first) and waits for every Placement's conditions and decisions. Then a
 * second phase changes the inventory (clusters that sort first join, decided clusters get a `NoSelectIfNew`
 * taint), restarts the controller and compares again with the decisions of the first phase as the
 * current ones (Steady, NoSelectIfNew).
 *
 * The offline side is what `pullfleet inventory pull` and plan do: `inventoryFromHub` over the listed
 * ManagedClusters and ManagedClusterSets, `boundClusterSets` over the bindings, `explainPlacement`.
 * Where it reports nothing unknown, the decisions must be equal; where it reports unknowns (Balance,
 * resource and add-on scores, `tolerationSeconds`), the hub's decisions must lie within the feasible
 * clusters, and as many as `numberOfClusters` asks when only scores are unknown. A misconfigured spec
 * must select nothing on both sides.
 *
 * Seeds: a fixed set in CI (CI_SEEDS); `PULLFLEET_PLACEMENT_SEEDS=1-200` or `=7,42` runs others, and
 * PULLFLEET_PLACEMENT_DEBUG=1 prints every spec with both answers. On a mismatch the seed is printed with
 * the smallest case that still differs (shrunk on the real controller, at most
 * PULLFLEET_PLACEMENT_SHRINK_RUNS runs, default 40, each a whole run of both phases).
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { CLUSTERSET_LABEL, isHubItself } from '../../src/model/core/keys.js';
import type { LabelSelector } from '../../src/model/core/selectors.js';
import {
  inventoryFromHub,
  type ManagedClusterObject,
  type ManagedClusterSetObject,
} from '../../src/model/placement/inventory.js';
import {
  explainPlacement,
  type PlacementEvaluation,
  type PlacementSpec,
  type Toleration,
  type ClusterPredicate,
} from '../../src/model/placement/placement.js';
import { boundClusterSets, type ManagedClusterSetBinding } from '../../src/model/placement/tenancy.js';
import { RawClient, type RawObject } from '../support/raw-client.js';
import {
  describeRealPlacement,
  isScheduled,
  PLACEMENT_API,
  placementOutcome,
  preparePlacementHub,
  startPlacementController,
  type PlacementOutcome,
} from '../support/real-placement.js';
import { waitFor } from '../support/wait.js';

const CLUSTER_API = 'cluster.open-cluster-management.io/v1';
const SET_API = 'cluster.open-cluster-management.io/v1beta2';
/** Marks what this suite creates, so it removes only that. No generated selector reads it. */
const MARKER = 'pullfleet.io/placement-differential';
/** Seeds 1-24, and 33, 64 and 80, which found the negative Steady weight (issue 26). */
const CI_SEEDS = [...Array.from({ length: 24 }, (_, i) => i + 1), 33, 64, 80];
const WAIT = { timeoutMs: 60_000, intervalMs: 40 };

// ---------------------------------------------------------------------------------------------- the case

interface ClusterCase {
  name: string;
  labels: Record<string, string>;
  claims: Record<string, string>;
  taints: Array<{ key: string; value?: string; effect: string; timeAdded: string }>;
}
/** `exclusive`: ExclusiveClusterSetLabel (spec omitted when `implicit`); `selector`: LabelSelector. */
interface SetCase {
  name: string;
  type: 'exclusive' | 'implicit' | 'selector' | 'nil-selector';
  labelSelector?: LabelSelector;
}
interface PlacementCase {
  name: string;
  spec: PlacementSpec;
}
interface Case {
  seed: number;
  clusters: ClusterCase[];
  sets: SetCase[];
  /** Names of the sets bound to the namespace (a binding named like the set). */
  bindings: string[];
  placements: PlacementCase[];
  /** Phase two: clusters that join and clusters that get a NoSelectIfNew taint (if decided in phase one). */
  joins: ClusterCase[];
  drains: number;
}

function rng(seed: number): () => number {
  let a = seed >>> 0 || 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(seed: number): Case {
  const r = rng(seed);
  const chance = (p: number) => r() < p;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const some = <T>(xs: readonly T[], p: number): T[] => xs.filter(() => chance(p));
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const now = Date.now();
  const time = (old: boolean) => new Date(now - (old ? 2 * 86_400_000 : 0)).toISOString().replace(/\.\d+Z$/, 'Z');

  const exclusive = ['ex-a', 'ex-b'];
  const taintKeys = ['gpu', 'maintenance', 'cluster.open-cluster-management.io/unreachable'];
  const effects = ['NoSelect', 'NoSelectIfNew', 'PreferNoSelect'];
  const cluster = (name: string): ClusterCase => {
    const labels: Record<string, string> = {};
    if (chance(0.8)) labels.env = pick(['prod', 'dev', 'stage']);
    if (chance(0.7)) labels.region = pick(['east', 'west', 'north']);
    if (chance(0.4)) labels.tier = pick(['gold', 'silver']);
    if (chance(0.6)) labels[CLUSTERSET_LABEL] = pick(exclusive);
    if (chance(0.08)) labels['local-cluster'] = 'true';
    const claims: Record<string, string> = {};
    if (chance(0.7)) claims['platform.open-cluster-management.io'] = pick(['AWS', 'GCP', 'Azure']);
    if (chance(0.4)) claims['product.open-cluster-management.io'] = pick(['OpenShift', 'EKS']);
    const taints = some(taintKeys, 0.2).map((key) => ({
      key,
      ...(chance(0.3) ? { value: pick(['true', 'soon']) } : {}),
      effect: pick(effects),
      timeAdded: time(chance(0.5)),
    }));
    return { name, labels, claims, taints };
  };
  const n = int(3, 9);
  const names = new Set<string>();
  while (names.size < n) names.add(chance(0.06) ? 'local-cluster' : `c${int(1, 30)}`);
  const clusters = [...names].sort().map(cluster);

  const sets: SetCase[] = [
    { name: 'ex-a', type: pick(['exclusive', 'implicit'] as const) },
    { name: 'ex-b', type: 'exclusive' },
    { name: 'ls-prod', type: 'selector', labelSelector: { matchLabels: { env: 'prod' } } },
    {
      name: 'ls-east',
      type: 'selector',
      labelSelector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['east', 'north'] }] },
    },
    { name: 'all', type: 'selector', labelSelector: {} },
    ...(chance(0.3) ? [{ name: 'ls-nil', type: 'nil-selector' as const }] : []),
  ];
  const bindings = [
    ...some(
      sets.map((s) => s.name),
      0.55,
    ),
    ...(chance(0.3) ? ['ghost'] : []),
  ];

  const expression = (claim: boolean) => {
    const key = claim
      ? pick(['platform.open-cluster-management.io', 'product.open-cluster-management.io'])
      : pick(['env', 'region', 'tier']);
    const pool = claim ? ['AWS', 'GCP', 'Azure', 'OpenShift', 'EKS'] : ['prod', 'dev', 'stage', 'east', 'west', 'gold'];
    const operator = pick(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const);
    const bad = chance(0.04); // In/NotIn without values, Exists with values: OCM refuses the spec
    const needsValues = operator === 'In' || operator === 'NotIn';
    return {
      key,
      operator,
      ...(needsValues !== bad
        ? {
            values: some(pool, 0.4)
              .concat(pick(pool))
              .filter((v, i, a) => a.indexOf(v) === i),
          }
        : {}),
    };
  };
  const predicate = (): ClusterPredicate => {
    const labelSelector = {
      ...(chance(0.5)
        ? {
            matchLabels: Object.fromEntries([[pick(['env', 'region', 'tier']), pick(['prod', 'east', 'gold', 'dev'])]]),
          }
        : {}),
      ...(chance(0.5) ? { matchExpressions: Array.from({ length: int(1, 2) }, () => expression(false)) } : {}),
    };
    return {
      requiredClusterSelector: {
        ...(Object.keys(labelSelector).length || chance(0.5) ? { labelSelector } : {}),
        ...(chance(0.4) ? { claimSelector: { matchExpressions: [expression(true)] } } : {}),
      },
    };
  };
  const tolerationOf = (): Toleration => {
    const kind = r();
    if (kind < 0.15) return { operator: 'Exists', ...(chance(0.5) ? { effect: pick(effects) } : {}) } as Toleration;
    if (kind < 0.2) return { ...(chance(0.5) ? { value: 'true' } : {}) }; // no key, Equal: refused
    const key = pick(taintKeys);
    const base: Toleration = { key };
    if (chance(0.5)) base.operator = 'Exists';
    else if (chance(0.6)) base.value = pick(['true', 'soon']);
    if (chance(0.03)) (base as { value?: string }).value = 'x'; // Exists with a value: refused
    if (chance(0.4)) (base as { effect?: string }).effect = pick(effects);
    if (chance(0.25)) base.tolerationSeconds = pick([0, 60, 86_400 * 7]);
    return base;
  };
  const policy = (): PlacementSpec['prioritizerPolicy'] | undefined => {
    const k = r();
    if (k < 0.35) return undefined;
    if (k < 0.45) return { mode: 'Exact' };
    if (k < 0.55)
      return {
        mode: 'Exact',
        configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Steady' }, weight: pick([1, 3, -2]) }],
      };
    if (k < 0.65)
      return {
        mode: 'Additive',
        configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Balance' }, weight: 0 }],
      };
    if (k < 0.73)
      return {
        mode: 'Exact',
        configurations: [
          {
            scoreCoordinate: {
              type: 'BuiltIn',
              builtIn: pick(['ResourceAllocatableCPU', 'ResourceAllocatableMemory']),
            },
          },
        ],
      };
    if (k < 0.8)
      return {
        mode: 'Exact',
        configurations: [
          { scoreCoordinate: { type: 'AddOn', addOn: { resourceName: 'demo', scoreName: 'cpu' } }, weight: 2 },
        ],
      };
    if (k < 0.85) return { configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Spread' } }] }; // unknown in v1.3.1
    if (k < 0.9) return { configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Spread' }, weight: 0 }] };
    return {
      mode: 'Additive',
      configurations: [{ scoreCoordinate: { type: 'BuiltIn', builtIn: 'Steady' }, weight: 2 }],
    };
  };
  const placements: PlacementCase[] = Array.from({ length: int(4, 7) }, (_, i) => {
    const spec: PlacementSpec = {};
    if (chance(0.4)) spec.clusterSets = some([...sets.map((s) => s.name), 'ghost'], 0.35);
    if (chance(0.7)) spec.predicates = Array.from({ length: int(1, 2) }, predicate);
    if (chance(0.5)) spec.tolerations = Array.from({ length: int(1, 2) }, tolerationOf);
    if (chance(0.5)) spec.numberOfClusters = int(0, 4);
    const p = policy();
    if (p) spec.prioritizerPolicy = p;
    return { name: `p${i}`, spec };
  });
  const joins = Array.from({ length: int(0, 2) }, (_, i) => ({ ...cluster(`a${i}-new`), taints: [] }));
  return { seed, clusters, sets, bindings, placements, joins, drains: int(0, 2) };
}

// ------------------------------------------------------------------------------------------ hub objects

function clusterObject(c: ClusterCase): RawObject {
  return {
    apiVersion: CLUSTER_API,
    kind: 'ManagedCluster',
    metadata: { name: c.name, labels: { ...c.labels, [MARKER]: 'true' } },
    spec: { hubAcceptsClient: true, ...(c.taints.length ? { taints: c.taints } : {}) },
  };
}

function setObject(s: SetCase): RawObject {
  const spec =
    s.type === 'implicit'
      ? undefined
      : s.type === 'exclusive'
        ? { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } }
        : s.type === 'nil-selector'
          ? { clusterSelector: { selectorType: 'LabelSelector' } }
          : { clusterSelector: { selectorType: 'LabelSelector', labelSelector: s.labelSelector } };
  return {
    apiVersion: SET_API,
    kind: 'ManagedClusterSet',
    metadata: { name: s.name, labels: { [MARKER]: 'true' } },
    ...(spec ? { spec } : {}),
  };
}

async function removeOurs(hub: RawClient): Promise<void> {
  for (const kind of ['ManagedCluster', 'ManagedClusterSet'] as const) {
    const api = kind === 'ManagedCluster' ? CLUSTER_API : SET_API;
    for (const o of await hub.list<RawObject>(api, kind, undefined, `${MARKER}=true`))
      await hub.delete(api, kind, undefined, o.metadata.name);
  }
}

async function setClaims(hub: RawClient, c: ClusterCase): Promise<void> {
  const clusterClaims = Object.entries(c.claims).map(([name, value]) => ({ name, value }));
  if (clusterClaims.length)
    await hub.mergePatch(CLUSTER_API, 'ManagedCluster', undefined, c.name, { status: { clusterClaims } }, 'status');
}

interface Run {
  /** Per phase: placement name to what the hub decided. */
  phases: Array<Map<string, PlacementOutcome>>;
  /** Per phase: the offline evaluation of each placement from the listed hub objects. */
  offline: Array<Map<string, PlacementEvaluation>>;
}

let runs = 0;
/** Namespaces are never finalized on envtest: each run of the file names its own. */
const RUN_ID = Date.now().toString(36).slice(-5);

/** Applies `c` to the hub, runs the real controller for both phases, evaluates offline; cleans up. */
async function runCase(hub: RawClient, hubKubeconfig: string, c: Case): Promise<Run> {
  const ns = `pdiff-${RUN_ID}-${++runs}-${c.seed}`;
  await removeOurs(hub);
  await hub.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const s of c.sets) await hub.create(setObject(s));
  for (const b of c.bindings)
    await hub.create({
      apiVersion: SET_API,
      kind: 'ManagedClusterSetBinding',
      metadata: { name: b, namespace: ns },
      spec: { clusterSet: b },
    });
  for (const cl of c.clusters) {
    await hub.create(clusterObject(cl));
    await setClaims(hub, cl);
  }
  for (const p of c.placements)
    await hub.create({
      apiVersion: PLACEMENT_API,
      kind: 'Placement',
      metadata: { name: p.name, namespace: ns },
      spec: p.spec,
    });

  const run: Run = { phases: [], offline: [] };
  const decide = async (phase: number): Promise<void> => {
    const controller = await startPlacementController(hubKubeconfig);
    try {
      const outcomes = new Map<string, PlacementOutcome>();
      for (const p of c.placements) {
        outcomes.set(
          p.name,
          await waitFor(
            `Placement ${ns}/${p.name} to be scheduled (phase ${phase + 1})`,
            async () => {
              const o = await placementOutcome(hub, ns, p.name);
              return isScheduled(o) && o;
            },
            { ...WAIT, describe: () => controller.tail(15) },
          ),
        );
      }
      run.phases.push(outcomes);
    } catch (error) {
      controller.keep();
      throw error;
    } finally {
      await controller.stop();
    }
    // The offline side reads what `pullfleet inventory pull` reads: every ManagedCluster and set on the hub.
    const clusters = await hub.list<ManagedClusterObject & RawObject>(CLUSTER_API, 'ManagedCluster');
    const sets = await hub.list<ManagedClusterSetObject & RawObject>(SET_API, 'ManagedClusterSet');
    const bindings = await hub.list<ManagedClusterSetBinding & RawObject>(SET_API, 'ManagedClusterSetBinding', ns);
    const inventory = inventoryFromHub('hub', clusters, sets);
    const bound = boundClusterSets(ns, bindings);
    run.offline.push(
      new Map(
        c.placements.map((p) => [
          p.name,
          explainPlacement(p.spec, inventory.clusters, bound, {
            ...(phase > 0 ? { currentDecisions: run.phases[phase - 1].get(p.name)!.clusters } : {}),
          }),
        ]),
      ),
    );
  };
  try {
    await decide(0);
    // Phase two: clusters that sort first join; decided clusters get a NoSelectIfNew taint.
    for (const cl of c.joins) {
      await hub.create(clusterObject(cl));
      await setClaims(hub, cl);
    }
    const decided = [...new Set([...run.phases[0].values()].flatMap((o) => o.clusters))].sort();
    for (const name of decided.slice(0, c.drains)) {
      const live = await hub.get<{ spec?: { taints?: unknown[] } }>(CLUSTER_API, 'ManagedCluster', undefined, name);
      const taints = [
        ...(live?.spec?.taints ?? []),
        { key: 'drain', effect: 'NoSelectIfNew', timeAdded: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
      ];
      await hub.mergePatch(CLUSTER_API, 'ManagedCluster', undefined, name, { spec: { taints } });
    }
    // Clear the conditions so the wait sees the next schedule, not the last one.
    for (const p of c.placements)
      await hub.mergePatch(PLACEMENT_API, 'Placement', ns, p.name, { status: { conditions: [] } }, 'status');
    await decide(1);
  } finally {
    for (const p of c.placements) await hub.delete(PLACEMENT_API, 'Placement', ns, p.name);
    for (const d of await hub.list<RawObject>(PLACEMENT_API, 'PlacementDecision', ns))
      await hub.delete(PLACEMENT_API, 'PlacementDecision', ns, d.metadata.name);
    for (const b of c.bindings) await hub.delete(SET_API, 'ManagedClusterSetBinding', ns, b);
    await removeOurs(hub);
  }
  return run;
}

// ------------------------------------------------------------------------------------------- comparing

interface Mismatch {
  placement: string;
  phase: number;
  text: string;
}

function compare(c: Case, run: Run): Mismatch[] {
  const out: Mismatch[] = [];
  run.phases.forEach((outcomes, phase) => {
    for (const p of c.placements) {
      const real = outcomes.get(p.name)!;
      const offline = run.offline[phase].get(p.name)!;
      const misconfiguredOnHub = real.conditions.some(
        (x) => x.type === 'PlacementMisconfigured' && x.status === 'True',
      );
      const say = (why: string) =>
        out.push({
          placement: p.name,
          phase,
          text: `${p.name} (phase ${phase + 1}): ${why}; hub [${real.clusters.join(', ')}]${misconfiguredOnHub ? ' misconfigured' : ''}, offline decisions [${offline.decisions.join(', ')}] feasible [${offline.feasible.join(', ')}]${offline.misconfigured ? ` misconfigured: ${offline.misconfigured}` : ''}${offline.unknowns.length ? ` unknowns: ${offline.unknowns.join('; ')}` : ''}`,
        });
      if (misconfiguredOnHub && !offline.misconfigured) say('the hub refuses the spec, offline does not');
      const same = real.clusters.join(',') === offline.decisions.join(',');
      if (offline.unknowns.length === 0) {
        if (!same) say('decisions differ');
        const selected = real.clusters.filter(
          (name) => !isHubItself(name, c.clusters.concat(c.joins).find((x) => x.name === name)?.labels),
        );
        if (same && selected.join(',') !== offline.selected.join(',')) say('selected spokes differ');
        continue;
      }
      const outside = real.clusters.filter((name) => !offline.feasible.includes(name));
      if (outside.length) say(`the hub decided [${outside.join(', ')}], which offline finds infeasible`);
      const onlyScores = offline.unknowns.every(
        (u) => !u.includes('tolerationSeconds') && !u.includes('stays selected'),
      );
      const want = Math.min(p.spec.numberOfClusters ?? Infinity, offline.feasible.length);
      if (onlyScores && real.clusters.length !== want)
        say(`the hub decided ${real.clusters.length} clusters, offline expects ${want}`);
    }
  });
  return out;
}

// ------------------------------------------------------------------------------------------- shrinking

function candidates(c: Case, placement: string): Case[] {
  const out: Case[] = [];
  const clone = (): Case => JSON.parse(JSON.stringify(c)) as Case;
  if (c.placements.length > 1) {
    const x = clone();
    x.placements = x.placements.filter((p) => p.name === placement);
    out.push(x);
  }
  if (c.joins.length || c.drains) {
    const x = clone();
    x.joins = [];
    x.drains = 0;
    out.push(x);
  }
  c.clusters.forEach((_, i) => {
    const x = clone();
    x.clusters.splice(i, 1);
    out.push(x);
  });
  c.bindings.forEach((_, i) => {
    const x = clone();
    x.bindings.splice(i, 1);
    out.push(x);
  });
  c.sets.forEach((s, i) => {
    if (c.bindings.includes(s.name)) return;
    const x = clone();
    x.sets.splice(i, 1);
    out.push(x);
  });
  const p = c.placements.findIndex((q) => q.name === placement);
  const spec = c.placements[p].spec;
  for (const field of ['clusterSets', 'predicates', 'tolerations', 'numberOfClusters', 'prioritizerPolicy'] as const) {
    if (spec[field] === undefined) continue;
    const x = clone();
    delete x.placements[p].spec[field];
    out.push(x);
    const list = spec[field];
    if (Array.isArray(list) && list.length > 1)
      list.forEach((_, i) => {
        const y = clone();
        (y.placements[p].spec[field] as unknown[]).splice(i, 1);
        out.push(y);
      });
  }
  c.clusters.forEach((cl, i) => {
    for (const part of ['labels', 'claims'] as const)
      for (const key of Object.keys(cl[part])) {
        const x = clone();
        delete x.clusters[i][part][key];
        out.push(x);
      }
    cl.taints.forEach((_, j) => {
      const x = clone();
      x.clusters[i].taints.splice(j, 1);
      out.push(x);
    });
  });
  return out;
}

async function shrink(
  hub: RawClient,
  hubKubeconfig: string,
  c: Case,
  first: Mismatch,
): Promise<{ c: Case; m: Mismatch }> {
  let budget = Number(process.env.PULLFLEET_PLACEMENT_SHRINK_RUNS ?? 40);
  let best = { c, m: first };
  // Greedy: take the first smaller case that still differs, and go on from the same place in the list of
  // the next case's candidates (those before it were tried and did not differ); stop after a full pass.
  let at = 0;
  let sinceProgress = 0;
  for (;;) {
    const list = candidates(best.c, first.placement);
    if (list.length === 0 || sinceProgress >= list.length || budget <= 0) break;
    const next = list[at % list.length];
    budget--;
    sinceProgress++;
    const m = compare(next, await runCase(hub, hubKubeconfig, next)).find(
      (x) => x.placement === first.placement && x.phase === first.phase,
    );
    if (m) {
      best = { c: next, m };
      sinceProgress = 0;
    } else at++;
  }
  return best;
}

/** A case as text, one object a line. */
function caseText(c: Case): string {
  const line = (x: unknown) => `  ${JSON.stringify(x)}`;
  return [
    `clusters:`,
    ...c.clusters.map(line),
    `sets:`,
    ...c.sets.map(line),
    `bindings: ${JSON.stringify(c.bindings)}`,
    `placements:`,
    ...c.placements.map(line),
    `phase two: joins ${JSON.stringify(c.joins)}, NoSelectIfNew taints on the first ${c.drains} decided clusters`,
  ].join('\n');
}

function seeds(): number[] {
  const spec = process.env.PULLFLEET_PLACEMENT_SEEDS;
  if (!spec) return CI_SEEDS;
  return spec.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map((x) => Number(x.trim()));
    return b === undefined ? [a] : Array.from({ length: b - a + 1 }, (_, i) => a + i);
  });
}

// ------------------------------------------------------------------------------------------------ suite

describeRealPlacement('offline placement evaluation against the real placement controller', (hubKubeconfig) => {
  const config = new KubeConfig();
  config.loadFromFile(hubKubeconfig);
  const hub = new RawClient(config);
  const coverage = {
    seeds: 0,
    clusters: 0,
    placements: 0,
    comparisons: 0,
    exact: 0,
    misconfigured: 0,
    withUnknowns: 0,
  };
  const started = Date.now();

  beforeAll(async () => {
    await preparePlacementHub(config);
  });

  afterAll(() => {
    process.stderr.write(
      `placement differential: ${coverage.seeds} seeds, ${coverage.clusters} clusters, ${coverage.placements} placements, ${coverage.comparisons} comparisons (${coverage.exact} exact, ${coverage.misconfigured} misconfigured, ${coverage.withUnknowns} with unknowns) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  });

  test.each(seeds())('seed %i: the hub decides what the offline evaluation says', async (seed) => {
    const c = generate(seed);
    const run = await runCase(hub, hubKubeconfig, c);
    coverage.seeds++;
    coverage.clusters += c.clusters.length + c.joins.length;
    coverage.placements += c.placements.length;
    for (const phase of run.offline)
      for (const e of phase.values()) {
        coverage.comparisons++;
        if (e.misconfigured) coverage.misconfigured++;
        else if (e.unknowns.length) coverage.withUnknowns++;
        else coverage.exact++;
      }
    if (process.env.PULLFLEET_PLACEMENT_DEBUG === '1')
      process.stderr.write(
        `seed ${seed}:\n${run.phases
          .flatMap((o, phase) =>
            c.placements.map((p) => {
              const e = run.offline[phase].get(p.name)!;
              return `  ${phase + 1}/${p.name} ${JSON.stringify(p.spec)}\n     hub [${o.get(p.name)!.clusters.join(',')}] offline [${e.decisions.join(',')}]${e.misconfigured ? ' misconfigured' : ''}${e.unknowns.length ? ` unknown: ${e.unknowns.join('; ')}` : ''}`;
            }),
          )
          .join('\n')}\n`,
      );
    expect(run.phases.map((phase) => phase.size)).toStrictEqual([c.placements.length, c.placements.length]);
    const mismatches = compare(c, run);
    if (mismatches.length === 0) return;
    const small = await shrink(hub, hubKubeconfig, c, mismatches[0]);
    throw new Error(
      [
        `seed ${seed}: ${mismatches.length} mismatch(es) between the offline evaluation and OCM v1.3.1's placement controller:`,
        ...mismatches.map((m) => `  - ${m.text}`),
        `smallest case still differing (${small.m.text}):`,
        caseText(small.c),
        `rerun: PULLFLEET_PLACEMENT_SEEDS=${seed} npm run test:ocm -- placement-differential`,
      ].join('\n'),
    );
  });
});
