/**
 * The rollout duty for waved static apps (docs/concepts/rollouts.md): one key per app (`<namespace>/<app>`).
 * Each run reads the app's policy ConfigMap (rendered by synth), its hub Applications and their works from
 * the cache, asks the pure rollout engine what comes next, and persists the state in a ConfigMap of its own
 * beside the policy. It writes no work itself: the Application reconciler reads the state and writes each
 * cluster's work when the state lets it (one writer per work). The state lives in the API, so a restart or
 * a new leader continues where the rollout stood.
 */
import { canonicalJson } from '../../model/core/canonical-json.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, MANAGED_CLUSTER_ANNOTATION } from '../../model/core/keys.js';
import { manifestWorkName } from '../../model/core/names.js';
import { sortKeys } from '../../model/core/records.js';
import type { Application, KubeObject, ManifestWork } from '../../model/core/types.js';
import { FLEET_APP_LABEL } from '../../model/delivery/hub-application.js';
import {
  buildPayloadApplication,
  spokeAppNamespace,
  targetCluster,
  wrapProblem,
} from '../../model/delivery/manifestwork.js';
import { parseRolloutState, stepRollout, type RolloutDecision, type RolloutState } from '../../model/rollout/engine.js';
import {
  type RolloutPolicy,
  ROLLOUT_APP_LABEL,
  ROLLOUT_KIND_LABEL,
  ROLLOUT_RESUME_ANNOTATION,
  ROLLOUT_REVISION_ANNOTATION,
  ROLLOUT_PROGRESS_KEY,
  ROLLOUT_STATE_KEY,
} from '../../model/rollout/policy.js';
import { deliveredPayload, observeCluster, payloadHash, type DeliveredPayload } from '../../model/rollout/runtime.js';
import {
  isWavedApplication,
  parseRolloutPolicy,
  rolloutPolicyName,
  rolloutStateName,
} from '../../model/rollout/static.js';
import { splitKey, type CacheReader } from '../../kube/cache.js';
import { workOwnerKey } from '../../model/runtime/propagation.js';
import { KubeApiError } from '../../kube/client.js';
import { APPLICATION, CONFIG_MAP, MANIFEST_WORK, type WatchScope } from '../../kube/resources.js';
import type { Reconciler, ReconcilerContext, ReconcileResult } from '../runtime/reconciler.js';

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

/** The rollout key of a rollout ConfigMap (policy or state). */
function configMapKey(object: KubeObject): string[] {
  const app = object.metadata.labels?.[ROLLOUT_APP_LABEL];
  return app ? [`${object.metadata.namespace ?? ''}/${app}`] : [];
}

interface ConfigMapLike extends KubeObject {
  data?: Record<string, string>;
}

/** The persisted state of an app's rollout (undefined: none, or unreadable: it starts afresh and says so). */
export function rolloutStateOf(
  cache: CacheReader,
  namespace: string,
  app: string,
): { state?: RolloutState; problem?: string } {
  const stateMap = cache.get<ConfigMapLike>(CONFIG_MAP.id, `${namespace}/${rolloutStateName(app)}`);
  const text = stateMap?.data?.[ROLLOUT_STATE_KEY];
  if (text === undefined) return {};
  const parsed = parseRolloutState(text, `ConfigMap ${namespace}/${rolloutStateName(app)}`);
  return 'state' in parsed && parsed.state
    ? { state: parsed.state }
    : { problem: (parsed as { problem?: string }).problem };
}

/** An app's rollout policy as read from its ConfigMap: the policy, or why it cannot be read. */
export interface ParsedRolloutPolicy {
  readonly policy?: RolloutPolicy;
  readonly problem?: string;
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
  state(namespace: string, app: string): { state?: RolloutState; problem?: string };
} {
  const policies = new Map<string, { version: string; parsed: ParsedRolloutPolicy | undefined }>();
  const states = new Map<string, { version: string; value: { state?: RolloutState; problem?: string } }>();
  const versionOf = (object: KubeObject | undefined) =>
    object ? `${object.metadata.uid ?? ''}/${object.metadata.resourceVersion ?? ''}` : 'none';
  const parsedPolicy = (namespace: string, app: string): ParsedRolloutPolicy | undefined => {
    const key = `${namespace}/${rolloutPolicyName(app)}`;
    const map = cache.get<ConfigMapLike>(CONFIG_MAP.id, key);
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
      const version = versionOf(cache.get<ConfigMapLike>(CONFIG_MAP.id, key));
      const hit = states.get(key);
      if (hit && hit.version === version && version !== '/') return hit.value;
      const value = rolloutStateOf(cache, namespace, app);
      if (states.size > 4096) states.clear();
      states.set(key, { version, value });
      return value;
    },
  };
}

/** The state ConfigMap the controller writes: the engine's state and a progress summary for `pullfleet status`. */
export function buildRolloutStateConfigMap(
  namespace: string,
  app: string,
  decision: RolloutDecision,
): ConfigMapLike & { apiVersion: string; kind: string } {
  const progress = {
    phase: decision.phase,
    waves: decision.waves,
    ...(decision.halted ? { halted: decision.halted } : {}),
    ...(decision.held ? { held: decision.held } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: rolloutStateName(app),
      namespace,
      labels: sortKeys({
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        [ROLLOUT_APP_LABEL]: app,
        [ROLLOUT_KIND_LABEL]: 'state',
      }),
    },
    data: {
      [ROLLOUT_STATE_KEY]: canonicalJson(decision.state),
      [ROLLOUT_PROGRESS_KEY]: canonicalJson(progress),
    },
  };
}

/** Entries a payload memo holds before it is cleared (entries of objects that are gone go with it). */
const MEMO_BOUND = 200_000;

export function createRolloutReconciler(context: ReconcilerContext): Reconciler {
  const { cache, writer, config, logger } = context;
  const scope = rolloutConfigMapScope(config.argoNamespace);
  const rollouts = rolloutReader(cache);
  // Every feedback report of every cluster re-runs an app's rollout: the payload hashes are kept per
  // object version (a hub app's resourceVersion, a work's generation), so a run over 1,000 clusters
  // mostly reads feedback. Entries of objects that are gone are dropped when the map grows past its bound.
  const desiredMemo = new Map<string, { readonly version: string; readonly hash: string | undefined }>();
  const deliveredMemo = new Map<string, { readonly version: string; readonly payload: DeliveredPayload | undefined }>();
  const bounded = <V>(memo: Map<string, V>) => {
    if (memo.size > MEMO_BOUND) memo.clear();
  };
  const desiredHashOf = (hubApp: Application): string | undefined => {
    const key = `${hubApp.metadata.namespace ?? ''}/${hubApp.metadata.name}`;
    const version = `${hubApp.metadata.uid ?? ''}/${hubApp.metadata.resourceVersion ?? ''}`;
    const hit = desiredMemo.get(key);
    if (hit && hit.version === version && version !== '/') return hit.hash;
    // The payload alone (no work around it): an app the work cannot be built for gets no hash instead of
    // failing the whole rollout, and its own reconcile says what is wrong with it.
    const hash = wrapProblem(hubApp) ? undefined : payloadHash(buildPayloadApplication(hubApp));
    bounded(desiredMemo);
    desiredMemo.set(key, { version, hash });
    return hash;
  };
  const deliveredOf = (work: ManifestWork, name: string): DeliveredPayload | undefined => {
    const key = `${work.metadata.namespace ?? ''}/${work.metadata.name}`;
    // The generation moves with the spec only (ManifestWork has a status subresource); without one, any write.
    const version = `${work.metadata.uid ?? ''}/${work.metadata.generation ?? `rv${work.metadata.resourceVersion ?? ''}`}`;
    const hit = deliveredMemo.get(key);
    if (hit && hit.version === version && version !== '/') return hit.payload;
    const payload = deliveredPayload(work, name);
    bounded(deliveredMemo);
    deliveredMemo.set(key, { version, payload });
    return payload;
  };

  async function reconcile(key: string): Promise<void | ReconcileResult> {
    const { namespace = '', name: app } = splitKey(key);
    const policyMap = cache.get<ConfigMapLike>(CONFIG_MAP.id, `${namespace}/${rolloutPolicyName(app)}`);
    const stateMap = cache.get<ConfigMapLike>(CONFIG_MAP.id, `${namespace}/${rolloutStateName(app)}`);
    const indexed = cache.byIndex<Application>(APPLICATION.id, ROLLOUT_APP_INDEX, key);
    const apps = indexed.filter((hubApp) => !hubApp.metadata.deletionTimestamp);
    // Hub Applications that exist but give the rollout nothing to observe, with why: a wave listing their
    // cluster waits for them like for one not created yet, and its progress says which.
    const unobservable: Record<string, string> = {};
    for (const hubApp of indexed)
      if (hubApp.metadata.deletionTimestamp) unobservable[hubApp.metadata.name] = 'is being deleted';
    if (!policyMap) {
      // The app is no longer waved (or is gone): its bookkeeping goes once no waved hub Application is left.
      if (stateMap && apps.length === 0) {
        try {
          await writer.delete(CONFIG_MAP, namespace, rolloutStateName(app), {
            ...(stateMap.metadata.uid ? { uid: stateMap.metadata.uid } : {}),
          });
          logger.info({ rollout: key }, 'rollout state removed: the app has no waved hub Application left');
        } catch (error) {
          if (!(error instanceof KubeApiError && (error.statusCode === 404 || error.statusCode === 409))) throw error;
        }
      }
      return;
    }
    const { policy, problem } = rollouts.parsedPolicy(namespace, app) ?? {};
    if (!policy) {
      logger.warn({ rollout: key, problem }, 'rollout policy unreadable: nothing is promoted until it is fixed');
      return;
    }
    // Argo CD applies a commit one object at a time: step only once every hub Application shows the
    // revision the policy does (their updates bring this key back).
    const revision = policyMap.metadata.annotations?.[ROLLOUT_REVISION_ANNOTATION];
    const behind = apps.filter((hubApp) => hubApp.metadata.annotations?.[ROLLOUT_REVISION_ANNOTATION] !== revision);
    if (revision !== undefined && behind.length > 0) {
      logger.debug(
        { rollout: key, revision, behind: behind.length },
        'rollout waits for the hub to apply every hub Application of the commit',
      );
      return { requeueAfterMs: 10_000 };
    }
    const observations = apps.flatMap((hubApp) => {
      const cluster = targetCluster(hubApp);
      if (!cluster) {
        unobservable[hubApp.metadata.name] =
          `names no target cluster (annotation ${MANAGED_CLUSTER_ANNOTATION} is missing)`;
        return [];
      }
      const desiredHash = desiredHashOf(hubApp);
      if (!desiredHash) {
        unobservable[hubApp.metadata.name] =
          `cannot be delivered (${wrapProblem(hubApp) ?? 'no payload'}); its own conditions say more`;
        return [];
      }
      const work = cache.get<ManifestWork>(
        MANIFEST_WORK.id,
        `${cluster}/${manifestWorkName(namespace, hubApp.metadata.name)}`,
      );
      return [
        observeCluster(
          cluster,
          hubApp.metadata.name,
          desiredHash,
          work,
          work ? deliveredOf(work, hubApp.metadata.name) : undefined,
          spokeAppNamespace(hubApp),
        ),
      ];
    });
    const previous = rollouts.state(namespace, app);
    if (previous.problem)
      logger.warn({ rollout: key, problem: previous.problem }, 'rollout state unreadable: starting afresh');
    const resumeToken = policyMap.metadata.annotations?.[ROLLOUT_RESUME_ANNOTATION];
    const now = context.now();
    const decision = stepRollout({
      policy,
      ...(previous.state ? { previous: previous.state } : {}),
      observations,
      now,
      ...(resumeToken !== undefined ? { resumeToken } : {}),
      namespace,
      unobservable,
    });
    const desiredMap = buildRolloutStateConfigMap(namespace, app, decision);
    if (canonicalJson(stateMap?.data ?? {}) !== canonicalJson(desiredMap.data)) {
      await writer.apply(CONFIG_MAP, desiredMap);
      if (decision.writes.length > 0)
        logger.info(
          { rollout: key, phase: decision.phase, writes: decision.writes.map((w) => `${w.cluster}:${w.reason}`) },
          'rollout advanced',
        );
      if (decision.halted && !previous.state?.halted)
        logger.warn({ rollout: key, clusters: decision.halted.clusters }, decision.halted.message);
      if (decision.held)
        logger.info(
          { rollout: key, wave: decision.held.wave, missing: decision.held.applications.length },
          decision.held.message,
        );
    }
    if (decision.recheckAt) return { requeueAfterMs: Math.max(1, decision.recheckAt.getTime() - now.getTime()) };
  }

  return {
    name: 'rollout',
    workers: 2,
    watches: [
      {
        kind: CONFIG_MAP,
        scope,
        keysFor: (object, previous) => [
          ...new Set([...configMapKey(object), ...(previous ? configMapKey(previous) : [])]),
        ],
      },
      {
        kind: APPLICATION,
        indexes: { [ROLLOUT_APP_INDEX]: rolloutKeyOf },
        keysFor: (object, previous) => [
          ...new Set([...rolloutKeyOf(object), ...(previous ? rolloutKeyOf(previous) : [])]),
        ],
      },
      {
        // The feedback of a waved app's work moves its rollout on.
        kind: MANIFEST_WORK,
        keysFor: (object) => {
          const owner = workOwnerKey(object);
          const hubApp = owner ? cache.get<Application>(APPLICATION.id, owner) : undefined;
          return hubApp ? rolloutKeyOf(hubApp) : [];
        },
      },
    ],
    resyncKeys: () => [
      ...new Set([
        ...cache.list(CONFIG_MAP.id).flatMap(configMapKey),
        ...cache.list(APPLICATION.id).flatMap(rolloutKeyOf),
      ]),
    ],
    reconcile: (key) => reconcile(key),
  };
}
