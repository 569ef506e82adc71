/**
 * The fleet report in ACM's MulticlusterApplicationSetReport shape, for consoles that read it.
 */
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/keys.js';
import type { KubeObject } from '../core/types.js';
import { EMPTY_SUMMARY } from './summary.js';
import type { FleetReport } from './types.js';

/** API version of ACM's MulticlusterApplicationSetReport. */
export const MCAS_REPORT_API_VERSION = 'apps.open-cluster-management.io/v1alpha1';
/** Kind of ACM's MulticlusterApplicationSetReport. */
export const MCAS_REPORT_KIND = 'MulticlusterApplicationSetReport';
/** Label ACM puts on a MulticlusterApplicationSetReport: `<namespace>.<applicationset>`. */
export const MCAS_HOSTING_APPSET_LABEL = 'apps.open-cluster-management.io/hosting-applicationset';

/** ACM's MulticlusterApplicationSetReport (apps.open-cluster-management.io/v1alpha1); counts are strings there. */
export interface MulticlusterApplicationSetReport extends KubeObject {
  statuses?: {
    summary?: {
      clusters?: string;
      healthy?: string;
      inProgress?: string;
      notHealthy?: string;
      notSynced?: string;
      synced?: string;
    };
    clusterConditions?: Array<{
      cluster?: string;
      app?: string;
      healthStatus?: string;
      syncStatus?: string;
      syncRevision?: string;
      operationStatePhase?: string;
      operationStateStartedAt?: string;
      conditions?: Array<{ type?: string; message?: string }>;
    }>;
    resources?: Array<{ apiVersion?: string; kind?: string; name?: string; namespace?: string }>;
  };
}

/**
 * The `hosting-applicationset` label value `<namespace>.<applicationset>` as ACM writes it: cut to the 63
 * characters a label value may have (`%.63s` in ACM's status aggregation), and, where the cut leaves a
 * character a label value may not end with, without it (ACM's own write would be refused there).
 */
function hostingAppSetLabel(value: string): string {
  return value.slice(0, 63).replace(/[^A-Za-z0-9]+$/, '');
}

/**
 * The same report in ACM's MulticlusterApplicationSetReport shape, for consoles that read it: same
 * name and namespace as the ApplicationSet, labelled `<namespace>.<name>`. Every expected cluster
 * appears (ACM's own report omits clusters that never reported); a failed sync becomes a `SyncError`
 * condition with the spoke's message, any other problem a condition whose type is the row state.
 * Spoke resources are not known on the hub and are left out.
 */
export function toMulticlusterApplicationSetReport(report: FleetReport): MulticlusterApplicationSetReport {
  const status = report.status;
  const summary = status?.summary ?? EMPTY_SUMMARY;
  const rows = status?.clusters ?? [];
  const namespace = report.metadata.namespace;
  return {
    apiVersion: MCAS_REPORT_API_VERSION,
    kind: MCAS_REPORT_KIND,
    metadata: {
      name: report.metadata.name,
      ...(namespace ? { namespace } : {}),
      labels: {
        [MCAS_HOSTING_APPSET_LABEL]: hostingAppSetLabel(`${namespace}.${report.spec.applicationSet}`),
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
      },
      ...(report.metadata.ownerReferences ? { ownerReferences: report.metadata.ownerReferences } : {}),
    },
    statuses: {
      summary: {
        clusters: String(summary.clusters),
        healthy: String(summary.healthy),
        inProgress: String(summary.progressing),
        // As ACM counts it: a Progressing cluster is also not healthy.
        notHealthy: String(summary.clusters - summary.healthy),
        notSynced: String(summary.clusters - summary.synced),
        synced: String(summary.synced),
      },
      clusterConditions: rows.map((row) => {
        const message = row.operationMessage ?? row.message;
        const syncFailed = row.operationPhase === 'Failed' || row.operationPhase === 'Error';
        const type = row.state === 'Degraded' && syncFailed ? 'SyncError' : row.state;
        return {
          cluster: row.cluster,
          ...(row.application ? { app: `${namespace}/${row.application}` } : {}),
          ...(row.healthStatus ? { healthStatus: row.healthStatus } : {}),
          ...(row.syncStatus ? { syncStatus: row.syncStatus } : {}),
          ...(row.revision ? { syncRevision: row.revision } : {}),
          ...(row.operationPhase ? { operationStatePhase: row.operationPhase } : {}),
          ...(row.operationStartedAt ? { operationStateStartedAt: row.operationStartedAt } : {}),
          ...(row.state !== 'Healthy' && message ? { conditions: [{ type, message }] } : {}),
        };
      }),
    },
  };
}
