/**
 * `pullfleet status --cluster / --app / --resource / --image`: what runs where, one table, problems first, from the
 * resource summaries on the works (--cluster) or the hub Applications' status (the rest).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { runStatus, type StatusIo, type StatusOptions, type StatusSource } from '../../../src/cli/commands/status.js';
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL } from '../../../src/model/core/keys.js';
import { type Application, type ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import {
  RESOURCE_LIST_TRUNCATED_CONDITION,
  RESOURCE_SUMMARY_CONDITION,
  RESOURCE_SUMMARY_HEADER,
} from '../../../src/model/reconcile/resource-summary.js';
import { computeApplicationStatus } from '../../../src/model/reconcile/status.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../../double/fake-apiserver.js';
import { runCli } from '../../support/cli.js';
import { spokeApplication, type SpokeAppOptions } from '../../support/spoke-apps.js';
import { WorkAgent, type ReportOptions } from '../../support/work-agent.js';
import { expectGolden } from '../../support/golden.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const agent = new WorkAgent(undefined as never, () => NOW);

function hubApp(cluster: string, app: string, appSet?: string): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: appSet ? `${cluster}-${app}` : app,
      namespace: 'argocd',
      uid: `${cluster}-${app}-uid`,
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: cluster, 'argocd.argoproj.io/skip-reconcile': 'true' },
      ...(appSet
        ? {
            ownerReferences: [
              {
                apiVersion: 'argoproj.io/v1alpha1',
                kind: 'ApplicationSet',
                name: appSet,
                uid: `${appSet}-uid`,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: app },
      source: { repoURL: 'https://git.example/apps', path: app },
    },
  };
}

interface Delivered {
  app: Application;
  work: ManifestWork;
}

/** A hub app, its work as the agent reported it, and the hub status the controller wrote from it. */
function delivered(app: Application, spoke: SpokeAppOptions | undefined, opts: ReportOptions = {}): Delivered {
  const work = buildManifestWork(app);
  work.metadata.generation = 1;
  const spokeApp = spoke ? spokeApplication(spoke) : undefined;
  const health = (spokeApp?.object.status as { health?: { status: string } } | undefined)?.health?.status ?? 'Healthy';
  work.status = agent.statusFor(
    work,
    { healthStatus: health, syncStatus: 'Synced', reconciledAt: '2026-01-01T00:59:00Z' },
    { ...(spokeApp ? { spokeApplication: spokeApp.object } : {}), ...opts },
  );
  const { desired } = computeApplicationStatus({ app, work, now: NOW, staleAfterMs: 0 });
  return { app: { ...app, status: desired }, work };
}

const IMAGES = ['registry.example.com/shop/cart:1.4.2', 'registry.example.com/shop/web:2.0.1'];
const FLEET: Delivered[] = [
  delivered(hubApp('prod-317', 'shop', 'shop'), { resources: 12, degraded: 2, outOfSync: 1, images: IMAGES }),
  delivered(hubApp('prod-317', 'billing'), undefined, {
    ruleError: "ERROR: <input>:1:1: undeclared reference to 'join'",
  }),
  delivered(hubApp('prod-317', 'web'), { resources: 2, images: ['nginx:1.25'] }),
  delivered(hubApp('prod-318', 'shop', 'shop'), { resources: 12, images: IMAGES }),
];

function fakeSource(fleet: readonly Delivered[], options: { worksForbidden?: boolean } = {}): StatusSource {
  return {
    description: 'https://hub.example:6443',
    async listReports() {
      return [];
    },
    async listPullApplications() {
      return structuredClone(fleet.map((d) => d.app));
    },
    async listStaticWorks() {
      return [];
    },
    async listClusterWorks(cluster) {
      if (options.worksForbidden) return undefined;
      return structuredClone(fleet.map((d) => d.work).filter((w) => w.metadata.namespace === cluster));
    },
    close() {},
  };
}

async function status(
  options: Partial<StatusOptions>,
  source: StatusSource = fakeSource(FLEET),
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const controller = new AbortController();
  const io: StatusIo = {
    stdout: { write: (text: string) => (out += text), isTTY: false },
    stderr: { write: (text: string) => (err += text) },
    env: {},
    now: () => NOW,
    sleep: async () => controller.abort(),
    signal: controller.signal,
    source: () => source,
  };
  const code = await runStatus({ output: 'table', ...options }, io);
  return { code, out, err };
}

describe('pullfleet status --cluster', () => {
  test('golden: every app on the cluster in one table, problems first, what the hub cannot see said, images last', async () => {
    const result = await status({ cluster: 'prod-317' });
    expect(result.code).toBe(1);
    expectGolden('status-cluster.txt', result.out);
  });

  test('GIVEN the user may not list ManifestWorks THEN the same table comes from the hub Applications', async () => {
    const fromWorks = await status({ cluster: 'prod-317', output: 'json' });
    const fromApps = await status({ cluster: 'prod-317', output: 'json' }, fakeSource(FLEET, { worksForbidden: true }));
    const rows = (text: string) =>
      (JSON.parse(text) as { rows: Array<{ application: string; kind?: string; name?: string; health?: string }> }).rows
        .filter((row) => row.kind)
        .map((row) => `${row.application} ${row.kind}/${row.name} ${row.health}`);
    expect(rows(fromApps.out)).toStrictEqual(rows(fromWorks.out));
    expect(fromApps.code).toBe(1);
  });

  test('GIVEN a cluster where everything is healthy THEN exit code 0', async () => {
    const result = await status({ cluster: 'prod-318' });
    expect(result.code).toBe(0);
    expect(result.out.split('\n').slice(0, 3)).toStrictEqual([
      'Resources on cluster prod-318',
      '1 application on 1 cluster · 12 resources · 2 images',
      'APPLICATION    KIND            NAMESPACE  NAME          HEALTH   SYNC    MESSAGE',
    ]);
  });
});

describe('pullfleet status --app, --resource, --image', () => {
  test('golden: --app names an ApplicationSet: its app on every cluster, problems first', async () => {
    const result = await status({ app: 'shop' });
    expect(result.code).toBe(1);
    expectGolden('status-app.txt', result.out);
  });

  test('golden: --resource kind/name finds it on every cluster, and says where the hub cannot tell', async () => {
    const result = await status({ resource: 'deployment/component-0' });
    expect(result.code).toBe(1);
    expectGolden('status-resource.txt', result.out);
  });

  test('golden: --image finds which cluster and app run it', async () => {
    const result = await status({ image: 'shop/cart' });
    expect(result.code).toBe(0);
    expectGolden('status-image.txt', result.out);
  });

  test('GIVEN a resource or image nowhere THEN exit code 1, as grep', async () => {
    expect((await status({ resource: 'Deployment/nothing' })).code).toBe(1);
    expect((await status({ image: 'nothing' })).code).toBe(1);
  });

  test('json: the rows problems first, with a problem count', async () => {
    const result = await status({ cluster: 'prod-317', output: 'json' });
    const doc = JSON.parse(result.out) as { problems: number; rows: Array<{ rank: number; health?: string }> };
    expect(doc.problems).toBe(2);
    expect(doc.rows.slice(0, 2).map((row) => row.health)).toStrictEqual(['Degraded', 'Degraded']);
    const ranks = doc.rows.map((row) => row.rank);
    expect([...ranks].sort((a, b) => a - b)).toStrictEqual(ranks);
  });
});

describe('pullfleet status --cluster through the program, against the API double', () => {
  let server: FakeApiServer;
  let dir: string;
  let kubeconfig: string;

  beforeAll(async () => {
    server = await startFakeApiServer({ implicitNamespaces: true });
    dir = mkdtempSync(join(tmpdir(), 'pullfleet-status-resources-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
  });

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('reads the works of the cluster and exits 1 for a degraded resource; --resource that does not parse is refused', async () => {
    for (const { work } of FLEET) {
      const stored = server.store.create<KubeObj>({ ...work, status: undefined });
      server.store.updateStatus({ ...stored, status: work.status });
    }
    const result = await runCli(['status', '--kubeconfig', kubeconfig, '--cluster', 'prod-317', '--no-color']);
    expect(result.err).toBe('');
    expect(result.code).toBe(1);
    expect(result.out.split('\n')[0]).toBe('Resources on cluster prod-317');
    expect(result.out).toContain('Deployment      shop       component-0   Degraded');
    await expect(runCli(['status', '--kubeconfig', kubeconfig, '--resource', 'deployment'])).rejects.toThrow(
      '--resource must be kind/name or kind/namespace/name (such as deployment/cart or Deployment/shop/cart), got "deployment"',
    );
  });
});

describe('pullfleet status: what a resource list leaves out counts by its numbers, from the works or the hub Applications', () => {
  /** An app on prod-400 whose summary was cut before any resource line fit: only the header's counts tell. */
  function cutBeforeResources(header: string): Delivered {
    const { work } = delivered(hubApp('prod-400', 'big'), { resources: 2 });
    const manifest = work.status!.resourceStatus!.manifests![0];
    // A new condition object: summaries are parsed once per object.
    manifest.conditions = manifest.conditions!.map((c) =>
      c.type === RESOURCE_SUMMARY_CONDITION
        ? { ...c, message: `${RESOURCE_SUMMARY_HEADER} ${header} images=3\nimages reg/a:1 reg/b:2 reg/c` }
        : c,
    );
    const { desired } = computeApplicationStatus({ app: hubApp('prod-400', 'big'), work, now: NOW, staleAfterMs: 0 });
    return { app: { ...hubApp('prod-400', 'big'), status: desired }, work };
  }

  const rowsOf = (text: string) =>
    (JSON.parse(text) as { rows: Array<{ message?: string; rank: number; problem: boolean }> }).rows.map(
      ({ message, rank, problem }) => ({ message, rank, problem }),
    );

  test.each([
    ['resources=4000 Healthy=3995 Degraded=5 OutOfSync=0', 'and 4000 more, 5 of them Degraded', 1, 1],
    ['resources=4000 Healthy=3998 Missing=2 OutOfSync=9', 'and 4000 more, 2 of them Missing, 9 OutOfSync', 2, 1],
    ['resources=4000 Healthy=4000 OutOfSync=9', 'and 4000 more, 9 of them OutOfSync', 3, 0],
    ['resources=4000 Healthy=4000 OutOfSync=0', 'and 4000 more', 5, 0],
  ])('GIVEN a summary "%s" THEN both paths show "%s" with rank %d and exit %d', async (header, text, rank, code) => {
    const fleet = [cutBeforeResources(header)];
    const fromWorks = await status({ cluster: 'prod-400', output: 'json' }, fakeSource(fleet));
    const fromApps = await status({ app: 'big', output: 'json' }, fakeSource(fleet));
    expect(rowsOf(fromWorks.out)).toStrictEqual([{ message: text, rank, problem: rank <= 2 }]);
    expect(rowsOf(fromApps.out)).toStrictEqual(rowsOf(fromWorks.out));
    expect([fromWorks.code, fromApps.code]).toStrictEqual([code, code]);
  });

  test('GIVEN a ResourceListTruncated message in words this version does not write THEN it is shown as it is, and the exit code comes from the listed resources alone', async () => {
    const { app, work } = cutBeforeResources('resources=4000 Healthy=3995 Degraded=5 OutOfSync=0');
    const message = 'status.resources shows none of 4000 resources; 5 Degraded among them';
    const reworded: Application = {
      ...app,
      status: { ...app.status, conditions: [{ type: RESOURCE_LIST_TRUNCATED_CONDITION, message }] },
    };
    const result = await status({ app: 'big', output: 'json' }, fakeSource([{ app: reworded, work }]));
    expect(rowsOf(result.out)).toStrictEqual([{ message, rank: 4, problem: false }]);
    expect(result.code).toBe(0);
  });
});
