/**
 * The FleetReport custom resource: one object per pull ApplicationSet, in the ApplicationSet's
 * namespace and with its name, owned by it. The controller writes only `status` (through the status
 * subresource); `spec` names the ApplicationSet the report describes.
 */
import type { JsonObject } from '../core/types.js';

/** The API group of the FleetReport custom resource. */
export const FLEET_REPORT_GROUP = 'pullfleet.io';
/** The API version of FleetReport within its group (the only version the CRD serves). */
export const FLEET_REPORT_VERSION = 'v1alpha1';
/** The `kind` of a FleetReport object. */
export const FLEET_REPORT_KIND = 'FleetReport';
/** The `kind` of a list of FleetReports, as the API server returns it. */
export const FLEET_REPORT_LIST_KIND = 'FleetReportList';
/** The resource name of FleetReports in API paths and RBAC rules (`kubectl get fleetreports`). */
export const FLEET_REPORT_PLURAL = 'fleetreports';
/** The singular resource name (`kubectl get fleetreport <name>`). */
export const FLEET_REPORT_SINGULAR = 'fleetreport';
/** The short name `kubectl` accepts for FleetReports (`kubectl get fr`). */
export const FLEET_REPORT_SHORT_NAME = 'fr';
/** The `apiVersion` of a FleetReport object: `pullfleet.io/v1alpha1`. */
export const FLEET_REPORT_API_VERSION = `${FLEET_REPORT_GROUP}/${FLEET_REPORT_VERSION}`;
/** Name of the CustomResourceDefinition object (`<plural>.<group>`). */
export const FLEET_REPORT_CRD_NAME = `${FLEET_REPORT_PLURAL}.${FLEET_REPORT_GROUP}`;

/** Row states, worst first (the order `pullfleet status` sorts by). */
export const FLEET_REPORT_STATES = ['Degraded', 'Missing', 'Stale', 'Unknown', 'Progressing', 'Healthy'] as const;

const str = (): JsonObject => ({ type: 'string' });
const int = (): JsonObject => ({ type: 'integer', format: 'int32', minimum: 0 });
const dateTime = (): JsonObject => ({ type: 'string', format: 'date-time' });

function conditionSchema(): JsonObject {
  return {
    type: 'object',
    required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
    properties: {
      type: { type: 'string', maxLength: 316 },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      lastTransitionTime: dateTime(),
      reason: { type: 'string', maxLength: 1024, minLength: 1 },
      message: { type: 'string', maxLength: 32768 },
    },
  };
}

function rowSchema(): JsonObject {
  return {
    type: 'object',
    required: ['cluster', 'state'],
    properties: {
      cluster: str(),
      application: str(),
      manifestWork: str(),
      state: { type: 'string', enum: [...FLEET_REPORT_STATES] },
      syncStatus: str(),
      healthStatus: str(),
      revision: str(),
      operationPhase: str(),
      operationStartedAt: str(),
      operationMessage: str(),
      workApplied: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      workAvailable: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      lastFeedbackTime: str(),
      message: str(),
      resources: {
        type: 'object',
        required: ['total'],
        properties: Object.fromEntries(
          ['total', 'healthy', 'progressing', 'degraded', 'suspended', 'missing', 'unknown', 'outOfSync'].map((key) => [
            key,
            int(),
          ]),
        ),
      },
      problemResources: {
        type: 'array',
        maxItems: 3,
        'x-kubernetes-list-type': 'atomic',
        items: {
          type: 'object',
          required: ['kind', 'name'],
          properties: { kind: str(), namespace: str(), name: str(), health: str(), sync: str(), message: str() },
        },
      },
      images: { type: 'array', maxItems: 10, items: str(), 'x-kubernetes-list-type': 'atomic' },
      resourceMessage: str(),
    },
  };
}

function summarySchema(): JsonObject {
  const fields = [
    'clusters',
    'synced',
    'outOfSync',
    'healthy',
    'progressing',
    'degraded',
    'missing',
    'stale',
    'unknown',
  ];
  return {
    type: 'object',
    required: fields,
    properties: Object.fromEntries(fields.map((field) => [field, int()])),
  };
}

/** The OpenAPI v3 (structural) schema of a FleetReport. */
export function fleetReportSchema(): JsonObject {
  return {
    type: 'object',
    properties: {
      apiVersion: str(),
      kind: str(),
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        required: ['applicationSet'],
        properties: {
          applicationSet: str(),
          staleAfterSeconds: { type: 'integer', format: 'int32', minimum: 1 },
        },
      },
      status: {
        type: 'object',
        properties: {
          observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
          placements: { type: 'array', items: str(), 'x-kubernetes-list-type': 'set' },
          summary: summarySchema(),
          clusters: { type: 'array', items: rowSchema(), 'x-kubernetes-list-type': 'atomic' },
          omittedRows: { type: 'integer', format: 'int32', minimum: 0 },
          omittedResourceDetails: { type: 'integer', format: 'int32', minimum: 0 },
          conditions: {
            type: 'array',
            items: conditionSchema(),
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['type'],
          },
        },
      },
    },
  };
}

/** The apiextensions.k8s.io/v1 CustomResourceDefinition for FleetReport. */
export function fleetReportCrd(): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: FLEET_REPORT_CRD_NAME,
      labels: { 'app.kubernetes.io/managed-by': 'pullfleet', 'app.kubernetes.io/part-of': 'pullfleet' },
    },
    spec: {
      group: FLEET_REPORT_GROUP,
      scope: 'Namespaced',
      names: {
        kind: FLEET_REPORT_KIND,
        listKind: FLEET_REPORT_LIST_KIND,
        plural: FLEET_REPORT_PLURAL,
        singular: FLEET_REPORT_SINGULAR,
        shortNames: [FLEET_REPORT_SHORT_NAME],
        categories: ['pullfleet'],
      },
      versions: [
        {
          name: FLEET_REPORT_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Clusters', type: 'integer', jsonPath: '.status.summary.clusters' },
            { name: 'Synced', type: 'integer', jsonPath: '.status.summary.synced' },
            { name: 'Healthy', type: 'integer', jsonPath: '.status.summary.healthy' },
            { name: 'Degraded', type: 'integer', jsonPath: '.status.summary.degraded' },
            { name: 'Missing', type: 'integer', jsonPath: '.status.summary.missing' },
            { name: 'Stale', type: 'integer', jsonPath: '.status.summary.stale' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema: fleetReportSchema() },
        },
      ],
    },
  };
}

/**
 * RBAC rules the controller needs for fleet reports (for its ClusterRole). The controller never reads
 * reports through list/watch: it server-side applies them (patch, plus create for a new one), applies
 * their status, and deletes them; the same for MulticlusterApplicationSetReports with ACM compatibility on.
 */
export function fleetReportRbacRules(multiclusterReports = false): JsonObject[] {
  const rules: JsonObject[] = [
    { apiGroups: [FLEET_REPORT_GROUP], resources: [FLEET_REPORT_PLURAL], verbs: ['create', 'delete', 'patch'] },
    { apiGroups: [FLEET_REPORT_GROUP], resources: [`${FLEET_REPORT_PLURAL}/status`], verbs: ['patch'] },
  ];
  if (multiclusterReports) {
    rules.push({
      apiGroups: ['apps.open-cluster-management.io'],
      resources: ['multiclusterapplicationsetreports'],
      verbs: ['create', 'delete', 'patch'],
    });
  }
  return rules;
}
