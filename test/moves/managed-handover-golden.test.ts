/**
 * Golden output of every step of basic → agent-managed on a fleet where other spokes, placements and
 * ApplicationSets stay put: the moving spoke's delivery changes step by step, and every object that does
 * not deliver to it is byte-identical before, during and after the move.
 */
import * as fs from 'node:fs';
import { afterAll, describe, expect, test } from '@jest/globals';
import { parseAllDocuments, stringify } from 'yaml';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';
import { planFleet } from '../../src/model/plan/plan.js';
import { parsePlanState } from '../../src/model/plan/state.js';
import { readSide } from '../../src/cli/commands/plan.js';
import { commitFleet } from '../support/commit-fleet.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/**
 * Spokes east (tier edge, moving), west and north (prod). ApplicationSet `monitoring` on placement `prod`
 * (all three, never an agent); ApplicationSet `edge-web` on placement `edge` (east only); static app `web`
 * on east and west, `api` on west. `agent`: a managed GitOpsCluster on `edge`, and east.moveTo.
 */
function fleetAt(previous: string | undefined, agent: boolean): Fleet {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: previous });
  const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM });
  const all = new ClusterSet(hub, 'all');
  const east = new Spoke(hub, 'east', { clusterSet: all, labels: { env: 'prod', tier: 'edge' } });
  const west = new Spoke(hub, 'west', { clusterSet: all, labels: { env: 'prod' } });
  new Spoke(hub, 'north', { clusterSet: all, labels: { env: 'prod' } });
  const prod = new Placement(hub, 'prod', { predicates: [{ labels: { env: 'prod' } }] });
  const edge = new Placement(hub, 'edge', { predicates: [{ labels: { tier: 'edge' } }] });
  new PullApplicationSet(hub, 'monitoring', {
    source,
    destinationNamespace: 'monitoring',
    placement: prod,
    pruneOnDelete: true,
  });
  new PullApplicationSet(hub, 'edge-web', {
    source,
    destinationNamespace: 'edge-web',
    placement: edge,
    pruneOnDelete: true,
  });
  new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [east, west], pruneOnDelete: true });
  new PullApplication(hub, 'api', { source, destinationNamespace: 'api', spokes: [west], pruneOnDelete: true });
  if (agent) {
    GitOpsCluster.acm(hub, 'agents', { placement: edge, model: DeliveryModel.AGENT_MANAGED });
    east.moveTo(DeliveryModel.AGENT_MANAGED);
  }
  return fleet;
}

const commit = (fleet: Fleet) => commitFleet(fleet, 'pullfleet-handover', dirs);

/** Every object of the output by `<file> <kind> <namespace>/<name>`, as its YAML text. */
function objects(files: Map<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [file, text] of files) {
    if (!/\.ya?ml$/.test(file)) continue;
    for (const doc of parseAllDocuments(text)) {
      const o = doc.toJSON() as { kind?: string; metadata?: { name?: string; namespace?: string } } | null;
      if (!o || !o.kind) continue;
      out.set(`${file} ${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, stringify(o));
    }
  }
  return out;
}

/** Keys of objects added, removed or changed between two outputs. */
function changed(a: Map<string, string>, b: Map<string, string>): string[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => a.get(k) !== b.get(k)).sort();
}

/** Whether an object delivers to (or routes, bootstraps) the moving spoke east. */
const aboutEast = (key: string) =>
  /\/east[/.]/.test(key.split(' ')[0]) ||
  / (Application|ManifestWork) [^ ]*(-east|east-)/.test(key) ||
  / ApplicationSet [^ ]*\/edge-web$/.test(key) ||
  / GitOpsCluster /.test(key) ||
  / Secret [^ ]*east/.test(key) ||
  / AppProject /.test(key);

describe('basic → agent-managed, golden output on a fleet where the rest stays put', () => {
  test('GIVEN spoke east moving to agent-managed THEN each step changes only what is delivered to east, and plan names its Applications', () => {
    const start = commit(fleetAt(undefined, false));
    const step1 = commit(fleetAt(start.dir, true));
    const step2 = commit(fleetAt(step1.dir, true));
    const step3 = commit(fleetAt(step2.dir, true));
    const o = [start, step1, step2, step3].map((s) => objects(s.files));

    // Everything that does not deliver to east is byte-identical through the whole move.
    for (let i = 1; i < o.length; i++) {
      const outside = changed(o[0], o[i]).filter((k) => !aboutEast(k));
      expect(outside).toStrictEqual([]);
    }
    for (const file of [
      'hub/hub/works/west.yaml',
      'hub/hub/works/north.yaml',
      'hub/bootstrap/west.yaml',
      'hub/bootstrap/north.yaml',
    ]) {
      for (const s of [step1, step2, step3]) expect(s.files.get(file)).toBe(start.files.get(file));
    }
    const monitoring = (files: Map<string, string>) =>
      [...objects(files)].filter(([k]) => k.endsWith('ApplicationSet openshift-gitops/monitoring'));
    for (const s of [step1, step2, step3]) expect(monitoring(s.files)).toStrictEqual(monitoring(start.files));

    // What changes for east, step by step (golden).
    const east = (from: Map<string, string>, to: Map<string, string>) =>
      Object.fromEntries(changed(from, to).map((k) => [k, to.get(k) ?? '(removed)']));
    expect(east(o[0], o[1])).toMatchSnapshot('step 1: what changes for east');
    expect(east(o[1], o[2])).toMatchSnapshot('step 2: what changes for east');
    expect(east(o[2], o[3])).toMatchSnapshot('step 3: what changes for east');

    // The basic ApplicationSet monitoring keeps delivering to east (its work is not part of the hand-over).
    const state = (s: { files: Map<string, string> }) =>
      parsePlanState(s.files.get('hub/plan-state.json')!, 'plan-state.json').spokes.find((x) => x.name === 'east')!;
    expect(state(step1)).toMatchObject({
      moveStep: 1,
      handOver: ['openshift-gitops/east-edge-web', 'openshift-gitops/web-east'],
    });
    expect(state(step2)).toMatchObject({
      moveStep: 2,
      handOver: ['openshift-gitops/east-edge-web', 'openshift-gitops/web-east'],
    });
    expect(state(step3).moveStep).toBeUndefined();

    const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
    expect(plan2.transitions).toHaveLength(1);
    expect(plan2.transitions[0]).toContain(
      'the work agent deletes the spoke Applications openshift-gitops/east-edge-web, openshift-gitops/web-east',
    );
    // Deleting east's Foreground work deletes its Application, which no longer carries the resources finalizer.
    for (const d of plan2.spokeDeletions) expect(d.removals.map((r) => r.effect).join(' ')).not.toContain('prunes');
  });
});
