/**
 * `pullfleet plan`: what a change to the fleet does, comparing the committed output with a fresh synth.
 * Deletions are judged by what they remove on spokes, following each work's deleteOption
 * (deletion.ts), and include the works the hub will delete at runtime for ApplicationSet-generated
 * apps (controller-deletions.ts) and the works of waved static apps, which the hub controller writes and deletes
 * (no rendered work shows them). Every change line carries a compact field diff (diff.ts).
 */
import { FLEET_APP_LABEL } from '../delivery/hub-application.js';
import { describeOutsideWaves, ROLLOUT_APP_LABEL, ROLLOUT_KIND_LABEL } from '../rollout/policy.js';
import { parseRolloutPolicy } from '../rollout/state.js';
import { diffFields, formatFieldChange, type FieldChange } from './diff.js';
import {
  deleteOptionOf,
  droppedManifestRemovals,
  droppedManifestsKept,
  resourceId,
  workDeletionRemovals,
  workResources,
  type SpokeRemoval,
} from './deletion.js';
import {
  AGENT_SPOKE_DESTINATION,
  ARGOCD_GROUP,
  ARGOCD_RESOURCES_FINALIZER,
  SPEC_HASH_ANNOTATION,
} from '../core/keys.js';
import { PLAN_STATE_FILE } from './state.js';
import { describeTransition } from '../delivery/transition.js';
import { buildManifestWork, isPullApplication, wrapProblem } from '../delivery/manifestwork.js';
import type { Application, ManifestWork } from '../core/types.js';
import { isStaticApplication } from '../reconcile/propagation.js';
import { isAgentModel } from '../delivery/classification.js';
import { isPruneProtected, isWavedApplication } from '../rollout/static.js';
import {
  compareRuntime,
  hubOfFile,
  type PlannedObject,
  type PlanSide,
  type RuntimeDeletion,
} from './controller-deletions.js';

export interface PlanChange {
  /** `<hub>|<target>|<group>/<kind>|<namespace>/<name>` identity. */
  readonly key: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly file: string;
  /** Changed objects: every field that differs. */
  readonly fields?: FieldChange[];
  /** What a removal or change leaves behind (an Orphan work's resources stay on the spoke). */
  readonly note?: string;
}

/** A ManifestWork removed or shrunk in a way that removes resources from its spoke. */
export interface SpokeDeletion {
  /** `<hub>/<cluster>/<work>`, plus `/<group>/<Kind>/<namespace>/<name>` for one manifest dropped from a work that stays. */
  readonly id: string;
  readonly hub: string;
  readonly cluster: string;
  readonly work: string;
  readonly file: string;
  /** The work's deleteOption policy (`Foreground` when unset). */
  readonly policy: string;
  /**
   * `work removed`, or `manifest dropped` from a work that stays; `agent told to delete`: a hub
   * Application routed to a managed argocd-agent is removed or routed elsewhere, so the principal tells
   * the agent to delete its copy (`work` is then empty and `policy` is `argocd-agent`).
   */
  readonly reason: 'work removed' | 'manifest dropped' | 'agent told to delete';
  readonly removals: SpokeRemoval[];
  /** Some removal prunes a workload (an Application with the resources finalizer, a Namespace). */
  readonly prunesWorkload: boolean;
  /**
   * The work is not rendered: the hub controller writes it for a waved static app, and deletes it (or
   * rewrites it without the manifest) at runtime once the hub applies the change. What changes on the hub,
   * and the hub Application whose removal or change causes it.
   */
  readonly runtime?: { readonly application: string; readonly app?: string; readonly cause: string };
}

export interface FleetPlan {
  /** The previous output folder was missing or held no objects: nothing to compare with. */
  readonly firstSynth: boolean;
  /** Direct deletions on spokes: works removed (or manifests dropped) whose deleteOption removes them. */
  readonly spokeDeletions: SpokeDeletion[];
  /** Works of ApplicationSet-generated apps the hub deletes at runtime after this change. */
  readonly runtimeDeletions: RuntimeDeletion[];
  /** Removed objects that delete nothing on a spoke (including Orphan works). */
  readonly removed: PlanChange[];
  readonly changed: PlanChange[];
  readonly added: PlanChange[];
  /** Facts a reviewer should know (no plan state in the previous output, apps that stay). */
  readonly notes: string[];
  /** Spokes moving between delivery models: the step, the reason and what comes next. */
  readonly transitions: string[];
  /** Changed apps rolled out in waves: the waves, in order, with the spokes of each. */
  readonly rollouts: string[];
}

function identity(entry: PlannedObject): PlanChange {
  const o = entry.object;
  const apiVersion = o.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const hub = hubOfFile(entry.file);
  const folder = entry.file.split('/')[1];
  const target = folder === 'bootstrap' || folder === 'spokes' ? entry.file : 'hub';
  const kind = o.kind ?? '';
  const name = o.metadata?.name ?? '';
  const namespace = o.metadata?.namespace;
  return {
    key: `${hub}|${target}|${group}/${kind}|${namespace ?? ''}/${name}`,
    kind,
    name,
    file: entry.file,
    ...(namespace ? { namespace } : {}),
  };
}

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const isHubWork = (c: PlanChange) => c.kind === 'ManifestWork' && !c.key.split('|')[1].includes('/');

/**
 * The managed agent a hub Application is routed to: an Application in a hub folder whose
 * `spec.destination.name` names a cluster (not `in-cluster`), as pullfleet renders agent-managed apps and
 * apps standing by for a move back to basic. Undefined for anything else.
 */
function agentRoute(file: string, object: unknown): string | undefined {
  const o = object as { apiVersion?: string; kind?: string; spec?: { destination?: { name?: unknown } } } | undefined;
  if (
    !o ||
    o.kind !== 'Application' ||
    !(o.apiVersion ?? '').startsWith(`${ARGOCD_GROUP}/`) ||
    file.split('/')[1] !== 'hub'
  )
    return undefined;
  const name = o.spec?.destination?.name;
  return typeof name === 'string' && name.trim() !== '' && name !== AGENT_SPOKE_DESTINATION ? name.trim() : undefined;
}

/** Compares the committed output (`before`) with a fresh synth (`after`). */
export function planFleet(before: PlanSide, after: PlanSide): FleetPlan {
  const old = indexObjects(before.objects);
  const next = indexObjects(after.objects);
  const plan: FleetPlan = {
    firstSynth: old.size === 0,
    spokeDeletions: [],
    runtimeDeletions: [],
    removed: [],
    changed: [],
    added: [],
    notes: [],
    rollouts: [],
    transitions: [],
  };
  planTransitions(plan, before, after);
  planAddedAndChanged(plan, old, next);
  planAgentDeletions(plan, old, next);
  // Waved static apps: the hub controller writes their works, so no rendered work shows what it deletes.
  const byController = controllerWorkDeletions(old, next);
  plan.spokeDeletions.push(...byController.deletions);
  planRemoved(plan, old, next, byController.listed);
  planInventoryChanges(plan, before, after);
  planRuntime(plan, before, after);
  plan.added.sort(byKey);
  plan.changed.sort(byKey);
  plan.removed.sort(byKey);
  plan.spokeDeletions.sort(byId);
  plan.rollouts.push(...rolloutLines(next, new Set([...plan.changed, ...plan.added].map((c) => c.key))));
  return plan;
}

function indexObjects(list: readonly PlannedObject[]): Indexed {
  const map: Indexed = new Map();
  for (const e of list) {
    const change = identity(e);
    map.set(change.key, { change, object: e.object });
  }
  return map;
}

/** Spokes whose delivery model changes between the two plan states. */
function planTransitions(plan: FleetPlan, before: PlanSide, after: PlanSide): void {
  for (const [hub, state] of after.states ?? []) {
    const prior = new Map((before.states?.get(hub)?.spokes ?? []).map((s) => [s.name, s]));
    for (const spoke of state.spokes) {
      const line = describeTransition(spoke.name, prior.get(spoke.name), spoke);
      if (line) plan.transitions.push(`${hub}: ${line}`);
    }
  }
}

/** Objects only the new output has, and objects whose fields change (with what a work's change drops). */
function planAddedAndChanged(plan: FleetPlan, old: Indexed, next: Indexed): void {
  for (const [key, entry] of next) {
    const prior = old.get(key);
    if (!prior) {
      plan.added.push(entry.change);
      continue;
    }
    // The payload's spec hash follows its spec: the spec lines say what changed, the hash line would only repeat it.
    const fields = diffFields(prior.object, entry.object).filter(
      (change) => !change.path.endsWith(`.annotations.${SPEC_HASH_ANNOTATION}`),
    );
    if (fields.length === 0) continue;
    let note: string | undefined;
    if (isHubWork(entry.change)) {
      const hub = hubOfFile(entry.change.file);
      const cluster = entry.change.namespace ?? '';
      const policy = deleteOptionOf(prior.object as never).policy;
      for (const removal of droppedManifestRemovals(prior.object as never, entry.object as never)) {
        plan.spokeDeletions.push({
          id: `${hub}/${cluster}/${entry.change.name}/${resourceId(removal)}`,
          hub,
          cluster,
          work: entry.change.name,
          file: entry.change.file,
          policy,
          reason: 'manifest dropped',
          removals: [removal],
          prunesWorkload: removal.prunesWorkload,
        });
      }
      const kept = droppedManifestsKept(prior.object as never, entry.object as never);
      if (kept.length)
        note = `deleteOption ${policy}: ${kept.map((r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`).join(', ')} dropped from the work but left on the spoke`;
    }
    plan.changed.push({ ...entry.change, fields, ...(note ? { note } : {}) });
  }
}

/**
 * Hub Applications routed to a managed agent that are removed, or stop naming that agent: the principal
 * tells the agent to delete its copy, with the finalizers it was created with.
 */
function planAgentDeletions(plan: FleetPlan, old: Indexed, next: Indexed): void {
  for (const [key, entry] of old) {
    const agent = agentRoute(entry.change.file, entry.object);
    if (!agent) continue;
    const now = next.get(key);
    if (now && agentRoute(now.change.file, now.object) === agent) continue;
    const hub = hubOfFile(entry.change.file);
    const meta = (entry.object as { metadata?: { finalizers?: unknown } }).metadata;
    const prunes = Array.isArray(meta?.finalizers) && meta.finalizers.includes(ARGOCD_RESOURCES_FINALIZER);
    const where = `${entry.change.namespace ? `${entry.change.namespace}/` : ''}${entry.change.name}`;
    const why = now ? `no longer routed to the agent (destination.name "${agent}" changed)` : 'removed';
    plan.spokeDeletions.push({
      id: `${hub}/${agent}/argocd-agent/${where}`,
      hub,
      cluster: agent,
      work: '',
      file: entry.change.file,
      policy: 'argocd-agent',
      reason: 'agent told to delete',
      removals: [
        {
          group: ARGOCD_GROUP,
          kind: 'Application',
          name: entry.change.name,
          ...(entry.change.namespace ? { namespace: entry.change.namespace } : {}),
          prunesWorkload: prunes,
          effect: `hub Application ${where} ${why}: the principal tells the argocd-agent on spoke ${agent} to delete its copy${now ? ' (if the agent still runs there)' : ''} (${prunes ? 'prunes its workload: resources finalizer' : 'its workload stays: no resources finalizer'})`,
        },
      ],
      prunesWorkload: prunes,
    });
  }
}

/** Objects only the old output has: what deleting each does, on the hub and on the spokes. */
function planRemoved(plan: FleetPlan, old: Indexed, next: Indexed, listedByController: ReadonlySet<string>): void {
  // Where the controller writes a work for a waved hub Application of the new output (it takes over one left there).
  const takenOver = new Set<string>();
  for (const entry of next.values()) {
    const work = controllerWorkOf(entry.change.file, entry.object);
    if (work) takenOver.add(renderedWorkKey(hubOfFile(entry.change.file), work));
  }

  for (const [key, entry] of old) {
    if (next.has(key)) continue;
    if (!isHubWork(entry.change)) {
      if (!agentRoute(entry.change.file, entry.object) && !listedByController.has(key)) plan.removed.push(entry.change);
      continue;
    }
    if (isPruneProtected(entry.object as Parameters<typeof isPruneProtected>[0])) {
      // Step 2 of making an app waved: Argo CD leaves the work in place, and the controller takes it over,
      // when a waved hub Application of the new output delivers at the same place. Otherwise (the app was
      // removed or changed before its rollout began) nothing takes it over and nothing deletes it.
      plan.removed.push({
        ...entry.change,
        note: takenOver.has(key)
          ? 'rendered with Argo CD Prune=false: Argo CD leaves it on the hub; the controller takes it over for the rollout of a waved app, and nothing leaves the spoke'
          : `rendered with Argo CD Prune=false: Argo CD leaves it on the hub, but no waved hub Application takes it over any more, so nothing deletes it and it keeps delivering to spoke ${entry.change.namespace ?? ''}: delete ManifestWork ${entry.change.namespace ?? ''}/${entry.change.name} by hand to remove what it delivers (its deleteOption decides)`,
      });
      continue;
    }
    const removals = workDeletionRemovals(entry.object as never);
    const policy = deleteOptionOf(entry.object as never).policy;
    if (removals.length === 0) {
      const count = workResources(entry.object as never).length;
      plan.removed.push({
        ...entry.change,
        note: `deleteOption ${policy}: its ${count} resource${count === 1 ? '' : 's'} stay on the spoke`,
      });
      continue;
    }
    const hub = hubOfFile(entry.change.file);
    const cluster = entry.change.namespace ?? '';
    plan.spokeDeletions.push({
      id: `${hub}/${cluster}/${entry.change.name}`,
      hub,
      cluster,
      work: entry.change.name,
      file: entry.change.file,
      policy,
      reason: 'work removed',
      removals,
      prunesWorkload: removals.some((r) => r.prunesWorkload),
    });
  }
}

/** Spokes whose inventory (labels, claims, taints, sets) changed: no object shows it, the plan state does. */
function planInventoryChanges(plan: FleetPlan, before: PlanSide, after: PlanSide): void {
  for (const [hub, state] of after.states ?? []) {
    const prior = before.states?.get(hub);
    if (!prior) continue;
    const was = new Map(prior.spokes.map((s) => [s.name, s]));
    for (const spoke of state.spokes) {
      const old = was.get(spoke.name);
      if (!old) continue;
      const fields = diffFields(old, spoke);
      if (fields.length)
        plan.changed.push({
          key: `${hub}|inventory|Spoke|/${spoke.name}`,
          kind: 'Spoke',
          name: spoke.name,
          file: `${hub}/${PLAN_STATE_FILE}`,
          fields,
        });
    }
  }
}

/** Deletions the controller makes at runtime, and what plan cannot know about them. */
function planRuntime(plan: FleetPlan, before: PlanSide, after: PlanSide): void {
  const runtime = compareRuntime(before, after);
  plan.runtimeDeletions.push(...runtime.deletions);
  plan.notes.push(...runtime.kept, ...runtime.unknowns);
  if (!plan.firstSynth) {
    for (const hub of runtime.hubsWithoutState) {
      plan.notes.push(
        `the previous output of hub ${hub} has no plan-state.json (written before pullfleet recorded spoke labels): spokes that still exist are evaluated with their new labels, removed spokes are assumed selected; synthesize and commit to record it`,
      );
    }
  }
}

type Indexed = Map<string, { change: PlanChange; object: unknown }>;

/**
 * The work the hub controller keeps for a hub Application of a waved static app, as it writes it (the same
 * `buildManifestWork` the controller calls); undefined for any other object, and for an app the controller
 * cannot wrap (it never wrote a work for it).
 */
function controllerWorkOf(file: string, object: unknown): ManifestWork | undefined {
  const app = object as Application | undefined;
  if (
    !app?.metadata ||
    app.kind !== 'Application' ||
    !(app.apiVersion ?? '').startsWith(`${ARGOCD_GROUP}/`) ||
    file.split('/')[1] !== 'hub' ||
    !isWavedApplication(app) ||
    !isPullApplication(app) ||
    wrapProblem(app)
  )
    return undefined;
  return buildManifestWork(app);
}

/** The identity key of a ManifestWork rendered into the hub folder of `hub` (see {@link identity}). */
const renderedWorkKey = (hub: string, work: ManifestWork) => identity({ file: `${hub}/hub/works`, object: work }).key;

/**
 * What the hub controller deletes on spokes for waved static apps once the change is applied, mirroring
 * its propagation (src/model/reconcile/propagation.ts): a hub Application that is removed (the hub's Argo CD
 * prunes it; dropped from a spoke, renamed, the app or the spoke removed) has its work deleted at once,
 * whatever the rollout's waves; one that opts out (pull label gone) too; one that stays has its work
 * rewritten, and manifests the rewrite drops are deleted like those of a rendered work. A hub Application
 * that turns static with a rendered work at the same place hands it over (compared like a rewrite); turned
 * static without one, its work is left alone; one that turns agent-model is handed off orphan-first. `listed`: the keys of removed hub Applications whose work
 * deletion is listed (they are not "removed, nothing deleted").
 */
function controllerWorkDeletions(old: Indexed, next: Indexed): { deletions: SpokeDeletion[]; listed: Set<string> } {
  const deletions: SpokeDeletion[] = [];
  const listed = new Set<string>();
  for (const [key, entry] of old) {
    const work = controllerWorkOf(entry.change.file, entry.object);
    if (!work) continue;
    const hub = hubOfFile(entry.change.file);
    const cluster = work.metadata.namespace ?? '';
    const application = `${entry.change.namespace ?? ''}/${entry.change.name}`;
    const fleetApp = (entry.object as Application).metadata.labels?.[FLEET_APP_LABEL];
    const now = next.get(key);
    const nowApp = now?.object as Application | undefined;
    // Now delivered by an argocd-agent: the controller hands the work off orphan-first, deleting nothing.
    if (nowApp && isAgentModel(nowApp)) continue;
    const rendered = next.get(renderedWorkKey(hub, work))?.object as ManifestWork | undefined;
    const rewritten =
      nowApp && isPullApplication(nowApp) && !isStaticApplication(nowApp) && !wrapProblem(nowApp)
        ? buildManifestWork(nowApp)
        : undefined;
    const replacement = rendered ?? rewritten;
    const samePlace =
      replacement !== undefined &&
      replacement.metadata.namespace === work.metadata.namespace &&
      replacement.metadata.name === work.metadata.name;
    const policy = deleteOptionOf(work).policy;
    const runtime = (cause: string) => ({ application, ...(fleetApp ? { app: fleetApp } : {}), cause });
    if (samePlace) {
      const cause = `hub Application ${application} changed: the hub controller rewrites its work`;
      for (const removal of droppedManifestRemovals(work, replacement)) {
        deletions.push({
          id: `${hub}/${cluster}/${work.metadata.name}/${resourceId(removal)}`,
          hub,
          cluster,
          work: work.metadata.name,
          file: now!.change.file,
          policy,
          reason: 'manifest dropped',
          removals: [removal],
          prunesWorkload: removal.prunesWorkload,
          runtime: runtime(cause),
        });
      }
      continue;
    }
    // Turned static with no work rendered in its place: the controller leaves the work it wrote.
    if (nowApp && !replacement && isPullApplication(nowApp)) continue;
    const removals = workDeletionRemovals(work);
    if (removals.length === 0) continue;
    const cause = !nowApp
      ? `hub Application ${application}${fleetApp ? ` of waved app ${fleetApp}` : ''} removed`
      : !isPullApplication(nowApp)
        ? `hub Application ${application} no longer carries the pull label`
        : `hub Application ${application} now targets spoke ${replacement?.metadata.namespace ?? '?'}`;
    if (!nowApp) listed.add(key);
    deletions.push({
      id: `${hub}/${cluster}/${work.metadata.name}`,
      hub,
      cluster,
      work: work.metadata.name,
      file: entry.change.file,
      policy,
      reason: 'work removed',
      removals,
      prunesWorkload: removals.some((r) => r.prunesWorkload),
      runtime: runtime(cause),
    });
  }
  return { deletions, listed };
}

/** The waves of every changed waved app and RollingSync ApplicationSet of the new output, in order. */
function rolloutLines(next: Indexed, changed: ReadonlySet<string>): string[] {
  const lines: string[] = [];
  const changedApps = new Set<string>();
  for (const [key, entry] of next) {
    if (!changed.has(key)) continue;
    const labels = (entry.object as { metadata?: { labels?: Record<string, string> } }).metadata?.labels ?? {};
    const app = labels[ROLLOUT_APP_LABEL] ?? labels[FLEET_APP_LABEL];
    if (app) changedApps.add(`${hubOfFile(entry.change.file)}|${app}`);
  }
  const seconds = (n: number) => (n >= 60 && n % 60 === 0 ? `${n / 60} min` : `${n} s`);
  for (const entry of next.values()) {
    const object = entry.object as {
      kind?: string;
      metadata: { name: string; namespace?: string; labels?: Record<string, string> };
      data?: Record<string, string>;
      spec?: { strategy?: { type?: string; rollingSync?: { steps?: unknown[] } } };
    };
    const hub = hubOfFile(entry.change.file);
    if (object.kind === 'ConfigMap' && object.metadata.labels?.[ROLLOUT_KIND_LABEL] === 'policy') {
      const { policy } = parseRolloutPolicy(object);
      if (!policy || !changedApps.has(`${hub}|${policy.app}`)) continue;
      const waves = policy.waves.map((wave, i) => {
        const limit = wave.maxInFlight
          ? 'count' in wave.maxInFlight
            ? `, ${wave.maxInFlight.count} at a time`
            : `, ${wave.maxInFlight.percent}% at a time`
          : '';
        const soak = wave.soakSeconds > 0 ? `, soak ${seconds(wave.soakSeconds)}` : '';
        const shared = Object.entries(wave.alsoSelectedBy ?? {}).map(
          ([cluster, later]) => `${cluster} (also selected by ${later.map((w) => `"${w}"`).join(', ')})`,
        );
        return (
          `    ${i + 1}. ${wave.name}: ${wave.clusters.join(', ')}${limit}${soak}` +
          (shared.length
            ? `\n       a spoke belongs to the first wave that selects it: ${shared.join(', ')} stay${shared.length === 1 ? 's' : ''} in ${wave.name}`
            : '') +
          Object.entries(wave.outside ?? {})
            .map(([cluster, why]) => `\n       ${describeOutsideWaves(policy.app, wave.name, cluster, why)}`)
            .join('')
        );
      });
      lines.push(
        [
          `${hub}: app ${policy.app} (static, rolled out by the controller; halts after ${policy.maxFailures} failed cluster${policy.maxFailures === 1 ? '' : 's'}, deadline ${seconds(policy.progressDeadlineSeconds)}, then ${policy.onFailure === 'rollback' ? 'rolls back' : 'pauses'}):`,
          ...waves,
        ].join('\n'),
      );
    }
    if (object.kind === 'ApplicationSet' && object.spec?.strategy?.type === 'RollingSync') {
      const app = object.metadata.labels?.[FLEET_APP_LABEL] ?? object.metadata.name;
      if (!changedApps.has(`${hub}|${app}`)) continue;
      const steps = (object.spec.strategy.rollingSync?.steps ?? []) as Array<{
        matchExpressions?: Array<{ operator?: string; values?: string[] }>;
        maxUpdate?: number | string;
      }>;
      const described = steps.map((step, i) => {
        const expression = step.matchExpressions?.[0];
        const who =
          expression?.operator === 'NotIn'
            ? `every other cluster the placement selects${expression.values?.length ? ` (not ${expression.values.join(', ')})` : ''}`
            : (expression?.values ?? []).join(', ');
        const limit = step.maxUpdate !== undefined ? `, ${step.maxUpdate} at a time` : '';
        return `    ${i + 1}. ${who}${limit}`;
      });
      lines.push(
        [
          `${hub}: ApplicationSet ${object.metadata.namespace ?? ''}/${object.metadata.name} (Argo CD RollingSync):`,
          ...described,
        ].join('\n'),
      );
    }
  }
  return lines.sort();
}

/** Every deletion id a plan holds (spoke and runtime), sorted. */
export function deletionIds(plan: FleetPlan): string[] {
  return [...plan.spokeDeletions.map((d) => d.id), ...plan.runtimeDeletions.map((d) => d.id)].sort();
}

function patternMatches(pattern: string, id: string): boolean {
  const expression = new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return expression.test(id);
}

export interface Acknowledgement {
  /** Deletion ids covered by an acknowledgement. */
  readonly acknowledged: string[];
  /** Deletion ids nobody acknowledged (what `--fail-on-deletions` fails on). */
  readonly unacknowledged: string[];
  /** Acknowledgements that match no deletion of this plan (stale: the deletion is gone or the id is misspelt). */
  readonly unused: string[];
}

/**
 * Matches acknowledgements (exact deletion ids; `*` matches any run of characters, so
 * `hub/east/*` covers every deletion on spoke east) against the plan's deletions.
 */
export function acknowledge(plan: FleetPlan, patterns: readonly string[]): Acknowledgement {
  const ids = deletionIds(plan);
  const used = new Set<string>();
  const acknowledged: string[] = [];
  const unacknowledged: string[] = [];
  for (const id of ids) {
    const hit = patterns.find((p) => patternMatches(p, id));
    if (hit !== undefined) {
      acknowledged.push(id);
      for (const p of patterns) if (patternMatches(p, id)) used.add(p);
    } else unacknowledged.push(id);
  }
  return { acknowledged, unacknowledged, unused: patterns.filter((p) => !used.has(p)) };
}

/**
 * Reads an acknowledgements file: one deletion id (or `*` pattern) per line; blank lines and text after
 * `#` are ignored.
 */
export function parseAcknowledgements(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.length > 0);
}

/** Changed fields shown per object before "… and N more". */
export const MAX_FIELDS_PER_CHANGE = 12;

function describe(c: PlanChange): string {
  return `${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name}  (${c.file})`;
}

export interface FormatOptions {
  /** Name of the compared output folder in the text. @default 'dist/' */
  readonly outdir?: string;
  readonly acknowledgement?: Acknowledgement;
}

/** The plan as text for a terminal or a pull-request comment. */
export function formatPlan(plan: FleetPlan, options: FormatOptions = {}): string {
  const outdir = options.outdir ?? 'dist/';
  const acked = new Set(options.acknowledgement?.acknowledged ?? []);
  const mark = (id: string) => (acked.has(id) ? ' (acknowledged)' : '');
  const lines: string[] = [];
  if (plan.firstSynth) {
    const works = plan.added.filter(isHubWork).length;
    const files = new Set(plan.added.map((c) => c.file)).size;
    lines.push(
      `first synth: ${outdir} is missing or empty, so there is nothing to compare with and nothing on a spoke is deleted.`,
    );
    lines.push(`synth will write ${plan.added.length} objects (${works} ManifestWorks) in ${files} files.`);
    return `${lines.join('\n')}\n`;
  }
  if (plan.transitions.length) {
    lines.push(`MOVES BETWEEN DELIVERY MODELS (${plan.transitions.length}):`);
    for (const t of plan.transitions) lines.push(`  > ${t}`);
  }
  if (plan.rollouts.length) {
    lines.push(`ROLLOUTS (${plan.rollouts.length}): the changed apps reach their spokes in these waves, in order`);
    for (const r of plan.rollouts) lines.push(`  > ${r}`);
  }
  if (plan.spokeDeletions.length) {
    const byAgent = plan.spokeDeletions.some((d) => d.reason === 'agent told to delete')
      ? " (or argocd-agent, on the principal's word)"
      : '';
    const byController = plan.spokeDeletions.some((d) => d.runtime)
      ? ' (for waved static apps, once the hub controller deletes or rewrites their works)'
      : '';
    lines.push(
      `DELETIONS ON SPOKES (${plan.spokeDeletions.length}): the work agent${byAgent} removes these from the spoke when the hub applies the change${byController}`,
    );
    for (const d of plan.spokeDeletions) {
      if (d.reason === 'agent told to delete') {
        lines.push(`  - ${d.id}${mark(d.id)}: ${d.removals.map((r) => r.effect).join(', ')}  (${d.file})`);
        continue;
      }
      if (d.runtime) {
        const what =
          d.reason === 'work removed'
            ? `the hub controller deletes ManifestWork ${d.cluster}/${d.work} at runtime, at once, whatever the waves`
            : `the hub controller rewrites ManifestWork ${d.cluster}/${d.work} without it at runtime`;
        lines.push(
          `  - ${d.id}${mark(d.id)}: ${d.runtime.cause}: ${what} (deleteOption ${d.policy}), deleting ${d.removals.map((r) => r.effect).join(', ')}  (${d.file})`,
        );
        continue;
      }
      const what =
        d.reason === 'work removed'
          ? `ManifestWork ${d.cluster}/${d.work} removed`
          : `dropped from ManifestWork ${d.cluster}/${d.work}`;
      lines.push(
        `  - ${d.id}${mark(d.id)}: ${what} (deleteOption ${d.policy}) deletes ${d.removals.map((r) => r.effect).join(', ')}  (${d.file})`,
      );
    }
  }
  if (plan.runtimeDeletions.length) {
    lines.push(
      `RUNTIME DELETIONS (${plan.runtimeDeletions.length}): the hub deletes these ApplicationSet-generated apps and their works once the change is applied`,
    );
    for (const d of plan.runtimeDeletions) lines.push(`  - ${d.id}${mark(d.id)}: ${d.text}`);
  }
  if (plan.removed.length) {
    lines.push(`removed (${plan.removed.length}): nothing on a spoke is deleted`);
    for (const c of plan.removed) lines.push(`  - ${describe(c)}${c.note ? `: ${c.note}` : ''}`);
  }
  if (plan.changed.length) {
    lines.push(`changed (${plan.changed.length}):`);
    for (const c of plan.changed) {
      lines.push(`  ~ ${describe(c)}`);
      const fields = c.fields ?? [];
      for (const f of fields.slice(0, MAX_FIELDS_PER_CHANGE)) lines.push(`      ${formatFieldChange(f)}`);
      if (fields.length > MAX_FIELDS_PER_CHANGE)
        lines.push(`      … and ${fields.length - MAX_FIELDS_PER_CHANGE} more fields`);
      if (c.note) lines.push(`      note: ${c.note}`);
    }
  }
  if (plan.added.length) {
    lines.push(`added (${plan.added.length}):`);
    for (const c of plan.added) lines.push(`  + ${describe(c)}`);
  }
  for (const note of plan.notes) lines.push(`note: ${note}`);
  for (const p of options.acknowledgement?.unused ?? [])
    lines.push(`note: acknowledgement "${p}" matches no deletion in this plan`);
  const total =
    plan.spokeDeletions.length +
    plan.runtimeDeletions.length +
    plan.removed.length +
    plan.changed.length +
    plan.added.length;
  if (total === 0) lines.push(`no changes: ${outdir} matches the fleet`);
  else {
    lines.push(
      `summary: ${plan.spokeDeletions.length} deletions on spokes, ${plan.runtimeDeletions.length} runtime deletions, ${plan.removed.length} other removals, ${plan.changed.length} changed, ${plan.added.length} added`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The plan for bots (`pullfleet plan -o json`). */
export function planJson(
  plan: FleetPlan,
  options: { outdir?: string; acknowledgement?: Acknowledgement } = {},
): Record<string, unknown> {
  const ack = options.acknowledgement ?? acknowledge(plan, []);
  const acked = new Set(ack.acknowledged);
  return {
    outdir: options.outdir ?? 'dist',
    firstSynth: plan.firstSynth,
    counts: {
      spokeDeletions: plan.spokeDeletions.length,
      runtimeDeletions: plan.runtimeDeletions.length,
      removed: plan.removed.length,
      changed: plan.changed.length,
      added: plan.added.length,
      unacknowledgedDeletions: ack.unacknowledged.length,
    },
    spokeDeletions: plan.spokeDeletions.map((d) => ({ ...d, acknowledged: acked.has(d.id) })),
    runtimeDeletions: plan.runtimeDeletions.map((d) => ({ ...d, acknowledged: acked.has(d.id) })),
    removed: plan.removed,
    changed: plan.changed,
    added: plan.added,
    notes: plan.notes,
    transitions: plan.transitions,
    unusedAcknowledgements: ack.unused,
  };
}
