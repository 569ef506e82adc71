/**
 * The plan oracle's offline parts (a unit suite; the oracle itself is plan.oracle.ts, `npm run test:oracle`):
 * seeded generation, edits as data, the fleets synth makes of them, and shrinking a failing case.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import {
  applyEdit,
  buildOracleFleet,
  caseSource,
  generateCase,
  type OracleCase,
  type OracleFleet,
  type OracleNames,
} from '../support/oracle-fleet.js';
import { shrinkCase, type OracleResult } from '../support/oracle-run.js';
import { FIXED_CASES } from './cases.js';

const names: OracleNames = {
  argoNamespace: 'ox',
  cluster: (id) => `ox-${id}`,
  clusterSet: (set) => `ox-${set}`,
};

const controller = { resourceSummaries: false, workers: 2 };
const fleet: OracleFleet = {
  sets: ['blue'],
  spokes: [
    { id: 'c1', ring: 'canary', env: 'prod', set: 'blue' },
    { id: 'c2', ring: 'main', env: 'prod', set: 'blue' },
    { id: 'c3', ring: 'main', env: 'dev', set: 'blue' },
  ],
  placements: [{ name: 'all', sets: ['blue'] }],
  apps: [{ name: 'web', spokes: ['c1', 'c2', 'c3'], waved: true, revision: 'v1' }],
  appSets: [{ name: 'podinfo', placement: 'all', revision: 'v1' }],
  controller,
};

describe('oracle fleets', () => {
  test('a seed always draws the same case, and its first fleet synthesizes', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      const c = generateCase(seed, 8);
      expect(generateCase(seed, 8)).toStrictEqual(c);
      expect(c.edits).toHaveLength(8);
      expect(buildOracleFleet(c.fleet, names).problems()).toStrictEqual([]);
    }
    expect(generateCase(1, 8)).not.toStrictEqual(generateCase(2, 8));
  });

  test('renaming a spoke renames it wherever an app names it', () => {
    const next = applyEdit(fleet, { op: 'renameSpoke', id: 'c3', to: 'c7' });
    expect(next?.spokes.map((s) => s.id)).toStrictEqual(['c1', 'c2', 'c7']);
    expect(next?.apps[0].spokes).toStrictEqual(['c1', 'c2', 'c7']);
  });

  test('an edit whose target is gone, or that changes nothing, does not apply', () => {
    expect(applyEdit(fleet, { op: 'removeApp', name: 'shop' })).toBeUndefined();
    expect(applyEdit(fleet, { op: 'appRevision', name: 'web', revision: 'v1' })).toBeUndefined();
    // a placement still followed by an ApplicationSet is not removed under it
    expect(applyEdit(fleet, { op: 'removePlacement', name: 'all' })).toBeUndefined();
  });

  test('synth refuses an edit that leaves a wave without spokes, and writes nothing', () => {
    const next = applyEdit(fleet, { op: 'ring', id: 'c1', ring: 'main' })!;
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oracle-unit-')), 'out');
    try {
      expect(() => buildOracleFleet(next, names, { outdir: dir }).synth()).toThrow(/wave "canary" selects no spoke/);
      expect(fs.existsSync(dir) ? fs.readdirSync(dir) : []).toStrictEqual([]);
    } finally {
      fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });

  test('a printed case is valid TypeScript for cases.ts and reads back as the same case', () => {
    const c = generateCase(3, 4);
    const source = caseSource(c);
    // the printed object literal is JSON-compatible once its keys are quoted
    const json = source
      .trim()
      .replace(/,$/, '')
      .replace(/^(\s*)(\w+):/gm, '$1"$2":')
      .replace(/'/g, '"')
      .replace(/,(\s*[\]}])/g, '$1');
    expect(JSON.parse(json)).toStrictEqual(c);
  });

  test('a waved ApplicationSet is rendered as RollingSync, canaries first, deleted in reverse; appSetWaves drops and adds it', () => {
    const waved = applyEdit(fleet, { op: 'appSetWaves', name: 'podinfo', on: true })!;
    expect(waved.appSets).toStrictEqual([{ name: 'podinfo', placement: 'all', revision: 'v1', waved: true }]);
    const appSet = [...buildOracleFleet(waved, names).renderObjects().values()]
      .flat()
      .find((o) => (o as { kind?: string }).kind === 'ApplicationSet') as { spec: { strategy?: unknown } };
    expect(appSet.spec.strategy).toStrictEqual({
      type: 'RollingSync',
      deletionOrder: 'Reverse',
      rollingSync: {
        steps: [
          { matchExpressions: [{ key: 'pullfleet.io/rollout-cluster', operator: 'In', values: ['ox-c1'] }] },
          { matchExpressions: [{ key: 'pullfleet.io/rollout-cluster', operator: 'NotIn', values: ['ox-c1'] }] },
        ],
      },
    });
    expect(applyEdit(waved, { op: 'appSetWaves', name: 'podinfo', on: false })).toStrictEqual(fleet);
    expect(applyEdit(waved, { op: 'appSetWaves', name: 'podinfo', on: true })).toBeUndefined();
  });

  test('a spoke moves to agent-autonomous only with its GitOpsCluster, and between agent models through basic; its folder lists its apps', () => {
    const autonomous: OracleFleet = { ...fleet, acm: true, autonomous: true };
    expect(applyEdit(fleet, { op: 'moveTo', id: 'c3', model: 'agent-autonomous' })).toBeUndefined();
    const moving = applyEdit(autonomous, { op: 'moveTo', id: 'c3', model: 'agent-autonomous' })!;
    expect(moving.spokes[2]).toStrictEqual({
      id: 'c3',
      ring: 'main',
      env: 'dev',
      set: 'blue',
      autonomous: true,
      moving: 'agent-autonomous',
    });
    const there = applyEdit(moving, { op: 'finishMove', id: 'c3' })!;
    expect(applyEdit(there, { op: 'moveTo', id: 'c3', model: 'agent-managed' })).toBeUndefined();
    expect(applyEdit(there, { op: 'moveTo', id: 'c3', model: 'basic' })?.spokes[2]).toStrictEqual({
      id: 'c3',
      ring: 'main',
      env: 'dev',
      set: 'blue',
      moving: 'basic',
    });
    const { apps: _, ...rest } = there;
    const files = buildOracleFleet(
      { ...rest, apps: [{ name: 'web', spokes: ['c1', 'c3'], revision: 'v1' }] },
      names,
    ).renderFiles();
    expect(files.get('hub/spokes/ox-c3/applications.yaml')).toMatch(/name: web-ox-c3\n {2}namespace: ox\n/);
  });

  test('every fixed case synthesizes its first fleet', () => {
    for (const c of FIXED_CASES) expect(buildOracleFleet(c.fleet, names).problems()).toStrictEqual([]);
  });
});

describe('shrinking', () => {
  test('keeps only the edits and fleet parts the failure needs', async () => {
    // GIVEN a "world" in which renaming app web, once the app is waved, deletes something plan did not list
    const c: OracleCase = {
      name: 'seed 99',
      seed: 99,
      fleet,
      edits: [
        { op: 'env', id: 'c2', env: 'dev' },
        { op: 'appRevision', name: 'web', revision: 'v2' },
        { op: 'renameApp', name: 'web', to: 'shop' },
        { op: 'taint', id: 'c3', on: true },
      ],
    };
    const run = async (candidate: OracleCase): Promise<OracleResult> => {
      let current = candidate.fleet;
      for (const [i, edit] of candidate.edits.entries()) {
        const waved = current.apps.find((a) => a.name === 'web')?.waved;
        current = applyEdit(current, edit) ?? current;
        if (edit.op === 'renameApp' && waved)
          return { steps: [], mismatches: [{ step: i + 1, edit, kind: 'unplanned deletion', detail: 'hub/x/y' }] };
      }
      return { steps: [], mismatches: [] };
    };
    const first = await run(c);
    // WHEN it is shrunk
    const { shrunk, runs } = await shrinkCase(run, c, first);
    // THEN one edit is left, on a fleet without the ApplicationSet, its placement or spokes it does not need
    expect(shrunk.edits).toStrictEqual([{ op: 'renameApp', name: 'web', to: 'shop' }]);
    expect(shrunk.fleet.appSets).toStrictEqual([]);
    expect(shrunk.fleet.placements).toStrictEqual([]);
    expect(shrunk.fleet.apps).toStrictEqual([{ name: 'web', spokes: ['c3'], waved: true, revision: 'v1' }]);
    expect(runs).toBeLessThanOrEqual(20);
  });
});
