/**
 * Where each object lands under `dist/<hub>/`, the provenance every object carries, and the writer that
 * puts files into a new output folder while the fleet is validated. Internal to the construct library
 * except {@link routeOutput}, which lets other constructs (the controller install) choose their file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import {
  ApiObject,
  ApiObjectMetadataDefinition,
  App,
  ImplicitTokenResolver,
  Lazy,
  LazyResolver,
  NumberStringUnionResolver,
} from 'cdk8s';
import type { IConstruct } from 'constructs';
import { CONSTRUCT_PATH_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../model/core/keys.js';

const routes = new WeakMap<IConstruct, string>();

/** Hub-relative output files. Everything under `hub/` is what the hub's Argo CD syncs. */
export const OutputFiles = {
  /** Objects of no other file. */
  DEFAULT: 'hub/hub.yaml',
  /** ManagedClusterSets and their bindings. */
  CLUSTER_SETS: 'hub/cluster-sets.yaml',
  /** Placements. */
  PLACEMENTS: 'hub/placements.yaml',
  /** Argo CD cluster Secrets (blank: no credentials). */
  CLUSTER_SECRETS: 'hub/cluster-secrets.yaml',
  /** Hub Applications of static apps. */
  APPLICATIONS: 'hub/applications.yaml',
  /** Pull ApplicationSets and their generator support. */
  APPLICATION_SETS: 'hub/application-sets.yaml',
  /** The controller install. */
  CONTROLLER: 'hub/controller.yaml',
  /** GitOpsClusters (the advanced model's registration). */
  GITOPS_CLUSTERS: 'hub/gitops-clusters.yaml',
  /** AppProjects the argocd-agent principal checks before routing agent-managed apps. */
  AGENT_PROJECTS: 'hub/agent-projects.yaml',
  /** The Applications each agent-autonomous spoke should run (one ConfigMap per spoke), read by `pullfleet status`. */
  EXPECTED_APPLICATIONS: 'hub/expected-applications.yaml',
  /** The ManifestWorks in a spoke's namespace (apps and bootstrap). */
  works: (spoke: string) => `hub/works/${spoke}.yaml`,
  /** A spoke's bootstrap as plain YAML, for the first manual apply. */
  bootstrap: (spoke: string) => `bootstrap/${spoke}.yaml`,
  /** An agent-autonomous spoke's own folder, synced by the spoke's Argo CD. */
  spokeApplications: (spoke: string) => `spokes/${spoke}/applications.yaml`,
} as const;

/**
 * Sends every API object at or below `scope` to `file` (relative to `dist/<hub>/`, for example
 * `hub/controller.yaml`). The nearest routed ancestor wins; unrouted objects go to `hub/hub.yaml`.
 */
export function routeOutput(scope: IConstruct, file: string): void {
  if (!/^(hub|bootstrap|spokes)\/[A-Za-z0-9_][-A-Za-z0-9_./]*\.yaml$/.test(file) || file.includes('..')) {
    // A call that builds the construct tree wrongly: it throws at once (docs/reference/errors.md).
    throw new Error(
      `${scope.node.path || '<root>'}: routeOutput: file "${file}" must be a relative path under hub/, bootstrap/ or spokes/ ending in .yaml, for example "hub/extras.yaml"`,
    );
  }
  routes.set(scope, file);
}

const sortedScopes = new WeakSet<IConstruct>();

/**
 * Writes the children of `scope` in the order of their ids rather than the order they were created in.
 * A PullApplication renders one child per target spoke in name order; an escape hatch that asks for
 * one spoke's objects before the fleet renders creates that child early, and this keeps the output the
 * same either way.
 */
export function sortChildrenInOutput(scope: IConstruct): void {
  sortedScopes.add(scope);
}

/** `root` and every construct below it in output order: depth first, parents before children. */
export function inOutputOrder(root: IConstruct): IConstruct[] {
  const out: IConstruct[] = [];
  const visit = (c: IConstruct): void => {
    out.push(c);
    const children = c.node.children;
    const ordered = sortedScopes.has(c)
      ? [...children].sort((a, b) => (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0))
      : children;
    for (const child of ordered) visit(child);
  };
  visit(root);
  return out;
}

/** The output file of an API object. */
export function outputFileOf(obj: IConstruct): string {
  for (let at: IConstruct | undefined = obj; at; at = at.node.scope) {
    const file = routes.get(at);
    if (file) return file;
  }
  return OutputFiles.DEFAULT;
}

const stamped = new WeakSet<ApiObject>();

/**
 * Adds the provenance label and construct-path annotation (the object's own path) to an object that
 * was not made through {@link apiObjectFrom}. Idempotent.
 */
export function stampProvenance(obj: ApiObject): void {
  if (!stamped.has(obj)) addProvenance(obj, false);
}

/**
 * Adds provenance to `obj` once: the managed-by label unless it carries one, and the construct-path
 * annotation (its own path) unless `pathGiven` (a hub Application and its work both name the
 * PullApplication target that made them). {@link stampProvenance} then leaves it alone.
 */
export function addProvenance(obj: ApiObject, pathGiven: boolean): void {
  stamped.add(obj);
  if (obj.metadata.getLabel(MANAGED_BY_LABEL) === undefined) obj.metadata.addLabel(MANAGED_BY_LABEL, MANAGED_BY_VALUE);
  if (!pathGiven) obj.metadata.addAnnotation(CONSTRUCT_PATH_ANNOTATION, obj.node.path);
}

/**
 * cdk8s drops `null` when it renders an object, but a `null` in Helm values is how Helm removes a
 * chart default. Objects holding a `null` are built with this placeholder in its place and rendered
 * back to `null` (a string with NUL characters never comes from a fleet description: YAML cannot hold one).
 */
const NULL_PLACEHOLDER = '\u0000pullfleet:null\u0000';

function replaceNulls(value: unknown, from: unknown, to: unknown): unknown {
  if (value === from) return to;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => replaceNulls(item, from, to));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceNulls(item, from, to)]));
}

/** Strings at least this long are held once per fleet, however many objects hold them. */
const LONG_STRING = 256;
/**
 * Members under these keys are held once per fleet when equal: the RBAC rules, subjects and role
 * references every spoke's bootstrap repeats for each app (tens of thousands of equal small objects in a
 * fleet of a thousand spokes). They are frozen once shared.
 */
const SHARED_MEMBERS: ReadonlySet<string> = new Set(['rules', 'subjects', 'roleRef']);

/** What a fleet holds once: long strings, and equal values of {@link SHARED_MEMBERS}. */
interface SharedPool {
  readonly strings: Map<string, string>;
  readonly members: Map<string, object>;
}
const sharedPools = new WeakMap<IConstruct, SharedPool>();

/** What the fleet (the root construct) that `scope` belongs to holds once. */
function sharedPoolOf(scope: IConstruct): SharedPool {
  const root = scope.node.root;
  let pool = sharedPools.get(root);
  if (!pool) {
    pool = { strings: new Map(), members: new Map() };
    sharedPools.set(root, pool);
  }
  return pool;
}

/** `value`, and everything in it, frozen. */
function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) freezeDeep(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * Whether `value` holds a `null` anywhere; on the way, each long string member of it is replaced by the
 * equal string the fleet already holds, if any, and each member under a {@link SHARED_MEMBERS} key by the
 * equal value the fleet holds (frozen). The model builds the same long strings for every object of a kind
 * (the CEL expression of each ManifestWork, Helm values given as text) and the same RBAC parts for every
 * spoke, and a fleet of thousands of spokes would otherwise hold each of them tens of thousands of times.
 * Replacing a value with an equal one changes nothing but memory; frozen objects are left as they are.
 */
function shareEqualParts(value: unknown, pool: SharedPool): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  const writable = !Object.isFrozen(value);
  let holdsNull = false;
  for (const key of Object.keys(record)) {
    const item = record[key];
    if (typeof item === 'string') {
      if (item.length < LONG_STRING) continue;
      const held = pool.strings.get(item);
      if (held === undefined) pool.strings.set(item, item);
      else if (writable) record[key] = held;
    } else if (item !== null && typeof item === 'object') {
      if (shareEqualParts(item, pool)) holdsNull = true;
      else if (writable && SHARED_MEMBERS.has(key)) {
        // Only null-free values are shared: a value holding a null is copied with a placeholder later.
        const id = `${key}\u0000${JSON.stringify(item)}`;
        const held = pool.members.get(id);
        if (held === undefined) pool.members.set(id, freezeDeep(item));
        else record[key] = held;
      }
    } else if (item === null) {
      holdsNull = true;
    }
  }
  return holdsNull;
}

/**
 * `value` ready to be held by an ApiObject: when it holds a `null`, a copy with the placeholder in its
 * place, and `apiObject` renders the placeholder back to `null`. Long strings in it are shared with the
 * rest of the fleet ({@link shareEqualParts}).
 */
export function keepNulls<T>(apiObject: ApiObject, value: T): T {
  if (!shareEqualParts(value, sharedPoolOf(apiObject))) return value;
  renderNullsBack(apiObject);
  return replaceNulls(value, null, NULL_PLACEHOLDER) as T;
}

/** Makes `apiObject` render the placeholder as `null`. */
function renderNullsBack(apiObject: ApiObject): void {
  const render = apiObject.toJson.bind(apiObject);
  apiObject.toJson = () => replaceNulls(render(), NULL_PLACEHOLDER, null);
}

/** An object built by src/model, as the construct library renders it. */
export type PlainObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
};

/**
 * An ApiObject from a plain object built by src/model; a `null` in it is rendered as `null` (cdk8s
 * alone would drop it). Provenance is added here: the managed-by label,
 * and the construct path unless the model object already names one (a hub Application and its work
 * both name the PullApplication target that made them).
 */
export function apiObjectFrom<T extends PlainObject>(scope: IConstruct, id: string, obj: T): ApiObject {
  const keepsNull = shareEqualParts(obj, sharedPoolOf(scope));
  const props = (keepsNull ? replaceNulls(obj, null, NULL_PLACEHOLDER) : obj) as PlainObject & {
    metadata: { labels?: Record<string, string> };
  };
  // Labels and annotations go straight into the object's metadata: given in props, cdk8s would keep the
  // given maps as well as its own copies of them (the rendered object is the same either way).
  const { labels, annotations, ...metadata } = props.metadata;
  const apiObject = new ApiObject(scope, id, { ...props, metadata });
  for (const [key, value] of Object.entries(labels ?? {})) apiObject.metadata.addLabel(key, value);
  for (const [key, value] of Object.entries(annotations ?? {})) apiObject.metadata.addAnnotation(key, value);
  if (keepsNull) renderNullsBack(apiObject);
  addProvenance(apiObject, obj.metadata.annotations?.[CONSTRUCT_PATH_ANNOTATION] !== undefined);
  return apiObject;
}

/**
 * The thread that writes files for an {@link OutputWriter} while synth goes on rendering and checking the
 * next ones (creating thousands of files costs the kernel time that would otherwise add to synth's own).
 * Plain CommonJS, run without the loaders of the main thread. `counters[0]` counts the files handled,
 * `counters[1]` becomes 1 after a failure, whose message goes to the `errors` port first. Files come in parts
 * (the first creates the file, the last closes it); `closeAll` closes what is open.
 */
const WRITER_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const counters = new Int32Array(workerData.counters);
const folders = new Set();
const open = new Map();
parentPort.on('message', ({ target, text, first, last, closeAll }) => {
  if (closeAll) {
    for (const fd of open.values()) fs.closeSync(fd);
    open.clear();
  } else if (Atomics.load(counters, 1) === 0) {
    try {
      let fd = open.get(target);
      if (first) {
        const folder = path.dirname(target);
        if (!folders.has(folder)) {
          fs.mkdirSync(folder, { recursive: true });
          folders.add(folder);
        }
        fd = fs.openSync(target, 'w');
        open.set(target, fd);
      }
      fs.writeSync(fd, text);
      if (last) {
        open.delete(target);
        fs.closeSync(fd);
      }
    } catch (error) {
      workerData.errors.postMessage(error instanceof Error ? error.message : String(error));
      Atomics.store(counters, 1, 1);
    }
  }
  Atomics.add(counters, 0, 1);
  Atomics.notify(counters, 0);
});
`;

/** From this many files on, they are written by a thread of their own. */
const THREAD_FROM_FILES = 200;
/** Parts of files handed to the writing thread and not yet written, at most (this bounds the memory they hold). */
const IN_FLIGHT = 16;
/** A file is written in parts of about this many characters, so that a large one is never held whole. */
const PART = 1 << 16;
/** A writing thread that handles no file for this long has stopped: synth fails rather than wait forever. */
const STALLED_MS = 120_000;

/** The writing thread of an {@link OutputWriter}, once started. */
interface WriterThread {
  readonly thread: Worker;
  readonly counters: Int32Array;
  readonly errors: MessagePort;
  posted: number;
}

/**
 * Writes a fleet's files into an output folder that is missing or empty while the fleet is still being
 * validated, so each object is rendered once and a file goes to disk as soon as its last object passed.
 * Should anything be wrong, {@link OutputWriter.discard} removes every file and folder it made, which leaves
 * the folder as it was: missing, or empty. A folder that already holds files is never written this way
 * (see {@link OutputWriter.open}): there synth validates everything first and writes afterwards.
 * Many files are written by a thread of their own ({@link OutputWriter.expect}); {@link OutputWriter.finish}
 * waits for the last of them and throws what failed.
 */
export class OutputWriter {
  /** Folders known to exist (made here, or found). */
  private readonly folders = new Set<string>();
  /** The entries of the output folder this writer made (the first part of each file written). */
  private readonly made = new Set<string>();
  /** Files being written part by part (without the writing thread). */
  private readonly open = new Map<string, number>();
  private discarded = false;
  private writer?: WriterThread;

  private constructor(
    private readonly outdir: string,
    /** Whether the output folder existed (empty) before this writer made anything. */
    private readonly existed: boolean,
  ) {}

  /** A writer for `outdir` when it is missing or an empty folder; undefined otherwise. */
  public static open(outdir: string): OutputWriter | undefined {
    let entries: string[];
    try {
      entries = fs.readdirSync(outdir);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? new OutputWriter(outdir, false) : undefined;
    }
    return entries.length === 0 ? new OutputWriter(outdir, true) : undefined;
  }

  /** Says how many files are coming: from {@link THREAD_FROM_FILES} on, a thread of their own writes them. */
  public expect(files: number): void {
    if (this.writer || files < THREAD_FROM_FILES) return;
    const counters = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const { port1, port2 } = new MessageChannel();
    const thread = new Worker(WRITER_THREAD, {
      eval: true,
      execArgv: [],
      workerData: { counters: counters.buffer, errors: port2 },
      transferList: [port2],
      // It only holds the few files in flight: a small young generation keeps its memory small.
      resourceLimits: { maxYoungGenerationSizeMb: 2 },
    });
    thread.unref();
    this.writer = { thread, counters, errors: port1, posted: 0 };
  }

  /** Writes `text` into `file` (relative to the output folder), making its folders first. */
  public write(file: string, text: string): void {
    const out = this.file(file);
    out.add(text);
    out.close();
  }

  /**
   * A file (relative to the output folder) written part by part: what is added goes to disk about every
   * {@link PART} characters, and the rest on `close()`.
   */
  public file(file: string): { add(text: string): void; close(): void } {
    if (this.discarded) throw new Error(`${file}: the output was discarded`);
    const target = path.join(this.outdir, file);
    this.made.add(file.split('/')[0]);
    let parts: string[] = [];
    let size = 0;
    let first = true;
    const flush = (last: boolean) => {
      this.writePart(target, parts.join(''), first, last);
      first = false;
      parts = [];
      size = 0;
    };
    return {
      add: (text: string) => {
        parts.push(text);
        size += text.length;
        if (size >= PART) flush(false);
      },
      close: () => flush(true),
    };
  }

  /** Writes one part of a file: the first one creates it (and its folders), the last one closes it. */
  private writePart(target: string, text: string, first: boolean, last: boolean): void {
    if (this.discarded) throw new Error(`${target}: the output was discarded`);
    const writer = this.writer;
    if (writer) {
      this.waitFor(writer.posted - IN_FLIGHT + 1);
      this.throwFailure();
      writer.thread.postMessage({ target, text, first, last });
      writer.posted++;
      return;
    }
    let fd = this.open.get(target);
    if (first) {
      const folder = path.dirname(target);
      if (!this.folders.has(folder)) {
        fs.mkdirSync(folder, { recursive: true });
        this.folders.add(folder);
      }
      fd = fs.openSync(target, 'w');
      this.open.set(target, fd);
    }
    try {
      fs.writeSync(fd!, text);
    } finally {
      if (last) {
        this.open.delete(target);
        fs.closeSync(fd!);
      }
    }
  }

  /** Waits until every file is written; throws the first failure of the writing thread. */
  public finish(): void {
    const writer = this.writer;
    if (!writer) return;
    this.waitFor(writer.posted);
    this.throwFailure();
    this.stopThread();
  }

  /** Removes everything written: the output folder is missing again, or empty again. */
  public discard(): void {
    if (this.discarded) return;
    this.discarded = true;
    for (const fd of this.open.values()) fs.closeSync(fd);
    this.open.clear();
    const writer = this.writer;
    if (writer) {
      try {
        // Nothing may land after the removal, and no file the thread opened stays open.
        writer.thread.postMessage({ closeAll: true });
        writer.posted++;
        this.waitFor(writer.posted);
      } finally {
        this.stopThread();
      }
    }
    if (!this.existed) {
      fs.rmSync(this.outdir, { recursive: true, force: true });
      return;
    }
    for (const entry of this.made) fs.rmSync(path.join(this.outdir, entry), { recursive: true, force: true });
  }

  /** Blocks until the writing thread has handled `files` files. */
  private waitFor(files: number): void {
    const writer = this.writer;
    if (!writer) return;
    let handled = Atomics.load(writer.counters, 0);
    let since = Date.now();
    while (handled < files) {
      Atomics.wait(writer.counters, 0, handled, 1000);
      const now = Atomics.load(writer.counters, 0);
      if (now !== handled) since = Date.now();
      else if (Date.now() - since > STALLED_MS)
        throw new Error(
          `writing the output into ${this.outdir} stopped: no file was written for ${STALLED_MS / 1000} s`,
        );
      handled = now;
    }
  }

  private throwFailure(): void {
    const writer = this.writer;
    if (!writer || Atomics.load(writer.counters, 1) === 0) return;
    const message = receiveMessageOnPort(writer.errors)?.message as string | undefined;
    throw new Error(`writing the output into ${this.outdir} failed: ${message ?? 'unknown error'}`);
  }

  private stopThread(): void {
    const writer = this.writer;
    if (!writer) return;
    this.writer = undefined;
    writer.errors.close();
    void writer.thread.terminate();
  }
}

/** Returned by {@link plainJson} for a value that is not plain JSON data. */
const NOT_PLAIN = Symbol('not plain');

/** How cdk8s sanitizes a value: sorted keys, and for metadata, empty arrays and objects dropped too. */
interface Sanitize {
  readonly sortKeys: boolean;
  readonly filterEmpty: boolean;
}

/**
 * `value` as cdk8s renders it when it is JSON data, `Lazy` values included (resolving such a value is a copy
 * in which each `Lazy` is replaced by what it produces; sanitizing then drops `null` and `undefined` members,
 * and sorts keys), or {@link NOT_PLAIN} when it holds anything else: another class instance (a token), a
 * function, an object without the plain prototype.
 */
function plainJson(value: unknown, how: Sanitize): unknown {
  if (value === null || value === undefined) return undefined;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    if (how.filterEmpty && value.length === 0) return undefined;
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = plainJson(value[i], how);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype)
    return value instanceof Lazy ? plainJson(value.produce(), how) : NOT_PLAIN;
  const keys = Object.keys(value);
  if (how.sortKeys) keys.sort();
  const out: Record<string, unknown> = {};
  let members = 0;
  for (const key of keys) {
    const item = plainJson((value as Record<string, unknown>)[key], how);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    if (item !== undefined && item !== null) {
      out[key] = item;
      members++;
    }
  }
  return how.filterEmpty && members === 0 ? undefined : out;
}

/** Whether each app resolves values with cdk8s's own resolvers only (a plain value is then left as it is). */
const defaultResolvers = new WeakMap<App, boolean>();

function resolvesOnlyTokens(app: App): boolean {
  let only = defaultResolvers.get(app);
  if (only === undefined) {
    const kinds = [LazyResolver, ImplicitTokenResolver, NumberStringUnionResolver];
    only = app.resolvers.length === kinds.length && app.resolvers.every((r, i) => r.constructor === kinds[i]);
    defaultResolvers.set(app, only);
  }
  return only;
}

/**
 * The metadata of an object as `ApiObjectMetadataDefinition.toJson` renders it (the fields it holds, resolved
 * and sanitized with empty arrays and objects dropped, keys always sorted), or {@link NOT_PLAIN} when it is not cdk8s's own
 * rendering or its fields are not as expected.
 */
function metadataJson(metadata: ApiObjectMetadataDefinition): unknown {
  if (metadata.toJson !== ApiObjectMetadataDefinition.prototype.toJson) return NOT_PLAIN;
  const field = (name: string): unknown => Reflect.get(metadata, name);
  const additional = field('_additionalAttributes');
  const labels = field('labels');
  const annotations = field('annotations');
  const finalizers = field('finalizers');
  const ownerReferences = field('ownerReferences');
  if (
    typeof additional !== 'object' ||
    additional === null ||
    typeof labels !== 'object' ||
    typeof annotations !== 'object' ||
    !Array.isArray(finalizers) ||
    !Array.isArray(ownerReferences)
  )
    return NOT_PLAIN;
  return plainJson(
    {
      ...additional,
      name: metadata.name,
      namespace: metadata.namespace,
      annotations,
      finalizers,
      ownerReferences,
      labels,
    },
    { sortKeys: true, filterEmpty: true },
  );
}

/**
 * Objects whose quick rendering is compared with `toJson()` before it is trusted: should cdk8s render
 * differently (another version), the quick rendering is switched off for the rest of the process.
 */
let probesLeft = 64;
let quickRendering = true;

function quickJson(obj: ApiObject, props: object, sortKeys: boolean): Record<string, unknown> | undefined {
  const metadata = metadataJson(obj.metadata);
  if (metadata === NOT_PLAIN) return undefined;
  const data = plainJson({ ...props, metadata }, { sortKeys, filterEmpty: false });
  if (data === NOT_PLAIN || typeof data !== 'object' || data === null) return undefined;
  // apiVersion, kind and metadata first, then the rest (as ApiObject.toJson orders them).
  const json = data as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const key of ['apiVersion', 'kind', 'metadata', ...Object.keys(json)]) if (key in json) result[key] = json[key];
  return result;
}

/**
 * The JSON of `obj`, exactly as `obj.toJson()` renders it, in less time for the usual case: an ApiObject
 * whose rendering is cdk8s's own (no subclass or instance override of toJson, no JSON patches, the app's
 * default resolvers) and whose props and metadata are JSON data (`Lazy` values included). cdk8s resolves
 * every value into a copy of itself, looking the app up once per value, and then sanitizes the copy; here
 * both happen in one walk. Anything else (a token, an escape-hatch patch) is rendered by `obj.toJson()`,
 * and so are the first objects of a process, whose quick rendering is checked against it. What cdk8s does
 * is in cdk8s-team/cdk8s-core `src/api-object.ts` (`toJson`), `src/metadata.ts` (`toJson`), `src/resolve.ts`
 * and `src/_util.ts` (`sanitizeValue`).
 */
export function renderJson(obj: ApiObject): Record<string, unknown> {
  const props: unknown = Reflect.get(obj, 'props');
  const patches: unknown = Reflect.get(obj, 'patches');
  if (
    !quickRendering ||
    obj.toJson !== ApiObject.prototype.toJson ||
    !Array.isArray(patches) ||
    patches.length > 0 ||
    typeof props !== 'object' ||
    props === null ||
    !resolvesOnlyTokens(App.of(obj))
  ) {
    return obj.toJson() as Record<string, unknown>;
  }
  let quick: Record<string, unknown> | undefined;
  try {
    quick = quickJson(obj, props, !process.env.CDK8S_DISABLE_SORT);
  } catch {
    quick = undefined; // toJson says what went wrong, naming the construct
  }
  if (quick === undefined) return obj.toJson() as Record<string, unknown>;
  if (probesLeft > 0) {
    probesLeft--;
    const json = obj.toJson() as Record<string, unknown>;
    if (JSON.stringify(json) !== JSON.stringify(quick)) quickRendering = false;
    return json;
  }
  return quick;
}
