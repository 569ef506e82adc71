/** Reading what the OCM work agent reports back about the payload Application. */
import { ARGOCD_GROUP } from '../core/keys.js';
import type { Condition, FieldValue, ManifestStatus, ManifestWork } from '../core/types.js';
import { kubeTime } from '../core/time.js';

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
}

const FEEDBACK_NAMES = new Set<keyof ApplicationFeedback>([
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

/**
 * The feedback reported for the Application `namespace/name` in `work`, or undefined when the agent
 * has reported nothing for it yet. Unknown feedback names are ignored; empty strings count as absent.
 */
export function readApplicationFeedback(
  work: Pick<ManifestWork, 'status'>,
  namespace: string,
  name: string,
): ApplicationFeedback | undefined {
  const manifest = findApplicationManifest(work, namespace, name);
  const values = manifest?.statusFeedback?.values;
  if (!values || values.length === 0) return undefined;
  const feedback: Record<string, string> = {};
  for (const { name: key, fieldValue } of values) {
    if (!FEEDBACK_NAMES.has(key as keyof ApplicationFeedback)) continue;
    const text = fieldValueText(fieldValue);
    if (text !== undefined && text !== '') feedback[key] = text;
  }
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
  const result: Record<string, string> = { ...feedback };
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
