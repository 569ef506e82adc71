/**
 * The `pullfleet` package root: the constructs a fleet.config.ts builds its fleet from, and what it needs
 * around them (the validation error synth throws, the package version). The pure model, the controller
 * and the CLI have entry points of their own: `pullfleet/model`, `pullfleet/controller`, `pullfleet/cli`.
 */
export * from './constructs/index.js';
export { FleetValidationError, formatProblems, type FleetProblem } from './model/validation/rules.js';
// Model types that appear in the constructs' public signatures.
export type { LabelSelector, SelectorOperator, SelectorRequirement } from './model/core/selectors.js';
export type { FeedbackScrapeType, JsonObject, JsonValue } from './model/core/types.js';
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
  TaintEffect,
  Toleration,
} from './model/placement/placement.js';
export { pullfleetVersion } from './version.js';
