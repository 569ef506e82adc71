import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  collectStatus,
  runStatus,
  StatusError,
  type StatusIo,
  type StatusOptions,
  type StatusSource,
} from '../../../src/cli/commands/status.js';
import { DELIVERY_ANNOTATION, DELIVERY_LABEL } from '../../../src/model/core/keys.js';
import { type Application, type ManifestWork } from '../../../src/model/core/types.js';
import { fleetReportCrd } from '../../../src/model/report/report-crd.js';
import { computeFleetReport, type FleetReport } from '../../../src/model/report/report.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../../double/fake-apiserver.js';
import { applicationSet, decision, healthy, hubApp, NOW, work, type Feedback } from '../../model/report/fixtures.js';
import { runCli } from '../../support/cli.js';

function reportFor(
  clusters: string[],
  feedback: Record<string, Feedback | undefined>,
  name = 'guestbook',
): FleetReport {
  const apps = Object.keys(feedback).map((cluster) => hubApp(cluster, name));
  const works = Object.entries(feedback).map(([cluster, fb]) => work(cluster, fb, { appSet: name }));
  return computeFleetReport({
    applicationSet: applicationSet({ name }),
    decisions: [decision('d', clusters)],
    applications: apps,
    works,
    now: NOW,
  })!.report;
}

function staticApp(cluster: string): Application {
  const app = hubApp(cluster, 'web');
  app.metadata.ownerReferences = [];
  app.metadata.annotations = { ...app.metadata.annotations, [DELIVERY_ANNOTATION]: 'static' };
  return app;
}

function fakeSource(parts: {
  reports?: FleetReport[];
  apps?: Application[];
  works?: ManifestWork[] | undefined;
  fail?: Error;
}): StatusSource & { closed: boolean } {
  return {
    description: 'https://hub.example:6443',
    closed: false,
    async listReports() {
      if (parts.fail) throw parts.fail;
      return structuredClone(parts.reports ?? []);
    },
    async listPullApplications() {
      return structuredClone(parts.apps ?? []);
    },
    async listStaticWorks() {
      return parts.works === undefined ? undefined : structuredClone(parts.works);
    },
    close() {
      this.closed = true;
    },
  };
}

interface Captured {
  io: StatusIo;
  out: () => string;
  err: () => string;
  controller: AbortController;
}

function capture(
  source: () => StatusSource,
  options: { isTTY?: boolean; env?: NodeJS.ProcessEnv; stopAfterSleeps?: number } = {},
): Captured {
  let out = '';
  let err = '';
  const controller = new AbortController();
  let sleeps = 0;
  return {
    io: {
      stdout: { write: (text: string) => (out += text), isTTY: options.isTTY ?? false },
      stderr: { write: (text: string) => (err += text) },
      env: options.env ?? {},
      now: () => NOW,
      sleep: async () => {
        sleeps++;
        if (sleeps >= (options.stopAfterSleeps ?? 1)) controller.abort();
      },
      signal: controller.signal,
      source,
    },
    out: () => out,
    err: () => err,
    controller,
  };
}

const TABLE: StatusOptions = { output: 'table' };

describe('runStatus with a fake hub', () => {
  test('all healthy: the table on stdout and exit code 0', async () => {
    const source = fakeSource({ reports: [reportFor(['east'], { east: healthy })] });
    const c = capture(() => source);
    expect(await runStatus(TABLE, c.io)).toBe(0);
    expect(c.out()).toBe(
      [
        'ApplicationSet argocd/guestbook (placement prod)  Ready=True',
        '1 cluster · 1 healthy · 1 synced, 0 out of sync',
        'CLUSTER  STATE    SYNC    HEALTH   REVISION  AGE  MESSAGE',
        'east     Healthy  Synced  Healthy  abc123    1m',
        '',
      ].join('\n'),
    );
    expect(c.err()).toBe('');
    expect(source.closed).toBe(true);
  });

  test('a missing cluster makes the exit code 1', async () => {
    const c = capture(() => fakeSource({ reports: [reportFor(['east', 'west'], { east: healthy })] }));
    expect(await runStatus(TABLE, c.io)).toBe(1);
    expect(c.out().split('\n')[3]).toMatch(/^west\s+Missing/);
  });

  test('fails when the hub cannot be read: exit code 2 and the reason on stderr', async () => {
    const c = capture(() =>
      fakeSource({
        fail: new StatusError('the FleetReport CRD (fleetreports.pullfleet.io) is not installed on the hub'),
      }),
    );
    expect(await runStatus(TABLE, c.io)).toBe(2);
    expect(c.err()).toBe(
      'pullfleet status: the FleetReport CRD (fleetreports.pullfleet.io) is not installed on the hub\n',
    );
    expect(c.out()).toBe('');
  });

  test('fails when the hub is unreachable, naming the address and the flags to check', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const c = capture(() => fakeSource({ fail: refused }));
    expect(await runStatus(TABLE, c.io)).toBe(2);
    expect(c.err()).toBe(
      'pullfleet status: cannot reach the hub API server at https://hub.example:6443 (ECONNREFUSED): check --kubeconfig / --context and that the hub is up\n',
    );
  });

  test('json output carries every row, problems first, and no colour even on a terminal', async () => {
    const c = capture(
      () =>
        fakeSource({
          reports: [reportFor(['east', 'west'], { east: healthy, west: { ...healthy, health: 'Degraded' } })],
        }),
      { isTTY: true },
    );
    expect(await runStatus({ output: 'json' }, c.io)).toBe(1);
    const doc = JSON.parse(c.out()) as {
      items: Array<{ rows: Array<{ cluster: string; state: string }> }>;
      problems: number;
    };
    expect(doc.items[0].rows.map((r) => [r.cluster, r.state])).toStrictEqual([
      ['west', 'Degraded'],
      ['east', 'Healthy'],
    ]);
    expect(doc.problems).toBe(1);
    expect(c.out()).not.toContain('\u001b[');
  });

  test('colour on a terminal, none with NO_COLOR or --no-color', async () => {
    const source = () => fakeSource({ reports: [reportFor(['east'], { east: healthy })] });
    const tty = capture(source, { isTTY: true });
    await runStatus(TABLE, tty.io);
    expect(tty.out()).toContain('\u001b[32mHealthy\u001b[39m');
    const noColor = capture(source, { isTTY: true, env: { NO_COLOR: '1' } });
    await runStatus(TABLE, noColor.io);
    expect(noColor.out()).not.toContain('\u001b[');
    const flag = capture(source, { isTTY: true });
    await runStatus({ ...TABLE, color: false }, flag.io);
    expect(flag.out()).not.toContain('\u001b[');
  });

  test('one ApplicationSet by name; exit code 1 naming the known ones when there is none of that name', async () => {
    const source = () =>
      fakeSource({
        reports: [reportFor(['east'], { east: healthy }), reportFor(['east'], { east: healthy }, 'metrics')],
        apps: [staticApp('east')],
      });
    const one = capture(source);
    expect(await runStatus({ ...TABLE, name: 'metrics' }, one.io)).toBe(0);
    expect(one.out()).toMatch(/^ApplicationSet argocd\/metrics/);
    expect(one.out()).not.toContain('guestbook');
    expect(one.out()).not.toContain('Static applications');
    const none = capture(source);
    expect(await runStatus({ ...TABLE, name: 'nope' }, none.io)).toBe(1);
    expect(none.err()).toBe(
      'pullfleet status: no pull ApplicationSet "nope" on the hub at https://hub.example:6443: pull ApplicationSets: guestbook, metrics\n',
    );
    expect(none.out()).toBe('');
  });

  test('static applications get their own table from their works, or from hub status when works cannot be read', async () => {
    const withWorks = await collectStatus(
      fakeSource({ apps: [staticApp('east'), hubApp('west')], works: [work('east', healthy, { appSet: 'web' })] }),
      { now: NOW },
    );
    expect(withWorks.map((g) => [g.kind, g.rows.map((r) => [r.application, r.state])])).toStrictEqual([
      ['StaticApplications', [['east-web', 'Healthy']]],
    ]);
    const app = staticApp('east');
    app.status = { sync: { status: 'Synced' }, health: { status: 'Healthy' } };
    const withoutWorks = await collectStatus(fakeSource({ apps: [app], works: undefined }), { now: NOW });
    expect(withoutWorks[0].rows[0]).toMatchObject({
      state: 'Healthy',
      message: 'from the hub Application status (ManifestWorks not readable)',
    });
    expect(await collectStatus(fakeSource({ apps: [app] }), { now: NOW, includeStatic: false })).toStrictEqual([]);
  });
});

describe('runStatus --watch', () => {
  test('off a terminal, each new state is printed once', async () => {
    const states = [
      reportFor(['east'], { east: healthy }),
      reportFor(['east'], { east: healthy }),
      reportFor(['east'], { east: { ...healthy, health: 'Degraded' } }),
    ];
    let call = 0;
    const source: StatusSource = {
      ...fakeSource({}),
      listReports: async () => [states[Math.min(call++, states.length - 1)]],
    };
    const c = capture(() => source, { stopAfterSleeps: 3 });
    // THEN the last state decides the exit code
    expect(await runStatus({ ...TABLE, watch: true }, c.io)).toBe(1);
    expect(c.out().match(/^ApplicationSet/gm)).toHaveLength(2);
  });

  test('on a terminal, the screen is redrawn on every refresh', async () => {
    const c = capture(() => fakeSource({ reports: [reportFor(['east'], { east: healthy })] }), {
      isTTY: true,
      stopAfterSleeps: 2,
    });
    expect(await runStatus({ ...TABLE, watch: true, interval: 5 }, c.io)).toBe(0);
    expect(c.out().split('\u001b[H\u001b[2J')).toHaveLength(3);
    expect(c.out()).toContain('Every 5s · 01:00:00 UTC · Ctrl-C to stop');
  });
});

describe('pullfleet status against the API double', () => {
  let server: FakeApiServer;
  let dir: string;
  let kubeconfig: string;

  beforeAll(async () => {
    server = await startFakeApiServer({ implicitNamespaces: true });
    dir = mkdtempSync(join(tmpdir(), 'pullfleet-status-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
  });

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (args: string[]) => runCli(['status', ...args]);

  test('fails when the FleetReport CRD is missing, saying how to install it', async () => {
    const result = await run(['--kubeconfig', kubeconfig]);
    expect(result.code).toBe(2);
    expect(result.err).toBe(
      `pullfleet status: the FleetReport CRD (fleetreports.pullfleet.io) is not installed on the hub at ${server.url}: apply the pullfleet controller install for this hub (dist/<hub>/), which includes it\n`,
    );
  });

  test('reads reports, static apps and their works through the kubeconfig', async () => {
    // GIVEN the CRD, a report with a missing cluster, and a static app with its work
    server.store.create(fleetReportCrd());
    const report = reportFor(['east', 'west'], { east: healthy });
    const created = server.store.create<KubeObj>({ ...report, status: undefined });
    server.store.updateStatus({ ...created, status: report.status });
    const app = staticApp('east');
    server.store.create({
      ...app,
      spec: { ...app.spec, source: { repoURL: 'https://git.example/apps', path: 'web' } },
    });
    // (this path runs on the real clock: the spoke reconciled just now)
    const staticWork = work('east', { ...healthy, reconciledAt: new Date().toISOString() }, { appSet: 'web' });
    staticWork.metadata.labels = { [DELIVERY_LABEL]: 'static' };
    staticWork.spec.workload.manifests = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' } }];
    const storedWork = server.store.create<KubeObj>({ ...staticWork, status: undefined });
    server.store.updateStatus({ ...storedWork, status: staticWork.status });

    // WHEN status runs with -o json
    const result = await run(['--kubeconfig', kubeconfig, '-o', 'json']);

    // THEN both tables are there, problems first, and the missing cluster fails the gate
    expect(result.err).toBe('');
    expect(result.code).toBe(1);
    const doc = JSON.parse(result.out) as {
      items: Array<{ kind: string; name: string; rows: Array<{ cluster: string; state: string }> }>;
    };
    expect(doc.items.map((g) => [g.kind, g.name, g.rows.map((r) => `${r.cluster}:${r.state}`)])).toStrictEqual([
      ['ApplicationSet', 'guestbook', ['west:Missing', 'east:Healthy']],
      ['StaticApplications', '', ['east:Healthy']],
    ]);
  });

  test('fails when the context is not in the kubeconfig', async () => {
    const result = await run(['--kubeconfig', kubeconfig, '--context', 'prod-hub']);
    expect(result.code).toBe(2);
    expect(result.err).toBe('pullfleet status: context "prod-hub" is not in the kubeconfig (contexts: fake)\n');
  });

  test('fails when the hub is unreachable', async () => {
    const closed = await startFakeApiServer({ implicitNamespaces: true });
    const file = join(dir, 'closed');
    writeFileSync(file, closed.kubeConfigYaml());
    const url = closed.url;
    await closed.close();
    const result = await run(['--kubeconfig', file]);
    expect(result.code).toBe(2);
    expect(result.err).toBe(
      `pullfleet status: cannot reach the hub API server at ${url} (ECONNREFUSED): check --kubeconfig / --context and that the hub is up\n`,
    );
  });

  test('fails within --timeout when the hub accepts connections and never answers', async () => {
    // GIVEN a server on 127.0.0.1 that accepts every connection and never writes a byte
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const file = join(dir, 'silent');
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters: [{ name: silent, cluster: { server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true } }]\nusers: [{ name: me, user: { token: t } }]\ncontexts: [{ name: silent, context: { cluster: silent, user: me } }]\ncurrent-context: silent\n`,
    );
    try {
      // WHEN status runs with a short timeout
      const result = await run(['--kubeconfig', file, '--timeout', '0.3']);
      // THEN it gives up with exit code 2 and says what to do
      expect(result.code).toBe(2);
      expect(result.err).toBe(
        `pullfleet status: the hub API server at http://127.0.0.1:${port} did not answer within 0.3s while listing FleetReports: check that it is up and reachable, or raise --timeout\n`,
      );
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('pullfleet status without a kubeconfig', () => {
  test('fails saying that no kubeconfig was found, instead of trying localhost', async () => {
    const home = mkdtempSync(join(tmpdir(), 'pullfleet-home-'));
    let err = '';
    try {
      const code = await runStatus(
        { output: 'table' },
        {
          stdout: { write: () => true },
          stderr: { write: (text: string) => (err += text) },
          env: { HOME: home },
          now: () => NOW,
          sleep: async () => undefined,
          signal: new AbortController().signal,
        },
      );
      expect(code).toBe(2);
      expect(err).toBe(
        `pullfleet status: no kubeconfig found: --kubeconfig not given, $KUBECONFIG not set, ${join(home, '.kube', 'config')} does not exist and this is not a pod: pass --kubeconfig <file> or set KUBECONFIG\n`,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
