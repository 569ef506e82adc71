/**
 * Runtime deletions for `pullfleet plan`: works the hub will delete after a change is applied, though no
 * rendered ManifestWork disappears. The applicationset-controller generates one hub Application per
 * spoke a Placement selects and the pullfleet controller wraps each into a ManifestWork, so removing an
 * ApplicationSet, or a spoke leaving the placement it follows (labels, claims, taints, cluster sets,
 * bindings, the placement's own spec, numberOfClusters, the spoke itself), deletes those apps and
 * their works. Both sides are evaluated offline with the same placement evaluation synth uses.
 */
import { applicationSetPlacements, CLUSTER_NAME_PARAM } from '../delivery/appset.js';
import {
  AGENT_SPOKE_DESTINATION,
  ARGOCD_RESOURCES_FINALIZER,
  ARGOCD_SECRET_TYPE_LABEL,
  MANAGED_CLUSTER_ANNOTATION,
  STAND_BY_ANNOTATION,
} from '../core/keys.js';
import { parseBool } from '../core/names.js';
import { manifestWorkName } from '../core/names.js';
import { explainPlacement, type InventoryCluster, type PlacementSpec } from '../placement/placement.js';
import { diffFields, formatFieldChange } from './diff.js';
import type { PlanState } from './state.js';

/** An object of a synthesized tree with the file it came from (`<hub>/hub/...`, `<hub>/bootstrap/...`). */
export interface PlannedObject {
  readonly file: string;
  readonly object: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };
}

/** One side of a plan: the objects of an output folder and the plan state of each hub in it. */
export interface PlanSide {
  readonly objects: readonly PlannedObject[];
  /** Plan state per hub; a hub without one is evaluated with the other side's spoke inventory. */
  readonly states?: ReadonlyMap<string, PlanState>;
}

/** A ManifestWork the controller keeps for an ApplicationSet-generated hub Application. */
export interface RuntimeWork {
  readonly hub: string;
  readonly cluster: string;
  /** The work's name; empty for an app routed to a managed agent, which has none. */
  readonly work: string;
  readonly app: string;
  /** `<namespace>/<name>` of the ApplicationSet. */
  readonly applicationSet: string;
  readonly placement: string;
  readonly prunesWorkload: boolean;
  /** The spoke's labels were unknown (no plan state): assumed selected so no deletion is missed. */
  readonly assumed: boolean;
  /** The template's works stand by (`pullfleet.io/stand-by`): deleting one leaves the spoke Application. */
  readonly standBy?: boolean;
  /**
   * The generated app is routed to a managed argocd-agent (`destination.name`): when it goes, the
   * principal tells the agent to delete its copy on the spoke, work or not.
   */
  readonly agentRouted?: boolean;
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function hubOfFile(file: string): string {
  return file.split('/')[0];
}

const onHub = (file: string) => file.split('/')[1] === 'hub';

interface HubView {
  readonly appSets: Map<string, Obj>;
  readonly placements: Map<string, Obj>;
  /** Argo-CD-less view of bindings: namespace → cluster sets bound to it. */
  readonly bindings: Map<string, Set<string>>;
  readonly inventory: InventoryCluster[];
  /** Spokes whose labels are unknown (no plan state and not on the other side). */
  readonly assumed: Set<string>;
  readonly hasState: boolean;
  /** Works synth renders (static delivery, bootstrap): `<cluster>/<name>`. */
  readonly renderedWorks: Set<string>;
  /** Decisions per `<namespace>/<placement>`, evaluated once. */
  readonly decisions: Map<string, string[]>;
  /** What the offline evaluation cannot know, per `<namespace>/<placement>` (see explainPlacement). */
  readonly unknowns: Map<string, string[]>;
  /** The other side before this one: its decisions are the current ones (Steady, NoSelectIfNew). */
  previous?: HubView;
}

const nsName = (o: Obj) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Spokes named by cluster Secrets and works of a hub, for an output folder without plan state. */
function spokesFromObjects(objects: readonly PlannedObject[], hub: string): string[] {
  const names = new Set<string>();
  for (const { file, object } of objects) {
    if (hubOfFile(file) !== hub || !onHub(file)) continue;
    const o = object as Obj;
    if (
      o.kind === 'Secret' &&
      o.metadata?.labels?.[ARGOCD_SECRET_TYPE_LABEL] === 'cluster' &&
      typeof o.stringData?.name === 'string'
    )
      names.add(o.stringData.name);
    if (o.kind === 'ManifestWork' && typeof o.metadata?.namespace === 'string') names.add(o.metadata.namespace);
  }
  return [...names].sort();
}

function viewOf(side: PlanSide, other: PlanSide, hub: string): HubView {
  const appSets = new Map<string, Obj>();
  const placements = new Map<string, Obj>();
  const bindings = new Map<string, Set<string>>();
  const renderedWorks = new Set<string>();
  for (const { file, object } of side.objects) {
    if (hubOfFile(file) !== hub || !onHub(file)) continue;
    const o = object as Obj;
    if (o.kind === 'ApplicationSet') appSets.set(nsName(o), o);
    else if (o.kind === 'Placement') placements.set(nsName(o), o);
    else if (o.kind === 'ManagedClusterSetBinding') {
      const ns = o.metadata?.namespace ?? '';
      const set = o.spec?.clusterSet ?? o.metadata?.name;
      if (!bindings.has(ns)) bindings.set(ns, new Set());
      bindings.get(ns)!.add(set);
    } else if (o.kind === 'ManifestWork') renderedWorks.add(nsName(o));
  }
  const state = side.states?.get(hub);
  const assumed = new Set<string>();
  let inventory: InventoryCluster[];
  if (state) inventory = state.spokes;
  else {
    // No plan state (an output written before pullfleet recorded one): take what the other side knows
    // of each spoke, and assume the rest selected by every placement so no deletion goes unreported.
    const known = new Map((other.states?.get(hub)?.spokes ?? []).map((s) => [s.name, s]));
    inventory = spokesFromObjects(side.objects, hub).map((name) => {
      const entry = known.get(name);
      if (entry) return entry;
      assumed.add(name);
      return { name, labels: {}, clusterSets: [] };
    });
  }
  return {
    appSets,
    placements,
    bindings,
    inventory,
    assumed,
    hasState: !!state,
    renderedWorks,
    decisions: new Map(),
    unknowns: new Map(),
  };
}

/** `{{name}}`, `{{clusterName}}`, and their Go-template forms `{{ .name }}`. */
const PARAM = /\{\{\s*\.?(name|clusterName)\s*\}\}/g;

function generatedName(template: string, cluster: string): string {
  return template.replace(PARAM, cluster);
}

function placementsOf(appSet: Obj): string[] {
  return applicationSetPlacements(appSet.spec?.generators);
}

function decisionsOf(view: HubView, namespace: string, placement: string): string[] {
  const key = `${namespace}/${placement}`;
  const known = view.decisions.get(key);
  if (known) return known;
  const p = view.placements.get(key);
  let decisions: string[] = [];
  if (p) {
    // The decisions before the change are the hub's current ones: Steady keeps them, NoSelectIfNew too.
    const current = view.previous?.placements.has(key) ? decisionsOf(view.previous, namespace, placement) : undefined;
    const evaluation = explainPlacement(
      (p.spec ?? {}) as PlacementSpec,
      view.inventory,
      [...(view.bindings.get(namespace) ?? [])],
      current ? { currentDecisions: current } : {},
    );
    if (evaluation.unknowns.length) view.unknowns.set(key, evaluation.unknowns);
    const selected = evaluation.selected;
    const chosen = new Set(selected);
    decisions = [...selected, ...[...view.assumed].filter((s) => !chosen.has(s))];
  }
  view.decisions.set(key, decisions);
  return decisions;
}

function worksOf(view: HubView, hub: string): Map<string, RuntimeWork> {
  const out = new Map<string, RuntimeWork>();
  for (const [key, appSet] of view.appSets) {
    const namespace = appSet.metadata?.namespace ?? '';
    const meta = appSet.spec?.template?.metadata ?? {};
    const template = typeof meta.name === 'string' ? meta.name : `${CLUSTER_NAME_PARAM}-${appSet.metadata?.name}`;
    const appNamespace = typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : namespace;
    const prunes = Array.isArray(meta.finalizers) && meta.finalizers.includes(ARGOCD_RESOURCES_FINALIZER);
    const standBy = parseBool(String(meta.annotations?.[STAND_BY_ANNOTATION] ?? ''));
    const routedTo = appSet.spec?.template?.spec?.destination?.name;
    const agentRouted = typeof routedTo === 'string' && routedTo !== '' && routedTo !== AGENT_SPOKE_DESTINATION;
    for (const placement of placementsOf(appSet)) {
      for (const decision of decisionsOf(view, namespace, placement)) {
        const app = generatedName(template, decision);
        // An app routed to a managed agent has no work: what goes is the agent's copy, named like the
        // static agent-routed apps plan lists (`<hub>/<agent>/argocd-agent/<namespace>/<app>`).
        const agent = agentRouted ? generatedName(routedTo, decision) : undefined;
        const target =
          agent ??
          (typeof meta.annotations?.[MANAGED_CLUSTER_ANNOTATION] === 'string'
            ? generatedName(meta.annotations[MANAGED_CLUSTER_ANNOTATION], decision)
            : decision);
        const work = agent ? '' : manifestWorkName(appNamespace, app);
        const id = agent ? `${hub}/${agent}/argocd-agent/${appNamespace}/${app}` : `${hub}/${target}/${work}`;
        if (!out.has(id)) {
          out.set(id, {
            hub,
            cluster: target,
            work,
            app,
            applicationSet: key,
            placement,
            prunesWorkload: prunes,
            assumed: view.assumed.has(decision),
            ...(standBy ? { standBy } : {}),
            ...(agentRouted ? { agentRouted } : {}),
          });
        }
      }
    }
  }
  return out;
}

export interface RuntimeDeletion extends RuntimeWork {
  /** `<hub>/<cluster>/<work>`: what `--allow-deletion` names. */
  readonly id: string;
  /** Why the work goes: `spoke east leaves placement all-prod (label env=prod removed)`. */
  readonly cause: string;
  /** The whole line. */
  readonly text: string;
}

export interface RuntimeComparison {
  readonly deletions: RuntimeDeletion[];
  /** Generated apps that stay although their spoke leaves or their ApplicationSet goes, and why. */
  readonly kept: string[];
  /** Hubs whose previous output had no plan state. */
  readonly hubsWithoutState: string[];
  /**
   * Placements the ApplicationSets follow whose decisions the offline evaluation cannot know exactly
   * (scores only the hub has, `tolerationSeconds`), one line each with the reasons.
   */
  readonly unknowns: string[];
}

function recordChanges(
  what: string,
  before: Record<string, string> = {},
  after: Record<string, string> = {},
): string[] {
  const out: string[] = [];
  for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const a = before[key];
    const b = after[key];
    if (a === b) continue;
    if (b === undefined) out.push(`${what} ${key}=${a} removed`);
    else if (a === undefined) out.push(`${what} ${key}=${b} added`);
    else out.push(`${what} ${key} changed ${a} → ${b}`);
  }
  return out;
}

/** Why `cluster` is no longer selected by `placement` (in `namespace`) on the new side. */
function leaveCauses(cluster: string, namespace: string, placement: string, before: HubView, after: HubView): string[] {
  const p = after.placements.get(`${namespace}/${placement}`);
  if (!p) return [`placement ${placement} removed`];
  const now = after.inventory.find((c) => c.name === cluster);
  if (!now) return [`spoke ${cluster} removed from the fleet`];
  const causes: string[] = [];
  const was = before.inventory.find((c) => c.name === cluster);
  const oldSets = new Set(was?.clusterSets ?? []);
  const newSets = new Set(now.clusterSets);
  for (const s of [...oldSets].sort()) if (!newSets.has(s)) causes.push(`left cluster set ${s}`);
  const oldBound = before.bindings.get(namespace) ?? new Set<string>();
  const newBound = after.bindings.get(namespace) ?? new Set<string>();
  for (const s of [...oldBound].sort())
    if (!newBound.has(s)) causes.push(`cluster set ${s} no longer bound to namespace ${namespace}`);
  const oldSpec = before.placements.get(`${namespace}/${placement}`)?.spec;
  if (oldSpec !== undefined) {
    const fields = diffFields(oldSpec, p.spec ?? {});
    if (fields.length)
      causes.push(
        `placement changed: ${fields
          .slice(0, 3)
          .map((f) => formatFieldChange({ ...f, path: `spec.${f.path}` }))
          .join(', ')}${fields.length > 3 ? ` and ${fields.length - 3} more` : ''}`,
      );
  }
  if (was && !before.assumed.has(cluster)) {
    causes.push(...recordChanges('label', was.labels, now.labels));
    causes.push(...recordChanges('claim', was.claims, now.claims));
    const taint = (t: { key: string; value?: string; effect: string }) =>
      `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
    const oldTaints = new Set((was.taints ?? []).map(taint));
    for (const t of (now.taints ?? []).map(taint)) if (!oldTaints.has(t)) causes.push(`taint ${t} added`);
  }
  if (causes.length === 0) {
    const n = (p.spec as PlacementSpec | undefined)?.numberOfClusters;
    causes.push(
      n !== undefined
        ? `numberOfClusters ${n} is filled by other spokes (offline, scores only the hub has tie and go by name)`
        : 'placement evaluation changed',
    );
  }
  return causes;
}

const NO_DELETE_SYNC = new Set(['create-only', 'create-update']);

/** Every generated app's work present before and gone after, with the change that removes it. */
export function compareRuntime(before: PlanSide, after: PlanSide): RuntimeComparison {
  const hubs = [...new Set([...before.objects, ...after.objects].map((o) => hubOfFile(o.file)))].sort();
  const deletions: RuntimeDeletion[] = [];
  const kept: string[] = [];
  const hubsWithoutState: string[] = [];
  const unknowns: string[] = [];
  for (const hub of hubs) {
    const old = viewOf(before, after, hub);
    const next = viewOf(after, before, hub);
    next.previous = old;
    if (!old.hasState && old.appSets.size > 0) hubsWithoutState.push(hub);
    const oldWorks = worksOf(old, hub);
    const newWorks = worksOf(next, hub);
    const byAppSetAndCluster = new Map<string, RuntimeWork>();
    for (const n of newWorks.values())
      if (!byAppSetAndCluster.has(`${n.applicationSet}|${n.cluster}`))
        byAppSetAndCluster.set(`${n.applicationSet}|${n.cluster}`, n);
    for (const [id, w] of oldWorks) {
      if (newWorks.has(id) || next.renderedWorks.has(`${w.cluster}/${w.work}`)) continue;
      const appSetName = w.applicationSet.split('/')[1];
      const newAppSet = next.appSets.get(w.applicationSet);
      const oldAppSet = old.appSets.get(w.applicationSet)!;
      const same = byAppSetAndCluster.get(`${w.applicationSet}|${w.cluster}`);
      if (newAppSet && same && same.app === w.app && !same.agentRouted !== !w.agentRouted) {
        // The same generated app changes model. Routed to the agent now: the controller hands its works off
        // orphan-first, deleting nothing. No longer routed: the principal asks the agent for a delete.
        if (!w.agentRouted) continue;
        const effect = w.prunesWorkload
          ? 'prunes its workload: resources finalizer'
          : 'its workload stays: no resources finalizer';
        const cause = `ApplicationSet ${appSetName}'s app ${w.app} no longer routed to the agent (destination.name "${w.cluster}" changed)`;
        deletions.push({
          ...w,
          id,
          cause,
          text: `${cause}: the argocd-principal tells the agent on spoke ${w.cluster} to delete its copy at runtime, if the agent still runs there (${effect})`,
        });
        continue;
      }
      let cause: string;
      // The generated app, and the same with its work (an app routed to an agent has no work to name).
      let app: string;
      let subject: string;
      if (!newAppSet) {
        if (oldAppSet.spec?.syncPolicy?.preserveResourcesOnDeletion === true) {
          kept.push(
            `ApplicationSet ${appSetName} removed with syncPolicy.preserveResourcesOnDeletion: its app ${w.app} and work ${w.cluster}/${w.work} stay`,
          );
          continue;
        }
        cause = `ApplicationSet ${appSetName} removed`;
        app = `its app ${w.app}`;
        subject = `${app} and its work ${w.work} on spoke ${w.cluster}`;
      } else {
        const stillSelected = placementsOf(newAppSet).some((p) =>
          decisionsOf(next, newAppSet.metadata?.namespace ?? '', p).includes(w.cluster),
        );
        if (!stillSelected && NO_DELETE_SYNC.has(newAppSet.spec?.syncPolicy?.applicationsSync)) {
          kept.push(
            `ApplicationSet ${appSetName} has syncPolicy.applicationsSync ${newAppSet.spec.syncPolicy.applicationsSync}: its app ${w.app} on spoke ${w.cluster} stays although the spoke leaves placement ${w.placement}`,
          );
          continue;
        }
        app = `ApplicationSet ${appSetName}'s app ${w.app}`;
        subject = `${app} and its work ${w.work}`;
        if (stillSelected) {
          const replacement = byAppSetAndCluster.get(`${w.applicationSet}|${w.cluster}`);
          cause = replacement
            ? `ApplicationSet ${appSetName} now names spoke ${w.cluster}'s app ${replacement.app} (work ${replacement.work})`
            : `ApplicationSet ${appSetName} changed its generated app`;
        } else {
          const newPlacements = placementsOf(newAppSet);
          if (!newPlacements.includes(w.placement)) {
            cause = `ApplicationSet ${appSetName} now follows placement ${newPlacements.join(', ') || '(none)'} instead of ${w.placement}, which does not select spoke ${w.cluster}`;
          } else {
            cause = `spoke ${w.cluster} leaves placement ${w.placement} (${leaveCauses(w.cluster, newAppSet.metadata?.namespace ?? '', w.placement, old, next).join('; ')})`;
          }
        }
      }
      if (w.standBy && !w.agentRouted) {
        kept.push(
          `${cause}: ${subject} goes, but the work stands by (deleteOption Orphan), so the Application on spoke ${w.cluster} stays`,
        );
        continue;
      }
      const effect = w.prunesWorkload
        ? 'prunes its workload: resources finalizer'
        : 'its workload stays: no resources finalizer';
      const assumed = w.assumed ? ' [assumed: the previous output has no plan state for this spoke]' : '';
      const text = w.agentRouted
        ? `${cause}: ${app} goes, and the argocd-principal tells the agent on spoke ${w.cluster} to delete its copy at runtime (${effect})${assumed}`
        : `${cause}: ${subject} will be deleted at runtime (${effect})${assumed}`;
      deletions.push({ ...w, id, cause, text });
    }
    for (const [key, reasons] of [...next.unknowns].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      unknowns.push(
        `hub ${hub} placement ${key}: the hub may decide other spokes than this plan evaluates offline: ${reasons.join('; ')}`,
      );
  }
  deletions.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { deletions, kept, hubsWithoutState, unknowns };
}
