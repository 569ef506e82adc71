/**
 * Argo CD Applications and ApplicationSets (as teams keep them in Git) translated into pullfleet construct
 * code: a PullApplication per Application that targets one managed cluster (pull-labelled for
 * argocd-pull-integration / ACM, or a push-model Application whose destination names the cluster), a
 * PullApplicationSet per ApplicationSet whose only generator is clusterDecisionResource on an OCM
 * Placement's decisions, and a Placement per OCM Placement those use. Pure and deterministic: the same
 * documents in any order give the same code and the same report, which says what carried over exactly,
 * what changed and why, and what was skipped or left out and why.
 */
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { canonicalJson } from '../model/core/canonical-json.js';
import {
  ARGOCD_RESOURCES_FINALIZER,
  DELIVERY_ANNOTATION,
  DELIVERY_WAVED,
  DESTINATION_NAME_ANNOTATION,
  DESTINATION_SERVER_ANNOTATION,
  isReservedAppAnnotation,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MANAGED_CLUSTER_ANNOTATION,
  PLACEMENT_LABEL,
  PULL_LABEL,
  PULLFLEET_PREFIX,
  SKIP_RECONCILE_ANNOTATION,
  SPOKE_APP_NAMESPACE_ANNOTATION,
} from '../model/core/keys.js';
import {
  applySourceOverride,
  spokeLabelMatrix,
  spokeLabelsRead,
  unmirroredLabelKey,
  type SourceOverrideJson,
} from '../model/delivery/per-spoke.js';
import { ROLLOUT_ANNOTATION } from '../model/rollout/policy.js';
import { toDnsLabel } from '../model/core/names.js';
import type { JsonObject } from '../model/core/types.js';
import { DEFAULT_IMPORT, type MigrationSeverity } from './subscriptions.js';
import { TsCode, tsLiteral } from './ts-literal.js';

export { DEFAULT_IMPORT, type MigrationSeverity };

const APP_NAMESPACE_ANNOTATION = SPOKE_APP_NAMESPACE_ANNOTATION;
const RESOURCES_FINALIZER = ARGOCD_RESOURCES_FINALIZER;
const IN_CLUSTER = 'https://kubernetes.default.svc';
const PLACEMENT_GROUP = 'cluster.open-cluster-management.io';

/** One YAML document read from a file, with where it was. */
export interface SourceDocument {
  /** The file it was read from. */
  readonly file: string;
  /** 1-based position of the document in the file (`kind: List` items are `<document>.<item>`). */
  readonly index: string;
  readonly object: JsonObject;
}

/** Input that cannot be translated at all: names the file, the document and the field. */
export class MigrationInputError extends Error {
  constructor(
    readonly file: string,
    readonly index: string,
    readonly field: string,
    problem: string,
  ) {
    super(`${file}, document ${index}: ${field} ${problem}`);
    this.name = 'MigrationInputError';
  }
}

/** Kinds of the argoproj.io group that are read without being translated (anything else there is an error). */
const IGNORED_ARGO_KINDS = new Set(['AppProject']);

/**
 * Every object in the YAML `texts` (multi-document; `kind: List` unwrapped), with its file and document
 * position. Throws a {@link MigrationInputError} for text that is not YAML, a document that is not an
 * object, or one without apiVersion or kind.
 */
export function parseDocuments(texts: ReadonlyArray<{ file: string; text: string }>): SourceDocument[] {
  const out: SourceDocument[] = [];
  for (const { file, text } of texts) {
    const docs = parseAllDocumentsSafe(text);
    docs.forEach((doc, i) => {
      const index = String(i + 1);
      if (doc.error) throw new MigrationInputError(file, index, '(document)', `is not valid YAML: ${doc.error}`);
      const value = doc.value;
      if (value === null || value === undefined) return;
      if (typeof value !== 'object' || Array.isArray(value))
        throw new MigrationInputError(
          file,
          index,
          '(document)',
          'is not a Kubernetes object: give a mapping with apiVersion and kind',
        );
      const obj = value as JsonObject;
      const items =
        obj.kind === 'List' && Array.isArray(obj.items)
          ? (obj.items as unknown[]).map((item, j) => ({ item, index: `${index}.${j + 1}` }))
          : [{ item: obj as unknown, index }];
      for (const { item, index: at } of items) {
        if (typeof item !== 'object' || item === null || Array.isArray(item))
          throw new MigrationInputError(file, at, '(document)', 'is not a Kubernetes object');
        const o = item as JsonObject;
        for (const field of ['apiVersion', 'kind'] as const)
          if (typeof o[field] !== 'string' || !o[field])
            throw new MigrationInputError(file, at, field, 'is missing: every document must be a Kubernetes object');
        out.push({ file, index: at, object: o });
      }
    });
  }
  return out;
}

function parseAllDocumentsSafe(text: string): Array<{ value?: unknown; error?: string }> {
  return parseAllDocuments(text).map((d) =>
    'errors' in d && d.errors.length ? { error: d.errors[0].message } : { value: d.toJS() as unknown },
  );
}

// ------------------------------------------------------------------ code literals

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A TypeScript literal, as the generated fleet code writes it (one line up to 90 characters). */
function lit(value: unknown, indent = ''): string {
  return tsLiteral(value, indent, { width: 90 });
}

function camel(id: string, suffix: string): string {
  const parts = id.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const name = parts
    .map((p, i) => (i === 0 ? p.toLowerCase() : p[0].toUpperCase() + p.slice(1).toLowerCase()))
    .join('');
  return `${/^[0-9]/.test(name) ? `p${name}` : name}${suffix}`;
}

// ------------------------------------------------------------------ durations

/** A Go / Argo CD duration (`5s`, `3m`, `1h30m`, a bare number of seconds) as cdk8s `Duration` code. */
export function durationCode(value: unknown): TsCode | undefined {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (/^\d+$/.test(text)) return new TsCode(`Duration.seconds(${Number(text)})`);
  const unitMs: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  const re = /(\d+)(ms|h|m|s)/g;
  let ms = 0;
  let consumed = '';
  for (let m = re.exec(text); m; m = re.exec(text)) {
    ms += Number(m[1]) * unitMs[m[2]];
    consumed += m[0];
  }
  if (!text || consumed !== text) return undefined;
  if (ms % 3_600_000 === 0) return new TsCode(`Duration.hours(${ms / 3_600_000})`);
  if (ms % 60_000 === 0) return new TsCode(`Duration.minutes(${ms / 60_000})`);
  if (ms % 1000 === 0) return new TsCode(`Duration.seconds(${ms / 1000})`);
  return new TsCode(`Duration.millis(${ms})`);
}

// ------------------------------------------------------------------ notes and results

export interface AppMigrationNote {
  /** `Application ns/name`, `ApplicationSet ns/name` or `Placement ns/name`. */
  readonly subject: string;
  readonly severity: MigrationSeverity;
  /** What was not (or not exactly) translated, why, and what to do instead. */
  readonly message: string;
}

export interface AppMigrationOptions {
  /** Module the generated code imports the constructs from. @default 'pullfleet' */
  readonly importFrom?: string;
  /** Where the input came from (file names), for the header comment. @default [] */
  readonly sources?: readonly string[];
  /**
   * Managed cluster of a push-model destination, by `destination.name` or `destination.server`
   * (`https://kubernetes.default.svc=local-cluster`).
   * @default {} - a destination name is the cluster name; a server URL is not translated
   */
  readonly clusters?: Readonly<Record<string, string>>;
}

export interface AppMigrationResult {
  /** TypeScript source of a module exporting `addMigratedApps(hub)`. */
  readonly code: string;
  /** Everything not translated exactly, sorted by subject. */
  readonly notes: readonly AppMigrationNote[];
  /** Subjects translated exactly (no note), sorted. */
  readonly exact: readonly string[];
  /** About the input as a whole (documents read and not translated, objects given more than once). */
  readonly inputNotes: readonly string[];
  /** What to do before delivering the generated apps. */
  readonly todo: readonly string[];
  /** Names of the generated PullApplications. */
  readonly applications: readonly string[];
  /** Names of the generated PullApplicationSets. */
  readonly applicationSets: readonly string[];
  /** Names of the generated Placements. */
  readonly placements: readonly string[];
  /** How many Applications and ApplicationSets were read. */
  readonly read: { readonly applications: number; readonly applicationSets: number };
}

interface Doc extends SourceDocument {
  readonly kind: 'Application' | 'ApplicationSet' | 'Placement';
  readonly namespace: string;
  readonly name: string;
}

/** A PullApplication the code declares (Applications of one app with one spec, or with per-spoke overrides). */
interface StaticApp {
  readonly id: string;
  readonly base: string;
  readonly name: string;
  props: string[];
  clusters: string[];
  origins: string[];
  /** Code before the construct (the per-spoke overrides). */
  preamble?: string[];
}

/** One Application a static app delivers, as read. */
interface StaticMember {
  app: StaticApp;
  readonly cluster: string;
  readonly subject: string;
  readonly docName: string;
  readonly spec: Record<string, unknown>;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly meta: Record<string, unknown>;
  /** Everything but the sources that decides the construct's props, as canonical JSON. */
  readonly rest: string;
}

/** One generated construct, as code lines (without indentation of the function body). */
interface Emitted {
  readonly sortKey: string;
  readonly comment: string;
  readonly lines: string[];
}

const APP_SPEC_KEYS = new Set([
  'project',
  'source',
  'sources',
  'destination',
  'syncPolicy',
  'ignoreDifferences',
  'info',
  'revisionHistoryLimit',
]);
const SOURCE_KEYS = new Set([
  'name',
  'repoURL',
  'path',
  'targetRevision',
  'chart',
  'ref',
  'helm',
  'kustomize',
  'directory',
  'plugin',
]);
const HELM_KEYS = [
  'valueFiles',
  'ignoreMissingValueFiles',
  'parameters',
  'fileParameters',
  'values',
  'valuesObject',
  'skipCrds',
  'skipSchemaValidation',
  'releaseName',
  'namespace',
  'version',
  'passCredentials',
  'skipTests',
  'kubeVersion',
  'apiVersions',
];
const KUSTOMIZE_KEYS = [
  'images',
  'namePrefix',
  'nameSuffix',
  'commonLabels',
  'commonAnnotations',
  'namespace',
  'replicas',
  'patches',
  'components',
  'version',
  'forceCommonLabels',
  'labelWithoutSelector',
  'labelIncludeTemplates',
  'forceCommonAnnotations',
  'commonAnnotationsEnvsubst',
  'ignoreMissingComponents',
  'kubeVersion',
  'apiVersions',
];
const SYNC_OPTIONS: Record<string, string> = {
  'ServerSideApply=true': 'SyncOption.SERVER_SIDE_APPLY',
  'CreateNamespace=true': 'SyncOption.CREATE_NAMESPACE',
  'PruneLast=true': 'SyncOption.PRUNE_LAST',
  'ApplyOutOfSyncOnly=true': 'SyncOption.APPLY_OUT_OF_SYNC_ONLY',
  'RespectIgnoreDifferences=true': 'SyncOption.RESPECT_IGNORE_DIFFERENCES',
  'Replace=true': 'SyncOption.REPLACE',
  'FailOnSharedResource=true': 'SyncOption.FAIL_ON_SHARED_RESOURCE',
  'SkipDryRunOnMissingResource=true': 'SyncOption.SKIP_DRY_RUN_ON_MISSING_RESOURCE',
  'Validate=false': 'SyncOption.VALIDATE_FALSE',
};
const IGNORE_DIFFERENCE_KEYS = [
  'group',
  'kind',
  'name',
  'namespace',
  'jsonPointers',
  'jqPathExpressions',
  'managedFieldsManagers',
];

/**
 * A label, annotation or finalizer key pullfleet writes itself (`pullfleet.io/…`, and `app.kubernetes.io/managed-by:
 * pullfleet`): left out of the generated code, as pullfleet renders its own again.
 */
function isPullfleetKey(key: string, value?: string): boolean {
  return key.startsWith(PULLFLEET_PREFIX) || (key === MANAGED_BY_LABEL && value === MANAGED_BY_VALUE);
}

/** Go's strconv.ParseBool true values (how the pull controller reads the label). */
const TRUE_VALUES = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/** Where `{{` appears in `value`: each string, with its field path below `at`. */
function templatedStrings(value: unknown, at: string): Array<{ path: string; text: string }> {
  if (typeof value === 'string') return value.includes('{{') ? [{ path: at, text: value }] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => templatedStrings(v, `${at}[${i}]`));
  if (isObj(value)) return Object.entries(value).flatMap(([k, v]) => templatedStrings(v, `${at}.${k}`));
  return [];
}

const TEMPLATE_TAG = /\{\{([^{}]*)\}\}/g;
/** Fields of a template's source whose strings may hold spoke parameters (SpokeParam), as the constructs take them. */
const SPOKE_PARAM_FIELD = /^spec\.template\.spec\.(?:source|sources\[\d+\])\.(?!(?:repoURL|chart|ref)$)/;

/**
 * The SpokeParam a template tag is (`name`: SpokeParam.NAME; with `labels`, a spoke label pullfleet mirrors onto
 * cluster Secrets: SpokeParam.label), as code, or undefined.
 */
function spokeParamCode(tag: string, labels: boolean): string | undefined {
  if (tag === 'name') return 'SpokeParam.NAME';
  const mirrored = /^metadata\.labels\.(.+)$/.exec(tag)?.[1];
  const key = labels && mirrored && spokeLabelsRead(`{{${tag}}}`).length ? unmirroredLabelKey(mirrored) : undefined;
  return key === undefined ? undefined : `SpokeParam.label(${lit(key)})`;
}

/** Whether every tag of `text` is a spoke parameter. */
function onlySpokeParams(text: string, labels: boolean): boolean {
  return [...text.matchAll(TEMPLATE_TAG)].every((m) => spokeParamCode(m[1], labels) !== undefined);
}

/** A string with spoke parameters as code: the SpokeParam alone, or a template literal around them. */
function withSpokeParamCode(text: string): TsCode {
  const whole = /^\{\{([^{}]*)\}\}$/.exec(text);
  if (whole) return new TsCode(spokeParamCode(whole[1], true)!);
  const escape = (part: string) => part.replace(/[\\`]/g, '\\$&').replace(/\$\{/g, '\\${');
  let out = '';
  let last = 0;
  for (const m of text.matchAll(TEMPLATE_TAG)) {
    out += `${escape(text.slice(last, m.index))}\${${spokeParamCode(m[1], true)!}}`;
    last = m.index + m[0].length;
  }
  return new TsCode(`\`${out}${escape(text.slice(last))}\``);
}

class Translator {
  readonly notes: AppMigrationNote[] = [];
  readonly inputNotes: string[] = [];
  readonly emitted: Emitted[] = [];
  readonly placementCode = new Map<string, Emitted & { variable: string }>();
  readonly applications: string[] = [];
  readonly applicationSets: string[] = [];
  readonly subjects: string[] = [];
  readonly used = new Set<string>();
  private readonly ids = new Set<string>();
  private readonly placementIds = new Set<string>();
  private readonly docs: Doc[] = [];
  private readonly placements = new Map<string, Doc>();
  /** Placements made from a cluster generator (not in the input), by key: the ApplicationSet they come from. */
  private readonly madePlacements = new Map<string, string>();
  private readonly usedPlacements = new Set<string>();
  /** While an ApplicationSet's template is translated: strings with spoke parameters become SpokeParam code. */
  private spokeParams = false;
  /** Subjects whose pullfleet keys were left out. */
  private readonly renderedByPullfleet = new Set<string>();
  readonly read = { applications: 0, applicationSets: 0 };
  private readonly staticApps: StaticApp[] = [];
  /** Each Application a static app delivers, as read (for apps whose clusters differ in per-spoke values). */
  private readonly members: StaticMember[] = [];

  constructor(
    documents: readonly SourceDocument[],
    private readonly options: AppMigrationOptions,
  ) {
    const ignored = new Map<string, number>();
    const groups = new Map<string, Doc[]>();
    for (const d of documents) {
      const o = d.object;
      const group = String(o.apiVersion).split('/')[0];
      const kind = String(o.kind);
      let k: Doc['kind'] | undefined;
      if (group === 'argoproj.io' && (kind === 'Application' || kind === 'ApplicationSet')) k = kind;
      else if (group === PLACEMENT_GROUP && kind === 'Placement') k = 'Placement';
      else if (group === 'argoproj.io' && !IGNORED_ARGO_KINDS.has(kind))
        throw new MigrationInputError(
          d.file,
          d.index,
          'kind',
          `"${kind}" is not an Argo CD kind this command reads: give Application and ApplicationSet documents (AppProjects are read and left as they are)`,
        );
      if (!k) {
        ignored.set(kind, (ignored.get(kind) ?? 0) + 1);
        continue;
      }
      const meta = isObj(o.metadata) ? o.metadata : undefined;
      if (!meta || typeof meta.name !== 'string' || !meta.name)
        throw new MigrationInputError(d.file, d.index, 'metadata.name', `is missing: every ${kind} needs a name`);
      if (k !== 'Placement') this.checkRequired(d, k);
      const doc: Doc = {
        ...d,
        kind: k,
        name: meta.name,
        namespace: typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : 'argocd',
      };
      const key = `${k} ${doc.namespace}/${doc.name}`;
      groups.set(key, [...(groups.get(key) ?? []), doc]);
    }
    if (ignored.size)
      this.inputNotes.push(
        `read and not translated (pullfleet renders its own or they stay as they are): ${[...ignored.entries()]
          .sort(([a], [b]) => cmp(a, b))
          .map(([kind, n]) => `${n} ${kind}`)
          .join(', ')}`,
      );
    for (const key of [...groups.keys()].sort(cmp)) {
      const list = groups.get(key)!;
      const where = list.map((d) => `${d.file} document ${d.index}`).join(' and ');
      if (list.length > 1) {
        if (new Set(list.map((d) => canonicalJson(d.object))).size === 1)
          this.inputNotes.push(`${key} is given ${list.length} times (${where}), identically: translated once`);
        else {
          this.inputNotes.push(
            `${key} is given ${list.length} times (${where}), differently: neither is translated; keep the one the hub runs and translate again`,
          );
          continue;
        }
      }
      const doc = list[0];
      if (doc.kind === 'Placement') this.placements.set(`${doc.namespace}/${doc.name}`, doc);
      else this.docs.push(doc);
    }
  }

  /** Fields without which a document is not an Application / ApplicationSet at all: errors, not notes. */
  private checkRequired(d: SourceDocument, kind: 'Application' | 'ApplicationSet'): void {
    const fail = (field: string, problem: string): never => {
      throw new MigrationInputError(d.file, d.index, field, problem);
    };
    const spec = d.object.spec;
    if (!isObj(spec)) fail('spec', `is missing: an ${kind} needs a spec`);
    let appSpec = spec as Record<string, unknown>;
    let at = 'spec';
    if (kind === 'ApplicationSet') {
      if (!Array.isArray(appSpec.generators) || appSpec.generators.length === 0)
        fail('spec.generators', 'is missing or empty: an ApplicationSet needs a generator');
      const template = appSpec.template;
      if (!isObj(template) || !isObj(template.spec))
        fail('spec.template.spec', 'is missing: an ApplicationSet needs a template');
      appSpec = (template as { spec: Record<string, unknown> }).spec;
      at = 'spec.template.spec';
    }
    const sources = Array.isArray(appSpec.sources) ? appSpec.sources : undefined;
    if (!isObj(appSpec.source) && !sources?.length)
      fail(`${at}.source`, 'is missing: give spec.source (or spec.sources)');
    (sources ?? [appSpec.source]).forEach((s, i) => {
      const field = sources ? `${at}.sources[${i}]` : `${at}.source`;
      if (!isObj(s)) fail(field, 'is not an object');
      if (typeof (s as Record<string, unknown>).repoURL !== 'string' || !(s as Record<string, unknown>).repoURL)
        fail(`${field}.repoURL`, 'is missing: every source needs the repository URL');
    });
    if (!isObj(appSpec.destination))
      fail(`${at}.destination`, 'is missing: give the destination namespace and cluster');
  }

  private note(subject: string, severity: MigrationSeverity, message: string): void {
    this.notes.push({ subject, severity, message });
  }

  /** A construct id from `base` not yet in `taken` (app names are unique on a hub; Placements have their own). */
  private uniqueId(base: string, taken: Set<string> = this.ids): string {
    let id = toDnsLabel(base, 50);
    for (let n = 2; taken.has(id); n++) id = `${toDnsLabel(base, 46)}-${n}`;
    taken.add(id);
    return id;
  }

  run(): void {
    for (const doc of this.docs) {
      const subject = `${doc.kind} ${doc.namespace}/${doc.name}`;
      this.subjects.push(subject);
      if (doc.kind === 'Application') {
        this.read.applications++;
        this.application(doc, subject);
      } else {
        this.read.applicationSets++;
        this.applicationSet(doc, subject);
      }
    }
    this.emitStaticApps();
    if (this.renderedByPullfleet.size)
      this.inputNotes.push(
        `${this.renderedByPullfleet.size} of the objects were rendered by pullfleet: its own labels, annotations, finalizers and preserved fields (${PULLFLEET_PREFIX}…, ${MANAGED_BY_LABEL}: ${MANAGED_BY_VALUE}) are left out, as pullfleet renders them again`,
      );
    const unused = [...this.placements.keys()].filter((k) => !this.usedPlacements.has(k)).sort(cmp);
    if (unused.length)
      this.inputNotes.push(
        `Placement${unused.length === 1 ? '' : 's'} ${unused.join(', ')} ${unused.length === 1 ? 'is' : 'are'} used by no translated ApplicationSet: not translated`,
      );
  }

  // ---------------------------------------------------------------- Application

  private application(doc: Doc, subject: string): void {
    const o = doc.object;
    const meta = o.metadata as Record<string, unknown>;
    const labels = { ...((isObj(meta.labels) ? meta.labels : {}) as Record<string, string>) };
    const annotations = { ...((isObj(meta.annotations) ? meta.annotations : {}) as Record<string, string>) };
    const spec = o.spec as Record<string, unknown>;
    const destination = spec.destination as Record<string, unknown>;
    const pull = labels[PULL_LABEL] !== undefined && TRUE_VALUES.has(labels[PULL_LABEL]);
    let cluster: string | undefined;
    if (pull) {
      cluster = annotations[MANAGED_CLUSTER_ANNOTATION];
      if (!cluster) {
        this.note(
          subject,
          'skipped',
          `it has the pull label but no ${MANAGED_CLUSTER_ANNOTATION} annotation, so the pull controller delivers it nowhere: add the annotation with the target cluster and translate again`,
        );
        return;
      }
      const appNs = annotations[APP_NAMESPACE_ANNOTATION];
      if (appNs && appNs !== doc.namespace)
        this.note(
          subject,
          'changed',
          `the spoke copy goes to the hub's Argo CD namespace (pullfleet puts every pulled Application there), not ${appNs} (${APP_NAMESPACE_ANNOTATION})`,
        );
      for (const a of [DESTINATION_NAME_ANNOTATION, DESTINATION_SERVER_ANNOTATION])
        if (annotations[a])
          this.note(
            subject,
            'untranslated',
            `annotation ${a}: ${annotations[a]} (a spoke destination override) has no pullfleet equivalent: the spoke copy deploys to ${IN_CLUSTER}`,
          );
      this.destinationNotes(subject, destination, 'spec.destination');
    } else {
      if (labels[PULL_LABEL] !== undefined)
        this.note(
          subject,
          'changed',
          `label ${PULL_LABEL}: "${labels[PULL_LABEL]}" is not true (Go ParseBool): read as a push-model Application`,
        );
      const target = this.pushTarget(subject, destination);
      if (!target) return;
      cluster = target;
    }
    for (const k of [PULL_LABEL]) delete labels[k];
    for (const k of [
      MANAGED_CLUSTER_ANNOTATION,
      APP_NAMESPACE_ANNOTATION,
      SKIP_RECONCILE_ANNOTATION,
      DESTINATION_NAME_ANNOTATION,
      DESTINATION_SERVER_ANNOTATION,
    ])
      delete annotations[k];
    this.reservedKeys(subject, labels, annotations, 'metadata');
    // The hub Application of a static app is named <app>-<cluster>: a name already ending so keeps it; a
    // name starting with the cluster (as ApplicationSets name theirs) drops it from the app name.
    const suffix = `-${cluster}`;
    const prefix = `${cluster}-`;
    const base =
      doc.name.endsWith(suffix) && doc.name.length > suffix.length
        ? doc.name.slice(0, -suffix.length)
        : doc.name.startsWith(prefix) && doc.name.length > prefix.length
          ? doc.name.slice(prefix.length)
          : doc.name;
    const props = this.appProps(subject, spec, 'spec', labels, annotations, meta);
    if (!props) return;
    // Applications of one app on several clusters (guestbook-east, guestbook-west) with the same spec are one
    // PullApplication delivered to each; a different spec under the same app name is an app of its own.
    const origin = `${subject} (${doc.file}, document ${doc.index})`;
    const same = this.staticApps.find((a) => a.base === base && a.props.join('\n') === props.join('\n'));
    let app = same;
    if (same?.clusters.includes(cluster)) {
      this.note(
        subject,
        'skipped',
        `${same.origins[0]} already delivers app "${same.name}" to cluster ${cluster} with the same spec`,
      );
      return;
    }
    if (!app) {
      const id = this.uniqueId(base);
      app = { id, base, name: id, props, clusters: [], origins: [] };
      this.staticApps.push(app);
      if (id !== base)
        this.note(
          subject,
          'changed',
          `another Application also becomes app "${base}", with a different spec: this one is app "${id}"`,
        );
    }
    app.clusters.push(cluster);
    this.members.push({
      app,
      cluster,
      subject,
      docName: doc.name,
      spec,
      labels,
      annotations,
      meta,
      rest: canonicalJson({
        spec: {
          ...Object.fromEntries(
            Object.entries(spec).filter(([k]) => k !== 'source' && k !== 'sources' && k !== 'destination'),
          ),
          namespace: (spec.destination as Record<string, unknown>).namespace,
          sourceCount: Array.isArray(spec.sources) ? spec.sources.length : 'one',
        },
        labels,
        annotations,
        finalizers: meta.finalizers ?? [],
        operation: meta.operation !== undefined,
      }),
    });
    app.origins.push(origin);
    if (`${app.name}${suffix}` !== doc.name) this.renamedNote(subject, app.name, cluster, doc.name);
  }

  private renamedNote(subject: string, app: string, cluster: string, was: string): void {
    this.note(
      subject,
      'changed',
      `its hub Application is named "${app}-${cluster}", not "${was}": pullfleet names a static app's hub Application <app>-<cluster> (app "${app}")`,
    );
  }

  /** The code of the PullApplications, once every Application has been read. */
  private emitStaticApps(): void {
    for (const base of [...new Set(this.staticApps.map((a) => a.base))]) this.mergePerSpoke(base);
    for (const app of this.staticApps) {
      this.used.add('PullApplication').add('spoke');
      this.applications.push(app.id);
      const spokes = [...app.clusters].sort(cmp).map((c) => `spoke(hub, ${lit(c)})`);
      const lines = [
        ...(app.preamble ?? []),
        `new PullApplication(hub, ${lit(app.id)}, {`,
        ...app.props,
        `  spokes: [${spokes.join(', ')}],`,
        "  // resources: [...], the API groups and resources the app's manifests hold (see the migration report)",
        '});',
      ];
      this.emitted.push({ sortKey: `2 ${app.id}`, comment: `from ${app.origins.join('; ')}`, lines });
    }
  }

  /**
   * The apps made of Applications named `base` (one per spec) as one PullApplication with `perSpoke`, when their
   * specs differ only in what per-spoke overrides express (checked by applying them as the constructs do). The
   * notes that named them apps of their own go; the code renders each Application as it was.
   */
  private mergePerSpoke(base: string): void {
    const apps = this.staticApps.filter((a) => a.base === base);
    if (apps.length < 2) return;
    const members = this.members.filter((m) => apps.includes(m.app));
    if (new Set(members.map((m) => m.rest)).size !== 1) return;
    if (new Set(members.map((m) => m.cluster)).size !== members.length) return;
    const sourcesOf = (spec: Record<string, unknown>) =>
      (Array.isArray(spec.sources) ? spec.sources : [spec.source]) as JsonObject[];
    const split = perSpokeSplit(members.map((m) => sourcesOf(m.spec)));
    if (!split) return;
    const first = members[0];
    const multi = Array.isArray(first.spec.sources);
    const baseSpec = multi ? { ...first.spec, sources: split.base } : { ...first.spec, source: split.base[0] };
    // The notes of the base spec are those already given for each Application: not given again.
    const mark = this.notes.length;
    const props = this.appProps(
      first.subject,
      baseSpec,
      'spec',
      { ...first.labels },
      { ...first.annotations },
      first.meta,
    );
    this.notes.length = mark;
    if (!props) return;
    const overrides: Record<string, unknown> = {};
    members.forEach((m, i) => {
      const bySource = split.overrides[i];
      const entries = bySource.flatMap((o, j) => {
        if (!o) return [];
        const ref = split.base[j].ref;
        return [[typeof ref === 'string' ? ref : String(j), o] as const];
      });
      if (!entries.length) return;
      // One source: the override's own fields; several: by index, or by name for a ref source.
      overrides[m.cluster] = multi ? { sources: Object.fromEntries(entries) } : entries[0][1];
    });
    const app = apps[0];
    const variable = camel(app.id, 'PerSpoke');
    this.used.add('SpokeOverrides');
    app.preamble = `const ${variable}: Record<string, SpokeOverrides> = ${lit(
      Object.fromEntries(Object.entries(overrides).sort(([a], [b]) => cmp(a, b))),
    )};`.split('\n');
    app.props = [...props, `  perSpoke: (spoke) => ${variable}[spoke.name] ?? {},`];
    app.clusters = members.map((m) => m.cluster);
    app.origins = apps.flatMap((a) => a.origins);
    for (const other of apps.slice(1)) this.staticApps.splice(this.staticApps.indexOf(other), 1);
    // Each Application is app.name's now: the notes that made it an app of its own, or renamed it, go.
    const subjects = new Set(members.map((m) => m.subject));
    const kept = this.notes.filter(
      (n) =>
        !subjects.has(n.subject) ||
        !(
          n.message.startsWith('another Application also becomes app') ||
          n.message.startsWith('its hub Application is named')
        ),
    );
    this.notes.splice(0, this.notes.length, ...kept);
    for (const m of members) {
      m.app = app;
      if (`${app.name}-${m.cluster}` !== m.docName) this.renamedNote(m.subject, app.name, m.cluster, m.docName);
    }
  }

  /** The managed cluster a push-model destination names, or undefined (noted as skipped). */
  private pushTarget(subject: string, destination: Record<string, unknown>): string | undefined {
    const name = typeof destination.name === 'string' ? destination.name : '';
    const server = typeof destination.server === 'string' ? destination.server : '';
    const mapped = (name && this.options.clusters?.[name]) || (server && this.options.clusters?.[server]);
    const given = name ? `destination.name ${name}` : `destination.server ${server || '(none)'}`;
    const fix = `pass --cluster ${name || server || '<destination>'}=<managed cluster> to deliver it to a managed cluster`;
    let cluster: string | undefined;
    if (mapped) cluster = mapped;
    else if (name && name !== 'in-cluster') cluster = name;
    else if (name === 'in-cluster' || server === IN_CLUSTER || server === `${IN_CLUSTER}/`) {
      this.note(
        subject,
        'skipped',
        `it deploys to the hub's own cluster (${given}), which is never a pull-delivery target: if it should run on a spoke instead, ${fix}`,
      );
      return undefined;
    } else {
      this.note(subject, 'skipped', `${given} names no managed cluster pullfleet can tell: ${fix}`);
      return undefined;
    }
    this.note(
      subject,
      'changed',
      `push becomes pull: a ManifestWork carries it to managed cluster ${cluster}, whose own Argo CD syncs it to ${IN_CLUSTER} (was ${given}); the hub needs no credentials for the cluster any more`,
    );
    return cluster;
  }

  /** A pulled app's destination other than its spoke's own cluster, noted as changed. */
  private destinationNotes(subject: string, destination: Record<string, unknown>, at: string): void {
    const name = typeof destination.name === 'string' ? destination.name : '';
    const server = typeof destination.server === 'string' ? destination.server : '';
    const inCluster =
      (!name || name === 'in-cluster' || name.includes('{{')) &&
      (!server || server === IN_CLUSTER || server.includes('{{'));
    if (!inCluster)
      this.note(
        subject,
        'changed',
        `${at} ${name ? `name ${name}` : `server ${server}`} becomes ${IN_CLUSTER}: a pulled Application always deploys to its own spoke`,
      );
  }

  // ---------------------------------------------------------------- ApplicationSet

  private applicationSet(doc: Doc, subject: string): void {
    const spec = doc.object.spec as Record<string, unknown>;
    const source = this.applicationSetSource(doc, subject, spec);
    if (!source) return;
    const { cdr, labelMatrix, placementName } = source;
    const template = spec.template as Record<string, unknown>;
    const tmeta = isObj(template.metadata) ? template.metadata : {};
    const tspec = template.spec as Record<string, unknown>;
    if (this.applicationSetTemplateRefused(subject, spec, tmeta, tspec, labelMatrix)) return;
    this.applicationSetSpecNotes(subject, spec);
    this.applicationSetMetadataNotes(subject, doc);
    const { labels, annotations, appName } = this.applicationSetTemplateMetadata(doc, subject, tmeta, tspec);
    this.spokeParams = true;
    const props = this.appProps(subject, tspec, 'spec.template.spec', labels, annotations, tmeta);
    this.spokeParams = false;
    if (!props) return;
    const placement = this.placementFor(subject, doc.namespace, placementName);
    const id = this.uniqueId(appName);
    this.used.add('PullApplicationSet');
    this.applicationSets.push(id);
    const requeue = typeof cdr.requeueAfterSeconds === 'number' ? cdr.requeueAfterSeconds : undefined;
    const lines = [
      `new PullApplicationSet(hub, ${lit(id)}, {`,
      ...(id !== appName ? [`  name: ${lit(appName)},`] : []),
      ...props,
      `  placement: ${placement},`,
      ...(requeue !== undefined ? [`  requeueAfterSeconds: ${requeue},`] : []),
      "  // resources: [...], the API groups and resources the app's manifests hold (see the migration report)",
      '});',
    ];
    this.emitted.push({ sortKey: `1 ${id}`, comment: `from ${subject} (${doc.file}, document ${doc.index})`, lines });
  }

  /**
   * The Placement an ApplicationSet's generator reads decisions from, and whether it is pullfleet's matrix
   * for templates reading spoke labels; undefined (with the reason noted) when pullfleet cannot express it.
   */
  private applicationSetSource(
    doc: Doc,
    subject: string,
    spec: Record<string, unknown>,
  ): { cdr: Record<string, unknown>; labelMatrix: boolean; placementName: string } | undefined {
    const generators = spec.generators as unknown[];
    const gen = generators.length === 1 && isObj(generators[0]) ? generators[0] : undefined;
    let cdr =
      gen && Object.keys(gen).length === 1 && isObj(gen.clusterDecisionResource)
        ? gen.clusterDecisionResource
        : undefined;
    // pullfleet's form for a template reading spoke labels (SpokeParam.label): a matrix of the decisions and
    // the cluster generator on the decided cluster's Secret, whose mirrored labels the template reads.
    const inner = gen && isObj(gen.matrix) && Array.isArray(gen.matrix.generators) ? gen.matrix.generators : [];
    const first = inner.length ? (inner[0] as unknown) : undefined;
    const labelMatrix =
      isObj(first) &&
      Object.keys(first).length === 1 &&
      isObj(first.clusterDecisionResource) &&
      // With the Exists selector of each label read, or without (what pullfleet rendered before it).
      [spokeLabelMatrix(first as JsonObject, spokeLabelsRead(spec.template)), spokeLabelMatrix(first as JsonObject)]
        .map((m) => canonicalJson(m))
        .includes(canonicalJson(gen)) &&
      spokeLabelsRead((spec.template as Record<string, unknown>).spec).length > 0;
    // A push-model ApplicationSet's cluster generator (Argo CD cluster Secrets chosen by labels) becomes a
    // Placement choosing the ManagedClusters by the same labels.
    const clusters = gen && Object.keys(gen).length === 1 && isObj(gen.clusters) ? gen.clusters : undefined;
    if (!cdr && clusters) {
      const placement = this.placementFromClusterGenerator(doc, subject, clusters);
      if (placement === undefined) return undefined;
      cdr = { labelSelector: { matchLabels: { [PLACEMENT_LABEL]: placement } } };
    }
    if (labelMatrix) {
      cdr = (first as { clusterDecisionResource: Record<string, unknown> }).clusterDecisionResource;
      if (canonicalJson(gen) === canonicalJson(spokeLabelMatrix(first as JsonObject)))
        this.note(
          subject,
          'changed',
          `the matrix's cluster generator also requires the spoke-label mirrors the template reads (matchExpressions: Exists), so a cluster whose Secret lacks one gets no Application instead of one with the {{...}} text`,
        );
    }
    if (!cdr) {
      const kinds = generators.map((g) => (isObj(g) ? Object.keys(g).join('+') : typeof g)).join(', ');
      this.note(
        subject,
        'skipped',
        `its generators (${kinds}) are not one clusterDecisionResource generator on an OCM Placement, nor one cluster generator: pullfleet generates Applications from a Placement's decisions only; express the target clusters as a Placement`,
      );
      return undefined;
    }
    const selector = isObj(cdr.labelSelector) ? cdr.labelSelector : {};
    const matchLabels = (isObj(selector.matchLabels) ? selector.matchLabels : {}) as Record<string, string>;
    const placementName = matchLabels[PLACEMENT_LABEL];
    if (!placementName || Object.keys(matchLabels).length !== 1 || selector.matchExpressions !== undefined) {
      this.note(
        subject,
        'skipped',
        `its clusterDecisionResource labelSelector ${JSON.stringify(selector)} does not select one Placement's decisions by ${PLACEMENT_LABEL}: select them with matchLabels { ${PLACEMENT_LABEL}: <placement> } only`,
      );
      return undefined;
    }
    if (cdr.values !== undefined) {
      this.note(
        subject,
        'skipped',
        'its generator passes values to the template, which pullfleet cannot express (one spec for every cluster)',
      );
      return undefined;
    }
    return { cdr, labelMatrix, placementName };
  }

  /** Whether the template differs per cluster in a way pullfleet cannot express (the reason is noted). */
  private applicationSetTemplateRefused(
    subject: string,
    spec: Record<string, unknown>,
    tmeta: Record<string, unknown>,
    tspec: Record<string, unknown>,
    labelMatrix: boolean,
  ): boolean {
    if (spec.templatePatch !== undefined) {
      this.note(
        subject,
        'skipped',
        'templatePatch changes the template per cluster, which pullfleet cannot express (one spec for every cluster)',
      );
      return true;
    }
    const clusterAnnotation = ['spec.template.metadata.annotations', MANAGED_CLUSTER_ANNOTATION].join('.');
    const allowed = new Set([
      'spec.template.metadata.name',
      clusterAnnotation,
      'spec.template.spec.destination.name',
      'spec.template.spec.destination.server',
    ]);
    const templated = [
      ...templatedStrings(tmeta, 'spec.template.metadata'),
      ...templatedStrings(tspec, 'spec.template.spec'),
    ]
      .filter(
        ({ path, text }) => !allowed.has(path) && !(SPOKE_PARAM_FIELD.test(path) && onlySpokeParams(text, labelMatrix)),
      )
      .map(({ path }) => path);
    if (templated.length) {
      this.note(
        subject,
        'skipped',
        `template parameters in ${templated.join(', ')} make the spec differ per cluster, which pullfleet cannot express yet (one spec for every cluster): move the per-cluster part into the cluster's own config (values files named by cluster in Git, for example) and translate again`,
      );
      return true;
    }
    return false;
  }

  /** Notes on the ApplicationSet's own spec fields besides its generators and template. */
  private applicationSetSpecNotes(subject: string, spec: Record<string, unknown>): void {
    if (spec.goTemplate === true)
      this.note(
        subject,
        'changed',
        'goTemplate: the generated template uses the default (fasttemplate) syntax; its only parameter is {{name}}, the cluster',
      );
    for (const key of Object.keys(spec).sort(cmp)) {
      if (['generators', 'template', 'goTemplate', 'templatePatch'].includes(key)) continue;
      if (key === 'preservedFields' && this.onlyPullfleetPreserved(spec.preservedFields)) {
        this.renderedByPullfleet.add(subject);
        continue;
      }
      const why: Record<string, string> = {
        strategy: 'a progressive sync strategy: give the PullApplicationSet a pullfleet Rollout (waves) instead',
        syncPolicy:
          'the ApplicationSet sync policy (applicationsSync, preserveResourcesOnDeletion): pullfleet keeps its own',
        goTemplateOptions: 'Go template options: the generated template uses the default syntax',
      };
      this.note(
        subject,
        'untranslated',
        `spec.${key} ${canonicalShort(spec[key])}: ${why[key] ?? 'has no PullApplicationSet equivalent'}`,
      );
    }
  }

  /** Notes on the ApplicationSet's own labels and annotations (pullfleet sets its own). */
  private applicationSetMetadataNotes(subject: string, doc: Doc): void {
    const own = doc.object.metadata as Record<string, unknown>;
    for (const key of ['labels', 'annotations'] as const) {
      const entries = Object.entries(isObj(own[key]) ? own[key] : {});
      const users = Object.fromEntries(entries.filter(([k, v]) => !isPullfleetKey(k, String(v))));
      if (entries.length > Object.keys(users).length) this.renderedByPullfleet.add(subject);
      if (Object.keys(users).length)
        this.note(
          subject,
          'untranslated',
          `metadata.${key} of the ApplicationSet itself ${canonicalShort(users)} are not translated: pullfleet sets its own on the ApplicationSet (the template's ${key} are kept)`,
        );
    }
  }

  /**
   * The template's labels and annotations without pullfleet's keys, and the app's name, with notes on what
   * the pull model changes (namespaces, destination, the name pattern).
   */
  private applicationSetTemplateMetadata(
    doc: Doc,
    subject: string,
    tmeta: Record<string, unknown>,
    tspec: Record<string, unknown>,
  ): { labels: Record<string, string>; annotations: Record<string, string>; appName: string } {
    const labels = { ...((isObj(tmeta.labels) ? tmeta.labels : {}) as Record<string, string>) };
    const annotations = { ...((isObj(tmeta.annotations) ? tmeta.annotations : {}) as Record<string, string>) };
    const pull = labels[PULL_LABEL] !== undefined && TRUE_VALUES.has(labels[PULL_LABEL]);
    const destination = tspec.destination as Record<string, unknown>;
    if (pull) {
      const appNs = annotations[APP_NAMESPACE_ANNOTATION];
      const tns = typeof tmeta.namespace === 'string' ? tmeta.namespace : doc.namespace;
      if (appNs && appNs !== tns)
        this.note(
          subject,
          'changed',
          `the spoke copies go to the hub's Argo CD namespace, not ${appNs} (${APP_NAMESPACE_ANNOTATION})`,
        );
      this.destinationNotes(subject, destination, 'spec.template.spec.destination');
    } else {
      const dest =
        typeof destination.name === 'string' && destination.name
          ? `name ${destination.name}`
          : `server ${String(destination.server ?? '')}`;
      this.note(
        subject,
        'changed',
        `push becomes pull: each generated Application is carried to its cluster by a ManifestWork and synced there by the cluster's own Argo CD to ${IN_CLUSTER} (was destination ${dest})`,
      );
    }
    if (typeof tmeta.namespace === 'string' && tmeta.namespace !== doc.namespace)
      this.note(
        subject,
        'changed',
        `generated Applications go to the hub's Argo CD namespace, not ${tmeta.namespace} (spec.template.metadata.namespace)`,
      );
    for (const k of [PULL_LABEL]) delete labels[k];
    for (const k of [MANAGED_CLUSTER_ANNOTATION, APP_NAMESPACE_ANNOTATION, SKIP_RECONCILE_ANNOTATION])
      delete annotations[k];
    this.reservedKeys(subject, labels, annotations, 'spec.template.metadata');
    const tname = typeof tmeta.name === 'string' ? tmeta.name : '';
    const m = /^\{\{\s*\.?name\s*\}\}-(.+)$/.exec(tname);
    const appName = m && !m[1].includes('{{') ? m[1] : doc.name;
    if (!m || m[1] !== appName || tname !== `{{name}}-${appName}`)
      this.note(
        subject,
        'changed',
        `generated Applications are named "{{name}}-${appName}" (pullfleet's pattern, <cluster>-<app>), not "${tname}"`,
      );
    return { labels, annotations, appName };
  }

  /**
   * The name of a Placement made from a cluster generator's selector (added to the input's Placements), or
   * undefined when the generator cannot become one (the reason is noted, the ApplicationSet skipped).
   */
  private placementFromClusterGenerator(
    doc: Doc,
    subject: string,
    clusters: Record<string, unknown>,
  ): string | undefined {
    const other = Object.keys(clusters).filter((k) => k !== 'selector');
    const selector = isObj(clusters.selector) ? clusters.selector : {};
    const selectorOther = Object.keys(selector).filter((k) => k !== 'matchLabels' && k !== 'matchExpressions');
    if (other.length || selectorOther.length || (clusters.selector !== undefined && !isObj(clusters.selector))) {
      this.note(
        subject,
        'skipped',
        `its cluster generator uses ${[...other, ...selectorOther.map((k) => `selector.${k}`)].join(', ') || 'a selector that is not an object'}, which a Placement cannot express: pullfleet chooses clusters with a Placement's labels only (values, templates and flat lists per cluster would make the spec differ per cluster)`,
      );
      return undefined;
    }
    let name = `${doc.name}-clusters`;
    for (let i = 2; this.placements.has(`${doc.namespace}/${name}`); i++) name = `${doc.name}-clusters-${i}`;
    const labelSelector: Record<string, unknown> = {};
    if (isObj(selector.matchLabels) && Object.keys(selector.matchLabels).length)
      labelSelector.matchLabels = selector.matchLabels;
    if (Array.isArray(selector.matchExpressions) && selector.matchExpressions.length)
      labelSelector.matchExpressions = selector.matchExpressions;
    const spec = Object.keys(labelSelector).length
      ? { predicates: [{ requiredClusterSelector: { labelSelector } }] }
      : {};
    this.madePlacements.set(`${doc.namespace}/${name}`, subject);
    this.placements.set(`${doc.namespace}/${name}`, {
      file: doc.file,
      index: doc.index,
      kind: 'Placement',
      namespace: doc.namespace,
      name,
      object: {
        apiVersion: `${PLACEMENT_GROUP}/v1beta1`,
        kind: 'Placement',
        metadata: { name, namespace: doc.namespace },
        spec,
      } as JsonObject,
    });
    this.note(
      subject,
      'changed',
      Object.keys(labelSelector).length
        ? `its cluster generator (the Argo CD cluster Secrets matching ${canonicalShort(labelSelector)}) becomes Placement ${name}, which decides the ManagedClusters with those labels: pullfleet delivers to managed clusters, so the labels must be on the ManagedClusters (not only on the Secrets), {{name}} is the ManagedCluster's name, and the hub itself is never a target`
        : `its cluster generator (the Argo CD cluster Secrets of every cluster) becomes Placement ${name}, which decides every ManagedCluster of the cluster sets bound to the hub's Argo CD namespace (bind the sets there): {{name}} is the ManagedCluster's name, and the hub itself is never a target`,
    );
    return name;
  }

  /** The code naming the Placement `name` (declared from the input, else looked up on the hub). */
  private placementFor(subject: string, namespace: string, name: string): string {
    const key = `${namespace}/${name}`;
    const existing = this.placementCode.get(key);
    if (existing) return existing.variable;
    const doc = this.placements.get(key);
    const variable = camel(name, 'Placement');
    if (!doc) {
      this.used.add('Placement');
      this.note(
        subject,
        'changed',
        `Placement ${key} is not in the input: the code imports it by name (Placement.fromPlacementName), so the fleet must declare it or it must exist on the hub; give its YAML to translate it too`,
      );
      this.placementCode.set(key, {
        variable,
        sortKey: `0 ${name}`,
        comment: `Placement ${key}, not in the input: imported by name`,
        lines: [`const ${variable} = Placement.fromPlacementName(hub, ${lit(`${name}-import`)}, ${lit(name)});`],
      });
      return variable;
    }
    this.usedPlacements.add(key);
    const pSubject = `Placement ${key}`;
    const madeFrom = this.madePlacements.get(key);
    // One made from a cluster generator is the ApplicationSet's to report (its note says so).
    if (!madeFrom) this.subjects.push(pSubject);
    const spec = isObj(doc.object.spec) ? doc.object.spec : {};
    const props: string[] = [];
    const sets = Array.isArray(spec.clusterSets)
      ? spec.clusterSets.filter((s): s is string => typeof s === 'string')
      : [];
    if (sets.length) {
      this.used.add('clusterSet');
      props.push(`  clusterSets: [${sets.map((s) => `clusterSet(hub, ${lit(s)})`).join(', ')}],`);
    }
    const predicates: unknown[] = [];
    for (const p of Array.isArray(spec.predicates) ? spec.predicates : []) {
      const rcs = isObj(p) && isObj(p.requiredClusterSelector) ? p.requiredClusterSelector : {};
      const ls = isObj(rcs.labelSelector) ? rcs.labelSelector : {};
      const cs = isObj(rcs.claimSelector) ? rcs.claimSelector : {};
      if (rcs.celSelector !== undefined)
        this.note(
          pSubject,
          'untranslated',
          'CEL selector predicates have no Placement equivalent: express them with labels or claims',
        );
      const ops = (list: unknown) =>
        Array.isArray(list)
          ? list.map((r) => (isObj(r) ? { ...r, operator: this.enumCode('SelectorOperator', r.operator) } : r))
          : undefined;
      predicates.push({
        ...(isObj(ls.matchLabels) && Object.keys(ls.matchLabels).length ? { labels: ls.matchLabels } : {}),
        ...(Array.isArray(ls.matchExpressions) && ls.matchExpressions.length
          ? { labelExpressions: ops(ls.matchExpressions) }
          : {}),
        ...(Array.isArray(cs.matchExpressions) && cs.matchExpressions.length
          ? { claimExpressions: ops(cs.matchExpressions) }
          : {}),
      });
    }
    if (predicates.length) props.push(`  predicates: ${lit(predicates, '  ')},`);
    if (typeof spec.numberOfClusters === 'number') props.push(`  numberOfClusters: ${spec.numberOfClusters},`);
    const tolerations = ((Array.isArray(spec.tolerations) ? spec.tolerations : []) as unknown[])
      .filter(isObj)
      .map((t) => ({
        ...t,
        ...(t.operator !== undefined ? { operator: this.enumCode('TolerationOperator', t.operator) } : {}),
        ...(t.effect !== undefined ? { effect: this.enumCode('TaintEffect', t.effect) } : {}),
      }));
    if (tolerations.length) props.push(`  tolerations: ${lit(tolerations, '  ')},`);
    for (const key of Object.keys(spec).sort(cmp))
      if (!['clusterSets', 'predicates', 'numberOfClusters', 'tolerations'].includes(key))
        this.note(
          pSubject,
          'untranslated',
          `spec.${key} ${canonicalShort(spec[key])} is not translated: set it on the generated Placement by hand`,
        );
    if (!sets.length && !predicates.length && !madeFrom)
      this.note(
        pSubject,
        'changed',
        `it selects every cluster of the cluster sets bound to its namespace, as before; the Placement is rendered in the hub's Argo CD namespace, so bind the sets there`,
      );
    this.used.add('Placement');
    const body = props.length ? `, {\n${props.join('\n')}\n}` : '';
    const pid = this.uniqueId(name, this.placementIds);
    this.placementCode.set(key, {
      variable,
      sortKey: `0 ${name}`,
      comment: madeFrom
        ? `made from the cluster generator of ${madeFrom} (${doc.file}, document ${doc.index})`
        : `from ${pSubject} (${doc.file}, document ${doc.index})`,
      lines: `const ${variable} = new Placement(hub, ${lit(pid)}${body});`.split('\n'),
    });
    return variable;
  }

  private enumCode(name: 'SelectorOperator' | 'TolerationOperator' | 'TaintEffect', value: unknown): unknown {
    const members: Record<string, Record<string, string>> = {
      SelectorOperator: { In: 'IN', NotIn: 'NOT_IN', Exists: 'EXISTS', DoesNotExist: 'DOES_NOT_EXIST' },
      TolerationOperator: { Exists: 'EXISTS', Equal: 'EQUAL' },
      TaintEffect: { NoSelect: 'NO_SELECT', PreferNoSelect: 'PREFER_NO_SELECT', NoSelectIfNew: 'NO_SELECT_IF_NEW' },
    };
    const member = typeof value === 'string' ? members[name][value] : undefined;
    if (!member) return value;
    this.used.add(name);
    return new TsCode(`${name}.${member}`);
  }

  // ---------------------------------------------------------------- the Application spec

  /** The prop lines shared by PullApplication and PullApplicationSet, or undefined when skipped (noted). */
  private appProps(
    subject: string,
    spec: Record<string, unknown>,
    at: string,
    labels: Record<string, string>,
    annotations: Record<string, string>,
    meta: Record<string, unknown>,
  ): string[] | undefined {
    const destination = spec.destination as Record<string, unknown>;
    const namespace = typeof destination.namespace === 'string' ? destination.namespace : '';
    if (!namespace) {
      this.note(
        subject,
        'skipped',
        `${at}.destination.namespace is not set: pullfleet needs the namespace an app deploys into (its spoke namespace and Role); set it and translate again`,
      );
      return undefined;
    }
    for (const key of Object.keys(spec).sort(cmp))
      if (!APP_SPEC_KEYS.has(key))
        this.note(
          subject,
          'untranslated',
          `${at}.${key} ${canonicalShort(spec[key])} has no construct prop: not translated`,
        );
    const lines: string[] = [];
    if (Array.isArray(spec.sources)) {
      const sources = spec.sources.map((s, i) =>
        this.source(subject, s as Record<string, unknown>, `${at}.sources[${i}]`, true),
      );
      lines.push(`  sources: ${lit(sources, '  ')},`);
      if (isObj(spec.source))
        this.note(subject, 'untranslated', `${at}.source is ignored: Argo CD uses ${at}.sources when both are given`);
    } else
      lines.push(
        `  source: ${lit(this.source(subject, spec.source as Record<string, unknown>, `${at}.source`, false), '  ')},`,
      );
    lines.push(`  destinationNamespace: ${lit(namespace)},`);
    if (typeof spec.project === 'string' && spec.project !== 'default') lines.push(`  project: ${lit(spec.project)},`);
    lines.push(...this.syncPolicy(subject, spec.syncPolicy, `${at}.syncPolicy`));
    if (Array.isArray(spec.ignoreDifferences) && spec.ignoreDifferences.length) {
      const kept = spec.ignoreDifferences.filter(isObj).map((d, i) => {
        const extra = Object.keys(d).filter((k) => !IGNORE_DIFFERENCE_KEYS.includes(k));
        if (extra.length)
          this.note(
            subject,
            'untranslated',
            `${at}.ignoreDifferences[${i}] ${extra.join(', ')} has no construct prop: not translated`,
          );
        return Object.fromEntries(IGNORE_DIFFERENCE_KEYS.filter((k) => d[k] !== undefined).map((k) => [k, d[k]]));
      });
      lines.push(`  ignoreDifferences: ${lit(kept, '  ')},`);
    }
    if (Array.isArray(spec.info) && spec.info.length) lines.push(`  info: ${lit(spec.info, '  ')},`);
    if (typeof spec.revisionHistoryLimit === 'number')
      lines.push(`  revisionHistoryLimit: ${spec.revisionHistoryLimit},`);
    if (Object.keys(labels).length) lines.push(`  labels: ${lit(labels, '  ')},`);
    if (Object.keys(annotations).length) lines.push(`  annotations: ${lit(annotations, '  ')},`);
    const finalizers = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]).map(String) : [];
    if (finalizers.some((f) => f === RESOURCES_FINALIZER || f.startsWith(`${RESOURCES_FINALIZER}/`))) {
      lines.push('  pruneOnDelete: true,');
      const variant = finalizers.find((f) => f.startsWith(`${RESOURCES_FINALIZER}/`));
      if (variant)
        this.note(
          subject,
          'changed',
          `finalizer ${variant} becomes pruneOnDelete (${RESOURCES_FINALIZER}, foreground deletion)`,
        );
    }
    if (finalizers.some((f) => isPullfleetKey(f))) this.renderedByPullfleet.add(subject);
    const other = finalizers.filter(
      (f) => f !== RESOURCES_FINALIZER && !f.startsWith(`${RESOURCES_FINALIZER}/`) && !isPullfleetKey(f),
    );
    if (other.length)
      this.note(subject, 'untranslated', `finalizers ${other.join(', ')} have no construct prop: not translated`);
    for (const key of ['operation'])
      if (meta[key] !== undefined) this.note(subject, 'untranslated', `${key} is not translated`);
    return lines;
  }

  /**
   * Leaves out of `labels` and `annotations` what the constructs refuse or render themselves: pullfleet's own
   * keys without a note (a waved app's rollout is noted), other keys an app may not set as untranslated.
   */
  private reservedKeys(
    subject: string,
    labels: Record<string, string>,
    annotations: Record<string, string>,
    at: string,
  ): void {
    if (annotations[DELIVERY_ANNOTATION] === DELIVERY_WAVED)
      this.note(
        subject,
        'untranslated',
        `it is rolled out in waves (${DELIVERY_ANNOTATION}: ${DELIVERY_WAVED}${annotations[ROLLOUT_ANNOTATION] ? `, rollout policy ConfigMap ${annotations[ROLLOUT_ANNOTATION]}` : ''}): the waves are not translated; give the PullApplication rollout: Rollout.waves([...]) with the waves that ConfigMap lists`,
      );
    for (const [key, value] of Object.entries(labels))
      if (isPullfleetKey(key, value)) {
        delete labels[key];
        this.renderedByPullfleet.add(subject);
      }
    for (const key of Object.keys(annotations).sort(cmp)) {
      if (isPullfleetKey(key)) this.renderedByPullfleet.add(subject);
      else if (isReservedAppAnnotation(key))
        this.note(
          subject,
          'untranslated',
          `${at}.annotations.${key} is a key pullfleet, OCM or Argo CD sets or acts on itself, which an app may not set: not translated`,
        );
      else continue;
      delete annotations[key];
    }
  }

  /** Whether `preserved` (an ApplicationSet's spec.preservedFields) lists only annotations pullfleet's controller writes. */
  private onlyPullfleetPreserved(preserved: unknown): boolean {
    if (!isObj(preserved)) return false;
    const { annotations, ...rest } = preserved;
    return (
      Object.keys(rest).length === 0 &&
      Array.isArray(annotations) &&
      annotations.every((a) => typeof a === 'string' && isPullfleetKey(a))
    );
  }

  private syncPolicy(subject: string, policy: unknown, at: string): string[] {
    const lines: string[] = [];
    const p = isObj(policy) ? policy : {};
    const automated = isObj(p.automated) ? p.automated : undefined;
    if (!automated || automated.enabled === false) lines.push('  autoSync: false,');
    else {
      // Argo CD's defaults are false; pullfleet's are true, so false is written out.
      if (automated.prune !== true) lines.push('  prune: false,');
      if (automated.selfHeal !== true) lines.push('  selfHeal: false,');
      // false is Argo CD's default: written only when it is true.
      if (automated.allowEmpty === true) lines.push('  allowEmpty: true,');
    }
    const options = Array.isArray(p.syncOptions) ? p.syncOptions.map(String) : [];
    if (options.length) {
      this.used.add('SyncOption');
      const codes = options.map((o) => {
        if (SYNC_OPTIONS[o]) return new TsCode(SYNC_OPTIONS[o]);
        const m = /^PrunePropagationPolicy=(.+)$/.exec(o);
        const policy = m ? { foreground: 'FOREGROUND', background: 'BACKGROUND', orphan: 'ORPHAN' }[m[1]] : undefined;
        if (policy) {
          this.used.add('PrunePropagationPolicy');
          return new TsCode(`SyncOption.prunePropagationPolicy(PrunePropagationPolicy.${policy})`);
        }
        return new TsCode(`SyncOption.custom(${lit(o)})`);
      });
      lines.push(`  syncOptions: ${lit(codes, '  ')},`);
    }
    if (isObj(p.retry)) {
      const r = p.retry;
      const retry: Record<string, unknown> = {};
      if (r.limit !== undefined) retry.limit = Number(r.limit);
      if (isObj(r.backoff)) {
        const b = r.backoff;
        const backoff: Record<string, unknown> = {};
        for (const k of ['duration', 'maxDuration'] as const)
          if (b[k] !== undefined) {
            const code = durationCode(b[k]);
            if (code) {
              backoff[k] = code;
              this.used.add('Duration');
            } else
              this.note(
                subject,
                'untranslated',
                `${at}.retry.backoff.${k} ${JSON.stringify(b[k])} is not a duration: not translated`,
              );
          }
        if (b.factor !== undefined) backoff.factor = Number(b.factor);
        retry.backoff = backoff;
      }
      if (typeof r.refresh === 'boolean') retry.refresh = r.refresh;
      for (const k of Object.keys(r))
        if (k !== 'limit' && k !== 'backoff' && !(k === 'refresh' && typeof r.refresh === 'boolean'))
          this.note(subject, 'untranslated', `${at}.retry.${k} has no construct prop: not translated`);
      lines.push(`  retry: ${lit(retry, '  ')},`);
    }
    if (isObj(p.managedNamespaceMetadata)) {
      // Argo CD applies it only to a namespace it creates, and the constructs refuse it otherwise.
      if (options.includes('CreateNamespace=true'))
        lines.push(`  managedNamespaceMetadata: ${lit(p.managedNamespaceMetadata, '  ')},`);
      else
        this.note(
          subject,
          'untranslated',
          `${at}.managedNamespaceMetadata is dropped: Argo CD applies it only to a namespace it creates (CreateNamespace=true), which this app does not ask for`,
        );
    }
    for (const k of Object.keys(p).sort(cmp))
      if (!['automated', 'syncOptions', 'retry', 'managedNamespaceMetadata'].includes(k))
        this.note(subject, 'untranslated', `${at}.${k} ${canonicalShort(p[k])} has no construct prop: not translated`);
    if (automated)
      for (const k of Object.keys(automated).sort(cmp))
        if (!['prune', 'selfHeal', 'allowEmpty', 'enabled'].includes(k))
          this.note(subject, 'untranslated', `${at}.automated.${k} has no construct prop: not translated`);
    return lines;
  }

  /** `value` with the strings holding spoke parameters as SpokeParam code (in an ApplicationSet's template). */
  private paramCode(value: unknown): unknown {
    if (!this.spokeParams || value instanceof TsCode) return value;
    if (typeof value === 'string') {
      if (!value.includes('{{')) return value;
      this.used.add('SpokeParam');
      return withSpokeParamCode(value);
    }
    if (Array.isArray(value)) return value.map((v) => this.paramCode(v));
    if (isObj(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.paramCode(v)]));
    return value;
  }

  /** The AppSource factory call for one Argo CD source, with `.withName(...)` when the source has a name. */
  private source(subject: string, s: Record<string, unknown>, at: string, multi: boolean): TsCode {
    const code = this.sourceFactory(subject, s, at, multi);
    if (typeof s.name === 'string' && s.name) return new TsCode(`${code.code}.withName(${lit(s.name)})`);
    if (s.name !== undefined && s.name !== '')
      this.note(subject, 'untranslated', `${at}.name ${canonicalShort(s.name)} is not a string: not translated`);
    return code;
  }

  /** The AppSource factory call for one Argo CD source (without its name). */
  private sourceFactory(subject: string, s: Record<string, unknown>, at: string, multi: boolean): TsCode {
    this.used.add('AppSource');
    const base: Record<string, unknown> = { repoURL: s.repoURL };
    for (const key of Object.keys(s).sort(cmp))
      if (!SOURCE_KEYS.has(key))
        this.note(
          subject,
          'untranslated',
          `${at}.${key} ${canonicalShort(s[key])} has no AppSource equivalent: not translated`,
        );
    const path = typeof s.path === 'string' ? s.path : undefined;
    const revision = typeof s.targetRevision === 'string' ? s.targetRevision : undefined;
    const tools = (['helm', 'kustomize', 'directory', 'plugin'] as const).filter((t) => isObj(s[t]));
    const left = (chosen: string) => {
      for (const t of tools)
        if (t !== chosen)
          this.note(
            subject,
            'untranslated',
            `${at}.${t} is dropped: Argo CD renders a source with one tool, and this one is ${chosen}`,
          );
    };
    if (typeof s.ref === 'string' && s.ref && path === undefined && s.chart === undefined) {
      if (!multi) this.note(subject, 'untranslated', `${at}.ref only means something among several sources`);
      left('a ref');
      return new TsCode(
        `AppSource.ref(${lit(s.ref)}, ${lit(this.paramCode({ repoURL: s.repoURL, targetRevision: revision }))})`,
      );
    }
    if (typeof s.ref === 'string' && s.ref)
      this.note(
        subject,
        'untranslated',
        `${at}.ref "${s.ref}" on a source that also renders manifests: AppSource.ref sources render nothing; add a second source for the ref`,
      );
    if (typeof s.chart === 'string' && s.chart) {
      left('helm');
      if (path !== undefined)
        this.note(
          subject,
          'untranslated',
          `${at}.path ${JSON.stringify(path)} is dropped: it means nothing for a chart from a Helm repository (${at}.chart)`,
        );
      const props = {
        ...base,
        chart: s.chart,
        targetRevision: revision ?? '',
        ...this.helmOptions(subject, s.helm, `${at}.helm`),
      };
      if (revision === undefined)
        this.note(
          subject,
          'changed',
          `${at}.targetRevision is not set: the chart version becomes '' (set one; Argo CD would take the latest)`,
        );
      return new TsCode(`AppSource.helm(${lit(this.paramCode(props), '')})`);
    }
    // A chart from an OCI registry as Argo CD 3.1+ reads it (and AppSource.helm renders it): an oci:// repoURL
    // ending in the chart name, at path '.', pinned to a version.
    const oci = /^(oci:\/\/.+)\/([^/\s]+)$/.exec(typeof s.repoURL === 'string' ? s.repoURL : '');
    if (oci && (path === '.' || path === undefined) && revision && !tools.some((t) => t !== 'helm')) {
      if (path === undefined)
        this.note(subject, 'changed', `${at}.path is not set: it becomes '.', where Argo CD reads an OCI artifact`);
      const props = {
        repoURL: oci[1],
        chart: oci[2],
        targetRevision: revision,
        ...this.helmOptions(subject, s.helm, `${at}.helm`),
      };
      return new TsCode(`AppSource.helm(${lit(this.paramCode(props), '')})`);
    }
    const gitBase = { ...base, path: path ?? '.', ...(revision !== undefined ? { targetRevision: revision } : {}) };
    if (path === undefined)
      this.note(
        subject,
        'changed',
        `${at}.path is not set: it becomes '.', the repository root, as Argo CD reads no path`,
      );
    if (isObj(s.kustomize)) {
      left('kustomize');
      const k = s.kustomize;
      const props: Record<string, unknown> = { ...gitBase };
      for (const key of KUSTOMIZE_KEYS) if (k[key] !== undefined) props[key] = k[key];
      if (Array.isArray(k.replicas))
        props.replicas = k.replicas.map((r) =>
          isObj(r) && typeof r.count === 'string' && /^\d+$/.test(r.count) ? { ...r, count: Number(r.count) } : r,
        );
      for (const key of Object.keys(k).sort(cmp))
        if (!KUSTOMIZE_KEYS.includes(key))
          this.note(
            subject,
            'untranslated',
            `${at}.kustomize.${key} ${canonicalShort(k[key])} has no AppSource.kustomize prop: not translated`,
          );
      return new TsCode(`AppSource.kustomize(${lit(this.paramCode(props), '')})`);
    }
    if (isObj(s.helm)) {
      left('helm');
      return new TsCode(
        `AppSource.helmGit(${lit(this.paramCode({ ...gitBase, ...this.helmOptions(subject, s.helm, `${at}.helm`) }), '')})`,
      );
    }
    if (isObj(s.plugin)) {
      left('plugin');
      const p = s.plugin;
      const props: Record<string, unknown> = { ...gitBase };
      if (typeof p.name === 'string') props.name = p.name;
      if (Array.isArray(p.env)) {
        const env: Record<string, string> = {};
        for (const e of p.env.filter(isObj)) {
          const name = String(e.name ?? '');
          if (name in env)
            this.note(
              subject,
              'untranslated',
              `${at}.plugin.env ${name} is given twice: the constructs keep env as a map, so only the last value is kept`,
            );
          env[name] = String(e.value ?? '');
        }
        props.env = env;
      }
      // Each parameter as Argo CD has it: a name and its string, array or map (AppSource.plugin checks one).
      if (Array.isArray(p.parameters))
        props.parameters = p.parameters.filter(isObj).map((param) => {
          const out: Record<string, unknown> = { name: String(param.name ?? '') };
          for (const key of ['string', 'array', 'map'] as const) if (param[key] !== undefined) out[key] = param[key];
          return out;
        });
      for (const key of Object.keys(p).sort(cmp))
        if (key !== 'name' && key !== 'env' && key !== 'parameters')
          this.note(
            subject,
            'untranslated',
            `${at}.plugin.${key} ${canonicalShort(p[key])} has no AppSource.plugin prop: not translated`,
          );
      return new TsCode(`AppSource.plugin(${lit(this.paramCode(props), '')})`);
    }
    const props: Record<string, unknown> = { ...gitBase };
    if (isObj(s.directory)) {
      const d = s.directory;
      const directory: Record<string, unknown> = {};
      for (const key of ['recurse', 'include', 'exclude', 'jsonnet']) if (d[key] !== undefined) directory[key] = d[key];
      for (const key of Object.keys(d).sort(cmp))
        if (!(key in directory))
          this.note(subject, 'untranslated', `${at}.directory.${key} has no AppSource.git prop: not translated`);
      if (isObj(d.jsonnet))
        for (const key of Object.keys(d.jsonnet).sort(cmp))
          if (!['extVars', 'tlas', 'libs'].includes(key))
            this.note(
              subject,
              'untranslated',
              `${at}.directory.jsonnet.${key} has no AppSource.git prop: not translated`,
            );
      props.directory = directory;
    }
    return new TsCode(`AppSource.git(${lit(this.paramCode(props), '')})`);
  }

  private helmOptions(subject: string, helm: unknown, at: string): Record<string, unknown> {
    if (!isObj(helm)) return {};
    const out: Record<string, unknown> = {};
    for (const key of HELM_KEYS) {
      if (helm[key] === undefined || key === 'values' || key === 'valuesObject') continue;
      if (key === 'version' && helm.version !== 'v3' && helm.version !== 'v4') {
        this.note(
          subject,
          'untranslated',
          `${at}.version ${JSON.stringify(helm.version)} is dropped: Argo CD renders charts with Helm 3 (and 4 from 3.5) only`,
        );
        continue;
      }
      out[key] = helm[key];
    }
    if (helm.valuesObject !== undefined) {
      out.values = helm.valuesObject;
      if (helm.values !== undefined)
        this.note(
          subject,
          'untranslated',
          `${at}.values is dropped: Argo CD uses ${at}.valuesObject when both are given`,
        );
    } else if (typeof helm.values === 'string') {
      let parsed: unknown;
      try {
        parsed = parseYaml(helm.values);
      } catch {
        parsed = undefined;
      }
      if (isObj(parsed)) {
        out.values = parsed;
        this.note(
          subject,
          'changed',
          `${at}.values (a YAML string) becomes values as an object, rendered as ${at}.valuesObject: the same values, written as data`,
        );
      } else if (helm.values.trim())
        this.note(
          subject,
          'untranslated',
          `${at}.values is not a YAML mapping: not translated; give the values as an object`,
        );
    } else if (helm.values !== undefined) out.values = helm.values;
    for (const key of Object.keys(helm).sort(cmp))
      if (!HELM_KEYS.includes(key))
        this.note(
          subject,
          'untranslated',
          `${at}.${key} ${canonicalShort(helm[key])} has no Helm option in the constructs: not translated`,
        );
    return out;
  }
}

const same = (values: readonly unknown[]): boolean => new Set(values.map((v) => canonicalJson(v))).size <= 1;

/** The longest list every one of `lists` starts with. */
function commonPrefix(lists: readonly unknown[][]): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; lists.every((l) => i < l.length) && same(lists.map((l) => l[i])); i++) out.push(lists[0][i]);
  return out;
}

/** Helm values every one of `values` holds (objects key by key), or undefined. */
function commonValues(values: readonly unknown[]): unknown {
  if (values.every(isObj)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(values[0]))
      if (values.every((v) => key in v)) {
        const common = commonValues(values.map((v) => v[key]));
        if (common !== undefined) out[key] = common;
      }
    return out;
  }
  return same(values) ? values[0] : undefined;
}

/** What `full` holds beyond `base` (objects key by key; anything else whole), or undefined when nothing. */
function valuesBeyond(full: unknown, base: unknown): unknown {
  if (isObj(full) && isObj(base)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(full)) {
      const beyond = key in base ? valuesBeyond(value, base[key]) : value;
      if (beyond !== undefined) out[key] = beyond;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return same([full, base]) ? undefined : full;
}

/**
 * One base source list and, per member, the override of each source (undefined: none) that gives that member's
 * sources when applied as the constructs apply `perSpoke` overrides; undefined when the members differ in
 * anything else (the repository, the chart, a Helm or Kustomize option overrides cannot set).
 */
function perSpokeSplit(
  members: readonly (readonly JsonObject[])[],
): { base: JsonObject[]; overrides: Array<Array<JsonObject | undefined>> } | undefined {
  const count = members[0].length;
  if (members.some((m) => m.length !== count || m.some((s) => !isObj(s)))) return undefined;
  const base: JsonObject[] = [];
  const overrides: Array<Array<JsonObject | undefined>> = members.map(() => []);
  for (let i = 0; i < count; i++) {
    const sources = members.map((m) => m[i]);
    const b = JSON.parse(JSON.stringify(sources[0])) as Record<string, unknown>;
    const over: Array<Record<string, unknown>> = sources.map(() => ({}));
    const helm = sources.map((s) => (isObj(s.helm) ? s.helm : {}));
    const kustomize = sources.map((s) => (isObj(s.kustomize) ? s.kustomize : {}));
    // Replaced whole: the first member's in the base, the others' where they differ.
    const replaced = (get: (j: number) => unknown, set: (value: unknown) => void, key: string) => {
      if (same(sources.map((_, j) => get(j)))) return true;
      if (sources.some((_, j) => typeof get(j) !== 'string' || !get(j))) return false;
      set(get(0));
      sources.forEach((_, j) => {
        if (get(j) !== get(0)) over[j][key] = get(j);
      });
      return true;
    };
    if (
      !replaced(
        (j) => sources[j].targetRevision,
        (v) => (b.targetRevision = v),
        'targetRevision',
      )
    )
      return undefined;
    if (
      !replaced(
        (j) => sources[j].path,
        (v) => (b.path = v),
        'path',
      )
    )
      return undefined;
    const bh = isObj(b.helm) ? b.helm : undefined;
    const bk = isObj(b.kustomize) ? b.kustomize : undefined;
    // Added after the base's: the common start in the base, the rest per member.
    const appended = (lists: unknown[][], key: string, target: Record<string, unknown> | undefined, field: string) => {
      if (same(lists) || !target) return;
      const prefix = commonPrefix(lists);
      if (prefix.length) target[key] = prefix;
      else delete target[key];
      lists.forEach((l, j) => {
        if (l.length > prefix.length) over[j][field] = l.slice(prefix.length);
      });
    };
    appended(
      helm.map((h) => (Array.isArray(h.valueFiles) ? h.valueFiles : [])),
      'valueFiles',
      bh,
      'valueFiles',
    );
    appended(
      helm.map((h) => (Array.isArray(h.parameters) ? h.parameters : [])),
      'parameters',
      bh,
      'parameters',
    );
    appended(
      kustomize.map((k) => (Array.isArray(k.images) ? k.images : [])),
      'images',
      bk,
      'images',
    );
    // Helm values merged over the base's: what all hold in the base, the rest per member.
    const values = helm.map((h) => h.valuesObject);
    if (!same(values) && bh) {
      const common = values.every(isObj) ? (commonValues(values) as Record<string, unknown>) : {};
      if (Object.keys(common).length) bh.valuesObject = common;
      else delete bh.valuesObject;
      values.forEach((v, j) => {
        const beyond = v === undefined ? undefined : valuesBeyond(v, bh.valuesObject);
        if (beyond !== undefined) over[j].values = beyond;
      });
    }
    for (const key of ['namePrefix', 'nameSuffix', 'namespace'] as const) {
      const list = kustomize.map((k) => k[key]);
      if (same(list) || !bk) continue;
      delete bk[key];
      list.forEach((v, j) => {
        if (v !== undefined) over[j][key] = v;
      });
    }
    const labels = kustomize.map((k) => (isObj(k.commonLabels) ? k.commonLabels : {}));
    if (!same(labels) && bk) {
      const common = Object.fromEntries(Object.entries(labels[0]).filter(([k, v]) => labels.every((l) => l[k] === v)));
      if (Object.keys(common).length) bk.commonLabels = common;
      else delete bk.commonLabels;
      labels.forEach((l, j) => {
        const beyond = Object.fromEntries(Object.entries(l).filter(([k]) => !(k in common)));
        if (Object.keys(beyond).length) over[j].commonLabels = beyond;
      });
    }
    // AppSource.helm renders no helm block without options (helmGit always renders one).
    if (b.chart !== undefined && bh && Object.keys(bh).length === 0) delete b.helm;
    // What the constructs allow: Helm overrides on Helm sources, Kustomize ones on kustomizations, a path not
    // on a chart, a ref source only its revision; then each member's source must come out exactly.
    const isRef = typeof b.ref === 'string';
    for (const o of over) {
      const keys = Object.keys(o);
      if (isRef && keys.some((k) => k !== 'targetRevision')) return undefined;
      if (keys.some((k) => ['values', 'valueFiles', 'parameters'].includes(k)) && b.chart === undefined && !bh)
        return undefined;
      if (keys.some((k) => ['images', 'namePrefix', 'nameSuffix', 'namespace', 'commonLabels'].includes(k)) && !bk)
        return undefined;
      if (keys.includes('path') && b.chart !== undefined) return undefined;
    }
    const applied = over.map((o) => applySourceOverride(b as JsonObject, o as SourceOverrideJson));
    if (applied.some((a, j) => !same([a, sources[j]]))) return undefined;
    base.push(b as JsonObject);
    over.forEach((o, j) => overrides[j].push(Object.keys(o).length ? (o as JsonObject) : undefined));
  }
  return { base, overrides };
}

/** JSON of a value, shortened for a report line. */
function canonicalShort(value: unknown): string {
  const text = canonicalJson(value);
  return text.length <= 60 ? text : `${text.slice(0, 57)}…`;
}

/**
 * Translates the Applications, ApplicationSets and OCM Placements among `documents` into a TypeScript
 * module exporting `addMigratedApps(hub)`, and a report. Throws a {@link MigrationInputError} (naming the
 * file, document and field) for input that is no Application or ApplicationSet at all.
 */
export function translateApplications(
  documents: readonly SourceDocument[],
  options: AppMigrationOptions = {},
): AppMigrationResult {
  const t = new Translator(documents, options);
  t.run();
  const importFrom = options.importFrom ?? DEFAULT_IMPORT;
  const names = [
    'AppSource',
    'Placement',
    'PrunePropagationPolicy',
    'PullApplication',
    'PullApplicationSet',
    'SelectorOperator',
    'Spoke',
    'SpokeParam',
    'SyncOption',
    'TaintEffect',
    'TolerationOperator',
  ].filter((n) => t.used.has(n) || (n === 'Spoke' && t.used.has('spoke')));
  const types = [
    'type Hub',
    ...(t.used.has('clusterSet') ? ['type IClusterSet'] : []),
    ...(t.used.has('spoke') ? ['type ISpoke'] : []),
    ...(t.used.has('SpokeOverrides') ? ['type SpokeOverrides'] : []),
  ];
  const any = t.emitted.length > 0;
  const lines: string[] = [];
  lines.push(
    `// Generated by \`pullfleet migrate applications\`${options.sources?.length ? ` from ${options.sources.join(', ')}` : ''}.`,
  );
  lines.push(
    '// Review it and the migration report before committing; then call addMigratedApps(hub) in fleet.config.ts.',
  );
  if (t.used.has('Duration')) lines.push("import { Duration } from 'cdk8s';");
  lines.push(`import { ${[...(any ? names : []), ...types].join(', ')} } from ${lit(importFrom)};`);
  lines.push('');
  if (t.used.has('spoke')) {
    lines.push(
      '/** The spoke named `name`: the one the fleet declares, else the ManagedCluster imported by name (once). */',
    );
    lines.push('function spoke(hub: Hub, name: string): ISpoke {');
    lines.push('  const declared = hub.spokes.find((s) => s.name === name);');
    lines.push('  if (declared) return declared;');
    lines.push('  const id = `migrated-spoke-${name}`;');
    lines.push('  return (hub.node.tryFindChild(id) as ISpoke | undefined) ?? Spoke.fromSpokeName(hub, id, name);');
    lines.push('}');
    lines.push('');
  }
  if (t.used.has('clusterSet')) {
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
  const apps = t.applications.length;
  const sets = t.applicationSets.length;
  lines.push(
    `/** The apps ${apps} Argo CD Application${apps === 1 ? '' : 's'} and ${sets} ApplicationSet${sets === 1 ? '' : 's'} delivered, as pull apps on \`hub\`. */`,
  );
  lines.push(`export function addMigratedApps(${any ? 'hub' : '_hub'}: Hub): void {`);
  if (!any) lines.push('  // Nothing could be translated: see the migration report.');
  const placements = [...t.placementCode.values()].sort((a, b) => cmp(a.sortKey, b.sortKey));
  const all = [...placements, ...[...t.emitted].sort((a, b) => cmp(a.sortKey, b.sortKey))];
  all.forEach((e, i) => {
    if (i > 0) lines.push('');
    lines.push(`  // ${e.comment}`);
    lines.push(...e.lines.flatMap((l) => l.split('\n')).map((l) => `  ${l}`));
  });
  lines.push('}');
  const notes = [...t.notes].sort((a, b) => cmp(a.subject, b.subject));
  const noted = new Set(notes.map((n) => n.subject));
  const todo: string[] = [];
  if (any)
    todo.push(
      "declare resources on each app: the generated apps declare none, so their spokes get the destination namespace but no Role in it for the spoke Argo CD, which then cannot create the app's objects there (validate and synth warn about it); list the API groups and resources the manifests hold, for example resources: [{ apiGroup: 'apps', resources: ['deployments'] }, { apiGroup: '', resources: ['services', 'configmaps'] }]",
    );
  return {
    code: `${lines.join('\n')}\n`,
    notes,
    exact: [...new Set(t.subjects)].filter((s) => !noted.has(s)).sort(cmp),
    inputNotes: [...t.inputNotes],
    todo,
    applications: [...t.applications].sort(cmp),
    applicationSets: [...t.applicationSets].sort(cmp),
    placements: placements.filter((p) => p.lines[0].includes('new Placement(')).map((p) => p.sortKey.slice(2)),
    read: { ...t.read },
  };
}

/** The report as text: a summary, notes about the input, then every subject: carried over exactly, or its notes. */
export function renderApplicationsReport(result: AppMigrationResult): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lines = [
    `translated ${plural(result.read.applications, 'Application')} and ${plural(result.read.applicationSets, 'ApplicationSet')} into ${plural(result.applications.length, 'PullApplication')}, ${plural(result.applicationSets.length, 'PullApplicationSet')} and ${plural(result.placements.length, 'Placement')}`,
  ];
  for (const n of result.inputNotes) lines.push(`input: ${n}`);
  const subjects = [...new Set([...result.exact, ...result.notes.map((n) => n.subject)])].sort(cmp);
  for (const subject of subjects) {
    const notes = result.notes.filter((n) => n.subject === subject);
    if (notes.length === 0) {
      lines.push(`${subject}: carried over exactly`);
      continue;
    }
    lines.push(`${subject}:`);
    for (const n of notes) lines.push(`  [${n.severity}] ${n.message}`);
  }
  for (const t of result.todo) lines.push(`to do: ${t}`);
  return `${lines.join('\n')}\n`;
}

/** The report as JSON (for `--json`): the same content as {@link renderApplicationsReport}, as data. */
export function applicationsReportJson(result: AppMigrationResult): string {
  return `${JSON.stringify(
    {
      read: result.read,
      generated: {
        applications: result.applications,
        applicationSets: result.applicationSets,
        placements: result.placements,
      },
      input: result.inputNotes,
      exact: result.exact,
      notes: result.notes,
      todo: result.todo,
    },
    null,
    2,
  )}\n`;
}
