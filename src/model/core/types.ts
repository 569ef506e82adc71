/**
 * Plain object shapes pullfleet builds and reads. Only the fields pullfleet touches are typed;
 * everything else passes through as JSON.
 */

/** Any JSON value (null, boolean, number, string, array or object), for manifest fields pullfleet leaves untyped. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object, for manifest parts pullfleet passes through without typing them, such as an Argo CD source. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * A member of the string enum `E`, or its value as written in YAML: a prop typed
 * `EnumValue<TaintEffect>` takes `TaintEffect.NO_SELECT` and `'NoSelect'` alike, and renders the same.
 * Any other string does not compile, and is reported with the allowed values when it arrives untyped.
 */
export type EnumValue<E extends string> = E | `${E}`;

/** The enum member `value` stands for (the same string at runtime: only its type changes). */
export function enumMember<E extends string>(value: EnumValue<E>): E {
  return value as E;
}

/** The Kubernetes `metadata` of an object (the fields pullfleet reads or writes). */
export interface ObjectMeta {
  /** The object's name, unique per kind within its namespace. */
  name: string;
  /** The namespace the object lives in; absent for a cluster-scoped object. */
  namespace?: string;
  /** The unique ID the API server gave the object when it created it; owner references point at it. */
  uid?: string;
  /** The API server's version of the object, for optimistic concurrency; opaque to clients. */
  resourceVersion?: string;
  /** The API server's count of changes to the object's desired state (`spec`); `observedGeneration` fields echo it. */
  generation?: number;
  /** When the API server created the object (RFC 3339, UTC). */
  creationTimestamp?: string;
  /** When deletion of the object was requested (RFC 3339, UTC); the object stays until its finalizers are gone. */
  deletionTimestamp?: string;
  /** Labels: identifying key-value pairs that selectors (and `kubectl get -l`) match. */
  labels?: Record<string, string>;
  /** Annotations: non-identifying key-value data for tools, such as the settings pullfleet and Argo CD read. */
  annotations?: Record<string, string>;
  /** Finalizers: keys that must all be removed before the API server deletes the object. */
  finalizers?: string[];
  /** The objects this one belongs to; Kubernetes garbage-collects it once they are all gone. */
  ownerReferences?: OwnerReference[];
  /** Which field manager owns which fields (server-side apply bookkeeping); pullfleet passes it through untouched. */
  managedFields?: unknown[];
}

/** An entry of `metadata.ownerReferences`: the object that owns this one, for garbage collection. */
export interface OwnerReference {
  /** API version of the owner, such as `argoproj.io/v1alpha1`. */
  apiVersion: string;
  /** Kind of the owner, such as `ApplicationSet`. */
  kind: string;
  /** Name of the owner, in the same namespace as the owned object. */
  name: string;
  /** UID of the owner: the reference holds only while an object with this UID exists. */
  uid: string;
  /**
   * Whether the owner is the managing controller of this object (at most one reference may say so).
   * @default false
   */
  controller?: boolean;
  /**
   * Whether foreground deletion of the owner waits until this object is deleted.
   * @default false
   */
  blockOwnerDeletion?: boolean;
}

/** What every Kubernetes object has: its type (`apiVersion` and `kind`) and its `metadata`. */
export interface KubeObject {
  /** The API group and version of the object's type, such as `pullfleet.io/v1alpha1`. */
  apiVersion: string;
  /** The object's type within that API version, such as `FleetReport`. */
  kind: string;
  /** The object's name, namespace, labels, annotations and other metadata. */
  metadata: ObjectMeta;
}

/**
 * A ConfigMap as pullfleet reads one back (listed from the API, from the controller's cache, or from a
 * test): any part may be missing, and a value under `data` is whatever was stored. Every parser of a
 * ConfigMap pullfleet writes takes this and checks what it reads; what pullfleet builds is a `KubeObject`
 * with `data`, which is one.
 */
export interface ConfigMapLike {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: Readonly<Partial<ObjectMeta>>;
  readonly data?: Readonly<Record<string, unknown>> | null;
}

export interface ApplicationDestination {
  server?: string;
  name?: string;
  namespace?: string;
}

export interface ApplicationSpec {
  project: string;
  destination: ApplicationDestination;
  source?: JsonObject;
  sources?: JsonObject[];
  syncPolicy?: JsonObject;
  [key: string]: unknown;
}

export interface ApplicationCondition {
  type: string;
  message: string;
  lastTransitionTime?: string;
}

export interface ApplicationStatus {
  sync?: { status: string; revision?: string; [key: string]: unknown };
  health?: { status?: string; message?: string; [key: string]: unknown };
  operationState?: {
    operation: JsonObject;
    phase: string;
    startedAt: string;
    message?: string;
    finishedAt?: string;
    [key: string]: unknown;
  };
  conditions?: ApplicationCondition[];
  reconciledAt?: string;
  [key: string]: unknown;
}

/** An Argo CD Application (argoproj.io/v1alpha1). */
export interface Application extends KubeObject {
  spec: ApplicationSpec;
  operation?: JsonObject;
  status?: ApplicationStatus;
}

export interface ResourceIdentifier {
  group: string;
  resource: string;
  namespace?: string;
  name: string;
}

export interface FeedbackJsonPath {
  name: string;
  path: string;
  version?: string;
}

/** How work agents report the spoke Application's status back (a ManifestWork's `feedbackScrapeType`). */
export enum FeedbackScrape {
  /** The agent reads feedback every 10 s (every agent supports it). */
  POLL = 'Poll',
  /** The agent pushes feedback when it changes (newer work agents). */
  WATCH = 'Watch',
}

export interface ManifestConfig {
  resourceIdentifier: ResourceIdentifier;
  feedbackRules?: Array<{ type: 'JSONPaths' | 'WellKnownStatus'; jsonPaths?: FeedbackJsonPath[] }>;
  feedbackScrapeType?: FeedbackScrape;
  updateStrategy?: {
    type: 'Update' | 'CreateOnly' | 'ServerSideApply' | 'ReadOnly';
    serverSideApply?: {
      force?: boolean;
      fieldManager?: string;
      ignoreFields?: Array<{ condition: 'OnSpokePresent' | 'OnSpokeChange'; jsonPaths?: string[] }>;
    };
  };
}

/**
 * A status condition in the standard Kubernetes shape (metav1.Condition), as FleetReports and
 * ManifestWorks carry them in `status.conditions`.
 */
export interface Condition {
  /**
   * What the condition is about, such as `Ready` or `Degraded` on a FleetReport, `Applied` or
   * `Available` on a ManifestWork.
   */
  type: string;
  /** Whether the condition holds: `True`, `False`, or `Unknown` when that cannot be told. */
  status: 'True' | 'False' | 'Unknown';
  /** A machine-readable CamelCase word for the last transition, such as `AllSyncedAndHealthy`. */
  reason?: string;
  /** A human-readable explanation of the status. */
  message?: string;
  /** When `status` last changed (RFC 3339, UTC); unchanged while the status stays the same. */
  lastTransitionTime?: string;
  /** The `metadata.generation` the condition was computed from (on a FleetReport, the ApplicationSet's). */
  observedGeneration?: number;
}

export type FieldValue =
  | { type: 'String'; string?: string }
  | { type: 'Integer'; integer?: number }
  | { type: 'Boolean'; boolean?: boolean }
  | { type: 'JsonRaw'; jsonRaw?: string };

export interface ManifestStatus {
  resourceMeta?: {
    group?: string;
    version?: string;
    kind?: string;
    resource?: string;
    name?: string;
    namespace?: string;
    ordinal?: number;
  };
  statusFeedback?: { values?: Array<{ name: string; fieldValue: FieldValue }> };
  conditions?: Condition[];
}

export interface ManifestWorkStatus {
  conditions?: Condition[];
  resourceStatus?: { manifests?: ManifestStatus[] };
}

/** An OCM ManifestWork (work.open-cluster-management.io/v1). */
export interface ManifestWork extends KubeObject {
  spec: {
    workload: { manifests: JsonObject[] };
    manifestConfigs?: ManifestConfig[];
    deleteOption?: { propagationPolicy: 'Foreground' | 'Orphan' | 'SelectivelyOrphan' };
    [key: string]: unknown;
  };
  status?: ManifestWorkStatus;
}
