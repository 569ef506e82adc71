/** The second-writer helper: optimistic writes that race the controller's, replayable from a seed. */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { fakeCluster } from '../support/cluster.js';
import { bumpRevision, ConflictWriter, touchAnnotation, touchLabel } from '../support/conflict-writer.js';
import { APPS, application, failure, harness, merge, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.server.close();
});

const ref = (name: string) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', namespace: 'argocd', name });

describe('conflict writer', () => {
  test('GIVEN a second writer WHEN a client patches with the resourceVersion it read before THEN it gets 409 Conflict', async () => {
    const created = h.server.store.create(application('guestbook'));
    const writer = new ConflictWriter(fakeCluster(h.server), [ref('guestbook')], [touchAnnotation()], { seed: 1 });

    await writer.burst(1);
    const { code, status } = await failure(
      h.custom.patchNamespacedCustomObject(
        {
          ...APPS,
          namespace: 'argocd',
          name: 'guestbook',
          body: { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { mine: 'x' } } },
        },
        merge,
      ),
    );

    expect(writer.written).toBe(1);
    expect(code).toBe(409);
    expect(status.reason).toBe('Conflict');
  });

  test('GIVEN two writers racing on the same objects WHEN both run THEN every write lands (409s retried) and only their own fields change', async () => {
    for (const name of ['a', 'b']) h.server.store.create(application(name));
    const cluster = fakeCluster(h.server);
    const one = new ConflictWriter(
      cluster,
      [ref('a'), ref('b')],
      [touchAnnotation('one.example.com/t'), bumpRevision],
      { seed: 1 },
    );
    const two = new ConflictWriter(cluster, [ref('a'), ref('b')], [touchLabel('two.example.com/r')], { seed: 2 });

    await Promise.all([one.burst(25), two.burst(25)]);

    expect(one.written + two.written).toBe(50);
    expect(one.gaveUp + two.gaveUp).toBe(0);
    for (const name of ['a', 'b']) {
      const app = h.server.store.get('applications', 'argocd', name);
      expect(app.spec.destination).toStrictEqual({ server: 'https://kubernetes.default.svc', namespace: 'guestbook' });
      expect(Object.keys(app.metadata.labels ?? {}).every((k) => k === 'two.example.com/r')).toBe(true);
    }
  });

  test('GIVEN the same seed WHEN two writers run the same rounds THEN they pick the same objects and changes', async () => {
    for (const name of ['a', 'b', 'c']) h.server.store.create(application(name));
    const picks = async (seed: number) => {
      const seen: string[] = [];
      const writer = new ConflictWriter(
        fakeCluster(h.server),
        [ref('a'), ref('b'), ref('c')],
        [
          (current, round) => (
            seen.push(`${current.metadata.name}:${round}`),
            { metadata: { annotations: { s: String(seed) } } }
          ),
        ],
        { seed },
      );
      await writer.burst(10);
      return seen;
    };

    expect(await picks(5)).toStrictEqual(await picks(5));
    expect(await picks(5)).not.toStrictEqual(await picks(6));
  });

  test('GIVEN the object is deleted WHEN the writer targets it THEN the write is given up, nothing throws', async () => {
    const writer = new ConflictWriter(fakeCluster(h.server), [ref('gone')], [touchAnnotation()], { seed: 3 });
    expect(await writer.writeOnce()).toBe(false);
    expect(writer.gaveUp).toBe(1);
  });
});
