/**
 * What the controller needs between the rollout engine and the ManifestWorks of a waved static app: the
 * payload hash a work carries, what the hub sees of each cluster (and of the hub Applications it cannot
 * observe), whether the hub has applied the policy's revision, which payload a cluster's work may carry
 * now (the gate), and the work that carries it, with the payload it replaces kept for a rollback. Pure.
 */
import { createHash } from 'node:crypto';
import {
  ARGOCD_API_VERSION,
  MANAGED_CLUSTER_ANNOTATION,
  PULLFLEET_PREFIX,
  SPEC_HASH_ANNOTATION,
} from '../core/keys.js';
import { canonicalJson } from '../core/canonical-json.js';
import { sortKeys } from '../core/records.js';
import type { Application, ConfigMapLike, JsonObject, ManifestWork } from '../core/types.js';
import { buildPayloadApplication, spokeAppNamespace, targetCluster, wrapProblem } from '../delivery/manifestwork.js';
import { readApplicationFeedback } from '../reconcile/feedback.js';
import type { ClusterObservation } from './engine.js';
import { ROLLOUT_RESUME_ANNOTATION, ROLLOUT_REVISION_ANNOTATION, type RolloutPolicy } from './policy.js';
import type { RolloutState } from './state.js';

/**
 * Annotation on a waved app's work: the payload Application it carried before its current rollout wrote
 * it (canonical JSON), so a halted rollout with `rollback` can give it back.
 */
export const PREVIOUS_PAYLOAD_ANNOTATION = `${PULLFLEET_PREFIX}previous-payload`;

type Manifest = { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };

/** The payload Application a work carries for the hub app `name` (its spoke copy in `namespace`). */
export function workPayload(work: Pick<ManifestWork, 'spec'>, name: string): Application | undefined {
  return (work.spec?.workload?.manifests as Manifest[] | undefined)?.find(
    (m) => m.apiVersion === ARGOCD_API_VERSION && m.kind === 'Application' && m.metadata?.name === name,
  ) as Application | undefined;
}

/**
 * The hash a rollout knows a payload by: its canonical JSON without `operation` (an operation forwarded
 * to the spoke is not a new revision).
 */
export function payloadHash(payload: Application): string {
  const { operation: _operation, ...rest } = payload as Application & { operation?: unknown };
  return createHash('sha256').update(canonicalJson(rest)).digest('hex').slice(0, 16);
}

/** The payload a work carries, as a rollout knows it: its hash and the spec hash it carries. */
export interface DeliveredPayload {
  readonly hash: string;
  readonly specHash?: string;
}

/** {@link DeliveredPayload} of a work for the hub app `name` (undefined: the work carries none). */
export function deliveredPayload(work: Pick<ManifestWork, 'spec'>, name: string): DeliveredPayload | undefined {
  const payload = workPayload(work, name);
  if (!payload) return undefined;
  const specHash = payload.metadata.annotations?.[SPEC_HASH_ANNOTATION];
  return { hash: payloadHash(payload), ...(specHash ? { specHash } : {}) };
}

/**
 * The hash of the payload a hub Application asks for (the payload alone, no work around it), or undefined
 * when no work can be built for it: such an app gives its rollout nothing to observe instead of failing the
 * whole rollout, and its own reconcile says what is wrong with it.
 */
export function desiredPayloadHash(hubApp: Application): string | undefined {
  return wrapProblem(hubApp) ? undefined : payloadHash(buildPayloadApplication(hubApp));
}

/**
 * The revision a waved app's policy ConfigMap shows and the hub Applications that do not show it yet, or
 * undefined when none lags (or the policy carries no revision). Argo CD applies a commit one object at a
 * time: the rollout steps only once every hub Application shows the policy's revision.
 */
export function revisionLag(
  policyMap: ConfigMapLike,
  hubApps: readonly Application[],
): { readonly revision: string; readonly behind: readonly Application[] } | undefined {
  const revision = policyMap.metadata?.annotations?.[ROLLOUT_REVISION_ANNOTATION];
  if (revision === undefined) return undefined;
  const behind = hubApps.filter((hubApp) => hubApp.metadata.annotations?.[ROLLOUT_REVISION_ANNOTATION] !== revision);
  return behind.length > 0 ? { revision, behind } : undefined;
}

/** The resume token a policy ConfigMap carries ({@link ROLLOUT_RESUME_ANNOTATION}), if any. */
export function rolloutResumeToken(policyMap: ConfigMapLike): string | undefined {
  return policyMap.metadata?.annotations?.[ROLLOUT_RESUME_ANNOTATION];
}

/** Where {@link observeRollout} finds what it needs (a caller may keep the hashes per object version). */
export interface RolloutLookups {
  /** {@link desiredPayloadHash} of a hub Application. */
  desiredHash(hubApp: Application): string | undefined;
  /** The ManifestWork of a hub Application on `cluster`, if any. */
  work(cluster: string, hubApp: Application): ManifestWork | undefined;
  /** {@link deliveredPayload} of a work for the hub app `name`. */
  delivered(work: ManifestWork, name: string): DeliveredPayload | undefined;
}

/** What a rollout sees of a waved app's hub Applications ({@link observeRollout}). */
export interface RolloutObservations {
  /** One per hub Application it can observe, in their order. */
  readonly observations: readonly ClusterObservation[];
  /**
   * Hub Applications that exist but give nothing to observe, by name, with why: a wave listing their cluster
   * waits for them like for one not created yet, and its progress says which.
   */
  readonly unobservable: Readonly<Record<string, string>>;
}

/**
 * What a rollout observes of the hub Applications of a waved app (those being deleted included: they are
 * unobservable): for each one that names its cluster and can be delivered, the cluster's observation.
 */
export function observeRollout(hubApps: readonly Application[], lookups: RolloutLookups): RolloutObservations {
  const unobservable: Record<string, string> = {};
  for (const hubApp of hubApps)
    if (hubApp.metadata.deletionTimestamp) unobservable[hubApp.metadata.name] = 'is being deleted';
  const observations = hubApps.flatMap((hubApp) => {
    if (hubApp.metadata.deletionTimestamp) return [];
    const cluster = targetCluster(hubApp);
    if (!cluster) {
      unobservable[hubApp.metadata.name] =
        `names no target cluster (annotation ${MANAGED_CLUSTER_ANNOTATION} is missing)`;
      return [];
    }
    const desiredHash = lookups.desiredHash(hubApp);
    if (!desiredHash) {
      unobservable[hubApp.metadata.name] =
        `cannot be delivered (${wrapProblem(hubApp) ?? 'no payload'}); its own conditions say more`;
      return [];
    }
    const work = lookups.work(cluster, hubApp);
    const name = hubApp.metadata.name;
    const delivered = work ? lookups.delivered(work, name) : undefined;
    return [observeCluster(cluster, name, desiredHash, work, delivered, spokeAppNamespace(hubApp))];
  });
  return { observations, unobservable };
}

/**
 * What the hub sees of one cluster of a waved app: the desired payload's hash, the work's payload, the spoke's
 * report (the hashes may come from a cache: they change only when the app or the work's spec does).
 */
export function observeCluster(
  cluster: string,
  name: string,
  desiredHash: string,
  work: ManifestWork | undefined,
  delivered: DeliveredPayload | undefined,
  spokeNamespace: string,
): ClusterObservation {
  const feedback = work ? readApplicationFeedback(work, spokeNamespace, name) : undefined;
  return {
    cluster,
    desired: desiredHash,
    ...(delivered ? { delivered: delivered.hash } : {}),
    sawDelivered:
      delivered?.specHash !== undefined && feedback?.specHash !== undefined && feedback.specHash === delivered.specHash,
    ...(feedback?.healthStatus ? { health: feedback.healthStatus } : {}),
    ...(feedback?.syncStatus ? { sync: feedback.syncStatus } : {}),
    ...(feedback?.operationStatePhase ? { operationPhase: feedback.operationStatePhase } : {}),
    ...(feedback?.operationStateStartedAt ? { operationStartedAt: feedback.operationStateStartedAt } : {}),
  };
}

/** Which payload a cluster's work may carry now. */
export type RolloutGate =
  /** The payload with this hash (the rollout promoted the cluster to it). */
  | { readonly kind: 'allow'; readonly hash: string }
  /** Give back the payload with this hash (a halted rollout with `rollback`). */
  | { readonly kind: 'rollback'; readonly hash: string }
  /** Nothing new: the cluster waits for its wave (its work, if any, stays as it is). */
  | { readonly kind: 'hold' };

/** The gate of `cluster` from the policy and the persisted state (no state yet: hold). */
export function gateOf(
  policy: Pick<RolloutPolicy, 'onFailure'> | undefined,
  state: RolloutState | undefined,
  cluster: string,
): RolloutGate {
  const entry = state?.clusters[cluster];
  if (!entry) return { kind: 'hold' };
  if (state?.halted && policy?.onFailure === 'rollback' && entry.failedAt && entry.from)
    return { kind: 'rollback', hash: entry.from };
  return { kind: 'allow', hash: entry.target };
}

/**
 * The work to write for a waved app's cluster, or undefined to write nothing. `desired` is the work the
 * hub Application asks for. `rollback` writes the payload the work kept in {@link PREVIOUS_PAYLOAD_ANNOTATION}
 * when its hash is the one asked for (and keeps writing it, whatever the hub app asks for, while the halt
 * lasts). Otherwise a work already carrying the desired payload is written as usual (an operation or a
 * refresh forwarded changes no revision), and `allow` of the desired hash writes it, keeping the payload it
 * replaces in that annotation; anything else holds.
 */
export function gatedWork(
  desired: ManifestWork,
  existing: ManifestWork | undefined,
  gate: RolloutGate,
  name: string,
): ManifestWork | undefined {
  const want = workPayload(desired, name);
  if (!want) return undefined;
  const current = existing ? workPayload(existing, name) : undefined;
  const kept = existing?.metadata.annotations?.[PREVIOUS_PAYLOAD_ANNOTATION];
  const withPrevious = (work: ManifestWork, previous: string | undefined): ManifestWork =>
    previous === undefined
      ? work
      : {
          ...work,
          metadata: {
            ...work.metadata,
            annotations: sortKeys({ ...(work.metadata.annotations ?? {}), [PREVIOUS_PAYLOAD_ANNOTATION]: previous }),
          },
        };
  if (gate.kind === 'rollback' && kept !== undefined) {
    let previous: Application;
    try {
      previous = JSON.parse(kept) as Application;
    } catch {
      return undefined;
    }
    if (payloadHash(previous) !== gate.hash) return undefined;
    // Already given back: written as usual (an operation or a refresh may still travel with it).
    if (current && payloadHash(current) === gate.hash) {
      const manifests = desired.spec.workload.manifests.map((m) =>
        (m as Manifest).kind === 'Application' && (m as Manifest).metadata?.name === name
          ? (current as unknown as JsonObject)
          : m,
      );
      return withPrevious({ ...desired, spec: { ...desired.spec, workload: { manifests } } }, kept);
    }
    const manifests = desired.spec.workload.manifests.map((m) =>
      (m as Manifest).kind === 'Application' && (m as Manifest).metadata?.name === name
        ? (previous as unknown as JsonObject)
        : m,
    );
    return withPrevious({ ...desired, spec: { ...desired.spec, workload: { manifests } } }, kept);
  }
  if (gate.kind === 'rollback') return undefined;
  if (current && payloadHash(current) === payloadHash(want)) return withPrevious(desired, kept);
  if (gate.kind === 'allow' && gate.hash === payloadHash(want))
    return withPrevious(desired, current ? canonicalJson(stripOperation(current)) : kept);
  return undefined;
}

function stripOperation(payload: Application): Application {
  const { operation: _operation, ...rest } = payload as Application & { operation?: unknown };
  return rest;
}
