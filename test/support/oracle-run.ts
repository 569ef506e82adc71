/**
 * One case of the plan oracle, step by step (test/oracle/): each step renders the fleet with synth into a
 * folder of its own (reading the previous one, as `pullfleet synth` does), runs `pullfleet plan` in process
 * through the same code path as `pullfleet plan --output json` (runPlan with the synth injected, against the
 * previous folder), then lets the real world apply the new output (test/support/oracle-world.ts) and compares
 * the deletions it observed with the ones plan listed. A step synth refuses must change nothing: no file
 * written, plan refusing too, nothing written or deleted on the servers.
 *
 * On a mismatch, {@link shrinkCase} drops edits and simplifies the fleet while the case still fails, and
 * {@link caseSource} prints the smallest failing case ready to paste into test/oracle/cases.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readSide, runPlan } from '../../src/cli/commands/plan.js';
import {
  applyEdit,
  buildOracleFleet,
  caseSource,
  describeEdit,
  ORACLE_HUB,
  rng,
  type OracleCase,
  type OracleEdit,
  type OracleFleet,
  type OracleNames,
} from './oracle-fleet.js';
import { OracleSession, type OracleFaults, type OracleWorld } from './oracle-world.js';

export interface OracleMismatch {
  /** 0 is the first synth; step n applies edit n - 1. */
  readonly step: number;
  readonly edit?: OracleEdit;
  readonly kind:
    | 'unplanned deletion'
    | 'planned deletion did not happen'
    | 'waves invariant'
    | 'refused step changed something'
    | 'plan and synth disagree'
    | 'did not settle'
    | 'refusal not foretold'
    | 'forbidden request';
  readonly detail: string;
}

export interface OracleStep {
  readonly step: number;
  readonly edit?: OracleEdit;
  readonly outcome: 'applied' | 'refused' | 'skipped';
  readonly planned: readonly string[];
  readonly observed: readonly string[];
  readonly orphaned: readonly string[];
  readonly ms: number;
  /**
   * RollingSync syncs out of step order that released Argo CD makes by itself (the world's `upstreamOrder`):
   * noted, not a mismatch.
   * @default - none
   */
  readonly upstreamOrder?: readonly string[];
  /** The first line of synth's refusal. */
  readonly refusal?: string;
}

export interface OracleResult {
  readonly mismatches: OracleMismatch[];
  readonly steps: OracleStep[];
}

let sessions = 0;

/** Plan's JSON, as far as the oracle reads it. */
export interface PlanDeletions {
  readonly spokeDeletions: Array<{ id: string; runtime?: unknown }>;
  readonly runtimeDeletions: Array<{ id: string }>;
}

export interface OracleRunOptions {
  /**
   * Changes what plan says before it is compared (the oracle's own tests: a plan that misses deletions must
   * fail the case).
   * @default - plan's JSON as it is
   */
  readonly planFilter?: (plan: PlanDeletions) => PlanDeletions;
  /**
   * Faults given to the played programs (the oracle's own tests: the invariants must catch them).
   * @default - none
   */
  readonly faults?: OracleFaults;
}

/** Plan's deletion ids from its JSON (`spokeDeletions` and `runtimeDeletions`). */
function plannedIds(stdout: string, filter: OracleRunOptions['planFilter']): string[] {
  const parsed = JSON.parse(stdout) as PlanDeletions;
  const json = filter ? filter(parsed) : parsed;
  return [...json.spokeDeletions.map((d) => d.id), ...json.runtimeDeletions.map((d) => d.id)].sort();
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

/** Runs `c` against the world; every mismatch found, and what each step did. */
export async function runOracleCase(
  world: OracleWorld,
  c: OracleCase,
  options: OracleRunOptions = {},
): Promise<OracleResult> {
  const session = new OracleSession(world, `${++sessions}`, rng((c.seed ?? 0) ^ 0x5eed), options.faults);
  const names: OracleNames = {
    argoNamespace: session.argoNamespace,
    cluster: world.cluster,
    clusterSet: (set) => `${session.argoNamespace}-${set}`,
  };
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-oracle-'));
  const mismatches: OracleMismatch[] = [];
  const steps: OracleStep[] = [];
  await session.setUp();
  try {
    let fleet: OracleFleet | undefined;
    let previous: string | undefined;
    for (let step = 0; step <= c.edits.length; step++) {
      const started = Date.now();
      const edit = step === 0 ? undefined : c.edits[step - 1];
      const next = step === 0 ? c.fleet : applyEdit(fleet!, edit!);
      const at = { step, ...(edit ? { edit } : {}) };
      if (!next) {
        steps.push({ ...at, outcome: 'skipped', planned: [], observed: [], orphaned: [], ms: 0 });
        continue;
      }
      const dir = path.join(root, `step-${step}`);
      const build = (outdir: string) => {
        const built = buildOracleFleet(next, names, { outdir, ...(previous ? { previousOutput: previous } : {}) });
        built.synth();
        return built;
      };
      let refusal: string | undefined;
      let warnings: string[] = [];
      try {
        warnings = build(dir)
          .warnings()
          .map((w) => w.message);
      } catch (error) {
        refusal = String((error as Error).message ?? error);
      }
      const plan = await runPlan({
        cwd: root,
        outdir: previous ?? path.join(root, 'none'),
        format: 'json',
        firstSynth: previous === undefined,
        synth: (scratch) => {
          try {
            build(scratch);
            return { ok: true, output: '' };
          } catch (error) {
            return { ok: false, output: String((error as Error).message ?? error) };
          }
        },
      });
      if (refusal !== undefined) {
        if (step === 0) throw new Error(`${c.name}: synth refuses the first fleet: ${refusal}`);
        const written = filesUnder(dir);
        if (written.length)
          mismatches.push({
            ...at,
            kind: 'refused step changed something',
            detail: `synth wrote ${written.join(', ')}`,
          });
        if (plan.exitCode !== 1)
          mismatches.push({
            ...at,
            kind: 'plan and synth disagree',
            detail: `synth refused (${refusal.split('\n')[0]}) but plan exited ${plan.exitCode}`,
          });
        // The world is left as it was: nothing may be written or deleted.
        await session.settle(c.settleTimeoutMs);
        const seen = await session.observe();
        if (seen.deletions.length || seen.written.length)
          mismatches.push({
            ...at,
            kind: 'refused step changed something',
            detail: `deleted ${JSON.stringify(seen.deletions)}, wrote ${JSON.stringify(seen.written)}`,
          });
        steps.push({
          ...at,
          outcome: 'refused',
          planned: [],
          observed: seen.deletions,
          orphaned: seen.orphaned,
          ms: Date.now() - started,
          refusal: refusal.split('\n').find((l) => l.trim()) ?? refusal,
        });
        continue;
      }
      if (plan.exitCode !== 0) {
        mismatches.push({
          ...at,
          kind: 'plan and synth disagree',
          detail: `synth wrote the output, plan exited ${plan.exitCode}: ${plan.stderr}`,
        });
        return { mismatches, steps };
      }
      const planned = plannedIds(plan.stdout, options.planFilter);
      const side = readSide(dir);
      await session.controllerWith(next.controller);
      await session.inventory(side.objects, side.states?.get(ORACLE_HUB));
      await session.argoSync(c.argoOrder ?? 'shuffle');
      try {
        await session.settle(c.settleTimeoutMs);
      } catch (error) {
        mismatches.push({ ...at, kind: 'did not settle', detail: String((error as Error).message) });
        return { mismatches, steps };
      }
      // Every refusal by the controller's tenancy rule was foretold by synth (and so by plan).
      for (const cluster of session.refusedByTenancy())
        if (!warnings.some((w) => w.includes('no cluster set bound') && w.includes(`"${cluster}"`)))
          mismatches.push({
            ...at,
            kind: 'refusal not foretold',
            detail: `the controller refused ${cluster} (no bound cluster set contains it); synth warned: ${JSON.stringify(warnings)}`,
          });
      const seen = await session.observe();
      const observed = new Set(seen.deletions);
      for (const id of seen.deletions)
        if (!planned.includes(id)) mismatches.push({ ...at, kind: 'unplanned deletion', detail: id });
      // A delete the principal sends to an agent that no longer runs there (the move back to basic waits for
      // the agent to leave) deletes nothing: plan lists it for the case the agent still runs.
      const conditional = (id: string) => {
        const parts = id.split('/');
        return parts[2] === 'argocd-agent' && !session.agentRuns(parts[1]);
      };
      for (const id of planned)
        if (!observed.has(id) && !conditional(id))
          mismatches.push({
            ...at,
            kind: 'planned deletion did not happen',
            detail: `${id}${seen.orphaned.some((w) => id.endsWith(`/${w}`)) ? ' (the work went, its Application stayed: orphaned)' : ''}`,
          });
      for (const v of seen.violations) mismatches.push({ ...at, kind: 'waves invariant', detail: v });
      steps.push({
        ...at,
        outcome: 'applied',
        planned,
        observed: seen.deletions,
        orphaned: seen.orphaned,
        ms: Date.now() - started,
        ...(seen.upstreamOrder.length ? { upstreamOrder: seen.upstreamOrder } : {}),
      });
      fleet = next;
      previous = dir;
    }
    for (const line of session.forbidden())
      mismatches.push({ step: c.edits.length, kind: 'forbidden request', detail: line });
    return { mismatches, steps };
  } finally {
    await session.tearDown();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Candidate simplifications of a case's first fleet: one app, ApplicationSet, placement or spoke less. */
function simplerFleets(fleet: OracleFleet): OracleFleet[] {
  const out: OracleFleet[] = [];
  const edits: OracleEdit[] = [
    ...fleet.appSets.map((a): OracleEdit => ({ op: 'removeAppSet', name: a.name })),
    ...fleet.apps.map((a): OracleEdit => ({ op: 'removeApp', name: a.name })),
    ...fleet.placements.map((p): OracleEdit => ({ op: 'removePlacement', name: p.name })),
    ...fleet.spokes.map((s): OracleEdit => ({ op: 'removeSpoke', id: s.id })),
  ];
  for (const e of edits) {
    const simpler = applyEdit(fleet, e);
    if (simpler) out.push(simpler);
  }
  return out;
}

export interface ShrinkOptions {
  /** At most this many re-runs. @default 20 */
  readonly attempts?: number;
  /** Stop shrinking after this long. @default 300000 */
  readonly budgetMs?: number;
}

/**
 * The smallest case that still fails (any mismatch) under `run` (the oracle against the world): edits after
 * the first failing step cut, then each edit dropped in turn (last first), then the first fleet simplified (an
 * ApplicationSet, app, placement or spoke less), each kept while the case still fails.
 */
export async function shrinkCase(
  run: (c: OracleCase) => Promise<OracleResult>,
  c: OracleCase,
  first: OracleResult,
  options: ShrinkOptions = {},
): Promise<{ shrunk: OracleCase; result: OracleResult; runs: number }> {
  const attempts = options.attempts ?? 20;
  const deadline = Date.now() + (options.budgetMs ?? 300_000);
  let runs = 0;
  const failing = Math.min(...first.mismatches.map((m) => m.step));
  let best: OracleCase = { ...c, name: `${c.name} (shrunk)`, edits: c.edits.slice(0, Math.max(0, failing)) };
  let bestResult = first;
  const tryCase = async (candidate: OracleCase): Promise<boolean> => {
    if (runs >= attempts || Date.now() > deadline) return false;
    runs++;
    let result: OracleResult;
    try {
      result = await run(candidate);
    } catch {
      return false; // not a case of its own (synth refuses its first fleet): not smaller, only broken
    }
    if (result.mismatches.length === 0) return false;
    best = candidate;
    bestResult = result;
    return true;
  };
  if (best.edits.length !== c.edits.length && !(await tryCase(best))) best = { ...c, name: `${c.name} (shrunk)` };
  for (let i = best.edits.length - 1; i >= 0; i--) {
    const candidate = { ...best, edits: best.edits.filter((_, j) => j !== i) };
    await tryCase(candidate);
  }
  let simplified = true;
  while (simplified) {
    simplified = false;
    for (const fleet of simplerFleets(best.fleet)) {
      if (await tryCase({ ...best, fleet })) {
        simplified = true;
        break;
      }
    }
  }
  return { shrunk: best, result: bestResult, runs };
}

/** A failure report: the seed, the edit sequence, every mismatch, and the shrunk case to paste. */
export function failureReport(
  c: OracleCase,
  result: OracleResult,
  shrunk?: { shrunk: OracleCase; result: OracleResult; runs: number },
): string {
  const lines = [
    `plan oracle: ${c.name}${c.seed !== undefined ? ` (seed ${c.seed}; rerun with PULLFLEET_ORACLE_SEEDS=${c.seed})` : ''} failed`,
    'edits:',
    ...c.edits.map((e, i) => `  ${i + 1}. ${describeEdit(e)}`),
    'mismatches:',
    ...result.mismatches.map(
      (m) => `  step ${m.step}${m.edit ? ` (${describeEdit(m.edit)})` : ''}: ${m.kind}: ${m.detail}`,
    ),
  ];
  if (shrunk) {
    lines.push(
      `shrunk in ${shrunk.runs} re-runs to ${shrunk.shrunk.edits.length} edit(s); its mismatches:`,
      ...shrunk.result.mismatches.map((m) => `  step ${m.step}: ${m.kind}: ${m.detail}`),
      'paste into test/oracle/cases.ts:',
      caseSource(shrunk.shrunk),
    );
  }
  return lines.join('\n');
}

/** One line per step, for the run's summary. */
export function stepSummary(result: OracleResult): string {
  return result.steps
    .map(
      (s) =>
        `${s.step}:${s.outcome}${s.outcome === 'applied' ? `(${s.planned.length} planned/${s.observed.length} seen${s.orphaned.length ? `/${s.orphaned.length} orphaned` : ''}${s.upstreamOrder?.length ? `/${s.upstreamOrder.length} out of step order by Argo CD` : ''}, ${(s.ms / 1000).toFixed(1)} s)` : s.outcome === 'refused' ? `(${s.refusal?.slice(0, 80)})` : ''}`,
    )
    .join(' ');
}
