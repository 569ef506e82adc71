/**
 * Moving a spoke between delivery models without an outage. Deleting a ManifestWork with the default
 * Foreground delete deletes the spoke Application (and, with the resources finalizer, its workload),
 * so a move is two commits (three to agent-managed) that synth enforces from the previous output's plan
 * state:
 *
 * - basic → agent-autonomous: step 1 keeps the basic works but switches them to `deleteOption: Orphan`;
 *   step 2 drops them (the spoke Application stays) and the spoke folder adopts the Application.
 * - basic → agent-managed: a managed agent refuses a spoke Application it did not create (no
 *   `argocd.argoproj.io/source-uid`), so the basic copy must go first, without pruning: step 1 delivers it
 *   without the resources finalizer, step 2 removes the works and hub Applications (the work agent
 *   deletes the copies), step 3 creates the routed hub Applications (the principal sends a Create).
 * - agent → basic: step 1 renders the basic hub Application still routed to the agent by
 *   `destination.name` (the principal sends the agent no delete) and its work with `deleteOption:
 *   Orphan` and `CreateOnly` (it never writes the Application the agent still holds); the GitOpsCluster
 *   stops selecting the spoke, so the agent leaves it. Step 2, once the agent is gone, drops the
 *   routing and switches the work to the normal server-side apply and Foreground. From then on the
 *   spoke's works keep the agent's `destination.name: in-cluster` (see {@link AgentHandback}).
 *
 * Without `moveTo`, a model change that would drop a Foreground work (or hand an agent app back to
 * works) is refused.
 */
import { DeliveryModel, isAgentDeliveryModel } from './delivery-model.js';
import type { AgentHandback } from './hub-application.js';
import { ARGOCD_RESOURCES_FINALIZER, SOURCE_UID_ANNOTATION } from '../core/keys.js';

/** What deleting a ManifestWork does to the objects it applied (its `deleteOption.propagationPolicy`). */
export enum DeleteOption {
  /** The work agent deletes the objects with the work (OCM's default). */
  FOREGROUND = 'Foreground',
  /** The objects stay on the spoke when the work goes. */
  ORPHAN = 'Orphan',
}

/** A work of a spoke as the previous synth left it (plan state). */
export interface PreviousWork {
  readonly name: string;
  readonly deleteOption: DeleteOption;
  /** Its Application was taken back from a managed argocd-agent: the work keeps the agent's destination. */
  readonly fromAgent?: boolean;
  /** A waved static app's work: the controller writes it, wave by wave; synth renders none. */
  readonly waved?: boolean;
  /** Rendered with Argo CD's `Prune=false` (step 1 of making its app waved): it stays when it leaves dist/. */
  readonly pruneProtected?: boolean;
}

/** A spoke as the previous synth left it (plan state). */
export interface PreviousSpoke {
  readonly deliveryModel?: DeliveryModel;
  readonly works?: ReadonlyArray<PreviousWork>;
  readonly movingTo?: DeliveryModel;
  /** The spoke's Applications were taken back from argocd-agent (their works keep the agent's destination). */
  readonly fromAgent?: boolean;
  /** Basic → agent-managed (three commits): the step the previous synth rendered, 1 or 2 ({@link TransitionDecision.moveStep}). */
  readonly moveStep?: 1 | 2;
  /** Basic → agent-managed: the spoke Applications (`<namespace>/<name>`) being handed to the agent. */
  readonly handOver?: readonly string[];
}

/** What synth renders for one spoke. */
export interface TransitionDecision {
  /** The model rendered now. */
  readonly model: DeliveryModel;
  /** deleteOption of the spoke's basic works. */
  readonly deleteOption: DeleteOption;
  /** 1 or 2 during a move (up to 3 from basic to agent-managed), 0 otherwise. */
  readonly step: 0 | 1 | 2 | 3;
  /** The model the spoke is moving to (recorded in the plan state during step 1). */
  readonly movingTo?: DeliveryModel;
  readonly problem?: string;
  readonly warning?: string;
  /** Step 1 of agent → basic: the agent model being left ({@link AgentHandback}). */
  readonly adoptFromAgent?: DeliveryModel;
  /** Recorded in the plan state: the spoke's works keep the managed agent's destination from now on. */
  readonly fromAgent?: boolean;
  /**
   * Basic → agent-managed, recorded in the plan state: 1 while the works take the resources finalizer off
   * the spoke Applications ({@link releaseFinalizer}), 2 while the works go and delete them ({@link clear}).
   */
  readonly moveStep?: 1 | 2;
  /** Step 1 of basic → agent-managed: the works deliver the spoke Applications without the resources finalizer. */
  readonly releaseFinalizer?: boolean;
  /** Step 2 of basic → agent-managed: neither hub Applications nor works for the spoke (the works delete the spoke copies). */
  readonly clear?: boolean;
}

/** The hand-back shape of a spoke's basic hub Applications under `decision`. */
export function handbackOf(
  decision: Pick<TransitionDecision, 'adoptFromAgent' | 'fromAgent' | 'step' | 'movingTo' | 'releaseFinalizer'>,
): AgentHandback {
  return {
    standBy: decision.adoptFromAgent !== undefined,
    route: decision.adoptFromAgent === DeliveryModel.AGENT_MANAGED,
    agentDestination: decision.fromAgent === true,
    ...(decision.releaseFinalizer ? { releaseFinalizer: true } : {}),
  };
}

const call = (model: DeliveryModel) =>
  `spoke.moveTo(DeliveryModel.${Object.entries(DeliveryModel).find(([, v]) => v === model)?.[0] ?? model})`;

/**
 * The step of spoke `name`: `desired` is the model its GitOpsClusters give it, `moveTo` what the
 * user asked for (if anything), `previous` the plan state of the last synth (undefined: none).
 */
export function decideTransition(
  name: string,
  desired: DeliveryModel,
  moveTo: DeliveryModel | undefined,
  previous: PreviousSpoke | undefined,
): TransitionDecision {
  const decision = decideStep(name, desired, moveTo, previous);
  // A spoke taken back from a managed agent keeps the agent's destination on its basic works for good.
  const wasTakenBack =
    previous !== undefined &&
    !isAgentDeliveryModel(previous.deliveryModel ?? DeliveryModel.BASIC) &&
    previous.fromAgent === true;
  if (wasTakenBack && !isAgentDeliveryModel(decision.model) && decision.fromAgent !== true)
    return { ...decision, fromAgent: true };
  return decision;
}

function decideStep(
  name: string,
  desired: DeliveryModel,
  moveTo: DeliveryModel | undefined,
  previous: PreviousSpoke | undefined,
): TransitionDecision {
  const normal: TransitionDecision = { model: desired, deleteOption: DeleteOption.FOREGROUND, step: 0 };
  if (moveTo !== undefined && moveTo !== desired) {
    return {
      ...normal,
      problem: `spoke "${name}" asks to move to ${moveTo} (${call(moveTo)}), but the GitOpsClusters selecting it give it ${desired}: change the placements so the spoke gets ${moveTo}, or drop moveTo`,
    };
  }
  if (!previous) return normal;
  const before = previous.deliveryModel ?? DeliveryModel.BASIC;
  const works = previous.works ?? [];
  const foreground = works.filter((w) => w.deleteOption === DeleteOption.FOREGROUND).map((w) => w.name);
  if (before === desired) {
    if (moveTo === undefined) return normal;
    if (previous.movingTo === desired && !isAgentDeliveryModel(desired)) return { ...normal, step: 2 };
    return {
      ...normal,
      warning: `the spoke already runs ${desired}, so its move is complete: remove ${call(desired)}`,
    };
  }
  if (isAgentDeliveryModel(before) && isAgentDeliveryModel(desired)) {
    return {
      ...normal,
      model: before,
      problem: `spoke "${name}" would move from ${before} to ${desired} directly, which deletes its hub Applications under the principal (and so the spoke's): move it to basic first (${call(DeliveryModel.BASIC)}), then to ${desired}`,
    };
  }
  if (moveTo === undefined) {
    if (!isAgentDeliveryModel(before) && foreground.length === 0) return normal;
    const what = isAgentDeliveryModel(before)
      ? `its Applications are owned by the agent model, and taking them over with Foreground works in one step risks deleting them`
      : `its works ${foreground.join(', ')} have deleteOption Foreground, and removing them deletes the running Applications on the spoke`;
    return {
      ...normal,
      model: before,
      problem: `spoke "${name}" changes from ${before} to ${desired} in one step, but ${what}: call ${call(desired)} for a two-step hand-over (step 1 keeps the works with deleteOption Orphan), commit, let the hub apply it, then synthesize again`,
    };
  }
  if (!isAgentDeliveryModel(before) && desired === DeliveryModel.AGENT_MANAGED) {
    // basic → agent-managed, three commits. A managed agent never takes over an Application it finds on
    // the spoke without its source-uid (it refuses every event for it), so the spoke copies must be gone
    // before the principal sends anything: step 1 takes the resources finalizer off them through their
    // works, step 2 removes the works (the work agent deletes the spoke Applications, with nothing to
    // prune) and the hub Applications, step 3 creates the agent-managed hub Applications (the principal
    // sends a Create; the agent creates the copy, which adopts the running resources by tracking).
    if (previous.movingTo === desired && previous.moveStep === 2) return { ...normal, step: 3 };
    if (previous.movingTo === desired && previous.moveStep === 1)
      return {
        model: before,
        deleteOption: DeleteOption.FOREGROUND,
        step: 2,
        movingTo: desired,
        moveStep: 2,
        clear: true,
      };
    if (works.length === 0) return normal;
    return {
      model: before,
      deleteOption: DeleteOption.FOREGROUND,
      step: 1,
      movingTo: desired,
      moveStep: 1,
      releaseFinalizer: true,
    };
  }
  if (!isAgentDeliveryModel(before)) {
    // basic → agent-autonomous. Step 1 committed (movingTo recorded): its static works were Orphan, and the
    // works of ApplicationSet-generated apps stood by, so step 2 may drop them.
    if (foreground.length > 0 && previous.movingTo !== desired)
      return { model: before, deleteOption: DeleteOption.ORPHAN, step: 1, movingTo: desired };
    return { ...normal, step: 2 };
  }
  // agent → basic: the hub Application stays routed to the agent and the work stands by (CreateOnly,
  // Orphan) until step 2.
  return {
    model: desired,
    deleteOption: DeleteOption.ORPHAN,
    step: 1,
    movingTo: desired,
    adoptFromAgent: before,
    ...(before === DeliveryModel.AGENT_MANAGED ? { fromAgent: true } : {}),
  };
}

/** What `pullfleet plan` says about a spoke's move, from the previous and the new plan state. */
export function describeTransition(
  name: string,
  previous: PreviousSpoke | undefined,
  next: PreviousSpoke,
): string | undefined {
  const before = previous?.deliveryModel ?? DeliveryModel.BASIC;
  const after = next.deliveryModel ?? DeliveryModel.BASIC;
  const target = next.movingTo;
  const managed = describeManagedHandOver(name, previous, next);
  if (managed) return managed;
  if (target !== undefined) {
    return isAgentDeliveryModel(target)
      ? `spoke ${name}: move ${after} → ${target}, step 1 of 2: its works stay, switched to deleteOption Orphan, so removing them later leaves the Applications running; its ApplicationSets stay basic until step 2. Next: commit, let the hub apply it, then synthesize again (step 2 removes the works and ${target} adopts the Applications).`
      : before === DeliveryModel.AGENT_AUTONOMOUS
        ? `spoke ${name}: move ${before} → ${target}, step 1 of 2: the spoke's own folder stops listing its Applications (its folder sync does not prune them), and each gets a basic hub Application with a work that stands by (deleteOption Orphan, updateStrategy CreateOnly) without touching the running Application. Next: commit, let the hub and the spoke apply it, then synthesize again (step 2 switches the works to server-side apply and Foreground).`
        : `spoke ${name}: move ${before} → ${target}, step 1 of 2: the hub Applications stay routed to the agent (destination.name ${name}), so the principal deletes nothing, and each gets a work that stands by (deleteOption Orphan, updateStrategy CreateOnly) without touching the Application the agent holds. Next: commit, let the hub apply it, check the argocd-agent has left the spoke (kubectl get managedclusteraddon -n ${name}), then synthesize again (step 2 stops routing to the agent and switches the works to server-side apply and Foreground).`;
  }
  if (previous?.movingTo !== undefined && previous.movingTo === after) {
    return isAgentDeliveryModel(after)
      ? `spoke ${name}: move ${before} → ${after}, step 2 of 2: the Orphan works are removed (the Applications keep running) and ${after} adopts them. Next: remove spoke.moveTo(...) from fleet.config.ts.`
      : previous.fromAgent
        ? `spoke ${name}: move to ${after}, step 2 of 2: the hub Applications stop naming the agent, so an argocd-agent still running on the spoke would delete its copies (with pruneOnDelete, their workloads too): synthesize this only once the agent has left. The works switch to server-side apply and deleteOption Foreground. Next: remove spoke.moveTo(...) from fleet.config.ts.`
        : `spoke ${name}: move to ${after}, step 2 of 2: the works switch to server-side apply and deleteOption Foreground. Next: remove spoke.moveTo(...) from fleet.config.ts.`;
  }
  return undefined;
}

const listApps = (apps: readonly string[] | undefined) => (apps && apps.length ? apps.join(', ') : 'none');

/**
 * The three steps of basic → agent-managed, as `pullfleet plan` tells them: what each commit does on the
 * spoke, which spoke Applications are briefly unmanaged, and the signal to wait for before the next one.
 */
function describeManagedHandOver(
  name: string,
  previous: PreviousSpoke | undefined,
  next: PreviousSpoke,
): string | undefined {
  const works = `kubectl get manifestwork -n ${name}`;
  if (next.movingTo === DeliveryModel.AGENT_MANAGED && next.moveStep === 1) {
    return `spoke ${name}: move basic → ${DeliveryModel.AGENT_MANAGED}, step 1 of 3: the works stay (server-side apply, deleteOption Foreground) and take the finalizer ${ARGOCD_RESOURCES_FINALIZER} off the spoke Applications ${listApps(next.handOver)}, so deleting them later prunes nothing; the hub Applications and ApplicationSets stay basic, nothing is unmanaged yet. Next: commit, let the hub apply it, and wait until the work agent has applied it: every work of the spoke reports Applied at its current generation (${works} -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.generation} {.status.conditions[?(@.type=="Applied")].observedGeneration}{"\\n"}{end}' shows the two numbers equal, usually within seconds); only then synthesize again. Synthesizing step 2 before that deletes Applications that still carry the finalizer, and their workloads with them.`;
  }
  if (next.movingTo === DeliveryModel.AGENT_MANAGED && next.moveStep === 2) {
    return `spoke ${name}: move basic → ${DeliveryModel.AGENT_MANAGED}, step 2 of 3: the works and the basic hub Applications (and the ApplicationSets' generated ones, with the works the controller wrote) are removed; the work agent deletes the spoke Applications ${listApps(next.handOver ?? previous?.handOver)}, which no longer carry ${ARGOCD_RESOURCES_FINALIZER}, so their workloads keep running, unmanaged (no sync, no self-heal) until step 3 is applied. A managed agent refuses an Application it finds on the spoke without ${SOURCE_UID_ANNOTATION}, so the copies must be gone before the principal sends the app. Next: commit, let the hub apply it, and wait until none of those works is left on the hub (${works} lists none of them; a Foreground work disappears only after the work agent deleted its Application; with the hub Argo CD's prune off, prune them), then synthesize again.`;
  }
  if (
    previous?.movingTo === DeliveryModel.AGENT_MANAGED &&
    previous.moveStep === 2 &&
    (next.deliveryModel ?? DeliveryModel.BASIC) === DeliveryModel.AGENT_MANAGED
  ) {
    return `spoke ${name}: move basic → ${DeliveryModel.AGENT_MANAGED}, step 3 of 3: the hub Applications are created routed to the agent (destination.name ${name}); the principal sends each a Create, the agent creates the spoke Applications ${listApps(previous.handOver)} with ${SOURCE_UID_ANNOTATION}, and they adopt the running resources by Argo CD's resource tracking (same Application name and namespace as before). They are unmanaged until the agent has created them: check each hub Application's status.sync.status. Next: remove spoke.moveTo(...) from fleet.config.ts.`;
  }
  return undefined;
}

/**
 * Whether work `work` of `previous` keeps the managed agent's destination. A plan state written before
 * works carried the flag marks the whole spoke (`fromAgent` with no flagged work): every work of it keeps it.
 */
function keepsAgentDestination(previous: PreviousSpoke, work: PreviousWork | undefined): boolean {
  if (work?.fromAgent === true) return true;
  return previous.fromAgent === true && !(previous.works ?? []).some((w) => w.fromAgent === true);
}

/**
 * The decision of a spoke as it applies to one ApplicationSet of model `model` whose generated app there
 * is delivered by work `work` in the basic model. A move changes only what is delivered to the moving
 * spoke, and only what changes model:
 *
 * - basic ApplicationSet: its app comes back from the agent only when no work delivered it before (it
 *   was the agent's); an app a work already delivered stays as it was, and keeps the agent's destination
 *   only if its work did. A spoke's move back to basic never reshapes an ApplicationSet that never used
 *   an agent.
 * - agent ApplicationSet: a spoke still basic (step 1 of its move to the agent model) holds it back only
 *   when a work delivered its app there before; an app new to the spoke has nothing to hand over, so the
 *   spoke counts as moved for this ApplicationSet (a spoke joining an agent group that already moved).
 *
 * Without a previous plan state the decision is returned as it is.
 */
export function applicationSetDecision(
  model: DeliveryModel,
  decision: TransitionDecision,
  previous: PreviousSpoke | undefined,
  work: string,
): TransitionDecision {
  if (!previous) return decision;
  const before = (previous.works ?? []).find((w) => w.name === work);
  // This ApplicationSet's delivery to the spoke does not change model: no step of the spoke's move applies to it.
  const settled = (m: DeliveryModel, fromAgent: boolean): TransitionDecision => ({
    model: m,
    deleteOption: DeleteOption.FOREGROUND,
    step: 0,
    ...(fromAgent ? { fromAgent: true } : {}),
  });
  if (model !== DeliveryModel.BASIC)
    return decision.model === DeliveryModel.BASIC && before === undefined ? settled(model, false) : decision;
  if (before === undefined && decision.adoptFromAgent !== undefined) return decision;
  return settled(
    DeliveryModel.BASIC,
    before !== undefined
      ? keepsAgentDestination(previous, before)
      : decision.fromAgent === true && keepsAgentDestination(previous, undefined),
  );
}

/**
 * What an ApplicationSet renders while the spokes its placement selects move between models: `model`
 * is its placement's model, `spokes` each selected spoke with its decision. It stays a basic
 * ApplicationSet while any spoke is still basic (step 1 of a move to an agent model: moving to
 * agent-autonomous its works stand by, because removing it in step 2 deletes its generated Applications
 * and their works; moving to agent-managed, step 1, its template drops the resources finalizer, and in
 * step 2 it is not rendered at all (`clear`): its generated apps and their works go, deleting the spoke
 * copies without pruning, before step 3 brings it back routed to the agent). A basic template takes the stand-by shape while any spoke comes back
 * from an agent model and keeps the managed agent's destination once any did. One template serves every
 * spoke, so `problem` names the spokes when they are at different steps.
 */
export function applicationSetStep(
  model: DeliveryModel,
  spokes: ReadonlyArray<{ readonly name: string; readonly decision: TransitionDecision }>,
): { model: DeliveryModel; handback: AgentHandback; problem?: string; clear?: boolean } {
  const none: AgentHandback = { standBy: false, route: false, agentDestination: false };
  const waiting = spokes.filter((s) => s.decision.model === DeliveryModel.BASIC);
  if (model !== DeliveryModel.BASIC && waiting.length === 0) return { model, handback: none };
  const moved = model === DeliveryModel.BASIC ? [] : spokes.filter((s) => s.decision.model !== DeliveryModel.BASIC);
  const each = spokes.map((s) => handbackOf(s.decision));
  // Basic → agent-managed, step 2: the ApplicationSet goes (its generated apps and their works with it),
  // so the work agent deletes the spoke copies; it comes back routed to the agent in step 3.
  const clearing = waiting.filter((s) => s.decision.clear === true);
  const clear = model === DeliveryModel.AGENT_MANAGED && waiting.length > 0 && clearing.length === waiting.length;
  const split =
    model === DeliveryModel.AGENT_MANAGED && clearing.length > 0 && clearing.length < waiting.length
      ? `selects spokes at different steps of their move to ${model} (${clearing.map((s) => s.name).join(', ')} at step 2, ${waiting
          .filter((s) => s.decision.clear !== true)
          .map((s) => s.name)
          .join(
            ', ',
          )} not): its one ApplicationSet serves them all, so move them together (the same moveTo, the same commits)`
      : undefined;
  return {
    model: DeliveryModel.BASIC,
    handback: {
      standBy: model === DeliveryModel.AGENT_AUTONOMOUS || each.some((h) => h.standBy),
      route: each.some((h) => h.route),
      agentDestination: each.some((h) => h.agentDestination),
      ...(model === DeliveryModel.AGENT_MANAGED && each.some((h) => h.releaseFinalizer)
        ? { releaseFinalizer: true }
        : {}),
    },
    ...(clear ? { clear: true } : {}),
    ...(split ? { problem: split } : {}),
    ...(moved.length > 0
      ? {
          problem: `selects spokes at different steps of their move to ${model} (${moved.map((s) => s.name).join(', ')} already moved, ${waiting.map((s) => s.name).join(', ')} not yet): its one ApplicationSet serves them all, so move them together (the same moveTo, the same commits)`,
        }
      : {}),
  };
}
