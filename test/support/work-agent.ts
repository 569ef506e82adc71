/**
 * Plays the OCM work agent for tests: for a ManifestWork it reports status through the /status
 * subresource as the real klusterlet agent does — work conditions (Applied, Available) and
 * `resourceStatus.manifests[]` with a resourceMeta per manifest and, for manifests with feedback rules,
 * `statusFeedback.values` of any fieldValue type.
 *
 * It also applies a work's manifests to a spoke and removes them as OCM v1.3.1's agent does
 * (`applyManifest`, `deleteApplied`; test/support/pull-delivery-sim.ts's klusterlet runs them): the
 * `open-cluster-management.io/config-spec-hash` annotation and the apply skipped while it matches, and the
 * ownerReference to the work's AppliedManifestWork, which decides what the agent deletes. The suite
 * test/ocm/conformance.test.ts holds both to the real agent.
 */
import { createHash, randomUUID } from 'node:crypto';
import { SPEC_HASH_ANNOTATION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import {
  type Condition,
  type FieldValue,
  type ManifestStatus,
  type ManifestWork,
  type OwnerReference,
} from '../../src/model/core/types.js';
import { FEEDBACK_PATHS } from '../../src/model/delivery/manifestwork.js';
import { errorCode, type TestCluster } from './cluster.js';
import { evaluateConditionRule } from './cel.js';
import type { ConditionRule } from '../../src/model/reconcile/resource-summary.js';

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
  /** `status.operationState.syncResult.revision`: the revision the spoke's last sync applied. */
  operationStateSyncRevision?: string;
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

/** The annotation in which the agent keeps the hash of what it applied (ServerSideApply with ignoreFields). */
export const CONFIG_SPEC_HASH_ANNOTATION = 'open-cluster-management.io/config-spec-hash';
/** The field manager of the agent's server-side applies, unless the manifest config names another. */
export const WORK_AGENT_FIELD_MANAGER = 'work-agent';
const APPLIED_MANIFEST_WORK_API_VERSION = 'work.open-cluster-management.io/v1';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

/** The agent's AppliedManifestWork of one work on a spoke: what it names as the owner of what the work applied. */
export interface AppliedManifestWorkRef {
  /** `<hub hash>-<work name>`, the hub hash being the sha256 (hex) of the hub's server URL. */
  readonly name: string;
  /** Given by the spoke's API server when the agent creates it: a new one for every life of the work. */
  readonly uid: string;
}

/** One resource a work applied, as the AppliedManifestWork's `status.appliedResources` records it. */
export interface AppliedResource {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly uid: string;
}

/** The AppliedManifestWork the agent of the hub at `hubServer` keeps for `workName` (a new uid each time). */
export function newAppliedManifestWork(hubServer: string, workName: string): AppliedManifestWorkRef {
  const hubHash = createHash('sha256').update(hubServer).digest('hex');
  return { name: `${hubHash}-${workName}`, uid: randomUUID() };
}

/**
 * Whether a work owns what it applies (pkg/work/helper OwnedByTheWork): not with `Orphan`, nor with
 * `SelectivelyOrphan` for a resource its orphaning rules name.
 */
function ownedByTheWork(
  work: ManifestWork,
  id: { group: string; resource: string; namespace: string; name: string },
): boolean {
  const option = (work.spec as Obj).deleteOption as Obj | undefined;
  if (!option || option.propagationPolicy === 'Foreground') return true;
  if (option.propagationPolicy === 'Orphan') return false;
  const rules = (option.selectivelyOrphans?.orphaningRules ?? []) as Obj[];
  return !rules.some(
    (r) =>
      (r.group ?? '') === id.group &&
      r.resource === id.resource &&
      (r.namespace ?? '') === id.namespace &&
      r.name === id.name,
  );
}

/** The owner references after the agent merges `required` in (library-go MergeOwnerRefs); undefined when unchanged. */
function mergeOwnerReferences(existing: OwnerReference[], required: OwnerReference): OwnerReference[] | undefined {
  const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');
  // matched by group, kind and name: an AppliedManifestWork made again (a new uid) replaces the old reference
  const at = existing.findIndex(
    (o) => o.name === required.name && o.kind === required.kind && group(o.apiVersion) === group(required.apiVersion),
  );
  const remove = required.uid.endsWith('-');
  if (at < 0) return remove ? undefined : [...existing, required];
  if (remove) return existing.filter((_, i) => i !== at);
  return JSON.stringify(existing[at]) === JSON.stringify(required)
    ? undefined
    : existing.map((o, i) => (i === at ? required : o));
}

/** Go's `fmt.Sprintf("%v", u)` of an `*unstructured.Unstructured` holding `value` (maps print with sorted keys). */
function goFormat(value: unknown): string {
  const format = (v: unknown): string => {
    if (v === null || v === undefined) return '<nil>';
    if (Array.isArray(v)) return `[${v.map(format).join(' ')}]`;
    if (typeof v === 'object') {
      const keys = Object.keys(v).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      return `map[${keys.map((k) => `${k}:${format((v as Obj)[k])}`).join(' ')}]`;
    }
    if (typeof v === 'number' && !Number.isInteger(v)) {
      // strconv 'g' with the shortest precision: an exponent below -4 or from 6 up is written as one
      const [mantissa, exp] = v.toExponential().split('e') as [string, string];
      const e = Number(exp);
      return e < -4 || e >= 6 ? `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}` : String(v);
    }
    return String(v);
  };
  return `&{${format(value)}}`;
}

/** Removes `path` (`.a.b`, the simple JSONPaths ignoreFields take) from `obj`. */
function removePath(obj: Obj, path: string): void {
  const keys = path.split('.').filter((k) => k !== '');
  const last = keys.pop();
  let at: unknown = obj;
  for (const k of keys) at = at && typeof at === 'object' ? (at as Obj)[k] : undefined;
  if (last !== undefined && at && typeof at === 'object' && !Array.isArray(at)) delete (at as Obj)[last];
}

/** Drops every `metadata.creationTimestamp: null`, as the agent does before applying. */
function withoutNullCreationTime(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullCreationTime);
  if (!value || typeof value !== 'object') return value;
  const out: Obj = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutNullCreationTime(v)]));
  const meta = out.metadata as Obj | undefined;
  if (meta && typeof meta === 'object' && 'creationTimestamp' in meta && meta.creationTimestamp === null) {
    const { creationTimestamp: _c, ...rest } = meta;
    out.metadata = rest;
  }
  return out;
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

  /**
   * Applies one manifest of `work` to the spoke as the agent's appliers do (pkg/work/spoke/apply) and returns
   * the spoke object and whether it was missing:
   * - `CreateOnly`: created when missing, an existing object left as it is;
   * - `ServerSideApply` with ignoreFields: the hash of the manifest without its `OnSpokePresent` fields goes
   *   into the config-spec-hash annotation, and while the spoke object carries that hash nothing is applied (an
   *   operation the spoke cleared, or a spoke edit, stays until the manifest changes); a missing object is
   *   applied with the ignored fields, a changed one without them;
   * - any other strategy: applied on every pass;
   * applies go server-side with force, as the config's field manager (`work-agent` by default). In every case
   * the reference to the AppliedManifestWork `owner` is then added, or removed when the work orphans the
   * resource. `namespace` places the object elsewhere than the manifest says (the double's spokes share one
   * server); the hash is of the manifest as the work holds it.
   */
  async applyManifest(
    work: ManifestWork,
    manifest: Obj,
    owner: AppliedManifestWorkRef,
    namespace?: string,
  ): Promise<{ object: Obj; created: boolean }> {
    const apiVersion = String(manifest.apiVersion ?? '');
    const kind = String(manifest.kind ?? '');
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
    // the agent drops a uid the manifest carries (a non-empty one)
    const { uid, ...rest } = (manifest.metadata ?? {}) as Obj;
    const metadata: Obj = uid === '' ? { ...rest, uid } : rest;
    const id = { group, resource: pluralOf(kind), namespace: metadata.namespace ?? '', name: metadata.name as string };
    const config = work.spec.manifestConfigs?.find(
      (c) =>
        c.resourceIdentifier.group === id.group &&
        c.resourceIdentifier.resource === id.resource &&
        (c.resourceIdentifier.namespace ?? '') === id.namespace &&
        c.resourceIdentifier.name === id.name,
    );
    const ref = { apiVersion, kind, namespace: namespace ?? metadata.namespace, name: id.name };
    const ownerRef: OwnerReference = {
      apiVersion: APPLIED_MANIFEST_WORK_API_VERSION,
      kind: 'AppliedManifestWork',
      name: owner.name,
      // a uid ending in '-' asks for the reference to be removed
      uid: ownedByTheWork(work, id) ? owner.uid : `${owner.uid}-`,
    };
    // the manifest as the agent applies it: without null creation times
    const required = withoutNullCreationTime({ ...manifest, metadata }) as Obj;
    const placed = (o: Obj): Obj => ({ ...o, metadata: { ...o.metadata, namespace: ref.namespace } });
    const existing = await this.cluster.get<Obj>(ref);
    const strategy = config?.updateStrategy?.type ?? 'Update';
    let object: Obj | undefined = existing;
    if (strategy === 'ReadOnly') {
      if (!existing) throw new Error(`work agent: ${kind} ${ref.namespace}/${id.name} (ReadOnly) does not exist`);
      return { object: existing, created: false };
    } else if (strategy === 'CreateOnly') {
      if (!existing)
        object = await this.cluster.create<Obj>(
          placed({
            ...required,
            metadata: { ...required.metadata, ...(ownerRef.uid === owner.uid ? { ownerReferences: [ownerRef] } : {}) },
          }),
        );
    } else {
      const ssa = strategy === 'ServerSideApply' ? config?.updateStrategy?.serverSideApply : undefined;
      let body: Obj | undefined = required;
      if (ssa?.ignoreFields?.length) {
        // OnSpokeChange fields stay in the hash (and are applied whenever it changes); OnSpokePresent ones do not
        const hashed = structuredClone(required);
        for (const field of ssa.ignoreFields)
          if (field.condition !== 'OnSpokeChange') for (const path of field.jsonPaths ?? []) removePath(hashed, path);
        const hash = createHash('md5').update(goFormat(hashed)).digest('hex');
        const annotated = (o: Obj): Obj => ({
          ...o,
          metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [CONFIG_SPEC_HASH_ANNOTATION]: hash } },
        });
        if (!existing) body = annotated(required);
        else if (existing.metadata.annotations?.[CONFIG_SPEC_HASH_ANNOTATION] === hash) body = undefined;
        else body = annotated(hashed);
      }
      if (body) object = await this.cluster.apply<Obj>(placed(body), ssa?.fieldManager ?? WORK_AGENT_FIELD_MANAGER);
    }
    const owners = mergeOwnerReferences((object!.metadata.ownerReferences ?? []) as OwnerReference[], ownerRef);
    if (owners) object = await this.cluster.mergePatch<Obj>(ref, { metadata: { ownerReferences: owners } });
    return { object: object!, created: !existing };
  }

  /**
   * Deletes what a work applied, as the agent does when the work is deleted or a resource leaves a work that
   * stays (pkg/work/helper DeleteAppliedResources): a resource `owner` does not own is left alone (the work
   * orphaned it); one another AppliedManifestWork owns too only loses this owner; one with another uid than
   * the work applied (made again since) is forgotten; the rest is deleted. Returns those still there (being
   * finalized), for the next pass.
   */
  async deleteApplied(
    resources: readonly AppliedResource[],
    owner: AppliedManifestWorkRef,
  ): Promise<AppliedResource[]> {
    const pending: AppliedResource[] = [];
    for (const resource of resources) {
      const live = await this.cluster.get<Obj>(resource);
      if (!live) continue;
      const owners = (live.metadata.ownerReferences ?? []) as OwnerReference[];
      if (!owners.some((o) => o.uid === owner.uid)) continue;
      const others = owners.some(
        (o) =>
          o.apiVersion === APPLIED_MANIFEST_WORK_API_VERSION && o.kind === 'AppliedManifestWork' && o.uid !== owner.uid,
      );
      if (others) {
        const removal = {
          apiVersion: APPLIED_MANIFEST_WORK_API_VERSION,
          kind: 'AppliedManifestWork',
          name: owner.name,
          uid: `${owner.uid}-`,
        };
        const kept = mergeOwnerReferences(owners, removal);
        if (kept) await this.cluster.mergePatch(resource, { metadata: { ownerReferences: kept } });
        continue;
      }
      if (live.metadata.uid !== resource.uid) continue;
      if (!live.metadata.deletionTimestamp) await this.cluster.delete(resource);
      if (await this.cluster.get(resource)) pending.push(resource);
    }
    return pending;
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
