/**
 * What the manager's writer sends: a merge patch that changes nothing in the cached object is not sent
 * (key order, equal values), one that removes something always is; and a burst of new apps gets every work
 * written before the apps' own first writes (cleanup finalizer, first status), with two writes per app in
 * all. Runs the real controller against the in-process API double.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { startController, type RunningController } from '../../../src/controller/runtime/manager.js';
import { patchChangesNothing } from '../../../src/controller/runtime/writer.js';
import { CLEANUP_FINALIZER } from '../../../src/model/core/keys.js';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../../double/fake-apiserver.js';
import { seedClusterSet, seedManagedCluster, seedPullApplication } from '../../double/hub-seed.js';
import { waitFor } from '../../support/wait.js';

const silent = pino({ level: 'silent' });

describe('patchChangesNothing', () => {
  const app = {
    metadata: { name: 'a', resourceVersion: '7', finalizers: ['x'] },
    status: {
      sync: { status: 'Synced', revision: 'abc' },
      conditions: [{ type: 'T', message: 'm', lastTransitionTime: 't' }],
    },
  };

  test('GIVEN a patch of values the object has, in another key order THEN it changes nothing', () => {
    expect(
      patchChangesNothing(app, {
        metadata: { resourceVersion: '6', finalizers: ['x'] },
        status: { conditions: [{ lastTransitionTime: 't', message: 'm', type: 'T' }], sync: { revision: 'abc' } },
      }),
    ).toBe(true);
  });

  test('GIVEN a new value, a removal or a missing object THEN it changes something', () => {
    expect(patchChangesNothing(app, { status: { sync: { revision: 'def' } } })).toBe(false);
    expect(patchChangesNothing(app, { status: { health: null } })).toBe(false);
    expect(patchChangesNothing(app, { status: { health: { status: 'Healthy' } } })).toBe(false);
    expect(patchChangesNothing(undefined, { status: {} })).toBe(false);
  });
});

describe('writes of a burst of new apps', () => {
  let server: FakeApiServer;
  const running: RunningController[] = [];

  beforeEach(async () => {
    server = await startFakeApiServer({ implicitNamespaces: true });
    const store = server.store;
    seedClusterSet(store, 'prod');
    seedManagedCluster(store, 'east', 'prod');
    for (let i = 0; i < 20; i++) seedPullApplication(store, { name: `app-${i}`, cluster: 'east' });
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((controller) => controller.stop()));
    await server.close();
  });

  test('GIVEN 20 new apps WHEN one worker delivers them THEN every work is written before the first app write, and each app costs two writes', async () => {
    const controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { leaderElection: false, workers: 1, clusterSecrets: false, fleetReports: false },
      logger: silent,
    });
    running.push(controller);
    await controller.ready();
    await waitFor(
      'every app with its finalizer and a status',
      () =>
        server.store
          .list<KubeObj>('applications')
          .every((app) => (app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER) && app.status?.sync?.status),
      { timeoutMs: 20_000 },
    );
    const writes = server.requestLog({ verb: ['patch', 'create', 'update', 'delete'] });
    const firstAppWrite = writes.findIndex((r) => r.resource.startsWith('applications'));
    expect(writes.slice(0, firstAppWrite).filter((r) => r.resource.startsWith('manifestworks'))).toHaveLength(20);
    expect(server.writeCount('manifestworks')).toBe(20);
    expect(server.writeCount('applications')).toBe(20);
  });
});
