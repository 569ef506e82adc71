/**
 * Per-app resource summaries computed on the spoke by the OCM work agent itself (docs/controller/resource-summaries.md).
 *
 * Status feedback only carries scalars, so the list of an Application's resources cannot come back through a
 * JSONPath. Instead the work asks the agent for a condition whose message is built by a CEL `messageExpression`
 * (`manifestConfigs[].conditionRules`, OCM 1.0 and later, no feature gate): one header line with counts, one line
 * of images, then one line per resource, problems first, cut to {@link MAX_SUMMARY_CHARS}. The hub parses the
 * message back ({@link parseResourceSummary}) and reports what it could not get instead of failing
 * ({@link readResourceSummary}): the scalar feedback of the same work is never affected.
 *
 * The expression only uses what both cel-go as the work agent configures it (standard macros, `ext.Strings`) and
 * the ECMAScript CEL evaluator the tests run it with support: `has`, `map`, `filter`, `size`, `string(int)`,
 * `substring`, `split`, `join`, `+` on strings and lists, `? :` and `==` / `!=` / `||` / `&&`. It declares no
 * variable of its own (cel-go's `cel.bind` is not in the agent's environment): a one-element list and `map` name a
 * value instead.
 *
 * Message format (v1), lines separated by `\n`:
 * ```
 * pullfleet.io/resource-summary v1 resources=3 Healthy=1 Progressing=0 Degraded=1 Suspended=0 Missing=0 Unknown=0 none=1 OutOfSync=1 images=2[ healthSource=appTree]
 * images nginx:1.25 ghcr.io/acme/cart:2
 * DS apps/v1/Deployment/shop/cart Deployment "cart" exceeded its progress deadline
 * HO /v1/Service/shop/cart
 * -S /v1/ConfigMap/shop/settings
 * end
 * ```
 * Each resource line starts with two codes: the first letter of its health (`-` when the spoke reports none) and
 * of its sync status; then `group/version/kind/namespace/name` (empty group for the core group, empty namespace
 * for cluster-scoped kinds); then, for a resource that is not Healthy, its health message with newlines replaced
 * by spaces, cut to {@link MAX_RESOURCE_MESSAGE_CHARS}. A message without the final `end` line was cut: its last
 * line may be partial and is dropped, and the header's counts tell what was left out.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import type { ApplicationStatus, Condition, ManifestWork } from '../core/types.js';
import { findApplicationManifest, workCondition } from './feedback.js';
import type { OmittedResources } from './omitted-resources.js';

/** The condition type the work agent sets on the Application manifest (and, with one manifest, on the work). */
export const RESOURCE_SUMMARY_CONDITION = 'pullfleet.io/ResourceSummary';
/** First words of every summary message; a condition message without them is the agent's own (an error). */
export const RESOURCE_SUMMARY_HEADER = 'pullfleet.io/resource-summary v1';
/** Longest summary message the expression produces: under the 32,768 characters of a condition message. */
export const MAX_SUMMARY_CHARS = 30_000;
/** Longest health message kept per resource in the summary. */
export const MAX_RESOURCE_MESSAGE_CHARS = 160;
/** Argo CD's health states, in the order the summary header counts them. */
export const HEALTH_STATES = ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'] as const;
/** An Argo CD health state. */
export type HealthState = (typeof HEALTH_STATES)[number];
/** Hub Application condition: the resource summary could not be had from the spoke (why, and what still works). */
export const RESOURCE_SUMMARY_WARNING_CONDITION = 'ResourceSummaryWarning';
/** Hub Application condition: `status.resources` lists only part of the app's resources (how many more, which). */
export const RESOURCE_LIST_TRUNCATED_CONDITION = 'ResourceListTruncated';
/**
 * Field the controller's cache keeps in place of `status.resources` and `status.summary` of a hub Application (a
 * digest, see {@link resourcesDigest}), so the write-back can skip unchanged lists without holding them in memory.
 * It is never written to the API server.
 */
export const RESOURCES_DIGEST_FIELD = 'pullfleet.io/resources-digest';

/** A `manifestConfigs[].conditionRules[]` entry of a ManifestWork (work.open-cluster-management.io/v1). */
export interface ConditionRule {
  /** The condition type the rule sets on the manifest. */
  readonly condition: string;
  /** `CEL`, or `WellKnownConditions` for the agent's built-in rules. */
  readonly type: 'CEL' | 'WellKnownConditions';
  /** Boolean expressions over `object`; the condition is True when all hold. */
  readonly celExpressions?: readonly string[];
  /** Fixed message. */
  readonly message?: string;
  /** CEL expression over `object` and `result` that builds the message. */
  readonly messageExpression?: string;
}

/** One resource of the spoke Application as the summary lists it. */
export interface SummaryResource {
  /** API group; empty for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Empty for cluster-scoped kinds. */
  readonly namespace: string;
  readonly name: string;
  /** Argo CD health; absent when the spoke reports none (kinds without a health check, or health not persisted). */
  readonly health?: string;
  /** Argo CD sync status (`Synced`, `OutOfSync`, `Unknown`); absent when the spoke reports none. */
  readonly sync?: string;
  /** The health message of a resource that is not Healthy. */
  readonly message?: string;
}

/** Counts of an app's resources by health (`none`: no health reported) and out of sync. */
export interface ResourceCounts {
  readonly total: number;
  readonly healthy: number;
  readonly progressing: number;
  readonly degraded: number;
  readonly suspended: number;
  readonly missing: number;
  readonly unknown: number;
  readonly none: number;
  readonly outOfSync: number;
}

/** A parsed summary message; what it had no room for is its {@link OmittedResources}. */
export interface ResourceSummary extends OmittedResources {
  readonly counts: ResourceCounts;
  /** Images the spoke Application runs (`status.summary.images`), as far as the message holds them. */
  readonly images: readonly string[];
  /** How many images the spoke reported. */
  readonly imageCount: number;
  /** `status.resourceHealthSource` of the spoke Application (`appTree`: per-resource health is not kept there). */
  readonly healthSource?: string;
  /** The resources the message lists, problems first. */
  readonly resources: readonly SummaryResource[];
}

const HEALTH_BY_CODE: Readonly<Record<string, HealthState>> = Object.fromEntries(
  HEALTH_STATES.map((state) => [state[0], state]),
);
const SYNC_BY_CODE: Readonly<Record<string, string>> = { S: 'Synced', O: 'OutOfSync', U: 'Unknown' };
const END_LINE = 'end';

/** `path.field` when present, else the empty string (a map without the key must not fail the expression). */
function field(path: string, name: string): string {
  return `(has(${path}.${name}) ? ${path}.${name} : '')`;
}

/**
 * The CEL `messageExpression` that summarises the spoke Application `object` (see the module comment for the
 * format). Never fails on a missing field: every read is guarded by `has`.
 */
export function resourceSummaryExpression(maxChars = MAX_SUMMARY_CHARS): string {
  const status = 'object.status';
  const health = `(has(r.health) && has(r.health.status) ? r.health.status : '')`;
  const rank = `h == 'Degraded' ? '1' : h == 'Missing' ? '2' : s == 'OutOfSync' ? '3' : (h == 'Healthy' || h == '') && s != 'Unknown' ? '5' : '4'`;
  const id = ['group', 'version', 'kind', 'namespace', 'name'].map((name) => field('r', name)).join(" + '/' + ");
  const message =
    `(h != 'Healthy' && has(r.health) && has(r.health.message) && r.health.message != '' ? ' ' + ` +
    `[r.health.message.split('\\n').join(' ')].map(m, size(m) > ${MAX_RESOURCE_MESSAGE_CHARS} ? m.substring(0, ${MAX_RESOURCE_MESSAGE_CHARS}) : m)[0] : '')`;
  const line = `(h == '' ? '-' : h.substring(0, 1)) + (s == '' ? '-' : s.substring(0, 1)) + ' ' + ${id} + ${message}`;
  const entries = `rs.map(r, [${health}].map(h, [${field('r', 'status')}].map(s, {'h': h, 's': s, 'k': ${rank}, 't': ${line}})[0])[0])`;
  const count = (test: string) => `string(size(n.filter(e, ${test})))`;
  const header = [
    `'${RESOURCE_SUMMARY_HEADER} resources=' + string(size(n))`,
    ...HEALTH_STATES.map((state) => `' ${state}=' + ${count(`e.h == '${state}'`)}`),
    `' none=' + ${count(`e.h == ''`)}`,
    `' OutOfSync=' + ${count(`e.s == 'OutOfSync'`)}`,
    `' images=' + string(size(im))`,
    `(has(${status}) && has(${status}.resourceHealthSource) ? ' healthSource=' + ${status}.resourceHealthSource : '')`,
  ].join('\n    + ');
  const ordered = ['1', '2', '3', '4', '5'].map((k) => `n.filter(e, e.k == '${k}')`).join(' + ');
  return [
    `[has(${status}) && has(${status}.resources) ? ${status}.resources : []].map(rs,`,
    `[${entries}].map(n,`,
    `[has(${status}) && has(${status}.summary) && has(${status}.summary.images) ? ${status}.summary.images : []].map(im,`,
    `[${header}`,
    `    + '\\nimages ' + im.join(' ')`,
    `    + '\\n' + (${ordered}).map(e, e.t).join('\\n')`,
    `    + '\\n${END_LINE}'].map(m, size(m) > ${maxChars} ? m.substring(0, ${maxChars}) : m)[0]`,
    `)[0])[0])[0]`,
  ].join('\n');
}

/** The summary expression with the default size limit, built on first use. */
let defaultExpression: string | undefined;

/**
 * The condition rule every pull ManifestWork carries for its Application manifest. The boolean part only says
 * whether the spoke Application has a status yet; the message is the summary.
 */
export function resourceSummaryRule(): ConditionRule {
  return {
    condition: RESOURCE_SUMMARY_CONDITION,
    type: 'CEL',
    celExpressions: ['has(object.status)'],
    // Built once: every work carries the same expression (one string, however many works).
    messageExpression: (defaultExpression ??= resourceSummaryExpression()),
  };
}

function count(fields: ReadonlyMap<string, string>, key: string): number | undefined {
  const text = fields.get(key);
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}

function parseResourceLine(line: string): SummaryResource | undefined {
  if (line.length < 4 || line[2] !== ' ') return undefined;
  const rest = line.slice(3);
  const space = rest.indexOf(' ');
  const id = space < 0 ? rest : rest.slice(0, space);
  const parts = id.split('/');
  if (parts.length !== 5 || !parts[2] || !parts[4]) return undefined;
  const [group, version, kind, namespace, name] = parts;
  const health = HEALTH_BY_CODE[line[0]];
  const sync = SYNC_BY_CODE[line[1]];
  const message = space < 0 ? '' : rest.slice(space + 1).trim();
  return {
    group,
    version,
    kind,
    namespace,
    name,
    ...(health ? { health } : {}),
    ...(sync ? { sync } : {}),
    ...(message ? { message } : {}),
  };
}

/**
 * The summary a condition message carries, or undefined when the message is not a summary (the agent's own text:
 * an expression error, or its default message).
 */
export function parseResourceSummary(message: string | undefined): ResourceSummary | undefined {
  if (!message?.startsWith(`${RESOURCE_SUMMARY_HEADER} `)) return undefined;
  const lines = message.split('\n');
  const complete = lines.length >= 3 && lines[lines.length - 1] === END_LINE;
  if (complete) lines.pop();
  else if (lines.length > 1) lines.pop(); // cut mid-line: the last line is partial
  const fields = new Map<string, string>();
  for (const token of lines[0].slice(RESOURCE_SUMMARY_HEADER.length + 1).split(' ')) {
    const eq = token.indexOf('=');
    if (eq > 0) fields.set(token.slice(0, eq), token.slice(eq + 1));
  }
  const total = count(fields, 'resources');
  if (total === undefined) return undefined;
  const countOf = (key: string) => count(fields, key) ?? 0;
  const counts: ResourceCounts = {
    total,
    healthy: countOf('Healthy'),
    progressing: countOf('Progressing'),
    degraded: countOf('Degraded'),
    suspended: countOf('Suspended'),
    missing: countOf('Missing'),
    unknown: countOf('Unknown'),
    none: countOf('none'),
    outOfSync: countOf('OutOfSync'),
  };
  const imageCount = countOf('images');
  let images: string[] = [];
  let from = 1;
  if (lines[1]?.startsWith('images')) {
    images = lines[1]
      .slice('images'.length)
      .split(' ')
      .filter((image) => image !== '');
    from = 2;
  } else if (!complete && lines.length === 1 && message.includes('\nimages')) {
    // Cut inside the images line: keep the images that are whole (every one but the last).
    const words = message.slice(message.indexOf('\nimages') + '\nimages'.length).split(' ');
    images = words.slice(0, -1).filter((image) => image !== '');
  }
  const resources: SummaryResource[] = [];
  for (const line of lines.slice(from)) {
    const resource = parseResourceLine(line);
    if (resource) resources.push(resource);
  }
  const listed = (test: (r: SummaryResource) => boolean) => resources.filter(test).length;
  const healthSource = fields.get('healthSource');
  return {
    counts,
    images,
    imageCount,
    ...(healthSource ? { healthSource } : {}),
    resources,
    omitted: Math.max(0, total - resources.length),
    omittedDegraded: Math.max(0, counts.degraded - listed((r) => r.health === 'Degraded')),
    omittedMissing: Math.max(0, counts.missing - listed((r) => r.health === 'Missing')),
    omittedOutOfSync: Math.max(0, counts.outOfSync - listed((r) => r.sync === 'OutOfSync')),
  };
}

/** "and 312 more, 3 of them Degraded": rendered, and read back, in omitted-resources.ts. */
export { omittedText } from './omitted-resources.js';

/** What the hub can tell about an app's resource summary from its ManifestWork. */
export type ResourceSummaryReading =
  /** The agent evaluated the rule: the summary. */
  | { readonly state: 'Reported'; readonly summary: ResourceSummary }
  /** The agent evaluated the rule and failed (or produced no summary): its own message. */
  | { readonly state: 'Rejected'; readonly message: string }
  /** The agent reports feedback for this generation of the work but no summary: it does not evaluate conditionRules. */
  | { readonly state: 'Unsupported' }
  /** Nothing yet (the agent has not reported on this generation of the work). */
  | { readonly state: 'Pending' }
  /** The work does not ask for a summary (written by another tool, or before summaries existed). */
  | { readonly state: 'NotRequested' };

/** Whether a work asks the agent for the resource summary. */
export function requestsResourceSummary(work: Pick<ManifestWork, 'spec'>): boolean {
  return (work.spec?.manifestConfigs ?? []).some((config) =>
    ((config as { conditionRules?: ConditionRule[] }).conditionRules ?? []).some(
      (rule) => rule.condition === RESOURCE_SUMMARY_CONDITION,
    ),
  );
}

/**
 * Parsed summaries by condition object. A fleet report reads every row's summary on each recompute, while only
 * the work that changed has a new condition object (informer caches keep unchanged objects as they are), so
 * each message is parsed once. Summaries are never mutated.
 */
const parsedByCondition = new WeakMap<Condition, ResourceSummary | null>();

function parsedSummary(condition: Condition): ResourceSummary | undefined {
  let parsed = parsedByCondition.get(condition);
  if (parsed === undefined) {
    parsed = parseResourceSummary(condition.message) ?? null;
    parsedByCondition.set(condition, parsed);
  }
  return parsed ?? undefined;
}

function summaryCondition(work: Pick<ManifestWork, 'status'>, namespace: string, name: string): Condition | undefined {
  const manifest = findApplicationManifest(work, namespace, name);
  return (
    manifest?.conditions?.find((condition) => condition.type === RESOURCE_SUMMARY_CONDITION) ??
    workCondition(work, RESOURCE_SUMMARY_CONDITION)
  );
}

/**
 * The resource summary of the Application `namespace/name` in `work`: matched by resourceMeta like the feedback,
 * else from the work-level condition newer agents aggregate from it.
 */
export function readResourceSummary(
  work: Pick<ManifestWork, 'spec' | 'status' | 'metadata'>,
  namespace: string,
  name: string,
): ResourceSummaryReading {
  // A work that no longer asks for a summary may still carry the last one: OCM 1.0's agent never prunes the
  // conditions of removed rules (1.1 and later do). That one is stale, not reported.
  if (!requestsResourceSummary(work)) return { state: 'NotRequested' };
  const condition = summaryCondition(work, namespace, name);
  if (condition) {
    const summary = parsedSummary(condition);
    if (summary) return { state: 'Reported', summary };
    return {
      state: 'Rejected',
      message: condition.message || condition.reason || 'the agent gave no message',
    };
  }
  const manifest = findApplicationManifest(work, namespace, name);
  const fedBack = (manifest?.statusFeedback?.values?.length ?? 0) > 0;
  // Agents that evaluate rules do so in the same pass as the feedback; the work-level Available condition of that
  // pass names the generation it saw. Until it has seen this one, a missing summary may still come.
  const available = workCondition(work, 'Available');
  const seen = available?.observedGeneration;
  const current = work.metadata.generation;
  const caughtUp = seen === undefined || current === undefined || seen >= current;
  return fedBack && caughtUp ? { state: 'Unsupported' } : { state: 'Pending' };
}

/** An entry of an Argo CD Application's `status.resources` (ResourceStatus; the fields pullfleet writes). */
export interface ArgoResourceStatus {
  group?: string;
  version?: string;
  kind: string;
  namespace?: string;
  name: string;
  /** Sync status. */
  status?: string;
  health?: { status: string; message?: string };
}

/** The summary's resources in the shape of Argo CD's `status.resources` (problems first, as listed). */
export function toArgoResources(summary: Pick<ResourceSummary, 'resources'>): ArgoResourceStatus[] {
  return summary.resources.map((resource) => ({
    ...(resource.group ? { group: resource.group } : {}),
    ...(resource.version ? { version: resource.version } : {}),
    kind: resource.kind,
    ...(resource.namespace ? { namespace: resource.namespace } : {}),
    name: resource.name,
    ...(resource.sync ? { status: resource.sync } : {}),
    ...(resource.health
      ? { health: { status: resource.health, ...(resource.message ? { message: resource.message } : {}) } }
      : {}),
  }));
}

/** The resources of an Argo CD Application status (its own, or what pullfleet wrote), as summary entries. */
export function resourcesFromStatus(status: ApplicationStatus | undefined): SummaryResource[] {
  const list = Array.isArray(status?.resources) ? (status.resources as Array<Record<string, unknown>>) : [];
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return list
    .filter((entry) => entry && typeof entry === 'object' && text(entry.kind) && text(entry.name))
    .map((entry) => {
      const health = entry.health as { status?: unknown; message?: unknown } | undefined;
      const healthStatus = text(health?.status);
      const message = text(health?.message);
      const sync = text(entry.status);
      return {
        group: text(entry.group),
        version: text(entry.version),
        kind: text(entry.kind),
        namespace: text(entry.namespace),
        name: text(entry.name),
        ...(healthStatus ? { health: healthStatus } : {}),
        ...(sync ? { sync } : {}),
        ...(message && healthStatus !== 'Healthy' ? { message } : {}),
      };
    });
}

/** The images of an Argo CD Application status (`status.summary.images`). */
export function imagesFromStatus(status: ApplicationStatus | undefined): string[] {
  const images = (status?.summary as { images?: unknown } | undefined)?.images;
  return Array.isArray(images) ? images.filter((image): image is string => typeof image === 'string') : [];
}

/** Counts over resource entries (for lists that carry no header, such as an Application's own status). */
export function countResources(resources: readonly SummaryResource[]): ResourceCounts {
  const by = (health: string | undefined) => resources.filter((r) => r.health === health).length;
  return {
    total: resources.length,
    healthy: by('Healthy'),
    progressing: by('Progressing'),
    degraded: by('Degraded'),
    suspended: by('Suspended'),
    missing: by('Missing'),
    unknown: by('Unknown'),
    none: by(undefined),
    outOfSync: resources.filter((r) => r.sync === 'OutOfSync').length,
  };
}

/** Display order of resources: Degraded, Missing, OutOfSync, other not-Healthy states, the rest; stable. */
export function resourceRank(resource: Pick<SummaryResource, 'health' | 'sync'>): number {
  const { health, sync } = resource;
  if (health === 'Degraded') return 1;
  if (health === 'Missing') return 2;
  if (sync === 'OutOfSync') return 3;
  if ((health === 'Healthy' || health === undefined) && sync !== 'Unknown') return 5;
  return 4;
}

/** Whether a resource needs attention: Degraded or Missing. */
export function isProblemResource(resource: Pick<SummaryResource, 'health'>): boolean {
  return resource.health === 'Degraded' || resource.health === 'Missing';
}

/**
 * A short digest of a hub Application's resource list and images, so the controller can tell "unchanged" without
 * keeping the lists (see {@link RESOURCES_DIGEST_FIELD}).
 */
export function resourcesDigest(resources: unknown, images: unknown): string {
  // Key order and empty-versus-absent do not count: the server returns keys sorted and drops nothing else.
  const orNull = (value: unknown) =>
    value === undefined || (Array.isArray(value) && value.length === 0) ? null : value;
  return createHash('sha256')
    .update(canonicalJson([orNull(resources), orNull(images)]))
    .digest('hex')
    .slice(0, 32);
}

/** The digest of what a hub Application's status holds now (the cached digest when the cache kept only that). */
export function currentResourcesDigest(status: ApplicationStatus | undefined): string {
  const cached = status?.[RESOURCES_DIGEST_FIELD];
  if (typeof cached === 'string') return cached;
  return resourcesDigest(status?.resources, (status?.summary as { images?: unknown } | undefined)?.images);
}

/**
 * A ManifestWork as the controller caches it: the work-level copy of the summary condition (newer agents
 * aggregate the manifest condition's message into it verbatim) is dropped when the manifest-level one is there,
 * so every summary is held once.
 */
export function trimWorkSummary<T extends Pick<ManifestWork, 'status'>>(work: T): T {
  const conditions = work.status?.conditions;
  if (!conditions?.some((condition) => condition.type === RESOURCE_SUMMARY_CONDITION)) return work;
  const onManifest = work.status?.resourceStatus?.manifests?.some((manifest) =>
    manifest.conditions?.some((condition) => condition.type === RESOURCE_SUMMARY_CONDITION),
  );
  if (!onManifest) return work;
  return {
    ...work,
    status: {
      ...work.status,
      conditions: conditions.filter((condition) => condition.type !== RESOURCE_SUMMARY_CONDITION),
    },
  };
}
