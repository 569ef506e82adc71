/**
 * Dynamic pull delivery: the ApplicationSet whose clusterDecisionResource generator follows a
 * Placement, the generator ConfigMap, and the RBAC the applicationset-controller needs to read
 * placement decisions.
 */
import {
  ARGOCD_API_VERSION,
  CLEANUP_FINALIZER,
  CONSTRUCT_PATH_ANNOTATION,
  CONTROLLER_APP_ANNOTATIONS,
  DELIVERY_ANNOTATION,
  DELIVERY_DYNAMIC,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MANAGED_CLUSTER_ANNOTATION,
  PLACEMENT_API_VERSION,
  PLACEMENT_LABEL,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  SOURCE_UID_MISMATCH_POLICY_ANNOTATION,
  SOURCE_UID_MISMATCH_UPSERT,
} from '../core/keys.js';
import { DELIVERY_MODEL_LABEL, DeliveryModel } from './delivery-model.js';
import {
  applicationSpec,
  applyAgentHandback,
  FLEET_APP_LABEL,
  type AgentHandback,
  type AppDefinition,
} from './hub-application.js';
import { sortKeys } from '../core/records.js';
import { spokeLabelMatrix, spokeLabelsRead } from './per-spoke.js';
import { ROLLOUT_CLUSTER_LABEL, type RolloutWave } from '../rollout/policy.js';
import { rollingSyncStrategy } from '../rollout/rolling-sync.js';
import type { JsonObject, KubeObject } from '../core/types.js';

/** Name of the generator ConfigMap (one per Argo CD namespace). */
export const PLACEMENT_GENERATOR_CONFIGMAP = 'ocm-placement-generator';
/** Name of the Role and RoleBinding letting the applicationset-controller read placements. */
export const PLACEMENT_READER_ROLE = 'pullfleet-appset-placement-reader';
/** Default requeue interval of the clusterDecisionResource generator, in seconds. */
export const DEFAULT_REQUEUE_AFTER_SECONDS = 180;
/** The ApplicationSet template's name pattern: `{{name}}` is the decision's cluster name. */
export const CLUSTER_NAME_PARAM = '{{name}}';

export interface ConfigMapObject extends KubeObject {
  data: Record<string, string>;
}

/** The clusterDecisionResource generator ConfigMap pointing at PlacementDecisions. */
export function buildGeneratorConfigMap(namespace: string): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: PLACEMENT_GENERATOR_CONFIGMAP, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
    data: {
      apiVersion: PLACEMENT_API_VERSION,
      kind: 'placementdecisions',
      matchKey: 'clusterName',
      statusListKey: 'decisions',
    },
  };
}

/** Role allowing the applicationset-controller to read placements and their decisions. */
export function buildPlacementReaderRole(namespace: string): KubeObject & { rules: JsonObject[] } {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: PLACEMENT_READER_ROLE, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
    rules: [
      {
        apiGroups: ['cluster.open-cluster-management.io'],
        resources: ['placementdecisions', 'placements'],
        verbs: ['get', 'list', 'watch'],
      },
    ],
  };
}

/** Binds {@link buildPlacementReaderRole} to the applicationset-controller's service account. */
export function buildPlacementReaderRoleBinding(namespace: string, serviceAccount: string): KubeObject & JsonObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: PLACEMENT_READER_ROLE, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: PLACEMENT_READER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
  };
}

export interface PullApplicationSetOptions {
  /** ApplicationSet name (also the fleet app name unless `def.name` differs). */
  readonly name: string;
  readonly namespace: string;
  readonly placement: string;
  readonly requeueAfterSeconds: number;
  readonly constructPath: string;
  /**
   * basic (the controller wraps each generated Application into a work) or agent-managed (the template
   * routes each Application to its agent by `destination.name`).
   * @default DeliveryModel.BASIC
   */
  readonly model?: DeliveryModel.BASIC | DeliveryModel.AGENT_MANAGED;
  /**
   * Basic model only: the spokes of the placement are being taken back from argocd-agent (see
   * {@link AgentHandback}); the template takes the hand-back shape for every generated Application.
   * @default - no hand-back
   */
  readonly handback?: AgentHandback;
  /**
   * Rollout waves, resolved against the spokes the placement selects offline: rendered as Argo CD's
   * RollingSync (`spec.strategy`), each generated Application labelled with its cluster.
   * @default - no strategy (Argo CD updates every Application at once)
   */
  readonly waves?: readonly RolloutWave[];
  /**
   * With waves: `strategy.deletionOrder` (`Reverse` or `AllAtOnce`).
   * @default - not rendered
   */
  readonly deletionOrder?: string;
  /**
   * The template reads spoke labels (`SpokeParam.label`): the generator is a matrix of the placement's decisions
   * and the decided cluster's Secret (per-spoke.ts), whose mirrored labels fill `{{metadata.labels.*}}`.
   * @default false
   */
  readonly spokeLabels?: boolean;
}

/** Name pattern of the Applications the ApplicationSet generates: `{{name}}-<app>`. */
export function applicationSetAppNamePattern(app: string): string {
  return `${CLUSTER_NAME_PARAM}-${app}`;
}

/**
 * The name the applicationset-controller gives the Application it generates from `template` for
 * `cluster`: every `{{name}}` replaced, nothing shortened (the controller does not shorten names).
 * Synth, plan and the controller all derive the app's ManifestWork name from this one.
 */
export function generatedApplicationName(template: string, cluster: string): string {
  return template.replaceAll(CLUSTER_NAME_PARAM, cluster);
}

/** The pull ApplicationSet for `def`, following the decisions of `options.placement`. */
export function buildPullApplicationSet(
  def: AppDefinition,
  options: PullApplicationSetOptions,
): KubeObject & { spec: JsonObject } {
  const model = options.model ?? DeliveryModel.BASIC;
  const managed = model === DeliveryModel.AGENT_MANAGED;
  const templateLabels = sortKeys({
    ...(def.labels ?? {}),
    [DELIVERY_MODEL_LABEL]: model,
    [FLEET_APP_LABEL]: def.name,
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    ...(managed ? {} : { [PULL_LABEL]: 'true' }),
    ...(options.waves?.length ? { [ROLLOUT_CLUSTER_LABEL]: CLUSTER_NAME_PARAM } : {}),
  });
  const templateAnnotations = sortKeys({
    ...(def.annotations ?? {}),
    ...(managed
      ? { [SOURCE_UID_MISMATCH_POLICY_ANNOTATION]: SOURCE_UID_MISMATCH_UPSERT }
      : {
          [DELIVERY_ANNOTATION]: DELIVERY_DYNAMIC,
          [MANAGED_CLUSTER_ANNOTATION]: CLUSTER_NAME_PARAM,
          [SKIP_RECONCILE_ANNOTATION]: 'true',
        }),
  });
  const spec = applicationSpec(def);
  // The applicationset-controller sets a generated Application's finalizers to the template's on every
  // update: the controller's cleanup finalizer is in the template so that it is kept, not fought over.
  const finalizers = [
    ...(def.pruneOnDelete ? ['resources-finalizer.argocd.argoproj.io'] : []),
    ...(managed ? [] : [CLEANUP_FINALIZER]),
  ];
  if (managed) spec.destination = { name: CLUSTER_NAME_PARAM, namespace: def.destinationNamespace };
  let template: { metadata: JsonObject & { annotations?: Record<string, string> }; spec: JsonObject } = {
    metadata: {
      name: applicationSetAppNamePattern(def.name),
      labels: templateLabels,
      ...(Object.keys(templateAnnotations).length ? { annotations: templateAnnotations } : {}),
      ...(finalizers.length ? { finalizers } : {}),
    },
    spec,
  };
  if (!managed && options.handback) template = applyAgentHandback(template, CLUSTER_NAME_PARAM, options.handback);
  const decisions: JsonObject = {
    clusterDecisionResource: {
      configMapRef: PLACEMENT_GENERATOR_CONFIGMAP,
      labelSelector: { matchLabels: { [PLACEMENT_LABEL]: options.placement } },
      requeueAfterSeconds: options.requeueAfterSeconds,
    },
  };
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'ApplicationSet',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels: { [DELIVERY_MODEL_LABEL]: model, [FLEET_APP_LABEL]: def.name, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations: { [CONSTRUCT_PATH_ANNOTATION]: options.constructPath },
    },
    spec: {
      generators: [options.spokeLabels ? spokeLabelMatrix(decisions, spokeLabelsRead(template)) : decisions],
      template: template,
      // The annotations the controller writes on generated Applications survive the applicationset-controller's updates.
      ...(managed ? {} : { preservedFields: { annotations: [...CONTROLLER_APP_ANNOTATIONS] } }),
      ...(options.waves?.length ? { strategy: rollingSyncStrategy(options.waves, options.deletionOrder) } : {}),
    },
  };
}

/**
 * The Placements an ApplicationSet's generators read decisions of (`clusterDecisionResource` selecting
 * `cluster.open-cluster-management.io/placement`), nested matrix and merge generators too (a template reading
 * spoke labels generates from a matrix of decisions and cluster Secrets), in generator order, once each.
 */
export function applicationSetPlacements(generators: unknown): string[] {
  type Generator = {
    clusterDecisionResource?: { labelSelector?: { matchLabels?: Record<string, unknown> } };
    matrix?: { generators?: unknown };
    merge?: { generators?: unknown };
  } | null;
  const out = new Set<string>();
  const walk = (list: unknown): void => {
    for (const g of Array.isArray(list) ? (list as Generator[]) : []) {
      const placement = g?.clusterDecisionResource?.labelSelector?.matchLabels?.[PLACEMENT_LABEL];
      if (typeof placement === 'string' && placement) out.add(placement);
      walk(g?.matrix?.generators);
      walk(g?.merge?.generators);
    }
  };
  walk(generators);
  return [...out];
}
