/**
 * ManifestWork status as OCM's work agent writes it (an `Applied` condition, one `resourceStatus.manifests`
 * entry per manifest with its status feedback), for tests that play the agent reporting a spoke Application.
 */
import { SPEC_HASH_ANNOTATION } from '../../src/model/core/keys.js';
import { kubeTime } from '../../src/model/core/time.js';
import type {
  Application,
  Condition,
  FieldValue,
  ManifestStatus,
  ManifestWork,
  ManifestWorkStatus,
} from '../../src/model/core/types.js';
import type { World } from './world.js';

/** A status feedback value: a FieldValue as given, a string as a `String` FieldValue. */
export type FeedbackValue = FieldValue | string;

/** Feedback values as the agent lists them: `{ name, fieldValue }`, in the order given. */
export function feedbackEntries(
  values: Record<string, FeedbackValue>,
): Array<{ name: string; fieldValue: FieldValue }> {
  return Object.entries(values).map(([name, value]) => ({
    name,
    fieldValue: typeof value === 'string' ? { type: 'String', string: value } : value,
  }));
}

/** How {@link applicationFeedback} writes the agent's entry of an Application manifest. */
export interface ApplicationFeedbackOptions {
  readonly name: string;
  readonly namespace: string;
  /** The manifest's position in the work. */
  readonly ordinal: number;
  readonly values: Record<string, FeedbackValue>;
  /** The conditions an agent evaluating conditionRules (OCM 1.0 and later) adds; none when left out. */
  readonly conditions?: Condition[];
}

/** The agent's `resourceStatus.manifests` entry of the Argo CD Application manifest `namespace/name`. */
export function applicationFeedback(options: ApplicationFeedbackOptions): ManifestStatus {
  return {
    resourceMeta: {
      group: 'argoproj.io',
      version: 'v1alpha1',
      kind: 'Application',
      resource: 'applications',
      name: options.name,
      namespace: options.namespace,
      ordinal: options.ordinal,
    },
    statusFeedback: { values: feedbackEntries(options.values) },
    ...(options.conditions ? { conditions: options.conditions } : {}),
  };
}

/** The work's `Applied` condition. @default True, AppliedManifestWorkComplete, "applied" */
export const APPLIED: Condition = {
  type: 'Applied',
  status: 'True',
  reason: 'AppliedManifestWorkComplete',
  message: 'applied',
};

/** A work status: its `Applied` condition and the agent's manifest entries. */
export function workStatus(manifests: ManifestStatus[], applied: Condition = APPLIED): ManifestWorkStatus {
  return { conditions: [applied], resourceStatus: { manifests } };
}

/**
 * The work agent reports the spoke running `payload`, the Application `work` carries: its spec hash and
 * revision, Synced, `health`, reconciled at the world's clock. Nothing is written when the work says so already.
 */
export function reportRunning(world: World, work: ManifestWork, payload: Application, health: string): void {
  const status = workStatus([
    applicationFeedback({
      name: payload.metadata.name,
      namespace: payload.metadata.namespace!,
      ordinal: work.spec.workload.manifests.indexOf(payload as never),
      values: {
        specHash: payload.metadata.annotations![SPEC_HASH_ANNOTATION],
        healthStatus: health,
        syncStatus: 'Synced',
        syncRevision: String(payload.spec.source?.targetRevision),
        reconciledAt: kubeTime(world.clock),
      },
    }),
  ]);
  if (JSON.stringify(work.status) !== JSON.stringify(status)) world.put('ManifestWork', { ...work, status });
}
