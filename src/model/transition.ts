/**
 * Moving a spoke between delivery models without an outage. Deleting a ManifestWork with the default
 * Foreground delete deletes the spoke Application (and, with the resources finalizer, its workload),
 * so a move is two commits that synth enforces from the previous output's plan state:
 *
 * - basic → agent: step 1 keeps the basic works but switches them to `deleteOption: Orphan`; step 2
 *   drops them (the spoke Application stays) and the agent model adopts the Application.
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
import { SOURCE_UID_MISMATCH_POLICY_ANNOTATION, SOURCE_UID_MISMATCH_UPSERT } from './keys.js';

export type DeleteOption = 'Foreground' | 'Orphan';

/** A spoke as the previous synth left it (plan state). */
export interface PreviousSpoke {
  readonly deliveryModel?: DeliveryModel;
  readonly works?: ReadonlyArray<{ readonly name: string; readonly deleteOption: DeleteOption }>;
  readonly movingTo?: DeliveryModel;
  /** The spoke's Applications were taken back from argocd-agent (their works keep the agent's destination). */
  readonly fromAgent?: boolean;
}

/** What synth renders for one spoke. */
export interface TransitionDecision {
  /** The model rendered now. */
  readonly model: DeliveryModel;
  /** deleteOption of the spoke's basic works. */
  readonly deleteOption: DeleteOption;
  /** 1 or 2 during a move, 0 otherwise. */
  readonly step: 0 | 1 | 2;
  /** The model the spoke is moving to (recorded in the plan state during step 1). */
  readonly movingTo?: DeliveryModel;
  readonly problem?: string;
  readonly warning?: string;
  /** Step 1 of agent → basic: the agent model being left ({@link AgentHandback}). */
  readonly adoptFromAgent?: DeliveryModel;
  /** Recorded in the plan state: the spoke's works keep the managed agent's destination from now on. */
  readonly fromAgent?: boolean;
}

/** The hand-back shape of a spoke's basic hub Applications under `decision`. */
export function handbackOf(decision: Pick<TransitionDecision, 'adoptFromAgent' | 'fromAgent' | 'step' | 'movingTo'>): AgentHandback {
  return {
    standBy: decision.adoptFromAgent !== undefined,
    route: decision.adoptFromAgent === DeliveryModel.AGENT_MANAGED,
    agentDestination: decision.fromAgent === true,
    ...(decision.step === 1 && decision.movingTo === DeliveryModel.AGENT_MANAGED ? { agentUpsert: true } : {}),
  };
}

const call = (model: DeliveryModel) => `spoke.moveTo(DeliveryModel.${Object.entries(DeliveryModel).find(([, v]) => v === model)?.[0] ?? model})`;

/**
 * The step of spoke `name`: `desired` is the model its GitOpsClusters give it, `moveTo` what the
 * user asked for (if anything), `previous` the plan state of the last synth (undefined: none).
 */
export function decideTransition(name: string, desired: DeliveryModel, moveTo: DeliveryModel | undefined, previous: PreviousSpoke | undefined): TransitionDecision {
  const decision = decideStep(name, desired, moveTo, previous);
  // A spoke taken back from a managed agent keeps the agent's destination on its basic works for good.
  const wasTakenBack = previous !== undefined && !isAgentDeliveryModel(previous.deliveryModel ?? DeliveryModel.BASIC) && previous.fromAgent === true;
  if (wasTakenBack && !isAgentDeliveryModel(decision.model) && decision.fromAgent !== true) return { ...decision, fromAgent: true };
  return decision;
}

function decideStep(name: string, desired: DeliveryModel, moveTo: DeliveryModel | undefined, previous: PreviousSpoke | undefined): TransitionDecision {
  const normal: TransitionDecision = { model: desired, deleteOption: 'Foreground', step: 0 };
  if (moveTo !== undefined && moveTo !== desired) {
    return { ...normal, problem: `spoke "${name}" asks to move to ${moveTo} (${call(moveTo)}), but the GitOpsClusters selecting it give it ${desired}: change the placements so the spoke gets ${moveTo}, or drop moveTo` };
  }
  if (!previous) return normal;
  const before = previous.deliveryModel ?? DeliveryModel.BASIC;
  const works = previous.works ?? [];
  const foreground = works.filter((w) => w.deleteOption === 'Foreground').map((w) => w.name);
  if (before === desired) {
    if (moveTo === undefined) return normal;
    if (previous.movingTo === desired && !isAgentDeliveryModel(desired)) return { ...normal, step: 2 };
    return { ...normal, warning: `spoke "${name}" already runs ${desired}, so the move is complete: remove ${call(desired)}` };
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
  if (!isAgentDeliveryModel(before)) {
    // basic → agent. Step 1 committed (movingTo recorded): its static works were Orphan, and the works of
    // ApplicationSet-generated apps stood by or are handed off by the controller, so step 2 may drop them.
    if (foreground.length > 0 && previous.movingTo !== desired) return { model: before, deleteOption: 'Orphan', step: 1, movingTo: desired };
    return { ...normal, step: 2 };
  }
  // agent → basic: the hub Application stays routed to the agent and the work stands by (CreateOnly,
  // Orphan) until step 2.
  return { model: desired, deleteOption: 'Orphan', step: 1, movingTo: desired, adoptFromAgent: before, ...(before === DeliveryModel.AGENT_MANAGED ? { fromAgent: true } : {}) };
}

/** What `pullfleet plan` says about a spoke's move, from the previous and the new plan state. */
export function describeTransition(name: string, previous: PreviousSpoke | undefined, next: PreviousSpoke): string | undefined {
  const before = previous?.deliveryModel ?? DeliveryModel.BASIC;
  const after = next.deliveryModel ?? DeliveryModel.BASIC;
  const target = next.movingTo;
  if (target !== undefined) {
    return isAgentDeliveryModel(target)
      ? `spoke ${name}: move ${after} → ${target}, step 1 of 2: its works stay, switched to deleteOption Orphan, so removing them later leaves the Applications running${target === DeliveryModel.AGENT_MANAGED ? `, and they give the Applications ${SOURCE_UID_MISMATCH_POLICY_ANNOTATION}: ${SOURCE_UID_MISMATCH_UPSERT}, so the agent updates them in place instead of deleting and recreating them` : ''}; its ApplicationSets stay basic until step 2. Next: commit, let the hub apply it, then synthesize again (step 2 removes the works and ${target} adopts the Applications).`
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

/**
 * What an ApplicationSet renders while the spokes its placement selects move between models: `model`
 * is its placement's model, `spokes` each selected spoke with its decision. It stays a basic
 * ApplicationSet while any spoke is still basic (step 1 of a move to an agent model: moving to
 * agent-autonomous its works stand by, because removing it in step 2 deletes its generated Applications
 * and their works; moving to agent-managed its works carry the upsert policy to the spoke Applications
 * before the agent finds them). A basic template takes the stand-by shape while any spoke comes back
 * from an agent model and keeps the managed agent's destination once any did. One template serves every
 * spoke, so `problem` names the spokes when they are at different steps.
 */
export function applicationSetStep(
  model: DeliveryModel,
  spokes: ReadonlyArray<{ readonly name: string; readonly decision: TransitionDecision }>,
): { model: DeliveryModel; handback: AgentHandback; problem?: string } {
  const none: AgentHandback = { standBy: false, route: false, agentDestination: false };
  const waiting = spokes.filter((s) => s.decision.model === DeliveryModel.BASIC);
  if (model !== DeliveryModel.BASIC && waiting.length === 0) return { model, handback: none };
  const moved = model === DeliveryModel.BASIC ? [] : spokes.filter((s) => s.decision.model !== DeliveryModel.BASIC);
  const each = spokes.map((s) => handbackOf(s.decision));
  return {
    model: DeliveryModel.BASIC,
    handback: {
      standBy: model === DeliveryModel.AGENT_AUTONOMOUS || each.some((h) => h.standBy),
      route: each.some((h) => h.route),
      agentDestination: each.some((h) => h.agentDestination),
      ...(model === DeliveryModel.AGENT_MANAGED ? { agentUpsert: true } : {}),
    },
    ...(moved.length > 0
      ? {
          problem: `selects spokes at different steps of their move to ${model} (${moved.map((s) => s.name).join(', ')} already moved, ${waiting.map((s) => s.name).join(', ')} not yet): its one ApplicationSet serves them all, so move them together (the same moveTo, the same commits)`,
        }
      : {}),
  };
}
