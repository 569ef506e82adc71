/**
 * The resource views `pullfleet status --cluster/--app/--resource/--image` renders, as data: an app's resources on
 * one cluster from the summary on its ManifestWork or from its hub Application's status, with what the list leaves
 * out as counts (omitted-resources.ts). The CLI renders these; it reads no sentence the controller writes.
 */
import { ARGOCD_GROUP, HUB_APP_NAME_ANNOTATION, HUB_APP_NAMESPACE_ANNOTATION } from '../core/keys.js';
import type { Application, ApplicationStatus, ManifestWork } from '../core/types.js';
import { readApplicationFeedback } from './feedback.js';
import { omittedView, parseTruncatedListMessage, type OmittedView } from './omitted-resources.js';
import {
  RESOURCE_LIST_TRUNCATED_CONDITION,
  RESOURCE_SUMMARY_WARNING_CONDITION,
  imagesFromStatus,
  readResourceSummary,
  resourcesFromStatus,
  type SummaryResource,
} from './resource-summary.js';

/**
 * An app's resources on one cluster, for `pullfleet status --cluster/--app/--resource/--image`: from the resource
 * summary on its ManifestWork, or from the hub Application's status (what the controller wrote back, or what the
 * argocd-agent principal mirrors).
 */
export interface AppResources {
  readonly cluster: string;
  /** The hub Application. */
  readonly application: string;
  /** Its namespace on the hub. */
  readonly namespace: string;
  /** Where the list comes from: the summary on the work, or the hub Application's status. */
  readonly source: 'ManifestWork' | 'Application';
  /** The app's own health and sync, as last reported. */
  readonly health?: string;
  readonly sync?: string;
  /** The app's resources, as the source lists them. */
  readonly resources: readonly SummaryResource[];
  readonly images: readonly string[];
  /**
   * What the list leaves out ("and 312 more, 3 of them Degraded"), its rank (1 when Degraded ones are left out) and
   * whether that is a problem: computed from the counts, never from the text.
   */
  readonly omitted?: OmittedView;
  /** Why the list is missing or incomplete (the agent cannot build the summary, no summary yet, health not kept). */
  readonly note?: string;
}

/** The Application a ManifestWork delivers: its identity on the spoke (from the work's feedback config) and on the hub. */
function deliveredApplication(
  work: ManifestWork,
): { spokeNamespace: string; spokeName: string; hubNamespace: string; hubName: string } | undefined {
  const config = (work.spec?.manifestConfigs ?? []).find(
    (c) => c.resourceIdentifier.group === ARGOCD_GROUP && c.resourceIdentifier.resource === 'applications',
  );
  if (!config) return undefined;
  const spokeNamespace = config.resourceIdentifier.namespace ?? '';
  const spokeName = config.resourceIdentifier.name;
  const annotations = work.metadata.annotations ?? {};
  return {
    spokeNamespace,
    spokeName,
    hubNamespace: annotations[HUB_APP_NAMESPACE_ANNOTATION] ?? spokeNamespace,
    hubName: annotations[HUB_APP_NAME_ANNOTATION] ?? spokeName,
  };
}

const APP_TREE_NOTE =
  "the spoke's Argo CD keeps no per-resource health (status.resourceHealthSource appTree, the Argo CD 3 default): set controller.resource.health.persist=true in argocd-cmd-params-cm there to see which resource is unhealthy";

/** An app's resources from the summary on its ManifestWork; undefined for a work that delivers no Application. */
export function appResourcesFromWork(work: ManifestWork): AppResources | undefined {
  const app = deliveredApplication(work);
  if (!app) return undefined;
  const feedback = readApplicationFeedback(work, app.spokeNamespace, app.spokeName);
  const base = {
    cluster: work.metadata.namespace ?? '',
    application: app.hubName,
    namespace: app.hubNamespace,
    source: 'ManifestWork' as const,
    ...(feedback?.healthStatus ? { health: feedback.healthStatus } : {}),
    ...(feedback?.syncStatus ? { sync: feedback.syncStatus } : {}),
  };
  const reading = readResourceSummary(work, app.spokeNamespace, app.spokeName);
  switch (reading.state) {
    case 'Reported': {
      const summary = reading.summary;
      const omitted = omittedView(summary);
      const appTree =
        summary.healthSource === 'appTree' &&
        feedback?.healthStatus !== undefined &&
        feedback.healthStatus !== 'Healthy';
      return {
        ...base,
        resources: summary.resources,
        images: summary.images,
        ...(omitted ? { omitted } : {}),
        ...(appTree ? { note: APP_TREE_NOTE } : {}),
      };
    }
    case 'Rejected':
      return {
        ...base,
        resources: [],
        images: [],
        note: `the work agent could not build the resource summary: ${reading.message}`,
      };
    case 'Unsupported':
      return {
        ...base,
        resources: [],
        images: [],
        note: 'the work agent reports status but no resource summary: conditionRules need OCM 1.0 or later on the spoke (and a hub CRD that has them)',
      };
    case 'Pending':
      return {
        ...base,
        resources: [],
        images: [],
        note: 'no resource summary yet: the work agent has not reported on this version of the work',
      };
    default:
      return {
        ...base,
        resources: [],
        images: [],
        note: 'this ManifestWork asks for no resource summary (written by another tool, or before pullfleet asked for one)',
      };
  }
}

/** An app's resources from its own status: what the controller wrote back, or what the argocd-agent principal mirrors. */
export function appResourcesFromApplication(app: Application, cluster: string): AppResources {
  const status = app.status;
  const conditions = status?.conditions ?? [];
  const warning = conditions.find((c) => c.type === RESOURCE_SUMMARY_WARNING_CONDITION)?.message;
  const omitted = omittedFromStatus(status);
  const listed = Array.isArray(status?.resources);
  const note =
    warning ??
    (listed
      ? undefined
      : 'the hub Application lists no resources (status.resources): no summary has reached the hub yet');
  return {
    cluster,
    application: app.metadata.name,
    namespace: app.metadata.namespace ?? '',
    source: 'Application',
    ...(status?.health?.status ? { health: status.health.status } : {}),
    ...(status?.sync?.status ? { sync: status.sync.status } : {}),
    resources: resourcesFromStatus(status),
    images: imagesFromStatus(status),
    ...(omitted ? { omitted } : {}),
    ...(note ? { note } : {}),
  };
}

/**
 * What a hub Application's `status.resources` leaves out, from its `ResourceListTruncated` condition (read back by
 * the parser next to the model's writer); undefined when the list is whole. A message in words this version does
 * not write (a newer controller's) is shown as it is, as a line that needs attention (rank 4) but no problem.
 */
export function omittedFromStatus(status: ApplicationStatus | undefined): OmittedView | undefined {
  const message = status?.conditions?.find((c) => c.type === RESOURCE_LIST_TRUNCATED_CONDITION)?.message;
  if (!message) return undefined;
  const list = parseTruncatedListMessage(message);
  return list ? omittedView(list) : { text: message, rank: 4, problems: false };
}
