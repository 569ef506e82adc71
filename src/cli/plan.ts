/**
 * `pullfleet validate` and `pullfleet plan`: synthesize into a scratch folder (dist/ is never touched),
 * then report problems, or compare with the committed dist/ and list ManifestWork deletions apart.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { formatPlan, planFleet, type FleetPlan, type PlannedObject } from '../model/plan.js';
import { synthInto } from './synth.js';

/** Every YAML document under `dir`, with its path relative to `dir`. */
export function readTree(dir: string): PlannedObject[] {
  if (!fs.existsSync(dir)) return [];
  const out: PlannedObject[] = [];
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (/\.ya?ml$/.test(entry.name)) {
        for (const doc of parseAllDocuments(fs.readFileSync(path.join(dir, rel), 'utf8'))) {
          const object = doc.toJS() as PlannedObject['object'] | null;
          if (object) out.push({ file: rel, object });
        }
      }
    }
  };
  walk('');
  return out;
}

function scratch<T>(fn: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-'));
  try {
    return fn(path.join(dir, 'out'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Synthesizes into a scratch folder and compares it with `outdir`. */
export function runPlan(options: { cwd?: string; outdir?: string; app?: string } = {}): { ok: boolean; output: string; plan?: FleetPlan } {
  const cwd = options.cwd ?? process.cwd();
  return scratch((dir) => {
    const result = synthInto(dir, { cwd, app: options.app });
    if (!result.ok) return { ok: false, output: result.output };
    const plan = planFleet(readTree(path.resolve(cwd, options.outdir ?? 'dist')), readTree(dir));
    return { ok: true, output: formatPlan(plan), plan };
  });
}

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('compare dist/ with a fresh synth; ManifestWork deletions (spoke workload deletions) are listed first')
    .option('-o, --output <dir>', 'committed output folder', 'dist')
    .option('-a, --app <command>', 'command that runs the cdk8s app (default: cdk8s.yaml)')
    .option('--fail-on-deletions', 'exit 3 when the plan deletes a ManifestWork')
    .action((opts: { output: string; app?: string; failOnDeletions?: boolean }) => {
      const result = runPlan({ outdir: opts.output, app: opts.app });
      if (!result.ok) {
        process.stderr.write(result.output);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(result.output);
      if (opts.failOnDeletions && result.plan && result.plan.workDeletions.length > 0) process.exitCode = 3;
    });
}
