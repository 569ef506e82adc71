/**
 * The pull-delivery wrapping shared by synth and the controller: a hub Application becomes a payload
 * Application for the spoke, wrapped in a ManifestWork addressed to the spoke's cluster namespace.
 * Both paths call these functions, so a work synthesized offline and one propagated at runtime are
 * identical for the same hub Application.
 */
import {
  AGENT_SPOKE_DESTINATION,
  APPLICATION_SET_LABEL,
  ARGOCD_API_VERSION,
  ARGOCD_GROUP,
  ARGOCD_TRACKING_ANNOTATION,
  CONSTRUCT_PATH_ANNOTATION,
  DELIVERY_ANNOTATION,
  DELIVERY_LABEL,
  DESTINATION_NAME_ANNOTATION,
  DESTINATION_SERVER_ANNOTATION,
  HOSTING_APPSET_ANNOTATION,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
  HUB_APP_UID_ANNOTATION,
  IN_CLUSTER_SERVER,
  LAST_APPLIED_ANNOTATION,
  LOCAL_CLUSTER,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MANAGED_CLUSTER_ANNOTATION,
  PULLFLEET_PREFIX,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  SPEC_HASH_ANNOTATION,
  SPOKE_APP_NAMESPACE_ANNOTATION,
  STAND_BY_ANNOTATION,
  WORK_API_VERSION,
} from '../core/keys.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { dnsLabelProblem, manifestWorkName, parseBool } from '../core/names.js';
import { resourceSummaryRule, type ConditionRule } from '../reconcile/resource-summary.js';
import { SYNC_RESULT_REVISIONS_FEEDBACK, SYNC_REVISIONS_FEEDBACK } from '../reconcile/feedback.js';
import { sortKeys } from '../core/records.js';
import {
  type Application,
  type FeedbackScrape,
  type JsonObject,
  type ManifestConfig,
  type ManifestWork,
} from '../core/types.js';

/** Annotations that steer delivery on the hub and never travel to the spoke. */
const HUB_ONLY_ANNOTATIONS = new Set([
  MANAGED_CLUSTER_ANNOTATION,
  SPOKE_APP_NAMESPACE_ANNOTATION,
  SKIP_RECONCILE_ANNOTATION,
  DESTINATION_NAME_ANNOTATION,
  DESTINATION_SERVER_ANNOTATION,
  // Written by the hub's own tooling about the hub object; meaningless (and misleading) on a spoke.
  ARGOCD_TRACKING_ANNOTATION,
  LAST_APPLIED_ANNOTATION,
]);

/** The status fields the work agent reports back, as `[feedback name, JSONPath on the spoke Application]`. */
export const FEEDBACK_PATHS: ReadonlyArray<readonly [string, string]> = [
  ['healthStatus', '.status.health.status'],
  ['syncStatus', '.status.sync.status'],
  ['syncRevision', '.status.sync.revision'],
  ['operationStatePhase', '.status.operationState.phase'],
  ['operationStateStartedAt', '.status.operationState.startedAt'],
  ['operationStateMessage', '.status.operationState.message'],
  ['reconciledAt', '.status.reconciledAt'],
  // The spec the spoke Application runs (the payload's annotation; `\.` escapes the dot of the key).
  ['specHash', `.metadata.annotations.${SPEC_HASH_ANNOTATION.replaceAll('.', '\\.')}`],
  // The forwarding mark of the operation the spoke ran last (see FORWARD_INFO_NAME in runtime/operation-forwarding.ts).
  ['operationForwardId', `.status.operationState.operation.info[?(@.name=="${PULLFLEET_PREFIX}forwarded")].value`],
  // The revision the spoke's last sync applied: an Argo CD 2.x hub's RollingSync compares it (runtime/status.ts).
  ['operationStateSyncRevision', '.status.operationState.syncResult.revision'],
];

/**
 * Most sources whose revisions a work asks the work agent for. Argo CD writes a multi-source Application's
 * revisions as lists (`status.sync.revisions`, `status.operationState.syncResult.revisions`), one entry per
 * `spec.sources` entry, and OCM's JSONPaths feedback returns scalars only (a list needs the agent feature gate
 * `RawFeedbackJsonString`, off by default), so every entry is a path of its own: two per source. Neither
 * upstream bounds the count (no `maxItems` on `spec.sources` or on `feedbackRules[].jsonPaths`); this cap keeps
 * a work's feedback bounded. The sources past it get no revision on the hub (RevisionsTruncatedWarning).
 */
export const MAX_REVISION_FEEDBACK_SOURCES = 20;

/**
 * The feedback paths asked for on top of {@link FEEDBACK_PATHS} for a payload of `sources` sources: for every
 * source index `i` below the cap, `syncRevisions<i>` (`.status.sync.revisions[i]`) and
 * `operationStateSyncRevisions<i>` (`.status.operationState.syncResult.revisions[i]`). None for a
 * single-source payload. An index the spoke's list does not reach yields no value (the agent marks the
 * manifest `StatusFeedbackSynced=False` and still reports the rest).
 */
export function sourceRevisionFeedbackPaths(sources: number): Array<readonly [string, string]> {
  const paths: Array<readonly [string, string]> = [];
  const count = Math.min(Math.max(0, Math.floor(sources)), MAX_REVISION_FEEDBACK_SOURCES);
  for (let i = 0; i < count; i++) paths.push([`${SYNC_REVISIONS_FEEDBACK}${i}`, `.status.sync.revisions[${i}]`]);
  for (let i = 0; i < count; i++)
    paths.push([`${SYNC_RESULT_REVISIONS_FEEDBACK}${i}`, `.status.operationState.syncResult.revisions[${i}]`]);
  return paths;
}

/**
 * How many sources of `spec` Argo CD reports revisions for as lists: the length of `spec.sources` (a list of
 * one counts: Argo CD treats any non-empty `sources` as multi-source), 0 for a single `source` or a
 * `sourceHydrator` (whose status uses `revision`).
 */
export function multiSourceCount(spec: Pick<Application['spec'], 'sources'> & { sourceHydrator?: unknown }): number {
  if (spec.sourceHydrator !== undefined && spec.sourceHydrator !== null) return 0;
  return Array.isArray(spec.sources) ? spec.sources.length : 0;
}

/**
 * The hash the payload carries in {@link SPEC_HASH_ANNOTATION}: of the payload's spec (canonical JSON),
 * so the hub can tell when the spoke Application runs the spec it asks for.
 */
export function payloadSpecHash(spec: Application['spec']): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 16);
}

export interface WrapOptions {
  /**
   * How the work agent collects feedback: `Watch` pushes changes as they happen (newer agents),
   * `Poll` reads every 10 s.
   * @default FeedbackScrape.POLL
   */
  readonly feedbackScrapeType?: FeedbackScrape;
  /** Objects placed before the payload in the work (for example the spoke Namespace and AppProject). */
  readonly prerequisites?: readonly JsonObject[];
  /**
   * Whether the work asks the agent for the resource summary (a condition rule). The controller leaves it
   * out on a hub whose ManifestWork CRD drops `conditionRules` (a cluster manager before OCM 1.0), where
   * asking would only make every work differ from what the hub stores.
   * @default true
   */
  readonly resourceSummary?: boolean;
}

/** Whether a hub Application opts into pull delivery (pull label parsed like Go's ParseBool). */
export function isPullApplication(app: Pick<Application, 'metadata'>): boolean {
  return parseBool(app.metadata.labels?.[PULL_LABEL]);
}

/**
 * Whether a hub Application's work stands by (step 1 of a move between delivery models): it must neither
 * overwrite the spoke Application nor delete it.
 */
export function isStandBy(app: Pick<Application, 'metadata'>): boolean {
  return parseBool(app.metadata.annotations?.[STAND_BY_ANNOTATION]);
}

/**
 * Whether a standing-by hub Application is still routed to a managed argocd-agent (`destination.name`
 * naming a cluster): the principal then owns its status and operations.
 */
export function isRoutedToAgent(app: Pick<Application, 'metadata' | 'spec'>): boolean {
  const name = app.spec?.destination?.name?.trim();
  return isStandBy(app) && !!name && name !== AGENT_SPOKE_DESTINATION;
}

/** The ManagedCluster a hub Application targets, or undefined when the annotation is missing or blank. */
export function targetCluster(app: Pick<Application, 'metadata'>): string | undefined {
  const value = app.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION]?.trim();
  return value ? value : undefined;
}

/** `<namespace>/<name>` of the ApplicationSet owning a hub Application, if any. */
export function owningApplicationSet(app: Pick<Application, 'metadata'>): string | undefined {
  const owner = app.metadata.ownerReferences?.find(
    (ref) => ref.kind === 'ApplicationSet' && ref.apiVersion.startsWith(`${ARGOCD_GROUP}/`),
  );
  return owner ? `${app.metadata.namespace}/${owner.name}` : undefined;
}

/** Namespace of the Application copy on the spoke. */
export function spokeAppNamespace(app: Pick<Application, 'metadata'>): string {
  const override = app.metadata.annotations?.[SPOKE_APP_NAMESPACE_ANNOTATION]?.trim();
  return override || app.metadata.namespace || 'argocd';
}

/**
 * Why this hub Application cannot be wrapped, or undefined when it can. Messages name the fix.
 */
export function wrapProblem(app: Application): string | undefined {
  const cluster = targetCluster(app);
  if (!cluster) return `annotation ${MANAGED_CLUSTER_ANNOTATION} is missing: set it to the target ManagedCluster name`;
  if (cluster === LOCAL_CLUSTER)
    return `${LOCAL_CLUSTER} is the hub itself and never a pull-delivery target: choose a spoke cluster`;
  const clusterProblem = dnsLabelProblem(cluster);
  if (clusterProblem) return `annotation ${MANAGED_CLUSTER_ANNOTATION} "${cluster}" ${clusterProblem}`;
  const nsProblem = dnsLabelProblem(spokeAppNamespace(app));
  if (nsProblem) return `spoke application namespace "${spokeAppNamespace(app)}" ${nsProblem}`;
  if (!app.spec || typeof app.spec !== 'object') return 'spec is missing';
  return undefined;
}

/** Copies `record` without the given keys; undefined when nothing is left. */
function without(
  record: Record<string, string> | undefined,
  drop: (key: string) => boolean,
): Record<string, string> | undefined {
  if (!record) return undefined;
  const kept = Object.entries(record).filter(([key]) => !drop(key));
  return kept.length === 0 ? undefined : sortKeys(Object.fromEntries(kept));
}

/** Deep copy of JSON data (no shared references between the hub object and the payload). */
function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * The Application the spoke receives, built fresh from the hub Application: same name, the
 * spoke namespace, hub labels minus the pull label, hub annotations minus the hub-only ones, finalizers
 * and `operation` copied, and the destination rewritten to the spoke's own API server. When an
 * ApplicationSet owns the hub app, the payload carries the same ApplicationSet markers as the work
 * (label {@link APPLICATION_SET_LABEL} `"true"`, annotation {@link HOSTING_APPSET_ANNOTATION}
 * `<namespace>/<appset>`), as the OCM and ACM propagation controllers write them, so tools that look for
 * spoke Applications by that label find pullfleet's too. The markers follow ownership only: values of
 * those keys on the hub app itself are never copied.
 */
/**
 * `syncPolicy.automated.enabled` (Argo CD 3.1 and later) in the form every spoke Argo CD reads the same way.
 * The applicationset-controller of a 3.3+ hub keeps `automated` on the apps of a RollingSync step with
 * `enabled: false`; a spoke on 3.0 or older has no such field in its Application CRD and refuses the
 * whole payload. `enabled: false` means no automated sync, which an `automated` left out means on every
 * release; `enabled: true` means what `automated` alone means. So the field never reaches a spoke.
 */
function withoutAutomatedEnabled(spec: Application['spec']): void {
  const policy = spec.syncPolicy as { automated?: { enabled?: unknown } } | undefined;
  const automated = policy?.automated;
  if (!policy || !automated || typeof automated !== 'object' || !('enabled' in automated)) return;
  if (automated.enabled === false) delete policy.automated;
  else delete automated.enabled;
}

/**
 * Leaves out a `syncPolicy` with nothing in it (what is left once `automated` goes: dropped above, or by the hub's
 * applicationset-controller, which removes it from RollingSync apps on Argo CD 2.14 to 3.2). The work agent's
 * server-side apply over a spoke Application that had `automated` turns `syncPolicy: {}` into null, which the
 * Application CRD refuses (`must be of type object`), so no work would apply; no `syncPolicy` means the same.
 */
function withoutEmptySyncPolicy(spec: Application['spec']): void {
  const policy = spec.syncPolicy as unknown;
  if (policy && typeof policy === 'object' && !Array.isArray(policy) && Object.keys(policy).length === 0)
    delete spec.syncPolicy;
}

export function buildPayloadApplication(app: Application): Application {
  const annotations = app.metadata.annotations ?? {};
  const destinationName = annotations[DESTINATION_NAME_ANNOTATION]?.trim();
  const destinationServer = annotations[DESTINATION_SERVER_ANNOTATION]?.trim();
  const destination: Record<string, string> = {};
  if (destinationName) destination.name = destinationName;
  else destination.server = destinationServer || IN_CLUSTER_SERVER;
  if (app.spec.destination?.namespace) destination.namespace = app.spec.destination.namespace;

  const metadata: Application['metadata'] = { name: app.metadata.name, namespace: spokeAppNamespace(app) };
  const appSet = owningApplicationSet(app);
  let labels = without(app.metadata.labels, (key) => key === PULL_LABEL || key === APPLICATION_SET_LABEL);
  if (appSet) labels = sortKeys({ ...labels, [APPLICATION_SET_LABEL]: 'true' });
  if (labels) metadata.labels = labels;
  let payloadAnnotations = without(
    app.metadata.annotations,
    (key) => HUB_ONLY_ANNOTATIONS.has(key) || key === HOSTING_APPSET_ANNOTATION || key.startsWith(PULLFLEET_PREFIX),
  );
  if (appSet) payloadAnnotations = sortKeys({ ...payloadAnnotations, [HOSTING_APPSET_ANNOTATION]: appSet });
  const spec = { ...clone(app.spec), destination };
  withoutAutomatedEnabled(spec);
  withoutEmptySyncPolicy(spec);
  metadata.annotations = sortKeys({ ...(payloadAnnotations ?? {}), [SPEC_HASH_ANNOTATION]: payloadSpecHash(spec) });
  if (app.metadata.finalizers?.length)
    metadata.finalizers = app.metadata.finalizers.filter((f) => !f.startsWith(PULLFLEET_PREFIX));
  if (metadata.finalizers?.length === 0) delete metadata.finalizers;

  const payload: Application = {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata,
    spec,
  };
  if (app.operation) payload.operation = clone(app.operation);
  return payload;
}

/**
 * The manifest config that asks the work agent for the spoke Application's status: the scalar feedback and the
 * resource summary condition (docs/controller/resource-summaries.md). `createOnly` (a work
 * standing by during a move between delivery models) makes the work agent create the Application only
 * when it is missing and never write the running one. `sources` is the payload's {@link multiSourceCount}: a
 * multi-source payload also asks for each source's revisions ({@link sourceRevisionFeedbackPaths}); 0 keeps
 * the rules every single-source work shares.
 */
export function applicationManifestConfig(
  name: string,
  namespace: string,
  scrape?: FeedbackScrape,
  createOnly = false,
  resourceSummary = true,
  sources = 0,
): ManifestConfig & { conditionRules?: ConditionRule[] } {
  sharedConfigParts ??= {
    feedbackRules: feedbackRulesFor(0),
    conditionRules: frozen([resourceSummaryRule()]),
    serverSideApply: frozen({
      type: 'ServerSideApply',
      serverSideApply: { force: true, ignoreFields: [{ condition: 'OnSpokeChange', jsonPaths: ['.operation'] }] },
    }),
    createOnly: frozen({ type: 'CreateOnly' }),
  };
  const shared = sharedConfigParts;
  return {
    resourceIdentifier: { group: ARGOCD_GROUP, resource: 'applications', namespace, name },
    feedbackRules: sources > 0 ? multiSourceFeedbackRules(sources) : shared.feedbackRules,
    ...(resourceSummary ? { conditionRules: shared.conditionRules } : {}),
    ...(scrape ? { feedbackScrapeType: scrape } : {}),
    updateStrategy: createOnly ? shared.createOnly : shared.serverSideApply,
  };
}

/**
 * The parts every application manifest config has in common, built once and frozen: a fleet of thousands
 * of works holds one copy of them (they are a fifth of a work's memory during synth), and a caller that
 * tried to change one for a single work would throw instead of changing them all.
 */
let sharedConfigParts:
  | {
      feedbackRules: NonNullable<ManifestConfig['feedbackRules']>;
      conditionRules: ConditionRule[];
      serverSideApply: NonNullable<ManifestConfig['updateStrategy']>;
      createOnly: NonNullable<ManifestConfig['updateStrategy']>;
    }
  | undefined;

/** The feedback rules of a payload of `sources` sources (see {@link sourceRevisionFeedbackPaths}), frozen. */
function feedbackRulesFor(sources: number): NonNullable<ManifestConfig['feedbackRules']> {
  const paths = [...FEEDBACK_PATHS, ...sourceRevisionFeedbackPaths(sources)];
  return frozen([
    { type: 'JSONPaths', jsonPaths: paths.map(([feedbackName, path]) => ({ name: feedbackName, path })) },
  ]);
}

/** The frozen feedback rules of multi-source payloads, one per source count (capped, so at most that many). */
const multiSourceRules = new Map<number, NonNullable<ManifestConfig['feedbackRules']>>();

function multiSourceFeedbackRules(sources: number): NonNullable<ManifestConfig['feedbackRules']> {
  const count = Math.min(Math.floor(sources), MAX_REVISION_FEEDBACK_SOURCES);
  let rules = multiSourceRules.get(count);
  if (!rules) {
    rules = feedbackRulesFor(count);
    multiSourceRules.set(count, rules);
  }
  return rules;
}

/** `value`, and everything in it, frozen. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) frozen(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * The ManifestWork delivering `app` to its cluster. Throws when {@link wrapProblem} reports a problem;
 * callers that must not throw check it first.
 */
export function buildManifestWork(app: Application, options: WrapOptions = {}): ManifestWork {
  const problem = wrapProblem(app);
  if (problem) throw new Error(`Application ${app.metadata.namespace}/${app.metadata.name}: ${problem}`);
  const cluster = targetCluster(app)!;
  const hubNamespace = app.metadata.namespace ?? 'argocd';
  const payload = buildPayloadApplication(app);
  const appSet = owningApplicationSet(app);
  const annotationsOnApp = app.metadata.annotations ?? {};
  const standBy = isStandBy(app);

  const labels: Record<string, string> = { [PULL_LABEL]: 'true', [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
  if (appSet) labels[APPLICATION_SET_LABEL] = 'true';
  const delivery = annotationsOnApp[DELIVERY_ANNOTATION];
  if (delivery) labels[DELIVERY_LABEL] = delivery;

  const annotations: Record<string, string> = {
    [HUB_APP_NAMESPACE_ANNOTATION]: hubNamespace,
    [HUB_APP_NAME_ANNOTATION]: app.metadata.name,
  };
  if (appSet) annotations[HOSTING_APPSET_ANNOTATION] = appSet;
  if (app.metadata.uid) annotations[HUB_APP_UID_ANNOTATION] = app.metadata.uid;
  const constructPath = annotationsOnApp[CONSTRUCT_PATH_ANNOTATION];
  if (constructPath) annotations[CONSTRUCT_PATH_ANNOTATION] = constructPath;

  return {
    apiVersion: WORK_API_VERSION,
    kind: 'ManifestWork',
    metadata: {
      name: manifestWorkName(hubNamespace, app.metadata.name),
      namespace: cluster,
      labels: sortKeys(labels),
      annotations: sortKeys(annotations),
    },
    spec: {
      workload: { manifests: [...(options.prerequisites ?? []).map(clone), payload as unknown as JsonObject] },
      manifestConfigs: [
        applicationManifestConfig(
          payload.metadata.name,
          payload.metadata.namespace!,
          options.feedbackScrapeType,
          standBy,
          options.resourceSummary ?? true,
          multiSourceCount(payload.spec),
        ),
      ],
      // Standing by during a move: removing this work must leave the spoke Application running.
      deleteOption: { propagationPolicy: standBy ? 'Orphan' : 'Foreground' },
    },
  };
}

/**
 * `work` without the resource summary rule (a copy): what is written to a hub whose ManifestWork CRD has no
 * `manifestConfigs[].conditionRules` (a cluster manager before OCM 1.0). The rest is left as it is.
 */
export function withoutResourceSummaryRule(work: ManifestWork): ManifestWork {
  if (!work.spec.manifestConfigs?.some((config) => 'conditionRules' in config)) return work;
  return {
    ...work,
    spec: {
      ...work.spec,
      manifestConfigs: work.spec.manifestConfigs.map((config) => {
        const { conditionRules: _rules, ...rest } = config as ManifestConfig & { conditionRules?: unknown };
        return rest;
      }),
    },
  };
}

/**
 * The field an API server refusal names as not in the object's schema (`.spec.manifestConfigs[0].conditionRules`):
 * a server-side apply fails with "field not declared in schema", a strict write with "unknown field". Undefined for
 * any other refusal.
 */
export function undeclaredFieldOf(message: string): string | undefined {
  return (
    /(\.[\w.[\]]+): field not declared in schema/.exec(message)?.[1] ?? /unknown field "([^"]+)"/.exec(message)?.[1]
  );
}

/** Whether the API server refused a ManifestWork because its CRD does not declare `conditionRules`. */
export function isConditionRulesUnknown(message: string): boolean {
  return undeclaredFieldOf(message)?.endsWith('conditionRules') === true;
}

/**
 * Size of an object as the API server stores it: the UTF-8 bytes of `JSON.stringify(value)`, counted
 * without building that string (synth checks the size of every object it renders, and the strings were most
 * of its garbage). `undefined` if JSON.stringify gives nothing (`undefined`, a function).
 */
export function jsonSize(value: unknown): number {
  return countJson(value, false) ?? 0;
}

/** Strings JSON writes as they are (printable ASCII without `"` and `\\`): two quotes added. */
const PLAIN_JSON_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The UTF-8 bytes JSON.stringify writes for `value` (in an array when `inArray`), undefined when none. */
function countJson(value: unknown, inArray: boolean): number | undefined {
  switch (typeof value) {
    case 'string':
      return PLAIN_JSON_STRING.test(value) ? value.length + 2 : Buffer.byteLength(JSON.stringify(value), 'utf8');
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'object': {
      if (value === null) return 4;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        const text = JSON.stringify(value);
        return text === undefined ? undefined : Buffer.byteLength(text, 'utf8');
      }
      if (Array.isArray(value)) {
        let size = 2 + Math.max(0, value.length - 1);
        for (const item of value) size += countJson(item, true) ?? 4;
        return size;
      }
      let size = 2;
      let members = 0;
      for (const key of Object.keys(value)) {
        const item = countJson((value as Record<string, unknown>)[key], false);
        if (item === undefined) continue;
        size += (countJson(key, false) as number) + 1 + item;
        members++;
      }
      return size + Math.max(0, members - 1);
    }
    case 'bigint':
      // JSON.stringify throws on a bigint; so does this.
      return Buffer.byteLength(JSON.stringify(value), 'utf8');
    default:
      // undefined, functions and symbols: left out of objects, null in arrays.
      return inArray ? 4 : undefined;
  }
}
