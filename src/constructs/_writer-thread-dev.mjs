// The writing thread of an OutputWriter in a checkout, where _writer-thread.ts has not been compiled: Node.js 20
// does not apply the loader hooks of `--import tsx` to a worker's own module, so this plain module registers tsx
// and then loads the TypeScript one (workerData.module). Compiled (lib/), the writer starts
// _writer-thread.js directly and this file is not used (nor shipped).
// Should the module not load, the writer is told as _writer-thread.ts defines it (counters[1] = 2, START_FAILED,
// its error on the errors port, counters[0] notified) rather than waiting for a thread that never writes.
import { workerData } from 'node:worker_threads';

try {
  const { register } = await import('tsx/esm/api');
  register();
  await import(workerData.module);
} catch (error) {
  const counters = new Int32Array(workerData.counters);
  workerData.errors.postMessage(
    `the writing thread did not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  Atomics.store(counters, 1, 2);
  Atomics.notify(counters, 0);
}
