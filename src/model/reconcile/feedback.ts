/** Reading what the OCM work agent reports back about the payload Application. */
import { ARGOCD_GROUP } from '../core/keys.js';
import type { Condition, FieldValue, ManifestStatus, ManifestWork } from '../core/types.js';
import { kubeTime } from '../core/time.js';

/**
 * Feedback name prefix of a multi-source app's `status.sync.revisions` entries: `syncRevisions<i>` carries
 * `.status.sync.revisions[i]` (0-based, as the JSONPath index; src/model/delivery/manifestwork.ts asks for them).
 */
export const SYNC_REVISIONS_FEEDBACK = 'syncRevisions';
/** The same for `.status.operationState.syncResult.revisions[i]`: `operationStateSyncRevisions<i>`. */
export const SYNC_RESULT_REVISIONS_FEEDBACK = 'operationStateSyncRevisions';

/** The spoke Application's status fields carried back by ManifestWork status feedback. */
export interface ApplicationFeedback {
  readonly healthStatus?: string;
  readonly syncStatus?: string;
  readonly syncRevision?: string;
  readonly operationStatePhase?: string;
  readonly operationStateStartedAt?: string;
  readonly operationStateMessage?: string;
  readonly reconciledAt?: string;
  /** The spec hash the spoke Application carries (SPEC_HASH_ANNOTATION): which spec it runs. */
  readonly specHash?: string;
  /** The forwarding mark of the operation the spoke runs or ran last (FORWARD_INFO_NAME in its operation's info). */
  readonly operationForwardId?: string;
  /** The revision the spoke's last sync applied (`status.operationState.syncResult.revision`; single-source apps). */
  readonly operationStateSyncRevision?: string;
  /**
   * A multi-source app's `status.sync.revisions`, one per source in `spec.sources` order, from the feedback
   * values `syncRevisions0`, `syncRevisions1`, …: the entries from index 0 up to the first one not reported
   * (the spoke's list is shorter, or it has none yet). Absent when not even index 0 was reported.
   */
  readonly syncRevisions?: readonly string[];
  /** The same for `status.operationState.syncResult.revisions` (`operationStateSyncRevisions<i>`): what the spoke's last sync applied. */
  readonly operationStateSyncRevisions?: readonly string[];
}

/** The scalar (string) fields of {@link ApplicationFeedback}. */
type ScalarFeedbackName = Exclude<keyof ApplicationFeedback, 'syncRevisions' | 'operationStateSyncRevisions'>;

const FEEDBACK_NAMES = new Set<ScalarFeedbackName>([
  'healthStatus',
  'syncStatus',
  'syncRevision',
  'operationStatePhase',
  'operationStateStartedAt',
  'operationStateMessage',
  'reconciledAt',
  'specHash',
  'operationForwardId',
  'operationStateSyncRevision',
]);

/**
 * A feedback value as text, whatever its declared type. JSONPaths feedback only carries scalars, but
 * agents differ in how they type them: Integer, Boolean and JsonRaw all occur.
 */
export function fieldValueText(value: FieldValue | undefined): string | undefined {
  if (!value) return undefined;
  switch (value.type) {
    case 'String':
      return value.string;
    case 'Integer':
      return value.integer === undefined ? undefined : String(value.integer);
    case 'Boolean':
      return value.boolean === undefined ? undefined : String(value.boolean);
    case 'JsonRaw': {
      if (value.jsonRaw === undefined) return undefined;
      try {
        const parsed: unknown = JSON.parse(value.jsonRaw);
        if (parsed === null) return undefined;
        return typeof parsed === 'string' ? parsed : typeof parsed === 'object' ? value.jsonRaw : String(parsed);
      } catch {
        return value.jsonRaw;
      }
    }
    default:
      return undefined;
  }
}

/** The manifest status entry for the Application `namespace/name`, matched by resourceMeta (never by position). */
export function findApplicationManifest(
  work: Pick<ManifestWork, 'status'>,
  namespace: string,
  name: string,
): ManifestStatus | undefined {
  return work.status?.resourceStatus?.manifests?.find((manifest) => {
    const meta = manifest.resourceMeta;
    if (!meta || meta.name !== name || (meta.namespace ?? '') !== namespace) return false;
    const groupMatches = (meta.group ?? ARGOCD_GROUP) === ARGOCD_GROUP;
    const kindMatches = meta.resource === 'applications' || meta.kind === 'Application';
    return groupMatches && kindMatches;
  });
}

/** `syncRevisions<i>` / `operationStateSyncRevisions<i>`: which list and which index, or undefined. */
const PER_SOURCE_NAME = new RegExp(
  `^(${SYNC_REVISIONS_FEEDBACK}|${SYNC_RESULT_REVISIONS_FEEDBACK})(0|[1-9][0-9]{0,3})$`,
);

/** The entries of `byIndex` from 0 up to the first index missing; undefined when index 0 is. */
function contiguous(byIndex: ReadonlyMap<number, string> | undefined): string[] | undefined {
  if (!byIndex?.has(0)) return undefined;
  const list: string[] = [];
  while (byIndex.has(list.length)) list.push(byIndex.get(list.length)!);
  return list;
}

/**
 * The feedback reported for the Application `namespace/name` in `work`, or undefined when the agent
 * has reported nothing for it yet. Unknown feedback names are ignored; empty strings count as absent, but
 * inside a per-source revision list an empty string keeps its place (a list is positional).
 */
export function readApplicationFeedback(
  work: Pick<ManifestWork, 'status'>,
  namespace: string,
  name: string,
): ApplicationFeedback | undefined {
  const manifest = findApplicationManifest(work, namespace, name);
  const values = manifest?.statusFeedback?.values;
  if (!values || values.length === 0) return undefined;
  const feedback: { -readonly [K in keyof ApplicationFeedback]: ApplicationFeedback[K] } = {};
  let perSource: Map<string, Map<number, string>> | undefined;
  for (const { name: key, fieldValue } of values) {
    if (FEEDBACK_NAMES.has(key as ScalarFeedbackName)) {
      const text = fieldValueText(fieldValue);
      if (text !== undefined && text !== '') feedback[key as ScalarFeedbackName] = text;
      continue;
    }
    const match = PER_SOURCE_NAME.exec(key);
    if (!match) continue;
    const text = fieldValueText(fieldValue);
    if (text === undefined) continue;
    perSource ??= new Map();
    let list = perSource.get(match[1]);
    if (!list) perSource.set(match[1], (list = new Map()));
    list.set(Number(match[2]), text);
  }
  const syncRevisions = contiguous(perSource?.get(SYNC_REVISIONS_FEEDBACK));
  if (syncRevisions) feedback.syncRevisions = syncRevisions;
  const syncResultRevisions = contiguous(perSource?.get(SYNC_RESULT_REVISIONS_FEEDBACK));
  if (syncResultRevisions) feedback.operationStateSyncRevisions = syncResultRevisions;
  return feedback;
}

/** A condition of the work as a whole (`Applied`, `Available`, `Degraded`, …). */
export function workCondition(work: Pick<ManifestWork, 'status'>, type: string): Condition | undefined {
  return work.status?.conditions?.find((condition) => condition.type === type);
}

/** Feedback fields that land in (or are compared with) `format: date-time` fields of the Application status. */
const DATE_TIME_FIELDS = ['operationStateStartedAt', 'reconciledAt'] as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** A feedback value the Application status schema would reject, and what was done with it. */
export interface InvalidFeedback {
  readonly name: string;
  readonly value: string;
  /** The RFC 3339 time written instead (a Unix timestamp converted); absent when the value was left out. */
  readonly convertedTo?: string;
}

/**
 * Checks feedback against the Application status shape before it is written: date-time fields must be
 * RFC 3339. Unix timestamps (some agents report `startedAt` as an Integer) are converted; anything else is
 * dropped. Both are listed in `invalid` (the hub app gets a condition naming the field), so one bad value
 * never blocks the rest of the write-back and never goes unnoticed.
 */
export function validateApplicationFeedback(feedback: ApplicationFeedback | undefined): {
  feedback: ApplicationFeedback | undefined;
  invalid: InvalidFeedback[];
} {
  if (!feedback) return { feedback, invalid: [] };
  const result: { -readonly [K in keyof ApplicationFeedback]: ApplicationFeedback[K] } = { ...feedback };
  const invalid: InvalidFeedback[] = [];
  for (const name of DATE_TIME_FIELDS) {
    const value = result[name];
    if (value === undefined || (RFC3339.test(value) && !Number.isNaN(Date.parse(value)))) continue;
    if (/^\d{1,13}$/.test(value)) {
      // Seconds since the epoch (milliseconds when it has 13 digits).
      const ms = value.length === 13 ? Number(value) : Number(value) * 1000;
      result[name] = kubeTime(new Date(ms));
      invalid.push({ name, value, convertedTo: result[name] });
      continue;
    }
    delete result[name];
    invalid.push({ name, value });
  }
  return { feedback: result, invalid };
}
