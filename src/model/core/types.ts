/**
 * Plain object shapes pullfleet builds and reads. Only the fields pullfleet touches are typed;
 * everything else passes through as JSON.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
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

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
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
