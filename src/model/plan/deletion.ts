/**
 * What the OCM work agent deletes on a spoke when a ManifestWork goes away, or when a manifest is
 * dropped from a work that stays. The `deleteOption.propagationPolicy` decides, not the object kinds:
 * Foreground (also the default when unset) removes every applied manifest; Orphan removes none;
 * SelectivelyOrphan removes all but those its `orphaningRules` name. A removed Argo CD Application with
 * the resources finalizer prunes its workload; a removed Namespace takes everything in it.
 */
import { ARGOCD_GROUP, ARGOCD_RESOURCES_FINALIZER } from '../core/keys.js';

/** A resource a work applied on its spoke. */
export interface SpokeResource {
  readonly group: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** One resource removed from a spoke, with what its removal takes along. */
export interface SpokeRemoval extends SpokeResource {
  /** An Argo CD Application whose resources finalizer prunes everything it deployed. */
  readonly prunesWorkload: boolean;
  /** Human text: `Application argocd/web (prunes its workload: resources finalizer)`. */
  readonly effect: string;
}

export interface OrphaningRule {
  group?: string;
  resource?: string;
  namespace?: string;
  name?: string;
}

/** The deletion settings of a work as rendered. */
export interface WorkDeleteOption {
  /** As written; `Foreground` when unset. */
  readonly policy: string;
  readonly orphaningRules: readonly OrphaningRule[];
}

type Manifest = {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown; finalizers?: unknown };
};
type WorkLike = {
  spec?: {
    workload?: { manifests?: unknown };
    deleteOption?: { propagationPolicy?: unknown; selectivelyOrphans?: { orphaningRules?: unknown } };
  };
};

export function deleteOptionOf(work: WorkLike): WorkDeleteOption {
  const option = work.spec?.deleteOption;
  const policy =
    typeof option?.propagationPolicy === 'string' && option.propagationPolicy ? option.propagationPolicy : 'Foreground';
  const rules = option?.selectivelyOrphans?.orphaningRules;
  return { policy, orphaningRules: Array.isArray(rules) ? (rules as OrphaningRule[]) : [] };
}

/** Whether the policy removes applied resources at all (Orphan is the only one that never does). */
export function policyRemoves(policy: string): boolean {
  return policy !== 'Orphan';
}

const IRREGULAR_PLURALS: Record<string, string> = { endpoints: 'endpoints', ingress: 'ingresses' };

/** The API resource name of a kind (`NetworkPolicy` → `networkpolicies`), as orphaning rules name it. */
export function resourceOfKind(kind: string): string {
  const lower = kind.toLowerCase();
  if (IRREGULAR_PLURALS[lower]) return IRREGULAR_PLURALS[lower];
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

function groupOf(apiVersion: unknown): string {
  const v = typeof apiVersion === 'string' ? apiVersion : '';
  return v.includes('/') ? v.slice(0, v.indexOf('/')) : '';
}

/** The resources a work applies (manifests without a kind or name are skipped: the API server refuses them). */
export function workResources(work: WorkLike): Array<SpokeResource & { manifest: Manifest }> {
  const manifests = work.spec?.workload?.manifests;
  if (!Array.isArray(manifests)) return [];
  const out: Array<SpokeResource & { manifest: Manifest }> = [];
  for (const m of manifests as Manifest[]) {
    if (!m || typeof m.kind !== 'string' || typeof m.metadata?.name !== 'string') continue;
    const namespace =
      typeof m.metadata.namespace === 'string' && m.metadata.namespace ? m.metadata.namespace : undefined;
    out.push({
      group: groupOf(m.apiVersion),
      kind: m.kind,
      name: m.metadata.name,
      ...(namespace ? { namespace } : {}),
      manifest: m,
    });
  }
  return out;
}

export function resourceId(r: SpokeResource): string {
  return `${r.group ? `${r.group}/` : ''}${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

function orphanedBy(rules: readonly OrphaningRule[], r: SpokeResource): boolean {
  const resource = resourceOfKind(r.kind);
  return rules.some(
    (rule) =>
      (rule.group ?? '') === r.group &&
      (rule.resource ?? '') === resource &&
      (rule.namespace ?? '') === (r.namespace ?? '') &&
      rule.name === r.name,
  );
}

/** Whether `option` removes `r` from the spoke when the work is deleted or stops carrying it. */
export function removedBy(option: WorkDeleteOption, r: SpokeResource): boolean {
  if (!policyRemoves(option.policy)) return false;
  if (option.policy === 'SelectivelyOrphan') return !orphanedBy(option.orphaningRules, r);
  return true;
}

function removal(r: SpokeResource & { manifest: Manifest }): SpokeRemoval {
  const where = `${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
  const finalizers = r.manifest.metadata?.finalizers;
  const { group, kind, name, namespace } = r;
  const base = { group, kind, name, ...(namespace ? { namespace } : {}) };
  if (r.group === ARGOCD_GROUP && r.kind === 'Application') {
    const prunes = Array.isArray(finalizers) && finalizers.includes(ARGOCD_RESOURCES_FINALIZER);
    const effect = prunes ? 'prunes its workload: resources finalizer' : 'its workload stays: no resources finalizer';
    return { ...base, prunesWorkload: prunes, effect: `Application ${where} (${effect})` };
  }
  if (r.group === '' && r.kind === 'Namespace')
    return { ...base, prunesWorkload: true, effect: `Namespace ${r.name} and everything in it` };
  return { ...base, prunesWorkload: false, effect: `${r.kind} ${where}` };
}

/** What deleting `work` removes from its spoke (empty for Orphan). */
export function workDeletionRemovals(work: WorkLike): SpokeRemoval[] {
  const option = deleteOptionOf(work);
  return workResources(work)
    .filter((r) => removedBy(option, r))
    .map(removal);
}

/** What the spoke loses when `before` is replaced by `after`: manifests dropped that the old deleteOption does not orphan. */
export function droppedManifestRemovals(before: WorkLike, after: WorkLike): SpokeRemoval[] {
  const kept = new Set(workResources(after).map(resourceId));
  const option = deleteOptionOf(before);
  return workResources(before)
    .filter((r) => !kept.has(resourceId(r)) && removedBy(option, r))
    .map(removal);
}

/** Manifests dropped from a work that stay on the spoke (orphaned). */
export function droppedManifestsKept(before: WorkLike, after: WorkLike): SpokeResource[] {
  const kept = new Set(workResources(after).map(resourceId));
  const option = deleteOptionOf(before);
  return workResources(before)
    .filter((r) => !kept.has(resourceId(r)) && !removedBy(option, r))
    .map(({ group, kind, name, namespace }) => ({ group, kind, name, ...(namespace ? { namespace } : {}) }));
}
