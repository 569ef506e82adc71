/**
 * Deprecations (docs/reference/versioning.md#deprecations): an API that goes away first warns at synth for
 * at least one minor release. A construct that sees a deprecated prop, method or value in use calls
 * {@link warnDeprecated}; the fleet then carries one warning per API, however often the fleet uses it,
 * under the construct path of its first use. `pullfleet synth` prints it (`warning: [path] ...`),
 * `pullfleet validate` lists it, and with `--strict` (or `new Fleet({ strict: true })`) it is an error.
 */
import type { IConstruct } from 'constructs';
import { recordWarning } from './_props-check.js';

/** One deprecated API: what it is, what replaces it, and the release that removes it. */
export interface Deprecation {
  /** The API as a fleet file writes it: `HubProps.feedbackScrape`, `Spoke.moveTo`, `DeliveryModel.BASIC`. */
  readonly api: string;
  /** What to write instead, as a fleet file writes it. */
  readonly replacement: string;
  /** The release that removes the API (`0.3.0`); at least one minor release after the one that deprecates it. */
  readonly removedIn: string;
}

/** The APIs already reported, per construct tree (one synth). */
const reportedByRoot = new WeakMap<IConstruct, Set<string>>();

/** The warning a deprecation prints: the API, its replacement and the release it goes away in. */
export function deprecationMessage(d: Deprecation): string {
  return `${d.api} is deprecated and goes away in pullfleet ${d.removedIn}: use ${d.replacement} instead (the CHANGELOG has the upgrade steps)`;
}

/**
 * Records that `scope` uses the deprecated API `d`: a warning for the fleet (an error with `--strict`),
 * once per API per construct tree, under the path of the first construct that uses it.
 */
export function warnDeprecated(scope: IConstruct, d: Deprecation): void {
  const root = scope.node.root;
  let reported = reportedByRoot.get(root);
  if (!reported) reportedByRoot.set(root, (reported = new Set()));
  if (reported.has(d.api)) return;
  reported.add(d.api);
  recordWarning(scope, scope.node.path || d.api, deprecationMessage(d));
}
