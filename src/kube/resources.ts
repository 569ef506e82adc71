/** The API resources the controller reads and writes, with their REST coordinates. */
import { ARGOCD_GROUP, ARGOCD_SECRET_TYPE_LABEL, ARGOCD_VERSION } from '../model/core/keys.js';
import {
  FLEET_REPORT_GROUP,
  FLEET_REPORT_KIND,
  FLEET_REPORT_PLURAL,
  FLEET_REPORT_VERSION,
} from '../model/report/report-crd.js';
import { MCAS_REPORT_KIND } from '../model/report/report.js';

export interface ResourceKind {
  /** Short stable id used for cache lookups and metrics labels. */
  readonly id: string;
  /** API group ('' for the core group). */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Where an informer lists and watches a kind: optionally one namespace and a label selector. */
export interface WatchScope {
  readonly namespace?: string;
  readonly labelSelector?: string;
}

export function apiVersionOf(kind: ResourceKind): string {
  return kind.group ? `${kind.group}/${kind.version}` : kind.version;
}

/** REST path of a collection or an object. */
export function resourcePath(kind: ResourceKind, namespace?: string, name?: string): string {
  const base = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
  const ns = kind.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${kind.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

export const APPLICATION: ResourceKind = {
  id: 'Application',
  group: ARGOCD_GROUP,
  version: ARGOCD_VERSION,
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
};
export const APPLICATION_SET: ResourceKind = {
  id: 'ApplicationSet',
  group: ARGOCD_GROUP,
  version: ARGOCD_VERSION,
  kind: 'ApplicationSet',
  plural: 'applicationsets',
  namespaced: true,
};
export const MANIFEST_WORK: ResourceKind = {
  id: 'ManifestWork',
  group: 'work.open-cluster-management.io',
  version: 'v1',
  kind: 'ManifestWork',
  plural: 'manifestworks',
  namespaced: true,
};
export const MANAGED_CLUSTER: ResourceKind = {
  id: 'ManagedCluster',
  group: 'cluster.open-cluster-management.io',
  version: 'v1',
  kind: 'ManagedCluster',
  plural: 'managedclusters',
  namespaced: false,
};
export const MANAGED_CLUSTER_SET: ResourceKind = {
  id: 'ManagedClusterSet',
  group: 'cluster.open-cluster-management.io',
  version: 'v1beta2',
  kind: 'ManagedClusterSet',
  plural: 'managedclustersets',
  namespaced: false,
};
export const MANAGED_CLUSTER_SET_BINDING: ResourceKind = {
  id: 'ManagedClusterSetBinding',
  group: 'cluster.open-cluster-management.io',
  version: 'v1beta2',
  kind: 'ManagedClusterSetBinding',
  plural: 'managedclustersetbindings',
  namespaced: true,
};
export const PLACEMENT_DECISION: ResourceKind = {
  id: 'PlacementDecision',
  group: 'cluster.open-cluster-management.io',
  version: 'v1beta1',
  kind: 'PlacementDecision',
  plural: 'placementdecisions',
  namespaced: true,
};
export const CONFIG_MAP: ResourceKind = {
  id: 'ConfigMap',
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};
export const SECRET: ResourceKind = {
  id: 'Secret',
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
};
export const NAMESPACE: ResourceKind = {
  id: 'Namespace',
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
};
export const LEASE: ResourceKind = {
  id: 'Lease',
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};

/** Argo CD cluster Secrets only (the controller never needs any other Secret). */
export const CLUSTER_SECRET_SELECTOR = `${ARGOCD_SECRET_TYPE_LABEL}=cluster`;

export const FLEET_REPORT: ResourceKind = {
  id: FLEET_REPORT_KIND,
  group: FLEET_REPORT_GROUP,
  version: FLEET_REPORT_VERSION,
  kind: FLEET_REPORT_KIND,
  plural: FLEET_REPORT_PLURAL,
  namespaced: true,
};

export const MULTICLUSTER_APPSET_REPORT: ResourceKind = {
  id: MCAS_REPORT_KIND,
  group: 'apps.open-cluster-management.io',
  version: 'v1alpha1',
  kind: MCAS_REPORT_KIND,
  plural: 'multiclusterapplicationsetreports',
  namespaced: true,
};
