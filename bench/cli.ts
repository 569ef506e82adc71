/**
 * `npm run bench:cli [-- <runs>] [--no-pack | --packed <folder>]`: how long the `pullfleet` binary takes to
 * start, as a user runs it, in the checkout (bin/pullfleet.js running src/ through tsx) and as installed from
 * the packed package (bin/pullfleet.js running lib/). Each command runs RUNS times (default 10, after one
 * warm-up run) in a process of its own; the table shows the fastest and the median wall time:
 *
 * - `pullfleet --version`;
 * - `pullfleet status` against a small hub on the in-process API double (one pull ApplicationSet whose
 *   FleetReport has 5 clusters, plus their hub Applications): start-up plus five list requests;
 * - for where start-up goes: node alone, and node importing @kubernetes/client-node natively and through
 *   tsx's hooks (as it would be in the checkout if bin/pullfleet.js did not load it first).
 *
 * The packed package is built (`npm run build`, which rewrites lib/), packed and installed into a temporary
 * folder as scripts/pack-smoke.sh does; `--packed <folder>` reuses a folder where it is installed
 * (`<folder>/node_modules/pullfleet`), `--no-pack` leaves it out. Goal: `status` against a small hub under 1 s
 * on a quiet machine, in the checkout and installed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KubeObj } from '../test/double/fake-apiserver.js';
import { applicationSet, decision, hubApp, work } from '../test/model/report/fixtures.js';
import { computeFleetReport } from '../src/model/report/report.js';
import { iso, percentile, startBenchApiServer } from './support.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const RUNS = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 10);
const packedAt = args.includes('--packed') ? args[args.indexOf('--packed') + 1] : undefined;
const pack = !args.includes('--no-pack') && packedAt === undefined;

/** Wall time of one run of `node <argv>` in ms; fails on a non-zero exit. */
async function runOnce(argv: readonly string[], cwd: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, argv, {
    cwd,
    env: { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (chunk) => (err += String(chunk)));
  const code = await new Promise<number>((resolve) => child.on('close', (status) => resolve(status ?? 1)));
  if (code !== 0) throw new Error(`node ${argv.join(' ')} exited ${code}:\n${err}`);
  return performance.now() - started;
}

interface Row {
  readonly what: string;
  readonly minMs: number;
  readonly medianMs: number;
}

/** One warm-up run, then RUNS timed ones. */
async function measure(what: string, argv: readonly string[], cwd = root): Promise<Row> {
  await runOnce(argv, cwd);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await runOnce(argv, cwd));
  const row = { what, minMs: Math.min(...times), medianMs: percentile(times, 50) };
  console.log(`${what}: fastest ${row.minMs.toFixed(0)} ms, median ${row.medianMs.toFixed(0)} ms`);
  return row;
}

/** Builds and packs pullfleet, and installs the tarball into a new folder under `dir`; returns the installed bin. */
function installPacked(dir: string): string {
  const npm = (npmArgs: string[], cwd: string) =>
    execFileSync('npm', npmArgs, {
      cwd,
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
      env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' },
    });
  npm(['run', 'build', '--silent'], root);
  const tarball = join(
    dir,
    npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], root).trim().split('\n').pop()!,
  );
  const project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), '{ "name": "bench-cli", "private": true, "type": "module" }\n');
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], project);
  return join(project, 'node_modules', 'pullfleet', 'bin', 'pullfleet.js');
}

const server = await startBenchApiServer();
const dir = mkdtempSync(join(tmpdir(), 'pullfleet-bench-cli-'));
try {
  // A small hub: one pull ApplicationSet whose report has 5 healthy clusters, and their hub Applications.
  const clusters = ['east', 'west', 'north', 'south', 'central'];
  const fresh = { health: 'Healthy', sync: 'Synced', revision: 'abc1234', reconciledAt: iso(new Date()) };
  const report = computeFleetReport({
    applicationSet: applicationSet(),
    decisions: [decision('d', clusters)],
    applications: clusters.map((cluster) => hubApp(cluster)),
    works: clusters.map((cluster) => work(cluster, fresh)),
    now: new Date(),
    staleAfterSeconds: 0,
  })!.report;
  const stored = server.store.create<KubeObj>({ ...report, status: undefined });
  server.store.updateStatus({ ...stored, status: report.status });
  server.store.create(applicationSet());
  for (const cluster of clusters) {
    const app = hubApp(cluster);
    server.store.create({
      ...app,
      spec: { ...app.spec, source: { repoURL: 'https://git.example/apps', path: 'web' } },
    });
  }
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());

  console.log(
    `pullfleet start-up benchmark: ${RUNS} runs each after a warm-up, node ${process.version}, load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );
  const rows: Row[] = [];
  const nodeModule = (code: string) => ['--input-type=module', '-e', code];
  rows.push(await measure('node alone', ['-e', '0']));
  rows.push(
    await measure('node importing @kubernetes/client-node', nodeModule("await import('@kubernetes/client-node');")),
  );
  rows.push(
    await measure(
      'node importing @kubernetes/client-node through tsx hooks',
      nodeModule(
        "const { register } = await import('tsx/esm/api'); register(); await import('@kubernetes/client-node');",
      ),
    ),
  );
  const bin = join(root, 'bin', 'pullfleet.js');
  rows.push(await measure('checkout: pullfleet --version', [bin, '--version']));
  rows.push(await measure('checkout: pullfleet status (small hub)', [bin, 'status', '--kubeconfig', kubeconfig]));
  const installed = packedAt
    ? join(packedAt, 'node_modules', 'pullfleet', 'bin', 'pullfleet.js')
    : pack
      ? installPacked(dir)
      : undefined;
  if (installed) {
    rows.push(await measure('packed: pullfleet --version', [installed, '--version'], dir));
    rows.push(
      await measure('packed: pullfleet status (small hub)', [installed, 'status', '--kubeconfig', kubeconfig], dir),
    );
  }
  console.log(`\n| command | fastest ms | median ms |\n|---|---:|---:|`);
  for (const row of rows) console.log(`| ${row.what} | ${row.minMs.toFixed(0)} | ${row.medianMs.toFixed(0)} |`);
  const status = rows.filter((row) => row.what.includes('status'));
  const ok = status.every((row) => row.medianMs < 1000);
  console.log(
    `\ngoal (status against a small hub under 1 s, median): ${ok ? 'met' : 'NOT met'} (load average ${loadavg()[0].toFixed(1)})`,
  );
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
