/**
 * Every prop and parameter the public API types with an enum also takes the enum's string value
 * (`EnumValue<E>`): a fleet file written from YAML habits type-checks and renders exactly what the enum
 * version renders; other strings are still refused, by the compiler and, when they arrive untyped, at synth
 * with the allowed values.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { typecheckFile } from '../../src/cli/support/typecheck.js';
import { Fleet, GitOpsCluster, Hub, Placement, Rollout } from '../../src/index.js';
import { withEnums, withStrings } from './fixtures/enum-values-fleet.js';
import { synthError } from './helpers.js';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-enum-values-'));
process.env.PULLFLEET_CACHE_DIR = cacheDir;
afterAll(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

const outdir = '/nonexistent/never-written';

describe('enum props take their string values', () => {
  test('the fleet written with string values type-checks as synth checks it, and misspelled strings do not', () => {
    // The fixture's misspelled() holds four @ts-expect-error lines: each must still be an error, or the
    // directive itself is reported as unused.
    const result = typecheckFile(path.resolve('test/constructs/fixtures/enum-values-fleet.ts'));
    expect(result.errors).toStrictEqual([]);
  });

  test('GIVEN the fleet with enums and with string values THEN every file renders byte-identical', () => {
    const enums = withEnums({ outdir }).renderFiles();
    const strings = withStrings({ outdir }).renderFiles();
    expect([...strings.keys()]).toStrictEqual([...enums.keys()]);
    for (const [file, text] of enums) expect({ file, text: strings.get(file) }).toStrictEqual({ file, text });
    expect(enums.size).toBeGreaterThan(10);
  });

  test('GIVEN both fleets THEN their findings are the same', () => {
    expect(withStrings({ outdir }).findings()).toStrictEqual(withEnums({ outdir }).findings());
  });

  test('the string value reaches the rendered objects as the enum does (taints, tolerations, operators, modes)', () => {
    const files = withStrings({ outdir }).renderFiles();
    const placements = files.get('hub/hub/placements.yaml') ?? '';
    expect(placements).toContain('operator: In');
    expect(placements).toContain('operator: Exists');
    expect(placements).toContain('effect: NoSelect');
    expect(placements).toContain('mode: Exact');
    expect(files.get('acm/hub/gitops-clusters.yaml')).toContain('installPlanApproval: Manual');
  });
});

describe('other strings are refused with the allowed values when they arrive untyped', () => {
  const untyped = <T>(value: unknown): T => value as T;

  test('fails when a hub flavor is not a HubFlavor value', () => {
    const fleet = new Fleet({ outdir });
    new Hub(fleet, 'hub', { flavor: untyped('ocm') });
    expect(synthError(fleet)).toContain(
      '[hub] flavor is "ocm" (a string): expected one of HubFlavor.OCM, HubFlavor.ACM: use HubFlavor.OCM (the string "OCM")',
    );
  });

  test('fails when an OLM installPlanApproval is not an InstallPlanApproval value', () => {
    const fleet = new Fleet({ outdir });
    const hub = new Hub(fleet, 'acm', { flavor: 'ACM' });
    GitOpsCluster.acm(hub, 'retail', {
      placement: new Placement(hub, 'retail'),
      model: 'agent-managed',
      olmSubscription: { installPlanApproval: untyped('Never') },
    });
    expect(synthError(fleet)).toContain(
      'olmSubscription.installPlanApproval is "Never" (a string): expected one of InstallPlanApproval.AUTOMATIC, InstallPlanApproval.MANUAL',
    );
  });

  test('fails when a rollout onFailure or deletionOrder is not one of their values', () => {
    const rollout = Rollout.waves([{ rest: true }], {
      onFailure: untyped('halt'),
      deletionOrder: untyped('Backwards'),
    });
    expect(rollout._problems(true)).toStrictEqual([
      'rollout onFailure is "halt" (a string): expected one of RolloutFailureAction.PAUSE, RolloutFailureAction.ROLLBACK: use one of RolloutFailureAction.PAUSE, RolloutFailureAction.ROLLBACK',
      'rollout deletionOrder is "Backwards" (a string): expected one of DeletionOrder.ALL_AT_ONCE, DeletionOrder.REVERSE: use one of DeletionOrder.ALL_AT_ONCE, DeletionOrder.REVERSE',
    ]);
  });
});
