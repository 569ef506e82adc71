/**
 * Plays a second writer on the objects the controller writes (a user with kubectl, another controller,
 * the applicationset-controller regenerating apps): read, change, write with the resourceVersion read
 * (optimistic locking), retrying on 409 like any well-behaved client. Each write moves the object's
 * resourceVersion on, so the controller's own writes race against it and its cache falls behind.
 * Changes are chosen by a seeded PRNG, so a run replays from its seed.
 */
import { SeededRandom } from '../double/fake/random.js';
import { errorCode, type ObjectRef, type TestCluster } from './cluster.js';
import type { KubeObj } from '../double/fake-apiserver.js';

/** A change to make to the current object: a merge patch (metadata.resourceVersion is added), or undefined to skip. */
export type Change = (current: KubeObj, round: number, random: SeededRandom) => Record<string, unknown> | undefined;

/** Changes an annotation only this writer uses (everything else stays as it is). */
export const touchAnnotation =
  (key = 'chaos.example.com/touched'): Change =>
  (_current, round) => ({ metadata: { annotations: { [key]: String(round) } } });

/** Changes a label only this writer uses. */
export const touchLabel =
  (key = 'chaos.example.com/round'): Change =>
  (_current, round) => ({ metadata: { labels: { [key]: `r${round}` } } });

/** Moves an Application's spec.source.targetRevision to a new value. */
export const bumpRevision: Change = (_current, round) => ({ spec: { source: { targetRevision: `rev-${round}` } } });

export interface ConflictWriterOptions {
  readonly seed: number;
  /** Retries per write on 409 before the write is given up (counted in `gaveUp`). @default 20 */
  readonly retries?: number;
}

export class ConflictWriter {
  private readonly random: SeededRandom;
  private round = 0;
  /** Writes that landed. */
  written = 0;
  /** 409s met (each retried). */
  conflicts = 0;
  /** Writes given up after too many conflicts, or because the object was gone. */
  gaveUp = 0;
  private loop?: Promise<void>;
  private stopping = false;

  constructor(
    private readonly cluster: TestCluster,
    private readonly targets: readonly ObjectRef[],
    private readonly changes: readonly Change[],
    private readonly options: ConflictWriterOptions,
  ) {
    this.random = new SeededRandom(options.seed).fork('conflict-writer');
  }

  /** One round: one change, picked at random, on one target, picked at random. Returns whether it landed. */
  async writeOnce(): Promise<boolean> {
    const round = ++this.round;
    const ref = this.random.pick(this.targets);
    const change = this.random.pick(this.changes);
    for (let attempt = 0; attempt <= (this.options.retries ?? 20); attempt++) {
      const current = await this.cluster.get<KubeObj>(ref);
      if (!current || current.metadata?.deletionTimestamp) break;
      const patch = change(current, round, this.random);
      if (!patch) return false;
      const metadata = {
        ...((patch.metadata as object | undefined) ?? {}),
        resourceVersion: current.metadata.resourceVersion,
      };
      try {
        await this.cluster.mergePatch(ref, { ...patch, metadata });
        this.written += 1;
        return true;
      } catch (e) {
        if (errorCode(e) === 404) break;
        if (errorCode(e) !== 409) throw e;
        this.conflicts += 1;
      }
    }
    this.gaveUp += 1;
    return false;
  }

  /** `rounds` writes, one after the other. */
  async burst(rounds: number): Promise<void> {
    for (let i = 0; i < rounds; i++) await this.writeOnce();
  }

  /** Keeps writing in the background (yielding to the event loop between writes) until {@link stop}. */
  start(): void {
    this.loop ??= (async () => {
      while (!this.stopping) {
        await this.writeOnce();
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
  }

  /** Stops the background writer and waits for its last write. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
  }
}
