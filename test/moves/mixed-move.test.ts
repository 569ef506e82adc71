/**
 * A move between delivery models changes only what is delivered to the moving spokes. The fixture
 * (test/fixtures/mixed-move-fleet.ts) puts an agent-managed group (e1, e2) next to basic spokes (p1, p2)
 * and a basic ApplicationSet `monitoring` whose placement selects all four: moving e1 back to basic, or
 * adding a spoke to the agent group, leaves every other ApplicationSet, work and bootstrap byte for byte
 * as it was, and plan (through the binary) names exactly what changes. Synth judges a move against the
 * committed plan state it is given (`--plan-state`), which is what the CI check init writes relies on.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  HubFlavor,
  Placement,
  PullApplicationSet,
  Spoke,
} from '../../src/constructs/index.js';
import {
  applicationSetDecision,
  applicationSetStep,
  DeleteOption,
  type TransitionDecision,
} from '../../src/model/delivery/transition.js';
import { planFleet } from '../../src/model/plan/plan.js';
import { parsePlanState, type PlanStateSpoke } from '../../src/model/plan/state.js';
import { readSide } from '../../src/cli/commands/plan.js';
import { renderWorkflow } from '../../src/cli/support/init-files.js';
import { buildMixedMoveFleet, type MixedSpec } from '../fixtures/mixed-move-fleet.js';
import { scratchFolders } from '../support/scratch.js';

const tmp = scratchFolders();

/** Synthesizes `spec` (judged against the output folder `previous`) into a fresh folder: the committed dist/ of that step. */
function commit(spec: MixedSpec, previous?: string): { dir: string; files: Map<string, string> } {
  const dir = tmp('pullfleet-mixed-');
  const files = buildMixedMoveFleet(spec, {
    outdir: '/nonexistent/never-written',
    previousOutput: previous,
  }).renderFiles();
  for (const [file, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return { dir, files };
}

/** The files whose content differs between two outputs (added, removed or changed). */
const changedFiles = (a: Map<string, string>, b: Map<string, string>) =>
  [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
const spokesOf = (files: Map<string, string>) =>
  new Map(parsePlanState(files.get('hub/plan-state.json')!, 'plan-state.json').spokes.map((s) => [s.name, s]));
/** Every file of the spokes that do not move (works and bootstrap), and the ApplicationSets. */
const untouched = (files: Map<string, string>, moving: string[]) =>
  Object.fromEntries(
    [...files].filter(
      ([file]) =>
        file === 'hub/hub/application-sets.yaml' ||
        (/\/(works|bootstrap)\//.test(file) && !moving.some((s) => file.endsWith(`/${s}.yaml`))),
    ),
  );

const APP = `${process.execPath} --import tsx test/fixtures/mixed-move-fleet.ts`;

/** `node bin/pullfleet.js …` from the repository, the fixture spec in the environment. */
function binary(args: readonly string[], spec: MixedSpec) {
  const run = spawnSync(process.execPath, [path.resolve('bin/pullfleet.js'), ...args], {
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, NO_COLOR: '1', PULLFLEET_TEST_MIXED: JSON.stringify(spec) },
  });
  if (run.error) throw run.error;
  return { code: run.status, out: run.stdout, err: run.stderr };
}

/** `pullfleet plan <dir> -o json` through the binary: the parsed plan. */
function planJson(dir: string, spec: MixedSpec, extra: string[] = []) {
  const run = binary(['plan', dir, '-o', 'json', '--app', APP, ...extra], spec);
  return { code: run.code, err: run.err, plan: JSON.parse(run.out) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('moving one spoke back from agent-managed leaves the other ApplicationSets alone', () => {
  test('GIVEN an agent group beside basic spokes sharing ApplicationSet monitoring WHEN e1 moves back to basic THEN only e1 changes, in both steps, and plan names each change', () => {
    const start = commit({});
    const step1 = commit({ back: 'move' }, start.dir);
    const step2 = commit({ back: 'move' }, step1.dir);
    const done = commit({ back: 'done' }, step2.dir);

    // The ApplicationSet monitoring, and every work and bootstrap of e2, p1 and p2, byte for byte as they were.
    for (const next of [step1, step2, done])
      expect(untouched(next.files, ['e1'])).toStrictEqual(untouched(start.files, ['e1']));
    expect(changedFiles(start.files, step1.files)).toStrictEqual([
      'hub/hub/applications.yaml',
      'hub/hub/cluster-secrets.yaml',
      'hub/hub/works/e1.yaml',
      'hub/plan-state.json',
    ]);
    expect(changedFiles(step1.files, step2.files)).toStrictEqual([
      'hub/hub/applications.yaml',
      'hub/hub/works/e1.yaml',
      'hub/plan-state.json',
    ]);
    expect(changedFiles(step2.files, done.files)).toStrictEqual([]);
    // monitoring's work on e1 (written by the controller) stays as it was: Foreground, not taken back from the agent.
    for (const next of [start, step1, step2, done]) {
      const states = spokesOf(next.files);
      expect(states.get('e1')!.works!.find((w) => w.name === 'argocd-e1-monitoring')).toStrictEqual({
        name: 'argocd-e1-monitoring',
        deleteOption: 'Foreground',
      });
      for (const s of ['e2', 'p1', 'p2']) expect(states.get(s)).toStrictEqual(spokesOf(start.files).get(s));
    }
    // e1's static app web is the one taken back: its work keeps the agent's destination from now on.
    expect(spokesOf(step1.files).get('e1')).toMatchObject({
      movingTo: 'basic',
      fromAgent: true,
      works: [
        { name: 'argocd-e1-monitoring', deleteOption: 'Foreground' },
        { name: 'argocd-web-e1', deleteOption: 'Orphan', fromAgent: true },
      ],
    });
    expect(spokesOf(step2.files).get('e1')).toMatchObject({
      fromAgent: true,
      works: [
        { name: 'argocd-e1-monitoring', deleteOption: 'Foreground' },
        { name: 'argocd-web-e1', deleteOption: 'Foreground', fromAgent: true },
      ],
    });
    expect({
      step1: Object.fromEntries(changedFiles(start.files, step1.files).map((f) => [f, step1.files.get(f)])),
      step2: Object.fromEntries(changedFiles(step1.files, step2.files).map((f) => [f, step2.files.get(f)])),
    }).toMatchSnapshot('e1 back to basic beside monitoring');

    // plan, through the binary: step 1 deletes nothing and changes only e1's delivery; step 2 names the
    // principal's delete of e1's app web, and nothing of monitoring.
    const plan1 = planJson(start.dir, { back: 'move' });
    expect(plan1.code).toBe(0);
    expect(plan1.plan.spokeDeletions).toStrictEqual([]);
    expect(plan1.plan.runtimeDeletions).toStrictEqual([]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the plan is parsed JSON output
    const named = (p: Record<string, any>) =>
      [...p.changed, ...p.added, ...p.removed]
        .map((c: { kind: string; namespace?: string; name: string }) => `${c.kind} ${c.namespace ?? ''}/${c.name}`)
        .sort();
    expect(named(plan1.plan)).toStrictEqual([
      'Application argocd/web-e1',
      'ManifestWork e1/argocd-web-e1',
      'Secret argocd/e1-cluster-secret',
      'Spoke /e1',
    ]);
    expect(plan1.plan.transitions).toStrictEqual([
      expect.stringContaining('hub: spoke e1: move agent-managed → basic, step 1 of 2'),
    ]);
    const plan2 = planJson(step1.dir, { back: 'move' });
    expect(plan2.plan.spokeDeletions.map((d: { id: string }) => d.id)).toStrictEqual([
      'hub/e1/argocd-agent/argocd/web-e1',
    ]);
    expect(plan2.plan.runtimeDeletions).toStrictEqual([]);
    expect(named(plan2.plan)).toStrictEqual([
      'Application argocd/web-e1',
      'ManifestWork e1/argocd-web-e1',
      'Spoke /e1',
    ]);
  }, 240_000);

  test('GIVEN an agent-managed ApplicationSet on the group WHEN e1 leaves it THEN plan names the principal delete of its app there by what is deleted, not by a work', () => {
    const start = commit({ tools: true });
    const step1 = commit({ tools: true, back: 'move' }, start.dir);
    expect(untouched(step1.files, ['e1'])).toStrictEqual(untouched(start.files, ['e1']));
    const plan = planFleet(readSide(start.dir), readSide(step1.dir));
    expect(plan.runtimeDeletions.map((d) => [d.id, d.work, d.text])).toStrictEqual([
      [
        'hub/e1/argocd-agent/argocd/e1-tools',
        '',
        "spoke e1 leaves placement agents (label agent=managed removed): ApplicationSet tools's app e1-tools goes, and the argocd-principal tells the agent on spoke e1 to delete its copy at runtime (prunes its workload: resources finalizer)",
      ],
    ]);
  });
});

describe('runtime deletions of agent-managed ApplicationSets name what is deleted', () => {
  test('GIVEN an agent-managed ApplicationSet WHEN it is removed THEN the ids are <hub>/<spoke>/argocd-agent/<namespace>/<app>, as for static agent apps, and --allow-deletion acknowledges them (binary)', () => {
    const withTools = commit({ tools: true });
    const run = planJson(withTools.dir, {}, ['--fail-on-deletions', '--allow-deletion', 'hub/*/argocd-agent/*']);
    expect(run.plan.runtimeDeletions.map((d: { id: string; work: string }) => [d.id, d.work])).toStrictEqual([
      ['hub/e1/argocd-agent/argocd/e1-tools', ''],
      ['hub/e2/argocd-agent/argocd/e2-tools', ''],
    ]);
    expect(run.code).toBe(0);
    // the ids of a static agent-managed app (web) have the same shape
    const withoutWeb = planFleet(
      readSide(withTools.dir),
      readSide(commit({ tools: true, back: 'move' }, commit({ tools: true, back: 'move' }, withTools.dir).dir).dir),
    );
    expect(withoutWeb.spokeDeletions.map((d) => d.id)).toContain('hub/e1/argocd-agent/argocd/web-e1');
  }, 240_000);

  test('GIVEN an ApplicationSet moving agent-managed → basic THEN step 2 lists the delete the principal sends for each of its generated apps (if the agent still runs)', () => {
    const source = AppSource.git({ repoURL: 'https://git.example.com/apps.git', path: 'web' });
    const edge = (previous: string | undefined, agent: boolean, move?: DeliveryModel) => {
      const fleet = new Fleet({ outdir: '/nonexistent/never-written', previousOutput: previous });
      const hub = new Hub(fleet, 'hub', { flavor: HubFlavor.ACM });
      const set = new ClusterSet(hub, 'all');
      const spokes = ['s1', 's2'].map((name) => new Spoke(hub, name, { clusterSet: set, labels: { tier: 'edge' } }));
      const placement = new Placement(hub, 'edge', { predicates: [{ labels: { tier: 'edge' } }] });
      if (agent) GitOpsCluster.acm(hub, 'agents', { placement, model: DeliveryModel.AGENT_MANAGED });
      new PullApplicationSet(hub, 'web', { source, destinationNamespace: 'web', placement, pruneOnDelete: true });
      if (move) spokes.forEach((s) => s.moveTo(move));
      const dir = tmp('pullfleet-edge-');
      for (const [file, text] of fleet.renderFiles()) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      return dir;
    };
    const start = edge(undefined, true);
    const step1 = edge(start, false, DeliveryModel.BASIC);
    const step2 = edge(step1, false, DeliveryModel.BASIC);
    expect(planFleet(readSide(start), readSide(step1)).runtimeDeletions).toStrictEqual([]);
    const plan2 = planFleet(readSide(step1), readSide(step2));
    expect(plan2.runtimeDeletions.map((d) => [d.id, d.text])).toStrictEqual(
      ['s1', 's2'].map((s) => [
        `hub/${s}/argocd-agent/openshift-gitops/${s}-web`,
        `ApplicationSet web's app ${s}-web no longer routed to the agent (destination.name "${s}" changed): the argocd-principal tells the agent on spoke ${s} to delete its copy at runtime, if the agent still runs there (prunes its workload: resources finalizer)`,
      ]),
    );
  });
});

describe('a spoke joins an agent group that has already moved', () => {
  test('GIVEN a basic spoke that only gets a basic ApplicationSet WHEN it joins the agent group with an ApplicationSet THEN synth takes it in one step, nothing else changes, plan deletes nothing', () => {
    const before = commit({ tools: true, e3: 'basic' });
    const joined = commit({ tools: true, e3: 'agent' }, before.dir);
    expect(untouched(joined.files, ['e3'])).toStrictEqual(untouched(before.files, ['e3']));
    expect(spokesOf(joined.files).get('e3')).toMatchObject({
      deliveryModel: 'agent-managed',
      works: [{ name: 'argocd-e3-monitoring', deleteOption: 'Foreground' }],
    });
    for (const s of ['e1', 'e2', 'p1', 'p2'])
      expect(spokesOf(joined.files).get(s)).toStrictEqual(spokesOf(before.files).get(s));
    // The agent ApplicationSet tools now reaches e3 through its agent; monitoring keeps its work there.
    const tools = parseYaml(
      joined.files
        .get('hub/hub/application-sets.yaml')!
        .split('\n---\n')
        .find((d) => d.includes('name: tools\n'))!,
    );
    expect(tools.spec.template.spec.destination).toStrictEqual({ name: '{{name}}', namespace: 'tools' });
    const plan = planFleet(readSide(before.dir), readSide(joined.dir));
    expect([plan.spokeDeletions, plan.runtimeDeletions, plan.transitions]).toStrictEqual([[], [], []]);
  });

  test('GIVEN a new spoke WHEN it is declared in the agent group THEN synth takes it, and the group stays as it was', () => {
    const before = commit({ tools: true });
    const joined = commit({ tools: true, e3: 'agent' }, before.dir);
    expect(untouched(joined.files, ['e3'])).toStrictEqual(untouched(before.files, ['e3']));
    expect(spokesOf(joined.files).get('e3')).toMatchObject({ deliveryModel: 'agent-managed' });
  });

  test('applicationSetDecision: a spoke still basic holds an agent ApplicationSet back only when its work delivered the app there', () => {
    const stepOne: TransitionDecision = {
      model: DeliveryModel.BASIC,
      deleteOption: DeleteOption.ORPHAN,
      step: 1,
      movingTo: DeliveryModel.AGENT_MANAGED,
    };
    const moved: TransitionDecision = {
      model: DeliveryModel.AGENT_MANAGED,
      deleteOption: DeleteOption.FOREGROUND,
      step: 0,
    };
    const previous = (works: string[]): PlanStateSpoke => ({
      name: 's3',
      labels: {},
      clusterSets: [],
      deliveryModel: DeliveryModel.BASIC,
      works: works.map((name) => ({ name, deleteOption: DeleteOption.FOREGROUND })),
    });
    // new to the ApplicationSet: nothing to hand over, so it counts as moved
    const fresh = applicationSetDecision(
      DeliveryModel.AGENT_MANAGED,
      stepOne,
      previous(['argocd-web-s3']),
      'argocd-s3-tools',
    );
    expect(
      applicationSetStep(DeliveryModel.AGENT_MANAGED, [
        { name: 's1', decision: moved },
        { name: 's3', decision: fresh },
      ]).problem,
    ).toBeUndefined();
    // delivered by a work before: the ApplicationSet waits for it, and spokes already moved are a problem
    const held = applicationSetDecision(
      DeliveryModel.AGENT_MANAGED,
      stepOne,
      previous(['argocd-s3-tools']),
      'argocd-s3-tools',
    );
    expect(
      applicationSetStep(DeliveryModel.AGENT_MANAGED, [
        { name: 's1', decision: moved },
        { name: 's3', decision: held },
      ]).problem,
    ).toContain('move them together');
  });
});

describe('synth judges a move against the plan state it is given', () => {
  test('GIVEN step 1 committed WHEN synthesized into a fresh folder THEN without --plan-state it warns and renders the final state; with --plan-state (folder or file) it reproduces the committed dist/ byte for byte', () => {
    const root = tmp('pullfleet-judged-');
    const dist = path.join(root, 'dist');
    expect(binary(['synth', '-o', dist, '--app', APP], {}).code).toBe(0);
    const before = path.join(root, 'before');
    fs.cpSync(dist, before, { recursive: true });
    expect(binary(['synth', '-o', dist, '--app', APP], { back: 'move' }).code).toBe(0);
    const tree = (dir: string) =>
      Object.fromEntries(
        (fs.readdirSync(dir, { recursive: true }) as string[])
          .filter((f) => fs.statSync(path.join(dir, f)).isFile())
          .sort()
          .map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]),
      );
    expect(tree(dist)['hub/hub/works/e1.yaml']).toContain('propagationPolicy: Orphan');

    const unjudged = binary(['synth', '-o', path.join(root, 'fresh'), '--app', APP], { back: 'move' });
    expect(unjudged.code).toBe(0);
    expect(unjudged.err).toContain('spoke "e1" declares moveTo(...), but synth read no plan state of hub "hub"');
    expect(unjudged.err).toContain('pullfleet synth --plan-state dist');
    expect(tree(path.join(root, 'fresh'))).not.toStrictEqual(tree(dist));

    for (const planState of [before, path.join(before, 'hub', 'plan-state.json')]) {
      const out = path.join(root, `judged-${path.basename(planState)}`);
      const judged = binary(['synth', '-o', out, '--plan-state', planState, '--app', APP], { back: 'move' });
      expect(judged.code).toBe(0);
      expect(judged.err).not.toContain('read no plan state');
      expect(tree(out)).toStrictEqual(tree(dist));
    }
    const missing = binary(
      ['synth', '-o', path.join(root, 'never'), '--plan-state', path.join(root, 'nope'), '--app', APP],
      { back: 'move' },
    );
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`--plan-state ${path.join(root, 'nope')} does not exist`);
    expect(fs.existsSync(path.join(root, 'never'))).toBe(false);
  }, 300_000);

  test('the CI check init writes passes on each commit of a move and on a commit that leaves dist/ alone, and fails on a dist/ edited by hand', () => {
    const repo = tmp('pullfleet-ci-');
    const runnerTemp = tmp('pullfleet-runner-');
    fs.symlinkSync(path.resolve('node_modules'), path.join(repo, 'node_modules'));
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules\n');
    fs.writeFileSync(
      path.join(repo, 'cdk8s.yaml'),
      `language: typescript\napp: ${process.execPath} --import tsx ${path.resolve('test/fixtures/mixed-move-fleet.ts')}\noutput: dist\n`,
    );
    const git = (...args: string[]) => {
      const r = spawnSync(
        'git',
        ['-c', 'user.name=ci', '-c', 'user.email=ci@example.com', '-c', 'commit.gpgsign=false', ...args],
        { cwd: repo, encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    };
    const workflow = parseYaml(renderWorkflow()) as {
      jobs: { fleet: { steps: Array<{ name?: string; run?: string }> } };
    };
    const check = workflow.jobs.fleet.steps
      .find((s) => s.name === 'dist/ is what synth produces')!
      .run!.replaceAll('npx pullfleet', `${process.execPath} ${path.resolve('bin/pullfleet.js')}`);
    const runCheck = (spec: MixedSpec) => {
      fs.rmSync(runnerTemp, { recursive: true, force: true });
      fs.mkdirSync(runnerTemp);
      return spawnSync('bash', ['-e', '-c', check], {
        cwd: repo,
        encoding: 'utf8',
        timeout: 180_000,
        env: { ...process.env, RUNNER_TEMP: runnerTemp, PULLFLEET_TEST_MIXED: JSON.stringify(spec) },
      });
    };
    const synth = (spec: MixedSpec) =>
      expect(
        spawnSync(process.execPath, [path.resolve('bin/pullfleet.js'), 'synth'], {
          cwd: repo,
          encoding: 'utf8',
          env: { ...process.env, PULLFLEET_TEST_MIXED: JSON.stringify(spec) },
        }).status,
      ).toBe(0);

    git('init', '-q');
    synth({});
    git('add', '-A');
    git('commit', '-q', '-m', 'fleet');
    expect(runCheck({}).status).toBe(0);
    synth({ back: 'move' });
    git('add', '-A');
    git('commit', '-q', '-m', 'e1 back to basic: step 1');
    const step1 = runCheck({ back: 'move' });
    expect([step1.status, step1.stdout]).toStrictEqual([0, '']);
    // a commit that leaves dist/ alone (the hub is still applying step 1)
    fs.writeFileSync(path.join(repo, 'README.md'), 'fleet\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'readme');
    expect(runCheck({ back: 'move' }).status).toBe(0);
    synth({ back: 'move' });
    git('add', '-A');
    git('commit', '-q', '-m', 'e1 back to basic: step 2');
    expect(runCheck({ back: 'move' }).status).toBe(0);
    fs.appendFileSync(path.join(repo, 'dist', 'hub', 'hub', 'works', 'p1.yaml'), '# edited\n');
    git('commit', '-q', '-am', 'edit by hand');
    const edited = runCheck({ back: 'move' });
    expect(edited.status).toBe(1);
    expect(edited.stdout).toContain('dist/ differs from a fresh synth');
  }, 600_000);
});
