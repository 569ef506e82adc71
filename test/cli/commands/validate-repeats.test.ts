/**
 * `pullfleet validate` through the binary on fleets whose findings repeat: grants checked against the
 * API resources Kubernetes serves (reported under the app that declared them, with the name meant), a
 * problem found on many constructs listed once with their count, a spoke's warning under the spoke,
 * and a summary line that holds under --strict.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { runBinary } from '../../support/cli.js';

const app = `${process.execPath} --import tsx test/validate/fixtures/repeats-fleet.ts`;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-repeats-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const validate = (fixture: string, args: readonly string[] = []) =>
  runBinary(['validate', '--app', app, ...args], { env: { PULLFLEET_FIXTURE: fixture } });

describe('pullfleet validate: grants', () => {
  test('fails when grants are misspelled: each problem once, under the app that declared it, with the name meant', () => {
    const result = validate('grants');
    expect(result.code).toBe(1);
    expect(result.out.split('\n')).toStrictEqual([
      'error: [hub/PullApplication:web] resources grant for API group "apps" names "deployment", which is not a resource of that group: did you mean "deployments"? A grant names the lower-case plural, as kubectl api-resources lists it',
      'error: [hub/PullApplication:web] resources grant API group "app" is not an API group of Kubernetes 1.28 to 1.31 or of the custom resources pullfleet knows: did you mean "apps"?',
      'error: [hub/PullApplication:web] resources grant for API group "" (the core group) names "ingress", which that group does not serve: ingresses are in API group "networking.k8s.io"; grant them there: { apiGroup: \'networking.k8s.io\', resources: [\'ingresses\'] }',
      'error: [hub/PullApplication:api] resources grant for API group "apps" names "Deployments", which is not a resource of that group: did you mean "deployments"? A grant names the lower-case plural, as kubectl api-resources lists it',
      'invalid: 4 errors, 0 warnings',
      '',
    ]);
  });
});

describe('pullfleet validate: repeated findings', () => {
  test('GIVEN 30 spokes with the same bad label key THEN the problem is one line with the count and the first spokes', () => {
    const result = validate('labels');
    expect(result.code).toBe(1);
    expect(result.out).toBe(
      'error: spoke label key "bad key!" must be an optional DNS-subdomain prefix and "/", then letters, digits, "-", "_" and ".", starting and ending with a letter or digit: use a key such as "example.com/team" or "team" (30 spokes: hub/store-1, hub/store-2, hub/store-3 and 27 more)\n' +
        'invalid: 30 errors, 0 warnings\n',
    );
  });

  test("GIVEN 21 spokes whose finished move is still declared THEN each warning is the spoke's, listed once; valid with 21 warnings, and --strict invalid saying why", () => {
    const out = path.join(scratch, 'agents');
    const first = runBinary(['synth', '-o', out, '--app', app], { env: { PULLFLEET_FIXTURE: 'agents' } });
    expect(first.code).toBe(0);
    const warning =
      'the spoke already runs agent-autonomous, so its move is complete: remove spoke.moveTo(DeliveryModel.AGENT_AUTONOMOUS) (21 spokes: hub/store-1, hub/store-10, hub/store-11 and 18 more)';

    const lenient = validate('moved', ['--outdir', out]);
    expect(lenient.code).toBe(0);
    expect(lenient.out).toBe(`warning: ${warning}\nvalid: 0 errors, 21 warnings\n`);

    const strict = validate('moved', ['--outdir', out, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.out).toBe(
      `error (--strict): ${warning}\ninvalid: 21 warnings (--strict treats warnings as errors)\n`,
    );

    const json = validate('moved', ['--outdir', out, '-o', 'json']);
    const report = JSON.parse(json.out) as { warnings: Array<{ path: string }> };
    expect(report.warnings.map((w) => w.path).sort()).toStrictEqual(
      Array.from({ length: 21 }, (_, i) => `hub/store-${i + 1}`).sort(),
    );

    // synth shows the warnings the same way, once
    const synth = runBinary(['synth', '-o', out, '--app', app], { env: { PULLFLEET_FIXTURE: 'moved' } });
    expect(synth.code).toBe(0);
    expect(synth.err.split('\n').filter((line) => line.includes('already runs'))).toStrictEqual([
      `pullfleet: warning: ${warning}`,
    ]);
  });
});
