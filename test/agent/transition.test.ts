/**
 * Moving spokes between delivery models: each synth reads the previous output's plan state, and a move
 * goes in two steps (two commits) so no work is ever dropped with a Foreground delete.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { AppSource, ClusterSet, DeliveryModel, Fleet, GitOpsCluster, Hub, HubFlavor, Placement, PullApplication, PullApplicationSet, Spoke } from '../../src/constructs/index.js';
import { applicationSetStep, decideTransition, describeTransition, formatPlan, parsePlanState, planFleet } from '../../src/model/index.js';
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const parse = (text: string): any[] => parseAllDocuments(text).map((d) => d.toJSON()).filter((o) => o);

/**
 * Spoke s1 under placement `edge`, delivered app `web` (an ApplicationSet on the placement, a static app,
 * or none); `model` puts a GitOpsCluster of that model on the placement; `move` calls s1.moveTo.
 */
function edgeFleet(previous: string | undefined, model: DeliveryModel | undefined, options: { move?: DeliveryModel; app?: 'set' | 'static' | 'none'; flavor?: HubFlavor } = {}) {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: previous });
  const hub = new Hub(fleet, 'hub', { flavor: options.flavor ?? HubFlavor.ACM });
  const s1 = new Spoke(hub, 's1', { clusterSet: new ClusterSet(hub, 'all'), labels: { tier: 'edge' } });
  const placement = new Placement(hub, 'edge', { predicates: [{ labels: { tier: 'edge' } }] });
  if (model === DeliveryModel.AGENT_AUTONOMOUS) new GitOpsCluster(hub, 'stores', { placement, model, spokeFolderRepository: { repoURL: 'https://git.example.com/fleet.git' } });
  else if (model) new GitOpsCluster(hub, 'agents', { placement, model });
  const app = options.app ?? 'set';
  if (app === 'set') new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement, pruneOnDelete: true });
  if (app === 'static') new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [s1], pruneOnDelete: true });
  if (options.move) s1.moveTo(options.move);
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
    // The work carries the upsert policy to the spoke Application before the agent finds it there.
    const payload1 = parse(g1.works!)[0].spec.workload.manifests.at(-1);
    expect(payload1.metadata.annotations).toMatchObject({ 'argocd.argoproj.io/source-uid-mismatch-policy': 'upsert' });
    expect(parse(g1.works!)[0].spec.manifestConfigs[0].updateStrategy.type).toBe('ServerSideApply');
    expect(g1.state[0]).toMatchObject({ deliveryModel: 'basic', movingTo: 'agent-managed', works: [{ deleteOption: 'Orphan' }] });
    expect(describeTransition('s1', golden(start.files).state[0], g1.state[0])).toContain('step 1 of 2');
    expect(g1).toMatchSnapshot('basic-to-agent-managed step 1');

    const step2 = commit(fleetAt(step1.dir, true, DeliveryModel.AGENT_MANAGED));
    const g2 = golden(step2.files);
    expect(g2.works).toBe('');
    expect(g2.applications).toContain('name: s1');
    expect(parse(g2.applications!)[0].metadata.annotations).toMatchObject({ 'argocd.argoproj.io/source-uid-mismatch-policy': 'upsert' });
    expect(g2.state[0]).toMatchObject({ deliveryModel: 'agent-managed', works: [] });
    expect(describeTransition('s1', g1.state[0], g2.state[0])).toContain('step 2 of 2');
    expect(g2).toMatchSnapshot('basic-to-agent-managed step 2');

    // Once moved, a leftover moveTo is a warning, not a step.
    const after = fleetAt(step2.dir, true, DeliveryModel.AGENT_MANAGED);
    expect(after.warnings().map((w) => w.message)).toContain('spoke "s1" already runs agent-managed, so the move is complete: remove spoke.moveTo(DeliveryModel.AGENT_MANAGED)');
  });

  test('GIVEN agent-managed → basic THEN step 1 keeps the hub app routed to the agent and the work stands by (CreateOnly, Orphan); step 2 drops the routing and switches the work to Foreground; the agent destination stays', () => {
    const start = commit(fleetAt(undefined, true));
    expect(synthError(fleetAt(start.dir, false))).toContain('changes from agent-managed to basic in one step');

    const step1 = commit(fleetAt(start.dir, false, DeliveryModel.BASIC));
    const g1 = golden(step1.files);
    const hubApp1 = parse(g1.applications!)[0];
    // The principal keeps the Application with the agent (no delete) and copies no skip-reconcile to the spoke.
    expect(hubApp1.spec.destination).toStrictEqual({ name: 's1', namespace: 'web' });
    expect(hubApp1.metadata.annotations['argocd.argoproj.io/skip-reconcile']).toBeUndefined();
    expect(hubApp1.metadata.annotations['pullfleet.io/stand-by']).toBe('true');
    const work1 = parse(g1.works!)[0];
    expect(work1.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
    expect(work1.spec.manifestConfigs[0].updateStrategy).toStrictEqual({ type: 'CreateOnly' });
    expect(work1.spec.workload.manifests.at(-1).spec.destination).toStrictEqual({ name: 'in-cluster', namespace: 'web' });
    expect(g1.state[0]).toMatchObject({ deliveryModel: 'basic', movingTo: 'basic', fromAgent: true, works: [{ deleteOption: 'Orphan' }] });
    expect(g1).toMatchSnapshot('agent-managed-to-basic step 1');

    const step2 = commit(fleetAt(step1.dir, false, DeliveryModel.BASIC));
    const g2 = golden(step2.files);
    const hubApp2 = parse(g2.applications!)[0];
    expect(hubApp2.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
    expect(hubApp2.metadata.annotations['argocd.argoproj.io/skip-reconcile']).toBe('true');
    expect(hubApp2.metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
    const work2 = parse(g2.works!)[0];
    expect(work2.metadata.name).toBe(work1.metadata.name);
    expect(work2.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
    expect(work2.spec.manifestConfigs[0].updateStrategy.type).toBe('ServerSideApply');
    // The agent wrote destination.name in-cluster on the spoke; the work keeps it (name next to server is refused).
    expect(work2.spec.workload.manifests.at(-1).spec.destination).toStrictEqual({ name: 'in-cluster', namespace: 'web' });
    expect(g2.state[0]).toMatchObject({ deliveryModel: 'basic', fromAgent: true, works: [{ deleteOption: 'Foreground' }] });
    expect(g2.state[0].movingTo).toBeUndefined();
    expect(describeTransition('s1', g1.state[0], g2.state[0])).toContain('step 2 of 2');
    expect(g2).toMatchSnapshot('agent-managed-to-basic step 2');
    // plan: step 1 deletes nothing (still routed); step 2 shows the delete the principal sends if the agent still runs
    expect(planFleet(readSide(start.dir), readSide(step1.dir)).spokeDeletions).toStrictEqual([]);
    const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
    expect(plan2.spokeDeletions.map((d) => [d.id, d.reason, d.prunesWorkload])).toStrictEqual([['hub/s1/argocd-agent/openshift-gitops/web-s1', 'agent told to delete', true]]);
    expect(formatPlan(plan2)).toContain('hub Application openshift-gitops/web-s1 no longer routed to the agent (destination.name "s1" changed): the principal tells the argocd-agent on spoke s1 to delete its copy (if the agent still runs there)');

    // With moveTo removed the spoke stays taken back: same works, same destination.
    const after = commit(fleetAt(step2.dir, false));
    expect(after.files.get('hub/hub/works/s1.yaml')).toBe(step2.files.get('hub/hub/works/s1.yaml'));
    expect(golden(after.files).state[0]).toMatchObject({ fromAgent: true });
    // Moving to an agent model again ends it.
    const again = commit(fleetAt(after.dir, true, DeliveryModel.AGENT_MANAGED));
    const step2Again = commit(fleetAt(again.dir, true, DeliveryModel.AGENT_MANAGED));
    expect(golden(step2Again.files).state[0].fromAgent).toBeUndefined();
  });

  test('GIVEN an ApplicationSet on an agent-managed placement moving to basic THEN step 1 renders the template routed to the agents with the hand-back annotation, step 2 the normal basic template with the agent destination', () => {
    const template = (files: Map<string, string>) => parse(files.get('hub/hub/application-sets.yaml')!).find((o) => o.kind === 'ApplicationSet').spec.template;
    const start = commit(edgeFleet(undefined, DeliveryModel.AGENT_MANAGED));
    expect(template(start.files).spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'web' });
    expect(synthError(edgeFleet(start.dir, undefined))).toContain('changes from agent-managed to basic in one step');

    const step1 = commit(edgeFleet(start.dir, undefined, { move: DeliveryModel.BASIC }));
    const t1 = template(step1.files);
    expect(t1.spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'web' });
    expect(t1.metadata.labels['apps.open-cluster-management.io/pull-to-ocm-managed-cluster']).toBe('true');
    expect(t1.metadata.annotations).toMatchObject({ 'pullfleet.io/stand-by': 'true', 'apps.open-cluster-management.io/destination-name': 'in-cluster', 'apps.open-cluster-management.io/ocm-managed-cluster': '{{name}}' });
    expect(t1.metadata.annotations['argocd.argoproj.io/skip-reconcile']).toBeUndefined();

    const step2 = commit(edgeFleet(step1.dir, undefined, { move: DeliveryModel.BASIC }));
    const t2 = template(step2.files);
    expect(t2.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
    expect(t2.metadata.annotations).toMatchObject({ 'argocd.argoproj.io/skip-reconcile': 'true', 'apps.open-cluster-management.io/destination-name': 'in-cluster' });
    expect(t2.metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
    const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
    expect(plan2.transitions[0]).toContain('step 2 of 2');
  });

  describe('agent-autonomous', () => {
    /** One spoke s1 under placement `edge`; `autonomous` puts an autonomous GitOpsCluster on it; `appSet` delivers through the placement. */
    const appSetOf = (files: Map<string, string>) => parse(files.get('hub/hub/application-sets.yaml') ?? '').find((o) => o.kind === 'ApplicationSet');
    /** What the golden files pin for these moves: hub apps, ApplicationSets, the spoke's works and folder, the plan state. */
    const pinned = (files: Map<string, string>) => ({
      applications: files.get('hub/hub/applications.yaml'),
      applicationSets: files.get('hub/hub/application-sets.yaml'),
      works: files.get('hub/hub/works/s1.yaml')?.split('\n---\n').filter((doc) => !doc.includes('name: pullfleet-bootstrap')).join('\n---\n'),
      folder: files.get('hub/spokes/s1/applications.yaml'),
      state: parsePlanState(files.get('hub/plan-state.json')!, 'plan-state.json').spokes,
    });
    const stateOf = (files: Map<string, string>) => parsePlanState(files.get('hub/plan-state.json')!, 'plan-state.json').spokes[0]!;

    test('GIVEN an ApplicationSet on a basic placement WHEN it moves to agent-autonomous in one step THEN synth refuses (removing the ApplicationSet would delete its Foreground works)', () => {
      const start = commit(edgeFleet(undefined, undefined, { flavor: HubFlavor.OCM }));
      expect(stateOf(start.files).works).toStrictEqual([{ name: 'argocd-s1-web', deleteOption: 'Foreground' }]);
      expect(synthError(edgeFleet(start.dir, DeliveryModel.AGENT_AUTONOMOUS, { flavor: HubFlavor.OCM }))).toContain('spoke "s1" changes from basic to agent-autonomous in one step, but its works argocd-s1-web have deleteOption Foreground');
    });

    test('GIVEN an ApplicationSet moving basic → agent-autonomous THEN step 1 keeps the ApplicationSet with standing-by works, step 2 removes it with nothing deleted on the spoke and the spoke folder takes the Application', () => {
      const start = commit(edgeFleet(undefined, undefined, { flavor: HubFlavor.OCM }));
      const step1 = commit(edgeFleet(start.dir, DeliveryModel.AGENT_AUTONOMOUS, { move: DeliveryModel.AGENT_AUTONOMOUS, flavor: HubFlavor.OCM }));
      const template = appSetOf(step1.files).spec.template;
      expect(template.metadata.annotations).toMatchObject({ 'pullfleet.io/stand-by': 'true', 'argocd.argoproj.io/skip-reconcile': 'true' });
      expect(template.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
      expect(stateOf(step1.files)).toMatchObject({ deliveryModel: 'basic', movingTo: 'agent-autonomous', works: [{ name: 'argocd-s1-web', deleteOption: 'Orphan' }] });
      expect(step1.files.has('hub/spokes/s1/applications.yaml')).toBe(false);
      const plan1 = planFleet(readSide(start.dir), readSide(step1.dir));
      expect(plan1.runtimeDeletions).toStrictEqual([]);
      expect(plan1.transitions[0]).toContain('step 1 of 2');

      const step2 = commit(edgeFleet(step1.dir, DeliveryModel.AGENT_AUTONOMOUS, { move: DeliveryModel.AGENT_AUTONOMOUS, flavor: HubFlavor.OCM }));
      expect(appSetOf(step2.files)).toBeUndefined();
      expect(parse(step2.files.get('hub/spokes/s1/applications.yaml')!).map((o) => o.metadata.name)).toStrictEqual(['s1-web']);
      expect(stateOf(step2.files)).toMatchObject({ deliveryModel: 'agent-autonomous', works: [] });
      expect(pinned(step1.files)).toMatchSnapshot('basic-to-agent-autonomous (ApplicationSet) step 1');
      expect(pinned(step2.files)).toMatchSnapshot('basic-to-agent-autonomous (ApplicationSet) step 2');
      const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
      // The ApplicationSet goes with its generated app and work, but the work stood by: nothing on the spoke is deleted.
      expect(plan2.runtimeDeletions).toStrictEqual([]);
      expect(plan2.notes.join('\n')).toContain('ApplicationSet web removed: its app s1-web and its work argocd-s1-web on spoke s1 goes, but the work stands by (deleteOption Orphan), so the Application on spoke s1 stays');
    });

    test('GIVEN a static app moving agent-autonomous → basic THEN step 1 renders the normal hub app with a standing-by work (no routing to the agent, no agent destination), step 2 the normal work', () => {
      const start = commit(edgeFleet(undefined, DeliveryModel.AGENT_AUTONOMOUS, { flavor: HubFlavor.OCM, app: 'static' }));
      expect(start.files.get('hub/spokes/s1/applications.yaml')).toContain('name: web-s1');
      const step1 = commit(edgeFleet(start.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM, app: 'static' }));
      const hubApp = parse(step1.files.get('hub/hub/applications.yaml')!)[0];
      expect(hubApp.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
      expect(hubApp.metadata.annotations).toMatchObject({ 'pullfleet.io/stand-by': 'true', 'argocd.argoproj.io/skip-reconcile': 'true' });
      expect(hubApp.metadata.annotations['apps.open-cluster-management.io/destination-name']).toBeUndefined();
      const work1 = parse(step1.files.get('hub/hub/works/s1.yaml')!).find((o) => o.metadata.name !== 'pullfleet-bootstrap');
      expect(work1.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
      expect(work1.spec.manifestConfigs[0].updateStrategy).toStrictEqual({ type: 'CreateOnly' });
      expect(work1.spec.workload.manifests.at(-1).spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
      expect(step1.files.has('hub/spokes/s1/applications.yaml')).toBe(false);
      expect(stateOf(step1.files).fromAgent).toBeUndefined();
      expect(describeTransition('s1', stateOf(start.files), stateOf(step1.files))).toContain("the spoke's own folder stops listing its Applications");

      const step2 = commit(edgeFleet(step1.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM, app: 'static' }));
      const work2 = parse(step2.files.get('hub/hub/works/s1.yaml')!).find((o) => o.metadata.name !== 'pullfleet-bootstrap');
      expect(work2.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
      expect(work2.spec.manifestConfigs[0].updateStrategy.type).toBe('ServerSideApply');
      expect(parse(step2.files.get('hub/hub/applications.yaml')!)[0].metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
      expect(pinned(step1.files)).toMatchSnapshot('agent-autonomous-to-basic step 1');
      expect(pinned(step2.files)).toMatchSnapshot('agent-autonomous-to-basic step 2');
    });

    test('GIVEN an ApplicationSet moving agent-autonomous → basic THEN step 1 renders it with standing-by works, step 2 the normal template', () => {
      const start = commit(edgeFleet(undefined, DeliveryModel.AGENT_AUTONOMOUS, { flavor: HubFlavor.OCM }));
      expect(appSetOf(start.files)).toBeUndefined();
      const step1 = commit(edgeFleet(start.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM }));
      const t1 = appSetOf(step1.files).spec.template;
      expect(t1.metadata.annotations).toMatchObject({ 'pullfleet.io/stand-by': 'true', 'argocd.argoproj.io/skip-reconcile': 'true' });
      expect(t1.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
      const step2 = commit(edgeFleet(step1.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM }));
      expect(appSetOf(step2.files).spec.template.metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
      expect(stateOf(step2.files)).toMatchObject({ deliveryModel: 'basic', works: [{ deleteOption: 'Foreground' }] });
    });
  });

  test('GIVEN an ApplicationSet on a basic placement moving to agent-managed THEN synth refuses one step; step 1 keeps it basic with the upsert policy on its Applications, step 2 switches the template and the controller hands the works off', () => {
    const template = (files: Map<string, string>) => parse(files.get('hub/hub/application-sets.yaml')!).find((o) => o.kind === 'ApplicationSet').spec.template;
    const start = commit(edgeFleet(undefined, undefined));
    expect(synthError(edgeFleet(start.dir, DeliveryModel.AGENT_MANAGED))).toContain('spoke "s1" changes from basic to agent-managed in one step, but its works openshift-gitops-s1-web have deleteOption Foreground');

    const step1 = commit(edgeFleet(start.dir, DeliveryModel.AGENT_MANAGED, { move: DeliveryModel.AGENT_MANAGED }));
    const t1 = template(step1.files);
    expect(t1.metadata.labels['apps.open-cluster-management.io/pull-to-ocm-managed-cluster']).toBe('true');
    expect(t1.metadata.annotations).toMatchObject({ 'argocd.argoproj.io/source-uid-mismatch-policy': 'upsert', 'argocd.argoproj.io/skip-reconcile': 'true' });
    expect(t1.metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
    expect(planFleet(readSide(start.dir), readSide(step1.dir)).runtimeDeletions).toStrictEqual([]);

    const step2 = commit(edgeFleet(step1.dir, DeliveryModel.AGENT_MANAGED, { move: DeliveryModel.AGENT_MANAGED }));
    const t2 = template(step2.files);
    expect(t2.spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'web' });
    expect(t2.metadata.labels['pullfleet.io/delivery-model']).toBe('agent-managed');
    const state2 = parsePlanState(step2.files.get('hub/plan-state.json')!, 'plan-state.json').spokes[0]!;
    expect(state2).toMatchObject({ deliveryModel: 'agent-managed', works: [] });
    // The works go through the controller's orphan-first hand-off, not a delete: plan reports no runtime deletion.
    expect(planFleet(readSide(step1.dir), readSide(step2.dir)).runtimeDeletions).toStrictEqual([]);
  });

  test('GIVEN a static agent-managed app WHEN it is removed THEN plan shows the deletion the principal causes on the spoke, not "nothing on a spoke is deleted"', () => {
    const withApp = commit(fleetAt(undefined, true));
    const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: withApp.dir });
    const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM });
    new Spoke(hub, 's1', { clusterSet: new ClusterSet(hub, 'all'), labels: { agent: 'true' } });
    new GitOpsCluster(hub, 'agents', { placement: new Placement(hub, 'agents', { predicates: [{ labels: { agent: 'true' } }] }), model: DeliveryModel.AGENT_MANAGED });
    const without = commit(fleet);
    const plan = planFleet(readSide(withApp.dir), readSide(without.dir));
    expect(plan.spokeDeletions.map((d) => d.id)).toStrictEqual(['hub/s1/argocd-agent/openshift-gitops/web-s1']);
    expect(plan.removed.map((c) => c.name)).not.toContain('web-s1');
    expect(formatPlan(plan)).toContain('hub Application openshift-gitops/web-s1 removed: the principal tells the argocd-agent on spoke s1 to delete its copy (prunes its workload: resources finalizer)');
  });

  test('GIVEN an agent-managed ApplicationSet WHEN it is removed THEN plan shows the deletion the principal causes on the spoke', () => {
    const plan = planFleet(readSide(commit(edgeFleet(undefined, DeliveryModel.AGENT_MANAGED)).dir), readSide(commit(edgeFleet(undefined, DeliveryModel.AGENT_MANAGED, { app: 'none' })).dir));
    expect(plan.runtimeDeletions.map((d) => d.text)).toStrictEqual([
      'ApplicationSet web removed: its app s1-web goes, and the argocd-principal tells the agent on spoke s1 to delete its copy at runtime (prunes its workload: resources finalizer)',
    ]);
  });

  test('GIVEN step 1 and step 2 THEN plan shows the step, the reason and what comes next', () => {
    const start = commit(fleetAt(undefined, false));
    const step1 = commit(fleetAt(start.dir, true, DeliveryModel.AGENT_MANAGED));
    const step2 = commit(fleetAt(step1.dir, true, DeliveryModel.AGENT_MANAGED));
    const plan1 = planFleet(readSide(start.dir), readSide(step1.dir));
    expect(plan1.transitions).toStrictEqual([
      'hub: spoke s1: move basic → agent-managed, step 1 of 2: its works stay, switched to deleteOption Orphan, so removing them later leaves the Applications running, and they give the Applications argocd.argoproj.io/source-uid-mismatch-policy: upsert, so the agent updates them in place instead of deleting and recreating them; its ApplicationSets stay basic until step 2. Next: commit, let the hub apply it, then synthesize again (step 2 removes the works and agent-managed adopts the Applications).',
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

describe('applicationSetStep', () => {
  const at = (model: DeliveryModel, step: 0 | 1 | 2 = 0, extra: Partial<ReturnType<typeof decideTransition>> = {}) => ({ model, deleteOption: step === 1 ? ('Orphan' as const) : ('Foreground' as const), step, ...extra });

  test('GIVEN spokes still basic on an agent placement THEN the ApplicationSet stays basic: standing by for autonomous, carrying the upsert policy for managed', () => {
    expect(applicationSetStep(DeliveryModel.AGENT_AUTONOMOUS, [{ name: 's1', decision: at(DeliveryModel.BASIC, 1, { movingTo: DeliveryModel.AGENT_AUTONOMOUS }) }])).toStrictEqual({
      model: DeliveryModel.BASIC,
      handback: { standBy: true, route: false, agentDestination: false },
    });
    expect(applicationSetStep(DeliveryModel.AGENT_MANAGED, [{ name: 's1', decision: at(DeliveryModel.BASIC, 1, { movingTo: DeliveryModel.AGENT_MANAGED }) }])).toStrictEqual({
      model: DeliveryModel.BASIC,
      handback: { standBy: false, route: false, agentDestination: false, agentUpsert: true },
    });
    // all moved: the placement's model, plain
    expect(applicationSetStep(DeliveryModel.AGENT_MANAGED, [{ name: 's1', decision: at(DeliveryModel.AGENT_MANAGED, 2) }])).toStrictEqual({ model: DeliveryModel.AGENT_MANAGED, handback: { standBy: false, route: false, agentDestination: false } });
  });

  test('GIVEN a basic placement with a spoke coming back from agent-managed THEN the template stands by routed, and keeps the agent destination afterwards', () => {
    const back = at(DeliveryModel.BASIC, 1, { movingTo: DeliveryModel.BASIC, adoptFromAgent: DeliveryModel.AGENT_MANAGED, fromAgent: true });
    expect(applicationSetStep(DeliveryModel.BASIC, [{ name: 's1', decision: back }, { name: 's2', decision: at(DeliveryModel.BASIC) }]).handback).toStrictEqual({ standBy: true, route: true, agentDestination: true });
    expect(applicationSetStep(DeliveryModel.BASIC, [{ name: 's1', decision: at(DeliveryModel.BASIC, 0, { fromAgent: true }) }]).handback).toStrictEqual({ standBy: false, route: false, agentDestination: true });
  });

  test('fails when the spokes of one placement are at different steps of a move, naming both sides', () => {
    const step = applicationSetStep(DeliveryModel.AGENT_AUTONOMOUS, [
      { name: 's1', decision: at(DeliveryModel.AGENT_AUTONOMOUS, 2) },
      { name: 's2', decision: at(DeliveryModel.BASIC, 1, { movingTo: DeliveryModel.AGENT_AUTONOMOUS }) },
    ]);
    expect(step.model).toBe(DeliveryModel.BASIC);
    expect(step.problem).toBe('selects spokes at different steps of their move to agent-autonomous (s1 already moved, s2 not yet): its one ApplicationSet serves them all, so move them together (the same moveTo, the same commits)');
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
