/**
 * The blank Argo CD cluster Secret that makes a ManagedCluster visible to the ApplicationSet
 * clusterDecisionResource generator. The hub never contacts the server it names and the Secret never
 * holds credentials: no `config`, no token, no TLS material.
 */
import { ARGOCD_SECRET_TYPE_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/keys.js';
import { fitName } from '../core/names.js';
import { sortKeys } from '../core/records.js';
import type { KubeObject } from '../core/types.js';

export interface ClusterSecret extends KubeObject {
  type: 'Opaque';
  stringData: { name: string; server: string };
}

/** Placeholder API server for a cluster; never dialled by the hub. */
export function placeholderServer(cluster: string): string {
  return `https://${cluster}-control-plane:6443`;
}

/** Name of the cluster Secret for `cluster` (fits 253 characters and stays stable). */
export function clusterSecretName(cluster: string): string {
  return fitName(`${cluster}-cluster-secret`, 253);
}

/** Keys a cluster Secret may carry; anything else (config, bearerToken, tls…) is refused. */
export const CLUSTER_SECRET_KEYS: readonly string[] = ['name', 'server'];

/**
 * The blank cluster Secret for `cluster` in the Argo CD namespace. `extraLabels` carries provenance
 * (who created it); the secret-type label always wins.
 */
export function buildClusterSecret(
  cluster: string,
  argoNamespace: string,
  extraLabels: Record<string, string> = {},
): ClusterSecret {
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, ...extraLabels, [ARGOCD_SECRET_TYPE_LABEL]: 'cluster' };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: clusterSecretName(cluster),
      namespace: argoNamespace,
      labels: sortKeys(labels),
    },
    type: 'Opaque',
    stringData: { name: cluster, server: placeholderServer(cluster) },
  };
}
