/**
 * ACM Subscriptions (`apps.open-cluster-management.io/v1` Subscription, Channel, PlacementRule, with OCM
 * Placements) translated into pullfleet construct code: one PullApplicationSet per Subscription, one
 * Placement per PlacementRule / Placement / inline placement, AppSource.git for Git and GitHub channels
 * and AppSource.helm for HelmRepo channels. Pure and deterministic: the same objects in any order give
 * the same code and the same report. What has no equivalent is listed in the report with the reason and,
 * where there is one, what to do instead; a Subscription that cannot be delivered at all is left out.
 */
import { canonicalJson } from '../model/core/canonical-json.js';
import { toDnsLabel } from '../model/core/names.js';
import { SelectorOperator } from '../model/core/selectors.js';
import { TaintEffect, TolerationOperator } from '../model/placement/placement.js';
import type { JsonObject, JsonValue } from '../model/core/types.js';
import { IDENT, TsCode, tsLiteral as writeLiteral } from './ts-literal.js';

export const SUBSCRIPTION_GROUP = 'apps.open-cluster-management.io';
/** The module generated code imports the constructs from: the package, as a user's repository installs it. */
export const DEFAULT_IMPORT = 'pullfleet';
const ANN = `${SUBSCRIPTION_GROUP}/`;
export const GIT_PATH_ANNOTATION = `${ANN}git-path`;
export const GIT_BRANCH_ANNOTATION = `${ANN}git-branch`;
export const GIT_DESIRED_COMMIT_ANNOTATION = `${ANN}git-desired-commit`;
export const GIT_TAG_ANNOTATION = `${ANN}git-tag`;
export const RECONCILE_OPTION_ANNOTATION = `${ANN}reconcile-option`;
export const RECONCILE_RATE_ANNOTATION = `${ANN}reconcile-rate`;
/** Older spellings ACM still reads for GitHub channels. */
const GITHUB_PATH_ANNOTATION = `${ANN}github-path`;
const GITHUB_BRANCH_ANNOTATION = `${ANN}github-branch`;
/** The label ACM puts on every ManagedCluster with its own name (PlacementRule `clusters` become a selector on it). */
export const CLUSTER_NAME_LABEL = 'name';
const PAUSE_LABEL = 'subscription-pause';
/** On a Subscription the subscription controller created from another one (for example the hub's own copy as local-cluster). */
export const HOSTING_SUBSCRIPTION_ANNOTATION = `${ANN}hosting-subscription`;

/** Severity of a report line: `skipped` (nothing generated for the Subscription), `untranslated` (generated without this part), `changed` (translated with a difference in behaviour). */
export type MigrationSeverity = 'skipped' | 'untranslated' | 'changed';

export interface MigrationNote {
  /** `namespace/name` of the Subscription (or the object) concerned. */
  readonly subject: string;
  readonly severity: MigrationSeverity;
  /** What was not (or not exactly) translated, why, and what to do instead. */
  readonly message: string;
}

export interface MigrationOptions {
  /** Module the generated code imports the constructs from. @default 'pullfleet' */
  readonly importFrom?: string;
  /** Where the input came from (file names or the hub), for the header comment. @default [] */
  readonly sources?: readonly string[];
  /**
   * Namespace of the objects without `metadata.namespace` (kustomize or `kubectl apply -n` sets it when
   * they are applied), as kubectl would read them.
   * @default 'default'
   */
  readonly namespace?: string;
  /** Where each object was read from (a file name), to name both places of an object given twice. @default - not named */
  readonly origins?: { get(object: JsonObject): string | undefined };
}

export interface MigrationResult {
  /** TypeScript source of a module exporting `addMigratedApps(hub)`. */
  readonly code: string;
  /** Everything not translated exactly, sorted by subject. */
  readonly notes: readonly MigrationNote[];
  /** About the input as a whole: objects read in the default namespace, objects given more than once. */
  readonly inputNotes: readonly string[];
  /** What to do before delivering the generated apps. */
  readonly todo: readonly string[];
  /** Names of the generated PullApplicationSets (apps that deliver somewhere). */
  readonly apps: readonly string[];
  /** Names of the generated Placements. */
  readonly placements: readonly string[];
}

interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
}

interface SelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}
interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: SelectorRequirement[];
}

/** The construct props of one generated Placement, before they become code. */
interface PlacementPlan {
  id: string;
  /** `kind ns/name` of what it came from. */
  origin: string;
  clusterSets: string[];
  predicates: Array<{
    labels?: Record<string, string>;
    labelExpressions?: SelectorRequirement[];
    claimExpressions?: SelectorRequirement[];
  }>;
  numberOfClusters?: number;
  tolerations: JsonObject[];
  prioritizers: string[];
  prioritizerMode?: 'ADDITIVE' | 'EXACT';
}

interface AppPlan {
  id: string;
  subscription: string;
  channel: string;
  sourceCode: string;
  destinationNamespace: string;
  /** `null` when the Subscription names no cluster: the app is written as a comment, delivering nowhere. */
  placementId: string | null;
  autoSync?: boolean;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const keyOf = (o: Obj): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The kind of a translated object (Subscription, Channel, PlacementRule or OCM Placement), else undefined. */
function kindOf(o: Obj): string | undefined {
  const group = (o.apiVersion ?? '').split('/')[0];
  if (group === SUBSCRIPTION_GROUP && (o.kind === 'Subscription' || o.kind === 'Channel' || o.kind === 'PlacementRule'))
    return o.kind;
  if (group === 'cluster.open-cluster-management.io' && o.kind === 'Placement') return 'Placement';
  return undefined;
}

/** Where two objects differ, as `path: a ≠ b` (values shown when short), sorted by path. */
function differingPaths(a: unknown, b: unknown, path = ''): string[] {
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(cmp);
    return keys.flatMap((k) =>
      differingPaths(a[k], b[k], path ? (IDENT.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`) : k),
    );
  }
  if (canonicalJson(a) === canonicalJson(b)) return [];
  const show = (v: unknown): string =>
    v === undefined ? 'absent' : canonicalJson(v).length <= 60 ? canonicalJson(v) : '…';
  return [`${path || '(root)'} ${show(a)} ≠ ${show(b)}`];
}

// ------------------------------------------------------------------ code emission

/** A TypeScript literal as the generated fleet code writes it (`null` as `undefined`, as before). */
export function tsLiteral(value: unknown, indent = ''): string {
  return writeLiteral(value, indent, { nullAs: 'undefined' });
}

function camel(id: string): string {
  const parts = id.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = parts
    .map((p, i) => (i === 0 ? p.toLowerCase() : p[0].toUpperCase() + p.slice(1).toLowerCase()))
    .join('');
  return /^[0-9]/.test(name) ? `p${name}` : name || 'placement';
}

// ------------------------------------------------------------------ translation

class Translator {
  readonly notes: MigrationNote[] = [];
  private readonly channels = new Map<string, Obj>();
  private readonly rules = new Map<string, Obj>();
  private readonly placements = new Map<string, Obj>();
  private readonly subscriptions: Obj[] = [];
  readonly placementPlans = new Map<string, PlacementPlan>();
  private readonly placementIds = new Set<string>();
  private readonly appIds = new Set<string>();
  readonly apps: AppPlan[] = [];
  readonly clusterSetsUsed = new Set<string>();

  /** Input notes: objects read in the default namespace, objects given more than once. */
  readonly inputNotes: string[] = [];
  /** `Kind ns/name` of objects given more than once with different content → why neither is used. */
  private readonly conflicts = new Map<string, string>();

  constructor(objects: readonly JsonObject[], options: MigrationOptions) {
    const defaultNs = options.namespace ?? 'default';
    const defaulted: string[] = [];
    const groups = new Map<string, Array<{ obj: Obj; origin?: string }>>();
    for (const raw of objects) {
      const o = raw as unknown as Obj;
      const kind = kindOf(o);
      if (!kind) continue;
      // As kubectl reads it: an object without a namespace lands in the default one.
      const namespace =
        typeof o.metadata?.namespace === 'string' && o.metadata.namespace ? o.metadata.namespace : undefined;
      if (!namespace) defaulted.push(`${kind} ${o.metadata?.name ?? ''}`);
      const resolved: Obj = { ...o, metadata: { ...(o.metadata ?? {}), namespace: namespace ?? defaultNs } };
      const key = `${kind} ${keyOf(resolved)}`;
      const list = groups.get(key) ?? [];
      list.push({ obj: resolved, origin: options.origins?.get(raw) });
      groups.set(key, list);
    }
    if (defaulted.length > 0) {
      this.inputNotes.push(
        `${defaulted.length} object${defaulted.length === 1 ? ' has' : 's have'} no metadata.namespace and ${defaulted.length === 1 ? 'is' : 'are'} read in namespace "${defaultNs}", as kubectl apply would${options.namespace === undefined ? ' (pass --namespace for the one kustomize or kubectl -n gave them)' : ''}: ${[...new Set(defaulted)].sort(cmp).join(', ')}`,
      );
    }
    for (const key of [...groups.keys()].sort(cmp)) {
      const list = groups.get(key)!;
      const obj = this.single(key, list);
      if (!obj) continue;
      const kind = key.split(' ', 1)[0];
      if (kind === 'Subscription') this.subscriptions.push(obj);
      else if (kind === 'Channel') this.channels.set(keyOf(obj), obj);
      else if (kind === 'PlacementRule') this.rules.set(keyOf(obj), obj);
      else this.placements.set(keyOf(obj), obj);
    }
    this.subscriptions.sort((a, b) => cmp(keyOf(a), keyOf(b)));
  }

  /**
   * The one object of `key`: given once, or more than once with the same content (read once, and said
   * so). Given with different content, it is none of them: which one the hub runs is not in the files
   * (kubectl apply would keep whichever came last), and the translation never depends on the order of
   * its input, so the conflict is reported and neither is translated.
   */
  private single(key: string, list: Array<{ obj: Obj; origin?: string }>): Obj | undefined {
    if (list.length === 1) return list[0].obj;
    const sorted = [...list].sort(
      (a, b) => cmp(a.origin ?? '', b.origin ?? '') || cmp(canonicalJson(a.obj), canonicalJson(b.obj)),
    );
    const origins = [...new Set(sorted.map((e) => e.origin).filter((o): o is string => Boolean(o)))];
    const where =
      origins.length === 0
        ? `${list.length} times in the input`
        : origins.length === 1
          ? `${list.length} times in ${origins[0]}`
          : `in ${origins.join(' and ')}`;
    const variants = [...new Set(sorted.map((e) => canonicalJson(e.obj)))];
    if (variants.length === 1) {
      this.inputNotes.push(`${key} is given ${where}, identically: translated once`);
      return sorted[0].obj;
    }
    const differences = differingPaths(sorted[0].obj, sorted.find((e) => canonicalJson(e.obj) !== variants[0])!.obj);
    const what = `${key} is given ${where}, differently (${differences.slice(0, 3).join('; ')}${differences.length > 3 ? `; ${differences.length - 3} more` : ''})`;
    const fix = 'keep the one the hub runs (or read from the hub with --kubeconfig) and translate again';
    if (key.startsWith('Subscription '))
      this.note(
        key.slice('Subscription '.length),
        'skipped',
        `the Subscription ${what.slice(key.length + 1)}: neither is translated; ${fix}`,
      );
    else this.inputNotes.push(`${what}: neither is translated (nor the Subscriptions using it); ${fix}`);
    this.conflicts.set(key, what);
    return undefined;
  }

  note(subject: string, severity: MigrationSeverity, message: string): void {
    this.notes.push({ subject, severity, message });
  }

  run(): void {
    for (const sub of this.subscriptions) this.translate(sub);
  }

  private uniqueId(base: string, taken: Set<string>): string {
    let id = toDnsLabel(base, 50);
    for (let n = 2; taken.has(id); n++) id = `${toDnsLabel(base, 46)}-${n}`;
    taken.add(id);
    return id;
  }

  private translate(sub: Obj): void {
    const subject = keyOf(sub);
    const ns = sub.metadata?.namespace ?? 'default';
    const spec = sub.spec ?? {};
    const annotations = sub.metadata?.annotations ?? {};
    const hosting = annotations[HOSTING_SUBSCRIPTION_ANNOTATION];
    if (hosting) {
      this.note(
        subject,
        'skipped',
        `a copy the subscription controller made from Subscription ${hosting} (annotation ${HOSTING_SUBSCRIPTION_ANNOTATION}); the parent is what gets translated`,
      );
      return;
    }
    const channelRef = typeof spec.channel === 'string' ? spec.channel : '';
    const [chNs, chName] = channelRef.includes('/') ? channelRef.split('/', 2) : [ns, channelRef];
    const channel = this.channels.get(`${chNs}/${chName}`);
    const channelConflict = this.conflicts.get(`Channel ${chNs}/${chName}`);
    if (channelConflict) {
      this.note(subject, 'skipped', `its ${channelConflict}: keep the one the hub runs and translate again`);
      return;
    }
    if (!channel) {
      this.note(
        subject,
        'skipped',
        `its channel "${channelRef}" is not in the input: include the Channel ${chNs}/${chName} (or read from the hub with --kubeconfig)`,
      );
      return;
    }
    const channelType = String(channel.spec?.type ?? '').toLowerCase();
    const pathname = String(channel.spec?.pathname ?? '');
    let sourceCode: string | undefined;
    if (channelType === 'git' || channelType === 'github') sourceCode = this.gitSource(subject, sub, channel, pathname);
    else if (channelType === 'helmrepo') sourceCode = this.helmSource(subject, sub, pathname);
    else if (channelType === 'objectbucket') {
      this.note(
        subject,
        'skipped',
        `channel ${keyOf(channel)} is an ObjectBucket channel (${pathname}): Argo CD cannot read manifests from an object bucket; move them to a Git repository or a Helm chart and translate again`,
      );
      return;
    } else if (channelType === 'namespace') {
      this.note(
        subject,
        'skipped',
        `channel ${keyOf(channel)} is a Namespace channel (resources kept in hub namespace ${pathname}): Argo CD needs a Git or Helm source; commit those resources to Git and translate again`,
      );
      return;
    } else {
      this.note(
        subject,
        'skipped',
        `channel ${keyOf(channel)} has type "${String(channel.spec?.type ?? '')}", which is not Git, GitHub, HelmRepo, ObjectBucket or Namespace`,
      );
      return;
    }
    if (!sourceCode) return;
    this.channelNotes(subject, channel);

    const placementId = this.placementFor(subject, sub, ns);
    if (placementId === undefined) return;

    if (spec.timewindow !== undefined) {
      const tw = isObj(spec.timewindow) ? spec.timewindow : {};
      this.note(
        subject,
        'untranslated',
        `time window (${String(tw.windowtype ?? 'active')} ${Array.isArray(tw.daysofweek) ? tw.daysofweek.join(',') : 'every day'} ${Array.isArray(tw.hours) ? tw.hours.map((h) => (isObj(h) ? `${String(h.start)}-${String(h.end)}` : '')).join(',') : ''} ${String(tw.location ?? '')}): Argo CD Applications have no time window; add an Argo CD sync window (kind allow/deny, cron schedule, duration) to the app's AppProject`.replace(
          / +\)/g,
          ')',
        ),
      );
    }
    if (spec.hooksecretref !== undefined) {
      const path = annotations[GIT_PATH_ANNOTATION] ?? annotations[GITHUB_PATH_ANNOTATION] ?? '';
      this.note(
        subject,
        'untranslated',
        `Ansible hooks (AnsibleJobs in ${path ? `${path}/prehook and ${path}/posthook` : 'the prehook and posthook folders'}, Tower secret ${String((spec.hooksecretref as Record<string, unknown>)?.name ?? '')}) are not run by Argo CD: turn them into Argo CD PreSync/PostSync hook resources (a Job annotated argocd.argoproj.io/hook) in the repository`,
      );
    }
    if (spec.secondaryChannel)
      this.note(
        subject,
        'untranslated',
        `secondary channel ${String(spec.secondaryChannel)} (a fallback when the channel is unreachable): Argo CD reads one source; there is no fallback`,
      );
    if (Array.isArray(spec.overrides) && spec.overrides.length > 0) {
      this.note(
        subject,
        'untranslated',
        `per-cluster overrides (spec.overrides for ${spec.overrides.map((o) => (isObj(o) ? String(o.clusterName) : '')).join(', ')}): use a separate PullApplicationSet (or PullApplication) per variant, selected by its own Placement`,
      );
    }
    if (Array.isArray(spec.allow) || Array.isArray(spec.deny)) {
      this.note(
        subject,
        'untranslated',
        'allow/deny lists of kinds: pullfleet grants the spoke Argo CD RBAC per app through `resources`; list the API groups and resources the app deploys there',
      );
    }
    const paused = sub.metadata?.labels?.[PAUSE_LABEL] === 'true';
    if (paused)
      this.note(
        subject,
        'changed',
        'the Subscription is paused (label subscription-pause: "true"): the app is generated with autoSync: false, so Argo CD shows drift but does not sync',
      );
    const rate = annotations[RECONCILE_RATE_ANNOTATION] ?? channel.metadata?.annotations?.[RECONCILE_RATE_ANNOTATION];
    const rateOff = rate === 'off';
    if (rateOff && !paused)
      this.note(
        subject,
        'changed',
        'reconcile-rate "off": the app is generated with autoSync: false; sync it by hand (argocd app sync) as you reconciled the Subscription by hand',
      );
    else if (rate && !rateOff)
      this.note(
        subject,
        'changed',
        `reconcile-rate "${rate}": Argo CD polls the repository on its own interval (timeout.reconciliation, 3 minutes by default) or on a webhook`,
      );

    const base = (sub.metadata?.name ?? 'app').replace(/-subscription(-\d+)?$/, '');
    const id = this.uniqueId(base, this.appIds);
    this.apps.push({
      id,
      subscription: subject,
      channel: keyOf(channel),
      sourceCode,
      destinationNamespace: ns,
      placementId,
      autoSync: paused || rateOff ? false : undefined,
    });
  }

  private gitSource(subject: string, sub: Obj, channel: Obj, repoURL: string): string | undefined {
    const a = { ...(channel.metadata?.annotations ?? {}), ...(sub.metadata?.annotations ?? {}) };
    if (!repoURL) {
      this.note(subject, 'skipped', `channel ${keyOf(channel)} has no spec.pathname (the repository URL)`);
      return undefined;
    }
    const path = a[GIT_PATH_ANNOTATION] ?? a[GITHUB_PATH_ANNOTATION];
    const branch = a[GIT_BRANCH_ANNOTATION] ?? a[GITHUB_BRANCH_ANNOTATION];
    const commit = a[GIT_DESIRED_COMMIT_ANNOTATION];
    const tag = a[GIT_TAG_ANNOTATION];
    const revision = commit ?? tag ?? branch;
    if (commit && (tag || branch))
      this.note(
        subject,
        'changed',
        `git-desired-commit ${commit} is pinned as targetRevision; the ${tag ? `tag ${tag}` : `branch ${branch}`} annotation is no longer followed`,
      );
    else if (tag && branch)
      this.note(
        subject,
        'changed',
        `git-tag ${tag} is pinned as targetRevision; the branch ${branch} annotation is no longer followed`,
      );
    if (!path)
      this.note(
        subject,
        'changed',
        'no git-path annotation: the app reads the repository root (Argo CD does not apply every folder recursively unless directory.recurse is set)',
      );
    if (!revision)
      this.note(
        subject,
        'changed',
        "no git-branch, git-tag or git-desired-commit annotation: the app follows the repository's default branch (targetRevision HEAD)",
      );
    const option = a[RECONCILE_OPTION_ANNOTATION];
    if (option === undefined || option === 'merge' || option === 'mergeAndOwn') {
      this.note(
        subject,
        'changed',
        `reconcile-option ${option ?? 'merge (the default)'}: the Subscription merged its fields into existing resources; Argo CD applies whole resources and reports fields changed by others as drift (use ignoreDifferences, or ServerSideApply=true in syncOptions, for fields other controllers own)`,
      );
    }
    const all = (Array.isArray(sub.spec?.packageOverrides) ? sub.spec.packageOverrides : []).filter(isObj);
    // packageName "kustomization" overrides the kustomization.yaml of the path; any other package is a
    // Helm chart found in the path, named by spec.name (or, without it, taken as the path's last folder).
    const kustomize = all.filter((o) => o.packageName === 'kustomization');
    if (kustomize.length > 0) {
      this.note(
        subject,
        'untranslated',
        'packageOverrides of the kustomization (packageName: kustomization): put them in the kustomization.yaml in the repository, next to the manifests',
      );
    }
    const chart =
      typeof sub.spec?.name === 'string' && sub.spec.name
        ? sub.spec.name
        : ((path ?? '').split('/').filter(Boolean).pop() ?? '');
    const helm = this.helmOverrides(
      subject,
      all.filter((o) => o.packageName !== 'kustomization'),
      chart,
      'the Helm chart in the Git path',
    );
    if (helm.values || helm.releaseName) {
      this.note(
        subject,
        'changed',
        `packageOverrides of chart "${chart}" become the app's Helm ${helm.values ? 'values' : ''}${helm.values && helm.releaseName ? ' and ' : ''}${helm.releaseName ? 'release name' : ''}: Argo CD renders the path as a Helm chart, as the Subscription did`,
      );
    }
    if (sub.spec?.packageFilter !== undefined)
      this.note(
        subject,
        'untranslated',
        'packageFilter on a Git channel (filtering resources by labels or annotations): Argo CD applies every manifest in the path; move the unwanted ones out of it',
      );
    return `AppSource.git(${tsLiteral({ repoURL, path: path ?? '.', ...(revision ? { targetRevision: revision } : {}), ...(helm.releaseName ? { releaseName: helm.releaseName } : {}), ...(helm.values ? { values: helm.values } : {}) }, '    ')})`;
  }

  /**
   * Helm values and release name from packageOverrides entries of `chart`: `{ path: spec, value: {...} }`
   * overrides are values (merged in order), packageAlias the release name; anything else is reported.
   */
  private helmOverrides(
    subject: string,
    entries: readonly Record<string, unknown>[],
    chart: string,
    what: string,
  ): { releaseName?: string; values?: Record<string, JsonValue> } {
    let releaseName: string | undefined;
    let values: Record<string, JsonValue> | undefined;
    for (const entry of entries) {
      if (entry.packageName !== chart) {
        this.note(
          subject,
          'untranslated',
          `packageOverrides for package "${String(entry.packageName)}", which is not ${what} "${chart}"`,
        );
        continue;
      }
      if (typeof entry.packageAlias === 'string' && entry.packageAlias) releaseName = entry.packageAlias;
      for (const o of Array.isArray(entry.packageOverrides) ? entry.packageOverrides : []) {
        if (isObj(o) && o.path === 'spec' && isObj(o.value))
          values = deepMerge(values ?? {}, o.value as Record<string, JsonValue>);
        else
          this.note(
            subject,
            'untranslated',
            `package override ${JSON.stringify(o)} is not Helm values (only { path: spec, value: {...} } is): set it in the chart's values or a values file`,
          );
      }
    }
    return { ...(releaseName ? { releaseName } : {}), ...(values ? { values } : {}) };
  }

  private helmSource(subject: string, sub: Obj, repoURL: string): string | undefined {
    const spec = sub.spec ?? {};
    const chart = typeof spec.name === 'string' ? spec.name : '';
    if (!repoURL) {
      this.note(subject, 'skipped', 'the HelmRepo channel has no spec.pathname (the repository URL)');
      return undefined;
    }
    if (!chart) {
      this.note(
        subject,
        'skipped',
        'no spec.name (the chart): a Subscription that takes every chart a packageFilter matches has no single Argo CD source; write one PullApplicationSet per chart',
      );
      return undefined;
    }
    const filter = isObj(spec.packageFilter) ? spec.packageFilter : {};
    let version = typeof filter.version === 'string' ? filter.version : '';
    if (!version) {
      version = '*';
      this.note(
        subject,
        'changed',
        'no packageFilter.version: the app follows the newest chart version (targetRevision "*"); pin a version to upgrade on purpose',
      );
    } else if (/[xX]$/.test(version)) {
      const constraint = version.replace(/[xX]$/, '*');
      this.note(subject, 'changed', `chart version "${version}" becomes the Helm constraint "${constraint}"`);
      version = constraint;
    }
    if (filter.labelSelector !== undefined || filter.annotations !== undefined || filter.filterRef !== undefined) {
      this.note(
        subject,
        'untranslated',
        'packageFilter labelSelector/annotations/filterRef (chart selection by metadata): the app names its chart directly',
      );
    }
    const { releaseName, values } = this.helmOverrides(
      subject,
      (Array.isArray(spec.packageOverrides) ? spec.packageOverrides : []).filter(isObj),
      chart,
      'the subscribed chart',
    );
    return `AppSource.helm(${tsLiteral({ repoURL, chart, targetRevision: version, ...(releaseName ? { releaseName } : {}), ...(values ? { values } : {}) }, '    ')})`;
  }

  private channelNotes(subject: string, channel: Obj): void {
    const spec = channel.spec ?? {};
    if (isObj(spec.secretRef)) {
      this.note(
        subject,
        'untranslated',
        `channel ${keyOf(channel)} reads with the credentials in Secret ${String(spec.secretRef.name)}: create an Argo CD repository Secret for ${String(spec.pathname)} on each spoke (pullfleet never puts credentials into works or dist/)`,
      );
    }
    if (isObj(spec.configMapRef))
      this.note(
        subject,
        'untranslated',
        `channel ${keyOf(channel)} uses ConfigMap ${String(spec.configMapRef.name)} (CA certificates or settings): configure the repository's TLS in the spoke Argo CD`,
      );
    if (spec.insecureSkipVerify === true)
      this.note(
        subject,
        'untranslated',
        `channel ${keyOf(channel)} skips TLS verification: set insecure on the spoke Argo CD repository Secret if you must`,
      );
  }

  /**
   * The id of the Placement construct for the Subscription (shared between Subscriptions of one rule or
   * placement); `null` when it names no cluster (the app delivers nowhere); undefined when it is skipped.
   */
  private placementFor(subject: string, sub: Obj, ns: string): string | null | undefined {
    const placement = isObj(sub.spec?.placement) ? sub.spec.placement : undefined;
    if (!placement) {
      this.note(subject, 'skipped', 'no spec.placement: the Subscription is not propagated to any managed cluster');
      return undefined;
    }
    if (placement.local === true) {
      this.note(
        subject,
        'skipped',
        'placement.local: true deploys on the hub itself, which is never a pull-delivery target: deploy it with the hub Argo CD directly',
      );
      return undefined;
    }
    const ref = isObj(placement.placementRef) ? placement.placementRef : undefined;
    if (ref) {
      const kind = String(ref.kind ?? 'PlacementRule');
      const name = String(ref.name ?? '');
      const origin = `${kind} ${ns}/${name}`;
      const existing = this.placementPlans.get(origin);
      if (existing) return existing.id;
      const conflict = this.conflicts.get(`${kind === 'Placement' ? 'Placement' : 'PlacementRule'} ${ns}/${name}`);
      if (conflict) {
        this.note(subject, 'skipped', `its ${conflict}: keep the one the hub runs and translate again`);
        return undefined;
      }
      let plan: PlacementPlan | undefined;
      if (kind === 'Placement') {
        const obj = this.placements.get(`${ns}/${name}`);
        if (!obj) {
          this.note(subject, 'skipped', `its Placement ${ns}/${name} is not in the input: include it`);
          return undefined;
        }
        plan = this.fromPlacement(subject, obj, origin);
      } else {
        const obj = this.rules.get(`${ns}/${name}`);
        if (!obj) {
          this.note(subject, 'skipped', `its PlacementRule ${ns}/${name} is not in the input: include it`);
          return undefined;
        }
        plan = this.fromRule(subject, obj.spec ?? {}, origin, name);
      }
      this.placementPlans.set(origin, plan);
      return plan.id;
    }
    const inlineOrigin = `inline placement of Subscription ${subject}`;
    if (!isObj(placement.clusterSelector) && !(Array.isArray(placement.clusters) && placement.clusters.length > 0)) {
      // A migration never widens delivery: a Placement without predicates would select every cluster.
      this.note(
        subject,
        'skipped',
        `its inline placement names no cluster (${placement.local === false ? 'local: false, and ' : ''}no clusters, clusterSelector or placementRef), so it delivers to no managed cluster: nothing that delivers is generated (a Placement without predicates would select every cluster); the translated app is in the code as a comment: give it a Placement that selects the clusters you mean`,
      );
      return null;
    }
    const plan = this.fromRule(subject, placement, inlineOrigin, `${sub.metadata?.name ?? 'app'}-placement`);
    this.placementPlans.set(inlineOrigin, plan);
    return plan.id;
  }

  private fromPlacement(subject: string, obj: Obj, origin: string): PlacementPlan {
    const spec = obj.spec ?? {};
    const plan: PlacementPlan = {
      id: this.uniqueId(obj.metadata?.name ?? 'placement', this.placementIds),
      origin,
      clusterSets: [],
      predicates: [],
      tolerations: [],
      prioritizers: [],
    };
    plan.clusterSets = Array.isArray(spec.clusterSets) ? (spec.clusterSets as string[]).map(String) : [];
    for (const s of plan.clusterSets) this.clusterSetsUsed.add(s);
    for (const p of Array.isArray(spec.predicates) ? spec.predicates : []) {
      const rcs = isObj(p) && isObj(p.requiredClusterSelector) ? p.requiredClusterSelector : {};
      const ls = (isObj(rcs.labelSelector) ? rcs.labelSelector : {}) as Selector;
      const cs = (isObj(rcs.claimSelector) ? rcs.claimSelector : {}) as Selector;
      if (isObj(rcs.celSelector))
        this.note(
          subject,
          'untranslated',
          `${origin}: CEL selector predicates have no PlacementProps equivalent; express them with labels or claims`,
        );
      plan.predicates.push({
        ...(ls.matchLabels && Object.keys(ls.matchLabels).length ? { labels: ls.matchLabels } : {}),
        ...(ls.matchExpressions?.length ? { labelExpressions: ls.matchExpressions } : {}),
        ...(cs.matchExpressions?.length ? { claimExpressions: cs.matchExpressions } : {}),
      });
    }
    if (typeof spec.numberOfClusters === 'number') plan.numberOfClusters = spec.numberOfClusters;
    plan.tolerations = (Array.isArray(spec.tolerations) ? spec.tolerations : []).filter(isObj) as JsonObject[];
    const policy = isObj(spec.prioritizerPolicy) ? spec.prioritizerPolicy : undefined;
    if (policy) {
      if (policy.mode === 'Exact') plan.prioritizerMode = 'EXACT';
      else if (policy.mode === 'Additive') plan.prioritizerMode = 'ADDITIVE';
      for (const c of Array.isArray(policy.configurations) ? policy.configurations : []) {
        const sc = isObj(c) && isObj(c.scoreCoordinate) ? c.scoreCoordinate : {};
        const weight = isObj(c) && typeof c.weight === 'number' ? c.weight : 1;
        if (sc.type === 'AddOn' && isObj(sc.addOn))
          plan.prioritizers.push(
            `Prioritizer.addOn(${tsLiteral(String(sc.addOn.resourceName))}, ${tsLiteral(String(sc.addOn.scoreName))}, ${weight})`,
          );
        else if (typeof sc.builtIn === 'string')
          plan.prioritizers.push(`Prioritizer.builtIn(${tsLiteral(sc.builtIn)}, ${weight})`);
      }
    }
    if (spec.decisionStrategy !== undefined)
      this.note(
        subject,
        'untranslated',
        `${origin}: decisionStrategy (decision groups) has no PlacementProps equivalent yet; roll out with the ApplicationSet's own strategy instead`,
      );
    if (spec.spreadPolicy !== undefined)
      this.note(subject, 'untranslated', `${origin}: spreadPolicy (topology spread) has no PlacementProps equivalent`);
    this.note(
      subject,
      'changed',
      `${origin} becomes Placement "${plan.id}" in the hub's Argo CD namespace (the ApplicationSet generator reads decisions only there): bind its cluster sets to that namespace`,
    );
    return plan;
  }

  /** A PlacementRule spec (or a Subscription's inline placement, which has the same generic fields). */
  private fromRule(subject: string, spec: Record<string, unknown>, origin: string, name: string): PlacementPlan {
    const plan: PlacementPlan = {
      id: this.uniqueId(name, this.placementIds),
      origin,
      clusterSets: [],
      predicates: [],
      tolerations: [],
      prioritizers: [],
    };
    const selector = (isObj(spec.clusterSelector) ? spec.clusterSelector : undefined) as Selector | undefined;
    const clusters = (Array.isArray(spec.clusters) ? spec.clusters : [])
      .map((c) => (isObj(c) ? String(c.name ?? '') : ''))
      .filter(Boolean)
      .sort(cmp);
    const predicate: PlacementPlan['predicates'][number] = {};
    if (selector?.matchLabels && Object.keys(selector.matchLabels).length) predicate.labels = selector.matchLabels;
    const expressions: SelectorRequirement[] = [...(selector?.matchExpressions ?? [])];
    if (clusters.length > 0) {
      expressions.push({ key: CLUSTER_NAME_LABEL, operator: 'In', values: clusters });
      this.note(
        subject,
        'changed',
        `${origin}: the cluster list (${clusters.join(', ')}) becomes a selector on the "${CLUSTER_NAME_LABEL}" label ACM sets on every ManagedCluster; on plain OCM add that label to each cluster`,
      );
    }
    if (expressions.length) predicate.labelExpressions = expressions;
    if (Object.keys(predicate).length) plan.predicates.push(predicate);
    if (!selector && clusters.length === 0) {
      this.note(
        subject,
        'changed',
        `${origin} has neither clusterSelector nor clusters: ACM chose from every managed cluster${typeof spec.clusterReplicas === 'number' ? ` (${spec.clusterReplicas} of them)` : ''}; the Placement generated for it chooses from every cluster of the sets bound to the Argo CD namespace`,
      );
    }
    if (typeof spec.clusterReplicas === 'number') plan.numberOfClusters = spec.clusterReplicas;
    const conditions = (Array.isArray(spec.clusterConditions) ? spec.clusterConditions : []).filter(isObj);
    const defaultOnly = conditions.every((c) => c.type === 'ManagedClusterConditionAvailable' && c.status === 'True');
    if (!defaultOnly) {
      this.note(
        subject,
        'untranslated',
        `${origin}: clusterConditions ${JSON.stringify(conditions)} have no Placement equivalent (a Placement leaves out unavailable clusters through their taints); select on labels or claims instead`,
      );
    }
    const hint = isObj(spec.resourceHint) ? spec.resourceHint : undefined;
    if (hint) {
      const type = String(hint.type ?? '').toLowerCase();
      const builtIn =
        type === 'cpu' ? 'ResourceAllocatableCPU' : type === 'memory' ? 'ResourceAllocatableMemory' : undefined;
      if (builtIn && String(hint.order ?? 'desc').toLowerCase() !== 'asc') {
        plan.prioritizers.push(`Prioritizer.builtIn(${tsLiteral(builtIn)}, 1)`);
        plan.prioritizerMode = 'EXACT';
      } else {
        this.note(
          subject,
          'untranslated',
          `${origin}: resourceHint ${JSON.stringify(hint)} has no prioritizer equivalent (prioritizers prefer the most allocatable ${type || 'resource'}); the Placement uses OCM's default prioritizers`,
        );
      }
    }
    if (Array.isArray(spec.policies) && spec.policies.length > 0)
      this.note(
        subject,
        'untranslated',
        `${origin}: policies (placement by policy compliance) have no Placement equivalent`,
      );
    if (typeof spec.schedulerName === 'string' && spec.schedulerName)
      this.note(subject, 'untranslated', `${origin}: schedulerName ${spec.schedulerName} has no Placement equivalent`);
    this.note(
      subject,
      'changed',
      `${origin} becomes Placement "${plan.id}" in the hub's Argo CD namespace: it selects only from the cluster sets bound to that namespace (declare them as ClusterSets of the hub), where the PlacementRule saw every cluster the Subscription's namespace could reach`,
    );
    return plan;
  }
}

function deepMerge(a: Record<string, JsonValue>, b: Record<string, JsonValue>): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isObj(prev) && isObj(v) ? deepMerge(prev, v) : v;
  }
  return out;
}

/** The enums the generated code may name, with their members by value. */
const ENUMS = { SelectorOperator, TaintEffect, TolerationOperator } as const;

/**
 * The enum member with `value` (`SelectorOperator.IN` for `'In'`), recording the enum in `used`; a value
 * that is no member stays a string, which the generated code's type check then reports.
 */
function enumMember(name: keyof typeof ENUMS, value: unknown, used: Set<string>): unknown {
  const member = Object.entries(ENUMS[name]).find(([, v]) => v === value)?.[0];
  if (member === undefined) return value;
  used.add(name);
  return new TsCode(`${name}.${member}`);
}

/** Label selector requirements with their operator as an enum member. */
function withOperators(requirements: SelectorRequirement[] | undefined, used: Set<string>): unknown {
  return requirements?.map((r) => ({ ...r, operator: enumMember('SelectorOperator', r.operator, used) }));
}

/** The code of one generated Placement; the enums it names are added to `used`. */
function placementCode(plan: PlacementPlan, variable: string, used: Set<string>): string {
  const props: string[] = [];
  if (plan.clusterSets.length)
    props.push(`clusterSets: [${plan.clusterSets.map((s) => `clusterSet(hub, ${tsLiteral(s)})`).join(', ')}]`);
  const predicates = plan.predicates.map((p) => ({
    ...p,
    ...(p.labelExpressions ? { labelExpressions: withOperators(p.labelExpressions, used) } : {}),
    ...(p.claimExpressions ? { claimExpressions: withOperators(p.claimExpressions, used) } : {}),
  }));
  if (predicates.length) props.push(`predicates: ${tsLiteral(predicates, '    ')}`);
  if (plan.numberOfClusters !== undefined) props.push(`numberOfClusters: ${plan.numberOfClusters}`);
  const tolerations = plan.tolerations.map((t) => ({
    ...t,
    ...(t.operator !== undefined ? { operator: enumMember('TolerationOperator', t.operator, used) } : {}),
    ...(t.effect !== undefined ? { effect: enumMember('TaintEffect', t.effect, used) } : {}),
  }));
  if (tolerations.length) props.push(`tolerations: ${tsLiteral(tolerations, '    ')}`);
  if (plan.prioritizers.length) props.push(`prioritizers: [${plan.prioritizers.join(', ')}]`);
  if (plan.prioritizerMode) props.push(`prioritizerMode: PrioritizerMode.${plan.prioritizerMode}`);
  const body = props.length ? `, {\n${props.map((p) => `    ${p},`).join('\n')}\n  }` : '';
  return `  // from ${plan.origin}\n  const ${variable} = new Placement(hub, ${tsLiteral(plan.id)}${body});`;
}

/**
 * Translates Subscriptions (with their Channels, PlacementRules and Placements among `objects`; other
 * objects are ignored) into a TypeScript module exporting `addMigratedApps(hub)`, and a report of what
 * was not translated exactly.
 */
export function translateSubscriptions(
  objects: readonly JsonObject[],
  options: MigrationOptions = {},
): MigrationResult {
  const t = new Translator(objects, options);
  t.run();
  const importFrom = options.importFrom ?? DEFAULT_IMPORT;
  const delivering = t.apps
    .filter((a): a is AppPlan & { placementId: string } => a.placementId !== null)
    .sort((a, b) => cmp(a.id, b.id));
  const nowhere = t.apps.filter((a) => a.placementId === null).sort((a, b) => cmp(a.id, b.id));
  // Only placements some generated app uses (a Subscription skipped after its placement was planned leaves none behind).
  const used = new Set(delivering.map((a) => a.placementId));
  const allPlans = [...t.placementPlans.values()].filter((p) => used.has(p.id)).sort((a, b) => cmp(a.id, b.id));
  const usesPrioritizer = allPlans.some((p) => p.prioritizers.length > 0);
  const usesMode = allPlans.some((p) => p.prioritizerMode);
  const usesSets = allPlans.some((p) => p.clusterSets.length > 0);
  const variables = new Map<string, string>();
  for (const p of allPlans) {
    let v = `${camel(p.id)}Placement`;
    for (let n = 2; [...variables.values()].includes(v); n++) v = `${camel(p.id)}Placement${n}`;
    variables.set(p.id, v);
  }
  const any = delivering.length > 0;
  const enumsUsed = new Set<string>();
  const placementCodes = allPlans.map((p) => placementCode(p, variables.get(p.id)!, enumsUsed));
  const names = any
    ? [
        'AppSource',
        'Placement',
        ...(usesPrioritizer ? ['Prioritizer'] : []),
        ...(usesMode ? ['PrioritizerMode'] : []),
        'PullApplicationSet',
        ...Object.keys(ENUMS).filter((name) => enumsUsed.has(name)),
      ]
    : [];
  const typeNames = ['type Hub', ...(usesSets ? ['type IClusterSet'] : [])];
  const lines: string[] = [];
  lines.push(
    `// Generated by \`pullfleet migrate subscriptions\`${options.sources?.length ? ` from ${options.sources.join(', ')}` : ''}.`,
  );
  lines.push(
    '// Review it and the migration report before committing; then call addMigratedApps(hub) in fleet.config.ts.',
  );
  lines.push(`import { ${[...names, ...typeNames].join(', ')} } from ${tsLiteral(importFrom)};`);
  lines.push('');
  if (usesSets) {
    lines.push('/** A cluster set the fleet already declares (the migrated placements select from it). */');
    lines.push('function clusterSet(hub: Hub, name: string): IClusterSet {');
    lines.push('  const set = hub.clusterSets.find((s) => s.name === name);');
    lines.push(
      '  if (!set) throw new Error(`${hub.node.path}: the migrated placements use cluster set "${name}": declare it (new ClusterSet(hub, \'${name}\')) before addMigratedApps(hub)`);',
    );
    lines.push('  return set;');
    lines.push('}');
    lines.push('');
  }
  lines.push(
    `/** The apps ${delivering.length} ACM Subscription${delivering.length === 1 ? '' : 's'} delivered, as pull ApplicationSets on \`hub\`. */`,
  );
  // Without apps the parameter is unused: the underscore keeps noUnusedParameters quiet.
  lines.push(`export function addMigratedApps(${any ? 'hub' : '_hub'}: Hub): void {`);
  if (!any) lines.push('  // Nothing that delivers could be translated: see the migration report.');
  lines.push(...placementCodes);
  // An app's lines, indented for the function body (the source's own lines already are).
  const appCode = (app: AppPlan, placement: string): string[] =>
    [
      `  new PullApplicationSet(hub, ${tsLiteral(app.id)}, {`,
      `    source: ${app.sourceCode},`,
      `    destinationNamespace: ${tsLiteral(app.destinationNamespace)},`,
      `    placement: ${placement},`,
      ...(app.autoSync === false ? ['    autoSync: false,'] : []),
      "    // resources: [...], the API groups and resources the app's manifests hold (see the migration report)",
      '  });',
    ].flatMap((l) => l.split('\n'));
  for (const app of delivering) {
    lines.push('');
    lines.push(`  // from Subscription ${app.subscription} (channel ${app.channel})`);
    lines.push(...appCode(app, variables.get(app.placementId)!));
  }
  for (const app of nowhere) {
    lines.push('');
    lines.push(
      `  // from Subscription ${app.subscription} (channel ${app.channel}), which names no cluster: left as a`,
    );
    lines.push(
      '  // comment, so it delivers nowhere, as the Subscription did. To deliver it, give it a Placement of your own:',
    );
    lines.push(...appCode(app, 'yourPlacement').map((l) => `  // ${l.slice(2)}`));
  }
  lines.push('}');
  const notes = [...t.notes].sort((a, b) => cmp(a.subject, b.subject));
  const todo: string[] = [];
  if (any) {
    todo.push(
      `declare resources on each app: the generated apps declare none, so their spokes get the destination namespace but no Role in it for the spoke Argo CD, which then cannot create the app's objects there (validate and synth warn about it); list the API groups and resources the manifests hold, for example resources: [{ apiGroup: 'apps', resources: ['deployments'] }, { apiGroup: '', resources: ['services', 'configmaps'] }]`,
    );
  }
  return {
    code: `${lines.join('\n')}\n`,
    notes,
    inputNotes: [...t.inputNotes],
    todo,
    apps: delivering.map((a) => a.id),
    placements: allPlans.map((p) => p.id),
  };
}

/**
 * The report as text: notes about the input, one line per note grouped by subject (a line when
 * everything translated), then what to do before delivering.
 */
export function renderMigrationReport(result: MigrationResult): string {
  const lines = [
    `translated ${result.apps.length} Subscription${result.apps.length === 1 ? '' : 's'} into ${result.apps.length} PullApplicationSet${result.apps.length === 1 ? '' : 's'} and ${result.placements.length} Placement${result.placements.length === 1 ? '' : 's'}`,
  ];
  for (const n of result.inputNotes) lines.push(`input: ${n}`);
  let subject = '';
  for (const n of result.notes) {
    if (n.subject !== subject) {
      subject = n.subject;
      lines.push(`Subscription ${subject}:`);
    }
    lines.push(`  [${n.severity}] ${n.message}`);
  }
  if (result.notes.length === 0) lines.push('everything was translated exactly');
  for (const t of result.todo) lines.push(`to do: ${t}`);
  return `${lines.join('\n')}\n`;
}
