/**
 * `npm run bench:plan`: plans a change on generated fleets (10 apps delivered statically to every spoke
 * plus two ApplicationSets over placements), end to end as `pullfleet plan` does after its synth: read
 * the previous output folder and the new one (YAML and plan state), compare, render the text.
 * The change removes every 10th spoke (direct and runtime deletions) and moves every 7th spoke to
 * another region (runtime deletions of the regional ApplicationSet). Each size runs in its own child
 * process so its peak RSS is its own.
 *
 *   npm run bench:plan            # 100 and 1,000 spokes
 *   npm run bench:plan -- 5000    # chosen sizes
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppSource, ClusterSet, Fleet, Hub, Placement, PullApplicationSet, Spoke } from '../src/constructs/index.js';
import { readSide } from '../src/cli/commands/plan.js';
import { formatPlan, planFleet } from '../src/model/plan/plan.js';
import { addStaticApps, BENCH_GRANTS } from './fleets.js';

const APPS_PER_SPOKE = 10;
const DEFAULT_SIZES = [100, 1000];

function generateFleet(spokes: number, outdir: string, changed: boolean): Fleet {
  const fleet = new Fleet({ outdir });
  const hub = new Hub(fleet, 'hub');
  const prod = new ClusterSet(hub, 'prod');
  const regions = ['us-east', 'us-west', 'eu-central', 'ap-south'];
  const all: Spoke[] = [];
  for (let i = 0; i < spokes; i++) {
    if (changed && i % 10 === 0) continue;
    const region = changed && i % 7 === 0 ? 'eu-west' : regions[i % regions.length];
    all.push(
      new Spoke(hub, `cluster-${String(i).padStart(5, '0')}`, { clusterSet: prod, labels: { region, env: 'prod' } }),
    );
  }
  const everywhere = new Placement(hub, 'all-prod', { clusterSets: [prod] });
  const east = new Placement(hub, 'us-east', { clusterSets: [prod], predicates: [{ labels: { region: 'us-east' } }] });
  addStaticApps(hub, all, APPS_PER_SPOKE);
  for (const [name, placement] of [
    ['dynamic', everywhere],
    ['regional', east],
  ] as const) {
    new PullApplicationSet(hub, name, {
      source: AppSource.helm({ repoURL: 'https://charts.example.com', chart: name, targetRevision: '1.0.0' }),
      destinationNamespace: name,
      resources: BENCH_GRANTS,
      placement,
    });
  }
  return fleet;
}

interface Measurement {
  spokes: number;
  objects: number;
  spokeDeletions: number;
  runtimeDeletions: number;
  changed: number;
  readSeconds: number;
  planSeconds: number;
  peakRssMiB: number;
}

function child(spokes: number): void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-bench-plan-'));
  try {
    generateFleet(spokes, path.join(root, 'old'), false).synth();
    generateFleet(spokes, path.join(root, 'new'), true).synth();
    const start = process.hrtime.bigint();
    const before = readSide(path.join(root, 'old'));
    const after = readSide(path.join(root, 'new'));
    const read = process.hrtime.bigint();
    const plan = planFleet(before, after);
    const text = formatPlan(plan);
    const end = process.hrtime.bigint();
    if (!text.includes('RUNTIME DELETIONS')) throw new Error('the plan lost its runtime deletions');
    const result: Measurement = {
      spokes,
      objects: before.objects.length + after.objects.length,
      spokeDeletions: plan.spokeDeletions.length,
      runtimeDeletions: plan.runtimeDeletions.length,
      changed: plan.changed.length,
      readSeconds: Number(read - start) / 1e9,
      planSeconds: Number(end - read) / 1e9,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function parent(sizes: number[]): void {
  const self = fileURLToPath(import.meta.url);
  const rows: Measurement[] = [];
  for (const spokes of sizes) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', self, '--child', String(spokes)], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    if (run.status !== 0) {
      process.stderr.write(run.stderr);
      throw new Error(`bench child for ${spokes} spokes failed (exit ${run.status})`);
    }
    rows.push(JSON.parse(run.stdout.trim().split('\n').pop()!) as Measurement);
    process.stderr.write(`  ${spokes} spokes done\n`);
  }
  const lines = [
    '| spokes | objects read (both sides) | deletions on spokes | runtime deletions | changed | read s | plan + text s | peak RSS MiB |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.spokes} | ${r.objects} | ${r.spokeDeletions} | ${r.runtimeDeletions} | ${r.changed} | ${r.readSeconds.toFixed(2)} | ${r.planSeconds.toFixed(2)} | ${Math.round(r.peakRssMiB)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(
    `node ${process.version}, ${os.cpus().length} cpu(s); read s = parse both output folders; the synth plan runs first is not included (npm run bench)\n`,
  );
}

const args = process.argv.slice(2);
if (args[0] === '--child') child(Number(args[1]));
else parent(args.length ? args.map(Number) : DEFAULT_SIZES);
