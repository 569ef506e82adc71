/**
 * The construct library, name by name. Every name here is public; internal helpers (construct ids and
 * kinds, recorded problems, the hub's parts, props checks) stay in the `_`-files and are never exported,
 * so the package root cannot reach them. A public name added to a construct module is listed here too.
 */

// The interfaces constructs take from one another.
export {
  HubFlavor,
  type IClusterSet,
  type IGitOpsCluster,
  type IHub,
  type IPlacement,
  type ISpoke,
} from './interfaces.js';

export {
  Fleet,
  GENERATED_HEADER,
  PREVIOUS_OUTPUT_ENV,
  REPORT_FILE_ENV,
  STRICT_ENV,
  type FleetFindings,
  type FleetProps,
} from './fleet.js';
export { Hub, type HubControllerSettings, type HubProps, type HubVersions } from './hub.js';
export { Spoke, type SpokeImportOptions, type SpokeProps, type SpokeVersions } from './spoke.js';
export {
  ClusterSet,
  DEFAULT_CLUSTER_SET,
  GLOBAL_CLUSTER_SET,
  type ClusterSetImportOptions,
  type ClusterSetProps,
} from './cluster-set.js';
export {
  Placement,
  Prioritizer,
  PrioritizerMode,
  SelectorOperator,
  TaintEffect,
  TolerationOperator,
  type ClusterPredicateProps,
  type PlacementImportOptions,
  type PlacementProps,
} from './placement.js';
export {
  AppSource,
  type GitDirectoryOptions,
  type GitSourceProps,
  type HelmFileParameter,
  type HelmGitSourceProps,
  type HelmOptions,
  type HelmParameter,
  type HelmSourceProps,
  type JsonnetOptions,
  type JsonnetVariable,
  type KustomizePatch,
  type KustomizePatchTarget,
  type KustomizeReplica,
  type KustomizeSourceProps,
  type PluginParameter,
  type PluginSourceProps,
  type RefSourceProps,
} from './app-source.js';
export {
  PullAppBase,
  type ApplicationInfo,
  type IgnoreDifference,
  type ManagedNamespaceMetadata,
  type PullAppOptions,
  type SyncRetry,
  type SyncRetryBackoff,
} from './app-props.js';
export { PrunePropagationPolicy, SyncOption } from './sync-option.js';
export { SpokeParam, type SourceOverride, type SpokeInfo, type SpokeOverrides } from './per-spoke.js';
export { PullApplication, type PullApplicationProps } from './pull-application.js';
export { PullApplicationSet, type PullApplicationSetProps } from './pull-application-set.js';
export {
  DeliveryModel,
  GitOpsCluster,
  InstallPlanApproval,
  type AcmAutonomousGitOpsClusterProps,
  type AcmGitOpsClusterProps,
  type GitOpsClusterCommonProps,
  type GitOpsOlmSubscription,
  type OcmAutonomousGitOpsClusterProps,
  type OcmGitOpsClusterProps,
  type SpokeFolderRepository,
} from './gitops-cluster.js';
export {
  ControllerInstall,
  FeedbackScrape,
  type ControllerInstallProps,
  type ControllerMonitoring,
  type PolicyRule,
} from './controller-install.js';
export { Inventory, type AddInventoryOptions, type SpokeOverride } from './inventory.js';

// The one escape hatch of every construct that renders objects.
export { type IRendersObjects, type RenderedObjectQuery } from './rendered.js';

// Where rendered objects land under dist/<hub>/.
export { OutputFiles, routeOutput } from './output.js';
export { Rollout, WaveLimit, RolloutFailureAction, DeletionOrder } from './rollout.js';
export type { RolloutWaveProps, RolloutOptions, RolloutWave } from './rollout.js';
