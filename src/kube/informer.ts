/**
 * List + watch for one kind feeding the shared cache. The first list fills the cache before `synced`
 * resolves; watches resume from the last resourceVersion, relist on 410 Gone, and restart with
 * exponential backoff on any error. A watch the server ends at once without a single event counts as an
 * error (as client-go's reflector does), so a server that keeps closing watches never makes a hot loop;
 * a 429 waits at least its Retry-After. Nothing here ever exits the process.
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../model/core/types.js';
import { objectKey, type ObjectCache } from './cache.js';
import { KubeApiError, isGone, type KubeClient } from './client.js';
import type { ResourceKind, WatchScope } from './resources.js';
import { abortableSleep } from './timers.js';

export type InformerEventType = 'add' | 'update' | 'delete';
export type InformerHandler = (type: InformerEventType, object: KubeObject, previous?: KubeObject) => void;

export interface InformerOptions {
  readonly kind: ResourceKind;
  readonly scope?: WatchScope;
  readonly client: Pick<KubeClient, 'list' | 'watch'>;
  readonly cache: ObjectCache;
  readonly logger: Logger;
  /** Longest wait between watch restarts after errors. @default 30000 */
  readonly maxBackoffMs?: number;
  /** Server-side watch timeout; the watch is reopened after it. @default 300 */
  readonly watchTimeoutSeconds?: number;
  /** Called after each relist following a 410 Gone or an error (metrics). */
  readonly onRelist?: () => void;
  /** A watch that ends sooner than this without any event is an error. @default 1000 */
  readonly minWatchMs?: number;
  /** Monotonic clock in ms (tests). @default performance.now */
  readonly now?: () => number;
  /** Backoff wait (tests). @default abortableSleep */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Random source for jitter (tests). @default Math.random */
  readonly random?: () => number;
}

export class Informer {
  private readonly handlers: InformerHandler[] = [];
  private readonly abort = new AbortController();
  private resourceVersion = '';
  private running?: Promise<void>;
  private syncedResolve!: () => void;
  /** Resolves once the first list is in the cache. */
  readonly synced: Promise<void>;

  constructor(private readonly options: InformerOptions) {
    this.synced = new Promise((resolve) => (this.syncedResolve = resolve));
  }

  get kind(): ResourceKind {
    return this.options.kind;
  }

  on(handler: InformerHandler): void {
    this.handlers.push(handler);
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private emit(type: InformerEventType, object: KubeObject, previous?: KubeObject): void {
    for (const handler of this.handlers) {
      try {
        handler(type, object, previous);
      } catch (error) {
        this.options.logger.error({ err: error, kind: this.kind.kind }, 'informer handler failed');
      }
    }
  }

  /** Lists everything and replaces the cache contents, emitting the differences. */
  private async relist(): Promise<void> {
    const { kind, cache, client, scope } = this.options;
    const result = await client.list(kind, scope, undefined, { signal: this.abort.signal });
    const seen = new Set<string>();
    for (const item of result.items) {
      const key = objectKey(item);
      seen.add(key);
      const previous = cache.get(kind.id, key);
      if (previous && previous.metadata.resourceVersion === item.metadata.resourceVersion) continue;
      cache.upsert(kind.id, item);
      this.emit(previous ? 'update' : 'add', item, previous);
    }
    for (const key of cache.keys(kind.id)) {
      if (seen.has(key)) continue;
      const previous = cache.remove(kind.id, key);
      if (previous) this.emit('delete', previous);
    }
    this.resourceVersion = result.resourceVersion;
    cache.markSynced(kind.id);
  }

  private handle(event: { type: string; object: KubeObject }): void {
    const { kind, cache } = this.options;
    const object = event.object;
    if (object?.metadata?.resourceVersion) this.resourceVersion = object.metadata.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    object.apiVersion ??= kind.group ? `${kind.group}/${kind.version}` : kind.version;
    object.kind ??= kind.kind;
    if (event.type === 'DELETED') {
      const previous = cache.remove(kind.id, objectKey(object));
      this.emit('delete', previous ?? object);
      return;
    }
    const previous = cache.upsert(kind.id, object);
    this.emit(previous ? 'update' : 'add', object, previous);
  }

  private async run(): Promise<void> {
    const { logger, kind } = this.options;
    const signal = this.abort.signal;
    const maxBackoff = this.options.maxBackoffMs ?? 30000;
    const minWatchMs = this.options.minWatchMs ?? 1000;
    const now = this.options.now ?? (() => performance.now());
    const wait = this.options.sleep ?? abortableSleep;
    const random = this.options.random ?? Math.random;
    let failures = 0;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.relist();
          if (failures > 0 || this.resourceVersion) this.options.onRelist?.();
          needList = false;
          this.syncedResolve();
        }
        let events = 0;
        const started = now();
        await this.options.client.watch(
          kind,
          this.options.scope ?? {},
          this.resourceVersion,
          (event) => {
            events++;
            this.handle(event);
          },
          signal,
          this.options.watchTimeoutSeconds ?? 300,
        );
        if (signal.aborted) break;
        const lasted = now() - started;
        if (events === 0 && lasted < minWatchMs)
          throw new Error(`very short watch: the server ended it after ${Math.round(lasted)}ms without any event`);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (isGone(error)) {
          logger.info({ kind: kind.kind }, 'watch expired (410 Gone): relisting');
          needList = true;
          continue;
        }
        failures++;
        const backoff = Math.min(maxBackoff, 200 * 2 ** Math.min(failures, 10)) * (0.5 + random() / 2);
        const retryAfter = error instanceof KubeApiError ? (error.retryAfterMs ?? 0) : 0;
        const delay = Math.max(backoff, Math.min(retryAfter, maxBackoff));
        logger.warn(
          {
            kind: kind.kind,
            err: error instanceof Error ? error.message : String(error),
            retryInMs: Math.round(delay),
          },
          'list/watch failed: retrying',
        );
        // After repeated failures the resourceVersion may be too old: relist to be safe.
        if (failures >= 3) needList = true;
        await wait(delay, signal);
      }
    }
  }
}
