/**
 * `pullfleet validate` on a fleet program that validates cleanly but fails as a run (here: it writes its
 * output past the folder the CLI gives it) says why, instead of "invalid: 0 errors, 0 warnings".
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { runBinary } from '../../support/cli.js';

const own = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-own-outdir-'));
const env = { PULLFLEET_TEST_OWN_OUTDIR: own };
afterAll(() => fs.rmSync(own, { recursive: true, force: true }));

const app = `${process.execPath} --import tsx test/cli/fixtures/own-outdir-fleet.ts`;

describe('pullfleet validate, a run that fails with nothing to report', () => {
  test('GIVEN a fleet with an outdir of its own THEN validate exits 1 naming the cause and the fix, in text and in JSON', () => {
    const text = runBinary(['validate', '--app', app], { env });
    expect(text.code).toBe(1);
    expect(text.out).toMatch(
      /^error: the fleet app \(.+\) exited without writing its output folder .+: declare at least one Hub, and leave Fleet's outdir unset$/m,
    );
    expect(text.out).toContain('invalid: 1 error, 0 warnings');
    const json = runBinary(['validate', '--app', app, '--output', 'json'], { env });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.out) as { ok: boolean; errors: Array<{ message: string }> };
    expect(report.ok).toBe(false);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]?.message).toContain("leave Fleet's outdir unset");
  });
});
