/**
 * The rollout facts both reconcilers read from the cache: the index of waved hub Applications by their
 * rollout key, the ConfigMaps the controller informs, and the reader that parses an app's rollout policy and
 * state once per ConfigMap version. The rollout reconciler keeps the state; the Application reconciler reads
 * it to decide what each waved app's work may carry.
 */
import type { CacheReader } from '../../kube/cache.js';
import { CONFIG_MAP, type WatchScope } from '../../kube/resources.js';
import type { Application, ConfigMapLike, KubeObject } from '../../model/core/types.js';
import { FLEET_APP_LABEL } from '../../model/delivery/hub-application.js';
import { ROLLOUT_KIND_LABEL, type RolloutPolicy } from '../../model/rollout/policy.js';
import { isWavedApplication } from '../../model/rollout/static.js';
import {
  parseRolloutPolicy,
  parseRolloutStateConfigMap,
  rolloutPolicyName,
  rolloutStateName,
  type ParsedRolloutPolicy,
  type RolloutState,
} from '../../model/rollout/state.js';

/** Index of waved hub Applications by `<namespace>/<app>` (their fleet app). */
export const ROLLOUT_APP_INDEX = 'rollout-app';

/** What the controller informs of ConfigMaps: the rollout ones of the hub's Argo CD namespace. */
export function rolloutConfigMapScope(argoNamespace: string): WatchScope {
  return { namespace: argoNamespace, labelSelector: ROLLOUT_KIND_LABEL };
}

/** The rollout key of a waved hub Application. */
export function rolloutKeyOf(object: KubeObject): string[] {
  const app = object as Application;
  if (!isWavedApplication(app)) return [];
  const fleetApp = app.metadata.labels?.[FLEET_APP_LABEL];
  return fleetApp ? [`${app.metadata.namespace ?? ''}/${fleetApp}`] : [];
}

/** A rollout ConfigMap from the cache. */
export function cachedConfigMap(cache: CacheReader, namespace: string, name: string) {
  return cache.get<KubeObject & ConfigMapLike>(CONFIG_MAP.id, `${namespace}/${name}`);
}

/** The version a memo entry is kept for (`/` when the object has neither: never a hit). */
export function versionOf(object: KubeObject | undefined): string {
  return object ? `${object.metadata.uid ?? ''}/${object.metadata.resourceVersion ?? ''}` : 'none';
}

/**
 * Reads an app's rollout policy and state from the cache, parsing each ConfigMap once per version: every hub
 * Application of a rollout reads both on each of its reconciles, and the rollout reconciler on each report
 * of any of its clusters (a policy lists every cluster, so parsing it each time would cost a rollout over n
 * clusters n² work).
 */
export function rolloutReader(cache: CacheReader): {
  /** The policy, or why it cannot be read; undefined when the app has no policy ConfigMap. */
  parsedPolicy(namespace: string, app: string): ParsedRolloutPolicy | undefined;
  policy(namespace: string, app: string): RolloutPolicy | undefined;
  /** The persisted state (undefined: none, or unreadable: it starts afresh and says so). */
  state(namespace: string, app: string): { state?: RolloutState; problem?: string };
} {
  const policies = new Map<string, { version: string; parsed: ParsedRolloutPolicy | undefined }>();
  const states = new Map<string, { version: string; value: { state?: RolloutState; problem?: string } }>();
  const parsedPolicy = (namespace: string, app: string): ParsedRolloutPolicy | undefined => {
    const key = `${namespace}/${rolloutPolicyName(app)}`;
    const map = cachedConfigMap(cache, namespace, rolloutPolicyName(app));
    const version = versionOf(map);
    const hit = policies.get(key);
    if (hit && hit.version === version && version !== '/') return hit.parsed;
    const parsed = map ? parseRolloutPolicy(map) : undefined;
    if (policies.size > 4096) policies.clear();
    policies.set(key, { version, parsed });
    return parsed;
  };
  return {
    parsedPolicy,
    policy: (namespace, app) => parsedPolicy(namespace, app)?.policy,
    state(namespace, app) {
      const key = `${namespace}/${rolloutStateName(app)}`;
      const map = cachedConfigMap(cache, namespace, rolloutStateName(app));
      const version = versionOf(map);
      const hit = states.get(key);
      if (hit && hit.version === version && version !== '/') return hit.value;
      const value = parseRolloutStateConfigMap(map);
      if (states.size > 4096) states.clear();
      states.set(key, { version, value });
      return value;
    },
  };
}
