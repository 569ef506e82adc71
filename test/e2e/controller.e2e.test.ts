/**
 * The real controller (startController) end to end against the in-process API double: every scenario
 * in scenarios.ts, each on a fresh server, plus what only the double can observe (request counters).
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { ARGOCD_API_VERSION } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application } from '../../src/model/core/types.js';
import { fakeCluster, type TestCluster } from '../support/cluster.js';
import { startFakeApiServer, type FakeApiServer } from '../double/fake-apiserver.js';
import { waitFor } from '../support/wait.js';
import { WorkAgent } from '../support/work-agent.js';
import { SCENARIOS, controllerStarter, fleetFor, hubApp, setUpFleet, type Fleet } from './scenarios.js';

let server: FakeApiServer;
let cluster: TestCluster;
let fleet: Fleet;
let controllers: ReturnType<typeof controllerStarter>;

beforeEach(async () => {
  server = await startFakeApiServer();
  cluster = fakeCluster(server);
  fleet = fleetFor('e2e');
  await setUpFleet(cluster, fleet);
  controllers = controllerStarter(cluster);
});

afterEach(async () => {
  await controllers.stopAll();
  await server.close();
});

describe('controller end to end on the API double', () => {
  test.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', async (_name, scenario) => {
    await scenario.run({
      cluster,
      fleet,
      agent: new WorkAgent(cluster),
      startController: (config, options) => controllers.start(config, options),
      timeoutMs: 20_000,
    });
  });

  test('GIVEN a converged fleet WHEN the controller resyncs everything THEN it issues no write at all', async () => {
    const controller = await controllers.start({ resyncSeconds: 1 });
    const names = ['a', 'b', 'c', 'd'];
    for (const [i, name] of names.entries())
      await cluster.create(hubApp(name, fleet.hubNamespace, fleet.clusters[i % 2]));
    const agent = new WorkAgent(cluster);
    for (const [i, name] of names.entries()) {
      await waitFor(`work for ${name}`, () =>
        server.store.find('manifestworks', fleet.clusters[i % 2], manifestWorkName(fleet.hubNamespace, name)),
      );
      await agent.report(fleet.clusters[i % 2], manifestWorkName(fleet.hubNamespace, name), {
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
      });
    }
    await waitFor('every hub app Healthy', () =>
      server.store.list<Application>('applications').every((a) => a.status?.health?.status === 'Healthy'),
    );
    const reconciles = async () => {
      const text = await controller.metrics();
      return [...text.matchAll(/^pullfleet_reconcile_total\{[^}]*controller="application"[^}]*\} (\d+)/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
    };
    server.resetCounts();
    const before = await reconciles();

    // Two full resyncs (every app reconciled at least twice more) with nothing changed.
    await waitFor('two resyncs', async () => (await reconciles()) >= before + 2 * names.length, { timeoutMs: 20_000 });

    expect(server.writeCount()).toBe(0);
    expect(server.store.list('manifestworks')).toHaveLength(names.length);
    expect(server.store.list({ apiVersion: ARGOCD_API_VERSION, kind: 'Application' })).toHaveLength(names.length);
  });

  test('GIVEN the cleanup finalizer cannot be written WHEN the app is deleted after its work exists THEN the work is still swept', async () => {
    server.failNext({ verb: 'patch', resource: 'applications', code: 500, times: 1_000_000 });
    await controllers.start();
    await cluster.create(hubApp('guestbook', fleet.hubNamespace, fleet.clusters[0]));
    const workName = manifestWorkName(fleet.hubNamespace, 'guestbook');
    await waitFor('the work', () => server.store.find('manifestworks', fleet.clusters[0], workName));
    expect(
      server.store.get<Application>('applications', fleet.hubNamespace, 'guestbook').metadata.finalizers,
    ).toBeUndefined();

    server.store.delete('applications', fleet.hubNamespace, 'guestbook');

    await waitFor(
      'the orphaned work to be swept',
      () => server.store.find('manifestworks', fleet.clusters[0], workName) === undefined,
    );
  });

  test('GIVEN the API server answers 500 and 409 to the first writes WHEN apps are created THEN the controller retries and delivers them', async () => {
    server.failNext({ verb: 'patch', resource: 'manifestworks', code: 500, times: 2 });
    server.failNext({ verb: 'patch', resource: 'applications', code: 409, times: 2 });
    await controllers.start();

    await cluster.create(hubApp('guestbook', fleet.hubNamespace, fleet.clusters[0]));

    await waitFor('the work', () =>
      server.store.find('manifestworks', fleet.clusters[0], manifestWorkName(fleet.hubNamespace, 'guestbook')),
    );
    expect(server.requestCount({ verb: 'patch', resource: 'manifestworks' })).toBeGreaterThanOrEqual(3);
  });
});
