/**
 * The `pullfleet` package root: what a fleet.config.ts builds its fleet from. The constructs, their props
 * and enums, the error synth throws for an invalid fleet, and the package version. Every name is listed
 * on purpose: a name added here is public API, and `npm run api:check` (api/pullfleet.api.md) fails CI
 * until the report records it. `pullfleet/model` and `pullfleet/controller` are the only other entries.
 */

// The constructs and the interfaces they accept from one another.
export {
  Fleet,
  Hub,
  Spoke,
  ClusterSet,
  Placement,
  Prioritizer,
  AppSource,
  SyncOption,
  SpokeParam,
  PullApplication,
  PullApplicationSet,
  GitOpsCluster,
  ControllerInstall,
  Inventory,
  Rollout,
  WaveLimit,
  type IHub,
  type ISpoke,
  type IClusterSet,
  type IPlacement,
  type IGitOpsCluster,
  type IRendersObjects,
} from './constructs/index.js';

// What PullApplication and PullApplicationSet share.
export { PullAppBase } from './constructs/app-props.js';

// Props, options and importer options, and what the constructs' methods return.
export type {
  FleetProps,
  FleetFindings,
  HubProps,
  HubControllerSettings,
  HubVersions,
  SpokeProps,
  SpokeImportOptions,
  SpokeVersions,
  ClusterSetProps,
  ClusterSetImportOptions,
  PlacementProps,
  PlacementImportOptions,
  ClusterPredicateProps,
  GitSourceProps,
  GitDirectoryOptions,
  JsonnetOptions,
  JsonnetVariable,
  KustomizeSourceProps,
  KustomizeReplica,
  KustomizePatch,
  KustomizePatchTarget,
  HelmSourceProps,
  HelmGitSourceProps,
  HelmOptions,
  HelmParameter,
  HelmFileParameter,
  RefSourceProps,
  PluginParameter,
  PluginSourceProps,
  PullAppOptions,
  SpokeInfo,
  SpokeOverrides,
  SourceOverride,
  IgnoreDifference,
  SyncRetry,
  SyncRetryBackoff,
  ManagedNamespaceMetadata,
  ApplicationInfo,
  PullApplicationProps,
  PullApplicationSetProps,
  RolloutWaveProps,
  RolloutOptions,
  RolloutWave,
  GitOpsClusterCommonProps,
  AcmGitOpsClusterProps,
  AcmAutonomousGitOpsClusterProps,
  OcmGitOpsClusterProps,
  OcmAutonomousGitOpsClusterProps,
  GitOpsOlmSubscription,
  SpokeFolderRepository,
  ControllerInstallProps,
  ControllerMonitoring,
  PolicyRule,
  AddInventoryOptions,
  SpokeOverride,
  RenderedObjectQuery,
} from './constructs/index.js';

// Enums the props take.
export {
  HubFlavor,
  FeedbackScrape,
  PrioritizerMode,
  DeliveryModel,
  InstallPlanApproval,
  RolloutFailureAction,
  DeletionOrder,
  PrunePropagationPolicy,
} from './constructs/index.js';
export { SelectorOperator } from './model/core/selectors.js';
export { TaintEffect, TolerationOperator } from './model/placement/placement.js';

// Where rendered objects land under dist/<hub>/ (docs/reference/dist-layout.md).
export { routeOutput, OutputFiles } from './constructs/index.js';

// What synth throws for an invalid fleet.
export { FleetValidationError, formatProblems, type FleetProblem } from './model/validation/rules.js';

// Model types the constructs' public signatures name.
export type { LabelSelector, SelectorRequirement } from './model/core/selectors.js';
export type { EnumValue, JsonObject, JsonValue } from './model/core/types.js';
export type { ResourceGrant } from './model/delivery/bootstrap.js';
export type { SpokeFolderSource } from './model/delivery/delivery-model.js';
export type { AppDefinition } from './model/delivery/hub-application.js';
export type { InventorySpoke } from './model/placement/inventory.js';
export type {
  ClusterPredicate,
  InventoryCluster,
  PlacementSpec,
  PrioritizerConfiguration,
  Taint,
  Toleration,
} from './model/placement/placement.js';

export { pullfleetVersion } from './version.js';
