/**
 * `npm run bench`: synthesizes generated fleets (10, 100, 1,000, 5,000 spokes; 10 apps on every spoke)
 * end to end (build the construct tree, validate every object and every ManifestWork manifest against its
 * schema and the Kubernetes rules, render, write YAML) and prints objects, wall time, CPU time, objects per
 * second and peak memory, then where the time went (the phases `pullfleet synth --verbose` shows). Each size
 * runs in its own child process so its peak RSS is its own.
 *
 * The output goes into .tmp/ of the repository (ignored by git), on the file system of the project, as
 * `pullfleet synth` writes its staging folder beside dist/; PULLFLEET_BENCH_DIR chooses another folder (on
 * the shared machines, creating thousands of files costs up to ten times more in some folders, /tmp among them).
 *
 * The mixed fleet (`mixed`) splits 1,000 spokes across the three delivery models (basic, agent-managed,
 * agent-autonomous; two GitOpsClusters) with the same 10 apps on every spoke.
 *
 *   npm run bench                 # all sizes, then the mixed fleet
 *   npm run bench -- 10 100       # chosen sizes
 *   npm run bench -- mixed        # the mixed fleet only (mixed:<spokes> for another size)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiObject } from 'cdk8s';
import { TIMINGS_FILE_ENV, type SynthTimings } from '../src/constructs/fleet.js';
import {
  AppSource,
  ClusterSet,
  DeliveryModel,
  Fleet,
  GitOpsCluster,
  Hub,
  Placement,
  PullApplicationSet,
  Spoke,
} from '../src/constructs/index.js';
import { addStaticApps, BENCH_GRANTS } from './fleets.js';

const APPS_PER_SPOKE = 10;
const DEFAULT_SIZES = ['10', '100', '1000', '5000', 'mixed:1000'];

/**
 * A fleet of `spokes` spokes in 4 regions (every tenth one OpenShift) with 10 apps delivered statically
 * to every spoke (a hub Application and a ManifestWork each), plus one ApplicationSet over a Placement.
 */
export function generateFleet(spokes: number, outdir: string): Fleet {
  const fleet = new Fleet({ outdir });
  const hub = new Hub(fleet, 'hub');
  const prod = new ClusterSet(hub, 'prod');
  const regions = ['us-east', 'us-west', 'eu-central', 'ap-south'];
  const all: Spoke[] = [];
  for (let i = 0; i < spokes; i++) {
    all.push(
      new Spoke(hub, `cluster-${String(i).padStart(5, '0')}`, {
        clusterSet: prod,
        labels: { region: regions[i % regions.length], env: 'prod' },
        openshift: i % 10 === 0,
      }),
    );
  }
  const everywhere = new Placement(hub, 'all-prod', { clusterSets: [prod] });
  addStaticApps(hub, all, APPS_PER_SPOKE);
  new PullApplicationSet(hub, 'dynamic', {
    source: AppSource.helm({ repoURL: 'https://charts.example.com', chart: 'dynamic', targetRevision: '1.0.0' }),
    destinationNamespace: 'dynamic',
    resources: BENCH_GRANTS,
    placement: everywhere,
  });
  return fleet;
}

/**
 * `spokes` spokes split evenly across the three delivery models: cluster sets `basic`, `managed` and
 * `autonomous`, agent-managed and agent-autonomous GitOpsClusters on the last two, 10 static apps on
 * every spoke (a hub Application and work, a hub Application routed by destination, or an Application in
 * the spoke's own folder).
 */
export function generateMixedFleet(spokes: number, outdir: string): Fleet {
  const fleet = new Fleet({ outdir });
  const hub = new Hub(fleet, 'hub');
  const sets = {
    basic: new ClusterSet(hub, 'basic'),
    managed: new ClusterSet(hub, 'managed'),
    autonomous: new ClusterSet(hub, 'autonomous'),
  };
  const order = ['basic', 'managed', 'autonomous'] as const;
  const all: Spoke[] = [];
  for (let i = 0; i < spokes; i++)
    all.push(
      new Spoke(hub, `cluster-${String(i).padStart(5, '0')}`, {
        clusterSet: sets[order[i % 3]],
        labels: { env: 'prod' },
      }),
    );
  GitOpsCluster.ocm(hub, 'managed', {
    placement: new Placement(hub, 'managed', { clusterSets: [sets.managed] }),
    model: DeliveryModel.AGENT_MANAGED,
  });
  GitOpsCluster.ocm(hub, 'autonomous', {
    placement: new Placement(hub, 'autonomous', { clusterSets: [sets.autonomous] }),
    model: DeliveryModel.AGENT_AUTONOMOUS,
    spokeFolderRepository: { repoURL: 'https://git.example.com/platform/fleet.git' },
  });
  addStaticApps(hub, all, APPS_PER_SPOKE);
  return fleet;
}

/** Where the time of the fleet's synth went, in milliseconds (see SynthTimings in src/constructs/fleet.ts). */
interface Phases {
  start: number;
  tree: number;
  render: number;
  json: number;
  validate: number;
  yaml: number;
  write: number;
}

interface Measurement {
  fleet: string;
  spokes: number;
  objects: number;
  works: number;
  seconds: number;
  processSeconds: number;
  /** CPU time of the child process (user and system), in seconds. */
  cpuSeconds: number;
  peakRssMiB: number;
  phases?: Phases;
}

/** Where the benchmark writes its output: $PULLFLEET_BENCH_DIR, else .tmp/ of the repository. */
function benchDir(): string {
  const dir = process.env.PULLFLEET_BENCH_DIR || path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.tmp');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** `1000` → the static fleet of 1,000 spokes; `mixed:1000` (or `mixed`) → the mixed fleet. */
function parseSize(arg: string): { mixed: boolean; spokes: number } {
  if (arg === 'mixed') return { mixed: true, spokes: 1000 };
  if (arg.startsWith('mixed:')) return { mixed: true, spokes: Number(arg.slice(6)) };
  return { mixed: false, spokes: Number(arg) };
}

function child(size: string): void {
  const { mixed, spokes } = parseSize(size);
  const root = fs.mkdtempSync(path.join(benchDir(), 'pullfleet-bench-'));
  const outdir = path.join(root, 'out');
  // The fleet writes where its time went here (as for `pullfleet synth --verbose`).
  const timingsFile = path.join(root, 'timings.json');
  process.env[TIMINGS_FILE_ENV] = timingsFile;
  try {
    const start = process.hrtime.bigint();
    const fleet = mixed ? generateMixedFleet(spokes, outdir) : generateFleet(spokes, outdir);
    const built = process.hrtime.bigint();
    fleet.synth();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage();
    const peakRssMiB = process.resourceUsage().maxRSS / 1024;
    const objects = fleet.node.findAll().filter((c) => c instanceof ApiObject);
    const timings = JSON.parse(fs.readFileSync(timingsFile, 'utf8')) as SynthTimings;
    const result: Measurement = {
      fleet: mixed ? 'mixed (1/3 each model)' : 'static',
      spokes,
      objects: objects.length,
      works: objects.filter((o) => o.kind === 'ManifestWork').length,
      seconds,
      processSeconds: 0,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      peakRssMiB,
      phases: {
        start: timings.start,
        tree: Number(built - start) / 1e6,
        render: timings.render,
        json: timings.json,
        validate: timings.validate,
        yaml: timings.yaml,
        write: timings.write,
      },
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function parent(sizes: string[]): void {
  const self = fileURLToPath(import.meta.url);
  const rows: Measurement[] = [];
  for (const spokes of sizes) {
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, ['--import', 'tsx', self, '--child', String(spokes)], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    const processSeconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (run.status !== 0) {
      process.stderr.write(run.stderr);
      throw new Error(`bench child for ${spokes} spokes failed (exit ${run.status})`);
    }
    const m = JSON.parse(run.stdout.trim().split('\n').pop()!) as Measurement;
    m.processSeconds = processSeconds;
    rows.push(m);
    process.stderr.write(`  ${spokes} spokes done in ${processSeconds.toFixed(1)} s\n`);
  }
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const lines = [
    `| fleet | spokes | apps | objects | ManifestWorks | synth s | process s | CPU s | objects/s | peak RSS MiB |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...rows.map(
      (r) =>
        `| ${r.fleet} | ${r.spokes} | ${r.spokes * APPS_PER_SPOKE} | ${r.objects} | ${r.works} | ${r.seconds.toFixed(2)} | ${r.processSeconds.toFixed(2)} | ${r.cpuSeconds.toFixed(2)} | ${Math.round(r.objects / r.seconds)} | ${Math.round(r.peakRssMiB)} |`,
    ),
    '',
    `| fleet | spokes | start s | construct tree s | render s | JSON s | validation s | YAML s | write s |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...rows
      .filter((r) => r.phases)
      .map(({ fleet, spokes, phases: p }) => [
        fleet,
        spokes,
        s(p!.start),
        s(p!.tree),
        s(p!.render),
        s(p!.json),
        s(p!.validate),
        s(p!.yaml),
        s(p!.write),
      ])
      .map((cells) => `| ${cells.join(' | ')} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(
    `node ${process.version}, ${os.cpus().length} cpu(s), load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at the end; synth s = build + render + validate + write; process s adds node and tsx start-up; ` +
      `written into ${benchDir()}\n`,
  );
}

// Run only as a script (the generators above can be imported).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args[0] === '--child') child(args[1]);
  else parent(args.length ? args : DEFAULT_SIZES);
}
