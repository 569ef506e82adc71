import type { Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { type JsonObject } from '../model/core/types.js';
import { type ResourceGrant, type SpokeDelivery } from '../model/delivery/bootstrap.js';
import { type AppDefinition } from '../model/delivery/hub-application.js';
import { grantProblems } from '../model/validation/grants.js';
import { labelKeyRule, qualifiedNameProblem } from '../model/validation/object-rules.js';
import { sortKeys } from '../model/core/records.js';
import { appWarnings, destinationRule, dnsLabelRule, dnsSubdomainRule, labelRule } from '../model/validation/rules.js';
import { APP_SOURCE_CHECK, type AppSource } from './app-source.js';
import { SyncOption } from './sync-option.js';
import { warnDeprecated } from './_deprecation.js';
import { isReservedAppAnnotation } from '../model/core/keys.js';
import { Hub, hubContaining } from './hub.js';
import { claimId, markKind, nameFromId } from './_ids.js';
import type { IPlacement } from './interfaces.js';
import type { SpokeInfo, SpokeOverrides } from './per-spoke.js';
import {
  fn,
  bool,
  checkProps,
  duration,
  num,
  ref,
  recordWarning,
  listOf,
  propReported,
  required,
  shape,
  str,
  stringMap,
  type PropSpec,
  type PropsOf,
} from './_props-check.js';

/** Differences Argo CD ignores when it compares the live resources with the rendered ones (`spec.ignoreDifferences`). */
export interface IgnoreDifference {
  /**
   * API group of the resources (`''` or left out for the core group).
   * @default - the core group
   */
  readonly group?: string;
  /** Kind of the resources, for example `Deployment`. */
  readonly kind: string;
  /**
   * Only the resource of this name.
   * @default - every resource of the kind
   */
  readonly name?: string;
  /**
   * Only resources in this namespace.
   * @default - every namespace
   */
  readonly namespace?: string;
  /**
   * JSON pointers (RFC 6901) of the fields to ignore, each starting with `/`: `/spec/replicas`.
   * @default []
   */
  readonly jsonPointers?: readonly string[];
  /**
   * jq path expressions of the fields to ignore: `.spec.template.spec.containers[] | select(.name == "web").image`.
   * @default []
   */
  readonly jqPathExpressions?: readonly string[];
  /**
   * Ignore every field these field managers own (as `metadata.managedFields` names them): `kube-controller-manager`.
   * @default []
   */
  readonly managedFieldsManagers?: readonly string[];
}

/** How long Argo CD waits between the retries of a failed sync (`spec.syncPolicy.retry.backoff`). */
export interface SyncRetryBackoff {
  /**
   * The wait before the first retry (rendered as Argo CD reads it, such as `5s` or `3m`).
   * @default Duration.seconds(5)
   */
  readonly duration?: Duration;
  /**
   * The factor each wait is multiplied by for the next one (a whole number, 1 or more).
   * @default 2
   */
  readonly factor?: number;
  /**
   * The longest wait.
   * @default Duration.minutes(3)
   */
  readonly maxDuration?: Duration;
}

/** Retries of a failed sync (`spec.syncPolicy.retry`). */
export interface SyncRetry {
  /**
   * How many times a failed sync is retried; a negative number retries without end.
   * @default 0 - no retry (Argo CD's default for a retry block without limit)
   */
  readonly limit?: number;
  /**
   * The waits between retries.
   * @default - 5 s, doubling, at most 3 min
   */
  readonly backoff?: SyncRetryBackoff;
  /**
   * Each retry syncs the latest revision of the source instead of the one the failed sync began with. Argo CD 3.2
   * and later.
   * @default false
   */
  readonly refresh?: boolean;
}

/** Labels and annotations Argo CD puts on the destination namespace it creates (`SyncOption.CREATE_NAMESPACE`). */
export interface ManagedNamespaceMetadata {
  /**
   * Labels of the namespace.
   * @default {}
   */
  readonly labels?: Record<string, string>;
  /**
   * Annotations of the namespace.
   * @default {}
   */
  readonly annotations?: Record<string, string>;
}

/** One line of extra information Argo CD shows with the app (`spec.info`). */
export interface ApplicationInfo {
  /** The label of the line. */
  readonly name: string;
  /** Its text (a URL is shown as a link). */
  readonly value: string;
}

/** Props shared by PullApplication and PullApplicationSet. */
export interface PullAppOptions {
  /**
   * The app name (a DNS label).
   * @default - the construct id
   */
  readonly name?: string;
  /**
   * Where the manifests come from (renders `spec.source`). Give `source` or `sources`, not both.
   * @default - the `sources`
   */
  readonly source?: AppSource;
  /**
   * Several sources (renders `spec.sources`), in the order given; `AppSource.ref` sources let the others read
   * value files from their repository. Give `source` or `sources`, not both.
   * @default - the one `source`
   */
  readonly sources?: readonly AppSource[];
  /** Namespace the app deploys into on each spoke (created by the spoke bootstrap). */
  readonly destinationNamespace: string;
  /**
   * Destination API server. Pulled apps always deploy to their own spoke, so anything but the
   * in-cluster address fails validation.
   * @default 'https://kubernetes.default.svc'
   */
  readonly destinationServer?: string;
  /**
   * Argo CD project on the spoke.
   * @default 'default'
   */
  readonly project?: string;
  /**
   * Sync automatically.
   * @default true
   */
  readonly autoSync?: boolean;
  /**
   * With autoSync: delete resources that left the source.
   * @default true
   */
  readonly prune?: boolean;
  /**
   * With autoSync: revert changes made on the spoke.
   * @default true
   */
  readonly selfHeal?: boolean;
  /**
   * With autoSync and prune: an automated sync may prune every resource of the app (the source rendered nothing).
   * Argo CD refuses such a sync by default, as a guard against an empty or broken source.
   * @default false
   */
  readonly allowEmpty?: boolean;
  /**
   * Argo CD sync options, for example `[SyncOption.SERVER_SIDE_APPLY]`, in the order given. Strings such as
   * `'ServerSideApply=true'` still work but are deprecated: use `SyncOption.custom('ServerSideApply=true')`.
   * @default []
   */
  readonly syncOptions?: ReadonlyArray<SyncOption | string>;
  /**
   * Retries of a failed sync.
   * @default - a failed sync is not retried
   */
  readonly retry?: SyncRetry;
  /**
   * Labels and annotations of the destination namespace, when Argo CD creates it (needs
   * `SyncOption.CREATE_NAMESPACE`).
   * @default - none
   */
  readonly managedNamespaceMetadata?: ManagedNamespaceMetadata;
  /**
   * Differences between the live and the rendered resources that do not make the app OutOfSync, in the order given.
   * @default []
   */
  readonly ignoreDifferences?: readonly IgnoreDifference[];
  /**
   * Annotations on the hub Application, which the spoke copy carries too (notifications subscriptions,
   * `argocd.argoproj.io/manifest-generate-paths`...). Keys pullfleet, OCM or Argo CD set themselves
   * (`pullfleet.io/*`, `apps.open-cluster-management.io/*`, `argocd.argoproj.io/skip-reconcile`,
   * `argocd.argoproj.io/refresh`, ...) are refused.
   * @default {}
   */
  readonly annotations?: Record<string, string>;
  /**
   * Extra information Argo CD shows with the app, in the order given.
   * @default []
   */
  readonly info?: readonly ApplicationInfo[];
  /**
   * How many past syncs Argo CD keeps in the app's history.
   * @default - 10 (Argo CD's default)
   */
  readonly revisionHistoryLimit?: number;
  /**
   * Resources the app renders, by API group: the spoke Argo CD gets exactly these permissions in the
   * destination namespace (or cluster-wide for `clusterScoped` grants).
   * @default []
   */
  readonly resources?: readonly ResourceGrant[];
  /**
   * Delete the app's workload on the spoke when its Application is deleted (Argo CD resources finalizer).
   * @default false
   */
  readonly pruneOnDelete?: boolean;
  /**
   * Extra labels on the hub Application (and the spoke copy).
   * @default {}
   */
  readonly labels?: Record<string, string>;
  /**
   * PullApplication only: what each spoke changes in the sources, computed from the spoke at synth: Helm values
   * (deep-merged: objects merge, arrays and scalars replace), parameters and value files, Kustomize images, name
   * prefix and suffix, common labels and namespace, target revision and path (docs/concepts/per-spoke-values.md).
   * A PullApplicationSet cannot call a function per spoke: use `SpokeParam.label` in its sources.
   * @default - every spoke gets the same spec
   */
  readonly perSpoke?: (spoke: SpokeInfo) => SpokeOverrides;
}

/** A sync option: a {@link SyncOption}, or (deprecated) its string. */
const SYNC_OPTION_CHECK = ref<SyncOption | string>(
  (v) => typeof v === 'string' || SyncOption._isSyncOption(v),
  'a SyncOption',
  'use a member such as SyncOption.SERVER_SIDE_APPLY, or SyncOption.custom("Key=Value")',
);

/** The runtime type of every {@link PullAppOptions} key, shared by PullApplication and PullApplicationSet (see props-check.ts). */
export const PULL_APP_CHECKS: PropSpec<PullAppOptions> = {
  name: str(),
  source: APP_SOURCE_CHECK,
  sources: listOf(APP_SOURCE_CHECK, "[AppSource.helm({ ... }), AppSource.ref('values', { repoURL })]"),
  destinationNamespace: str(),
  destinationServer: str(),
  project: str(),
  autoSync: bool(),
  prune: bool(),
  selfHeal: bool(),
  allowEmpty: bool(),
  syncOptions: listOf(SYNC_OPTION_CHECK, '[SyncOption.SERVER_SIDE_APPLY]'),
  retry: shape<SyncRetry>('retry', {
    limit: num('a whole number'),
    refresh: bool(),
    backoff: shape<SyncRetryBackoff>('retry backoff', {
      duration: duration<Duration>(),
      factor: num('a whole number'),
      maxDuration: duration<Duration>(),
    }),
  }),
  managedNamespaceMetadata: shape<ManagedNamespaceMetadata>('managedNamespaceMetadata', {
    labels: stringMap('label', "{ team: 'web' }"),
    annotations: stringMap('annotation', "{ 'example.com/owner': 'web' }"),
  }),
  ignoreDifferences: listOf(
    shape<IgnoreDifference>('ignoreDifferences entry', {
      group: str(),
      kind: required(str()),
      name: str(),
      namespace: str(),
      jsonPointers: listOf(str(), "['/spec/replicas']"),
      jqPathExpressions: listOf(str(), "['.spec.template.spec.containers[].image']"),
      managedFieldsManagers: listOf(str(), "['kube-controller-manager']"),
    }),
    "[{ group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] }]",
  ),
  annotations: stringMap('annotation', "{ 'example.com/owner': 'web' }"),
  info: listOf(
    shape<ApplicationInfo>('info line', { name: required(str()), value: required(str()) }),
    "[{ name: 'Owner', value: 'team-web' }]",
  ),
  revisionHistoryLimit: num('a whole number'),
  resources: listOf(
    shape<ResourceGrant>('resources grant', {
      apiGroup: required(str()),
      resources: required(listOf(str(), "['deployments']")),
      clusterScoped: bool(),
      kinds: listOf(str(), "['ClusterRole']"),
    }),
    "[{ apiGroup: 'apps', resources: ['deployments'] }]",
  ),
  pruneOnDelete: bool(),
  labels: stringMap('label', "{ team: 'web' }"),
  perSpoke: fn<(spoke: SpokeInfo) => SpokeOverrides>('a function (spoke) => overrides'),
};

/** The deprecation of string sync options (CONTRIBUTING, "deprecated first"). */
const STRING_SYNC_OPTIONS = {
  api: 'PullAppOptions.syncOptions given as strings',
  replacement: "SyncOption members (SyncOption.SERVER_SIDE_APPLY, ...) or SyncOption.custom('Key=Value')",
  removedIn: '0.3.0',
};

/** A Duration in the form Argo CD parses (Go's `time.ParseDuration`): `5s`, `3m`, `1h30m`, `1.5s`, `500ms`. */
export function argoDuration(d: Duration): string {
  return argoMilliseconds(d.toMilliseconds({ integral: false }));
}

function argoMilliseconds(milliseconds: number): string {
  const total = Math.round(milliseconds);
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const ms = total % 60_000;
  const s = ms / 1000;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}

function isWhole(n: number): boolean {
  return Number.isInteger(n);
}

/** `spec.syncPolicy.retry`, and its problems. */
function retryJson(retry: SyncRetry, problems: string[]): JsonObject {
  const out: JsonObject = {};
  if (retry.limit !== undefined) {
    if (!isWhole(retry.limit))
      problems.push(
        `retry.limit ${retry.limit} is not a whole number: give a count such as 5 (negative: retry without end)`,
      );
    out.limit = retry.limit;
  }
  const b = retry.backoff;
  if (b) {
    const backoff: JsonObject = {};
    const ms = (d: Duration | undefined) => (d === undefined ? undefined : d.toMilliseconds({ integral: false }));
    for (const [key, d] of [
      ['duration', b.duration],
      ['maxDuration', b.maxDuration],
    ] as const) {
      const value = ms(d);
      if (value === undefined) continue;
      if (!(value > 0)) problems.push(`retry.backoff.${key} is ${value} ms: give a Duration longer than zero`);
      else backoff[key] = argoDuration(d!);
    }
    if (b.factor !== undefined) {
      if (!isWhole(b.factor) || b.factor < 1)
        problems.push(
          `retry.backoff.factor ${b.factor} is not a whole number of 1 or more (Argo CD reads an integer): give a factor such as 2`,
        );
      backoff.factor = b.factor;
    }
    const first = ms(b.duration) ?? 5000;
    const max = ms(b.maxDuration) ?? 180_000;
    if (first > 0 && max > 0 && max < first)
      problems.push(
        `retry.backoff.maxDuration (${argoMilliseconds(max)}) is shorter than duration (${argoMilliseconds(first)}): the longest wait must be at least the first`,
      );
    // Argo CD's order of the backoff keys: duration, factor, maxDuration.
    const ordered: JsonObject = {};
    for (const key of ['duration', 'factor', 'maxDuration']) if (key in backoff) ordered[key] = backoff[key];
    if (Object.keys(ordered).length) out.backoff = ordered;
  }
  if (retry.refresh !== undefined) out.refresh = retry.refresh;
  return out;
}

/** `spec.ignoreDifferences`, and its problems. */
function ignoreDifferencesJson(list: readonly IgnoreDifference[], problems: string[]): JsonObject[] {
  return list.map((entry, i) => {
    const at = `ignoreDifferences[${i}]`;
    // Argo CD matches group and kind as globs (`*` for every kind), so a glob passes as written.
    const glob = (value: string) => /[*?[]/.test(value);
    if (!glob(entry.kind) && !/^[A-Z][A-Za-z0-9]*$/.test(entry.kind))
      problems.push(
        `${at}.kind "${entry.kind}" is not a Kubernetes kind: use the kind as manifests write it, for example "Deployment"`,
      );
    if (
      entry.group !== undefined &&
      entry.group !== '' &&
      !glob(entry.group) &&
      !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(entry.group)
    )
      problems.push(
        `${at}.group "${entry.group}" is not an API group: use the group alone, for example "apps" (no version)`,
      );
    (entry.jsonPointers ?? []).forEach((pointer, j) => {
      if (!pointer.startsWith('/') || /~[^01]|~$/.test(pointer))
        problems.push(
          `${at}.jsonPointers[${j}] "${pointer}" is not a JSON pointer: start it with "/" and escape "~" and "/" in keys as ~0 and ~1, for example "/spec/replicas"`,
        );
    });
    (entry.jqPathExpressions ?? []).forEach((expr, j) => {
      if (expr.trim().length === 0)
        problems.push(`${at}.jqPathExpressions[${j}] is empty: give a jq path such as ".spec.replicas"`);
    });
    (entry.managedFieldsManagers ?? []).forEach((manager, j) => {
      if (manager.trim().length === 0)
        problems.push(
          `${at}.managedFieldsManagers[${j}] is empty: name a field manager such as "kube-controller-manager"`,
        );
    });
    if (!entry.jsonPointers?.length && !entry.jqPathExpressions?.length && !entry.managedFieldsManagers?.length)
      problems.push(
        `${at} (kind ${entry.kind}) names no field: give jsonPointers, jqPathExpressions or managedFieldsManagers`,
      );
    const out: JsonObject = {};
    if (entry.group !== undefined) out.group = entry.group;
    out.kind = entry.kind;
    if (entry.name !== undefined) out.name = entry.name;
    if (entry.namespace !== undefined) out.namespace = entry.namespace;
    if (entry.jsonPointers?.length) out.jsonPointers = [...entry.jsonPointers];
    if (entry.jqPathExpressions?.length) out.jqPathExpressions = [...entry.jqPathExpressions];
    if (entry.managedFieldsManagers?.length) out.managedFieldsManagers = [...entry.managedFieldsManagers];
    return out;
  });
}

/** The sources of an app, and the problems of using them together. */
function resolveSources(scope: Construct, props: PullAppOptions, name: string, problems: string[]): AppSource[] {
  const isSource = (s: unknown): s is AppSource =>
    typeof s === 'object' && s !== null && typeof (s as { toJson?: unknown }).toJson === 'function';
  const single = props.source;
  const several = Array.isArray(props.sources) ? props.sources.filter(isSource) : undefined;
  if (single !== undefined && props.sources !== undefined) {
    problems.push(
      `app "${name}" has both source and sources: give one source as source, or every source (ref sources too) in sources`,
    );
    return [];
  }
  if (props.sources !== undefined) {
    if (several?.length === 0 && !propReported(scope, 'sources'))
      problems.push(`sources of app "${name}" is empty: give at least one source, or use source`);
    const list = several ?? [];
    // A ref name, and a source name, each once: said with the indexes of both sources. The refs by name.
    const once = (
      keyOf: (s: AppSource) => string | undefined,
      problem: (key: string, a: number, b: number) => string,
    ) => {
      const seen = new Map<string, number>();
      list.forEach((s, i) => {
        const key = keyOf(s);
        if (key === undefined) return;
        const earlier = seen.get(key);
        if (earlier !== undefined) problems.push(problem(key, earlier, i));
        seen.set(key, i);
      });
      return seen;
    };
    const refs = once(
      (s) => s._refName?.(),
      (ref, a, b) =>
        `sources of app "${name}" name the ref "${ref}" twice (sources[${a}] and sources[${b}]): Argo CD refuses the app; give each ref source its own name`,
    );
    once(
      (s) => s._sourceName?.(),
      (source, a, b) =>
        `sources of app "${name}" are both named "${source}" (sources[${a}] and sources[${b}]): Argo CD picks a source by its name; give each source its own name`,
    );
    if (list.length > 0 && list.every((s) => s._refName?.() !== undefined))
      problems.push(
        `sources of app "${name}" are all ref sources, which render nothing: add the source that deploys (AppSource.helm, helmGit, git...)`,
      );
    list.forEach((s, i) => {
      for (const read of s._refsRead?.() ?? [])
        if (!refs.has(read))
          problems.push(
            `sources[${i}] of app "${name}" reads value files from "$${read}", but no source is AppSource.ref('${read}', ...): add that ref source to sources${refs.size ? ` (the refs are ${[...refs.keys()].map((r) => `$${r}`).join(', ')})` : ''}`,
          );
    });
    return list;
  }
  if (!isSource(single)) {
    if (!propReported(scope, 'source'))
      problems.push(
        `source is ${single === undefined ? 'missing' : JSON.stringify(single)}: give the app a source, AppSource.git({ repoURL, path }) or AppSource.helm({ repoURL, chart, targetRevision })`,
      );
    return [];
  }
  if (single._refName?.() !== undefined)
    problems.push(
      `source of app "${name}" is a ref source, which renders nothing by itself: put it in sources beside the source whose value files read it`,
    );
  for (const read of single._refsRead?.() ?? [])
    problems.push(
      `source of app "${name}" reads value files from "$${read}", which only works with several sources: use sources: [<this source>, AppSource.ref('${read}', { repoURL })]`,
    );
  return [single];
}

/** Resolves the shared options once; problems are reported at synth through `node.addValidation`. */
export function resolveApp(
  scope: Construct,
  id: string,
  props: PullAppOptions,
): { def: AppDefinition; grants: ResourceGrant[]; problems: string[] } {
  const name = props.name ?? id;
  const problems: string[] = [];
  const sources = resolveSources(scope, props, name, problems);
  for (const p of [
    dnsLabelRule('app name', name),
    dnsLabelRule('destinationNamespace', props.destinationNamespace),
    destinationRule(props.destinationServer),
  ]) {
    if (p) problems.push(p);
  }
  for (const [key, value] of Object.entries(props.labels ?? {})) {
    const keyProblem = labelKeyRule('app label', key);
    if (keyProblem) problems.push(keyProblem);
    const p = labelRule('app', key, value);
    if (p) problems.push(p);
  }
  for (const source of sources) for (const p of source._problems()) problems.push(`app "${name}": ${p}`);
  const autoSync = props.autoSync ?? true;
  const syncPolicy: JsonObject = {};
  if (autoSync)
    syncPolicy.automated = {
      prune: props.prune ?? true,
      selfHeal: props.selfHeal ?? true,
      // Only when given: an app without it renders as before.
      ...(props.allowEmpty !== undefined ? { allowEmpty: props.allowEmpty } : {}),
    };
  else if (props.allowEmpty !== undefined)
    problems.push(
      `allowEmpty of app "${name}" only applies to automated sync: set autoSync (the default), or remove allowEmpty`,
    );
  const syncOptions = resolveSyncOptions(scope, props, name, problems);
  if (syncOptions.length) syncPolicy.syncOptions = syncOptions;
  if (props.retry) syncPolicy.retry = retryJson(props.retry, problems);
  if (props.managedNamespaceMetadata) {
    const m = props.managedNamespaceMetadata;
    const metadata: JsonObject = {};
    for (const [key, value] of Object.entries(m.labels ?? {})) {
      const p =
        labelKeyRule('managedNamespaceMetadata label', key) ?? labelRule('managedNamespaceMetadata', key, value);
      if (p) problems.push(p);
    }
    for (const key of Object.keys(m.annotations ?? {})) {
      const p = qualifiedNameProblem(key);
      if (p)
        problems.push(`managedNamespaceMetadata annotation key "${key}" ${p}: use a key such as "example.com/owner"`);
    }
    if (m.labels && Object.keys(m.labels).length) metadata.labels = sortKeys(m.labels);
    if (m.annotations && Object.keys(m.annotations).length) metadata.annotations = sortKeys(m.annotations);
    if (!syncOptions.includes(SyncOption.CREATE_NAMESPACE.value))
      problems.push(
        `managedNamespaceMetadata of app "${name}" only applies to a namespace Argo CD creates: add SyncOption.CREATE_NAMESPACE to syncOptions, or remove managedNamespaceMetadata`,
      );
    syncPolicy.managedNamespaceMetadata = metadata;
  }
  const grants: ResourceGrant[] = [];
  for (const grant of props.resources ?? []) {
    const resources = Array.isArray(grant.resources) ? grant.resources : [];
    if (resources.length === 0 || resources.some((r) => r === '*' || r.length === 0)) {
      problems.push(
        `resources grant for API group "${grant.apiGroup}" lists ${JSON.stringify(grant.resources)}: name each resource (no "*", no empty list)`,
      );
    } else if (grant.apiGroup === '*') {
      problems.push('resources grant API group "*" is not allowed: declare each API group the app renders');
    } else {
      problems.push(...grantProblems(grant));
      grants.push(grant);
    }
  }
  const project = props.project ?? 'default';
  const projectProblem = dnsSubdomainRule('project', project);
  if (projectProblem) problems.push(projectProblem);
  for (const grant of grants) {
    const badKind = (grant.kinds ?? []).find((kind) => !/^[A-Z][A-Za-z0-9]*$/.test(kind));
    if (badKind !== undefined)
      problems.push(
        `kind "${badKind}" of the grant for API group "${grant.apiGroup}" is not a Kubernetes kind: use the kind as written in manifests, for example "ClusterRole"`,
      );
    if (grant.clusterScoped && project !== 'default' && !grant.kinds?.length) {
      problems.push(
        `cluster-scoped resources ${JSON.stringify(grant.resources)} of API group "${grant.apiGroup}" are declared without kinds, but project "${project}" admits only the cluster-scoped kinds its AppProject whitelists: add kinds to the grant, for example kinds: ['ClusterRole']`,
      );
    }
  }
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(props.annotations ?? {})) {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) {
      problems.push(`app annotation key "${key}" ${keyProblem}: use a key such as "example.com/owner"`);
      continue;
    }
    if (isReservedAppAnnotation(key)) {
      problems.push(
        `app annotation "${key}" of app "${name}" is a key pullfleet, OCM or Argo CD sets or acts on itself: remove it (pullfleet writes the keys pull delivery needs)`,
      );
      continue;
    }
    annotations[key] = value;
  }
  const info = (props.info ?? []).map((line, i) => {
    if (line.name.trim().length === 0)
      problems.push(`info[${i}].name is empty: give the label of the line, such as "Owner"`);
    return { name: line.name, value: line.value };
  });
  if (
    props.revisionHistoryLimit !== undefined &&
    (!Number.isInteger(props.revisionHistoryLimit) || props.revisionHistoryLimit < 0)
  )
    problems.push(
      `revisionHistoryLimit ${props.revisionHistoryLimit} is not a whole number of 0 or more: give a count such as 10`,
    );
  const ignoreDifferences = ignoreDifferencesJson(props.ignoreDifferences ?? [], problems);
  const def: AppDefinition = {
    name,
    project,
    sources: sources.map((s) => s.toJson()),
    ...(props.sources !== undefined ? { multiSource: true } : {}),
    destinationNamespace: props.destinationNamespace,
    ...(Object.keys(syncPolicy).length ? { syncPolicy } : {}),
    ...(ignoreDifferences.length ? { ignoreDifferences } : {}),
    ...(info.length ? { info } : {}),
    ...(props.revisionHistoryLimit !== undefined ? { revisionHistoryLimit: props.revisionHistoryLimit } : {}),
    pruneOnDelete: props.pruneOnDelete ?? false,
    labels: { ...(props.labels ?? {}) },
    ...(Object.keys(annotations).length ? { annotations: sortKeys(annotations) } : {}),
  };
  return { def, grants, problems };
}

/** The sync options as Argo CD reads them, in the order given; strings warn as deprecated. */
function resolveSyncOptions(scope: Construct, props: PullAppOptions, name: string, problems: string[]): string[] {
  if (props.syncOptions === undefined) return [];
  if (!Array.isArray(props.syncOptions)) {
    if (!propReported(scope, 'syncOptions'))
      problems.push(
        `syncOptions ${JSON.stringify(props.syncOptions)} is not a list: give a list such as [SyncOption.SERVER_SIDE_APPLY]`,
      );
    return [];
  }
  const out: string[] = [];
  const keys = new Map<string, string>();
  for (const option of props.syncOptions as ReadonlyArray<SyncOption | string>) {
    let value: string;
    if (typeof option === 'string') {
      warnDeprecated(scope, STRING_SYNC_OPTIONS);
      // Synth validation checks the string against Argo CD's options (object-rules.ts), as before.
      value = option;
    } else {
      value = option.value;
      for (const p of option._problems()) problems.push(`app "${name}": ${p}`);
    }
    const key = value.split('=')[0];
    const earlier = keys.get(key);
    if (earlier !== undefined)
      problems.push(
        `syncOptions of app "${name}" set ${key} twice ("${earlier}" and "${value}"): Argo CD reads only one; keep the one you mean`,
      );
    else keys.set(key, value);
    out.push(value);
  }
  return out;
}

/** What a spoke's bootstrap needs to know about an app deploying there. */
export function deliveryOf(def: AppDefinition, grants: readonly ResourceGrant[]): SpokeDelivery {
  const repos = def.sources.map((s) => s.repoURL).filter((r): r is string => typeof r === 'string');
  return { namespace: def.destinationNamespace, grants, project: def.project, sourceRepos: repos };
}

/** What PullApplication and PullApplicationSet share: the hub, the resolved app and its problems. */
export abstract class PullAppBase extends Construct {
  /** The app name (a DNS label). */
  public readonly name: string;
  /** The hub the app is delivered from. */
  public readonly hub: Hub;
  /** @internal the resolved app definition, as the subclasses render it. */
  protected readonly app: AppDefinition;
  /** @internal the Kubernetes grants the app's spoke namespace needs. */
  protected readonly grants: ResourceGrant[];
  /** @internal reported at synth through `node.addValidation`. */
  protected readonly problems: string[];

  /** @internal legal but almost certainly wrong; shown by synth and validate, errors with --strict. */
  protected readonly warnings: string[];

  /** @internal only PullApplication and PullApplicationSet extend this class. */
  protected constructor(
    scope: Construct,
    id: string,
    props: PullAppOptions,
    kind: string,
    spec: PropsOf<PullAppOptions>,
  ) {
    super(scope, claimId(scope, kind, id));
    markKind(this, kind);
    this.hub = hubContaining(scope, { kind, id });
    // Subclasses read their own props back with checkedProps(this).
    props = checkProps(this, spec, props);
    const sources = [props.source, ...(Array.isArray(props.sources) ? props.sources : [])];
    for (const source of sources)
      for (const w of source?._warnings?.() ?? [])
        recordWarning(this, this.node.path, `app "${nameFromId(this, id)}": ${w}`);
    const resolved = resolveApp(this, nameFromId(this, id), props);
    this.warnings = appWarnings(resolved.def, this.hub.argoNamespace, resolved.grants);
    this.name = resolved.def.name;
    this.app = resolved.def;
    this.grants = resolved.grants;
    this.problems = resolved.problems;
    this.node.addValidation({ validate: () => [...this.problems] });
  }

  /** The resolved app definition (source, destination, sync policy): a copy, which changes nothing rendered. */
  public get definition(): AppDefinition {
    return JSON.parse(JSON.stringify(this.app)) as AppDefinition;
  }

  /** @internal legal but almost certainly wrong (shown by synth and validate; errors with --strict). */
  public _warnings(): string[] {
    return [...this.warnings];
  }

  /** @internal true when `placement` is on this app's hub; otherwise records why not and returns false. */
  protected placementOnThisHub(placement: IPlacement): boolean {
    if (placement.hub === this.hub) return true;
    this.problems.push(
      `placement "${placement.node.path}" belongs to hub "${placement.hub.name}", not "${this.hub.name}": use a placement of this hub`,
    );
    return false;
  }

  /** @internal what a target spoke's bootstrap needs to know about this app. */
  protected delivery(): SpokeDelivery {
    return deliveryOf(this.app, this.grants);
  }
}
