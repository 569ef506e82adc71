/**
 * Plays the OCM work agent for tests: for a ManifestWork it reports status through the /status
 * subresource as the real klusterlet agent does — work conditions (Applied, Available) and
 * `resourceStatus.manifests[]` with a resourceMeta per manifest and, for manifests with feedback rules,
 * `statusFeedback.values` of any fieldValue type.
 */
import { SPEC_HASH_ANNOTATION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import { type Condition, type FieldValue, type ManifestStatus, type ManifestWork } from '../../src/model/core/types.js';
import { FEEDBACK_PATHS } from '../../src/model/delivery/manifestwork.js';
import { errorCode, type TestCluster } from './cluster.js';
import { evaluateConditionRule } from './cel.js';
import type { ConditionRule } from '../../src/model/runtime/resource-summary.js';

/** What the spoke Argo CD reports for the payload Application (names follow FEEDBACK_PATHS). */
export interface SpokeApplicationState {
  healthStatus?: string;
  syncStatus?: string;
  syncRevision?: string;
  operationStatePhase?: string;
  operationStateStartedAt?: string;
  operationStateMessage?: string;
  reconciledAt?: string;
  /**
   * The spec hash the spoke Application carries. @default - the one the applied payload carries (the
   * spoke runs what the work delivered); give another to play a spoke that has not taken the work yet
   */
  specHash?: string;
  /** The forwarding mark in the `info` of the operation the spoke ran last (`pullfleet.io/forwarded`). */
  operationForwardId?: string;
}

export interface ReportOptions {
  /** Work condition Applied. @default true */
  applied?: boolean;
  /** Message on a False Applied condition. */
  appliedMessage?: string;
  /** Work condition Available. @default same as applied */
  available?: boolean;
  /** Raw feedback values instead of (or on top of) `state`; lets tests send any fieldValue type. */
  values?: Array<{ name: string; fieldValue: FieldValue }>;
  /** List manifests in reverse order (consumers must match by resourceMeta, not position). @default false */
  reverse?: boolean;
  /**
   * The spoke Application the agent evaluates the work's `conditionRules` against, as an agent of OCM 1.0 or later
   * does (CEL, test/support/cel.ts): each rule's condition on the manifest, and copied onto the work when one
   * manifest carries it. Without it (and without `ruleError`) the agent writes no rule conditions, like agents
   * before OCM 1.0.
   */
  spokeApplication?: Record<string, unknown>;
  /** The agent cannot evaluate the rules: each rule's condition is False with this message (an expression error). */
  ruleError?: string;
}

const PLURALS: Record<string, string> = {
  Application: 'applications',
  AppProject: 'appprojects',
  Namespace: 'namespaces',
};

function pluralOf(kind: string): string {
  return PLURALS[kind] ?? `${kind.toLowerCase()}s`;
}

// Its own formatter on purpose: this stands in for another program, so it does not share pullfleet's code.
function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function condition(
  type: string,
  ok: boolean,
  reason: string,
  message: string,
  generation: number | undefined,
  now: Date,
  previous?: Condition[],
): Condition {
  const status = ok ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  return {
    type,
    status,
    reason,
    message,
    lastTransitionTime:
      before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : iso(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

export class WorkAgent {
  constructor(
    private readonly cluster: TestCluster,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The status the agent would write for `work` given the spoke Application's state. */
  statusFor(
    work: ManifestWork,
    state: SpokeApplicationState,
    opts: ReportOptions = {},
  ): NonNullable<ManifestWork['status']> {
    const applied = opts.applied ?? true;
    const available = opts.available ?? applied;
    const now = this.now();
    const generation = work.metadata.generation;
    const configs = work.spec.manifestConfigs ?? [];
    const manifests: ManifestStatus[] = work.spec.workload.manifests.map((manifest, ordinal) => {
      const apiVersion = String(manifest.apiVersion ?? '');
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      const kind = String(manifest.kind ?? '');
      const meta = (manifest.metadata ?? {}) as { name?: string; namespace?: string };
      const resource = pluralOf(kind);
      const resourceMeta = {
        group: group,
        version: version,
        kind,
        resource,
        name: meta.name ?? '',
        namespace: meta.namespace ?? '',
        ordinal,
      };
      const rules = configs.find(
        (c) =>
          c.resourceIdentifier.group === group &&
          c.resourceIdentifier.resource === resource &&
          c.resourceIdentifier.name === meta.name &&
          (c.resourceIdentifier.namespace ?? '') === (meta.namespace ?? ''),
      );
      const status: ManifestStatus = {
        resourceMeta,
        conditions: [
          condition(
            'Applied',
            applied,
            applied ? 'AppliedManifestComplete' : 'AppliedManifestFailed',
            applied ? 'Apply manifest complete' : (opts.appliedMessage ?? 'failed to apply'),
            undefined,
            now,
          ),
          condition(
            'Available',
            available,
            available ? 'ResourceAvailable' : 'ResourceNotAvailable',
            available ? 'Resource is available' : 'Resource is not available',
            undefined,
            now,
          ),
        ],
      };
      if (rules && applied) {
        const values: Array<{ name: string; fieldValue: FieldValue }> = [];
        // The spoke Application carries the annotations the work delivered: its spec hash comes back as such.
        const delivered = (manifest.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[
          SPEC_HASH_ANNOTATION
        ];
        for (const [name] of FEEDBACK_PATHS) {
          const value = state[name as keyof SpokeApplicationState] ?? (name === 'specHash' ? delivered : undefined);
          if (value !== undefined) values.push({ name, fieldValue: { type: 'String', string: value } });
        }
        for (const extra of opts.values ?? []) {
          const at = values.findIndex((v) => v.name === extra.name);
          if (at >= 0) values[at] = extra;
          else values.push(extra);
        }
        status.statusFeedback = { values };
        status.conditions!.push(condition('StatusFeedbackSynced', true, 'StatusFeedbackSynced', '', undefined, now));
      }
      const conditionRules = (rules as { conditionRules?: ConditionRule[] } | undefined)?.conditionRules ?? [];
      if (applied && (opts.spokeApplication || opts.ruleError !== undefined)) {
        for (const rule of conditionRules) {
          const result =
            opts.ruleError !== undefined
              ? { status: 'False' as const, reason: 'ConditionRuleExpressionError', message: opts.ruleError }
              : evaluateConditionRule(rule, opts.spokeApplication!);
          const before = work.status?.resourceStatus?.manifests
            ?.find((m) => m.resourceMeta?.ordinal === ordinal)
            ?.conditions?.find((c) => c.type === rule.condition);
          status.conditions!.push({
            type: rule.condition,
            status: result.status,
            reason: result.reason,
            message: result.message,
            lastTransitionTime:
              before?.status === result.status && before.lastTransitionTime ? before.lastTransitionTime : iso(now),
            ...(generation !== undefined ? { observedGeneration: generation } : {}),
          });
        }
      }
      return status;
    });
    if (opts.reverse) manifests.reverse();
    const previous = work.status?.conditions;
    // Newer agents copy a rule's condition onto the work, verbatim when one manifest carries it.
    const ruleConditions = manifests
      .flatMap((m) => m.conditions ?? [])
      .filter((c) => c.reason?.startsWith('ConditionRule'))
      .map((c) => ({ ...c, reason: 'ConditionRulesAggregated' }));
    return {
      conditions: [
        condition(
          'Applied',
          applied,
          applied ? 'AppliedManifestWorkComplete' : 'AppliedManifestWorkFailed',
          // OCM's agent keeps the cause on the manifests' conditions; the work's message is a fixed sentence.
          applied ? 'Apply manifest work complete' : 'Failed to apply manifest work',
          generation,
          now,
          previous,
        ),
        condition(
          'Available',
          available,
          available ? 'ResourcesAvailable' : 'ResourcesNotAvailable',
          available
            ? 'All resources are available'
            : `${manifests.length} of ${manifests.length} resources are not available`,
          generation,
          now,
          previous,
        ),
        ...ruleConditions,
      ],
      resourceStatus: { manifests },
    };
  }

  /** Reports status for one work (re-reading and retrying on 409 like a controller). Returns the stored work. */
  async report(
    namespace: string,
    name: string,
    state: SpokeApplicationState,
    opts: ReportOptions = {},
  ): Promise<ManifestWork> {
    for (let attempt = 0; ; attempt++) {
      const work = await this.cluster.get<ManifestWork>({
        apiVersion: WORK_API_VERSION,
        kind: 'ManifestWork',
        namespace,
        name,
      });
      if (!work) throw new Error(`work agent: ManifestWork ${namespace}/${name} does not exist`);
      try {
        return await this.cluster.replaceStatus<ManifestWork>({ ...work, status: this.statusFor(work, state, opts) });
      } catch (e) {
        if (errorCode(e) !== 409 || attempt >= 10) throw e;
      }
    }
  }

  /** Adds a finalizer to the work, as the hub side of OCM does until the spoke has removed what the work applied. */
  async addFinalizer(namespace: string, name: string, finalizer: string): Promise<ManifestWork> {
    return this.editFinalizers(namespace, name, (list) => (list.includes(finalizer) ? list : [...list, finalizer]));
  }

  /** Removes the finalizer (the spoke finished cleaning up). */
  async removeFinalizer(namespace: string, name: string, finalizer: string): Promise<ManifestWork | undefined> {
    return this.editFinalizers(namespace, name, (list) => list.filter((f) => f !== finalizer));
  }

  private async editFinalizers(
    namespace: string,
    name: string,
    edit: (list: string[]) => string[],
  ): Promise<ManifestWork> {
    const ref = { apiVersion: WORK_API_VERSION, kind: 'ManifestWork', namespace, name };
    for (let attempt = 0; ; attempt++) {
      const work = await this.cluster.get<ManifestWork>(ref);
      if (!work) throw new Error(`work agent: ManifestWork ${namespace}/${name} does not exist`);
      const finalizers = edit(work.metadata.finalizers ?? []);
      try {
        return await this.cluster.mergePatch<ManifestWork>(ref, {
          metadata: {
            resourceVersion: work.metadata.resourceVersion,
            finalizers: finalizers.length > 0 ? finalizers : null,
          },
        });
      } catch (e) {
        if (errorCode(e) !== 409 || attempt >= 10) throw e;
      }
    }
  }

  /** Reports the same state for every ManifestWork in the given namespaces (all namespaces when empty). */
  async reportAll(state: SpokeApplicationState, namespaces: string[] = [], opts: ReportOptions = {}): Promise<number> {
    const works =
      namespaces.length === 0
        ? await this.cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork')
        : (
            await Promise.all(
              namespaces.map((ns) =>
                this.cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: ns }),
              ),
            )
          ).flat();
    for (const work of works) await this.report(work.metadata.namespace!, work.metadata.name, state, opts);
    return works.length;
  }
}
