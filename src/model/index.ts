/**
 * `pullfleet/model`: for a platform team's own tooling around a fleet pullfleet delivers, such as a
 * dashboard or an alert that reads FleetReports, or a script that finds the ManifestWork of an app.
 *
 * - The FleetReport the hub controller keeps per pull ApplicationSet: its API coordinates and shape, to
 *   read it with any Kubernetes client (docs/controller/fleet-reports.md).
 * - The names pullfleet gives the objects it writes: the hub Application of a static app on a spoke, and
 *   the ManifestWork that carries a hub Application to its spoke.
 *
 * The rest of src/model is internal and may change in any release. Every name is listed on purpose;
 * `npm run api:check` (api/pullfleet-model.api.md) fails CI when this list changes unintentionally.
 */

// The FleetReport custom resource (pullfleet.io/v1alpha1).
export {
  FLEET_REPORT_GROUP,
  FLEET_REPORT_VERSION,
  FLEET_REPORT_API_VERSION,
  FLEET_REPORT_KIND,
  FLEET_REPORT_PLURAL,
  FLEET_REPORT_STATES,
} from './report/report-crd.js';
export { MAX_ROWS_BYTES } from './report/report.js';
export type {
  FleetReport,
  FleetReportStatus,
  FleetReportRow,
  FleetReportSummary,
  ReportResource,
  ReportResourceCounts,
  ReportState,
  ConditionStatus,
} from './report/report.js';
export type { Condition, KubeObject, ObjectMeta, OwnerReference } from './core/types.js';

// Object names.
export { staticHubApplicationName } from './delivery/hub-application.js';
export { manifestWorkName } from './core/names.js';
