/**
 * The Application reconciler's writes and the state they keep between reconciles: which of its own writes
 * the cache has not seen yet (expectations), whether the hub's ManifestWork CRD takes the resource summary
 * rule, and which new apps' first write waits behind a burst. Every part of the reconciler (the basic, the
 * takeover and the agent-model path) writes through one {@link ApplicationWrites}.
 */
import type { Application, KubeObject, ManifestWork } from '../../model/core/types.js';
import { isConditionRulesUnknown, withoutResourceSummaryRule } from '../../model/delivery/manifestwork.js';
import type { WorkRef } from '../../model/reconcile/propagation.js';
import { requestsResourceSummary } from '../../model/reconcile/resource-summary.js';
import { isNotFound, KubeApiError } from '../../kube/client.js';
import { APPLICATION, MANIFEST_WORK, type ResourceKind } from '../../kube/resources.js';
import { WriteExpectations } from '../runtime/expectations.js';
import type { ReconcilerContext } from '../runtime/reconciler.js';

/** How long works leave out the resource summary rule after the hub dropped it, before the rule is tried again. */
export const SUMMARY_RULE_RECHECK_MS = 3_600_000;

/**
 * The resourceVersion a server-side apply carries when it must only create: no stored object ever has it
 * (the largest uint64), so an object of that name existing already makes the API server refuse the apply
 * with 409 Conflict, while a name still free is created as by any apply (kube-apiserver ignores the
 * precondition on create, and the fields are owned by the apply, as for every later write).
 */
const CREATE_ONLY_RESOURCE_VERSION = '18446744073709551615';

/** A live read of a work: found (undefined: it is gone), or why it could not be read. */
export type LiveWork = { found: true; work?: ManifestWork } | { found: false; why: string };

export class ApplicationWrites {
  readonly expectations = new WriteExpectations();
  /** Keys whose first app write (finalizer and first status) waits behind a burst, since when (ms epoch). */
  readonly firstWriteWaiting = new Map<string, number>();
  /**
   * A hub whose ManifestWork CRD predates condition rules (cluster manager before OCM 1.0) drops them from
   * every work it stores: a written work comes back without the rule. Asking for it would then make every
   * work differ from what the hub holds, and be rewritten at each resync; the rule is left out instead (the
   * apps say why) and tried again once an hour, so a hub that was upgraded gets it back.
   */
  private summaryRuleDroppedAt: number | undefined;

  constructor(private readonly context: ReconcilerContext) {}

  /** Sharded, a replica writes only the ManifestWorks and hub Applications of the shards it holds. */
  mayWrite(kind: ResourceKind, namespace: string | undefined, name: string): boolean {
    return this.context.sharding?.mayWrite(kind, namespace, name) ?? true;
  }

  /** The cache has not seen this reconciler's own last write of the object yet. */
  lagging(kind: ResourceKind, namespace: string | undefined, name: string, cached: KubeObject | undefined): boolean {
    return this.expectations.lagging(kind.id, namespace, name, cached);
  }

  /** Whether the cache is behind a write of any of `works`. */
  laggingAny(works: readonly ManifestWork[]): boolean {
    return works.some((work) => this.lagging(MANIFEST_WORK, work.metadata.namespace, work.metadata.name, work));
  }

  async patchApp(app: Application, patch: object): Promise<Application> {
    const { namespace, name } = app.metadata;
    const written = await this.context.writer.mergePatch<Application>(APPLICATION, namespace, name, patch);
    this.expectations.wrote(APPLICATION.id, written);
    return written;
  }

  /** Merge-patches a work (guards travel in the patch) and records the write. */
  async patchWork(ref: WorkRef, patch: object): Promise<ManifestWork> {
    const written = await this.context.writer.mergePatch<ManifestWork>(MANIFEST_WORK, ref.namespace, ref.name, patch);
    this.expectations.wrote(MANIFEST_WORK.id, written);
    return written;
  }

  /**
   * Deletes a work under its uid and resourceVersion preconditions; false (nothing sent) when an earlier
   * pass deleted it and the watch event has not reached the cache yet: once is enough.
   */
  async deleteWork(ref: WorkRef): Promise<boolean> {
    if (this.expectations.deletionPending(MANIFEST_WORK.id, ref.namespace, ref.name, ref.uid)) return false;
    await this.context.writer.delete(MANIFEST_WORK, ref.namespace, ref.name, {
      ...(ref.uid ? { uid: ref.uid } : {}),
      ...(ref.resourceVersion ? { resourceVersion: ref.resourceVersion } : {}),
    });
    this.expectations.deleted(MANIFEST_WORK.id, ref.namespace, ref.name, ref.uid);
    return true;
  }

  /** Works ask for no resource summary now (the setting is off, or the hub dropped the rule within the hour). */
  summaryRuleOff(): boolean {
    const dropped = this.summaryRuleDroppedAt;
    return (
      !this.context.config.resourceSummaries ||
      (dropped !== undefined && this.context.now().getTime() - dropped < SUMMARY_RULE_RECHECK_MS)
    );
  }

  /** The hub's ManifestWork CRD was last seen dropping the resource summary rule. */
  get summaryRuleDroppedByHub(): boolean {
    return this.summaryRuleDroppedAt !== undefined;
  }

  private summaryRuleRefused(work: string): void {
    if (this.summaryRuleDroppedAt === undefined)
      this.context.logger.warn(
        { work },
        "the hub's ManifestWork CRD has no manifestConfigs[].conditionRules (a cluster manager before OCM 1.0): works ask for no resource summary until the hub takes the field (tried again every hour); upgrade the hub's cluster manager",
      );
    this.summaryRuleDroppedAt = this.context.now().getTime();
  }

  /**
   * Server-side applies `work` and records the write; `createOnly` when the cache holds no work at its
   * name: an apply with force would take over a work of that name the cache has not seen yet (just created
   * by someone else), so the apply carries a resourceVersion precondition no stored object meets, and such
   * a work makes the API server refuse it (409) instead. A hub without the rule in its CRD refuses the
   * apply ("field not declared in schema"), or stores the work without it: the work is written without the
   * rule, and so are the next ones.
   */
  async applyWork(work: ManifestWork, createOnly: boolean): Promise<ManifestWork> {
    const name = `${work.metadata.namespace ?? ''}/${work.metadata.name}`;
    const write = (object: ManifestWork) =>
      this.context.writer.apply<ManifestWork>(
        MANIFEST_WORK,
        createOnly
          ? { ...object, metadata: { ...object.metadata, resourceVersion: CREATE_ONLY_RESOURCE_VERSION } }
          : object,
      );
    let stored: ManifestWork;
    try {
      stored = await write(work);
    } catch (error) {
      if (!(error instanceof KubeApiError && requestsResourceSummary(work) && isConditionRulesUnknown(error.message)))
        throw error;
      this.summaryRuleRefused(name);
      stored = await write(withoutResourceSummaryRule(work));
      this.expectations.wrote(MANIFEST_WORK.id, stored);
      return stored;
    }
    if (requestsResourceSummary(work)) {
      if (!requestsResourceSummary(stored)) this.summaryRuleRefused(name);
      else if (this.summaryRuleDroppedAt !== undefined) {
        this.summaryRuleDroppedAt = undefined;
        this.context.logger.info(
          { work: name },
          'the hub takes manifestConfigs[].conditionRules again: works ask for resource summaries',
        );
      }
    }
    this.expectations.wrote(MANIFEST_WORK.id, stored);
    return stored;
  }

  /**
   * The work `namespace/name` as the API server has it now (found without a work: it is gone), for a
   * create-only apply refused while the cache is behind. Without a reader (pure tests) or when the read
   * fails: not found, and why.
   */
  async readWork(namespace: string, name: string): Promise<LiveWork> {
    const reader = this.context.reader;
    if (!reader?.get) return { found: false, why: 'no reader' };
    try {
      const work = await reader.get<ManifestWork>(MANIFEST_WORK, namespace, name, {
        timeoutMs: this.context.config.requestTimeoutSeconds * 1000,
      });
      return { found: true, work };
    } catch (error) {
      if (isNotFound(error)) return { found: true };
      return { found: false, why: error instanceof Error ? error.message : String(error) };
    }
  }
}
