/**
 * A static app rolled out in controller waves does not block moving one of its spokes between delivery
 * models. While a spoke moves, it leaves the app's waves: each step of the move delivers the app to it as it
 * delivers everything else (a static work synth renders, nothing in step 2 of a move to agent-managed, an
 * agent-managed hub Application in step 3), and its work is never deleted with its Application's resources
 * finalizer on. The other spokes stay waved, byte for byte. On an agent model the spoke stays out of the
 * waves; back on basic it rejoins its wave through a work rendered with Argo CD's Prune=false, which the
 * controller takes over. The policy ConfigMap names every spoke outside the waves and why, for `pullfleet plan`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import {
  AppSource,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Placement,
  PullApplication,
  Rollout,
} from '../../src/constructs/index.js';
import { NEVER_WRITTEN, testFleet } from '../support/fleet-builder.js';
import { readSide } from '../../src/cli/commands/plan.js';
import { planFleet } from '../../src/model/plan/plan.js';
import { parsePlanState } from '../../src/model/plan/state.js';
import { describeOutsideWaves, outsideWaves } from '../../src/model/rollout/policy.js';
import { parseRolloutPolicy } from '../../src/model/rollout/state.js';

const scratch: string[] = [];
process.env.PULLFLEET_CACHE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-cache-'));
scratch.push(process.env.PULLFLEET_CACHE_DIR);
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** Where spoke east stands: basic, moving to agent-managed (`to-agent`), agent-managed, or moving back (`to-basic`). */
type East = 'basic' | 'to-agent' | 'agent' | 'to-basic';

/**
 * Hub `hub`, spokes canary (wave canary), east and west (wave main); static app `web` (pruneOnDelete, so its
 * spoke Applications carry the resources finalizer) rolled out in those waves; an agent-managed GitOpsCluster
 * for spokes labelled agent=managed.
 */
function buildFleet(east: East, previousOutput?: string): Fleet {
  const agent = east === 'to-agent' || east === 'agent';
  const { fleet, hub, spokes } = testFleet({
    fleet: { outdir: NEVER_WRITTEN, ...(previousOutput ? { previousOutput } : {}) },
    sets: ['all'],
    spokes: [
      { name: 'canary', labels: { ring: 'canary' } },
      { name: 'east', labels: { ring: 'main', ...(agent ? { agent: 'managed' } : {}) } },
      { name: 'west', labels: { ring: 'main' } },
    ],
  });
  const agents = new Placement(hub, 'agents', { predicates: [{ labels: { agent: 'managed' } }] });
  GitOpsCluster.ocm(hub, 'agents', { placement: agents, model: DeliveryModel.AGENT_MANAGED });
  new PullApplication(hub, 'web', {
    source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web', targetRevision: 'v1' }),
    destinationNamespace: 'web',
    spokes,
    pruneOnDelete: true,
    rollout: Rollout.waves([
      { name: 'canary', labels: { ring: 'canary' } },
      { name: 'main', rest: true },
    ]),
  });
  if (east === 'to-agent') spokes[1].moveTo(DeliveryModel.AGENT_MANAGED);
  if (east === 'to-basic') spokes[1].moveTo(DeliveryModel.BASIC);
  return fleet;
}

interface Step {
  readonly dir: string;
  readonly files: Map<string, string>;
  readonly warnings: string[];
}

/** Synthesizes where east stands, judged against the output `previous`, into a fresh folder: one commit of dist/. */
function commit(east: East, previous?: Step): Step {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-waves-agent-'));
  scratch.push(dir);
  const fleet = buildFleet(east, previous?.dir);
  const files = fleet.renderFiles();
  for (const [file, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return { dir, files, warnings: fleet.warnings().map((w) => w.message) };
}

type Obj = {
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec?: Record<string, unknown> & {
    deleteOption?: { propagationPolicy?: string };
    workload?: { manifests?: Array<{ kind: string; metadata: { finalizers?: string[] } }> };
    destination?: Record<string, string>;
  };
  data?: Record<string, string>;
};
const objectsOf = (step: Step, file: string): Obj[] =>
  step.files.has(`hub/${file}`)
    ? parseAllDocuments(step.files.get(`hub/${file}`)!)
        .map((d) => d.toJS() as Obj)
        .filter(Boolean)
    : [];
const hubApp = (step: Step, spoke: string) =>
  objectsOf(step, 'hub/applications.yaml').find((o) => o.kind === 'Application' && o.metadata.name === `web-${spoke}`);
const appWork = (step: Step, spoke: string) =>
  objectsOf(step, `hub/works/${spoke}.yaml`).find((o) => o.metadata.name === `argocd-web-${spoke}`);
const payloadOf = (work: Obj | undefined) => work?.spec?.workload?.manifests?.find((m) => m.kind === 'Application');
const policyOf = (step: Step) => {
  const map = objectsOf(step, 'hub/applications.yaml').find(
    (o) => o.kind === 'ConfigMap' && o.metadata.name === 'pullfleet-rollout-web',
  )!;
  return parseRolloutPolicy(map).policy!;
};
const planStateOf = (step: Step, spoke: string) =>
  parsePlanState(step.files.get('hub/plan-state.json')!, 'plan-state.json').spokes.find((s) => s.name === spoke)!;
const RESOURCES_FINALIZER = 'resources-finalizer.argocd.argoproj.io';
const yamlOf = (o: Obj | undefined) => JSON.stringify(o);

describe('a waved static app and a spoke moving between delivery models', () => {
  test('GIVEN a waved app on basic spokes WHEN east moves to agent-managed THEN every step synthesizes, east leaves the waves without losing its work or Application, and the other spokes stay waved', () => {
    const start = commit('basic');
    expect(policyOf(start).waves.map((w) => [w.name, w.clusters, w.outside])).toStrictEqual([
      ['canary', ['canary'], undefined],
      ['main', ['east', 'west'], undefined],
    ]);
    expect(hubApp(start, 'east')?.metadata.annotations?.['pullfleet.io/delivery']).toBe('waved');
    expect(appWork(start, 'east')).toBeUndefined();
    expect(planStateOf(start, 'east').works).toContainEqual({
      name: 'argocd-web-east',
      deleteOption: 'Foreground',
      waved: true,
    });

    // step 1 of 3: east leaves the waves; synth renders its work, which takes the resources finalizer off
    const step1 = commit('to-agent', start);
    const app1 = hubApp(step1, 'east')!;
    expect(app1.metadata.annotations?.['pullfleet.io/delivery']).toBe('static');
    expect(app1.metadata.annotations?.['pullfleet.io/rollout']).toBeUndefined();
    expect(app1.metadata.finalizers ?? []).not.toContain(RESOURCES_FINALIZER);
    const work1 = appWork(step1, 'east')!;
    expect(work1.spec?.deleteOption?.propagationPolicy ?? 'Foreground').toBe('Foreground');
    expect(work1.metadata.annotations?.['argocd.argoproj.io/sync-options']).toBeUndefined();
    expect(payloadOf(work1)?.metadata.finalizers ?? []).not.toContain(RESOURCES_FINALIZER);
    expect(planStateOf(step1, 'east')).toMatchObject({
      deliveryModel: 'basic',
      movingTo: 'agent-managed',
      moveStep: 1,
      works: expect.arrayContaining([{ name: 'argocd-web-east', deleteOption: 'Foreground' }]),
    });
    expect(policyOf(step1).waves.map((w) => [w.name, w.clusters, w.outside])).toStrictEqual([
      ['canary', ['canary'], undefined],
      ['main', ['west'], { east: { reason: 'moving', model: 'agent-managed', step: 1, steps: 3 } }],
    ]);
    // the spokes that stay are rendered exactly as before: still waved, no work in dist/
    for (const spoke of ['canary', 'west']) {
      expect(yamlOf(hubApp(step1, spoke))).toBe(yamlOf(hubApp(start, spoke)));
      expect(appWork(step1, spoke)).toBeUndefined();
    }

    // step 2 of 3: neither hub Application nor work (removing the work deletes a spoke Application that no longer prunes)
    const step2 = commit('to-agent', step1);
    expect(hubApp(step2, 'east')).toBeUndefined();
    expect(appWork(step2, 'east')).toBeUndefined();
    expect(planStateOf(step2, 'east')).toMatchObject({ moveStep: 2, handOver: ['argocd/web-east'] });
    expect(policyOf(step2).waves[1].outside).toStrictEqual({
      east: { reason: 'moving', model: 'agent-managed', step: 2, steps: 3 },
    });
    for (const spoke of ['canary', 'west']) expect(yamlOf(hubApp(step2, spoke))).toBe(yamlOf(hubApp(start, spoke)));

    // step 3 of 3: the hub Application comes back routed to the agent, outside the waves
    const step3 = commit('to-agent', step2);
    const app3 = hubApp(step3, 'east')!;
    expect(app3.spec?.destination).toMatchObject({ name: 'east' });
    expect(app3.metadata.annotations?.['pullfleet.io/rollout']).toBeUndefined();
    expect(appWork(step3, 'east')).toBeUndefined();
    expect(policyOf(step3).waves[1].outside).toStrictEqual({
      east: { reason: 'moving', model: 'agent-managed', step: 3, steps: 3 },
    });

    // the move is done (moveTo removed): east stays out of the waves on the agent model
    const done = commit('agent', step3);
    expect(yamlOf(hubApp(done, 'east'))).toBe(yamlOf(app3));
    expect(policyOf(done).waves.map((w) => [w.name, w.clusters, w.outside])).toStrictEqual([
      ['canary', ['canary'], undefined],
      ['main', ['west'], { east: { reason: 'agent', model: 'agent-managed' } }],
    ]);
    for (const spoke of ['canary', 'west']) expect(yamlOf(hubApp(done, spoke))).toBe(yamlOf(hubApp(start, spoke)));
    expect(done.warnings.join('\n')).not.toContain('rollout');
  });

  test('GIVEN east on agent-managed outside the waves WHEN it moves back to basic THEN its work stands by, then is protected with Prune=false, and it rejoins its wave keeping the agent destination', () => {
    const start = commit('agent');
    expect(hubApp(start, 'east')?.spec?.destination).toMatchObject({ name: 'east' });
    expect(policyOf(start).waves[1]).toMatchObject({
      clusters: ['west'],
      outside: { east: { reason: 'agent', model: 'agent-managed' } },
    });

    // step 1 of 2: still routed to the agent, its work stands by (CreateOnly, Orphan), not protected
    const step1 = commit('to-basic', start);
    const app1 = hubApp(step1, 'east')!;
    expect(app1.spec?.destination).toMatchObject({ name: 'east' });
    expect(app1.metadata.annotations?.['pullfleet.io/stand-by']).toBe('true');
    const work1 = appWork(step1, 'east')!;
    expect(work1.spec?.deleteOption?.propagationPolicy).toBe('Orphan');
    expect(work1.metadata.annotations?.['argocd.argoproj.io/sync-options']).toBeUndefined();
    expect(policyOf(step1).waves[1].outside).toStrictEqual({
      east: { reason: 'moving', model: 'basic', step: 1, steps: 2 },
    });

    // step 2 of 2: the normal basic work (Foreground), with the agent's destination, protected for the hand-over
    const step2 = commit('to-basic', step1);
    const work2 = appWork(step2, 'east')!;
    expect(work2.spec?.deleteOption?.propagationPolicy ?? 'Foreground').toBe('Foreground');
    expect(work2.metadata.annotations?.['argocd.argoproj.io/sync-options']).toBe('Prune=false');
    expect(payloadOf(work2)?.metadata.finalizers).toContain(RESOURCES_FINALIZER);
    expect(hubApp(step2, 'east')?.metadata.annotations?.['apps.open-cluster-management.io/destination-name']).toBe(
      'in-cluster',
    );
    expect(planStateOf(step2, 'east').works).toContainEqual({
      name: 'argocd-web-east',
      deleteOption: 'Foreground',
      fromAgent: true,
      pruneProtected: true,
    });
    expect(policyOf(step2).waves[1].outside).toStrictEqual({
      east: { reason: 'rejoining', model: 'basic', step: 2, steps: 2 },
    });

    // moveTo removed: east is waved again; the controller writes its work (Argo CD leaves the protected one)
    const back = commit('basic', step2);
    const app3 = hubApp(back, 'east')!;
    expect(app3.metadata.annotations).toMatchObject({
      'pullfleet.io/delivery': 'waved',
      'pullfleet.io/rollout': 'pullfleet-rollout-web',
      'apps.open-cluster-management.io/destination-name': 'in-cluster',
    });
    expect(appWork(back, 'east')).toBeUndefined();
    expect(planStateOf(back, 'east').works).toContainEqual({
      name: 'argocd-web-east',
      deleteOption: 'Foreground',
      fromAgent: true,
      waved: true,
    });
    expect(policyOf(back).waves.map((w) => [w.name, w.clusters, w.outside])).toStrictEqual([
      ['canary', ['canary'], undefined],
      ['main', ['east', 'west'], undefined],
    ]);
    for (const spoke of ['canary', 'west']) expect(yamlOf(hubApp(back, spoke))).toBe(yamlOf(hubApp(start, spoke)));
  });
  test("GIVEN step 1 of east's move to agent-managed WHEN planned THEN the waves of app web say east leaves them and is updated with the step", () => {
    const start = commit('basic');
    const step1 = commit('to-agent', start);
    expect(planFleet(readSide(start.dir), readSide(step1.dir)).rollouts.join('\n')).toContain(
      "    2. main: west\n       spoke east leaves app web's waves while it moves to agent-managed (step 1 of 3): it is updated with the step, at once, not in wave main",
    );
  });
});

describe('spokes outside the waves', () => {
  test('GIVEN each step of each move THEN the spoke is outside the waves with the step, and inside once basic and settled', () => {
    const at = (model: DeliveryModel, step: 0 | 1 | 2 | 3, movingTo?: DeliveryModel, rejoin = false) =>
      outsideWaves({ model, step, ...(movingTo ? { movingTo } : {}) }, rejoin);
    const { BASIC, AGENT_MANAGED, AGENT_AUTONOMOUS } = DeliveryModel;
    expect(at(BASIC, 0)).toBeUndefined();
    expect(at(BASIC, 1, AGENT_MANAGED)).toStrictEqual({ reason: 'moving', model: AGENT_MANAGED, step: 1, steps: 3 });
    expect(at(AGENT_MANAGED, 3)).toStrictEqual({ reason: 'moving', model: AGENT_MANAGED, step: 3, steps: 3 });
    expect(at(BASIC, 1, AGENT_AUTONOMOUS)).toStrictEqual({
      reason: 'moving',
      model: AGENT_AUTONOMOUS,
      step: 1,
      steps: 2,
    });
    expect(at(AGENT_AUTONOMOUS, 0)).toStrictEqual({ reason: 'agent', model: AGENT_AUTONOMOUS });
    expect(at(BASIC, 1, BASIC)).toStrictEqual({ reason: 'moving', model: BASIC, step: 1, steps: 2 });
    expect(at(BASIC, 2)).toStrictEqual({ reason: 'rejoining', model: BASIC, step: 2, steps: 2 });
    expect(at(BASIC, 0, undefined, true)).toStrictEqual({ reason: 'rejoining', model: BASIC });
  });

  test('GIVEN a spoke outside the waves THEN plan can say what happens to the rollout for it', () => {
    expect(
      describeOutsideWaves('web', 'main', 'east', {
        reason: 'moving',
        model: DeliveryModel.AGENT_MANAGED,
        step: 1,
        steps: 3,
      }),
    ).toBe(
      "spoke east leaves app web's waves while it moves to agent-managed (step 1 of 3): it is updated with the step, at once, not in wave main",
    );
    expect(describeOutsideWaves('web', 'main', 'east', { reason: 'agent', model: DeliveryModel.AGENT_MANAGED })).toBe(
      'spoke east runs agent-managed: app web reaches it through the argocd-agent principal as soon as the hub applies a change, not in wave main',
    );
  });

  test('GIVEN the only spoke of a wave moving to agent-managed THEN synth warns that the wave is passed over', () => {
    // canary moves: wave canary is left with no spoke, so the controller would start wave main at once
    const build = (moving: boolean, previousOutput?: string) => {
      const { fleet, hub, spokes } = testFleet({
        fleet: { outdir: NEVER_WRITTEN, ...(previousOutput ? { previousOutput } : {}) },
        sets: ['all'],
        spokes: [
          { name: 'canary', labels: { ring: 'canary', ...(moving ? { agent: 'managed' } : {}) } },
          { name: 'west', labels: { ring: 'main' } },
        ],
      });
      const [canary, west] = spokes;
      const agents = new Placement(hub, 'agents', { predicates: [{ labels: { agent: 'managed' } }] });
      GitOpsCluster.ocm(hub, 'agents', { placement: agents, model: DeliveryModel.AGENT_MANAGED });
      new PullApplication(hub, 'web', {
        source: AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' }),
        destinationNamespace: 'web',
        spokes: [canary, west],
        rollout: Rollout.waves([
          { name: 'canary', labels: { ring: 'canary' } },
          { name: 'main', rest: true },
        ]),
      });
      if (moving) canary.moveTo(DeliveryModel.AGENT_MANAGED);
      return fleet;
    };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-waves-agent-'));
    scratch.push(dir);
    for (const [file, text] of build(false).renderFiles()) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    }
    const moving = build(true, dir);
    moving.renderFiles();
    expect(moving.warnings().map((w) => w.message)).toContain(
      'rollout of app "web": wave "canary" has no spoke rolled out in it now (canary moves to agent-managed, outside the waves), so the controller passes over it and the next wave starts at once: hold changes of the app until the spokes are back in the wave, or add a basic spoke to it',
    );
  });
});
