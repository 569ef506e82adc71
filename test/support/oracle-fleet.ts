/**
 * The fleets and day-2 edits of the plan oracle (test/oracle/, `npm run test:oracle`), as data: a seeded
 * generator draws a small one-hub fleet (3 to 6 spokes from a pool of 8, with ring and env labels, cluster
 * sets, a taint; Placements; static PullApplications, some rolled out in controller waves; PullApplicationSets;
 * controller flags) and a sequence of edits. An edit is a plain object naming what it changes, so a failing
 * sequence can be shrunk (edits dropped, the fleet simplified) and printed as a case to paste into
 * test/oracle/cases.ts. An edit that no longer applies (its spoke or app is gone) is skipped; an edit synth
 * refuses is part of the sequence on purpose (the oracle then checks that nothing was written or deleted).
 *
 * The fleet is rendered with pullfleet's own constructs ({@link buildOracleFleet}); names are logical (spoke
 * `c1`, app `web`) and made real per run by {@link OracleNames} (`<run>-c1`, the seed's Argo CD namespace).
 */
import {
  AppSource,
  ClusterSet,
  DeletionOrder,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Rollout,
  Spoke,
} from '../../src/constructs/index.js';

/** The spoke slots a fleet draws from: one real OCM work agent runs per slot. */
export const ORACLE_POOL = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'] as const;
/** The taint of a tainted spoke, and what a tolerating Placement tolerates. */
export const ORACLE_TAINT = { key: 'pullfleet.io/oracle-dedicated', value: 'yes', effect: 'NoSelect' } as const;
/** The taint OCM puts on a cluster whose agent stopped reporting. */
export const UNREACHABLE_TAINT = { key: 'cluster.open-cluster-management.io/unreachable', effect: 'NoSelect' } as const;

export interface OracleSpoke {
  readonly id: string;
  readonly ring: 'canary' | 'main';
  readonly env: 'prod' | 'dev';
  /** The cluster set it belongs to. @default - none */
  readonly set?: string;
  readonly tainted?: boolean;
  /** Unreachable in the pulled inventory (OCM's `cluster.open-cluster-management.io/unreachable` taint). */
  readonly unreachable?: boolean;
  /** Labelled `gitops=agent`: the fleet's agent-managed GitOpsCluster selects it (on an ACM hub). */
  readonly agent?: boolean;
  /**
   * Labelled `gitops=autonomous`: the fleet's agent-autonomous GitOpsCluster selects it (see
   * {@link OracleFleet.autonomous}); its own Argo CD syncs its folder `<hub>/spokes/<cluster>/`.
   * @default false
   */
  readonly autonomous?: boolean;
  /** `spoke.moveTo(...)` in the fleet: the model it moves to. */
  readonly moving?: OracleModel;
}

/** The delivery models a spoke of an oracle fleet runs or moves to. */
export type OracleModel = 'agent-managed' | 'agent-autonomous' | 'basic';

/** The model a spoke runs (not the one it moves to). */
export function modelOf(spoke: OracleSpoke): OracleModel {
  return spoke.agent ? 'agent-managed' : spoke.autonomous ? 'agent-autonomous' : 'basic';
}

export interface OraclePlacement {
  readonly name: string;
  /** Cluster sets selected from (each bound to the Argo CD namespace). */
  readonly sets: readonly string[];
  /** Selects spokes of this env. @default - every spoke of the sets */
  readonly env?: 'prod' | 'dev';
  readonly tolerate?: boolean;
  readonly count?: number;
}

export interface OracleApp {
  readonly name: string;
  /** Static targets (spoke ids); otherwise `placement`. */
  readonly spokes?: readonly string[];
  readonly placement?: string;
  /** Rolled out by the controller in two waves: ring=canary, then the rest. */
  readonly waved?: boolean;
  readonly revision: string;
  readonly prune?: boolean;
}

export interface OracleAppSet {
  readonly name: string;
  readonly placement: string;
  readonly revision: string;
  readonly prune?: boolean;
  /**
   * Rolled out by Argo CD's RollingSync in two steps (ring=canary, then the rest), deleted in reverse step
   * order (`deletionOrder: Reverse`).
   * @default false
   */
  readonly waved?: boolean;
}

export interface OracleController {
  readonly resourceSummaries: boolean;
  readonly workers: number;
}

export interface OracleFleet {
  /**
   * An ACM hub with GitOpsCluster `agents` (agent-managed, on the spokes labelled `gitops=agent`).
   * @default false
   */
  readonly acm?: boolean;
  /**
   * An OCM hub with GitOpsCluster `agents` (the OCM `v1alpha1` one: its Placement gets the tolerations
   * OCM's GitOpsCluster controller adds). Without `acm` or this, an OCM hub without agents.
   * @default false
   */
  readonly ocmAgents?: boolean;
  /**
   * A GitOpsCluster `autonomous` (agent-autonomous, ACM's on an ACM hub, else OCM's) selecting the spokes
   * labelled `gitops=autonomous`; each syncs its own folder from the fleet repository.
   * @default false
   */
  readonly autonomous?: boolean;
  readonly sets: readonly string[];
  readonly spokes: readonly OracleSpoke[];
  readonly placements: readonly OraclePlacement[];
  readonly apps: readonly OracleApp[];
  readonly appSets: readonly OracleAppSet[];
  readonly controller: OracleController;
}

export type OracleEdit =
  | { readonly op: 'addSpoke'; readonly spoke: OracleSpoke }
  | { readonly op: 'removeSpoke'; readonly id: string }
  | { readonly op: 'renameSpoke'; readonly id: string; readonly to: string }
  | { readonly op: 'ring'; readonly id: string; readonly ring: 'canary' | 'main' }
  | { readonly op: 'env'; readonly id: string; readonly env: 'prod' | 'dev' }
  | { readonly op: 'taint'; readonly id: string; readonly on: boolean }
  | { readonly op: 'spokeSet'; readonly id: string; readonly set?: string }
  | { readonly op: 'addSet'; readonly name: string }
  | { readonly op: 'removeSet'; readonly name: string }
  | { readonly op: 'renameSet'; readonly name: string; readonly to: string }
  | { readonly op: 'addPlacement'; readonly placement: OraclePlacement }
  | { readonly op: 'removePlacement'; readonly name: string }
  | { readonly op: 'renamePlacement'; readonly name: string; readonly to: string }
  | { readonly op: 'placementEnv'; readonly name: string; readonly env?: 'prod' | 'dev' }
  | { readonly op: 'placementTolerate'; readonly name: string; readonly on: boolean }
  | { readonly op: 'placementCount'; readonly name: string; readonly count?: number }
  | { readonly op: 'addApp'; readonly app: OracleApp }
  | { readonly op: 'removeApp'; readonly name: string }
  | { readonly op: 'renameApp'; readonly name: string; readonly to: string }
  | { readonly op: 'appRevision'; readonly name: string; readonly revision: string }
  | { readonly op: 'appWaves'; readonly name: string; readonly on: boolean }
  | { readonly op: 'appPrune'; readonly name: string; readonly on: boolean }
  | { readonly op: 'appSpokes'; readonly name: string; readonly spokes: readonly string[] }
  | { readonly op: 'addAppSet'; readonly appSet: OracleAppSet }
  | { readonly op: 'removeAppSet'; readonly name: string }
  | { readonly op: 'renameAppSet'; readonly name: string; readonly to: string }
  | { readonly op: 'appSetRevision'; readonly name: string; readonly revision: string }
  | { readonly op: 'appSetPlacement'; readonly name: string; readonly placement: string }
  /** Adds (`on`) or drops the ApplicationSet's RollingSync waves. */
  | { readonly op: 'appSetWaves'; readonly name: string; readonly on: boolean }
  | { readonly op: 'controller'; readonly controller: OracleController }
  | { readonly op: 'unreachable'; readonly id: string; readonly on: boolean }
  /**
   * Starts a move: the GitOpsCluster of the model selects the spoke (or the one of its model stops), and
   * `moveTo` names the model. Between the two agent models a spoke goes through basic.
   */
  | { readonly op: 'moveTo'; readonly id: string; readonly model: OracleModel }
  /** Synthesizes again, unchanged: a moving spoke takes its next step. */
  | { readonly op: 'moveStep' }
  /** Synthesizes again, unchanged: a change made in two synths takes its second (fixed cases only). */
  | { readonly op: 'synthAgain' }
  /** Drops `moveTo` (synth refuses while the move is not done). */
  | { readonly op: 'finishMove'; readonly id: string };

/** A fleet and its edits: a generated seed, a shrunk failure, or a fixed case. */
export interface OracleCase {
  readonly name: string;
  readonly fleet: OracleFleet;
  readonly edits: readonly OracleEdit[];
  /**
   * The order in which the hub's Argo CD creates a commit's hub Applications: `shuffle` (seeded by `seed`),
   * `reverse` (the last wave's first) or `forward`.
   * @default 'shuffle'
   */
  readonly argoOrder?: 'shuffle' | 'reverse' | 'forward';
  /** The seed the case was drawn from (and its Argo CD order). @default 0 */
  readonly seed?: number;
  /**
   * A mismatch the oracle found that is not fixed yet: what it is and whose code it is in. The case runs as
   * `test.failing` (it fails the stage once it passes, so the mark is removed with the fix).
   * @default - none: the case must pass
   */
  readonly knownFailure?: string;
  /** How long a step may take to settle. @default 120000 */
  readonly settleTimeoutMs?: number;
}

/** mulberry32: a small deterministic PRNG, enough to draw fleets and edits from a seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)];
const chance = (random: () => number, p: number) => random() < p;

const APP_NAMES = ['web', 'shop', 'api', 'blog', 'docs', 'mail'] as const;
const APPSET_NAMES = ['podinfo', 'metrics', 'logs', 'cache'] as const;
const PLACEMENT_NAMES = ['all', 'prod', 'dev', 'edge'] as const;
const SET_NAMES = ['blue', 'green', 'red'] as const;
const REVISIONS = ['v1', 'v2', 'v3', 'v4'] as const;

/** Draws a fleet of 3 to 6 spokes with a few apps and ApplicationSets. */
export function generateFleet(random: () => number): OracleFleet {
  const sets = chance(random, 0.4) ? ['blue', 'green'] : ['blue'];
  const spokeCount = 3 + Math.floor(random() * 4);
  const spokes: OracleSpoke[] = ORACLE_POOL.slice(0, spokeCount).map((id, i) => ({
    id,
    ring: i === 0 || chance(random, 0.2) ? 'canary' : 'main',
    env: chance(random, 0.7) ? 'prod' : 'dev',
    set: chance(random, 0.85) ? pick(random, sets) : sets[0],
    ...(chance(random, 0.15) ? { tainted: true } : {}),
  }));
  const placements: OraclePlacement[] = [{ name: 'all', sets: [...sets] }];
  if (chance(random, 0.6)) placements.push({ name: 'prod', sets: [...sets], env: 'prod' });
  const apps: OracleApp[] = [];
  const appCount = 1 + Math.floor(random() * 2);
  for (const name of APP_NAMES.slice(0, appCount)) {
    const byPlacement = chance(random, 0.3);
    apps.push({
      name,
      ...(byPlacement
        ? { placement: pick(random, placements).name }
        : { spokes: spokes.filter(() => chance(random, 0.7)).map((s) => s.id) }),
      ...(chance(random, 0.5) ? { waved: true } : {}),
      revision: 'v1',
      ...(chance(random, 0.3) ? { prune: true } : {}),
    });
  }
  const appSets: OracleAppSet[] = [];
  if (chance(random, 0.7))
    appSets.push({
      name: 'podinfo',
      placement: pick(random, placements).name,
      revision: 'v1',
      ...(chance(random, 0.3) ? { prune: true } : {}),
      ...(chance(random, 0.5) ? { waved: true } : {}),
    });
  // A third of the fleets run an ACM hub with an agent-managed GitOpsCluster, one spoke already on it.
  const agents = chance(random, 0.35) ? (chance(random, 0.5) ? { acm: true } : { ocmAgents: true }) : {};
  if (agents.acm || agents.ocmAgents) spokes[spokes.length - 1] = { ...spokes[spokes.length - 1], agent: true };
  // A quarter run an agent-autonomous GitOpsCluster too, with the last basic spoke on it half the time.
  const autonomous = chance(random, 0.25);
  if (autonomous && chance(random, 0.5)) {
    const i = spokes.length - (agents.acm || agents.ocmAgents ? 2 : 1);
    spokes[i] = { ...spokes[i], autonomous: true };
  }
  return {
    ...agents,
    ...(autonomous ? { autonomous } : {}),
    sets,
    spokes,
    placements,
    apps,
    appSets,
    controller: { resourceSummaries: chance(random, 0.5), workers: 2 },
  };
}

/** Draws one edit that (usually) applies to `fleet`. */
export function generateEdit(random: () => number, fleet: OracleFleet): OracleEdit {
  const spoke = () => pick(random, fleet.spokes).id;
  const app = () => pick(random, fleet.apps.length ? fleet.apps : [{ name: 'web' } as OracleApp]).name;
  const appSet = () => pick(random, fleet.appSets.length ? fleet.appSets : [{ name: 'podinfo' } as OracleAppSet]).name;
  const placement = () => (fleet.placements.length ? pick(random, fleet.placements).name : 'all');
  const freeSpoke = () => ORACLE_POOL.find((id) => !fleet.spokes.some((s) => s.id === id));
  const freeName = (names: readonly string[], used: readonly { name: string }[]) =>
    names.find((n) => !used.some((u) => u.name === n));
  const revision = () => pick(random, REVISIONS);
  const kinds = [
    'addSpoke',
    'removeSpoke',
    'renameSpoke',
    'ring',
    'ring',
    'env',
    'env',
    'taint',
    'spokeSet',
    'addSet',
    'removeSet',
    'renameSet',
    'addPlacement',
    'removePlacement',
    'renamePlacement',
    'placementEnv',
    'placementTolerate',
    'placementCount',
    'addApp',
    'removeApp',
    'renameApp',
    'appRevision',
    'appRevision',
    'appWaves',
    'appPrune',
    'appSpokes',
    'addAppSet',
    'removeAppSet',
    'renameAppSet',
    'appSetRevision',
    'appSetPlacement',
    'appSetWaves',
    'appSetWaves',
    'controller',
  ] as const;
  const moving = fleet.spokes.filter((s) => s.moving);
  const agents = fleet.acm || fleet.ocmAgents;
  if ((agents || fleet.autonomous) && moving.length && chance(random, 0.6))
    return chance(random, 0.75) ? { op: 'moveStep' } : { op: 'finishMove', id: pick(random, moving).id };
  if ((agents || fleet.autonomous) && chance(random, 0.2)) {
    const s = pick(random, fleet.spokes);
    const to: OracleModel =
      modelOf(s) !== 'basic'
        ? 'basic'
        : agents && (!fleet.autonomous || chance(random, 0.5))
          ? 'agent-managed'
          : 'agent-autonomous';
    return { op: 'moveTo', id: s.id, model: to };
  }
  if (chance(random, 0.04)) return { op: 'unreachable', id: spoke(), on: chance(random, 0.6) };
  const kind = pick(random, kinds);
  switch (kind) {
    case 'addSpoke': {
      const id = freeSpoke() ?? 'c8';
      return {
        op: 'addSpoke',
        spoke: {
          id,
          ring: chance(random, 0.3) ? 'canary' : 'main',
          env: chance(random, 0.6) ? 'prod' : 'dev',
          set: pick(random, fleet.sets),
        },
      };
    }
    case 'removeSpoke':
      return { op: 'removeSpoke', id: spoke() };
    case 'renameSpoke':
      return { op: 'renameSpoke', id: spoke(), to: freeSpoke() ?? 'c8' };
    case 'ring':
      return { op: 'ring', id: spoke(), ring: chance(random, 0.5) ? 'canary' : 'main' };
    case 'env':
      return { op: 'env', id: spoke(), env: chance(random, 0.5) ? 'prod' : 'dev' };
    case 'taint':
      return { op: 'taint', id: spoke(), on: chance(random, 0.5) };
    case 'spokeSet':
      return { op: 'spokeSet', id: spoke(), ...(chance(random, 0.9) ? { set: pick(random, fleet.sets) } : {}) };
    case 'addSet':
      return { op: 'addSet', name: SET_NAMES.find((n) => !fleet.sets.includes(n)) ?? 'red' };
    case 'removeSet':
      return { op: 'removeSet', name: pick(random, fleet.sets) };
    case 'renameSet':
      return {
        op: 'renameSet',
        name: pick(random, fleet.sets),
        to: SET_NAMES.find((n) => !fleet.sets.includes(n)) ?? 'red',
      };
    case 'addPlacement':
      return {
        op: 'addPlacement',
        placement: {
          name: freeName(PLACEMENT_NAMES, fleet.placements) ?? 'edge',
          sets: fleet.sets.filter(() => chance(random, 0.7)),
          ...(chance(random, 0.5) ? { env: pick(random, ['prod', 'dev'] as const) } : {}),
          ...(chance(random, 0.3) ? { tolerate: true } : {}),
        },
      };
    case 'removePlacement':
      return { op: 'removePlacement', name: placement() };
    case 'renamePlacement':
      return { op: 'renamePlacement', name: placement(), to: freeName(PLACEMENT_NAMES, fleet.placements) ?? 'edge' };
    case 'placementEnv':
      return {
        op: 'placementEnv',
        name: placement(),
        ...(chance(random, 0.7) ? { env: pick(random, ['prod', 'dev'] as const) } : {}),
      };
    case 'placementTolerate':
      return { op: 'placementTolerate', name: placement(), on: chance(random, 0.5) };
    case 'placementCount':
      return {
        op: 'placementCount',
        name: placement(),
        ...(chance(random, 0.6) ? { count: 1 + Math.floor(random() * 3) } : {}),
      };
    case 'addApp': {
      const byPlacement = chance(random, 0.4);
      return {
        op: 'addApp',
        app: {
          name: freeName(APP_NAMES, fleet.apps) ?? 'mail',
          ...(byPlacement
            ? { placement: placement() }
            : { spokes: fleet.spokes.filter(() => chance(random, 0.6)).map((s) => s.id) }),
          ...(chance(random, 0.5) ? { waved: true } : {}),
          revision: revision(),
          ...(chance(random, 0.3) ? { prune: true } : {}),
        },
      };
    }
    case 'removeApp':
      return { op: 'removeApp', name: app() };
    case 'renameApp':
      return { op: 'renameApp', name: app(), to: freeName(APP_NAMES, fleet.apps) ?? 'mail' };
    case 'appRevision':
      return { op: 'appRevision', name: app(), revision: revision() };
    case 'appWaves':
      return { op: 'appWaves', name: app(), on: chance(random, 0.5) };
    case 'appPrune':
      return { op: 'appPrune', name: app(), on: chance(random, 0.5) };
    case 'appSpokes':
      return { op: 'appSpokes', name: app(), spokes: fleet.spokes.filter(() => chance(random, 0.6)).map((s) => s.id) };
    case 'addAppSet':
      return {
        op: 'addAppSet',
        appSet: {
          name: freeName(APPSET_NAMES, fleet.appSets) ?? 'cache',
          placement: placement(),
          revision: revision(),
          ...(chance(random, 0.3) ? { prune: true } : {}),
          ...(chance(random, 0.5) ? { waved: true } : {}),
        },
      };
    case 'removeAppSet':
      return { op: 'removeAppSet', name: appSet() };
    case 'renameAppSet':
      return { op: 'renameAppSet', name: appSet(), to: freeName(APPSET_NAMES, fleet.appSets) ?? 'cache' };
    case 'appSetRevision':
      return { op: 'appSetRevision', name: appSet(), revision: revision() };
    case 'appSetPlacement':
      return { op: 'appSetPlacement', name: appSet(), placement: placement() };
    case 'appSetWaves':
      return { op: 'appSetWaves', name: appSet(), on: chance(random, 0.6) };
    case 'controller':
      return {
        op: 'controller',
        controller: { resourceSummaries: !fleet.controller.resourceSummaries, workers: chance(random, 0.5) ? 1 : 2 },
      };
  }
}

/** A generated case: `edits` edits drawn one after the other, each against the fleet the ones before make. */
export function generateCase(seed: number, edits: number): OracleCase {
  const random = rng(seed);
  // The first fleet must synthesize: draw again until it does (its edits may then be refused).
  let fleet = generateFleet(random);
  for (let i = 0; i < 20 && buildOracleFleet(fleet, PLACEHOLDER_NAMES).problems().length > 0; i++)
    fleet = generateFleet(random);
  const list: OracleEdit[] = [];
  let current = fleet;
  for (let i = 0; i < edits; i++) {
    // an edit that does not apply is drawn again (a few times), so most steps change something
    let edit = generateEdit(random, current);
    for (let tries = 0; tries < 5 && !applyEdit(current, edit); tries++) edit = generateEdit(random, current);
    list.push(edit);
    current = applyEdit(current, edit) ?? current;
  }
  return { name: `seed ${seed}`, fleet, edits: list, seed };
}

const without = <T>(list: readonly T[], drop: (t: T) => boolean): T[] => list.filter((t) => !drop(t));
const replace = <T>(list: readonly T[], match: (t: T) => boolean, fn: (t: T) => T): T[] =>
  list.map((t) => (match(t) ? fn(t) : t));

/**
 * The fleet after `edit`, or undefined when the edit does not apply (what it names is gone, or it changes
 * nothing). Never throws: what synth makes of the result is the oracle's to find out.
 */
export function applyEdit(fleet: OracleFleet, edit: OracleEdit): OracleFleet | undefined {
  const hasSpoke = (id: string) => fleet.spokes.some((s) => s.id === id);
  const app = (name: string) => fleet.apps.find((a) => a.name === name);
  const appSet = (name: string) => fleet.appSets.find((a) => a.name === name);
  const placement = (name: string) => fleet.placements.find((p) => p.name === name);
  const spokeEdit = (id: string, fn: (s: OracleSpoke) => OracleSpoke) =>
    hasSpoke(id) ? { ...fleet, spokes: replace(fleet.spokes, (s) => s.id === id, fn) } : undefined;
  const placementEdit = (name: string, fn: (p: OraclePlacement) => OraclePlacement) =>
    placement(name) ? { ...fleet, placements: replace(fleet.placements, (p) => p.name === name, fn) } : undefined;
  const appEdit = (name: string, fn: (a: OracleApp) => OracleApp) =>
    app(name) ? { ...fleet, apps: replace(fleet.apps, (a) => a.name === name, fn) } : undefined;
  const appSetEdit = (name: string, fn: (a: OracleAppSet) => OracleAppSet) =>
    appSet(name) ? { ...fleet, appSets: replace(fleet.appSets, (a) => a.name === name, fn) } : undefined;
  const placementUsed = (name: string) =>
    fleet.apps.some((a) => a.placement === name) || fleet.appSets.some((a) => a.placement === name);
  let next: OracleFleet | undefined;
  switch (edit.op) {
    case 'addSpoke':
      next =
        hasSpoke(edit.spoke.id) || !fleet.sets.includes(edit.spoke.set ?? fleet.sets[0])
          ? undefined
          : { ...fleet, spokes: [...fleet.spokes, edit.spoke] };
      break;
    case 'removeSpoke':
      next =
        hasSpoke(edit.id) && fleet.spokes.length > 1
          ? {
              ...fleet,
              spokes: without(fleet.spokes, (s) => s.id === edit.id),
              apps: fleet.apps.map((a) => (a.spokes ? { ...a, spokes: without(a.spokes, (s) => s === edit.id) } : a)),
            }
          : undefined;
      break;
    case 'renameSpoke':
      next =
        hasSpoke(edit.id) && !hasSpoke(edit.to)
          ? {
              ...fleet,
              spokes: replace(
                fleet.spokes,
                (s) => s.id === edit.id,
                (s) => ({ ...s, id: edit.to }),
              ),
              apps: fleet.apps.map((a) =>
                a.spokes ? { ...a, spokes: a.spokes.map((s) => (s === edit.id ? edit.to : s)) } : a,
              ),
            }
          : undefined;
      break;
    case 'ring':
      next = spokeEdit(edit.id, (s) => ({ ...s, ring: edit.ring }));
      break;
    case 'env':
      next = spokeEdit(edit.id, (s) => ({ ...s, env: edit.env }));
      break;
    case 'taint':
      next = spokeEdit(edit.id, (s) => {
        const { tainted: _, ...rest } = s;
        return edit.on ? { ...rest, tainted: true } : rest;
      });
      break;
    case 'spokeSet':
      next =
        edit.set === undefined || fleet.sets.includes(edit.set)
          ? spokeEdit(edit.id, (s) => {
              const { set: _, ...rest } = s;
              return edit.set ? { ...rest, set: edit.set } : rest;
            })
          : undefined;
      break;
    case 'addSet':
      next = fleet.sets.includes(edit.name) ? undefined : { ...fleet, sets: [...fleet.sets, edit.name] };
      break;
    case 'removeSet':
      next =
        fleet.sets.includes(edit.name) && fleet.sets.length > 1
          ? {
              ...fleet,
              sets: without(fleet.sets, (s) => s === edit.name),
              spokes: fleet.spokes.map((s) => {
                if (s.set !== edit.name) return s;
                const { set: _, ...rest } = s;
                return rest;
              }),
              placements: fleet.placements.map((p) => ({ ...p, sets: without(p.sets, (s) => s === edit.name) })),
            }
          : undefined;
      break;
    case 'renameSet': {
      const rename = (s: string) => (s === edit.name ? edit.to : s);
      next =
        fleet.sets.includes(edit.name) && !fleet.sets.includes(edit.to)
          ? {
              ...fleet,
              sets: fleet.sets.map(rename),
              spokes: fleet.spokes.map((s) => (s.set ? { ...s, set: rename(s.set) } : s)),
              placements: fleet.placements.map((p) => ({ ...p, sets: p.sets.map(rename) })),
            }
          : undefined;
      break;
    }
    case 'addPlacement':
      next = placement(edit.placement.name)
        ? undefined
        : {
            ...fleet,
            placements: [
              ...fleet.placements,
              { ...edit.placement, sets: edit.placement.sets.filter((s) => fleet.sets.includes(s)) },
            ],
          };
      break;
    case 'removePlacement':
      next =
        placement(edit.name) && !placementUsed(edit.name)
          ? { ...fleet, placements: without(fleet.placements, (p) => p.name === edit.name) }
          : undefined;
      break;
    case 'renamePlacement': {
      const rename = (p?: string) => (p === edit.name ? edit.to : p);
      next =
        placement(edit.name) && !placement(edit.to)
          ? {
              ...fleet,
              placements: replace(
                fleet.placements,
                (p) => p.name === edit.name,
                (p) => ({ ...p, name: edit.to }),
              ),
              apps: fleet.apps.map((a) => (a.placement ? { ...a, placement: rename(a.placement) } : a)),
              appSets: fleet.appSets.map((a) => ({ ...a, placement: rename(a.placement)! })),
            }
          : undefined;
      break;
    }
    case 'placementEnv':
      next = placementEdit(edit.name, (p) => {
        const { env: _, ...rest } = p;
        return edit.env ? { ...rest, env: edit.env } : rest;
      });
      break;
    case 'placementTolerate':
      next = placementEdit(edit.name, (p) => {
        const { tolerate: _, ...rest } = p;
        return edit.on ? { ...rest, tolerate: true } : rest;
      });
      break;
    case 'placementCount':
      next = placementEdit(edit.name, (p) => {
        const { count: _, ...rest } = p;
        return edit.count ? { ...rest, count: edit.count } : rest;
      });
      break;
    case 'addApp':
      next =
        app(edit.app.name) || (edit.app.placement !== undefined && !placement(edit.app.placement))
          ? undefined
          : {
              ...fleet,
              apps: [
                ...fleet.apps,
                edit.app.spokes ? { ...edit.app, spokes: edit.app.spokes.filter(hasSpoke) } : edit.app,
              ],
            };
      break;
    case 'removeApp':
      next = app(edit.name) ? { ...fleet, apps: without(fleet.apps, (a) => a.name === edit.name) } : undefined;
      break;
    case 'renameApp':
      next = app(edit.to) ? undefined : appEdit(edit.name, (a) => ({ ...a, name: edit.to }));
      break;
    case 'appRevision':
      next = appEdit(edit.name, (a) => ({ ...a, revision: edit.revision }));
      break;
    case 'appWaves':
      next = appEdit(edit.name, (a) => {
        const { waved: _, ...rest } = a;
        return edit.on ? { ...rest, waved: true } : rest;
      });
      break;
    case 'appPrune':
      next = appEdit(edit.name, (a) => {
        const { prune: _, ...rest } = a;
        return edit.on ? { ...rest, prune: true } : rest;
      });
      break;
    case 'appSpokes':
      next = app(edit.name)?.spokes
        ? appEdit(edit.name, (a) => ({ ...a, spokes: edit.spokes.filter(hasSpoke) }))
        : undefined;
      break;
    case 'addAppSet':
      next =
        appSet(edit.appSet.name) || !placement(edit.appSet.placement)
          ? undefined
          : { ...fleet, appSets: [...fleet.appSets, edit.appSet] };
      break;
    case 'removeAppSet':
      next = appSet(edit.name) ? { ...fleet, appSets: without(fleet.appSets, (a) => a.name === edit.name) } : undefined;
      break;
    case 'renameAppSet':
      next = appSet(edit.to) ? undefined : appSetEdit(edit.name, (a) => ({ ...a, name: edit.to }));
      break;
    case 'appSetRevision':
      next = appSetEdit(edit.name, (a) => ({ ...a, revision: edit.revision }));
      break;
    case 'appSetPlacement':
      next = placement(edit.placement)
        ? appSetEdit(edit.name, (a) => ({ ...a, placement: edit.placement }))
        : undefined;
      break;
    case 'appSetWaves':
      next = appSetEdit(edit.name, (a) => {
        const { waved: _, ...rest } = a;
        return edit.on ? { ...rest, waved: true } : rest;
      });
      break;
    case 'controller':
      next = { ...fleet, controller: edit.controller };
      break;
    case 'unreachable':
      next = spokeEdit(edit.id, (s) => {
        const { unreachable: _, ...rest } = s;
        return edit.on ? { ...rest, unreachable: true } : rest;
      });
      break;
    case 'moveTo': {
      // the target model's GitOpsCluster must be there; between the agent models a spoke goes through basic
      const runs = (model: OracleModel) =>
        model === 'basic' || (model === 'agent-managed' ? !!(fleet.acm || fleet.ocmAgents) : !!fleet.autonomous);
      const from = fleet.spokes.find((s) => s.id === edit.id && !s.moving);
      next =
        from &&
        runs(edit.model) &&
        modelOf(from) !== edit.model &&
        (modelOf(from) === 'basic' || edit.model === 'basic')
          ? spokeEdit(edit.id, (s) => {
              const { agent: _, autonomous: __, ...rest } = s;
              return {
                ...rest,
                ...(edit.model === 'agent-managed' ? { agent: true } : {}),
                ...(edit.model === 'agent-autonomous' ? { autonomous: true } : {}),
                moving: edit.model,
              };
            })
          : undefined;
      break;
    }
    case 'synthAgain':
      return { ...fleet };
    case 'moveStep':
      // the same fleet, synthesized again: the output changes (the next step), the fleet does not
      return fleet.spokes.some((s) => s.moving) ? { ...fleet } : undefined;
    case 'finishMove':
      next = fleet.spokes.some((s) => s.id === edit.id && s.moving)
        ? spokeEdit(edit.id, (s) => {
            const { moving: _, ...rest } = s;
            return rest;
          })
        : undefined;
      break;
  }
  if (!next || JSON.stringify(next) === JSON.stringify(fleet)) return undefined;
  return next;
}

/** How the logical names of a case become real ones on the servers. */
export interface OracleNames {
  /** The hub's Argo CD namespace (the seed's own; also the spoke Applications' namespace). */
  readonly argoNamespace: string;
  /** The ManagedCluster name of a spoke id. */
  cluster(id: string): string;
  /** The ManagedClusterSet name of a set. */
  clusterSet(set: string): string;
}

/** Names for checking a fleet offline. */
const PLACEHOLDER_NAMES: OracleNames = {
  argoNamespace: 'oracle',
  cluster: (id) => `oracle-${id}`,
  clusterSet: (set) => `oracle-${set}`,
};

/** The fleet repository an agent-autonomous spoke syncs its folder from (played by the oracle's world). */
export const ORACLE_FLEET_REPOSITORY = 'https://git.example.com/fleet.git';

/** The hub's folder under the output (and the first part of every deletion id). */
export const ORACLE_HUB = 'hub';

/**
 * The fleet as pullfleet's constructs build it. Throws what a construct refuses; `synth()` on the result
 * throws what validation refuses.
 */
export function buildOracleFleet(
  spec: OracleFleet,
  names: OracleNames,
  options: { outdir?: string; previousOutput?: string } = {},
): Fleet {
  const fleet = new Fleet({
    outdir: options.outdir ?? '/nonexistent/oracle-never-written',
    ...(options.previousOutput ? { previousOutput: options.previousOutput } : {}),
    onProgress: () => undefined,
  });
  const hub = new Hub(fleet, ORACLE_HUB, {
    argoNamespace: names.argoNamespace,
    controller: { enabled: false },
    resourceSummaries: spec.controller.resourceSummaries,
    ...(spec.acm ? { flavor: HubFlavor.ACM } : {}),
  });
  const sets = new Map(spec.sets.map((s) => [s, new ClusterSet(hub, names.clusterSet(s))]));
  const spokes = new Map(
    spec.spokes.map((s) => [
      s.id,
      new Spoke(hub, names.cluster(s.id), {
        ...(s.set && sets.get(s.set) ? { clusterSet: sets.get(s.set)! } : {}),
        labels: {
          ring: s.ring,
          env: s.env,
          ...(s.agent ? { gitops: 'agent' } : {}),
          ...(s.autonomous ? { gitops: 'autonomous' } : {}),
        },
        ...(s.tainted || s.unreachable
          ? {
              taints: [
                ...(s.tainted ? [{ ...ORACLE_TAINT }] : []),
                ...(s.unreachable ? [{ ...UNREACHABLE_TAINT }] : []),
              ],
            }
          : {}),
      }),
    ]),
  );
  const models = {
    basic: DeliveryModel.BASIC,
    'agent-managed': DeliveryModel.AGENT_MANAGED,
    'agent-autonomous': DeliveryModel.AGENT_AUTONOMOUS,
  } as const;
  for (const s of spec.spokes) if (s.moving) spokes.get(s.id)!.moveTo(models[s.moving]);
  if (spec.acm || spec.ocmAgents) {
    const agents = new Placement(hub, 'agents', {
      clusterSets: [...sets.values()],
      predicates: [{ labels: { gitops: 'agent' } }],
    });
    if (spec.acm) GitOpsCluster.acm(hub, 'agents', { placement: agents, model: DeliveryModel.AGENT_MANAGED });
    else GitOpsCluster.ocm(hub, 'agents', { placement: agents, model: DeliveryModel.AGENT_MANAGED });
  }
  if (spec.autonomous) {
    const autonomous = new Placement(hub, 'autonomous', {
      clusterSets: [...sets.values()],
      predicates: [{ labels: { gitops: 'autonomous' } }],
    });
    const props = {
      placement: autonomous,
      model: DeliveryModel.AGENT_AUTONOMOUS,
      spokeFolderRepository: { repoURL: ORACLE_FLEET_REPOSITORY },
    } as const;
    if (spec.acm) GitOpsCluster.acm(hub, 'autonomous', props);
    else GitOpsCluster.ocm(hub, 'autonomous', props);
  }
  const placements = new Map(
    spec.placements.map((p) => [
      p.name,
      new Placement(hub, p.name, {
        clusterSets: p.sets.flatMap((s) => (sets.get(s) ? [sets.get(s)!] : [])),
        ...(p.env ? { predicates: [{ labels: { env: p.env } }] } : {}),
        ...(p.tolerate ? { tolerations: [{ key: ORACLE_TAINT.key, operator: 'Exists' }] } : {}),
        ...(p.count !== undefined ? { numberOfClusters: p.count } : {}),
      }),
    ]),
  );
  const placementOf = (name: string) => {
    const p = placements.get(name);
    if (!p) throw new Error(`oracle fleet: placement ${name} is not in the fleet`);
    return p;
  };
  for (const a of spec.apps) {
    new PullApplication(hub, a.name, {
      source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: a.name, targetRevision: a.revision }),
      destinationNamespace: a.name,
      ...(a.placement !== undefined
        ? { placement: placementOf(a.placement) }
        : { spokes: (a.spokes ?? []).flatMap((id) => (spokes.get(id) ? [spokes.get(id)!] : [])) }),
      ...(a.prune ? { pruneOnDelete: true } : {}),
      ...(a.waved
        ? {
            rollout: Rollout.waves([
              { name: 'canary', labels: { ring: 'canary' } },
              { name: 'rest', rest: true },
            ]),
          }
        : {}),
    });
  }
  for (const a of spec.appSets) {
    new PullApplicationSet(hub, a.name, {
      source: AppSource.helm({ repoURL: 'https://charts.example.com', chart: a.name, targetRevision: a.revision }),
      destinationNamespace: a.name,
      placement: placementOf(a.placement),
      ...(a.prune ? { pruneOnDelete: true } : {}),
      ...(a.waved
        ? {
            rollout: Rollout.waves(
              [
                { name: 'canary', labels: { ring: 'canary' } },
                { name: 'rest', rest: true },
              ],
              { deletionOrder: DeletionOrder.REVERSE },
            ),
          }
        : {}),
    });
  }
  return fleet;
}

/** An edit as one short line, for failure messages. */
export function describeEdit(edit: OracleEdit): string {
  const { op, ...rest } = edit;
  return `${op} ${JSON.stringify(rest)}`;
}

/** A case as TypeScript to paste into test/oracle/cases.ts. */
export function caseSource(c: OracleCase): string {
  return `  {\n    name: ${JSON.stringify(c.name)},\n${c.seed !== undefined ? `    seed: ${c.seed},\n` : ''}${c.argoOrder ? `    argoOrder: '${c.argoOrder}',\n` : ''}    fleet: ${JSON.stringify(c.fleet)},\n    edits: [\n${c.edits.map((e) => `      ${JSON.stringify(e)},`).join('\n')}\n    ],\n  },`;
}
