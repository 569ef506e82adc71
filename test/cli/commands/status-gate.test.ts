/**
 * `pullfleet status` and `pullfleet inventory` as CI gates, through the binary (bin/pullfleet.js in a process
 * of its own) against the API double: bad numeric flags are usage errors; a name that matches nothing, an
 * ApplicationSet without its FleetReport and a list the user may not read are never a silent exit 0; `--image`
 * lists what it found first.
 */
import { describe, expect, test } from '@jest/globals';
import { PULL_LABEL } from '../../../src/model/core/keys.js';
import { type Application } from '../../../src/model/core/types.js';
import { fleetReportCrd } from '../../../src/model/report/report-crd.js';
import { computeFleetReport, type ApplicationSet } from '../../../src/model/report/report.js';
import { buildExpectedApplicationsConfigMap } from '../../../src/model/reconcile/expected-apps.js';
import { type FakeApiServer, type KubeObj } from '../../double/fake-apiserver.js';
import { agentApp, mirrored } from '../../model/report/agent-fixtures.js';
import { applicationSet, decision, hubApp, work } from '../../model/report/fixtures.js';
import { spawnBinary } from '../../support/cli.js';
import { kubeconfigServer } from '../../support/kubeconfig-server.js';

/** Now, as Kubernetes writes times (the binary runs on the real clock). */
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The first line of `text`. */
const firstLine = (text: string) => text.split('\n')[0];

describe('numeric flags of status and inventory are usage errors from the binary', () => {
  test.each([
    [
      ['status', '--interval', '0'],
      '--interval <seconds>',
      '0',
      '--interval 0 is not a positive number of seconds: give for example --interval 2',
    ],
    [
      ['status', '--interval', 'abc'],
      '--interval <seconds>',
      'abc',
      '--interval abc is not a positive number of seconds: give for example --interval 2',
    ],
    [
      ['status', '--timeout', 'abc'],
      '--timeout <seconds>',
      'abc',
      '--timeout abc is not a positive number of seconds: give for example --timeout 10',
    ],
    [
      ['status', '--timeout', '0'],
      '--timeout <seconds>',
      '0',
      '--timeout 0 is not a positive number of seconds: give for example --timeout 10',
    ],
    [
      ['inventory', 'pull', '--hub', 'hub', '--page-size', '0'],
      '--page-size <n>',
      '0',
      '--page-size 0 is not a positive whole number: give for example --page-size 500',
    ],
    [
      ['inventory', 'pull', '--hub', 'hub', '--page-size', '2.5'],
      '--page-size <n>',
      '2.5',
      '--page-size 2.5 is not a positive whole number: give for example --page-size 500',
    ],
    [
      ['inventory', 'pull', '--hub', 'hub', '--timeout', 'abc'],
      '--timeout <seconds>',
      'abc',
      '--timeout abc is not a positive number of seconds: give for example --timeout 30',
    ],
    [
      ['inventory', 'diff', '--hub', 'hub', '--timeout', 'abc'],
      '--timeout <seconds>',
      'abc',
      '--timeout abc is not a positive number of seconds: give for example --timeout 30',
    ],
    [
      ['migrate', 'subscriptions', '--timeout', '1e3'],
      '--timeout <seconds>',
      '1e3',
      '--timeout 1e3 is not a positive number of seconds: give for example --timeout 30',
    ],
  ])(
    '%j exits 2 with one line naming the option, the value and the fix, and no stack trace',
    async (args, flag, value, message) => {
      const result = await spawnBinary(args);
      expect(result.code).toBe(2);
      expect(result.out).toBe('');
      expect(firstLine(result.err)).toBe(`error: option '${flag}' argument '${value}' is invalid. ${message}`);
      expect(result.err.match(/^error:/gm)).toHaveLength(1);
      expect(result.err).not.toMatch(/^\s+at /m);
    },
  );

  test.each([
    ['status', '--timeout 10'],
    ['synth', '--timeout 300 (0 for no limit)'],
  ])('%s: a timer-overflowing --timeout is refused instead of firing at once', async (command, example) => {
    const result = await spawnBinary([command, '--timeout', '9999999999']);
    expect(result.code).toBe(2);
    expect(firstLine(result.err)).toContain(
      `--timeout 9999999999 is more than 2147483 seconds (about 24 days), the longest a timer can wait: give for example ${example}`,
    );
  });

  test('synth, validate and plan refuse a --timeout that is not a number of seconds with the same parser (0 being no limit there)', async () => {
    for (const command of ['synth', 'validate', 'plan']) {
      const result = await spawnBinary([command, '--timeout', '-1']);
      expect({ command, code: result.code, first: firstLine(result.err) }).toStrictEqual({
        command,
        code: 2,
        first:
          "error: option '--timeout <seconds>' argument '-1' is invalid. --timeout -1 is not a number of seconds: give for example --timeout 300 (0 for no limit)",
      });
    }
  });
});

/** Stores a FleetReport as the controller writes it: object, then status. */
function storeReport(server: FakeApiServer, appSet: ApplicationSet, clusters: readonly string[]): void {
  const fresh = { health: 'Healthy', sync: 'Synced', revision: 'abc1234', reconciledAt: now() };
  const report = computeFleetReport({
    applicationSet: appSet,
    decisions: [decision('d', clusters)],
    applications: clusters.map((cluster) => hubApp(cluster, appSet.metadata.name)),
    works: clusters.map((cluster) => work(cluster, fresh, { appSet: appSet.metadata.name })),
    now: new Date(),
  })!.report;
  const created = server.store.create<KubeObj>({ ...report, status: undefined });
  server.store.updateStatus({ ...created, status: report.status });
}

describe('pullfleet status: names that match nothing and ApplicationSets without a report', () => {
  const hub = kubeconfigServer('pullfleet-status-gate-');
  const run = (args: string[]) => spawnBinary(['status', '--kubeconfig', hub.kubeconfig, ...args]);
  let seeded = false;

  /** guestbook (pull, with its report, on east and west), metrics (pull, no report yet), plain (not pull). */
  function seed(): void {
    if (seeded) return;
    seeded = true;
    const { store } = hub.server;
    store.create(fleetReportCrd());
    const guestbook = store.create<ApplicationSet>(applicationSet({ name: 'guestbook' }));
    store.create(applicationSet({ name: 'metrics', placement: 'edge' }));
    store.create(applicationSet({ name: 'plain', pull: false }));
    storeReport(hub.server, guestbook, ['east', 'west']);
    for (const cluster of ['east', 'west']) {
      const app = hubApp(cluster, 'guestbook');
      store.create({
        ...app,
        spec: { ...app.spec, source: { repoURL: 'https://git.example/apps', path: 'guestbook' } },
      });
    }
  }

  test('GIVEN an ApplicationSet name the hub does not have THEN exit 1, naming it, with "did you mean" and the known ones', async () => {
    seed();
    const typo = await run(['guestbok']);
    expect(typo).toStrictEqual({
      code: 1,
      out: '',
      err: `pullfleet status: no pull ApplicationSet "guestbok" on the hub at ${hub.server.url}: did you mean "guestbook"? pull ApplicationSets: guestbook, metrics\n`,
    });
    const unknown = await run(['payments']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe(
      `pullfleet status: no pull ApplicationSet "payments" on the hub at ${hub.server.url}: pull ApplicationSets: guestbook, metrics\n`,
    );
  });

  test('GIVEN the name of an ApplicationSet that is not a pull one THEN exit 1 saying so', async () => {
    seed();
    const result = await run(['plain']);
    expect(result.code).toBe(1);
    expect(result.err).toBe(
      `pullfleet status: ApplicationSet argocd/plain is not a pull ApplicationSet (its template has no ${PULL_LABEL}: "true" label) nor an agent-managed one, so it has no FleetReport and status cannot show it: pass the name of a pull ApplicationSet, or leave the name out to see every one\n`,
    );
  });

  test('GIVEN a pull ApplicationSet without its FleetReport WHEN --no-static THEN it is Unknown (exit 1), not "No fleet reports found."', async () => {
    seed();
    const result = await run(['--no-static']);
    expect(result.err).toBe('');
    expect(result.code).toBe(1);
    expect(result.out).not.toContain('No fleet reports found.');
    expect(result.out.split('\n').slice(0, 2)).toStrictEqual([
      'ApplicationSet argocd/metrics (placement edge)',
      'Unknown: no FleetReport for ApplicationSet argocd/metrics, so the state of its clusters is unknown: the pullfleet controller writes one for every pull ApplicationSet; check that it runs on this hub (its install is in dist/<hub>/) and what its log says about this ApplicationSet',
    ]);
    expect(result.out).toContain('ApplicationSet argocd/guestbook (placement prod)  Ready=True');
    const one = await run(['metrics', '-o', 'json']);
    expect(one.code).toBe(1);
    const doc = JSON.parse(one.out) as { items: Array<{ name: string; problem?: string }>; problems: number };
    expect(doc.items.map((item) => item.name)).toStrictEqual(['metrics']);
    expect(doc.problems).toBe(1);
  });

  test('GIVEN --cluster or --app naming nothing on the hub THEN exit 1, naming the value, with "did you mean" and the known ones', async () => {
    seed();
    const cluster = await run(['--cluster', 'eest']);
    expect(cluster).toStrictEqual({
      code: 1,
      out: '',
      err: `pullfleet status: no application runs on cluster "eest" on the hub at ${hub.server.url}: did you mean "east"? clusters with applications: east, west\n`,
    });
    const app = await run(['--app', 'guestbok']);
    expect(app).toStrictEqual({
      code: 1,
      out: '',
      err: `pullfleet status: no application or ApplicationSet "guestbok" on the hub at ${hub.server.url}: did you mean "guestbook"? applications and ApplicationSets: east-guestbook, guestbook, west-guestbook\n`,
    });
    const elsewhere = await run(['--cluster', 'west', '--app', 'east-guestbook']);
    expect(elsewhere).toStrictEqual({
      code: 1,
      out: '',
      err: `pullfleet status: application "east-guestbook" has nothing on cluster "west" on the hub at ${hub.server.url}: it runs on east\n`,
    });
    const known = await run(['--cluster', 'east']);
    expect(known.err).toBe('');
    expect(firstLine(known.out)).toBe('Resources on cluster east');
  });
});

describe('pullfleet status: lists the user may not read are said, not silently dropped', () => {
  const hub = kubeconfigServer('pullfleet-status-rbac-');

  test('GIVEN ConfigMaps may not be listed WHEN an autonomous spoke misses an expected Application THEN a line names the ConfigMaps, the 403 and what is not shown', async () => {
    const { store } = hub.server;
    store.create(fleetReportCrd());
    store.create(
      buildExpectedApplicationsConfigMap({
        spoke: 'store-001',
        namespace: 'argocd',
        applications: ['api-store-001', 'web-store-001'],
        folder: 'dist/hub/spokes/store-001',
      }),
    );
    const api = agentApp('store-001', mirrored({ sync: 'Synced', health: 'Healthy', reconciledAt: now() }), {
      model: 'agent-autonomous',
      namespace: 'store-001',
      owned: false,
    });
    api.metadata.name = 'api-store-001';
    store.create(api);
    const forbidden =
      'configmaps is forbidden: User "system:serviceaccount:ci:status" cannot list resource "configmaps" in API group "" at the cluster scope';
    hub.server.failNext({ verb: 'list', resource: 'configmaps', code: 403, message: forbidden });

    const result = await spawnBinary(['status', '--kubeconfig', hub.kubeconfig]);

    // (what status could read is healthy: the exit code follows what it saw, the line says what it could not)
    expect(result.code).toBe(0);
    expect(result.err).toBe(
      `pullfleet status: the Missing rows of agent-autonomous spokes (expected Applications the principal does not mirror) are not shown (grant list on configmaps in the hub's Argo CD namespace to see them): not allowed to list ConfigMaps labelled pullfleet.io/expected-applications-for on the hub at ${hub.server.url} (403 Forbidden): GET /api/v1/configmaps: 403 ${forbidden}\n`,
    );
    expect(result.out).toContain('store-001  api-store-001  Healthy');
    expect(result.out).not.toContain('web-store-001');
    // With the permission, the Missing row is back.
    const allowed = await spawnBinary(['status', '--kubeconfig', hub.kubeconfig]);
    expect(allowed.err).toBe('');
    expect(allowed.code).toBe(1);
    expect(allowed.out).toMatch(/^store-001 {2}web-store-001 {2}Missing/m);
  });
});

describe('pullfleet status --cluster when Applications may not be listed', () => {
  const hub = kubeconfigServer('pullfleet-status-rbac-apps-');

  test('GIVEN Applications may not be listed WHEN --cluster finds nothing THEN stderr says what could not be read before the cluster it found no app on (exit 1)', async () => {
    const forbidden = 'applications.argoproj.io is forbidden: User "ci" cannot list resource "applications"';
    hub.server.failNext({ verb: 'list', resource: 'applications', code: 403, message: forbidden, times: 2 });

    const result = await spawnBinary(['status', '--kubeconfig', hub.kubeconfig, '--cluster', 'east']);

    const refused = (labelled: string) =>
      `not allowed to list Applications labelled ${labelled} on the hub at ${hub.server.url} (403 Forbidden): GET /apis/argoproj.io/v1alpha1/applications: 403 ${forbidden}`;
    expect(result).toStrictEqual({
      code: 1,
      out: '',
      err: [
        `pullfleet status: agent-model apps no ApplicationSet generates are not shown (grant list on applications.argoproj.io to see them): ${refused('pullfleet.io/delivery-model in (agent-managed,agent-autonomous)')}`,
        `pullfleet status: statically delivered apps are not shown (grant list on applications.argoproj.io to see them): ${refused(PULL_LABEL)}`,
        `pullfleet status: no application runs on cluster "east" on the hub at ${hub.server.url}: the hub has no clusters with applications`,
        '',
      ].join('\n'),
    });
  });
});

describe('pullfleet status --image lists its matches first', () => {
  const hub = kubeconfigServer('pullfleet-status-image-');

  test('GIVEN one match among 46 apps without a resource summary THEN the match is the first row and the summary line counts the rest', async () => {
    const { store } = hub.server;
    const pulled = (cluster: string, status?: Application['status']): Application => {
      const app = hubApp(cluster, 'shop');
      app.metadata.labels = { [PULL_LABEL]: 'true' };
      return {
        ...app,
        spec: { ...app.spec, source: { repoURL: 'https://git.example/apps', path: 'shop' } },
        ...(status ? { status } : {}),
      };
    };
    for (let i = 0; i < 46; i++) store.create(pulled(`edge-${String(i).padStart(2, '0')}`));
    store.create(
      pulled('prod-1', {
        resources: [
          {
            group: 'apps',
            version: 'v1',
            kind: 'Deployment',
            namespace: 'shop',
            name: 'cart',
            status: 'Synced',
            health: { status: 'Healthy' },
          },
        ],
        summary: { images: ['registry.example.com/shop/cart:1.4.2'] },
      }),
    );

    const result = await spawnBinary(['status', '--kubeconfig', hub.kubeconfig, '--image', 'shop/cart']);

    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const lines = result.out.split('\n');
    expect(lines[1]).toBe(
      '47 applications on 47 clusters · 1 matching image · 46 notes on what the hub cannot see (listed last)',
    );
    expect(lines[3]).toMatch(/^prod-1 +prod-1-shop +registry\.example\.com\/shop\/cart:1\.4\.2$/);
    expect(lines.slice(4, 50).every((line) => line.startsWith('edge-'))).toBe(true);
  });
});
