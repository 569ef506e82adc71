/** Writing a fleet's rendered files into a folder of their own, as the committed dist/ of one step. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Fleet } from '../../src/constructs/index.js';

/**
 * Renders `fleet` into a fresh temporary folder named after `prefix` and returns the folder and the
 * files; the folder is pushed onto `dirs` for the caller's cleanup.
 */
export function commitFleet(fleet: Fleet, prefix: string, dirs: string[]): { dir: string; files: Map<string, string> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  dirs.push(dir);
  const files = fleet.renderFiles();
  for (const [file, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return { dir, files };
}
