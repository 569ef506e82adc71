/**
 * What synth renders for a static app rolled out in waves: its hub Applications (as for any static app,
 * but `pullfleet.io/delivery: waved` and naming the rollout policy) and one policy ConfigMap (built in
 * state.ts, with the state ConfigMap the controller keeps beside it); no works.
 * The controller writes each spoke's work when the spoke's wave comes (engine.ts). Pure: no I/O.
 */
import { ARGOCD_SYNC_OPTIONS_ANNOTATION, DELIVERY_ANNOTATION, DELIVERY_WAVED } from '../core/keys.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { sortKeys } from '../core/records.js';
import type { Application, KubeObject } from '../core/types.js';
import { buildStaticHubApplication, type AppDefinition } from '../delivery/hub-application.js';
import { ROLLOUT_ANNOTATION, ROLLOUT_REVISION_ANNOTATION } from './policy.js';
import { rolloutPolicyName } from './state.js';

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
