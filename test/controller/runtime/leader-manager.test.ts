/**
 * Leader election wired into the running controller: a replica that cannot use its Lease turns not-ready
 * and says why, a replica that lost the Lease issues no further write, and stop() is bounded even when a
 * reconcile hangs. The API double sits behind a small proxy (written here) that can forbid Lease requests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { SECRET } from '../../../src/kube/resources.js';
import { startController, type RunningController } from '../../../src/controller/runtime/manager.js';
import type { ReconcilerFactory } from '../../../src/controller/runtime/reconciler.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../../double/fake-apiserver.js';
import { waitFor } from '../../support/wait.js';

const silent = pino({ level: 'silent' });
const FAST = {
  retryPeriodSeconds: 0.05,
  leaseDurationSeconds: 0.3,
  renewDeadlineSeconds: 0.2,
  clusterSecrets: false,
  fleetReports: false,
};

let server: FakeApiServer;
let proxy: http.Server;
let proxyUrl: string;
const forbid = { leases: false };
const running: RunningController[] = [];

beforeEach(async () => {
  server = await startFakeApiServer();
  // The controller's namespace exists, as the install creates it.
  server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pullfleet-system' } });
  const target = new URL(server.url);
  forbid.leases = false;
  proxy = http.createServer((req, res) => {
    if (forbid.leases && (req.url ?? '').includes('/leases')) {
      res.writeHead(403, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          code: 403,
          reason: 'Forbidden',
          message: 'leases.coordination.k8s.io is forbidden in namespace "pullfleet-system"',
        }),
      );
      return;
    }
    const upstream = http.request(
      { hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const controller of running.splice(0)) await controller.stop();
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await server.close();
});

function viaProxy(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'proxy', server: proxyUrl, skipTLSVerify: true }],
    users: [{ name: 'me', token: 't' }],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: 'me' }],
    currentContext: 'proxy',
  });
  return kc;
}

/** A reconciler with one key whose reconcile waits for `gate`, then tries one write and records the outcome. */
function gatedReconciler() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const state = { started: false, outcome: '' };
  const factory: ReconcilerFactory = (context) => ({
    name: 'gated',
    watches: [],
    workers: 1,
    resyncKeys: () => ['k'],
    async reconcile() {
      if (state.outcome) return;
      state.started = true;
      await gate;
      try {
        await context.writer.apply(SECRET, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'probe', namespace: 'pullfleet-system' },
        });
        state.outcome = 'written';
      } catch (error) {
        state.outcome = (error as Error).message;
      }
    },
  });
  return { factory, state, open: () => open() };
}

describe('leader election in the running controller', () => {
  test('GIVEN Lease requests forbidden forever WHEN several lease periods pass THEN /readyz is 503 with the reason and the metrics show it', async () => {
    forbid.leases = true;
    // Port 0: the system picks a free one (a fixed port can be taken by another process on a busy machine).
    const controller = await startController({
      kubeConfig: viaProxy(),
      config: { ...FAST, identity: 'one', httpPort: 0, httpHost: '127.0.0.1' },
      logger: silent,
    });
    running.push(controller);
    const port = controller.httpPort()!;
    const readyz = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      return [response.status, await response.text()] as const;
    };
    const [status, body] = await waitFor('readyz 503', async () => {
      const answer = await readyz();
      return answer[0] === 503 && !answer[1].startsWith('caches') ? answer : undefined;
    });
    expect(status).toBe(503);
    expect(body).toContain('cannot read or write the leader Lease pullfleet-system/pullfleet-controller for ');
    expect(body).toContain('403');
    expect(body).toContain('check that --namespace / POD_NAMESPACE is the namespace the controller is installed in');
    const metrics = await controller.metrics();
    expect(Number(/pullfleet_leader_election_errors_total (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(3);
    expect(Number(/pullfleet_leader_election_seconds_since_success ([\d.]+)/.exec(metrics)?.[1])).toBeGreaterThan(0.9);
    expect(metrics).toMatch(/pullfleet_leader 0/);

    // WHEN the Role is fixed THEN it leads and is ready again
    forbid.leases = false;
    await controller.ready();
    await waitFor('readyz 200', async () => (await readyz())[0] === 200);
  });

  test('GIVEN a leader with a reconcile in flight WHEN another holder takes the Lease THEN that reconcile cannot write any more and the controller stops', async () => {
    const gated = gatedReconciler();
    let lost = false;
    const controller = await startController({
      kubeConfig: viaProxy(),
      config: { ...FAST, identity: 'one' },
      logger: silent,
      reconcilers: [gated.factory],
      onLeadershipLost: () => (lost = true),
    });
    running.push(controller);
    await controller.ready();
    await waitFor('reconcile in flight', () => gated.state.started);
    const lease = server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller');
    server.store.update({
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: 'intruder',
        renewTime: '2026-11-22T12:00:00.000000Z',
        leaseDurationSeconds: 60,
      },
    });
    await waitFor('leader gauge 0', async () => /pullfleet_leader 0/.test(await controller.metrics()));
    const writes = server.writeCount();
    gated.open();
    await waitFor('leadership lost', () => lost);
    expect(gated.state.outcome).toBe('write refused: this replica does not hold the leader Lease');
    expect(server.store.find('secrets', 'pullfleet-system', 'probe')).toBeUndefined();
    expect(server.writeCount()).toBe(writes);
    expect(server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller').spec.holderIdentity).toBe(
      'intruder',
    );
  });

  test('GIVEN a reconcile that never finishes WHEN the controller stops THEN stop returns after the stop timeout and leaves the Lease to expire', async () => {
    const gated = gatedReconciler();
    const controller = await startController({
      kubeConfig: viaProxy(),
      config: { ...FAST, identity: 'one' },
      logger: silent,
      reconcilers: [gated.factory],
      stopTimeoutMs: 200,
    });
    await controller.ready();
    await waitFor('reconcile in flight', () => gated.state.started);
    await controller.stop();
    // Not released: the stuck reconcile might still write, so nobody may lead before the Lease expires.
    expect(server.store.get<KubeObj>('leases', 'pullfleet-system', 'pullfleet-controller').spec.holderIdentity).toBe(
      'one',
    );
    gated.open();
    await waitFor('the late write', () => gated.state.outcome);
    expect(gated.state.outcome).toBe('write refused: the controller stopped');
    expect(server.store.find('secrets', 'pullfleet-system', 'probe')).toBeUndefined();
  });
});
