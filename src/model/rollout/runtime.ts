/**
 * What the controller needs between the rollout engine and the ManifestWorks of a waved static app: the
 * payload hash a work carries, what the hub sees of each cluster, which payload a cluster's work may carry
 * now (the gate), and the work that carries it, with the payload it replaces kept for a rollback. Pure.
 */
import { createHash } from 'node:crypto';
import { ARGOCD_API_VERSION, PULLFLEET_PREFIX, SPEC_HASH_ANNOTATION } from '../core/keys.js';
import { canonicalJson } from '../core/canonical-json.js';
import { sortKeys } from '../core/records.js';
import type { Application, JsonObject, ManifestWork } from '../core/types.js';
import { readApplicationFeedback } from '../runtime/feedback.js';
import type { ClusterObservation, RolloutState } from './engine.js';
import type { RolloutPolicy } from './policy.js';

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
