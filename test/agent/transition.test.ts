/**
 * Moving spokes between delivery models: each synth reads the previous output's plan state, and a move
 * goes in two steps (two commits) so no work is ever dropped with a Foreground delete.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, test } from '@jest/globals';
import { AppSource, ClusterSet, DeliveryModel, Fleet, GitOpsCluster, Hub, HubFlavor, Placement, PullApplication, Spoke } from '../../src/constructs/index.js';
import { decideTransition, describeTransition, formatPlan, parsePlanState, planFleet } from '../../src/model/index.js';
import { readSide } from '../../src/cli/plan.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A hub with spoke `s1` running app `web`; `agent` puts s1 under an agent-managed GitOpsCluster; `move` calls s1.moveTo. */
function fleetAt(previous: string | undefined, agent: boolean, move?: DeliveryModel, flavor = HubFlavor.ACM) {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: previous });
  const hub = new Hub(fleet, 'hub', { flavor });
  const set = new ClusterSet(hub, 'all');
  const s1 = new Spoke(hub, 's1', { clusterSet: set, labels: agent ? { agent: 'true' } : {} });
  new GitOpsCluster(hub, 'agents', { placement: new Placement(hub, 'agents', { predicates: [{ labels: { agent: 'true' } }] }), model: DeliveryModel.AGENT_MANAGED });
  new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [s1], pruneOnDelete: true });
  if (move) s1.moveTo(move);
  return fleet;
}

/** Synthesizes `fleet` into a fresh folder (as the committed dist/ of that step) and returns it. */
function commit(fleet: Fleet): { dir: string; files: Map<string, string> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-move-'));
  dirs.push(dir);
  const files = fleet.renderFiles();
  for (const [file, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return { dir, files };
}

/** What the golden files pin: the hub Applications, the spoke's works and the plan state. */
const golden = (files: Map<string, string>) => ({
  applications: files.get('hub/hub/applications.yaml'),
  works: files.get('hub/hub/works/s1.yaml')?.split('\n---\n').filter((doc) => !doc.includes('name: pullfleet-bootstrap')).join('\n---\n'),
  state: parsePlanState(files.get('hub/plan-state.json')!, 'plan-state.json').spokes,
});

function synthError(fleet: Fleet): string {
  try {
    fleet.renderFiles();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected synth to refuse');
}

describe('moving a spoke between models', () => {
  test('fails when a spoke changes from basic to agent in one step, naming its Foreground work and the fix', () => {
    const before = commit(fleetAt(undefined, false));
    const message = synthError(fleetAt(before.dir, true));
    expect(message).toContain('[hub/s1] spoke "s1" changes from basic to agent-managed in one step, but its works openshift-gitops-web-s1 have deleteOption Foreground');
    expect(message).toContain('call spoke.moveTo(DeliveryModel.AGENT_MANAGED) for a two-step hand-over');
  });

  test('GIVEN basic → agent-managed THEN step 1 keeps the work with Orphan, step 2 drops it and the hub app is routed by destination', () => {
    const start = commit(fleetAt(undefined, false));
    expect(golden(start.files).state[0]).toMatchObject({ deliveryModel: 'basic', works: [{ deleteOption: 'Foreground' }] });

    const step1 = commit(fleetAt(start.dir, true, DeliveryModel.AGENT_MANAGED));
    const g1 = golden(step1.files);
    expect(g1.works).toContain('propagationPolicy: Orphan');
    expect(g1.state[0]).toMatchObject({ deliveryModel: 'basic', movingTo: 'agent-managed', works: [{ deleteOption: 'Orphan' }] });
    expect(describeTransition('s1', golden(start.files).state[0], g1.state[0])).toContain('step 1 of 2');
    expect(g1).toMatchSnapshot('basic-to-agent-managed step 1');

    const step2 = commit(fleetAt(step1.dir, true, DeliveryModel.AGENT_MANAGED));
    const g2 = golden(step2.files);
    expect(g2.works).toBe('');
    expect(g2.applications).toContain('name: s1');
    expect(g2.state[0]).toMatchObject({ deliveryModel: 'agent-managed', works: [] });
    expect(describeTransition('s1', g1.state[0], g2.state[0])).toContain('step 2 of 2');
    expect(g2).toMatchSnapshot('basic-to-agent-managed step 2');

    // Once moved, a leftover moveTo is a warning, not a step.
    const after = fleetAt(step2.dir, true, DeliveryModel.AGENT_MANAGED);
    expect(after.warnings().map((w) => w.message)).toContain('spoke "s1" already runs agent-managed, so the move is complete: remove spoke.moveTo(DeliveryModel.AGENT_MANAGED)');
  });

  test('GIVEN agent-managed → basic THEN step 1 renders the work with Orphan (adopting the running Application), step 2 switches it to Foreground', () => {
    const start = commit(fleetAt(undefined, true));
    expect(synthError(fleetAt(start.dir, false))).toContain('changes from agent-managed to basic in one step');

    const step1 = commit(fleetAt(start.dir, false, DeliveryModel.BASIC));
    const g1 = golden(step1.files);
    expect(g1.works).toContain('propagationPolicy: Orphan');
    expect(g1.state[0]).toMatchObject({ deliveryModel: 'basic', movingTo: 'basic', works: [{ deleteOption: 'Orphan' }] });
    expect(g1).toMatchSnapshot('agent-managed-to-basic step 1');

    const step2 = commit(fleetAt(step1.dir, false, DeliveryModel.BASIC));
    const g2 = golden(step2.files);
    expect(g2.works).toContain('propagationPolicy: Foreground');
    expect(g2.state[0]).toMatchObject({ deliveryModel: 'basic', works: [{ deleteOption: 'Foreground' }] });
    expect(g2.state[0].movingTo).toBeUndefined();
    expect(g2).toMatchSnapshot('agent-managed-to-basic step 2');
  });

  test('GIVEN step 1 and step 2 THEN plan shows the step, the reason and what comes next', () => {
    const start = commit(fleetAt(undefined, false));
    const step1 = commit(fleetAt(start.dir, true, DeliveryModel.AGENT_MANAGED));
    const step2 = commit(fleetAt(step1.dir, true, DeliveryModel.AGENT_MANAGED));
    const plan1 = planFleet(readSide(start.dir), readSide(step1.dir));
    expect(plan1.transitions).toStrictEqual([
      'hub: spoke s1: move basic → agent-managed, step 1 of 2: its works stay, switched to deleteOption Orphan, so removing them later leaves the Applications running. Next: commit, let the hub apply it, then synthesize again (step 2 removes the works and agent-managed adopts the Applications).',
    ]);
    expect(plan1.spokeDeletions).toStrictEqual([]);
    const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
    expect(plan2.transitions[0]).toContain('step 2 of 2: the Orphan works are removed (the Applications keep running)');
    // The Orphan work's removal deletes nothing on the spoke.
    expect(plan2.spokeDeletions).toStrictEqual([]);
    expect(formatPlan(plan2)).toContain('MOVES BETWEEN DELIVERY MODELS (1):');
  });

  test('fails when moveTo names a model the GitOpsClusters do not give the spoke', () => {
    expect(synthError(fleetAt(undefined, false, DeliveryModel.AGENT_MANAGED))).toContain('asks to move to agent-managed');
  });

  test('fails when the previous plan state is unreadable, saying how to restore it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-move-'));
    dirs.push(dir);
    fs.mkdirSync(path.join(dir, 'hub'));
    fs.writeFileSync(path.join(dir, 'hub', 'plan-state.json'), '{not json');
    expect(synthError(fleetAt(dir, false))).toContain('restore it with git checkout');
  });
});

describe('plan state and moveTo input', () => {
  test('fails when the plan state names an unknown delivery model or a bad deleteOption, saying to synthesize again', () => {
    const base = { kind: 'PullfleetPlanState', version: 1, hub: 'hub' };
    const spoke = { name: 's1', labels: {}, claims: {}, clusterSets: [], taints: [] };
    expect(() => parsePlanState(JSON.stringify({ ...base, spokes: [{ ...spoke, deliveryModel: 'push' }] }), 'f.json')).toThrow('f.json: spokes[0].deliveryModel "push" is not one of basic, agent-managed, agent-autonomous: synthesize again to rewrite it');
    expect(() => parsePlanState(JSON.stringify({ ...base, spokes: [{ ...spoke, works: [{ name: 'w', deleteOption: 'Background' }] }] }), 'f.json')).toThrow('spokes[0].works must be a list of { name, deleteOption: Foreground | Orphan }');
  });

  test('fails when a spoke is moved to two different models', () => {
    const fleet = fleetAt(undefined, true, DeliveryModel.AGENT_MANAGED);
    const spoke = fleet.hubs[0].spokes[0];
    spoke.moveTo(DeliveryModel.AGENT_AUTONOMOUS);
    expect(synthError(fleet)).toContain('moveTo(agent-autonomous) after moveTo(agent-managed): a spoke moves to one model at a time');
  });
});

describe('decideTransition', () => {
  test('moving between the two agent modes directly is refused: through basic first', () => {
    const d = decideTransition('s1', DeliveryModel.AGENT_AUTONOMOUS, DeliveryModel.AGENT_AUTONOMOUS, { deliveryModel: DeliveryModel.AGENT_MANAGED, works: [] });
    expect(d.model).toBe(DeliveryModel.AGENT_MANAGED);
    expect(d.problem).toContain('move it to basic first');
  });

  test('a basic spoke without works may change model in one step (nothing is dropped)', () => {
    expect(decideTransition('s1', DeliveryModel.AGENT_MANAGED, undefined, { deliveryModel: DeliveryModel.BASIC, works: [] })).toStrictEqual({ model: DeliveryModel.AGENT_MANAGED, deleteOption: 'Foreground', step: 0 });
  });
});
