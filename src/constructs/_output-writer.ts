/**
 * The writer that puts a fleet's files into a new output folder while the fleet is validated, and takes them
 * all away again should anything be wrong. Many files are written by a thread of their own (_writer-thread.ts).
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import {
  FAILED,
  HANDLED,
  START_FAILED,
  WRITER_ROLE,
  type WriterMessage,
  type WriterThreadData,
} from './_writer-thread.js';

/**
 * The module a writing thread runs: `entry`, given `module` (its workerData) when the entry is the checkout's
 * loader (_writer-thread-dev.mjs).
 */
export interface WriterThreadModule {
  /** The module the thread starts with. */
  readonly entry: URL;
  /**
   * The module `entry` loads (the checkout's TypeScript one).
   * @default - none: `entry` is the writing thread itself
   */
  readonly module?: URL;
}

/**
 * How a writing thread starts beside `base` (this module's URL): compiled (lib/), the `_writer-thread.js`
 * beside it; in a checkout (sources run through tsx or ts-jest), `_writer-thread-dev.mjs` loading
 * `_writer-thread.ts` through tsx; undefined when neither can run (then files are written in this thread).
 */
export function writerThreadModule(base: string = import.meta.url): WriterThreadModule | undefined {
  const compiled = new URL('./_writer-thread.js', base);
  if (fs.existsSync(fileURLToPath(compiled))) return { entry: compiled };
  const source = new URL('./_writer-thread.ts', base);
  const loader = new URL('./_writer-thread-dev.mjs', base);
  if (!fs.existsSync(fileURLToPath(source)) || !fs.existsSync(fileURLToPath(loader))) return undefined;
  try {
    createRequire(fileURLToPath(loader)).resolve('tsx/esm/api');
  } catch {
    return undefined;
  }
  return { entry: loader, module: source };
}

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
    /** What a writing thread runs; undefined: every file is written in this thread. */
    private readonly threadModule: WriterThreadModule | undefined,
  ) {}

  /**
   * A writer for `outdir` when it is missing or an empty folder; undefined otherwise. `thread`: what a
   * writing thread runs (undefined: no thread, every file is written in this one).
   */
  public static open(
    outdir: string,
    thread: WriterThreadModule | undefined = writerThreadModule(),
  ): OutputWriter | undefined {
    let entries: string[];
    try {
      entries = fs.readdirSync(outdir);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? new OutputWriter(outdir, false, thread) : undefined;
    }
    return entries.length === 0 ? new OutputWriter(outdir, true, thread) : undefined;
  }

  /**
   * Says how many files are coming: from {@link THREAD_FROM_FILES} on, a thread of their own writes them (when
   * there is a thread module to run).
   */
  public expect(files: number): void {
    const run = this.threadModule;
    if (this.writer || files < THREAD_FROM_FILES || !run) return;
    const counters = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const { port1, port2 } = new MessageChannel();
    const workerData: WriterThreadData = {
      role: WRITER_ROLE,
      counters: counters.buffer,
      errors: port2,
      ...(run.module ? { module: run.module.href } : {}),
    };
    // Without the loaders of this thread: the module needs none (or registers its own).
    const thread = new Worker(run.entry, {
      execArgv: [],
      workerData,
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
      writer.thread.postMessage({ target, text, first, last } satisfies WriterMessage);
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
        writer.thread.postMessage({ closeAll: true } satisfies WriterMessage);
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

  /** Blocks until the writing thread has handled `files` files, or could not start. */
  private waitFor(files: number): void {
    const writer = this.writer;
    if (!writer) return;
    let handled = Atomics.load(writer.counters, HANDLED);
    let since = Date.now();
    while (handled < files && Atomics.load(writer.counters, FAILED) !== START_FAILED) {
      Atomics.wait(writer.counters, HANDLED, handled, 1000);
      const now = Atomics.load(writer.counters, HANDLED);
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
    if (!writer || Atomics.load(writer.counters, FAILED) === 0) return;
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
