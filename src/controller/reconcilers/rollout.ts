/**
 * The rollout duty for waved static apps (docs/concepts/rollouts.md): one key per app (`<namespace>/<app>`).
 * Each run reads the app's policy ConfigMap (rendered by synth), its hub Applications and their works from
 * the cache, asks the pure rollout engine what comes next, and persists the state in a ConfigMap of its own
 * beside the policy. It writes no work itself: the Application reconciler reads the state and writes each
 * cluster's work when the state lets it (one writer per work). The state lives in the API, so a restart or
 * a new leader continues where the rollout stood. What the ConfigMaps hold, and how they are built and
 * read, is the model's (src/model/rollout/state.ts); this file only reads the cache and writes.
 */
import { canonicalJson } from '../../model/core/canonical-json.js';
import { manifestWorkName } from '../../model/core/names.js';
import type { Application, ConfigMapLike, KubeObject, ManifestWork } from '../../model/core/types.js';
import { stepRollout, type RolloutDecision } from '../../model/rollout/engine.js';
import {
  deliveredPayload,
  desiredPayloadHash,
  observeRollout,
  revisionLag,
  rolloutResumeToken,
  type DeliveredPayload,
  type RolloutLookups,
} from '../../model/rollout/gate.js';
import {
  buildRolloutStateConfigMap,
  rolloutAppOf,
  rolloutPolicyName,
  rolloutStateName,
  type RolloutState,
} from '../../model/rollout/state.js';
import { splitKey, type CacheReader } from '../../kube/cache.js';
import { workOwnerKey } from '../../model/reconcile/propagation.js';
import { KubeApiError } from '../../kube/client.js';
import { APPLICATION, CONFIG_MAP, MANIFEST_WORK, type WatchScope } from '../../kube/resources.js';
import type { Reconciler, ReconcilerContext, ReconcileResult, WatchSpec } from '../runtime/reconciler.js';
import {
  ROLLOUT_APP_INDEX,
  cachedConfigMap,
  rolloutConfigMapScope,
  rolloutKeyOf,
  rolloutReader,
  versionOf,
} from './rollout-cache.js';

/** The rollout key of a rollout ConfigMap (policy or state). */
function configMapKey(object: KubeObject): string[] {
  const app = rolloutAppOf(object);
  return app ? [`${object.metadata.namespace ?? ''}/${app}`] : [];
}

/** Entries a payload memo holds before it is cleared (entries of objects that are gone go with it). */
const MEMO_BOUND = 200_000;

/**
 * The rollout's lookups over the cache, for the hub Applications of `namespace`. Every feedback report of every
 * cluster re-runs an app's rollout: the payload hashes are kept per object version (a hub app's
 * resourceVersion, a work's generation), so a run over 1,000 clusters mostly reads feedback. Entries of
 * objects that are gone are dropped when a memo grows past its bound.
 */
function cachedLookups(cache: CacheReader): (namespace: string) => RolloutLookups {
  const desiredMemo = new Map<string, { readonly version: string; readonly hash: string | undefined }>();
  const deliveredMemo = new Map<string, { readonly version: string; readonly payload: DeliveredPayload | undefined }>();
  const desiredHash = (hubApp: Application): string | undefined => {
    const key = `${hubApp.metadata.namespace ?? ''}/${hubApp.metadata.name}`;
    const version = versionOf(hubApp);
    const hit = desiredMemo.get(key);
    if (hit && hit.version === version && version !== '/') return hit.hash;
    const hash = desiredPayloadHash(hubApp);
    if (desiredMemo.size > MEMO_BOUND) desiredMemo.clear();
    desiredMemo.set(key, { version, hash });
    return hash;
  };
  const delivered = (work: ManifestWork, name: string): DeliveredPayload | undefined => {
    const key = `${work.metadata.namespace ?? ''}/${work.metadata.name}`;
    // The generation moves with the spec only (ManifestWork has a status subresource); without one, any write.
    const version = `${work.metadata.uid ?? ''}/${work.metadata.generation ?? `rv${work.metadata.resourceVersion ?? ''}`}`;
    const hit = deliveredMemo.get(key);
    if (hit && hit.version === version && version !== '/') return hit.payload;
    const payload = deliveredPayload(work, name);
    if (deliveredMemo.size > MEMO_BOUND) deliveredMemo.clear();
    deliveredMemo.set(key, { version, payload });
    return payload;
  };
  return (namespace) => ({
    desiredHash,
    delivered,
    work: (cluster, hubApp) =>
      cache.get<ManifestWork>(MANIFEST_WORK.id, `${cluster}/${manifestWorkName(namespace, hubApp.metadata.name)}`),
  });
}

/** What one run of the rollout reconciler works with. */
interface RolloutRun {
  readonly context: ReconcilerContext;
  readonly rollouts: ReturnType<typeof rolloutReader>;
  readonly lookups: (namespace: string) => RolloutLookups;
}

/** One run for the rollout of `key` (`<namespace>/<app>`): read the cache, step the engine, write at most once. */
async function reconcileRollout(run: RolloutRun, key: string): Promise<void | ReconcileResult> {
  const { cache, logger } = run.context;
  const { namespace = '', name: app } = splitKey(key);
  const policyMap = cachedConfigMap(cache, namespace, rolloutPolicyName(app));
  const stateMap = cachedConfigMap(cache, namespace, rolloutStateName(app));
  const hubApps = cache.byIndex<Application>(APPLICATION.id, ROLLOUT_APP_INDEX, key);
  const live = hubApps.filter((hubApp) => !hubApp.metadata.deletionTimestamp);
  if (!policyMap) {
    // The app is no longer waved (or is gone): its bookkeeping goes once no waved hub Application is left.
    if (stateMap && live.length === 0) await removeState(run.context, key, stateMap.metadata.uid);
    return;
  }
  const { policy, problem } = run.rollouts.parsedPolicy(namespace, app) ?? {};
  if (!policy)
    return {
      terminal: `rollout policy unreadable, nothing is promoted until it is fixed: ${problem ?? 'no policy'}`,
    };
  // Argo CD applies a commit one object at a time: step only once every hub Application shows the
  // revision the policy does (their updates bring this key back).
  const lag = revisionLag(policyMap, live);
  if (lag) {
    logger.debug(
      { rollout: key, revision: lag.revision, behind: lag.behind.length },
      'rollout waits for the hub to apply every hub Application of the commit',
    );
    return { requeueAfterMs: 10_000 };
  }
  const { observations, unobservable } = observeRollout(hubApps, run.lookups(namespace));
  const previous = run.rollouts.state(namespace, app);
  if (previous.problem)
    logger.warn({ rollout: key, problem: previous.problem }, 'rollout state unreadable: starting afresh');
  const resumeToken = rolloutResumeToken(policyMap);
  const now = run.context.now();
  const decision = stepRollout({
    policy,
    ...(previous.state ? { previous: previous.state } : {}),
    observations,
    now,
    ...(resumeToken !== undefined ? { resumeToken } : {}),
    namespace,
    unobservable,
  });
  await persistDecision(run.context, key, stateMap, decision, previous.state);
  if (decision.recheckAt) return { requeueAfterMs: Math.max(1, decision.recheckAt.getTime() - now.getTime()) };
}

/** Deletes the state ConfigMap (`uid`) of a rollout that is gone (already gone, or replaced meanwhile: nothing to do). */
async function removeState(context: ReconcilerContext, key: string, uid: string | undefined): Promise<void> {
  const { namespace = '', name: app } = splitKey(key);
  try {
    await context.writer.delete(CONFIG_MAP, namespace, rolloutStateName(app), { ...(uid ? { uid } : {}) });
    context.logger.info({ rollout: key }, 'rollout state removed: the app has no waved hub Application left');
  } catch (error) {
    if (!(error instanceof KubeApiError && (error.statusCode === 404 || error.statusCode === 409))) throw error;
  }
}

/** Writes the state ConfigMap of a decision when what it holds changes, and logs what the step did. */
async function persistDecision(
  context: ReconcilerContext,
  key: string,
  stateMap: ConfigMapLike | undefined,
  decision: RolloutDecision,
  previous: RolloutState | undefined,
): Promise<void> {
  const { namespace = '', name: app } = splitKey(key);
  const desiredMap = buildRolloutStateConfigMap(namespace, app, decision);
  if (canonicalJson(stateMap?.data ?? {}) === canonicalJson(desiredMap.data)) return;
  await context.writer.apply(CONFIG_MAP, desiredMap);
  const { logger } = context;
  if (decision.writes.length > 0)
    logger.info(
      { rollout: key, phase: decision.phase, writes: decision.writes.map((w) => `${w.cluster}:${w.reason}`) },
      'rollout advanced',
    );
  if (decision.halted && !previous?.halted)
    logger.warn({ rollout: key, clusters: decision.halted.clusters }, decision.halted.message);
  if (decision.held)
    logger.info(
      { rollout: key, wave: decision.held.wave, missing: decision.held.applications.length },
      decision.held.message,
    );
}

/** The events that bring a rollout's key: its ConfigMaps, its waved hub Applications, their works' feedback. */
function rolloutWatches(cache: CacheReader, scope: WatchScope): WatchSpec[] {
  return [
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
  ];
}

/** The rollout reconciler: one key per waved app, its state ConfigMap written at most once per run. */
export function createRolloutReconciler(context: ReconcilerContext): Reconciler {
  const { cache, config } = context;
  const run: RolloutRun = { context, rollouts: rolloutReader(cache), lookups: cachedLookups(cache) };
  return {
    name: 'rollout',
    workers: 2,
    watches: rolloutWatches(cache, rolloutConfigMapScope(config.argoNamespace)),
    resyncKeys: () => [
      ...new Set([
        ...cache.list(CONFIG_MAP.id).flatMap(configMapKey),
        ...cache.list(APPLICATION.id).flatMap(rolloutKeyOf),
      ]),
    ],
    reconcile: (key) => reconcileRollout(run, key),
  };
}
