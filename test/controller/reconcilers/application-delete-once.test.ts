/**
 * A ManifestWork the controller deleted stays in the informer cache until the watch reports it gone. A
 * reconcile in between must not delete it again: the second DELETE used to go out (answered 404, taken for
 * success) and "deleted ManifestWork" was logged twice for one deletion.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { createApplicationReconciler } from '../../../src/controller/reconcilers/application.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import type { KubeWriter } from '../../../src/kube/client.js';
import type { ResourceKind } from '../../../src/kube/resources.js';
import type { Application, KubeObject, ManifestWork } from '../../../src/model/core/types.js';
import { isControllerWorkFor } from '../../../src/model/reconcile/propagation.js';
import { pullApplication, World } from '../../support/world.js';

const NS = 'argocd';
const KEY = `${NS}/guestbook`;

function app(cluster: string): Application {
  return pullApplication({ namespace: NS, cluster, workload: 'guestbook' });
}

/** The API server in front of a World whose deletes reach the cache only when the test says so. */
class LateDeleteEvents implements KubeWriter {
  readonly deletes: string[] = [];
  private readonly held: Array<() => Promise<void>> = [];

  constructor(private readonly world: World) {}

  apply<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    return this.world.apply(kind, object);
  }

  mergePatch<T extends KubeObject>(
    kind: ResourceKind,
    ns: string | undefined,
    name: string,
    patch: object,
  ): Promise<T> {
    return this.world.mergePatch(kind, ns, name, patch);
  }

  delete(kind: ResourceKind, namespace: string | undefined, name: string, options?: { uid?: string }): Promise<void> {
    this.deletes.push(`${kind.plural} ${namespace}/${name}`);
    this.held.push(() => this.world.delete(kind, namespace, name, options));
    return Promise.resolve();
  }

  /** The watch events of the deletes so far arrive. */
  async deliver(): Promise<void> {
    for (const event of this.held.splice(0)) await event();
  }

  list(): never {
    throw new Error('the application reconciler lists nothing directly');
  }
}

describe('application reconciler: a work it deleted, still in the cache', () => {
  let world: World;
  let server: LateDeleteEvents;
  let reconciler: Reconciler;

  beforeEach(() => {
    world = World.hub({ clusters: ['spoke1', 'spoke2'], namespace: NS });
    server = new LateDeleteEvents(world);
    reconciler = world.reconciler((context) => createApplicationReconciler({ ...context, writer: server }));
  });

  test('GIVEN an app moved to another cluster WHEN it is reconciled again before the old work’s delete event arrives THEN the old work is deleted once', async () => {
    world.put('Application', app('spoke1'));
    await world.settle(reconciler, KEY);
    expect(
      isControllerWorkFor(world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!, NS, 'guestbook'),
    ).toBe(true);

    world.put('Application', app('spoke2'));
    await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    expect(server.deletes).toStrictEqual(['manifestworks spoke1/argocd-guestbook']);

    await server.deliver();
    await world.settle(reconciler, KEY);
    expect(server.deletes).toStrictEqual(['manifestworks spoke1/argocd-guestbook']);
    expect(world.get('ManifestWork', 'spoke1/argocd-guestbook')).toBeUndefined();
    expect(
      isControllerWorkFor(world.get<ManifestWork>('ManifestWork', 'spoke2/argocd-guestbook')!, NS, 'guestbook'),
    ).toBe(true);
  });
});
