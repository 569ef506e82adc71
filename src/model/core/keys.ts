/**
 * Every label, annotation, finalizer and API coordinate pullfleet reads or writes.
 * The `apps.open-cluster-management.io/*` keys are the OCM pull-integration contract and must not change.
 */

const OCM_APPS = 'apps.open-cluster-management.io';

/** Label on a hub Application that opts it into pull delivery (value parsed like Go's ParseBool). */
export const PULL_LABEL = `${OCM_APPS}/pull-to-ocm-managed-cluster`;
/** Label on a ManifestWork whose hub Application is owned by an ApplicationSet. */
export const APPLICATION_SET_LABEL = `${OCM_APPS}/application-set`;
/** Annotation naming the target ManagedCluster (also the ManifestWork namespace). */
export const MANAGED_CLUSTER_ANNOTATION = `${OCM_APPS}/ocm-managed-cluster`;
/** Optional annotation: namespace of the Application copy on the spoke. */
export const SPOKE_APP_NAMESPACE_ANNOTATION = `${OCM_APPS}/ocm-managed-cluster-app-namespace`;
/** Optional annotations overriding the spoke destination. */
export const DESTINATION_NAME_ANNOTATION = `${OCM_APPS}/destination-name`;
export const DESTINATION_SERVER_ANNOTATION = `${OCM_APPS}/destination-server`;
/** Work annotations pointing back at the hub Application. */
export const HUB_APP_NAMESPACE_ANNOTATION = `${OCM_APPS}/hub-application-namespace`;
export const HUB_APP_NAME_ANNOTATION = `${OCM_APPS}/hub-application-name`;
/** Work annotation `<namespace>/<applicationset>` when an ApplicationSet owns the hub app. */
export const HOSTING_APPSET_ANNOTATION = `${OCM_APPS}/hosting-applicationset`;

/** Argo CD keys. */
export const SKIP_RECONCILE_ANNOTATION = 'argocd.argoproj.io/skip-reconcile';
export const REFRESH_ANNOTATION = 'argocd.argoproj.io/refresh';
export const ARGOCD_SECRET_TYPE_LABEL = 'argocd.argoproj.io/secret-type';
export const ARGOCD_MANAGED_BY_LABEL = 'argocd.argoproj.io/managed-by';
export const ARGOCD_TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';
export const ARGOCD_RESOURCES_FINALIZER = 'resources-finalizer.argocd.argoproj.io';
/**
 * Every finalizer through which Argo CD's application controller prunes an Application's resources on
 * deletion: the plain one and its propagation-policy forms (argo-cd
 * pkg/apis/application/v1alpha1/application_defaults.go). Only that controller removes them, and it never
 * processes an Application with `skip-reconcile`.
 */
export const ARGOCD_RESOURCES_FINALIZERS: readonly string[] = [
  ARGOCD_RESOURCES_FINALIZER,
  `${ARGOCD_RESOURCES_FINALIZER}/foreground`,
  `${ARGOCD_RESOURCES_FINALIZER}/background`,
];
/**
 * argocd-agent: what a managed agent does when the spoke copy of an Application carries a source UID
 * other than the incoming hub Application's (the hub Application was deleted and created again). Its
 * default, `recreate`, deletes the spoke copy first (with its finalizers: the resources finalizer
 * prunes the workload); `upsert` updates it in place. The agent reads it from the incoming Application
 * the principal sends, never from the spoke copy, and it does not apply to a spoke Application without
 * any source UID (the agent refuses those).
 */
export const SOURCE_UID_MISMATCH_POLICY_ANNOTATION = 'argocd.argoproj.io/source-uid-mismatch-policy';
export const SOURCE_UID_MISMATCH_UPSERT = 'upsert';
/**
 * argocd-agent (managed mode) stamps the principal's UID of the hub Application on the spoke copy it
 * creates; a spoke Application without it is not the agent's, and the agent refuses every event for it.
 */
export const SOURCE_UID_ANNOTATION = 'argocd.argoproj.io/source-uid';
/** The in-cluster destination every payload Application points at on its spoke. */
export const IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';

/** OCM cluster keys. */
export const CLUSTERSET_LABEL = 'cluster.open-cluster-management.io/clusterset';
export const PLACEMENT_LABEL = 'cluster.open-cluster-management.io/placement';
/** The hub's own ManagedCluster: never a pull-delivery target. */
export const LOCAL_CLUSTER = 'local-cluster';
/**
 * ACM's label on the hub's own ManagedCluster (`local-cluster: "true"`), whatever the cluster is named: ACM
 * lets the hub be imported under another name and tells it by this label.
 */
export const LOCAL_CLUSTER_LABEL = 'local-cluster';

/** Whether a ManagedCluster is the hub itself: named `local-cluster`, or labelled `local-cluster: "true"`. */
export function isHubItself(name: string, labels: Readonly<Record<string, string>> | undefined): boolean {
  return name === LOCAL_CLUSTER || labels?.[LOCAL_CLUSTER_LABEL] === 'true';
}

/** Kubernetes recommended labels. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'pullfleet';
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** pullfleet's own keys. */
export const PULLFLEET_PREFIX = 'pullfleet.io/';
/** Annotation: the construct path that produced an object (provenance). */
export const CONSTRUCT_PATH_ANNOTATION = `${PULLFLEET_PREFIX}construct-path`;
/** Annotation on a hub Application (and label on its work): `static` when synth already rendered the work. */
export const DELIVERY_ANNOTATION = `${PULLFLEET_PREFIX}delivery`;
export const DELIVERY_LABEL = DELIVERY_ANNOTATION;
export const DELIVERY_STATIC = 'static';
/**
 * Annotation on a basic hub Application (or ApplicationSet template) during step 1 of a move between
 * delivery models: its spoke Application is still someone else's (argocd-agent's, or the spoke folder's
 * Argo CD), so its work stands by: it creates the Application only if it is missing (`CreateOnly`) and
 * orphans it on delete.
 */
export const STAND_BY_ANNOTATION = `${PULLFLEET_PREFIX}stand-by`;
/** The destination name argocd-agent gives the Applications it writes on a spoke. */
export const AGENT_SPOKE_DESTINATION = 'in-cluster';
export const DELIVERY_DYNAMIC = 'dynamic';
/**
 * `pullfleet.io/delivery: waved`: a static app rolled out in waves. Synth renders its hub Applications and
 * rollout policy; the controller writes the works, wave by wave (docs/concepts/rollouts.md).
 */
export const DELIVERY_WAVED = 'waved';
/** Argo CD's per-resource sync options annotation. */
export const ARGOCD_SYNC_OPTIONS_ANNOTATION = 'argocd.argoproj.io/sync-options';
/** Work annotation: UID of the hub Application the controller propagated (runtime only). */
export const HUB_APP_UID_ANNOTATION = `${PULLFLEET_PREFIX}hub-application-uid`;
/** Label on objects the controller creates, so it never touches what it did not create. */
export const CONTROLLER_OWNED_LABEL = `${PULLFLEET_PREFIX}controller`;
/** Finalizer the controller puts on opted-in hub Applications. */
export const CLEANUP_FINALIZER = `${PULLFLEET_PREFIX}manifestwork-cleanup`;
/**
 * Annotation on every payload Application: a hash of the spec the hub asks the spoke to run. The work
 * agent feeds it back (`specHash`), so the hub knows when the spoke Application runs the current spec.
 */
export const SPEC_HASH_ANNOTATION = `${PULLFLEET_PREFIX}spec-hash`;
/**
 * Annotation the controller leaves on a hub app when it forwards `operation` (see
 * src/model/reconcile/propagation.ts).
 */
export const FORWARDED_OPERATION_ANNOTATION = `${PULLFLEET_PREFIX}forwarded-operation`;
/** Annotation the controller leaves on a hub app while an old propagation controller fights its hand-over (takeover.ts). */
export const LEGACY_CONTROLLER_SEEN_ANNOTATION = `${PULLFLEET_PREFIX}legacy-controller-seen`;
/**
 * Annotations the controller writes on hub Applications. A pull ApplicationSet lists them in
 * `spec.preservedFields.annotations`: the applicationset-controller otherwise replaces a generated
 * Application's annotations with the template's on every update.
 */
export const CONTROLLER_APP_ANNOTATIONS: readonly string[] = [
  FORWARDED_OPERATION_ANNOTATION,
  LEGACY_CONTROLLER_SEEN_ANNOTATION,
];
/** Field manager for every write the controller makes. */
export const FIELD_MANAGER = 'pullfleet-controller';

/** API coordinates. */
export const ARGOCD_GROUP = 'argoproj.io';
export const ARGOCD_VERSION = 'v1alpha1';
export const ARGOCD_API_VERSION = `${ARGOCD_GROUP}/${ARGOCD_VERSION}`;
export const WORK_API_VERSION = 'work.open-cluster-management.io/v1';
export const CLUSTER_API_VERSION = 'cluster.open-cluster-management.io/v1';
export const PLACEMENT_API_VERSION = 'cluster.open-cluster-management.io/v1beta1';
export const CLUSTERSET_API_VERSION = 'cluster.open-cluster-management.io/v1beta2';

/**
 * Whether an app may not set annotation `key` (PullAppOptions.annotations): pullfleet, OCM or Argo CD set it
 * or act on it themselves. `pullfleet migrate applications` leaves such keys out of the code it writes.
 */
export function isReservedAppAnnotation(key: string): boolean {
  return (
    [PULLFLEET_PREFIX, 'apps.open-cluster-management.io/'].some((prefix) => key.startsWith(prefix)) ||
    [
      SKIP_RECONCILE_ANNOTATION,
      REFRESH_ANNOTATION,
      'argocd.argoproj.io/hydrate',
      ARGOCD_TRACKING_ANNOTATION,
      SOURCE_UID_ANNOTATION,
      SOURCE_UID_MISMATCH_POLICY_ANNOTATION,
      LAST_APPLIED_ANNOTATION,
    ].includes(key)
  );
}
