/**
 * The rollout state machine of a static app's waves: from the policy, the state persisted last time, what
 * every targeted cluster reports now and the hub clock, it decides which clusters' ManifestWorks get which
 * payload, and the state to persist. Pure and deterministic: no I/O, no clock (only `input.now`), no
 * randomness; the controller calls {@link stepRollout} on every relevant event and at `recheckAt`.
 *
 * @remarks
 * The rules, in the order one step applies them:
 *
 * 1. **Identity.** `target` hashes the sorted (cluster, desired) pairs. A new rollout starts when there
 *    is no previous state, or when a cluster this rollout moved (one in `previous.clusters` it wrote to)
 *    now desires something other than what it was moved to (a cluster it only found already there does
 *    not count: it is dropped and waits in its wave): the state starts afresh (a halt of the old
 *    rollout is cleared, so a fixed spec continues; only the last resume token carries over). A change of
 *    membership alone (a cluster joins, the app leaves a cluster) or of the payload of clusters not
 *    touched yet continues the rollout: `target` is updated, the clusters that left are dropped from the
 *    state (nothing is written for them) and joiners wait in their wave.
 * 2. **Resume.** A resume token that is defined and differs from `state.resumeToken` while the rollout is
 *    halted retries every failed cluster: each goes back to waiting and is promoted again under the
 *    in-flight limit with a new `promotedAt`; the halt is cleared and the token recorded. A token seen
 *    while not halted is only recorded, so an annotation left in place never resumes a later halt. An
 *    absent token leaves the recorded one as it is.
 * 3. **Convergence and failure.** A cluster is converged at hash H when its work carries H
 *    (`delivered === H`), the spoke reports running it (`sawDelivered`), and the spoke Application is
 *    `Healthy` and `Synced`. An in-flight cluster (promoted, neither done nor failed) that converges at its
 *    target is done. Otherwise it fails when `now` is past `promotedAt + progressDeadlineSeconds` (an
 *    offline cluster never converges and fails there), or at once when the spoke runs the target and
 *    reports an operation `Failed` or `Error` whose `operationStartedAt` is strictly later than
 *    `promotedAt`. The two instants come from different clocks: a spoke clock behind the hub's makes a new
 *    operation look older, which only delays its detection to the deadline; an operation is blamed at once
 *    only when it looks newer than the promotion, so a spoke clock ahead by k seconds could blame an
 *    operation that began less than k seconds before the promotion and is still reported next to the new
 *    payload (Argo CD replaces it as soon as it starts the next sync). A cluster not touched yet that is
 *    already converged at what it desires counts as done at once and is never written.
 * 4. **Failures and halt.** Failed clusters stay failed (no retry) and count as finished for their wave
 *    while their number is at most `maxFailures`. One more halts the rollout: nothing is promoted, lost
 *    writes are not re-emitted, in-flight clusters are still watched until they converge or fail. With
 *    `rollback` every failed cluster that had a work before gets its previous payload (`from`) back; one
 *    that had none keeps the new payload, since nothing is ever deleted. With `pause` nothing is written.
 *    A halt also ends when its failed clusters leave the app (the count falls back within tolerance).
 * 5. **Waves.** Waves run in the policy's order; a targeted cluster in no wave (a runtime joiner) belongs
 *    to the last wave, and one listed in two belongs to the first. A cluster the policy lists that has no
 *    observation is **missing**: its hub Application does not exist yet (Argo CD creates a commit's objects
 *    one at a time, in no wave order) or cannot be delivered. A wave with a missing cluster is unfinished,
 *    whatever its other clusters report, so it holds every later wave; its present clusters still move.
 *    When every cluster of a wave is present and done or failed within tolerance (while halted no failure
 *    is), the wave completes: `waveCompletedAt` records that instant once (it is dropped again if the wave
 *    gains an unfinished or missing cluster). The next wave starts when the soak has passed since then; a
 *    wave this rollout wrote nothing to (every cluster was already there) does not soak, and a wave with
 *    neither targeted nor missing clusters is passed over. The first wave that is unfinished, or that still
 *    soaks, is the gate: later waves wait. In the gate wave, waiting clusters (no entry in the state) are
 *    promoted in name order while fewer than {@link inFlightLimit} of its clusters are in flight; a limit
 *    of 0 holds the wave. Promoting records `{ target: desired, from: delivered, promotedAt: now }` and
 *    writes `desired`, unless the work already carries it. The first wave with a missing cluster is
 *    reported in `held`, naming the hub Applications it waits for.
 * 6. **Lost writes.** A promoted cluster whose work does not carry its target yet (a write lost to a
 *    restart, or not yet in the cache) gets the same write again, with its `promotedAt` unchanged.
 * 7. **Completion.** The rollout is complete when it is not halted, no cluster is missing and every cluster
 *    is done or failed (within tolerance); `completedAt` records the instant once and is dropped if a
 *    cluster joins.
 *
 * Timestamps are written with {@link kubeTime} (whole seconds, truncated), and deadlines and soaks are
 * measured from the stored, parsed instants, so the same state gives the same decision after a restart.
 * A second call with the returned state, the same observations with the writes applied (the works carry
 * the written hashes, not yet seen by the spokes) and the same `now` gives no write and a deep-equal state.
 */
import { createHash } from 'node:crypto';
import { kubeTime } from '../core/time.js';
import { staticHubApplicationName } from '../delivery/hub-application.js';
import { ROLLOUT_RESUME_ANNOTATION, inFlightLimit, type RolloutPolicy, type RolloutWave } from './policy.js';
import {
  rolloutPolicyName,
  type ClusterRollout,
  type RolloutHold,
  type RolloutPhase,
  type RolloutProgress,
  type RolloutState,
  type WaveProgress,
} from './state.js';

/** What one step of a rollout is given. */
export interface RolloutInput {
  /** The app's resolved policy. */
  readonly policy: RolloutPolicy;
  /** The state as persisted last time (JSON round-tripped); undefined the first time. */
  readonly previous?: RolloutState;
  /** One per cluster the app targets now; a repeated cluster keeps its first observation. */
  readonly observations: readonly ClusterObservation[];
  /** The hub clock. */
  readonly now: Date;
  /** The value of the resume annotation ({@link ROLLOUT_RESUME_ANNOTATION}), if any. */
  readonly resumeToken?: string;
  /** The hub Applications' namespace, to name them in `held` (messages only). */
  readonly namespace?: string;
  /**
   * Hub Applications that exist but give no observation (being deleted, no target cluster, no payload can be
   * built), by name, each with why: `held` says so instead of "does not exist". Messages only.
   */
  readonly unobservable?: Readonly<Record<string, string>>;
}

/** What the hub sees of one targeted cluster. */
export interface ClusterObservation {
  readonly cluster: string;
  /** Hash of the payload the hub Application asks for now. */
  readonly desired: string;
  /** Hash of the payload the cluster's ManifestWork carries now; undefined when it has no work. */
  readonly delivered?: string;
  /** The spoke Application reports it runs `delivered` (its feedback spec hash equals it). */
  readonly sawDelivered: boolean;
  /** The spoke Application's `health.status` (Healthy, Progressing, Degraded, Missing, Unknown…). */
  readonly health?: string;
  /** The spoke Application's `sync.status` (Synced, OutOfSync, Unknown). */
  readonly sync?: string;
  /** The spoke Application's `operationState.phase` (Running, Succeeded, Failed, Error, Terminating). */
  readonly operationPhase?: string;
  /** The spoke Application's `operationState.startedAt`, RFC 3339 on the spoke's clock. */
  readonly operationStartedAt?: string;
}

/** One write to a cluster's ManifestWork: the payload with hash `hash`. */
export interface RolloutWrite {
  readonly cluster: string;
  readonly hash: string;
  readonly reason: 'promote' | 'rollback';
}

/**
 * What one step decides: the state to persist, the works to write, and where the rollout stands (its
 * {@link RolloutProgress}: together with `state`, what the state ConfigMap holds).
 */
export interface RolloutDecision extends RolloutProgress {
  /** The state to persist; deep-equal to the previous one when nothing changed (skip the write then). */
  readonly state: RolloutState;
  /** The works to write, sorted by cluster. */
  readonly writes: readonly RolloutWrite[];
  /** The earliest moment time alone changes the decision (a soak ends, a deadline passes). */
  readonly recheckAt?: Date;
}

/** The identity of a rollout to `observations`: a SHA-256 over the sorted (cluster, desired) pairs. */
export function rolloutTarget(observations: readonly Pick<ClusterObservation, 'cluster' | 'desired'>[]): string {
  // The first observation of a repeated cluster wins, as in stepRollout.
  const first = new Map<string, string>();
  for (const o of observations) if (!first.has(o.cluster)) first.set(o.cluster, o.desired);
  const sorted = [...first.entries()].sort(([a], [b]) => byName(a, b));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

/** One step of the rollout: see the module's rules. */
export function stepRollout(input: RolloutInput): RolloutDecision {
  const { policy, now } = input;
  const nowMs = now.getTime();
  const stamp = kubeTime(now);
  const observed = firstByCluster(input.observations);
  const target = rolloutTarget(input.observations);

  const previous = input.previous && continues(input.previous, target, observed) ? input.previous : undefined;
  const wasHalted = previous?.halted !== undefined;
  const resuming = wasHalted && input.resumeToken !== undefined && input.resumeToken !== input.previous?.resumeToken;
  const resumeToken =
    input.resumeToken !== undefined && (!wasHalted || resuming) ? input.resumeToken : input.previous?.resumeToken;

  // The entries of clusters still targeted; a resume sends failed clusters back to waiting.
  const entries = new Map<string, ClusterRollout>();
  for (const [cluster, entry] of Object.entries(previous?.clusters ?? {})) {
    if (!observed.has(cluster)) continue;
    if (resuming && entry.failedAt !== undefined) continue;
    // Found there at an older payload: it now waits in its wave for the new one.
    if (foundThere(entry) && observed.get(cluster)!.desired !== entry.target) continue;
    entries.set(cluster, entry);
  }

  // Convergence and failure of in-flight clusters; clusters already there count as done.
  const deadlineMs = policy.progressDeadlineSeconds * 1000;
  for (const [cluster, observation] of observed) {
    const entry = entries.get(cluster);
    if (!entry) {
      if (converged(observation, observation.desired))
        entries.set(cluster, {
          target: observation.desired,
          from: observation.desired,
          promotedAt: stamp,
          doneAt: stamp,
        });
      continue;
    }
    if (!inFlight(entry)) continue;
    if (converged(observation, entry.target)) {
      entries.set(cluster, { ...entry, doneAt: stamp });
      continue;
    }
    const failure = failureOf(entry, observation, nowMs, deadlineMs, policy.progressDeadlineSeconds);
    if (failure !== undefined) entries.set(cluster, { ...entry, failedAt: stamp, failure });
  }

  const failed = [...entries.entries()].filter(([, entry]) => entry.failedAt !== undefined).map(([c]) => c);
  failed.sort(byName);
  const halted = failed.length > policy.maxFailures;

  // Waves: completion, soak, the gate, promotions.
  const waves = policy.waves.length > 0 ? policy.waves : [IMPLICIT_WAVE];
  const members = membersOf(waves, [...observed.keys()]);
  const missing = missingOf(waves, observed);
  // Done, or failed within tolerance: while halted, failures are beyond it.
  const finished = (cluster: string): boolean => {
    const entry = entries.get(cluster);
    return entry !== undefined && (entry.doneAt !== undefined || (entry.failedAt !== undefined && !halted));
  };
  const waveCompletedAt: Record<string, string> = {};
  let gate: { readonly index: number; readonly soakEnd?: number } | undefined;
  waves.forEach((wave, index) => {
    const clusters = members[index] ?? [];
    const absent = missing[index] ?? [];
    if (clusters.length === 0 && absent.length === 0) return;
    if (absent.length > 0 || !clusters.every(finished)) {
      gate ??= { index };
      return;
    }
    const completedAt = previous?.waveCompletedAt?.[wave.name] ?? stamp;
    waveCompletedAt[wave.name] = completedAt;
    const moved = clusters.some((cluster) => {
      const entry = entries.get(cluster);
      return entry !== undefined && entry.from !== entry.target;
    });
    const soakEnd = Date.parse(completedAt) + wave.soakSeconds * 1000;
    if (gate === undefined && moved && nowMs < soakEnd) gate = { index, soakEnd };
  });
  const anyMissing = missing.some((absent) => absent.length > 0);
  const complete = !halted && !anyMissing && observed.size > 0 && [...observed.keys()].every(finished);

  const current = gate;
  if (!halted && !complete && current !== undefined && current.soakEnd === undefined) {
    const wave = waves[current.index];
    const clusters = members[current.index] ?? [];
    const limit = inFlightLimit(wave.maxInFlight, clusters.length);
    let flying = clusters.filter((cluster) => {
      const entry = entries.get(cluster);
      return entry !== undefined && inFlight(entry);
    }).length;
    for (const cluster of clusters) {
      if (flying >= limit) break;
      if (entries.has(cluster)) continue;
      const observation = observed.get(cluster) as ClusterObservation;
      entries.set(cluster, {
        target: observation.desired,
        ...(observation.delivered !== undefined ? { from: observation.delivered } : {}),
        promotedAt: stamp,
      });
      flying += 1;
    }
  }

  // Writes: promotions and lost writes while not halted; rollbacks while halted.
  const writes: RolloutWrite[] = [];
  for (const [cluster, entry] of entries) {
    const delivered = observed.get(cluster)?.delivered;
    if (!halted && inFlight(entry) && delivered !== entry.target)
      writes.push({ cluster, hash: entry.target, reason: 'promote' });
    if (
      halted &&
      policy.onFailure === 'rollback' &&
      entry.failedAt !== undefined &&
      entry.from !== undefined &&
      delivered !== entry.from
    )
      writes.push({ cluster, hash: entry.from, reason: 'rollback' });
  }
  writes.sort((a, b) => byName(a.cluster, b.cluster));

  // recheckAt: deadlines of in-flight clusters, and the soak end while a soak holds the next wave.
  let recheck = Number.POSITIVE_INFINITY;
  for (const entry of entries.values())
    if (inFlight(entry)) recheck = Math.min(recheck, Date.parse(entry.promotedAt) + deadlineMs + 1);
  const soaking = !halted && !complete && current?.soakEnd !== undefined;
  if (soaking && current?.soakEnd !== undefined) recheck = Math.min(recheck, current.soakEnd);

  const phase: RolloutPhase =
    observed.size === 0 ? 'idle' : halted ? 'halted' : complete ? 'complete' : soaking ? 'soaking' : 'progressing';

  const reason = halted ? haltReason(failed, entries, policy.maxFailures) : undefined;
  const haltedAt = resuming ? undefined : previous?.halted?.at;
  const applicationOf = (cluster: string): string => {
    const name = staticHubApplicationName(policy.app, cluster);
    return input.namespace !== undefined ? `${input.namespace}/${name}` : name;
  };
  const held = heldOf(policy, waves, missing, applicationOf, input.unobservable ?? {}, input.namespace);
  const clusters: Record<string, ClusterRollout> = {};
  for (const cluster of [...entries.keys()].sort(byName)) clusters[cluster] = entries.get(cluster) as ClusterRollout;
  const state: RolloutState = {
    target,
    startedAt: previous?.startedAt ?? stamp,
    clusters,
    ...(halted && reason !== undefined ? { halted: { at: haltedAt ?? stamp, clusters: failed, reason } } : {}),
    ...(resumeToken !== undefined ? { resumeToken } : {}),
    ...(complete ? { completedAt: previous?.completedAt ?? stamp } : {}),
    ...(Object.keys(waveCompletedAt).length > 0 ? { waveCompletedAt } : {}),
  };

  return {
    state,
    writes,
    ...(halted && reason !== undefined
      ? { halted: { clusters: failed, message: haltMessage(policy, reason, failed, entries) } }
      : {}),
    ...(Number.isFinite(recheck) ? { recheckAt: new Date(recheck) } : {}),
    waves: waves.map((wave, index) =>
      progressOf(wave, members[index] ?? [], (missing[index] ?? []).map(applicationOf), entries, {
        isGate: current?.index === index,
        halted,
        idle: observed.size === 0,
        haltedAt: haltedAt ?? stamp,
        completedAt: waveCompletedAt[wave.name],
        soaking: soaking && current?.index === index,
      }),
    ),
    phase,
    ...(held ? { held } : {}),
  };
}

/** The wave of a policy that lists none: every cluster at once, no soak. */
const IMPLICIT_WAVE: RolloutWave = { name: 'all', clusters: [], soakSeconds: 0 };

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function firstByCluster(observations: readonly ClusterObservation[]): Map<string, ClusterObservation> {
  const byCluster = new Map<string, ClusterObservation>();
  for (const observation of observations)
    if (!byCluster.has(observation.cluster)) byCluster.set(observation.cluster, observation);
  return byCluster;
}

/**
 * Whether `previous` is the same rollout: see rule 1 of the module. A cluster the rollout only found already
 * there (`from === target`: it wrote nothing to it) never pins it: when its hub Application changes, the
 * cluster waits in its wave of the rollout under way (hub Applications change one at a time as Argo CD
 * applies a commit).
 */
function continues(previous: RolloutState, target: string, observed: ReadonlyMap<string, ClusterObservation>): boolean {
  if (previous.target === target) return true;
  return Object.entries(previous.clusters).every(([cluster, entry]) => {
    if (foundThere(entry)) return true;
    const observation = observed.get(cluster);
    return observation === undefined || observation.desired === entry.target;
  });
}

/** An entry the rollout found already converged: it wrote nothing to that cluster. */
function foundThere(entry: ClusterRollout): boolean {
  return entry.from === entry.target;
}

function inFlight(entry: ClusterRollout): boolean {
  return entry.doneAt === undefined && entry.failedAt === undefined;
}

function converged(observation: ClusterObservation, hash: string): boolean {
  return (
    observation.delivered === hash &&
    observation.sawDelivered &&
    observation.health === 'Healthy' &&
    observation.sync === 'Synced'
  );
}

/** Why an in-flight cluster failed, or undefined while it may still converge. */
function failureOf(
  entry: ClusterRollout,
  observation: ClusterObservation,
  nowMs: number,
  deadlineMs: number,
  deadlineSeconds: number,
): string | undefined {
  const promotedMs = Date.parse(entry.promotedAt);
  const runsTarget = observation.delivered === entry.target && observation.sawDelivered;
  const phase = observation.operationPhase;
  if (runsTarget && (phase === 'Failed' || phase === 'Error') && observation.operationStartedAt !== undefined) {
    const startedMs = Date.parse(observation.operationStartedAt);
    if (Number.isFinite(startedMs) && startedMs > promotedMs)
      return `sync operation ${phase} (started ${observation.operationStartedAt} on the spoke)`;
  }
  if (nowMs <= promotedMs + deadlineMs) return undefined;
  if (observation.delivered !== entry.target)
    return `its ManifestWork did not carry the new payload within the ${deadlineSeconds}s progress deadline`;
  if (!observation.sawDelivered)
    return `the spoke did not report running the new payload within the ${deadlineSeconds}s progress deadline (work agent or spoke Argo CD not answering)`;
  return `not Healthy and Synced within the ${deadlineSeconds}s progress deadline (health ${observation.health ?? 'unknown'}, sync ${observation.sync ?? 'unknown'})`;
}

/** The targeted clusters of each wave, sorted; a cluster in no wave joins the last one. */
function membersOf(waves: readonly RolloutWave[], clusters: readonly string[]): string[][] {
  const waveOf = new Map<string, number>();
  waves.forEach((wave, index) => {
    for (const cluster of wave.clusters) if (!waveOf.has(cluster)) waveOf.set(cluster, index);
  });
  const members = waves.map((): string[] => []);
  for (const cluster of clusters) members[waveOf.get(cluster) ?? waves.length - 1]?.push(cluster);
  for (const list of members) list.sort(byName);
  return members;
}

/**
 * The clusters each wave's policy entry lists (a cluster listed twice belongs to the first wave) that have no
 * observation, sorted.
 */
function missingOf(waves: readonly RolloutWave[], observed: ReadonlyMap<string, ClusterObservation>): string[][] {
  const seen = new Set<string>();
  return waves.map((wave) => {
    const absent: string[] = [];
    for (const cluster of wave.clusters) {
      if (seen.has(cluster)) continue;
      seen.add(cluster);
      if (!observed.has(cluster)) absent.push(cluster);
    }
    return absent.sort(byName);
  });
}

/** At most this many missing hub Applications are named in a message (all are listed in the waves' progress). */
const MISSING_NAMED = 5;

/** The first wave with missing clusters, as {@link RolloutDecision.held}. */
function heldOf(
  policy: RolloutPolicy,
  waves: readonly RolloutWave[],
  missing: readonly (readonly string[])[],
  applicationOf: (cluster: string) => string,
  unobservable: Readonly<Record<string, string>>,
  namespace: string | undefined,
): RolloutHold | undefined {
  const index = missing.findIndex((absent) => absent.length > 0);
  if (index < 0) return undefined;
  const absent = missing[index] ?? [];
  const applications = absent.map(applicationOf);
  const policyMap = `${namespace !== undefined ? `${namespace}/` : ''}${rolloutPolicyName(policy.app)}`;
  const named = absent.slice(0, MISSING_NAMED).map((cluster) => {
    const why = unobservable[staticHubApplicationName(policy.app, cluster)];
    return `hub Application ${applicationOf(cluster)} (cluster ${cluster}) ${why ?? 'does not exist'}`;
  });
  const more = absent.length > MISSING_NAMED ? ` and ${absent.length - MISSING_NAMED} more` : '';
  const later = waves.slice(index + 1).map((wave) => `"${wave.name}"`);
  const holds =
    later.length > 0
      ? `wave${later.length === 1 ? '' : 's'} ${later.join(', ')} wait${later.length === 1 ? 's' : ''} until the wave is done`
      : 'the rollout is not complete until then';
  return {
    wave: waves[index]?.name ?? '',
    applications,
    message:
      `rollout of app "${policy.app}" waits for wave "${waves[index]?.name ?? ''}": ${named.join('; ')}${more}. ` +
      `A wave is done only when every cluster its policy lists has its hub Application and is Healthy and Synced at the rollout's revision; ${holds}. ` +
      `The hub's Argo CD creates the hub Applications when it syncs the commit: check that it synced dist/ in full, ` +
      `or synthesize again if the spoke no longer takes the app (the policy ConfigMap ${policyMap} still lists it).`,
  };
}

function haltReason(
  failed: readonly string[],
  entries: ReadonlyMap<string, ClusterRollout>,
  maxFailures: number,
): string {
  const count = failed.length === 1 ? '1 cluster failed' : `${failed.length} clusters failed`;
  const list = failed.map((cluster) => `${cluster}: ${entries.get(cluster)?.failure ?? 'failed'}`).join('; ');
  return `${count}, more than the ${maxFailures} tolerated: ${list}`;
}

function haltMessage(
  policy: RolloutPolicy,
  reason: string,
  failed: readonly string[],
  entries: ReadonlyMap<string, ClusterRollout>,
): string {
  let action = 'every cluster keeps the payload it has';
  if (policy.onFailure === 'rollback') {
    const fresh = failed.filter((cluster) => entries.get(cluster)?.from === undefined);
    action =
      'the failed clusters get their previous payload back' +
      (fresh.length > 0 ? ` (${fresh.join(', ')} had none and keep the new one)` : '') +
      ', every other cluster keeps the payload it has';
  }
  return (
    `rollout of app "${policy.app}" halted: ${reason}. Nothing more is promoted; ${action}. ` +
    `Fix the spec (a new revision starts a new rollout) or set annotation ${ROLLOUT_RESUME_ANNOTATION} on the rollout ConfigMap to a new value to retry them.`
  );
}

function progressOf(
  wave: RolloutWave,
  clusters: readonly string[],
  missing: readonly string[],
  entries: ReadonlyMap<string, ClusterRollout>,
  at: {
    readonly isGate: boolean;
    readonly halted: boolean;
    readonly idle: boolean;
    readonly haltedAt: string;
    readonly completedAt: string | undefined;
    readonly soaking: boolean;
  },
): WaveProgress {
  let done = 0;
  let flying = 0;
  let failed = 0;
  let firstPromotion: string | undefined;
  for (const cluster of clusters) {
    const entry = entries.get(cluster);
    if (!entry) continue;
    if (entry.doneAt !== undefined) done += 1;
    else if (entry.failedAt !== undefined) failed += 1;
    else flying += 1;
    if (firstPromotion === undefined || Date.parse(entry.promotedAt) < Date.parse(firstPromotion))
      firstPromotion = entry.promotedAt;
  }
  const counts = {
    name: wave.name,
    clusters: clusters.length,
    done,
    inFlight: flying,
    failed,
    waiting: clusters.length - done - flying - failed,
    ...(missing.length > 0 ? { missing } : {}),
  };
  const since = (value: string | undefined) => (value !== undefined ? { since: value } : {});
  if (at.idle) return { ...counts, state: 'waiting' };
  if (clusters.length === 0 && missing.length === 0) return { ...counts, state: 'done' };
  if (at.completedAt !== undefined)
    return { ...counts, state: at.soaking ? 'soaking' : 'done', ...since(at.completedAt) };
  if (at.halted && (at.isGate || failed > 0)) return { ...counts, state: 'halted', since: at.haltedAt };
  if (at.isGate && !at.halted) return { ...counts, state: 'progressing', ...since(firstPromotion) };
  return { ...counts, state: 'waiting' };
}
