/**
 * `npm run bench:inventory [clusters] [page size]`: `pullfleet inventory pull` of CLUSTERS ManagedClusters
 * (default 5,000, with the status OCM writes: claims, conditions, capacity) and 6 ManagedClusterSets from
 * the in-process API double, paged lists. The pull runs as its own process (the real CLI through tsx), so
 * its wall time and peak memory (maxRSS) are the command's own, not the double's. Goal: under 10 s and
 * under 300 MiB for 5,000 clusters. A second pull checks the file is byte-identical.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeApiServer } from '../test/double/fake-apiserver.js';
import { fleetCluster, fleetSets, seedHub } from '../test/model/placement/inventory-fixtures.js';

const CLUSTERS = Number(process.argv[2] ?? 5000);
const PAGE_SIZE = Number(process.argv[3] ?? 500);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const RUNNER = `
import { register } from 'tsx/esm/api';
register();
const { main } = await import('./src/cli/main.ts');
const started = performance.now();
await main(JSON.parse(process.env.BENCH_ARGV));
process.stderr.write('BENCH ' + JSON.stringify({ ms: performance.now() - started, maxRssKiB: process.resourceUsage().maxRSS }) + '\\n');
`;

async function pull(
  args: string[],
): Promise<{ wallMs: number; commandMs: number; maxRssMiB: number; code: number; out: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--input-type=module', '-e', RUNNER], {
    cwd: root,
    env: { ...process.env, BENCH_ARGV: JSON.stringify(['node', 'pullfleet', ...args]) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  const wallMs = performance.now() - started;
  const line = err.split('\n').find((l) => l.startsWith('BENCH '));
  if (!line || code !== 0) throw new Error(`pull failed (exit ${code}):\n${err}`);
  const stats = JSON.parse(line.slice(6)) as { ms: number; maxRssKiB: number };
  return { wallMs, commandMs: stats.ms, maxRssMiB: stats.maxRssKiB / 1024, code, out };
}

const server = await startFakeApiServer();
const dir = mkdtempSync(join(tmpdir(), 'pullfleet-bench-inventory-'));
try {
  const seedStart = performance.now();
  seedHub(
    server.store,
    Array.from({ length: CLUSTERS }, (_, i) => fleetCluster(i)),
    fleetSets(),
  );
  console.log(
    `inventory pull benchmark: ${CLUSTERS} ManagedClusters, 6 ManagedClusterSets, page size ${PAGE_SIZE} (double seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s)`,
  );
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  const a = join(dir, 'a.yaml');
  const b = join(dir, 'b.yaml');
  const first = await pull([
    'inventory',
    'pull',
    '--kubeconfig',
    kubeconfig,
    '--hub',
    'hub',
    '-o',
    a,
    '--page-size',
    String(PAGE_SIZE),
  ]);
  const lists = server.requestCount({ verb: 'list', resource: 'managedclusters' });
  const second = await pull([
    'inventory',
    'pull',
    '--kubeconfig',
    kubeconfig,
    '--hub',
    'hub',
    '-o',
    b,
    '--page-size',
    String(PAGE_SIZE),
  ]);
  const identical = readFileSync(a, 'utf8') === readFileSync(b, 'utf8');
  console.log(
    `pull: ${(first.commandMs / 1000).toFixed(2)} s in the command, ${(first.wallMs / 1000).toFixed(2)} s with process start-up; peak memory (maxRSS) ${first.maxRssMiB.toFixed(0)} MiB`,
  );
  console.log(
    `second pull: ${(second.commandMs / 1000).toFixed(2)} s, ${second.maxRssMiB.toFixed(0)} MiB; files byte-identical: ${identical}`,
  );
  console.log(`${lists} list requests for ManagedClusters; file ${(statSync(a).size / 1024).toFixed(0)} KiB`);
  const ok = first.wallMs < 10_000 && first.maxRssMiB < 300 && identical;
  console.log(`goal (under 10 s and 300 MiB, byte-identical): ${ok ? 'met' : 'NOT met'}`);
  if (!ok) process.exitCode = 1;
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
