/**
 * Plan on works rendered with Argo CD's Prune=false (step 1 of making a static app waved): Argo CD leaves them
 * on the hub when they leave git. The controller takes one over only when a waved hub Application of the new
 * output delivers at the same place. When the app was removed first, synth renders the works once more without
 * Prune=false so that the next synth removes them (found by the plan oracle, seed 37); without the previous works
 * (a plan state alone) it cannot, and plan says nothing deletes them.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, expect, test } from '@jest/globals';
import { readSide } from '../../../src/cli/commands/plan.js';
import { planFleet } from '../../../src/model/plan/plan.js';
import { applyEdit, buildOracleFleet, type OracleFleet, type OracleNames } from '../../support/oracle-fleet.js';

const names: OracleNames = { argoNamespace: 'argocd', cluster: (id) => id, clusterSet: (set) => set };
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-prune-protected-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const fleet: OracleFleet = {
  sets: ['prod'],
  spokes: [
    { id: 'c1', ring: 'canary', env: 'prod', set: 'prod' },
    { id: 'c2', ring: 'main', env: 'prod', set: 'prod' },
  ],
  placements: [],
  apps: [{ name: 'web', spokes: ['c1', 'c2'], revision: 'v1' }],
  appSets: [],
  controller: { resourceSummaries: false, workers: 2 },
};

let step = 0;
function synth(spec: OracleFleet, previous?: string): string {
  const dir = path.join(root, `${step++}`);
  buildOracleFleet(spec, names, { outdir: dir, ...(previous ? { previousOutput: previous } : {}) }).synth();
  return dir;
}

/** The notes plan gives the removed works of app web. */
function workNotes(before: string, after: string): string[] {
  return planFleet(readSide(before), readSide(after))
    .removed.filter((c) => c.kind === 'ManifestWork')
    .map((c) => `${c.namespace}/${c.name}: ${c.note}`);
}

test('a Prune=false work is taken over when the app goes on waved, and left behind when the app is removed', () => {
  // GIVEN static app web, then step 1 of making it waved (its works rendered with Prune=false)
  const waved = applyEdit(fleet, { op: 'appWaves', name: 'web', on: true })!;
  const first = synth(fleet);
  const step1 = synth(waved, first);
  // WHEN step 2 follows (synthesized again) THEN the controller takes the works over
  expect(workNotes(step1, synth(waved, step1))).toStrictEqual([
    'c1/argocd-web-c1: rendered with Argo CD Prune=false: Argo CD leaves it on the hub; the controller takes it over for the rollout of a waved app, and nothing leaves the spoke',
    'c2/argocd-web-c2: rendered with Argo CD Prune=false: Argo CD leaves it on the hub; the controller takes it over for the rollout of a waved app, and nothing leaves the spoke',
  ]);
  // WHEN the app is removed instead THEN synth renders its works once more without Prune=false: none leaves yet
  const removed = applyEdit(waved, { op: 'removeApp', name: 'web' })!;
  const unprotected = synth(removed, step1);
  expect(workNotes(step1, unprotected)).toStrictEqual([]);
  // AND the synth after that removes them, as any removed app's works (plan lists the deletion, no Prune=false note)
  const gone = planFleet(readSide(unprotected), readSide(synth(removed, unprotected)));
  expect(gone.spokeDeletions.map((d) => [d.id, d.reason])).toStrictEqual([
    ['hub/c1/argocd-web-c1', 'work removed'],
    ['hub/c2/argocd-web-c2', 'work removed'],
  ]);
  // WHEN synth has only the plan state, not the previous works THEN they leave dist/ and plan says nothing deletes them
  const stateOnly = synth(removed, path.join(step1, 'hub', 'plan-state.json'));
  expect(workNotes(step1, stateOnly)).toStrictEqual([
    'c1/argocd-web-c1: rendered with Argo CD Prune=false: Argo CD leaves it on the hub, but no waved hub Application takes it over any more, so nothing deletes it and it keeps delivering to spoke c1: delete ManifestWork c1/argocd-web-c1 by hand to remove what it delivers (its deleteOption decides)',
    'c2/argocd-web-c2: rendered with Argo CD Prune=false: Argo CD leaves it on the hub, but no waved hub Application takes it over any more, so nothing deletes it and it keeps delivering to spoke c2: delete ManifestWork c2/argocd-web-c2 by hand to remove what it delivers (its deleteOption decides)',
  ]);
});
