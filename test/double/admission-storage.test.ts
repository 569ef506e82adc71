/** Checks the real server makes on every write that the double makes too: namespace lifecycle, pruning of unknown fields, date-time formats, size limits. */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import type { KubeObj } from './fake-apiserver.js';
import { APPS, WORKS, apply, application, failure, harness, manifestWork, merge, type Harness } from './helpers.js';

let h: Harness;

beforeEach(async () => {
  h = await harness();
});

afterEach(async () => {
  await h.server.close();
});

describe('namespace lifecycle', () => {
  test('fails when a namespaced object is created in a namespace that does not exist: 404 with the real Status message', async () => {
    const { code, status } = await failure(
      h.custom.createNamespacedCustomObject({
        ...APPS,
        namespace: 'nowhere',
        body: application('guestbook', 'nowhere'),
      }),
    );

    expect(code).toBe(404);
    expect(status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'NotFound',
      message: 'namespaces "nowhere" not found',
      details: { name: 'nowhere', kind: 'namespaces' },
    });
    expect(h.server.store.list('applications')).toStrictEqual([]);
  });

  test('fails when server-side apply would create an object in a namespace that does not exist: 404', async () => {
    const { code, status } = await failure(
      h.custom.patchNamespacedCustomObject(
        {
          ...WORKS,
          namespace: 'missing-cluster',
          name: 'w',
          body: manifestWork('w', 'missing-cluster'),
          fieldManager: 'pullfleet',
        },
        apply,
      ),
    );

    expect(code).toBe(404);
    expect(status.message).toBe('namespaces "missing-cluster" not found');
    expect(h.server.store.list('manifestworks')).toStrictEqual([]);
  });

  test('GIVEN the namespace is created afterwards WHEN the same create is retried THEN it succeeds', async () => {
    await failure(
      h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'late', body: application('guestbook', 'late') }),
    );

    await h.core.createNamespace({ body: { metadata: { name: 'late' } } });
    await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'late', body: application('guestbook', 'late') });

    expect(h.server.store.get('applications', 'late', 'guestbook').metadata.namespace).toBe('late');
  });

  test('fails when the store (another actor) creates into a missing namespace, with the same error', () => {
    expect(() => h.server.store.create(application('guestbook', 'nowhere'))).toThrow('namespaces "nowhere" not found');
  });

  test('GIVEN implicitNamespaces WHEN creating into a missing namespace THEN the write is accepted (the older, simpler double)', async () => {
    const loose = await harness({ implicitNamespaces: true, namespaces: [] });
    try {
      loose.server.store.create(application('guestbook', 'nowhere'));
      expect(loose.server.store.find('applications', 'nowhere', 'guestbook')).toBeDefined();
    } finally {
      await loose.server.close();
    }
  });
});

describe('pruning of unknown fields', () => {
  test('GIVEN an Application with fields outside the schema WHEN created THEN they are dropped and known ones kept', async () => {
    const body = application('guestbook');
    body.spec.sourceTypo = { path: 'x' };
    body.spec.source.notAField = true;
    body.topLevelJunk = 'x';

    const created = (await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body })) as KubeObj;

    expect(created.spec.sourceTypo).toBeUndefined();
    expect(created.spec.source).toStrictEqual({ repoURL: 'https://example.com/repo.git', path: 'guestbook' });
    expect(created.topLevelJunk).toBeUndefined();
    expect(h.server.store.get('applications', 'argocd', 'guestbook').spec.sourceTypo).toBeUndefined();
  });

  test('GIVEN x-kubernetes-preserve-unknown-fields WHEN a ManifestWork carries arbitrary manifests THEN they are kept whole, metadata included', async () => {
    const work = manifestWork('w', 'cluster1', {
      spec: {
        workload: {
          manifests: [
            {
              apiVersion: 'example.com/v1',
              kind: 'Anything',
              metadata: { name: 'x', labels: { a: 'b' } },
              spec: { deep: { nested: [1, { x: 2 }] } },
            },
          ],
        },
      },
    });

    await h.custom.createNamespacedCustomObject({ ...WORKS, namespace: 'cluster1', body: work });

    expect(h.server.store.get('manifestworks', 'cluster1', 'w').spec.workload.manifests).toStrictEqual(
      work.spec.workload.manifests,
    );
  });

  test('GIVEN a merge patch adding an unknown status field WHEN applied to an Application THEN the field is pruned and the known ones stored', async () => {
    h.server.store.create(application('guestbook'));

    const patched = (await h.custom.patchNamespacedCustomObject(
      {
        ...APPS,
        namespace: 'argocd',
        name: 'guestbook',
        body: { status: { health: { status: 'Healthy', bogus: 1 }, invented: 'x' } },
      },
      merge,
    )) as KubeObj;

    expect(patched.status).toStrictEqual({ health: { status: 'Healthy' } });
  });

  test('GIVEN the metadata of a custom resource WHEN it carries labels and annotations THEN pruning never touches metadata', async () => {
    const created = (await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook', 'argocd', {
        metadata: { labels: { a: 'b' }, annotations: { 'x.io/y': 'z' }, finalizers: ['x.io/f'] },
      }),
    })) as KubeObj;

    expect(created.metadata).toMatchObject({
      labels: { a: 'b' },
      annotations: { 'x.io/y': 'z' },
      finalizers: ['x.io/f'],
    });
  });
});

describe('date-time formats', () => {
  test('fails when an Application status carries a startedAt that is not RFC 3339: 422 naming the field, as the real server', async () => {
    h.server.store.create(application('guestbook'));

    const { code, status } = await failure(
      h.custom.patchNamespacedCustomObject(
        {
          ...APPS,
          namespace: 'argocd',
          name: 'guestbook',
          body: { status: { operationState: { operation: {}, phase: 'Running', startedAt: '1700000000' } } },
        },
        merge,
      ),
    );

    expect(code).toBe(422);
    expect(status.details.causes).toContainEqual({
      reason: 'FieldValueInvalid',
      field: 'status.operationState.startedAt',
      message:
        'Invalid value: "1700000000": status.operationState.startedAt in body must be of type date-time: "1700000000"',
    });
  });

  test('GIVEN an RFC 3339 startedAt with fractional seconds WHEN written THEN it is accepted', async () => {
    h.server.store.create(application('guestbook'));
    await h.custom.patchNamespacedCustomObject(
      {
        ...APPS,
        namespace: 'argocd',
        name: 'guestbook',
        body: {
          status: { operationState: { operation: {}, phase: 'Running', startedAt: '2030-01-01T00:00:00.123456Z' } },
        },
      },
      merge,
    );
    expect(h.server.store.get('applications', 'argocd', 'guestbook').status.operationState.startedAt).toBe(
      '2030-01-01T00:00:00.123456Z',
    );
  });
});

describe('size limits', () => {
  test('fails when a write body is over 3 MiB: 413 RequestEntityTooLarge, as the real server', async () => {
    const body = application('huge');
    body.spec.source.helm = { values: 'x'.repeat(3 * 1024 * 1024) };

    const { code, status } = await failure(
      h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body }),
    );

    expect(code).toBe(413);
    expect(status).toMatchObject({
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: limit is 3145728',
    });
  });

  test("fails when the stored object would be over 1.5 MiB: 500 with etcd's message, and nothing is stored", async () => {
    const body = application('big');
    body.spec.source.helm = { values: 'x'.repeat(1600 * 1024) };

    const { code, status } = await failure(
      h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body }),
    );

    expect(code).toBe(500);
    expect(status.message).toBe('etcdserver: request is too large');
    expect(h.server.store.find('applications', 'argocd', 'big')).toBeUndefined();
  });
});
