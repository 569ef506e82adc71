/**
 * Golden files of the CLI's rendered output, under test/cli/golden: a test compares what it rendered with
 * the file, and `UPDATE_GOLDEN=1 npm test -- test/cli` rewrites the files instead.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from '@jest/globals';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'golden');

/** Expects `actual` to equal test/cli/golden/`name` (with UPDATE_GOLDEN set, writes it there first). */
export function expectGolden(name: string, actual: string): void {
  const file = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN) {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(file, actual);
  }
  expect(actual).toBe(readFileSync(file, 'utf8'));
}
