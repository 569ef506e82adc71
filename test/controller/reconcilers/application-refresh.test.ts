/**
 * A refresh the applicationset-controller (or anyone) puts on a hub Application travels to the spoke in the
 * work and stays on the hub app until the spoke reports a newer reconciledAt: its removal is then the change
 * the applicationset-controller requeues on, with the fresh reconciledAt in the same write.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { createApplicationReconciler } from '../../../src/controller/reconcilers/application.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { REFRESH_ANNOTATION, SPEC_HASH_ANNOTATION } from '../../../src/model/core/keys.js';
import type { Application, ManifestWork } from '../../../src/model/core/types.js';
import { pullApplication, World } from '../../support/world.js';
import { applicationFeedback, workStatus } from '../../support/work-status.js';

const KEY = 'argocd/web';
const WORK = 'east/argocd-web';

function app(): Application {
  return pullApplication({ name: 'web', cluster: 'east' });
}

function report(world: World, reconciledAt: string): void {
  const work = world.get<ManifestWork>('ManifestWork', WORK)!;
  const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application') as unknown as Application;
  const values = {
    specHash: payload.metadata.annotations![SPEC_HASH_ANNOTATION],
    syncStatus: 'Synced',
    healthStatus: 'Healthy',
    reconciledAt,
  };
  world.put('ManifestWork', {
    ...work,
    status: workStatus([applicationFeedback({ name: 'web', namespace: 'argocd', ordinal: 0, values })], {
      type: 'Applied',
      status: 'True',
      reason: 'x',
      message: 'applied',
    }),
  });
}

describe('refresh forwarding', () => {
  let world: World;
  let reconciler: Reconciler;

  beforeEach(() => {
    world = new World();
    world.clock = new Date('2026-03-01T12:00:00Z');
    world.addCluster('east');
    reconciler = world.reconciler(createApplicationReconciler, { relaxTenancy: true });
  });

  test('GIVEN a refresh on an app the spoke reports on WHEN forwarded THEN it stays on the hub app until the spoke reconciled again, then leaves with the new reconciledAt in one write', async () => {
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    report(world, '2026-03-01T11:59:00Z');
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.status!.reconciledAt).toBe('2026-03-01T11:59:00Z');

    const withRefresh = world.get<Application>('Application', KEY)!;
    world.put('Application', {
      ...withRefresh,
      metadata: {
        ...withRefresh.metadata,
        annotations: { ...withRefresh.metadata.annotations, [REFRESH_ANNOTATION]: 'normal' },
      },
    });
    await world.settle(reconciler, KEY);
    const payload = () =>
      world
        .get<ManifestWork>('ManifestWork', WORK)!
        .spec.workload.manifests.find((m) => m.kind === 'Application') as unknown as Application;
    expect(payload().metadata.annotations?.[REFRESH_ANNOTATION]).toBe('normal');
    expect(world.get<Application>('Application', KEY)!.metadata.annotations?.[REFRESH_ANNOTATION]).toBe('normal');

    const writes = world.writes.length;
    report(world, '2026-03-01T12:00:04Z');
    await world.settle(reconciler, KEY);
    const hub = world.get<Application>('Application', KEY)!;
    expect(hub.metadata.annotations?.[REFRESH_ANNOTATION]).toBeUndefined();
    expect(hub.status!.reconciledAt).toBe('2026-03-01T12:00:04Z');
    // One write to the hub app carried both (the work is written again without the refresh).
    const hubWrites = world.writes.slice(writes).filter((w) => w.resource === 'applications');
    expect(hubWrites).toHaveLength(1);
  });
});
