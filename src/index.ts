/**
 * The `pullfleet` package root: the constructs a fleet.config.ts builds its fleet from, and what it needs
 * around them (the validation error synth throws, the package version). The pure model, the controller
 * and the CLI have entry points of their own: `pullfleet/model`, `pullfleet/controller`, `pullfleet/cli`.
 */
export * from './constructs/index.js';
export { FleetValidationError, formatProblems, type FleetProblem } from './model/index.js';
// Model types that appear in the constructs' public signatures.
export type {
  AppDefinition,
  ClusterPredicate,
  FeedbackScrapeType,
  InventoryCluster,
  InventorySpoke,
  JsonObject,
  JsonValue,
  LabelSelector,
  PlacementSpec,
  PrioritizerConfiguration,
  ResourceGrant,
  SpokeFolderSource,
  SelectorOperator,
  SelectorRequirement,
  Taint,
  TaintEffect,
  Toleration,
} from './model/index.js';
export { pullfleetVersion } from './version.js';
