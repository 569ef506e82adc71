/** ManagedClusters and ManagedClusterSets shaped as an OCM hub stores them (with the volatile fields it adds). */
import type { ManagedClusterObject, ManagedClusterSetObject } from '../../../src/model/placement/inventory.js';

export interface ClusterShape {
  labels?: Record<string, string>;
  claims?: Record<string, string>;
  taints?: Array<{ key: string; value?: string; effect: string }>;
}

/** A ManagedCluster with the status OCM writes (conditions, capacity, version, timestamps). */
export function managedCluster(
  name: string,
  shape: ClusterShape = {},
): ManagedClusterObject & {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
} {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name, labels: { ...(shape.labels ?? {}) } },
    spec: {
      hubAcceptsClient: true,
      leaseDurationSeconds: 60,
      managedClusterClientConfigs: [{ url: `https://${name}.example:6443` }],
      taints: (shape.taints ?? []).map((t) => ({ ...t, timeAdded: '2026-01-01T00:00:00Z' })),
    },
    status: {
      allocatable: { cpu: '15', memory: '63Gi' },
      capacity: { cpu: '16', memory: '64Gi' },
      version: { kubernetes: 'v1.30.2' },
      clusterClaims: Object.entries(shape.claims ?? {}).map(([claim, value]) => ({ name: claim, value })),
      conditions: [
        {
          type: 'ManagedClusterJoined',
          status: 'True',
          reason: 'ManagedClusterJoined',
          message: 'joined',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
        {
          type: 'ManagedClusterConditionAvailable',
          status: 'True',
          reason: 'ManagedClusterAvailable',
          message: 'available',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  };
}

export function exclusiveSet(name: string): ManagedClusterSetObject & { apiVersion: string; kind: string } {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSet',
    metadata: { name },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  };
}

export function labelSet(
  name: string,
  matchLabels: Record<string, string>,
): ManagedClusterSetObject & { apiVersion: string; kind: string } {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSet',
    metadata: { name },
    spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector: { matchLabels } } },
  };
}

/** `global` as OCM creates it: an empty label selector, so every cluster. */
export function globalSet(): ManagedClusterSetObject & { apiVersion: string; kind: string } {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1beta2',
    kind: 'ManagedClusterSet',
    metadata: { name: 'global' },
    spec: { clusterSelector: { selectorType: 'LabelSelector', labelSelector: {} } },
  };
}

const CLUSTERSET = 'cluster.open-cluster-management.io/clusterset';

/** A small hub: an EKS and an OpenShift cluster in `prod`, a tainted one in `default`, sets prod, default, global, openshift. */
export function smallHub(): { clusters: ReturnType<typeof managedCluster>[]; sets: ReturnType<typeof exclusiveSet>[] } {
  return {
    clusters: [
      managedCluster('prod-west', {
        labels: {
          [CLUSTERSET]: 'prod',
          region: 'us-west-2',
          vendor: 'EKS',
          'feature.open-cluster-management.io/addon-work-manager': 'available',
        },
        claims: { 'product.open-cluster-management.io': 'EKS', 'id.k8s.io': 'w-1' },
      }),
      managedCluster('ocp-east', {
        labels: { [CLUSTERSET]: 'prod', region: 'us-east-1' },
        claims: { 'product.open-cluster-management.io': 'OpenShift' },
      }),
      managedCluster('edge-1', {
        labels: { [CLUSTERSET]: 'default', vendor: 'OpenShift' },
        taints: [
          { key: 'cluster.open-cluster-management.io/unreachable', effect: 'NoSelect' },
          { key: 'edge', value: 'true', effect: 'PreferNoSelect' },
        ],
      }),
    ],
    sets: [exclusiveSet('prod'), exclusiveSet('default'), globalSet(), labelSet('openshift', { vendor: 'OpenShift' })],
  };
}

/** The `i`-th cluster of a large generated fleet: 4 regions, 3 exclusive sets, every 3rd OpenShift, every 50th tainted. */
export function fleetCluster(i: number): ReturnType<typeof managedCluster> {
  const name = `cluster-${String(i).padStart(5, '0')}`;
  const openshift = i % 3 === 0;
  return managedCluster(name, {
    labels: {
      [CLUSTERSET]: ['prod', 'staging', 'dev'][i % 3],
      region: ['us-east-1', 'us-west-2', 'eu-central-1', 'ap-south-1'][i % 4],
      env: i % 3 === 2 ? 'dev' : 'prod',
      vendor: openshift ? 'OpenShift' : 'EKS',
      'feature.open-cluster-management.io/addon-work-manager': 'available',
    },
    claims: {
      'id.k8s.io': `id-${i}`,
      'product.open-cluster-management.io': openshift ? 'OpenShift' : 'EKS',
      'kubeversion.open-cluster-management.io': 'v1.30.2',
    },
    taints: i % 50 === 0 ? [{ key: 'maintenance', value: 'planned', effect: 'NoSelect' }] : [],
  });
}

export function fleetSets(): ReturnType<typeof exclusiveSet>[] {
  return [
    exclusiveSet('prod'),
    exclusiveSet('staging'),
    exclusiveSet('dev'),
    exclusiveSet('default'),
    globalSet(),
    labelSet('openshift', { vendor: 'OpenShift' }),
  ];
}

/** Writes clusters (then their status, as the registration controller does) and sets into an API double's store. */
export function seedHub(
  store: { create(obj: never): unknown; updateStatus(obj: never): unknown },
  clusters: ReadonlyArray<ReturnType<typeof managedCluster>>,
  sets: ReadonlyArray<ReturnType<typeof exclusiveSet>>,
): void {
  for (const set of sets) store.create(set as never);
  for (const cluster of clusters) {
    const created = store.create(cluster as never) as { metadata: Record<string, unknown> };
    store.updateStatus({ ...cluster, metadata: created.metadata } as never);
  }
}
