/**
 * What synth renders for a static app rolled out in waves: its hub Applications (as for any static app,
 * but `pullfleet.io/delivery: waved` and naming the rollout policy) and one policy ConfigMap; no works.
 * The controller writes each spoke's work when the spoke's wave comes (engine.ts). Pure: no I/O.
 */
import {
  ARGOCD_SYNC_OPTIONS_ANNOTATION,
  CONSTRUCT_PATH_ANNOTATION,
  DELIVERY_ANNOTATION,
  DELIVERY_WAVED,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
} from '../core/keys.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { fitName, MAX_NAME_LENGTH } from '../core/names.js';
import { sortKeys } from '../core/records.js';
import type { Application, KubeObject } from '../core/types.js';
import { buildStaticHubApplication, type AppDefinition } from '../delivery/hub-application.js';
import {
  ROLLOUT_ANNOTATION,
  ROLLOUT_APP_LABEL,
  ROLLOUT_KIND_LABEL,
  ROLLOUT_POLICY_KEY,
  ROLLOUT_REVISION_ANNOTATION,
  type RolloutPolicy,
  type RolloutWave,
} from './policy.js';

/** The name of an app's rollout policy ConfigMap (in the hub's Argo CD namespace). */
export function rolloutPolicyName(app: string): string {
  return fitName(`pullfleet-rollout-${app}`, MAX_NAME_LENGTH);
}

/** The name of the ConfigMap the controller keeps an app's rollout state in (beside the policy). */
export function rolloutStateName(app: string): string {
  return fitName(`pullfleet-rollout-${app}-state`, MAX_NAME_LENGTH);
}

/** Whether a hub Application is a waved static app's (the controller writes its work, wave by wave). */
export function isWavedApplication(app: Pick<Application, 'metadata'>): boolean {
  return app.metadata.annotations?.[DELIVERY_ANNOTATION] === DELIVERY_WAVED;
}

/** The hub Application of a waved static app on one spoke: the static one, marked waved and naming its policy. */
export function buildWavedHubApplication(
  def: AppDefinition,
  target: { cluster: string; namespace: string; constructPath: string },
  revision: string,
): Application {
  const app = buildStaticHubApplication(def, target);
  app.metadata.annotations = sortKeys({
    ...app.metadata.annotations,
    [DELIVERY_ANNOTATION]: DELIVERY_WAVED,
    [ROLLOUT_ANNOTATION]: rolloutPolicyName(def.name),
    [ROLLOUT_REVISION_ANNOTATION]: revision,
  });
  return app;
}

/**
 * The revision of a waved app as synth renders it: a hash of its definition, which is all its hub
 * Applications carry of it. The policy (waves, their clusters, limits, soaks) is not covered: it lives in
 * the one policy ConfigMap, which the hub applies whole, so a spoke joining a wave or a changed soak
 * leaves every other hub Application as it was.
 */
export function rolloutRevision(def: AppDefinition): string {
  return createHash('sha256').update(canonicalJson({ def })).digest('hex').slice(0, 16);
}

/** Data key of wave `index` (0-based) in the policy ConfigMap: `wave-001-canary.json` (keys sort in wave order). */
export function waveKey(index: number, name: string): string {
  return `wave-${String(index + 1).padStart(3, '0')}-${name}.json`;
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
): KubeObject & { data: Record<string, string> } {
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
      labels: sortKeys({
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        [ROLLOUT_APP_LABEL]: policy.app,
        [ROLLOUT_KIND_LABEL]: 'policy',
      }),
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

/** Reads a policy ConfigMap's content; a problem (naming the ConfigMap and the fix) when it is not one. */
export function parseRolloutPolicy(configMap: {
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
}): { policy?: RolloutPolicy; problem?: string } {
  const where = `ConfigMap ${configMap.metadata.namespace ?? ''}/${configMap.metadata.name}`;
  const fix = 'synthesize the fleet again and let the hub apply it';
  const data = configMap.data ?? {};
  let settings: Record<string, unknown>;
  try {
    settings = JSON.parse(data[ROLLOUT_POLICY_KEY] ?? 'null') as Record<string, unknown>;
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
      wave = JSON.parse(data[key]);
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
 * Step 1 of making an app waved: its works are still rendered, marked so that Argo CD leaves them in
 * place when they leave `dist/` in step 2 (the controller takes them over then).
 */
export function protectFromPrune<T extends KubeObject>(work: T): T {
  const annotations = { ...(work.metadata.annotations ?? {}) };
  const options = annotations[ARGOCD_SYNC_OPTIONS_ANNOTATION];
  const list = options ? options.split(',').map((o) => o.trim()) : [];
  if (!list.includes('Prune=false')) list.push('Prune=false');
  annotations[ARGOCD_SYNC_OPTIONS_ANNOTATION] = list.join(',');
  return { ...work, metadata: { ...work.metadata, annotations: sortKeys(annotations) } };
}

/**
 * Whether an object carries Argo CD's Prune=false sync option (see {@link protectFromPrune}): Argo CD never
 * deletes it when it leaves git.
 */
export function isPruneProtected(object: {
  readonly metadata?: { readonly annotations?: Record<string, string> };
}): boolean {
  const options = object.metadata?.annotations?.[ARGOCD_SYNC_OPTIONS_ANNOTATION] ?? '';
  return options.split(',').some((o) => o.trim() === 'Prune=false');
}

/**
 * `work` without the Prune=false that {@link protectFromPrune} added (the annotation goes when nothing else is
 * in it), so that Argo CD prunes it once it leaves `dist/`.
 */
export function unprotectFromPrune<T extends KubeObject>(work: T): T {
  const annotations = { ...(work.metadata.annotations ?? {}) };
  const list = (annotations[ARGOCD_SYNC_OPTIONS_ANNOTATION] ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '' && o !== 'Prune=false');
  if (list.length > 0) annotations[ARGOCD_SYNC_OPTIONS_ANNOTATION] = list.join(',');
  else delete annotations[ARGOCD_SYNC_OPTIONS_ANNOTATION];
  const { annotations: _, ...metadata } = work.metadata;
  return {
    ...work,
    metadata: Object.keys(annotations).length > 0 ? { ...metadata, annotations: sortKeys(annotations) } : metadata,
  };
}
