/**
 * Rollout waves: the policy a fleet declares for an app (ordered waves of clusters, in-flight limits,
 * soak times, failure tolerance) and how synth resolves it against the spokes an app targets. The same
 * policy drives both delivery paths: ApplicationSet RollingSync steps (`rolling-sync.ts`) and the
 * controller's own waves for static apps (`engine.ts`). Pure: no I/O.
 */
import { PULLFLEET_PREFIX } from '../core/keys.js';
import { matchesSelector, type LabelSelector } from '../core/selectors.js';
import { DeliveryModel } from '../delivery/delivery-model.js';

/** Annotation on a waved hub Application naming the ConfigMap that holds its app's rollout policy. */
export const ROLLOUT_ANNOTATION = `${PULLFLEET_PREFIX}rollout`;
/** Label on rollout ConfigMaps (policy and state) naming the fleet app. */
export const ROLLOUT_APP_LABEL = `${PULLFLEET_PREFIX}rollout-app`;
/** Label on a rollout ConfigMap: `policy` (rendered by synth) or `state` (written by the controller). */
export const ROLLOUT_KIND_LABEL = `${PULLFLEET_PREFIX}rollout-kind`;
/** Key of the policy JSON in the policy ConfigMap. */
export const ROLLOUT_POLICY_KEY = 'policy.json';
/** Key of the state JSON in the state ConfigMap. */
export const ROLLOUT_STATE_KEY = 'state.json';
/** Key of the progress summary in the state ConfigMap (written by the controller, read by `pullfleet status`). */
export const ROLLOUT_PROGRESS_KEY = 'progress.json';
/**
 * Annotation on the policy ConfigMap that resumes a halted rollout: any new value (for example a
 * timestamp) retries the failed clusters once.
 */
export const ROLLOUT_RESUME_ANNOTATION = `${PULLFLEET_PREFIX}rollout-resume`;
/** Label the ApplicationSet template puts on every generated Application: the decision's cluster name. */
export const ROLLOUT_CLUSTER_LABEL = `${PULLFLEET_PREFIX}rollout-cluster`;
/**
 * Annotation synth puts on a waved app's hub Applications and its policy ConfigMap: a hash of the app's
 * definition (what the hub Applications carry). The controller steps a rollout only when all of them
 * carry the policy's (Argo CD applies a commit's objects one at a time: a wave must not pass while some
 * hub Applications still show the old spec). Wave membership is not covered: it is read from the policy
 * alone, and a cluster whose hub Application arrives before the policy lists it waits in the last wave.
 */
export const ROLLOUT_REVISION_ANNOTATION = `${PULLFLEET_PREFIX}rollout-revision`;
/** Condition type on hub Applications of a rollout that stopped on failures. */
export const ROLLOUT_HALTED_CONDITION = 'RolloutHalted';

/** How many clusters of a wave may update at once: a count, or a percentage of the wave's clusters. */
export type WaveLimit = { readonly count: number } | { readonly percent: number };

/** One wave of a resolved policy. */
export interface RolloutWave {
  /** Shown in plan and status. */
  readonly name: string;
  /** The clusters of this wave, sorted. */
  readonly clusters: readonly string[];
  /** At most this many clusters of the wave in flight at once; undefined: all of them. */
  readonly maxInFlight?: WaveLimit;
  /** Seconds to wait once every cluster of the wave is done before the next wave starts. */
  readonly soakSeconds: number;
  /**
   * Clusters of this wave that later waves select too, each with those waves' names: a cluster belongs
   * to the first wave that selects it. Undefined when there are none.
   */
  readonly alsoSelectedBy?: Readonly<Record<string, readonly string[]>>;
  /**
   * Spokes this wave selects that are not rolled out in it now, each with why ({@link OutsideWaves}): they
   * are taken out of `clusters`, and the app reaches them some other way. Undefined when there are none.
   */
  readonly outside?: Readonly<Record<string, OutsideWaves>>;
}

/**
 * Why a spoke an app's waves select is not rolled out in them now (see {@link outsideWaves}):
 *
 * - `moving`: the spoke is moving between delivery models; each step of the move delivers the app to it
 *   (a static work synth renders, an argocd-agent hub Application, or nothing in step 2 of a move to
 *   agent-managed), at once, like everything else the step delivers;
 * - `agent`: the spoke runs an argocd-agent model, where the principal (managed) or the spoke's own folder
 *   (autonomous) delivers a change as soon as the hub applies it: the controller holds back works only;
 * - `rejoining`: the spoke is back on the basic model; its work is rendered once more, with Argo CD's
 *   `Prune=false`, and the controller takes it over when the next synth puts the spoke back in its wave.
 */
export interface OutsideWaves {
  readonly reason: 'moving' | 'agent' | 'rejoining';
  /** The delivery model the spoke runs, or moves to while `moving`. */
  readonly model: DeliveryModel;
  /** During a move: the step rendered now. */
  readonly step?: number;
  /** During a move: how many steps it has. */
  readonly steps?: number;
}

/**
 * Whether a spoke whose delivery `decision` is this (transition.ts) stays out of an app's waves, and why.
 * `rejoin`: the spoke, basic and not moving, still has the static work of the app that the synth before
 * rendered while it was out of the waves (not yet protected with `Prune=false`). Waves hold back works the
 * controller writes; a spoke moving between models gets its delivery from the steps of the move, which
 * must not wait for a wave (step 1 of a move to agent-managed has to reach the spoke before step 2 deletes
 * its Application through the work), and an agent spoke has no work to hold back.
 */
export function outsideWaves(
  decision: { readonly model: DeliveryModel; readonly step: number; readonly movingTo?: DeliveryModel },
  rejoin = false,
): OutsideWaves | undefined {
  if (decision.step === 0) {
    if (decision.model !== DeliveryModel.BASIC) return { reason: 'agent', model: decision.model };
    return rejoin ? { reason: 'rejoining', model: decision.model } : undefined;
  }
  const target = decision.movingTo ?? decision.model;
  const steps = target === DeliveryModel.AGENT_MANAGED ? 3 : 2;
  // The last step back to basic renders the work protected: the next synth puts the spoke back in its wave.
  const reason = target === DeliveryModel.BASIC && decision.step === steps ? 'rejoining' : 'moving';
  return { reason, model: target, step: decision.step, steps };
}

/** How `pullfleet plan` tells that spoke `cluster`, which wave `wave` of app `app` selects, is outside the waves. */
export function describeOutsideWaves(app: string, wave: string, cluster: string, outside: OutsideWaves): string {
  const step = outside.step !== undefined ? ` (step ${outside.step} of ${outside.steps ?? outside.step})` : '';
  if (outside.reason === 'moving')
    return `spoke ${cluster} leaves app ${app}'s waves while it moves to ${outside.model}${step}: it is updated with the step, at once, not in wave ${wave}`;
  if (outside.reason === 'agent')
    return `spoke ${cluster} runs ${outside.model}: app ${app} reaches it ${outside.model === DeliveryModel.AGENT_MANAGED ? 'through the argocd-agent principal' : "through the spoke's own folder"} as soon as the hub applies a change, not in wave ${wave}`;
  return `spoke ${cluster} rejoins app ${app}'s waves with the next synth${step ? `, after its move to ${outside.model}${step}` : ''}: its work is rendered once more, with Argo CD's Prune=false, so that the controller takes it over in wave ${wave}; until then a change reaches it at once`;
}

/**
 * The waves without the spokes in `outside` (cluster → why): each such spoke leaves the `clusters` of its
 * wave (and that wave's `alsoSelectedBy`) for the wave's `outside`. A wave may end up with no cluster: the
 * controller passes over a wave without clusters, and the caller says so.
 */
export function withOutsideWaves(
  waves: readonly RolloutWave[],
  outside: ReadonlyMap<string, OutsideWaves>,
): RolloutWave[] {
  return waves.map((wave) => {
    const out = wave.clusters.filter((cluster) => outside.has(cluster));
    if (out.length === 0) return wave;
    const { alsoSelectedBy, outside: before, ...rest } = wave;
    const shared = Object.entries(alsoSelectedBy ?? {}).filter(([cluster]) => !outside.has(cluster));
    return {
      ...rest,
      clusters: wave.clusters.filter((cluster) => !outside.has(cluster)),
      ...(shared.length ? { alsoSelectedBy: Object.fromEntries(shared) } : {}),
      outside: Object.fromEntries(
        [...Object.entries(before ?? {}), ...out.map((cluster) => [cluster, outside.get(cluster)!] as const)].sort(
          ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0),
        ),
      ),
    };
  });
}

/** What happens to the clusters that failed when a rollout halts. */
export type FailureAction = 'pause' | 'rollback';

/** A rollout policy with every wave resolved to cluster names (what synth renders, what the controller reads). */
export interface RolloutPolicy {
  /** The fleet app the policy belongs to. */
  readonly app: string;
  readonly waves: readonly RolloutWave[];
  /** Failed clusters tolerated in one rollout; one more halts it. */
  readonly maxFailures: number;
  /** A promoted cluster that has not converged after this many seconds counts as failed. */
  readonly progressDeadlineSeconds: number;
  /** pause: failed clusters keep what they got; rollback: they get their previous payload back. */
  readonly onFailure: FailureAction;
}

/** The default progress deadline: 10 minutes. */
export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

/**
 * The number of clusters a wave of `size` clusters may have in flight. A count is capped at the size; a
 * percentage rounds down but never below one cluster when it is above 0 % (as Argo CD scales `maxUpdate`).
 */
export function inFlightLimit(limit: WaveLimit | undefined, size: number): number {
  if (!limit) return size;
  if ('count' in limit) return Math.max(0, Math.min(limit.count, size));
  const scaled = Math.floor((size * limit.percent) / 100);
  return limit.percent > 0 ? Math.max(1, Math.min(scaled, size)) : 0;
}

/** A wave as declared: a label selector over spokes and/or explicit spokes. */
export interface WaveDeclaration {
  readonly name: string;
  readonly selector?: LabelSelector;
  readonly spokes?: readonly string[];
  /** Takes every targeted spoke no other wave selects (at most one wave of a policy). */
  readonly rest?: boolean;
  readonly maxInFlight?: WaveLimit;
  readonly soakSeconds: number;
}

/** A spoke as wave selectors see it. */
export interface WaveSpoke {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** The waves resolved against the targeted spokes, and every problem found (empty when the policy is sound). */
export interface WaveAssignment {
  readonly waves: readonly RolloutWave[];
  readonly problems: readonly string[];
}

/**
 * Resolves declared waves against the spokes an app targets. A spoke that several waves select belongs to
 * the first of them (the later ones list it in `alsoSelectedBy` of that wave). Problems: a targeted spoke in
 * no wave, a wave that selects nothing or gets nothing, a wave naming a spoke the app does not target,
 * duplicate wave names.
 */
export function assignWaves(
  declared: readonly WaveDeclaration[],
  targeted: readonly WaveSpoke[],
  subject: string,
): WaveAssignment {
  const problems: string[] = [];
  const targetedNames = new Set(targeted.map((spoke) => spoke.name));
  const seenNames = new Set<string>();
  const selected = new Set<string>();
  for (const wave of declared) {
    if (wave.rest) continue;
    for (const name of wave.spokes ?? []) selected.add(name);
    for (const spoke of targeted)
      if (wave.selector && matchesSelector(wave.selector, spoke.labels)) selected.add(spoke.name);
  }
  if (declared.filter((wave) => wave.rest).length > 1)
    problems.push(`${subject}: more than one wave takes the rest: keep one (the last wave, usually)`);
  /** The wave (index) each spoke belongs to: the first that selects it. */
  const waveOf = new Map<string, number>();
  const alsoSelectedBy = declared.map(() => new Map<string, string[]>());
  const waves = declared.map((wave, index) => {
    if (seenNames.has(wave.name))
      problems.push(`${subject}: two waves are named "${wave.name}": give each wave its own name`);
    seenNames.add(wave.name);
    const members = new Set<string>();
    for (const name of wave.spokes ?? []) {
      if (!targetedNames.has(name)) {
        problems.push(
          `${subject}: wave "${wave.name}" names spoke "${name}", which the app does not target: remove it from the wave or deliver the app to it`,
        );
        continue;
      }
      members.add(name);
    }
    if (wave.selector) {
      for (const spoke of targeted) if (matchesSelector(wave.selector, spoke.labels)) members.add(spoke.name);
    }
    if (wave.rest) for (const spoke of targeted) if (!selected.has(spoke.name)) members.add(spoke.name);
    const candidates = [...members].sort();
    const clusters: string[] = [];
    for (const cluster of candidates) {
      const first = waveOf.get(cluster);
      if (first === undefined) {
        waveOf.set(cluster, index);
        clusters.push(cluster);
      } else {
        const later = alsoSelectedBy[first];
        later.set(cluster, [...(later.get(cluster) ?? []), wave.name]);
      }
    }
    if (candidates.length === 0)
      problems.push(
        `${subject}: wave "${wave.name}" selects no spoke the app targets: fix its selector or spokes, or remove the wave`,
      );
    else if (clusters.length === 0)
      problems.push(
        `${subject}: wave "${wave.name}" gets no spoke: every spoke it selects (${candidates.join(', ')}) is in an earlier wave, and a spoke belongs to the first wave that selects it: remove the wave, or narrow the earlier ones`,
      );
    return {
      name: wave.name,
      clusters,
      ...(wave.maxInFlight ? { maxInFlight: wave.maxInFlight } : {}),
      soakSeconds: wave.soakSeconds,
    };
  });
  for (const spoke of [...targeted].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!waveOf.has(spoke.name))
      problems.push(
        `${subject}: spoke "${spoke.name}" is targeted but falls in no wave: add it to a wave, or end with a wave that takes the rest`,
      );
  }
  return {
    waves: waves.map((wave, index) =>
      alsoSelectedBy[index].size > 0
        ? { ...wave, alsoSelectedBy: Object.fromEntries([...alsoSelectedBy[index].entries()].sort()) }
        : wave,
    ),
    problems,
  };
}

/** The wave a cluster belongs to (index), or -1. */
export function waveIndexOf(policy: Pick<RolloutPolicy, 'waves'>, cluster: string): number {
  return policy.waves.findIndex((wave) => wave.clusters.includes(cluster));
}
