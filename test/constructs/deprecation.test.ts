/**
 * Deprecations (docs/reference/versioning.md#deprecations): a deprecated API warns at synth once per API,
 * naming the API, its replacement and the release it goes away in; validate lists it, and --strict fails.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { deprecationMessage } from '../../src/constructs/_deprecation.js';
import { runBinary } from '../support/cli.js';
import { buildDeprecatedFleet, OLD_METHOD, OLD_PROP } from './fixtures/deprecated-fleet.js';

const app = `${process.execPath} --import tsx test/constructs/fixtures/deprecated-fleet.ts`;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-deprecation-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const propWarning =
  'SpokeProps.oldProp is deprecated and goes away in pullfleet 0.3.0: use SpokeProps.newProp instead (the CHANGELOG has the upgrade steps)';
const methodWarning =
  'Hub.oldMethod() is deprecated and goes away in pullfleet 0.4.0: use Hub.newMethod() instead (the CHANGELOG has the upgrade steps)';

describe('deprecations in the fleet', () => {
  test('the message names the API, its replacement and the release that removes it', () => {
    expect(deprecationMessage(OLD_PROP)).toBe(propWarning);
    expect(deprecationMessage(OLD_METHOD)).toBe(methodWarning);
  });

  test('GIVEN one API used by three spokes and another by the hub THEN one warning per API, under its first use', () => {
    const fleet = buildDeprecatedFleet({ outdir: '/nonexistent/never-written' });
    expect(fleet.findings()).toStrictEqual({
      errors: [],
      warnings: [
        { path: 'hub/east', message: propWarning },
        { path: 'hub', message: methodWarning },
      ],
    });
  });

  test('GIVEN a strict fleet THEN each deprecation is a problem and synth fails naming it', () => {
    const fleet = buildDeprecatedFleet({ outdir: '/nonexistent/never-written', strict: true });
    expect(fleet.problems().map((p) => p.message)).toStrictEqual([
      `${propWarning} (warning, an error with --strict)`,
      `${methodWarning} (warning, an error with --strict)`,
    ]);
    expect(() => fleet.renderObjects()).toThrow(propWarning);
  });
});

describe('deprecations through the CLI', () => {
  test('synth prints each deprecation once and writes the output', () => {
    const result = runBinary(['synth', '-o', path.join(scratch, 'out'), '--app', app]);
    expect(result.code).toBe(0);
    expect(result.err.split('\n').filter((line) => line.includes('deprecated'))).toStrictEqual([
      `pullfleet: warning: [hub/east] ${propWarning}`,
      `pullfleet: warning: [hub] ${methodWarning}`,
    ]);
  });

  test('validate lists each deprecation once; valid, and invalid with --strict', () => {
    const lenient = runBinary(['validate', '--app', app]);
    expect(lenient.code).toBe(0);
    expect(lenient.out).toBe(
      `warning: [hub/east] ${propWarning}\nwarning: [hub] ${methodWarning}\nvalid: 0 errors, 2 warnings\n`,
    );

    const strict = runBinary(['validate', '--app', app, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.out).toContain(`error (--strict): [hub/east] ${propWarning}\n`);
    expect(strict.out).toContain('invalid: 2 warnings (--strict treats warnings as errors)\n');
  });
});
