/**
 * An in-memory world for pure reconcile tests: the informer cache and a writer that applies every write
 * to that cache, as the API server plus a watch would. resourceVersion preconditions give 409s.
 */
import { pino } from 'pino';
import { ObjectCache, objectKey } from '../../src/kube/cache.js';
import { resolveConfig, type ControllerConfig } from '../../src/controller/runtime/config.js';
import { KubeApiError, type KubeWriter } from '../../src/kube/client.js';
import { ControllerMetrics } from '../../src/controller/runtime/metrics.js';
import type {
  Reconciler,
  ReconcilerContext,
  ReconcilerFactory,
  WatchEventType,
} from '../../src/controller/runtime/reconciler.js';
import type { ResourceKind } from '../../src/kube/resources.js';
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL, SKIP_RECONCILE_ANNOTATION } from '../../src/model/core/keys.js';
import type { Application, KubeObject } from '../../src/model/core/types.js';

/** The label that puts a ManagedCluster in a ManagedClusterSet. */
const CLUSTER_SET_LABEL = 'cluster.open-cluster-management.io/clusterset';

/** How {@link managedCluster} builds a ManagedCluster. */
export interface ClusterOptions {
  /** The ManagedClusterSet it is in (its clusterset label); none when left out. */
  readonly clusterSet?: string;
  /** More labels, after the clusterset label. The cluster has no labels when this and `clusterSet` are left out. */
  readonly labels?: Record<string, string>;
  /** More top-level fields (spec, status). */
  readonly extra?: Record<string, unknown>;
}

/** A ManagedCluster named `name`, as the hub's registration controller keeps it. */
export function managedCluster(name: string, options: ClusterOptions = {}): KubeObject {
  const labels = {
    ...(options.clusterSet !== undefined ? { [CLUSTER_SET_LABEL]: options.clusterSet } : {}),
    ...options.labels,
  };
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name, ...(options.clusterSet !== undefined || options.labels ? { labels } : {}) },
    ...options.extra,
  };
}

/** How {@link pullApplication} builds a hub Application. */
export interface PullApplicationOptions {
  /** @default 'guestbook' */
  readonly name?: string;
  /** @default 'argocd' */
  readonly namespace?: string;
  /** Its target cluster annotation; `null` leaves the annotation out. @default 'spoke1' */
  readonly cluster?: string | null;
  /** Its labels, instead of the pull label. @default the pull label */
  readonly labels?: Record<string, string>;
  /** More annotations, after the skip-reconcile and target-cluster ones. */
  readonly annotations?: Record<string, string>;
  /** Whether it carries Argo CD's skip-reconcile annotation, as pull Applications do. @default true */
  readonly skipReconcile?: boolean;
  /** More metadata (uid, ownerReferences). */
  readonly metadata?: Partial<Application['metadata']>;
  /** The git path (in https://git.example/apps) and in-cluster destination namespace its default spec deploys. @default name */
  readonly workload?: string;
  /** Its spec. @default project default, `workload` from git.example/apps into namespace `workload` in-cluster */
  readonly spec?: Application['spec'];
}

/** A hub Application opted in to pull delivery, as a user writes one. */
export function pullApplication(options: PullApplicationOptions = {}): Application {
  const name = options.name ?? 'guestbook';
  const cluster = options.cluster === undefined ? 'spoke1' : options.cluster;
  const workload = options.workload ?? name;
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name,
      namespace: options.namespace ?? 'argocd',
      ...options.metadata,
      labels: options.labels ?? { [PULL_LABEL]: 'true' },
      annotations: {
        ...(options.skipReconcile === false ? {} : { [SKIP_RECONCILE_ANNOTATION]: 'true' }),
        ...(cluster !== null ? { [MANAGED_CLUSTER_ANNOTATION]: cluster } : {}),
        ...options.annotations,
      },
    },
    spec: options.spec ?? {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: workload },
      source: { repoURL: 'https://git.example/apps', path: workload },
    },
  };
}

/** How {@link World.hub} seeds a hub. */
export interface HubOptions {
  /** The ManagedClusters, all in `clusterSet`. */
  readonly clusters: readonly string[];
  /** The namespace the ManagedClusterSet is bound to (where the Applications live). */
  readonly namespace: string;
  /** @default 'prod' */
  readonly clusterSet?: string;
  /** The ManagedClusterSet's spec. @default none */
  readonly clusterSetSpec?: Record<string, unknown>;
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Server-side apply for one field manager: fields the manager set last time and leaves out now are
 * removed; fields it sets replace what is there (lists are atomic, as in a CRD without list-type);
 * fields other writers own stay.
 */
function serverSideApply(existing: unknown, previousApplied: unknown, applied: unknown): unknown {
  if (!isObject(applied)) return structuredClone(applied);
  const result: Record<string, unknown> = isObject(existing) ? { ...existing } : {};
  const before = isObject(previousApplied) ? previousApplied : {};
  for (const key of Object.keys(before)) if (!(key in applied)) delete result[key];
  for (const [key, value] of Object.entries(applied)) {
    if (value === undefined) continue;
    result[key] = isObject(value) ? serverSideApply(result[key], before[key], value) : structuredClone(value);
  }
  return result;
}

export interface WriteRecord {
  verb: 'apply' | 'applyStatus' | 'patch' | 'delete';
  resource: string;
  key: string;
  body?: unknown;
}

export class World implements KubeWriter {
  readonly cache = new ObjectCache();
  readonly writes: WriteRecord[] = [];
  private version = 1;
  /** Fail the next write of this verb with this HTTP status. */
  failNext?: { verb: WriteRecord['verb']; status: number };
  /**
   * What the server keeps of an applied object, as a CRD schema that lacks fields prunes them (the default
   * `fieldValidation=Warn` drops unknown fields and answers with what it stored). Default: all of it.
   */
  storedAs?: (kindId: string, object: KubeObject) => KubeObject;
  /**
   * Why the server refuses a server-side apply of this object (a 500, as kube-apiserver answers an apply
   * carrying a field its CRD does not declare: "field not declared in schema"), or undefined to accept it.
   */
  refusesApply?: (kindId: string, object: KubeObject) => string | undefined;
  clock = new Date('2026-03-01T12:00:00Z');
  /** Watch specs of the reconcilers built here: every change is reported to them, as the informer would. */
  private readonly watches: Array<{
    kindId: string;
    keysFor: (object: KubeObject, previous: KubeObject | undefined, type: WatchEventType) => unknown;
  }> = [];
  /** The last configuration the controller applied, per object: what its field manager owns. */
  private readonly applied = new Map<string, unknown>();
  /** Keys every watch event asked to enqueue, in order (what the manager would queue). */
  readonly enqueued: string[] = [];

  /** While set, writes land in the cache but no watch event is delivered (a watch that lags or drops events). */
  muted = false;

  private notify(
    kindId: string,
    object: KubeObject,
    previous: KubeObject | undefined,
    type: WatchEventType = previous ? 'update' : 'add',
  ): void {
    if (this.muted) return;
    for (const watch of this.watches) {
      if (watch.kindId !== kindId) continue;
      const keys = watch.keysFor(object, previous, type);
      if (Array.isArray(keys)) this.enqueued.push(...(keys as string[]));
      else if (keys === 'all') this.enqueued.push('*');
    }
  }

  put<T extends KubeObject>(kindId: string, object: T): T {
    const copy = structuredClone(object);
    copy.metadata.resourceVersion = String(++this.version);
    copy.metadata.uid ??= `uid-${objectKey(copy)}`;
    const previous = this.cache.upsert(kindId, copy);
    this.notify(kindId, copy, previous);
    return copy;
  }

  get<T extends KubeObject>(kindId: string, key: string): T | undefined {
    const found = this.cache.get<T>(kindId, key);
    return found ? structuredClone(found) : undefined;
  }

  /**
   * What the hub's Argo CD does with one object of a commit (an Application, or a ConfigMap), stored as
   * `namespace`/its name: it applies what git holds and leaves what others wrote (finalizers, status,
   * other annotations).
   */
  applyFromGit(namespace: string, object: KubeObject): void {
    const kindId = object.kind === 'ConfigMap' ? 'ConfigMap' : 'Application';
    const existing = this.get<KubeObject>(kindId, `${namespace}/${object.metadata.name}`);
    this.put(kindId, {
      ...existing,
      ...object,
      metadata: {
        ...existing?.metadata,
        ...object.metadata,
        annotations: { ...existing?.metadata.annotations, ...object.metadata.annotations },
      },
      ...(existing && 'status' in existing ? { status: (existing as Application).status } : {}),
    });
  }

  private fail(verb: WriteRecord['verb']): void {
    if (this.failNext?.verb === verb) {
      const status = this.failNext.status;
      this.failNext = undefined;
      throw new KubeApiError(status, `${verb}: injected ${status}`);
    }
  }

  async apply<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    this.fail('apply');
    const key = objectKey(object);
    this.writes.push({ verb: 'apply', resource: kind.plural, key, body: object });
    const refusal = this.refusesApply?.(kind.id, object);
    if (refusal) throw new KubeApiError(500, `PATCH ${key}: 500 ${refusal}`);
    const existing = this.cache.get(kind.id, key);
    // As kube-apiserver: a resourceVersion in the applied object is a precondition on an existing object
    // (409 when it differs), and ignored when the apply creates the object.
    const wanted = object.metadata.resourceVersion;
    if (existing && wanted !== undefined && wanted !== existing.metadata.resourceVersion)
      throw new KubeApiError(409, `${key}: the object has been modified`, 'Conflict');
    const ownedKey = `${kind.id}:${key}`;
    const { status: _status, ...body } = structuredClone(object) as T & { status?: unknown };
    delete body.metadata.resourceVersion;
    const merged = serverSideApply(
      existing ? structuredClone(existing) : {},
      existing ? this.applied.get(ownedKey) : undefined,
      body,
    ) as T;
    // Identity and bookkeeping stay the server's.
    if (existing) {
      merged.metadata.uid = existing.metadata.uid;
      if (existing.metadata.deletionTimestamp) merged.metadata.deletionTimestamp = existing.metadata.deletionTimestamp;
    }
    this.applied.set(ownedKey, body);
    return this.put(kind.id, (this.storedAs ? this.storedAs(kind.id, merged) : merged) as T);
  }

  /** A server-side apply of `object`'s status through the status subresource: only the status changes. */
  async applyStatus<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    this.fail('applyStatus');
    const key = objectKey(object);
    this.writes.push({ verb: 'applyStatus', resource: kind.plural, key, body: object });
    const existing = this.cache.get<T>(kind.id, key);
    if (!existing) throw new KubeApiError(404, `${key} not found`);
    const status = structuredClone((object as T & { status?: unknown }).status);
    return this.put(kind.id, { ...structuredClone(existing), status });
  }

  async mergePatch<T extends KubeObject>(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    patch: object,
  ): Promise<T> {
    this.fail('patch');
    const key = namespace ? `${namespace}/${name}` : name;
    this.writes.push({ verb: 'patch', resource: kind.plural, key, body: patch });
    const existing = this.cache.get(kind.id, key);
    if (!existing) throw new KubeApiError(404, `${key} not found`);
    const wanted = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (wanted && wanted !== existing.metadata.resourceVersion)
      throw new KubeApiError(409, `${key}: the object has been modified`);
    const next = mergePatch(structuredClone(existing), patch) as T;
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers ?? []).length) {
      next.metadata.resourceVersion = String(++this.version);
      this.cache.remove(kind.id, key);
      this.applied.delete(`${kind.id}:${key}`);
      this.notify(kind.id, next, undefined, 'delete');
      return next;
    }
    return this.put(kind.id, next);
  }

  async delete(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    preconditions: { uid?: string } = {},
  ): Promise<void> {
    this.fail('delete');
    const key = namespace ? `${namespace}/${name}` : name;
    this.writes.push({ verb: 'delete', resource: kind.plural, key });
    const existing = this.cache.get(kind.id, key);
    // As the API server: a delete whose uid precondition names another object is refused.
    if (existing && preconditions.uid !== undefined && existing.metadata.uid !== preconditions.uid)
      throw new KubeApiError(
        409,
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${existing.metadata.uid}`,
      );
    this.remove(kind.id, key);
  }

  /** Deletes like the API server: objects with finalizers only get a deletionTimestamp. */
  remove(kindId: string, key: string): void {
    const existing = this.cache.get(kindId, key);
    if (!existing) return;
    if ((existing.metadata.finalizers ?? []).length > 0) {
      if (!existing.metadata.deletionTimestamp)
        this.put(kindId, {
          ...structuredClone(existing),
          metadata: { ...structuredClone(existing.metadata), deletionTimestamp: this.clock.toISOString() },
        });
      return;
    }
    this.cache.remove(kindId, key);
    this.applied.delete(`${kindId}:${key}`);
    this.notify(kindId, existing, undefined, 'delete');
  }

  context(config: Partial<ControllerConfig> = {}): ReconcilerContext {
    for (const kind of [
      'Application',
      'ManifestWork',
      'ManagedCluster',
      'ManagedClusterSet',
      'ManagedClusterSetBinding',
      'ApplicationSet',
      'PlacementDecision',
      'Secret',
      'Namespace',
    ])
      this.cache.markSynced(kind);
    return {
      cache: this.cache,
      writer: this,
      config: resolveConfig({ leaderElection: false, ...config }),
      logger: pino({ level: 'silent' }),
      metrics: new ControllerMetrics(false),
      now: () => this.clock,
    };
  }

  /** A hub whose clusters are in one ManagedClusterSet bound to `namespace`: the tenancy a pull app needs. */
  static hub(options: HubOptions): World {
    const world = new World();
    const clusterSet = options.clusterSet ?? 'prod';
    for (const name of options.clusters) world.addCluster(name, { clusterSet });
    world.bindClusterSet(clusterSet, options.namespace, options.clusterSetSpec);
    return world;
  }

  /** Puts a ManagedCluster (see {@link managedCluster}). */
  addCluster(name: string, options: ClusterOptions = {}): KubeObject {
    return this.put('ManagedCluster', managedCluster(name, options));
  }

  /** Puts the ManagedClusterSet `name` and its ManagedClusterSetBinding to `namespace`. */
  bindClusterSet(name: string, namespace: string, spec?: Record<string, unknown>): void {
    this.put('ManagedClusterSet', {
      apiVersion: 'cluster.open-cluster-management.io/v1beta2',
      kind: 'ManagedClusterSet',
      metadata: { name },
      ...(spec ? { spec } : {}),
    });
    this.put('ManagedClusterSetBinding', {
      apiVersion: 'cluster.open-cluster-management.io/v1beta2',
      kind: 'ManagedClusterSetBinding',
      metadata: { name, namespace },
      spec: { clusterSet: name },
    });
  }

  /** Builds a reconciler wired to this world (indexes registered). */
  reconciler(factory: ReconcilerFactory, config: Partial<ControllerConfig> = {}): Reconciler {
    const reconciler = factory(this.context(config));
    if (!reconciler) throw new Error('reconciler disabled');
    for (const watch of reconciler.watches) {
      for (const [name, fn] of Object.entries(watch.indexes ?? {})) this.cache.addIndex(watch.kind.id, name, fn);
      if (watch.trim) this.cache.setTrim(watch.kind.id, watch.trim);
      this.watches.push({
        kindId: watch.kind.id,
        keysFor: (object, previous, type) => watch.keysFor(object, previous, type),
      });
    }
    return reconciler;
  }

  /** Reconciles `key` until a run writes nothing (level-triggered convergence); returns the number of runs. */
  async settle(reconciler: Reconciler, key: string, maxRuns = 10): Promise<number> {
    for (let run = 1; run <= maxRuns; run++) {
      const before = this.writes.length;
      await reconciler.reconcile(key, { enqueuedAt: Date.now() });
      if (this.writes.length === before) return run;
    }
    throw new Error(`${key} did not settle in ${maxRuns} runs`);
  }
}
