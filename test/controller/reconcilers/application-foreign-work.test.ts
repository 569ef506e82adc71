/**
 * A ManifestWork pullfleet does not manage at the name a hub Application's work takes, created just before
 * the app, so the API server holds it while the informer cache has not seen it yet. The world here is the
 * in-memory cache plus a server layer that keeps such objects out of the cache until the test delivers
 * their watch event: exactly the ordering of the race, with no timing involved.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import {
  createApplicationReconciler,
  LAGGING_REQUEUE_MS,
  UNSEEN_WORK_RECHECK_MS,
} from '../../../src/controller/reconcilers/application.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { objectKey } from '../../../src/kube/cache.js';
import { KubeApiError, type KubeWriter } from '../../../src/kube/client.js';
import type { ResourceKind } from '../../../src/kube/resources.js';
import { CLEANUP_FINALIZER, MANAGED_BY_LABEL } from '../../../src/model/core/keys.js';
import type { Application, KubeObject, ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import { isControllerWorkFor } from '../../../src/model/reconcile/propagation.js';
import { DELIVERY_ERROR_CONDITION } from '../../../src/model/reconcile/status.js';
import { pullApplication, World } from '../../support/world.js';

const NS = 'argocd';
const KEY = `${NS}/guestbook`;
const WORK1 = 'spoke1/argocd-guestbook';
const WORK2 = 'spoke2/argocd-guestbook';
const REFUSAL = (work: string) =>
  `ManifestWork ${work} already exists and it is not managed by pullfleet: refusing to take it over; delete it or rename the Application`;

function app(cluster = 'spoke1'): Application {
  return pullApplication({ namespace: NS, cluster, workload: 'guestbook' });
}

/** A work another tool wrote at `key` (`cluster/name`). */
function foreignWork(key: string): ManifestWork {
  const [namespace, name] = key.split('/');
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name, namespace, labels: { [MANAGED_BY_LABEL]: 'someone-else' } },
    spec: {
      workload: {
        manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: 'default' } }],
      },
    },
  };
}

/**
 * The API server in front of a World: objects it holds whose watch event has not reached the cache yet
 * (`unseen`) answer writes and reads as the server would; `deliver` lets the event through.
 */
class LaggingServer implements KubeWriter {
  private readonly unseen = new Map<string, KubeObject>();
  private version = 10_000;

  constructor(private readonly world: World) {}

  /** `object` is created on the server; the cache does not know it yet. */
  createUnseen<T extends KubeObject>(kindId: string, object: T): T {
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(++this.version);
    stored.metadata.uid = `uid-unseen-${objectKey(stored)}`;
    this.unseen.set(`${kindId}:${objectKey(stored)}`, stored);
    return structuredClone(stored);
  }

  /** The server's copy of an object the cache has not seen (undefined once delivered or never created). */
  unseenObject<T extends KubeObject>(kindId: string, key: string): T | undefined {
    const found = this.unseen.get(`${kindId}:${key}`);
    return found ? (structuredClone(found) as T) : undefined;
  }

  /** Someone deletes an unseen object, and the cache never hears of it (its watch was down meanwhile). */
  deleteUnseen(kindId: string, key: string): void {
    if (!this.unseen.delete(`${kindId}:${key}`)) throw new Error(`nothing unseen at ${kindId} ${key}`);
  }

  /** The watch event of an unseen object arrives: the cache gets it, and the watches hear of it. */
  deliver(kindId: string, key: string): void {
    const object = this.unseen.get(`${kindId}:${key}`);
    if (!object) throw new Error(`nothing unseen at ${kindId} ${key}`);
    this.unseen.delete(`${kindId}:${key}`);
    this.world.put(kindId, object);
  }

  async apply<T extends KubeObject>(kind: ResourceKind, object: T): Promise<T> {
    const key = objectKey(object);
    const stored = this.unseen.get(`${kind.id}:${key}`);
    if (!stored) return this.world.apply(kind, object);
    // As kube-apiserver: a resourceVersion in the applied object is a precondition.
    const wanted = object.metadata.resourceVersion;
    if (wanted !== undefined && wanted !== stored.metadata.resourceVersion)
      throw new KubeApiError(409, `${key}: the object has been modified`, 'Conflict');
    // Otherwise a forced apply takes the object over: its fields become the applier's.
    const taken = {
      ...stored,
      ...structuredClone(object),
      metadata: {
        ...stored.metadata,
        ...structuredClone(object.metadata),
        uid: stored.metadata.uid,
        resourceVersion: String(++this.version),
      },
    } as T;
    this.unseen.set(`${kind.id}:${key}`, taken);
    return structuredClone(taken);
  }

  mergePatch<T extends KubeObject>(
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    patch: object,
  ): Promise<T> {
    return this.world.mergePatch(kind, namespace, name, patch);
  }

  delete(kind: ResourceKind, namespace: string | undefined, name: string, options?: { uid?: string }): Promise<void> {
    return this.world.delete(kind, namespace, name, options);
  }

  /** A live read: the server's copy, whether or not the cache has it. */
  async get<T extends KubeObject>(kind: ResourceKind, namespace: string | undefined, name: string): Promise<T> {
    const key = namespace ? `${namespace}/${name}` : name;
    const found = this.unseenObject<T>(kind.id, key) ?? this.world.get<T>(kind.id, key);
    if (!found) throw new KubeApiError(404, `${kind.plural} "${name}" not found`, 'NotFound');
    return found;
  }

  list(): never {
    throw new Error('the application reconciler lists nothing directly');
  }
}

const hubApp = (world: World) => world.get<Application>('Application', KEY)!;
const deliveryError = (world: World) =>
  hubApp(world).status?.conditions?.find((c) => c.type === DELIVERY_ERROR_CONDITION);

describe('application reconciler: a foreign work at the app’s work name that the cache has not seen yet', () => {
  let world: World;
  let server: LaggingServer;
  let reconciler: Reconciler;
  const reconcile = () => reconciler.reconcile(KEY, { enqueuedAt: Date.now() });

  beforeEach(() => {
    world = World.hub({ clusters: ['spoke1', 'spoke2'], namespace: NS });
    server = new LaggingServer(world);
    reconciler = world.reconciler((context) =>
      createApplicationReconciler({ ...context, writer: server, reader: server }),
    );
  });

  test('fails when the work was created just before the app: the work is not taken over and the app says so at once', async () => {
    // GIVEN a foreign work on the server, its watch event not yet in the cache, and then the app
    const foreign = server.createUnseen('ManifestWork', foreignWork(WORK1));
    world.put('Application', app());

    // WHEN the app's first reconcile runs before the work's event arrives
    const result = await reconcile();

    // THEN the foreign work is exactly as it was, pullfleet has no work, and the app carries the refusal
    expect(server.unseenObject('ManifestWork', WORK1)).toStrictEqual(foreign);
    expect(world.cache.keys('ManifestWork')).toStrictEqual([]);
    expect(deliveryError(world)?.message).toBe(REFUSAL(WORK1));
    expect(hubApp(world).metadata.finalizers).toStrictEqual([CLEANUP_FINALIZER]);
    // AND it looks again later, in case the work goes before the cache ever sees it
    expect(result).toStrictEqual({ requeueAfterMs: UNSEEN_WORK_RECHECK_MS });
  });

  test('GIVEN the refusal on the app WHEN the foreign work is deleted before the cache ever saw it THEN the recheck delivers the app', async () => {
    server.createUnseen('ManifestWork', foreignWork(WORK1));
    world.put('Application', app());
    await reconcile();
    expect(deliveryError(world)?.message).toBe(REFUSAL(WORK1));

    world.enqueued.length = 0;
    server.deleteUnseen('ManifestWork', WORK1);
    // No event: only the requeue the refusal asked for brings the app back.
    expect(world.enqueued).toStrictEqual([]);
    await world.settle(reconciler, KEY);

    expect(isControllerWorkFor(world.get<ManifestWork>('ManifestWork', WORK1)!, NS, 'guestbook')).toBe(true);
    expect(deliveryError(world)).toBeUndefined();
  });

  test('GIVEN the refusal on the app WHEN the work’s watch event arrives THEN the app is looked at again and nothing changes', async () => {
    server.createUnseen('ManifestWork', foreignWork(WORK1));
    world.put('Application', app());
    await reconcile();
    const refused = hubApp(world);
    expect(deliveryError(world)?.message).toBe(REFUSAL(WORK1));

    world.enqueued.length = 0;
    server.deliver('ManifestWork', WORK1);
    expect(world.enqueued).toStrictEqual([KEY]);
    const writes = world.writes.length;
    await reconcile();

    expect(world.writes.length).toBe(writes);
    expect(hubApp(world)).toStrictEqual(refused);
  });

  test.each([
    ['seen by the cache before the app', false],
    ['seen by the cache only after the app was refused', true],
  ])(
    'GIVEN a foreign work %s and the refusal on the app WHEN the work is deleted THEN the app is woken and delivered by itself, and the condition goes',
    async (_, late) => {
      if (late) server.createUnseen('ManifestWork', foreignWork(WORK1));
      else world.put('ManifestWork', foreignWork(WORK1));
      world.put('Application', app());
      await reconcile();
      if (late) server.deliver('ManifestWork', WORK1);
      await world.settle(reconciler, KEY);
      expect(deliveryError(world)?.message).toBe(REFUSAL(WORK1));
      // A work without hub annotations: only the app's target-work index can wake the app.

      world.enqueued.length = 0;
      world.remove('ManifestWork', WORK1);
      expect(world.enqueued).toStrictEqual([KEY]);
      await world.settle(reconciler, KEY);

      const work = world.get<ManifestWork>('ManifestWork', WORK1)!;
      expect(isControllerWorkFor(work, NS, 'guestbook')).toBe(true);
      expect(deliveryError(world)).toBeUndefined();
    },
  );

  test('fails when a retarget meets a foreign work the cache has not seen: the old work stays, the foreign one is untouched', async () => {
    // GIVEN the app delivered to spoke1, and a foreign work at its name on spoke2 the cache has not seen
    world.put('Application', app());
    await world.settle(reconciler, KEY);
    const delivered = world.get<ManifestWork>('ManifestWork', WORK1);
    const foreign = server.createUnseen('ManifestWork', foreignWork(WORK2));

    // WHEN the app is retargeted to spoke2
    world.put('Application', app('spoke2'));
    await reconcile();

    // THEN nothing was written to either work, and the app says why it is not delivered to spoke2
    expect(server.unseenObject('ManifestWork', WORK2)).toStrictEqual(foreign);
    expect(world.get('ManifestWork', WORK1)).toStrictEqual(delivered);
    expect(deliveryError(world)?.message).toBe(REFUSAL(WORK2));
  });

  test('GIVEN the app’s own work written by an earlier leader, not yet in the cache WHEN the app reconciles THEN it is neither refused nor rewritten, and it looks again shortly', async () => {
    // The earlier leader's work: pullfleet's labels and the app's annotations.
    const own = server.createUnseen('ManifestWork', buildManifestWork(app()));
    world.put('Application', app());

    const result = await reconcile();

    expect(result).toStrictEqual({ requeueAfterMs: LAGGING_REQUEUE_MS });
    expect(server.unseenObject('ManifestWork', WORK1)).toStrictEqual(own);
    expect(hubApp(world).status?.conditions ?? []).toStrictEqual([]);
    // Its watch event arrives: the app goes on with its own work.
    server.deliver('ManifestWork', WORK1);
    await world.settle(reconciler, KEY);
    expect(deliveryError(world)).toBeUndefined();
    expect(world.get<ManifestWork>('ManifestWork', WORK1)!.metadata.uid).toBe(own.metadata.uid);
  });
});
