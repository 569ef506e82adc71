/**
 * What the controller must do to the ManifestWorks of one hub Application, given what it observes. Pure:
 * the controller reads its caches, calls {@link computePropagation}, and performs the returned plan.
 */
import {
  CLEANUP_FINALIZER,
  DELIVERY_ANNOTATION,
  DELIVERY_LABEL,
  DELIVERY_STATIC,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  PULLFLEET_PREFIX,
  REFRESH_ANNOTATION,
} from './keys.js';
import { buildManifestWork, isPullApplication, targetCluster, wrapProblem, type WrapOptions } from './manifestwork.js';
import { manifestWorkName } from './names.js';
import type { Application, ManifestWork } from './types.js';

/** Annotation the controller leaves on a hub app when it forwards `operation`: JSON `{at, after}` (see status.ts). */
export const FORWARDED_OPERATION_ANNOTATION = `${PULLFLEET_PREFIX}forwarded-operation`;

export interface WorkRef {
  readonly namespace: string;
  readonly name: string;
  /** UID precondition for the delete, so a re-created object of the same name is never removed by mistake. */
  readonly uid?: string;
}

export interface PropagationInput {
  /** Identity of the hub Application being reconciled. */
  readonly namespace: string;
  readonly name: string;
  /** The hub Application, or undefined when it no longer exists. */
  readonly app?: Application;
  /** Every observed work whose hub annotations point at this Application (any cluster namespace). */
  readonly works: readonly ManifestWork[];
  /** The observed work at the name and namespace the desired work would take, whoever owns it. */
  readonly workAtTarget?: ManifestWork;
  /** Why delivery to the target cluster is not allowed right now (tenancy, cluster missing), if so. */
  readonly deliveryProblem?: string;
  readonly wrapOptions?: WrapOptions;
}

export interface PropagationPlan {
  /** The work to server-side apply; undefined when nothing needs writing. */
  readonly apply?: ManifestWork;
  /** Controller-owned works to delete (already terminating works are left out). */
  readonly deletes: readonly WorkRef[];
  /** Finalizer change on the hub Application. */
  readonly finalizer?: 'add' | 'remove';
  /** After the apply, remove `operation` and the refresh annotation from the hub app (they have been forwarded). */
  readonly clearForwarded: boolean;
  /** Why the app is not delivered (becomes a condition on the hub app); undefined when all is well. */
  readonly problem?: string;
  /** Where the app's work lives (or should live) when the app is delivered; status is read from it. */
  readonly target?: { readonly namespace: string; readonly name: string };
}

/** Whether a hub Application's work is rendered by synth (the controller never writes such works). */
export function isStaticApplication(app: Pick<Application, 'metadata'>): boolean {
  return app.metadata.annotations?.[DELIVERY_ANNOTATION] === DELIVERY_STATIC;
}

/** Whether a work was written by the controller (pullfleet-managed, not static) for the app `namespace/name`. */
export function isControllerWorkFor(work: ManifestWork, namespace: string, name: string): boolean {
  const labels = work.metadata.labels ?? {};
  const annotations = work.metadata.annotations ?? {};
  return (
    labels[MANAGED_BY_LABEL] === MANAGED_BY_VALUE &&
    labels[DELIVERY_LABEL] !== DELIVERY_STATIC &&
    annotations[HUB_APP_NAMESPACE_ANNOTATION] === namespace &&
    annotations[HUB_APP_NAME_ANNOTATION] === name
  );
}

/** The hub Application `namespace/name` a work points back at, if it carries the hub annotations. */
export function workOwnerKey(work: Pick<ManifestWork, 'metadata'>): string | undefined {
  const namespace = work.metadata.annotations?.[HUB_APP_NAMESPACE_ANNOTATION];
  const name = work.metadata.annotations?.[HUB_APP_NAME_ANNOTATION];
  return namespace && name ? `${namespace}/${name}` : undefined;
}

/**
 * Whether every field of `desired` is present with the same value in `observed` (objects compared key by
 * key, arrays element by element with equal length). Fields only the server added are ignored, so a work
 * the API server defaulted still counts as unchanged.
 */
export function containsFields(observed: unknown, desired: unknown): boolean {
  if (desired === null || typeof desired !== 'object') return observed === desired;
  if (Array.isArray(desired)) {
    return Array.isArray(observed) && observed.length === desired.length && desired.every((item, i) => containsFields(observed[i], item));
  }
  if (observed === null || typeof observed !== 'object' || Array.isArray(observed)) return false;
  const record = observed as Record<string, unknown>;
  return Object.entries(desired as Record<string, unknown>).every(([key, value]) => value === undefined || containsFields(record[key], value));
}

/** JSON with object keys sorted at every level (the API server re-encodes maps in key order). */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** Whether the observed work already carries everything the desired one says. */
export function workUpToDate(observed: ManifestWork, desired: ManifestWork): boolean {
  return (
    containsFields(observed.metadata.labels ?? {}, desired.metadata.labels ?? {}) &&
    containsFields(observed.metadata.annotations ?? {}, desired.metadata.annotations ?? {}) &&
    // The embedded manifests are stored verbatim, so they must match exactly (a field removed from the
    // payload, such as a forwarded `operation`, must be written); the rest may carry server defaults.
    canonicalJson(observed.spec?.workload?.manifests ?? []) === canonicalJson(desired.spec.workload.manifests) &&
    containsFields(observed.spec, desired.spec)
  );
}

function deletable(works: readonly ManifestWork[], keep?: { namespace: string; name: string }): WorkRef[] {
  return works
    .filter((work) => !work.metadata.deletionTimestamp)
    .filter((work) => !keep || work.metadata.namespace !== keep.namespace || work.metadata.name !== keep.name)
    .map((work) => ({ namespace: work.metadata.namespace!, name: work.metadata.name, ...(work.metadata.uid ? { uid: work.metadata.uid } : {}) }))
    .sort((a, b) => (a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1));
}

function describeOwner(work: ManifestWork): string {
  if (work.metadata.labels?.[DELIVERY_LABEL] === DELIVERY_STATIC) return 'it is delivered statically by synth';
  const owner = workOwnerKey(work);
  if (work.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) return 'it is not managed by pullfleet';
  return owner ? `it belongs to Application ${owner}` : 'it names no hub Application';
}

/**
 * The plan for one hub Application: create/update its work, delete works it no longer wants (retarget,
 * opt-out, deletion, app gone), manage the cleanup finalizer, and forward `operation` once.
 */
export function computePropagation(input: PropagationInput): PropagationPlan {
  const { app, namespace, name } = input;
  const owned = input.works.filter((work) => isControllerWorkFor(work, namespace, name));
  const hasFinalizer = app?.metadata.finalizers?.includes(CLEANUP_FINALIZER) ?? false;

  // The app is gone: sweep whatever the controller wrote for it.
  if (!app) return { deletes: deletable(owned), clearForwarded: false };

  // Being deleted: delete the works first, release the finalizer once none remain.
  if (app.metadata.deletionTimestamp) {
    return { deletes: deletable(owned), clearForwarded: false, ...(hasFinalizer && owned.length === 0 ? { finalizer: 'remove' as const } : {}) };
  }

  // Synth renders this app's work: never write or delete it, only report status.
  if (isStaticApplication(app)) {
    const cluster = targetCluster(app);
    const target = cluster ? { namespace: cluster, name: manifestWorkName(app.metadata.namespace ?? 'argocd', app.metadata.name) } : undefined;
    return { deletes: [], clearForwarded: false, ...(hasFinalizer ? { finalizer: 'remove' as const } : {}), ...(target ? { target } : {}) };
  }

  // Opted out (label removed or false, or no target cluster any more): remove what was delivered.
  if (!isPullApplication(app) || !targetCluster(app)) {
    return { deletes: deletable(owned), clearForwarded: false, ...(hasFinalizer ? { finalizer: 'remove' as const } : {}) };
  }

  const finalizer = hasFinalizer ? {} : { finalizer: 'add' as const };
  const problem = wrapProblem(app) ?? input.deliveryProblem;
  // Nothing new is delivered, and nothing already delivered is taken away, while the app is undeliverable.
  if (problem) return { deletes: [], clearForwarded: false, problem, ...finalizer };

  const desired = buildManifestWork(app, input.wrapOptions);
  const target = { namespace: desired.metadata.namespace!, name: desired.metadata.name };
  const existing = input.workAtTarget;
  if (existing && !isControllerWorkFor(existing, namespace, name)) {
    return {
      deletes: deletable(owned, target),
      clearForwarded: false,
      problem: `ManifestWork ${target.namespace}/${target.name} already exists and ${describeOwner(existing)}: refusing to take it over; delete it or rename the Application`,
      ...finalizer,
    };
  }
  const clearForwarded = app.operation !== undefined || app.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined;
  return {
    ...(existing && workUpToDate(existing, desired) ? {} : { apply: desired }),
    deletes: deletable(owned, target),
    clearForwarded,
    target,
    ...finalizer,
  };
}
