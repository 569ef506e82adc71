/**
 * Moving spokes between delivery models: each synth reads the previous output's plan state, and a move
 * goes in two steps (two commits) so no work is ever dropped with a Foreground delete.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import {
  AppSource,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
} from '../../src/constructs/index.js';
import { NEVER_WRITTEN, testFleet } from '../support/fleet-builder.js';
import {
  applicationSetStep,
  decideTransition,
  DeleteOption,
  describeTransition,
} from '../../src/model/delivery/transition.js';
import { formatPlan, planFleet } from '../../src/model/plan/plan.js';
import { parsePlanState } from '../../src/model/plan/state.js';
import { readSide } from '../../src/cli/commands/plan.js';
import { commitFleet } from '../support/commit-fleet.js';
import { gitOpsClusterOf } from '../support/gitops-cluster.js';

const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A hub with spoke `s1` running app `web`; `agent` puts s1 under an agent-managed GitOpsCluster; `move` calls s1.moveTo. */
function fleetAt(previous: string | undefined, agent: boolean, move?: DeliveryModel, flavor = HubFlavor.ACM) {
  const { fleet, hub, spokes } = testFleet({
    fleet: { outdir: NEVER_WRITTEN, previousOutput: previous },
    hub: { flavor },
    sets: ['all'],
    spokes: [{ name: 's1', labels: agent ? { agent: 'true' } : {} }],
  });
  const [s1] = spokes;
  gitOpsClusterOf(
    hub,
    'agents',
    new Placement(hub, 'agents', { predicates: [{ labels: { agent: 'true' } }] }),
    DeliveryModel.AGENT_MANAGED,
  );
  new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [s1], pruneOnDelete: true });
  if (move) s1.moveTo(move);
  return fleet;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const parse = (text: string): any[] =>
  parseAllDocuments(text)
    .map((d) => d.toJSON())
    .filter((o) => o);

/**
 * Spoke s1 under placement `edge`, delivered app `web` (an ApplicationSet on the placement, a static app,
 * or none); `model` puts a GitOpsCluster of that model on the placement; `move` calls s1.moveTo.
 */
function edgeFleet(
  previous: string | undefined,
  model: DeliveryModel | undefined,
  options: { move?: DeliveryModel; app?: 'set' | 'static' | 'none'; flavor?: HubFlavor } = {},
) {
  const { fleet, hub, spokes } = testFleet({
    fleet: { outdir: NEVER_WRITTEN, previousOutput: previous },
    hub: { flavor: options.flavor ?? HubFlavor.ACM },
    sets: ['all'],
    spokes: [{ name: 's1', labels: { tier: 'edge' } }],
  });
  const [s1] = spokes;
  const placement = new Placement(hub, 'edge', { predicates: [{ labels: { tier: 'edge' } }] });
  if (model) gitOpsClusterOf(hub, model === DeliveryModel.AGENT_AUTONOMOUS ? 'stores' : 'agents', placement, model);
  const app = options.app ?? 'set';
  if (app === 'set')
    new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement, pruneOnDelete: true });
  if (app === 'static')
    new PullApplication(hub, 'web', { source, destinationNamespace: 'web', spokes: [s1], pruneOnDelete: true });
  if (options.move) s1.moveTo(options.move);
  return fleet;
}

/** Synthesizes `fleet` into a fresh folder (as the committed dist/ of that step) and returns it. */
const commit = (fleet: Fleet) => commitFleet(fleet, 'pullfleet-move', dirs);

/** What the golden files pin: the hub Applications, the spoke's works and the plan state. */
const golden = (files: Map<string, string>) => ({
  applications: files.get('hub/hub/applications.yaml'),
  works: files
    .get('hub/hub/works/s1.yaml')
    ?.split('\n---\n')
    .filter((doc) => !doc.includes('name: pullfleet-bootstrap'))
    .join('\n---\n'),
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
    expect(message).toContain(
      '[hub/s1] spoke "s1" changes from basic to agent-managed in one step, but its works openshift-gitops-web-s1 have deleteOption Foreground',
    );
    expect(message).toContain('call spoke.moveTo(DeliveryModel.AGENT_MANAGED) for a two-step hand-over');
  });

  test('GIVEN basic → agent-managed THEN step 1 takes the resources finalizer off the spoke Application through its Foreground work, step 2 removes the work and the hub app (the spoke copy goes, nothing to prune), step 3 creates the hub app routed by destination', () => {
    const start = commit(fleetAt(undefined, false));
    expect(golden(start.files).state[0]).toMatchObject({
      deliveryModel: 'basic',
      works: [{ deleteOption: 'Foreground' }],
    });
    expect(parse(golden(start.files).works!)[0].spec.workload.manifests.at(-1).metadata.finalizers).toStrictEqual([
      'resources-finalizer.argocd.argoproj.io',
    ]);

    const step1 = commit(fleetAt(start.dir, true, DeliveryModel.AGENT_MANAGED));
    const g1 = golden(step1.files);
    const work1 = parse(g1.works!)[0];
    expect(work1.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
    expect(work1.spec.manifestConfigs[0].updateStrategy.type).toBe('ServerSideApply');
    const payload1 = work1.spec.workload.manifests.at(-1);
    expect(payload1.metadata.finalizers).toBeUndefined();
    expect(payload1.metadata.annotations?.['argocd.argoproj.io/source-uid-mismatch-policy']).toBeUndefined();
    expect(parse(g1.applications!)[0].metadata.finalizers).toBeUndefined();
    expect(g1.state[0]).toMatchObject({
      deliveryModel: 'basic',
      movingTo: 'agent-managed',
      moveStep: 1,
      handOver: ['openshift-gitops/web-s1'],
      works: [{ deleteOption: 'Foreground' }],
    });
    expect(describeTransition('s1', golden(start.files).state[0], g1.state[0])).toContain('step 1 of 3');
    expect(g1).toMatchSnapshot('basic-to-agent-managed step 1');

    const step2 = commit(fleetAt(step1.dir, true, DeliveryModel.AGENT_MANAGED));
    const g2 = golden(step2.files);
    expect(g2.works).toBe('');
    expect(g2.applications ?? '').not.toContain('web-s1');
    expect(g2.state[0]).toMatchObject({
      deliveryModel: 'basic',
      movingTo: 'agent-managed',
      moveStep: 2,
      handOver: ['openshift-gitops/web-s1'],
      works: [],
    });
    expect(describeTransition('s1', g1.state[0], g2.state[0])).toContain('step 2 of 3');
    expect(g2).toMatchSnapshot('basic-to-agent-managed step 2');

    const step3 = commit(fleetAt(step2.dir, true, DeliveryModel.AGENT_MANAGED));
    const g3 = golden(step3.files);
    expect(g3.works).toBe('');
    expect(parse(g3.applications!)[0].spec.destination).toStrictEqual({ name: 's1', namespace: 'web' });
    expect(parse(g3.applications!)[0].metadata.finalizers).toStrictEqual(['resources-finalizer.argocd.argoproj.io']);
    expect(g3.state[0]).toMatchObject({ deliveryModel: 'agent-managed', works: [] });
    expect(g3.state[0].movingTo).toBeUndefined();
    expect(describeTransition('s1', g2.state[0], g3.state[0])).toContain('step 3 of 3');
    expect(g3).toMatchSnapshot('basic-to-agent-managed step 3');

    // Once moved, a leftover moveTo is a warning, not a step.
    const after = fleetAt(step3.dir, true, DeliveryModel.AGENT_MANAGED);
    expect(after.warnings()).toContainEqual({
      path: 'hub/s1',
      message:
        'the spoke already runs agent-managed, so its move is complete: remove spoke.moveTo(DeliveryModel.AGENT_MANAGED)',
    });
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
    expect(work1.spec.workload.manifests.at(-1).spec.destination).toStrictEqual({
      name: 'in-cluster',
      namespace: 'web',
    });
    expect(g1.state[0]).toMatchObject({
      deliveryModel: 'basic',
      movingTo: 'basic',
      fromAgent: true,
      works: [{ deleteOption: 'Orphan' }],
    });
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
    expect(work2.spec.workload.manifests.at(-1).spec.destination).toStrictEqual({
      name: 'in-cluster',
      namespace: 'web',
    });
    expect(g2.state[0]).toMatchObject({
      deliveryModel: 'basic',
      fromAgent: true,
      works: [{ deleteOption: 'Foreground' }],
    });
    expect(g2.state[0].movingTo).toBeUndefined();
    expect(describeTransition('s1', g1.state[0], g2.state[0])).toContain('step 2 of 2');
    expect(g2).toMatchSnapshot('agent-managed-to-basic step 2');
    // plan: step 1 deletes nothing (still routed); step 2 shows the delete the principal sends if the agent still runs
    expect(planFleet(readSide(start.dir), readSide(step1.dir)).spokeDeletions).toStrictEqual([]);
    const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
    expect(plan2.spokeDeletions.map((d) => [d.id, d.reason, d.prunesWorkload])).toStrictEqual([
      ['hub/s1/argocd-agent/openshift-gitops/web-s1', 'agent told to delete', true],
    ]);
    expect(formatPlan(plan2)).toContain(
      'hub Application openshift-gitops/web-s1 no longer routed to the agent (destination.name "s1" changed): the principal tells the argocd-agent on spoke s1 to delete its copy (if the agent still runs there)',
    );

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
    const template = (files: Map<string, string>) =>
      parse(files.get('hub/hub/application-sets.yaml')!).find((o) => o.kind === 'ApplicationSet').spec.template;
    const start = commit(edgeFleet(undefined, DeliveryModel.AGENT_MANAGED));
    expect(template(start.files).spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'web' });
    expect(synthError(edgeFleet(start.dir, undefined))).toContain('changes from agent-managed to basic in one step');

    const step1 = commit(edgeFleet(start.dir, undefined, { move: DeliveryModel.BASIC }));
    const t1 = template(step1.files);
    expect(t1.spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'web' });
    expect(t1.metadata.labels['apps.open-cluster-management.io/pull-to-ocm-managed-cluster']).toBe('true');
    expect(t1.metadata.annotations).toMatchObject({
      'pullfleet.io/stand-by': 'true',
      'apps.open-cluster-management.io/destination-name': 'in-cluster',
      'apps.open-cluster-management.io/ocm-managed-cluster': '{{name}}',
    });
    expect(t1.metadata.annotations['argocd.argoproj.io/skip-reconcile']).toBeUndefined();

    const step2 = commit(edgeFleet(step1.dir, undefined, { move: DeliveryModel.BASIC }));
    const t2 = template(step2.files);
    expect(t2.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
    expect(t2.metadata.annotations).toMatchObject({
      'argocd.argoproj.io/skip-reconcile': 'true',
      'apps.open-cluster-management.io/destination-name': 'in-cluster',
    });
    expect(t2.metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
    const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
    expect(plan2.transitions[0]).toContain('step 2 of 2');
  });

  describe('agent-autonomous', () => {
    /** One spoke s1 under placement `edge`; `autonomous` puts an autonomous GitOpsCluster on it; `appSet` delivers through the placement. */
    const appSetOf = (files: Map<string, string>) =>
      parse(files.get('hub/hub/application-sets.yaml') ?? '').find((o) => o.kind === 'ApplicationSet');
    /** What the golden files pin for these moves: hub apps, ApplicationSets, the spoke's works and folder, the plan state. */
    const pinned = (files: Map<string, string>) => ({
      applications: files.get('hub/hub/applications.yaml'),
      applicationSets: files.get('hub/hub/application-sets.yaml'),
      works: files
        .get('hub/hub/works/s1.yaml')
        ?.split('\n---\n')
        .filter((doc) => !doc.includes('name: pullfleet-bootstrap'))
        .join('\n---\n'),
      folder: files.get('hub/spokes/s1/applications.yaml'),
      state: parsePlanState(files.get('hub/plan-state.json')!, 'plan-state.json').spokes,
    });
    const stateOf = (files: Map<string, string>) =>
      parsePlanState(files.get('hub/plan-state.json')!, 'plan-state.json').spokes[0];

    test('GIVEN an ApplicationSet on a basic placement WHEN it moves to agent-autonomous in one step THEN synth refuses (removing the ApplicationSet would delete its Foreground works)', () => {
      const start = commit(edgeFleet(undefined, undefined, { flavor: HubFlavor.OCM }));
      expect(stateOf(start.files).works).toStrictEqual([{ name: 'argocd-s1-web', deleteOption: 'Foreground' }]);
      expect(synthError(edgeFleet(start.dir, DeliveryModel.AGENT_AUTONOMOUS, { flavor: HubFlavor.OCM }))).toContain(
        'spoke "s1" changes from basic to agent-autonomous in one step, but its works argocd-s1-web have deleteOption Foreground',
      );
    });

    test('GIVEN an ApplicationSet moving basic → agent-autonomous THEN step 1 keeps the ApplicationSet with standing-by works, step 2 removes it with nothing deleted on the spoke and the spoke folder takes the Application', () => {
      const start = commit(edgeFleet(undefined, undefined, { flavor: HubFlavor.OCM }));
      const step1 = commit(
        edgeFleet(start.dir, DeliveryModel.AGENT_AUTONOMOUS, {
          move: DeliveryModel.AGENT_AUTONOMOUS,
          flavor: HubFlavor.OCM,
        }),
      );
      const template = appSetOf(step1.files).spec.template;
      expect(template.metadata.annotations).toMatchObject({
        'pullfleet.io/stand-by': 'true',
        'argocd.argoproj.io/skip-reconcile': 'true',
      });
      expect(template.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
      expect(stateOf(step1.files)).toMatchObject({
        deliveryModel: 'basic',
        movingTo: 'agent-autonomous',
        works: [{ name: 'argocd-s1-web', deleteOption: 'Orphan' }],
      });
      expect(step1.files.has('hub/spokes/s1/applications.yaml')).toBe(false);
      const plan1 = planFleet(readSide(start.dir), readSide(step1.dir));
      expect(plan1.runtimeDeletions).toStrictEqual([]);
      expect(plan1.transitions[0]).toContain('step 1 of 2');

      const step2 = commit(
        edgeFleet(step1.dir, DeliveryModel.AGENT_AUTONOMOUS, {
          move: DeliveryModel.AGENT_AUTONOMOUS,
          flavor: HubFlavor.OCM,
        }),
      );
      expect(appSetOf(step2.files)).toBeUndefined();
      expect(parse(step2.files.get('hub/spokes/s1/applications.yaml')!).map((o) => o.metadata.name)).toStrictEqual([
        's1-web',
      ]);
      expect(stateOf(step2.files)).toMatchObject({ deliveryModel: 'agent-autonomous', works: [] });
      expect(pinned(step1.files)).toMatchSnapshot('basic-to-agent-autonomous (ApplicationSet) step 1');
      expect(pinned(step2.files)).toMatchSnapshot('basic-to-agent-autonomous (ApplicationSet) step 2');
      const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
      // The ApplicationSet goes with its generated app and work, but the work stood by: nothing on the spoke is deleted.
      expect(plan2.runtimeDeletions).toStrictEqual([]);
      expect(plan2.notes.join('\n')).toContain(
        'ApplicationSet web removed: its app s1-web and its work argocd-s1-web on spoke s1 goes, but the work stands by (deleteOption Orphan), so the Application on spoke s1 stays',
      );
    });

    test('GIVEN a static app moving agent-autonomous → basic THEN step 1 renders the normal hub app with a standing-by work (no routing to the agent, no agent destination), step 2 the normal work', () => {
      const start = commit(
        edgeFleet(undefined, DeliveryModel.AGENT_AUTONOMOUS, { flavor: HubFlavor.OCM, app: 'static' }),
      );
      expect(start.files.get('hub/spokes/s1/applications.yaml')).toContain('name: web-s1');
      const step1 = commit(
        edgeFleet(start.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM, app: 'static' }),
      );
      const hubApp = parse(step1.files.get('hub/hub/applications.yaml')!)[0];
      expect(hubApp.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
      expect(hubApp.metadata.annotations).toMatchObject({
        'pullfleet.io/stand-by': 'true',
        'argocd.argoproj.io/skip-reconcile': 'true',
      });
      expect(hubApp.metadata.annotations['apps.open-cluster-management.io/destination-name']).toBeUndefined();
      const work1 = parse(step1.files.get('hub/hub/works/s1.yaml')!).find(
        (o) => o.metadata.name !== 'pullfleet-bootstrap',
      );
      expect(work1.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
      expect(work1.spec.manifestConfigs[0].updateStrategy).toStrictEqual({ type: 'CreateOnly' });
      expect(work1.spec.workload.manifests.at(-1).spec.destination).toStrictEqual({
        server: 'https://kubernetes.default.svc',
        namespace: 'web',
      });
      expect(step1.files.has('hub/spokes/s1/applications.yaml')).toBe(false);
      expect(stateOf(step1.files).fromAgent).toBeUndefined();
      expect(describeTransition('s1', stateOf(start.files), stateOf(step1.files))).toContain(
        "the spoke's own folder stops listing its Applications",
      );

      const step2 = commit(
        edgeFleet(step1.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM, app: 'static' }),
      );
      const work2 = parse(step2.files.get('hub/hub/works/s1.yaml')!).find(
        (o) => o.metadata.name !== 'pullfleet-bootstrap',
      );
      expect(work2.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
      expect(work2.spec.manifestConfigs[0].updateStrategy.type).toBe('ServerSideApply');
      expect(
        parse(step2.files.get('hub/hub/applications.yaml')!)[0].metadata.annotations['pullfleet.io/stand-by'],
      ).toBeUndefined();
      expect(pinned(step1.files)).toMatchSnapshot('agent-autonomous-to-basic step 1');
      expect(pinned(step2.files)).toMatchSnapshot('agent-autonomous-to-basic step 2');
    });

    test('GIVEN an ApplicationSet moving agent-autonomous → basic THEN step 1 renders it with standing-by works, step 2 the normal template', () => {
      const start = commit(edgeFleet(undefined, DeliveryModel.AGENT_AUTONOMOUS, { flavor: HubFlavor.OCM }));
      expect(appSetOf(start.files)).toBeUndefined();
      const step1 = commit(edgeFleet(start.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM }));
      const t1 = appSetOf(step1.files).spec.template;
      expect(t1.metadata.annotations).toMatchObject({
        'pullfleet.io/stand-by': 'true',
        'argocd.argoproj.io/skip-reconcile': 'true',
      });
      expect(t1.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'web' });
      const step2 = commit(edgeFleet(step1.dir, undefined, { move: DeliveryModel.BASIC, flavor: HubFlavor.OCM }));
      expect(appSetOf(step2.files).spec.template.metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
      expect(stateOf(step2.files)).toMatchObject({ deliveryModel: 'basic', works: [{ deleteOption: 'Foreground' }] });
    });
  });

  test('GIVEN an ApplicationSet on a basic placement moving to agent-managed THEN synth refuses one step; step 1 keeps it basic without the resources finalizer, step 2 removes it (its works delete the spoke copies, nothing to prune), step 3 brings it back routed to the agent', () => {
    const appSet = (files: Map<string, string>) =>
      parse(files.get('hub/hub/application-sets.yaml') ?? '').find((o) => o.kind === 'ApplicationSet');
    const start = commit(edgeFleet(undefined, undefined));
    expect(synthError(edgeFleet(start.dir, DeliveryModel.AGENT_MANAGED))).toContain(
      'spoke "s1" changes from basic to agent-managed in one step, but its works openshift-gitops-s1-web have deleteOption Foreground',
    );
    expect(appSet(start.files).spec.template.metadata.finalizers).toStrictEqual([
      'resources-finalizer.argocd.argoproj.io',
      'pullfleet.io/manifestwork-cleanup',
    ]);

    const step1 = commit(edgeFleet(start.dir, DeliveryModel.AGENT_MANAGED, { move: DeliveryModel.AGENT_MANAGED }));
    const t1 = appSet(step1.files).spec.template;
    expect(t1.metadata.labels['apps.open-cluster-management.io/pull-to-ocm-managed-cluster']).toBe('true');
    expect(t1.metadata.annotations['argocd.argoproj.io/skip-reconcile']).toBe('true');
    expect(t1.metadata.annotations['argocd.argoproj.io/source-uid-mismatch-policy']).toBeUndefined();
    expect(t1.metadata.annotations['pullfleet.io/stand-by']).toBeUndefined();
    // Only the resources finalizer goes: the controller's cleanup finalizer stays in the template.
    expect(t1.metadata.finalizers).toStrictEqual(['pullfleet.io/manifestwork-cleanup']);
    expect(parsePlanState(step1.files.get('hub/plan-state.json')!, 'plan-state.json').spokes[0]).toMatchObject({
      moveStep: 1,
      handOver: ['openshift-gitops/s1-web'],
      works: [{ deleteOption: 'Foreground' }],
    });
    expect(planFleet(readSide(start.dir), readSide(step1.dir)).runtimeDeletions).toStrictEqual([]);

    const step2 = commit(edgeFleet(step1.dir, DeliveryModel.AGENT_MANAGED, { move: DeliveryModel.AGENT_MANAGED }));
    expect(appSet(step2.files)).toBeUndefined();
    expect(parsePlanState(step2.files.get('hub/plan-state.json')!, 'plan-state.json').spokes[0]).toMatchObject({
      deliveryModel: 'basic',
      moveStep: 2,
      handOver: ['openshift-gitops/s1-web'],
      works: [],
    });
    // The ApplicationSet's removal deletes the generated app and its work, and so the spoke copy, which has no resources finalizer.
    expect(
      planFleet(readSide(step1.dir), readSide(step2.dir))
        .runtimeDeletions.map((d) => d.text)
        .join('\n'),
    ).toContain('no resources finalizer');

    const step3 = commit(edgeFleet(step2.dir, DeliveryModel.AGENT_MANAGED, { move: DeliveryModel.AGENT_MANAGED }));
    const t3 = appSet(step3.files).spec.template;
    expect(t3.spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'web' });
    expect(t3.metadata.labels['pullfleet.io/delivery-model']).toBe('agent-managed');
    expect(t3.metadata.finalizers).toStrictEqual(['resources-finalizer.argocd.argoproj.io']);
    expect(parsePlanState(step3.files.get('hub/plan-state.json')!, 'plan-state.json').spokes[0]).toMatchObject({
      deliveryModel: 'agent-managed',
      works: [],
    });
    expect(planFleet(readSide(step2.dir), readSide(step3.dir)).runtimeDeletions).toStrictEqual([]);
  });

  test('GIVEN a static agent-managed app WHEN it is removed THEN plan shows the deletion the principal causes on the spoke, not "nothing on a spoke is deleted"', () => {
    const withApp = commit(fleetAt(undefined, true));
    const { fleet, hub } = testFleet({
      fleet: { outdir: NEVER_WRITTEN, previousOutput: withApp.dir },
      hub: { flavor: HubFlavor.ACM },
      sets: ['all'],
      spokes: [{ name: 's1', labels: { agent: 'true' } }],
    });
    GitOpsCluster.acm(hub, 'agents', {
      placement: new Placement(hub, 'agents', { predicates: [{ labels: { agent: 'true' } }] }),
      model: DeliveryModel.AGENT_MANAGED,
    });
    const without = commit(fleet);
    const plan = planFleet(readSide(withApp.dir), readSide(without.dir));
    expect(plan.spokeDeletions.map((d) => d.id)).toStrictEqual(['hub/s1/argocd-agent/openshift-gitops/web-s1']);
    expect(plan.removed.map((c) => c.name)).not.toContain('web-s1');
    expect(formatPlan(plan)).toContain(
      'hub Application openshift-gitops/web-s1 removed: the principal tells the argocd-agent on spoke s1 to delete its copy (prunes its workload: resources finalizer)',
    );
  });

  test('GIVEN an agent-managed ApplicationSet WHEN it is removed THEN plan shows the deletion the principal causes on the spoke', () => {
    const plan = planFleet(
      readSide(commit(edgeFleet(undefined, DeliveryModel.AGENT_MANAGED)).dir),
      readSide(commit(edgeFleet(undefined, DeliveryModel.AGENT_MANAGED, { app: 'none' })).dir),
    );
    expect(plan.runtimeDeletions.map((d) => d.text)).toStrictEqual([
      'ApplicationSet web removed: its app s1-web goes, and the argocd-principal tells the agent on spoke s1 to delete its copy at runtime (prunes its workload: resources finalizer)',
    ]);
  });

  test('GIVEN the three steps of basic → agent-managed THEN plan names the Applications handed over, what is unmanaged and the signal to wait for', () => {
    const start = commit(fleetAt(undefined, false));
    const step1 = commit(fleetAt(start.dir, true, DeliveryModel.AGENT_MANAGED));
    const step2 = commit(fleetAt(step1.dir, true, DeliveryModel.AGENT_MANAGED));
    const step3 = commit(fleetAt(step2.dir, true, DeliveryModel.AGENT_MANAGED));
    const plan1 = planFleet(readSide(start.dir), readSide(step1.dir));
    expect(plan1.transitions).toHaveLength(1);
    expect(plan1.transitions[0]).toContain(
      'hub: spoke s1: move basic → agent-managed, step 1 of 3: the works stay (server-side apply, deleteOption Foreground) and take the finalizer resources-finalizer.argocd.argoproj.io off the spoke Applications openshift-gitops/web-s1',
    );
    expect(plan1.transitions[0]).toContain('every work of the spoke reports Applied at its current generation');
    expect(plan1.spokeDeletions).toStrictEqual([]);
    const plan2 = planFleet(readSide(step1.dir), readSide(step2.dir));
    expect(plan2.transitions[0]).toContain('step 2 of 3');
    expect(plan2.transitions[0]).toContain(
      'the work agent deletes the spoke Applications openshift-gitops/web-s1, which no longer carry resources-finalizer.argocd.argoproj.io, so their workloads keep running, unmanaged (no sync, no self-heal) until step 3 is applied',
    );
    expect(plan2.transitions[0]).toContain(
      'wait until none of those works is left on the hub (kubectl get manifestwork -n s1',
    );
    // The Foreground work's removal deletes the spoke Application, which no longer prunes anything.
    expect(plan2.spokeDeletions.map((d) => d.id)).toStrictEqual(['hub/s1/openshift-gitops-web-s1']);
    expect(formatPlan(plan2)).toContain('MOVES BETWEEN DELIVERY MODELS (1):');
    const plan3 = planFleet(readSide(step2.dir), readSide(step3.dir));
    expect(plan3.transitions[0]).toContain(
      'step 3 of 3: the hub Applications are created routed to the agent (destination.name s1); the principal sends each a Create',
    );
    expect(plan3.spokeDeletions).toStrictEqual([]);
  });

  test('fails when moveTo names a model the GitOpsClusters do not give the spoke', () => {
    expect(synthError(fleetAt(undefined, false, DeliveryModel.AGENT_MANAGED))).toContain(
      'asks to move to agent-managed',
    );
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
    expect(() =>
      parsePlanState(JSON.stringify({ ...base, spokes: [{ ...spoke, deliveryModel: 'push' }] }), 'f.json'),
    ).toThrow(
      'f.json: spokes[0].deliveryModel "push" is not one of basic, agent-managed, agent-autonomous: synthesize again to rewrite it',
    );
    expect(() =>
      parsePlanState(
        JSON.stringify({ ...base, spokes: [{ ...spoke, works: [{ name: 'w', deleteOption: 'Background' }] }] }),
        'f.json',
      ),
    ).toThrow('spokes[0].works must be a list of { name, deleteOption: Foreground | Orphan }');
  });

  test('fails when a spoke is moved to two different models', () => {
    const fleet = fleetAt(undefined, true, DeliveryModel.AGENT_MANAGED);
    const spoke = fleet.hubs[0].spokes[0];
    spoke.moveTo(DeliveryModel.AGENT_AUTONOMOUS);
    expect(synthError(fleet)).toContain(
      'moveTo(agent-autonomous) after moveTo(agent-managed): a spoke moves to one model at a time',
    );
  });
});

describe('applicationSetStep', () => {
  const at = (model: DeliveryModel, step: 0 | 1 | 2 = 0, extra: Partial<ReturnType<typeof decideTransition>> = {}) => ({
    model,
    deleteOption: step === 1 ? DeleteOption.ORPHAN : DeleteOption.FOREGROUND,
    step,
    ...extra,
  });

  test('GIVEN spokes still basic on an agent placement THEN the ApplicationSet stays basic: standing by for autonomous, without the resources finalizer (step 1), or not at all (step 2), for managed', () => {
    expect(
      applicationSetStep(DeliveryModel.AGENT_AUTONOMOUS, [
        { name: 's1', decision: at(DeliveryModel.BASIC, 1, { movingTo: DeliveryModel.AGENT_AUTONOMOUS }) },
      ]),
    ).toStrictEqual({
      model: DeliveryModel.BASIC,
      handback: { standBy: true, route: false, agentDestination: false },
    });
    expect(
      applicationSetStep(DeliveryModel.AGENT_MANAGED, [
        {
          name: 's1',
          decision: at(DeliveryModel.BASIC, 1, {
            movingTo: DeliveryModel.AGENT_MANAGED,
            moveStep: 1,
            releaseFinalizer: true,
          }),
        },
      ]),
    ).toStrictEqual({
      model: DeliveryModel.BASIC,
      handback: { standBy: false, route: false, agentDestination: false, releaseFinalizer: true },
    });
    // step 2 of basic → agent-managed: the ApplicationSet is not rendered
    expect(
      applicationSetStep(DeliveryModel.AGENT_MANAGED, [
        {
          name: 's1',
          decision: at(DeliveryModel.BASIC, 2, { movingTo: DeliveryModel.AGENT_MANAGED, moveStep: 2, clear: true }),
        },
      ]),
    ).toMatchObject({ model: DeliveryModel.BASIC, clear: true });
    // all moved: the placement's model, plain
    expect(
      applicationSetStep(DeliveryModel.AGENT_MANAGED, [{ name: 's1', decision: at(DeliveryModel.AGENT_MANAGED, 2) }]),
    ).toStrictEqual({
      model: DeliveryModel.AGENT_MANAGED,
      handback: { standBy: false, route: false, agentDestination: false },
    });
  });

  test('GIVEN a basic placement with a spoke coming back from agent-managed THEN the template stands by routed, and keeps the agent destination afterwards', () => {
    const back = at(DeliveryModel.BASIC, 1, {
      movingTo: DeliveryModel.BASIC,
      adoptFromAgent: DeliveryModel.AGENT_MANAGED,
      fromAgent: true,
    });
    expect(
      applicationSetStep(DeliveryModel.BASIC, [
        { name: 's1', decision: back },
        { name: 's2', decision: at(DeliveryModel.BASIC) },
      ]).handback,
    ).toStrictEqual({ standBy: true, route: true, agentDestination: true });
    expect(
      applicationSetStep(DeliveryModel.BASIC, [
        { name: 's1', decision: at(DeliveryModel.BASIC, 0, { fromAgent: true }) },
      ]).handback,
    ).toStrictEqual({ standBy: false, route: false, agentDestination: true });
  });

  test('fails when the spokes of one placement are at different steps of a move, naming both sides', () => {
    const step = applicationSetStep(DeliveryModel.AGENT_AUTONOMOUS, [
      { name: 's1', decision: at(DeliveryModel.AGENT_AUTONOMOUS, 2) },
      { name: 's2', decision: at(DeliveryModel.BASIC, 1, { movingTo: DeliveryModel.AGENT_AUTONOMOUS }) },
    ]);
    expect(step.model).toBe(DeliveryModel.BASIC);
    expect(step.problem).toBe(
      'selects spokes at different steps of their move to agent-autonomous (s1 already moved, s2 not yet): its one ApplicationSet serves them all, so move them together (the same moveTo, the same commits)',
    );
  });
});

describe('decideTransition', () => {
  test('moving between the two agent modes directly is refused: through basic first', () => {
    const d = decideTransition('s1', DeliveryModel.AGENT_AUTONOMOUS, DeliveryModel.AGENT_AUTONOMOUS, {
      deliveryModel: DeliveryModel.AGENT_MANAGED,
      works: [],
    });
    expect(d.model).toBe(DeliveryModel.AGENT_MANAGED);
    expect(d.problem).toContain('move it to basic first');
  });

  test('a basic spoke without works may change model in one step (nothing is dropped)', () => {
    expect(
      decideTransition('s1', DeliveryModel.AGENT_MANAGED, undefined, { deliveryModel: DeliveryModel.BASIC, works: [] }),
    ).toStrictEqual({ model: DeliveryModel.AGENT_MANAGED, deleteOption: 'Foreground', step: 0 });
  });
});
