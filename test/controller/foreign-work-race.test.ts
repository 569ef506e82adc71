/**
 * The real controller (client, informers, queue) against the in-process API double, with the race of a
 * foreign ManifestWork created just before its app forced rather than hoped for: the controller's
 * ManifestWork watch is held by the double, so its cache never sees the foreign works while the apps are
 * reconciled. The apps must be refused (not the works taken over), and delivered once the works are gone.
 */
import { afterEach, beforeEach, expect, test } from '@jest/globals';
import { destination, pino } from 'pino';
import { startController, type RunningController } from '../../src/controller/runtime/manager.js';
import { MANAGED_BY_LABEL } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { isControllerWorkFor } from '../../src/model/reconcile/propagation.js';
import { DELIVERY_ERROR_CONDITION } from '../../src/model/reconcile/status.js';
import { startFakeApiServer, type FakeApiServer } from '../double/fake-apiserver.js';
import { seedClusterSet, seedManagedCluster, seedPullApplication } from '../double/hub-seed.js';
import { waitFor } from '../support/wait.js';

const silent = pino({ level: process.env.E2E_LOG ?? 'silent' }, destination(2));
const APPS = 20;
const CLUSTERS = ['spoke1', 'spoke2'];

let server: FakeApiServer;
let controller: RunningController | undefined;

beforeEach(async () => {
  server = await startFakeApiServer({ implicitNamespaces: true });
  seedClusterSet(server.store, 'prod');
  for (const name of CLUSTERS) seedManagedCluster(server.store, name, 'prod');
});

afterEach(async () => {
  await controller?.stop();
  controller = undefined;
  await server.close();
});

test('GIVEN the controller’s ManifestWork watch held WHEN a foreign work is created just before each of 20 apps THEN no work is taken over, every app is refused, and every app is delivered once the works are deleted', async () => {
  // GIVEN the controller running, its first list of works done and its ManifestWork watch held by the server
  server.hangNext({ verb: 'watch', resource: 'manifestworks', client: 'controller' });
  controller = await startController({
    kubeConfig: server.kubeConfig({ client: 'controller' }),
    // A held watch is abandoned after the request timeout: far beyond this test, so the hold lasts.
    config: { leaderElection: false, requestTimeoutSeconds: 300 },
    logger: silent,
  });
  await controller.ready();
  await waitFor('the ManifestWork watch held', () => server.heldCount({ resource: 'manifestworks' }) === 1);

  // WHEN, for 20 apps, a work another tool manages is created at the app's work name, and the app right after
  const names = Array.from({ length: APPS }, (_, i) => `clash-${String(i).padStart(2, '0')}`);
  const targetOf = (i: number) => CLUSTERS[i % CLUSTERS.length];
  const workName = (i: number) => manifestWorkName('argocd', names[i]);
  const foreign = names.map((name, i) => {
    const work = server.store.create<ManifestWork>({
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name: workName(i), namespace: targetOf(i), labels: { [MANAGED_BY_LABEL]: 'someone-else' } },
      spec: { workload: { manifests: [] } },
    });
    seedPullApplication(server.store, { name, cluster: targetOf(i) });
    return work;
  });

  // THEN every app is refused with the condition naming the work, while the cache still has not seen the works
  const refusal = (i: number) =>
    `ManifestWork ${targetOf(i)}/${workName(i)} already exists and it is not managed by pullfleet`;
  for (let i = 0; i < APPS; i++)
    await waitFor(
      `the DeliveryError on ${names[i]}`,
      () =>
        server.store
          .find<Application>('applications', 'argocd', names[i])
          ?.status?.conditions?.some((c) => c.type === DELIVERY_ERROR_CONDITION && c.message?.includes(refusal(i))),
      { timeoutMs: 60_000, describe: () => server.store.find('applications', 'argocd', names[i]) },
    );
  expect(server.heldCount({ resource: 'manifestworks' })).toBe(1);
  // AND every foreign work is as it was created, and pullfleet wrote none of its own
  const versions = (works: ManifestWork[]) =>
    works.map((work) => `${work.metadata.namespace}/${work.metadata.name}@${work.metadata.resourceVersion}`).sort();
  expect(versions(server.store.list<ManifestWork>('manifestworks'))).toStrictEqual(versions(foreign));

  // WHEN the watch gets through (the works reach the cache) and then the foreign works are deleted
  server.releaseHung();
  for (let i = 0; i < APPS; i++) server.store.delete('manifestworks', targetOf(i), workName(i));

  // THEN every app is delivered by itself, and its condition goes
  for (let i = 0; i < APPS; i++)
    await waitFor(
      `${names[i]} delivered`,
      () => {
        const work = server.store.find<ManifestWork>('manifestworks', targetOf(i), workName(i));
        const app = server.store.find<Application>('applications', 'argocd', names[i]);
        return (
          work !== undefined &&
          isControllerWorkFor(work, 'argocd', names[i]) &&
          !(app?.status?.conditions ?? []).some((c) => c.type === DELIVERY_ERROR_CONDITION)
        );
      },
      { timeoutMs: 60_000, describe: () => server.store.find('applications', 'argocd', names[i])?.status },
    );
}, 180_000);
