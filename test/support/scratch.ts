/**
 * Scratch folders for a test file that runs synth, plan or validate in-process: the type-check cache of
 * those runs (PULLFLEET_CACHE_DIR) goes into one of its own, and after the file's tests every folder is
 * removed and the named environment variables (a fixture fleet's step switch) are unset.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll } from '@jest/globals';

/** Sets up the cache folder and the clean-up; returns `tmp(prefix)`, a new empty folder under the OS temp dir. */
export function scratchFolders(unsetAfter: readonly string[] = []): (prefix: string) => string {
  const scratch: string[] = [];
  const tmp = (prefix: string): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    scratch.push(dir);
    return dir;
  };
  process.env.PULLFLEET_CACHE_DIR = tmp('pullfleet-cache-');
  afterAll(() => {
    for (const name of unsetAfter) delete process.env[name];
    scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true }));
  });
  return tmp;
}
