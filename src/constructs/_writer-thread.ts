/**
 * The thread that writes files for an `OutputWriter` (_output-writer.ts) while synth goes on rendering and
 * checking the next ones (creating thousands of files costs the kernel time that would otherwise add to
 * synth's own). It loads nothing but Node.js built-ins: compiled (lib/) it runs as it is, and in a checkout
 * _writer-thread-dev.mjs starts it through tsx.
 *
 * Files come in parts (the first creates the file, the last closes it); `closeAll` closes what is open.
 * `counters[HANDLED]` counts the messages handled; `counters[FAILED]` becomes {@link WRITE_FAILED} after a
 * failure, whose message goes to the `errors` port first (then the rest is counted but not written), or
 * {@link START_FAILED} when the thread could not load this module.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';

/** The counter of messages handled. */
export const HANDLED = 0;
/** The counter that says whether the thread failed, and how. */
export const FAILED = 1;
/** `counters[FAILED]` after a file could not be written. */
export const WRITE_FAILED = 1;
/** `counters[FAILED]` when the thread could not start (set by _writer-thread-dev.mjs). */
export const START_FAILED = 2;

/** Marks the data of a writing thread. */
export const WRITER_ROLE = 'pullfleet-output-writer';

/** What the thread is started with. */
export interface WriterThreadData {
  readonly role: typeof WRITER_ROLE;
  /** Two Int32 counters ({@link HANDLED}, {@link FAILED}). */
  readonly counters: SharedArrayBuffer;
  /** Where the first failure's message goes. */
  readonly errors: MessagePort;
  /**
   * In a checkout: the URL of this module, which _writer-thread-dev.mjs loads through tsx.
   * @default - none: the thread runs this module (compiled) directly
   */
  readonly module?: string;
}

/** One part of a file, or the request to close every file left open. */
export type WriterMessage =
  | { readonly target: string; readonly text: string; readonly first: boolean; readonly last: boolean }
  | { readonly closeAll: true };

/** Handles the messages of `port` until the thread is terminated. */
export function serveWrites(port: MessagePort, data: WriterThreadData): void {
  const counters = new Int32Array(data.counters);
  const folders = new Set<string>();
  const open = new Map<string, number>();
  port.on('message', (message: WriterMessage) => {
    if ('closeAll' in message) {
      for (const fd of open.values()) fs.closeSync(fd);
      open.clear();
    } else if (Atomics.load(counters, FAILED) === 0) {
      try {
        writePart(message, folders, open);
      } catch (error) {
        data.errors.postMessage(error instanceof Error ? error.message : String(error));
        Atomics.store(counters, FAILED, WRITE_FAILED);
      }
    }
    Atomics.add(counters, HANDLED, 1);
    Atomics.notify(counters, HANDLED);
  });
}

/** Writes one part: the first one creates the file (and its folders), the last one closes it. */
function writePart(
  { target, text, first, last }: { target: string; text: string; first: boolean; last: boolean },
  folders: Set<string>,
  open: Map<string, number>,
): void {
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
  if (fd === undefined) throw new Error(`${target}: a part of a file that was not opened`);
  fs.writeSync(fd, text);
  if (last) {
    open.delete(target);
    fs.closeSync(fd);
  }
}

function isWriterThreadData(data: unknown): data is WriterThreadData {
  const candidate = data as Partial<WriterThreadData> | null;
  return typeof candidate === 'object' && candidate !== null && candidate.role === WRITER_ROLE;
}

// Started as a writing thread, it serves; imported anywhere else (for its types and constants), it does nothing.
if (!isMainThread && parentPort && isWriterThreadData(workerData)) serveWrites(parentPort, workerData);
