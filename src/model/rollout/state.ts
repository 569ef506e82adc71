/**
 * The persisted side of a waved static app's rollout: the policy ConfigMap synth renders, and the state
 * ConfigMap the controller keeps beside it (the engine's state in {@link ROLLOUT_STATE_KEY}, and in
 * {@link ROLLOUT_PROGRESS_KEY} the progress `pullfleet status` shows). This module owns both: their names,
 * the types of what they hold, and the one function that builds and the one that reads each. Synth, the
 * controller and the CLI all go through it. Pure: no I/O.
 */
import { canonicalJson } from '../core/canonical-json.js';
import { CONSTRUCT_PATH_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/keys.js';
import { fitName, MAX_NAME_LENGTH } from '../core/names.js';
import { sortKeys } from '../core/records.js';
import type { ConfigMapLike } from '../core/types.js';
import type { ConfigMapObject } from '../delivery/appset.js';
import {
  ROLLOUT_APP_LABEL,
  ROLLOUT_KIND_LABEL,
  ROLLOUT_POLICY_KEY,
  ROLLOUT_PROGRESS_KEY,
  ROLLOUT_REVISION_ANNOTATION,
  ROLLOUT_STATE_KEY,
  type RolloutPolicy,
  type RolloutWave,
} from './policy.js';

/** A rollout as the controller persists it (JSON in {@link ROLLOUT_STATE_KEY} of the state ConfigMap). */
export interface RolloutState {
  /** The identity of the rollout: a hash over the sorted (cluster, desired) pairs it moves to. */
  readonly target: string;
  /** When the rollout started (RFC 3339, hub time). */
  readonly startedAt: string;
  /** Every cluster this rollout promoted or found already there, by name. */
  readonly clusters: Readonly<Record<string, ClusterRollout>>;
  /** Set while the rollout is halted: since when, the failed clusters, and why. */
  readonly halted?: { readonly at: string; readonly clusters: readonly string[]; readonly reason: string };
  /** The last resume token seen (see the rules of engine.ts). */
  readonly resumeToken?: string;
  /** When every cluster was first seen done or failed within tolerance. */
  readonly completedAt?: string;
  /** Wave name → when its last cluster finished (the soak starts there). */
  readonly waveCompletedAt?: Readonly<Record<string, string>>;
}

/** One cluster of a rollout. */
export interface ClusterRollout {
  /** The hash this cluster is moved to. */
  readonly target: string;
  /** The hash its work carried when it was promoted; undefined when it had no work. */
  readonly from?: string;
  /** Hub time the controller decided to write `target` (or found it already there). */
  readonly promotedAt: string;
  /** Hub time it was first seen converged at `target`. */
  readonly doneAt?: string;
  /** Hub time it was found failed. */
  readonly failedAt?: string;
  /** Why it failed, one line, for conditions and status. */
  readonly failure?: string;
}

/** Where a rollout stands: no targeted cluster, moving, waiting out a soak, stopped on failures, finished. */
export type RolloutPhase = 'idle' | 'progressing' | 'soaking' | 'halted' | 'complete';

/** A wave that cannot finish because hub Applications of its clusters are missing. */
export interface RolloutHold {
  readonly wave: string;
  /** The missing hub Applications (`<namespace>/<name>` when the namespace is known), sorted by cluster. */
  readonly applications: readonly string[];
  readonly message: string;
}

/** One wave's progress. */
export interface WaveProgress {
  readonly name: string;
  /** Targeted clusters in the wave (runtime joiners included in the last wave). */
  readonly clusters: number;
  readonly done: number;
  readonly inFlight: number;
  readonly failed: number;
  readonly waiting: number;
  /**
   * Hub Applications of clusters the policy lists in this wave that the rollout cannot observe (not created
   * yet, or not deliverable); not counted in `clusters`. Absent when there are none.
   */
  readonly missing?: readonly string[];
  readonly state: 'waiting' | 'progressing' | 'soaking' | 'done' | 'halted';
  /**
   * When it entered that state (RFC 3339 hub time), when known: its first promotion (progressing), the
   * halt (halted), its last cluster finishing (soaking, done).
   */
  readonly since?: string;
}

/** Where a rollout stands, for `pullfleet status` and plan (JSON in {@link ROLLOUT_PROGRESS_KEY}). */
export interface RolloutProgress {
  readonly phase: RolloutPhase;
  /** Every wave of the policy, in order. */
  readonly waves: readonly WaveProgress[];
  /** Set while halted: the failed clusters, and a message naming them, their failures and how to resume. */
  readonly halted?: { readonly clusters: readonly string[]; readonly message: string };
  /**
   * Set while a cluster the policy lists has no hub Application the rollout can observe: the first wave with
   * one, its missing hub Applications and a message naming them, the waves they hold and the fix.
   */
  readonly held?: RolloutHold;
}

/** One app's rollout as read back from its state ConfigMap ({@link parseRolloutProgress}). */
export interface RolloutProgressReading extends Omit<RolloutProgress, 'phase'> {
  /** The hub's Argo CD namespace the ConfigMap lives in. */
  readonly namespace: string;
  /** The fleet app (label {@link ROLLOUT_APP_LABEL}). */
  readonly app: string;
  /** The phase as written (a {@link RolloutPhase}), or `unknown` when the progress cannot be read. */
  readonly phase: string;
  /** Set when the progress could not be read: which ConfigMap, why, and that the controller rewrites it. */
  readonly problem?: string;
}

/** The outcome of reading a persisted state: the state, or why it cannot be used. */
export type ParsedRolloutState =
  { readonly ok: true; readonly state: RolloutState } | { readonly ok: false; readonly problem: string };

/** An app's rollout policy as read from its ConfigMap: the policy, or why it cannot be read. */
export interface ParsedRolloutPolicy {
  readonly policy?: RolloutPolicy;
  readonly problem?: string;
}

/** The label selector of every app's state ConfigMap (what `pullfleet status` lists). */
export const ROLLOUT_STATE_SELECTOR = `${ROLLOUT_KIND_LABEL}=state`;

/** The fleet app a rollout ConfigMap (policy or state) belongs to: its {@link ROLLOUT_APP_LABEL}, if any. */
export function rolloutAppOf(configMap: ConfigMapLike): string | undefined {
  return configMap.metadata?.labels?.[ROLLOUT_APP_LABEL];
}

/** The name of an app's rollout policy ConfigMap (in the hub's Argo CD namespace). */
export function rolloutPolicyName(app: string): string {
  return fitName(`pullfleet-rollout-${app}`, MAX_NAME_LENGTH);
}

/** The name of the ConfigMap the controller keeps an app's rollout state in (beside the policy). */
export function rolloutStateName(app: string): string {
  return fitName(`pullfleet-rollout-${app}-state`, MAX_NAME_LENGTH);
}

/** Data key of wave `index` (0-based) in the policy ConfigMap: `wave-001-canary.json` (keys sort in wave order). */
export function waveKey(index: number, name: string): string {
  return `wave-${String(index + 1).padStart(3, '0')}-${name}.json`;
}

/** The labels of an app's rollout ConfigMap of `kind` (what the controller informs and `pullfleet status` lists). */
function rolloutLabels(app: string, kind: 'policy' | 'state'): Record<string, string> {
  return sortKeys({ [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [ROLLOUT_APP_LABEL]: app, [ROLLOUT_KIND_LABEL]: kind });
}

/** `<namespace>/<name>` of a ConfigMap, for messages. */
function whereOf(configMap: ConfigMapLike): string {
  return `ConfigMap ${configMap.metadata?.namespace ?? ''}/${configMap.metadata?.name ?? ''}`;
}

/**
 * The rollout policy as a ConfigMap the controller reads: the settings in {@link ROLLOUT_POLICY_KEY} and one
 * key per wave, each a one-line JSON object, so a review diff shows which wave changed.
 */
export function buildRolloutPolicyConfigMap(
  policy: RolloutPolicy,
  namespace: string,
  constructPath: string,
  revision: string,
): ConfigMapObject {
  const data: Record<string, string> = {
    [ROLLOUT_POLICY_KEY]: JSON.stringify({
      app: policy.app,
      maxFailures: policy.maxFailures,
      onFailure: policy.onFailure,
      progressDeadlineSeconds: policy.progressDeadlineSeconds,
      waves: policy.waves.length,
    }),
  };
  policy.waves.forEach((wave, i) => {
    data[waveKey(i, wave.name)] = JSON.stringify({
      name: wave.name,
      ...(wave.maxInFlight ? { maxInFlight: wave.maxInFlight } : {}),
      soakSeconds: wave.soakSeconds,
      clusters: [...wave.clusters],
      ...(wave.alsoSelectedBy ? { alsoSelectedBy: wave.alsoSelectedBy } : {}),
      ...(wave.outside ? { outside: wave.outside } : {}),
    });
  });
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: rolloutPolicyName(policy.app),
      namespace,
      labels: rolloutLabels(policy.app, 'policy'),
      annotations: { [CONSTRUCT_PATH_ANNOTATION]: constructPath, [ROLLOUT_REVISION_ANNOTATION]: revision },
    },
    data,
  };
}

const isWave = (w: unknown): w is RolloutWave => {
  const wave = w as Record<string, unknown>;
  const limit = wave?.maxInFlight as Record<string, unknown> | undefined;
  return (
    typeof wave?.name === 'string' &&
    typeof wave.soakSeconds === 'number' &&
    Array.isArray(wave.clusters) &&
    wave.clusters.every((c) => typeof c === 'string') &&
    (limit === undefined || typeof limit.count === 'number' || typeof limit.percent === 'number')
  );
};

/**
 * Reads a policy ConfigMap's content; a problem (naming the ConfigMap and the fix) when it is not one. The API
 * stores only strings as data; any other value is read as `JSON.parse` reads it (its string form).
 */
export function parseRolloutPolicy(configMap: ConfigMapLike): ParsedRolloutPolicy {
  const where = whereOf(configMap);
  const fix = 'synthesize the fleet again and let the hub apply it';
  const data = configMap.data ?? {};
  let settings: Record<string, unknown>;
  try {
    settings = JSON.parse(String(data[ROLLOUT_POLICY_KEY] ?? 'null')) as Record<string, unknown>;
  } catch (error) {
    return { problem: `${where}: ${ROLLOUT_POLICY_KEY} is not JSON (${(error as Error).message}): ${fix}` };
  }
  if (
    !settings ||
    typeof settings.app !== 'string' ||
    typeof settings.maxFailures !== 'number' ||
    typeof settings.progressDeadlineSeconds !== 'number' ||
    (settings.onFailure !== 'pause' && settings.onFailure !== 'rollback') ||
    typeof settings.waves !== 'number'
  )
    return { problem: `${where}: ${ROLLOUT_POLICY_KEY} is not a rollout policy pullfleet wrote: ${fix}` };
  const keys = Object.keys(data)
    .filter((key) => /^wave-\d{3}-/.test(key))
    .sort();
  const waves: RolloutWave[] = [];
  for (const key of keys) {
    let wave: unknown;
    try {
      wave = JSON.parse(String(data[key]));
    } catch {
      wave = undefined;
    }
    if (!isWave(wave)) return { problem: `${where}: ${key} is not a wave pullfleet wrote: ${fix}` };
    waves.push(wave);
  }
  if (waves.length === 0 || waves.length !== settings.waves)
    return { problem: `${where}: ${settings.waves} waves announced, ${waves.length} found: ${fix}` };
  return {
    policy: {
      app: settings.app,
      maxFailures: settings.maxFailures,
      onFailure: settings.onFailure,
      progressDeadlineSeconds: settings.progressDeadlineSeconds,
      waves,
    },
  };
}

/**
 * The state ConfigMap the controller writes for `app`: the engine's state ({@link ROLLOUT_STATE_KEY}) and its
 * progress ({@link ROLLOUT_PROGRESS_KEY}), each canonical JSON. A rollout decision of engine.ts is both.
 */
export function buildRolloutStateConfigMap(
  namespace: string,
  app: string,
  content: RolloutProgress & { readonly state: RolloutState },
): ConfigMapObject {
  const progress = {
    phase: content.phase,
    waves: content.waves,
    ...(content.halted ? { halted: content.halted } : {}),
    ...(content.held ? { held: content.held } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: rolloutStateName(app), namespace, labels: rolloutLabels(app, 'state') },
    data: {
      [ROLLOUT_STATE_KEY]: canonicalJson(content.state),
      [ROLLOUT_PROGRESS_KEY]: canonicalJson(progress),
    },
  };
}

/**
 * Reads a state persisted as JSON, checking its shape. A state that cannot be used (hand-edited,
 * truncated) gives a problem naming `where` and the fix; without a previous state the next step starts
 * a fresh rollout, in which clusters already converged count as done and nothing is deleted.
 */
export function parseRolloutState(text: string, where: string): ParsedRolloutState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return bad(where, `it is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isRecord(value)) return bad(where, 'it is not a JSON object');
  for (const key of ['target', 'startedAt'] as const)
    if (typeof value[key] !== 'string') return bad(where, `"${key}" is not a string`);
  for (const key of ['resumeToken', 'completedAt'] as const)
    if (value[key] !== undefined && typeof value[key] !== 'string') return bad(where, `"${key}" is not a string`);
  if (!isRecord(value.clusters)) return bad(where, '"clusters" is not an object');
  for (const [cluster, entry] of Object.entries(value.clusters)) {
    if (!isRecord(entry) || typeof entry.target !== 'string' || typeof entry.promotedAt !== 'string')
      return bad(where, `cluster "${cluster}" lacks a string "target" or "promotedAt"`);
    for (const key of ['from', 'doneAt', 'failedAt', 'failure'] as const)
      if (entry[key] !== undefined && typeof entry[key] !== 'string')
        return bad(where, `"${key}" of cluster "${cluster}" is not a string`);
  }
  const halted = value.halted;
  if (
    halted !== undefined &&
    (!isRecord(halted) ||
      typeof halted.at !== 'string' ||
      typeof halted.reason !== 'string' ||
      !Array.isArray(halted.clusters) ||
      !halted.clusters.every((c) => typeof c === 'string'))
  )
    return bad(where, '"halted" needs a string "at", a string "reason" and a list of cluster names');
  const waves = value.waveCompletedAt;
  if (waves !== undefined && (!isRecord(waves) || !Object.values(waves).every((v) => typeof v === 'string')))
    return bad(where, '"waveCompletedAt" is not an object of wave names to times');
  return { ok: true, state: value as unknown as RolloutState };
}

/**
 * The state a state ConfigMap holds: none when it has no {@link ROLLOUT_STATE_KEY} (nothing persisted yet),
 * or why it cannot be used ({@link parseRolloutState}: the rollout then starts afresh and says so).
 */
export function parseRolloutStateConfigMap(configMap: ConfigMapLike | undefined): {
  readonly state?: RolloutState;
  readonly problem?: string;
} {
  const text = configMap?.data?.[ROLLOUT_STATE_KEY];
  if (text === undefined || configMap === undefined) return {};
  const parsed = parseRolloutState(String(text), whereOf(configMap));
  return parsed.ok ? { state: parsed.state } : { problem: parsed.problem };
}

/**
 * The progress a state ConfigMap holds ({@link ROLLOUT_PROGRESS_KEY}), with its app and namespace; undefined
 * for a ConfigMap without the {@link ROLLOUT_APP_LABEL} label. Progress that cannot be read (no key, not JSON,
 * no string `phase` or no `waves` list) gives phase `unknown`, no waves and a problem naming the ConfigMap.
 */
export function parseRolloutProgress(configMap: ConfigMapLike): RolloutProgressReading | undefined {
  const app = rolloutAppOf(configMap);
  if (!app) return undefined;
  const namespace = configMap.metadata?.namespace ?? '';
  try {
    const progress = JSON.parse(String(configMap.data?.[ROLLOUT_PROGRESS_KEY] ?? '')) as Partial<RolloutProgress>;
    if (typeof progress.phase !== 'string' || !Array.isArray(progress.waves)) throw new Error('not a progress summary');
    return {
      namespace,
      app,
      phase: progress.phase,
      waves: progress.waves,
      ...(progress.halted ? { halted: progress.halted } : {}),
      ...(progress.held ? { held: progress.held } : {}),
    };
  } catch (error) {
    return {
      namespace,
      app,
      phase: 'unknown',
      waves: [],
      problem: `${whereOf(configMap)} holds no readable ${ROLLOUT_PROGRESS_KEY} (${(error as Error).message}); the controller rewrites it on its next pass`,
    };
  }
}

function bad(where: string, why: string): ParsedRolloutState {
  return {
    ok: false,
    problem: `rollout state in ${where} cannot be read: ${why}; delete it to start the rollout afresh (clusters already converged count as done, nothing is deleted)`,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
