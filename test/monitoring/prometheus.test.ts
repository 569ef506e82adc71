/**
 * A real Prometheus scrapes the shipped controller and evaluates the alerts ControllerInstall renders.
 *
 * A kube-apiserver and etcd are started for this file alone (KUBEBUILDER_ASSETS, as `npm run test:envtest`
 * does), the controller runs as it ships (test/support/shipped-controller.ts: its own process through
 * bin/pullfleet-controller.js, the install's ServiceAccount and RBAC) with `--bind-address=127.0.0.1`, and
 * Debian's `prometheus` scrapes it every second with the install's PrometheusRule as its rules file. The
 * rules are the rendered ones with every `for:` cut to 2 s, so an alert fires within seconds of its
 * condition (the durations themselves are covered by promtool, alerts.test.ts). The conditions are caused
 * through the Lease: another holder keeps it (no leader), it goes away (the controller leads), another
 * holder takes it (the controller loses it and exits: down).
 *
 * Without prometheus or KUBEBUILDER_ASSETS the tests skip; the CI stage "monitoring" sets
 * PULLFLEET_MONITORING_REQUIRED=1, which turns that into a failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { ENVTEST_SKIP_MESSAGE, freePort, startEnvtest, type Envtest } from '../support/envtest.js';
import { installCrds, loadKubeConfig } from '../support/envtest-cluster.js';
import { MONITORING_REQUIRED, findTool } from '../support/monitoring.js';
import { RawClient } from '../support/raw-client.js';
import { shippedReplicas, type ReplicaProcess } from '../support/shipped-controller.js';

const prometheusBin = findTool('prometheus');
const assets = process.env.KUBEBUILDER_ASSETS;
const missing = [!prometheusBin && 'prometheus (apt-get install prometheus)', !assets && 'KUBEBUILDER_ASSETS'].filter(
  Boolean,
);
if (missing.length > 0 && MONITORING_REQUIRED) throw new Error(`the monitoring stage needs ${missing.join(' and ')}`);
if (missing.length > 0)
  process.stderr.write(
    `prometheus.test.ts: skipped, it needs ${missing.join(' and ')}${assets ? '' : ` (${ENVTEST_SKIP_MESSAGE})`}\n`,
  );
const describeReal = missing.length === 0 ? describe : describe.skip;

const NAMESPACE = 'pullfleet-monitoring';
const ARGO_NAMESPACE = 'argocd-monitoring';
const LEASE = 'pullfleet-controller';
const JOB = 'pullfleet-controller-metrics';
const LEASE_TIMINGS = ['--lease-duration=4', '--renew-deadline=3', '--retry-period=1'];

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${String(last)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describeReal('a real Prometheus scrapes the controller and evaluates its alerts', () => {
  let env: Envtest;
  let client: RawClient;
  let replicas: ReturnType<typeof shippedReplicas>;
  let controller: ReplicaProcess;
  let prometheus: ChildProcess | undefined;
  let prometheusLog = '';
  let promUrl: string;
  const scratch = mkdtempSync(join(tmpdir(), 'pullfleet-prometheus-'));

  async function api<T>(path: string): Promise<T> {
    const response = await fetch(`${promUrl}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? response.status}`);
    return body.data;
  }
  const query = async (expr: string) =>
    (
      await api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      )
    ).result;
  const alerts = async () => (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;
  const firing = async (name: string) =>
    (await alerts()).find((a) => a.labels.alertname === name && a.state === 'firing');
  const sel = `job="${JOB}",namespace="${NAMESPACE}"`;

  function leaseHeldBy(holder: string, resourceVersion?: string) {
    const now = new Date().toISOString().replace(/\.(\d+)Z$/, (_m, frac: string) => `.${frac.padEnd(6, '0')}Z`);
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE, namespace: NAMESPACE, ...(resourceVersion ? { resourceVersion } : {}) },
      spec: { holderIdentity: holder, leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
    };
  }

  beforeAll(async () => {
    env = await startEnvtest({ assets });
    const admin = loadKubeConfig(env.kubeconfigPath);
    await installCrds(admin);
    client = new RawClient(admin);
    for (const name of [NAMESPACE, ARGO_NAMESPACE])
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    // Another replica holds the Lease and keeps holding it (an hour long): the controller stands by.
    await client.create(leaseHeldBy('another-replica'));

    replicas = shippedReplicas(admin, { namespace: NAMESPACE, argoNamespace: ARGO_NAMESPACE, monitoring: {} });
    controller = await replicas.start({ extraArgs: ['--bind-address=127.0.0.1', ...LEASE_TIMINGS] });

    // The rules file: the install's PrometheusRule spec, every `for:` cut to 2 s.
    const rule = replicas.install.objects.find((o) => o.kind === 'PrometheusRule') as unknown as {
      spec: { groups: Array<{ rules: Array<{ for: string }> }> };
    };
    for (const group of rule.spec.groups) for (const r of group.rules) r.for = '2s';
    writeFileSync(join(scratch, 'rules.yaml'), stringify(rule.spec));
    writeFileSync(
      join(scratch, 'prometheus.yaml'),
      stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [join(scratch, 'rules.yaml')],
        // What a ServiceMonitor of the install makes: job = the metrics Service, namespace = the controller's.
        scrape_configs: [
          {
            job_name: JOB,
            static_configs: [{ targets: [`127.0.0.1:${controller.port}`], labels: { namespace: NAMESPACE } }],
          },
        ],
      }),
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      prometheusBin!,
      [
        `--config.file=${join(scratch, 'prometheus.yaml')}`,
        `--storage.tsdb.path=${join(scratch, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer) => void (prometheusLog = `${prometheusLog}${chunk.toString('utf8')}`.slice(-8000));
    prometheus.stdout!.on('data', keep);
    prometheus.stderr!.on('data', keep);
    await until('prometheus ready', async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : undefined), 30_000);
  }, 180_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await replicas?.stopAll();
    await env?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  test('the controller is a healthy target and its series are in Prometheus', async () => {
    // GIVEN a standby controller (another replica holds the Lease) scraped every second
    // THEN Prometheus has the target up, with the labels the alerts select by
    const target = await until('the target is up', async () => {
      const { activeTargets } = await api<{ activeTargets: Array<{ health: string; labels: Record<string, string> }> }>(
        '/api/v1/targets',
      );
      return activeTargets.find((t) => t.health === 'up');
    });
    expect(target.labels).toMatchObject({ job: JOB, namespace: NAMESPACE, instance: `127.0.0.1:${controller.port}` });
    // AND the series the alerts read, with the values of a standby
    const value = async (expr: string) =>
      until(expr, async () => {
        const result = await query(expr);
        return result.length > 0 ? result.map((r) => r.value[1]) : undefined;
      });
    expect(await value(`pullfleet_leader{${sel}}`)).toStrictEqual(['0']);
    expect(await value(`pullfleet_caught_up{${sel}}`)).toStrictEqual(['0']);
    expect(await value(`pullfleet_applications_with_condition{${sel},type="FeedbackStaleWarning"}`)).toStrictEqual([
      '0',
    ]);
    expect(Number((await value(`pullfleet_leader_election_seconds_since_success{${sel}}`))[0])).toBeLessThan(10);
    const cached = await query(`pullfleet_cached_objects{${sel}}`);
    expect(cached.map((r) => r.metric.resource)).toEqual(expect.arrayContaining(['applications', 'manifestworks']));
    expect((await query(`pullfleet_process_start_time_seconds{${sel}}`)).length).toBe(1);
  }, 90_000);

  test('PullfleetNoLeader fires while another holder keeps the Lease, and nothing says the controller is down', async () => {
    // GIVEN the Lease held by another identity; THEN the no-leader alert fires
    const alert = await until('PullfleetNoLeader firing', () => firing('PullfleetNoLeader'));
    expect(alert.labels).toStrictEqual({ alertname: 'PullfleetNoLeader', severity: 'critical' });
    expect(await firing('PullfleetControllerDown')).toBeUndefined();
  }, 90_000);

  test('once the Lease is free the controller leads, catches up, and PullfleetNoLeader resolves', async () => {
    // WHEN the other holder's Lease goes away
    await client.delete('coordination.k8s.io/v1', 'Lease', NAMESPACE, LEASE);
    // THEN the controller takes it, Prometheus sees it lead and caught up, and the alert is gone
    await until('pullfleet_leader 1', async () =>
      (await query(`pullfleet_leader{${sel}} == 1`)).length === 1 ? true : undefined,
    );
    await until('pullfleet_caught_up 1', async () =>
      (await query(`pullfleet_caught_up{${sel}} == 1`)).length === 1 ? true : undefined,
    );
    await until('PullfleetNoLeader resolved', async () =>
      (await alerts()).some((a) => a.labels.alertname === 'PullfleetNoLeader') ? undefined : true,
    );
    const lease = (await client.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, LEASE)) as {
      spec: { holderIdentity: string };
    };
    expect(lease.spec.holderIdentity).toBe(controller.identity);
  }, 90_000);

  test('a Lease taken away: the controller exits, and PullfleetControllerDown fires', async () => {
    // WHEN another holder takes the Lease over
    // (the controller renews every second: a write that lost the race to a renewal is retried)
    await until('the Lease taken over', async () => {
      const lease = (await client.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, LEASE)) as {
        metadata: { resourceVersion: string };
      };
      await client.replace(leaseHeldBy('thief', lease.metadata.resourceVersion));
      return true;
    });
    // THEN the controller notices at its next renewal and exits non-zero
    const code = await Promise.race([
      controller.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 30_000).unref()),
    ]);
    expect(code).toBe(1);
    expect(controller.output(Number.MAX_SAFE_INTEGER)).toContain('exiting: leadership lost');
    // AND Prometheus finds the target down and fires the down alert (not the no-leader one: nothing runs)
    const alert = await until('PullfleetControllerDown firing', () => firing('PullfleetControllerDown'));
    expect(alert.labels).toStrictEqual({ alertname: 'PullfleetControllerDown', severity: 'critical' });
    expect(await firing('PullfleetNoLeader')).toBeUndefined();
    // AND nothing the controller did was refused by its RBAC
    expect(replicas.forbidden()).toStrictEqual([]);
  }, 90_000);

  afterAll(() => {
    if (prometheusLog.includes('level=error')) process.stderr.write(`prometheus log:\n${prometheusLog}\n`);
  });
});
