/**
 * Deletion with finalizers, schema validation of custom resources, and the double's fault injection
 * and request counters, all observed through client-node.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { Watch } from '@kubernetes/client-node';
import { waitFor } from '../support/wait.js';
import { APPS, WORKS, application, failure, harness, manifestWork, merge, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.server.close();
});

describe('delete', () => {
  test('GIVEN an object without finalizers WHEN deleted THEN it is gone and watchers see DELETED', async () => {
    h.server.store.create(application('guestbook'));
    const seen: string[] = [];
    const ctl = await new Watch(h.kc).watch(
      '/apis/argoproj.io/v1alpha1/applications',
      { resourceVersion: h.server.store.resourceVersion },
      (type: string) => seen.push(type),
      () => undefined,
    );

    await h.custom.deleteNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      name: 'guestbook',
      propagationPolicy: 'Foreground',
    });
    await waitFor('a DELETED event', () => seen.length >= 1);
    ctl.abort();

    expect(h.server.store.find('applications', 'argocd', 'guestbook')).toBeUndefined();
    expect(seen).toStrictEqual(['DELETED']);
  });

  test('GIVEN an object with finalizers WHEN deleted THEN it stays with a deletionTimestamp until the last finalizer goes', async () => {
    h.server.store.create(application('guestbook', 'argocd', { metadata: { finalizers: ['a.io/one', 'b.io/two'] } }));

    await h.custom.deleteNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'guestbook' });
    const marked = h.server.store.get('applications', 'argocd', 'guestbook');
    await h.custom.patchNamespacedCustomObject(
      { ...APPS, namespace: 'argocd', name: 'guestbook', body: { metadata: { finalizers: ['b.io/two'] } } },
      merge,
    );
    const stillThere = h.server.store.find('applications', 'argocd', 'guestbook');
    await h.custom.patchNamespacedCustomObject(
      { ...APPS, namespace: 'argocd', name: 'guestbook', body: { metadata: { finalizers: null } } },
      merge,
    );

    expect(marked.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(stillThere?.metadata.finalizers).toStrictEqual(['b.io/two']);
    expect(h.server.store.find('applications', 'argocd', 'guestbook')).toBeUndefined();
    const { code } = await failure(
      h.custom.getNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'guestbook' }),
    );
    expect(code).toBe(404);
  });

  test('fails when adding a finalizer to an object being deleted: 422 Forbidden', async () => {
    h.server.store.create(application('guestbook', 'argocd', { metadata: { finalizers: ['a.io/one'] } }));
    await h.custom.deleteNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'guestbook' });

    const { code, status } = await failure(
      h.custom.patchNamespacedCustomObject(
        {
          ...APPS,
          namespace: 'argocd',
          name: 'guestbook',
          body: { metadata: { finalizers: ['a.io/one', 'c.io/new'] } },
        },
        merge,
      ),
    );

    expect(code).toBe(422);
    expect(status.message).toContain(
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted',
    );
  });

  test('fails when a delete precondition names another uid: 409 and the object stays', async () => {
    h.server.store.create(application('guestbook'));

    const { code, status } = await failure(
      h.custom.deleteNamespacedCustomObject({
        ...APPS,
        namespace: 'argocd',
        name: 'guestbook',
        body: { preconditions: { uid: 'someone-else' } },
      }),
    );

    expect(code).toBe(409);
    expect(status.message).toContain('Precondition failed: UID in precondition: someone-else');
    expect(h.server.store.find('applications', 'argocd', 'guestbook')).toBeDefined();
  });

  test('fails when the object is missing: 404', async () => {
    const { code } = await failure(
      h.custom.deleteNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'nope' }),
    );

    expect(code).toBe(404);
  });

  test('GIVEN a namespace with objects WHEN the namespace is deleted THEN its objects go too (finalizers honoured)', async () => {
    await h.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    h.server.store.create(application('plain', 'doomed'));
    h.server.store.create(application('held', 'doomed', { metadata: { finalizers: ['a.io/one'] } }));
    h.server.store.create(application('elsewhere', 'team-b'));

    await h.core.deleteNamespace({ name: 'doomed' });

    expect(
      h.server.store.list('applications').map((a) => [a.metadata.name, Boolean(a.metadata.deletionTimestamp)]),
    ).toStrictEqual([
      ['held', true],
      ['elsewhere', false],
    ]);
  });
});

describe('validation against the imported CRD schemas', () => {
  test('fails when an Application status has sync without sync.status: 422 Invalid, as the real server', async () => {
    h.server.store.create(application('guestbook'));

    const { code, status } = await failure(
      h.custom.patchNamespacedCustomObject(
        { ...APPS, namespace: 'argocd', name: 'guestbook', body: { status: { sync: { revision: 'abc' } } } },
        merge,
      ),
    );

    expect(code).toBe(422);
    expect(status).toMatchObject({
      reason: 'Invalid',
      message: 'Application.argoproj.io "guestbook" is invalid: status.sync.status: Required value',
      details: { causes: [{ reason: 'FieldValueRequired', field: 'status.sync.status' }] },
    });
  });

  test('fails when an Application operationState lacks operation and startedAt: 422 naming both fields', async () => {
    h.server.store.create(application('guestbook'));

    const { code, status } = await failure(
      h.custom.patchNamespacedCustomObject(
        { ...APPS, namespace: 'argocd', name: 'guestbook', body: { status: { operationState: { phase: 'Running' } } } },
        merge,
      ),
    );

    expect(code).toBe(422);
    expect(status.details.causes.map((c: { field: string }) => c.field).sort()).toStrictEqual([
      'status.operationState.operation',
      'status.operationState.startedAt',
    ]);
  });

  test('fails when a ManifestWork field has a value outside its enum: 422', async () => {
    const body = manifestWork('w', 'cluster1', { spec: { deleteOption: { propagationPolicy: 'Sometimes' } } });

    const { code, status } = await failure(
      h.custom.createNamespacedCustomObject({ ...WORKS, namespace: 'cluster1', body }),
    );

    expect(code).toBe(422);
    expect(status.details.causes[0]).toMatchObject({
      reason: 'FieldValueNotSupported',
      field: 'spec.deleteOption.propagationPolicy',
    });
  });

  test.each([
    [{ labels: { tier: 'x'.repeat(64) } }, 'metadata.labels: Invalid value'],
    [{ labels: { 'bad key!': 'v' } }, 'metadata.labels: Invalid value: "bad key!"'],
    [
      { annotations: { 'Example.COM/x': 'v' } },
      'metadata.annotations: Invalid value: "Example.COM/x": prefix part must be a lowercase RFC 1123 subdomain',
    ],
  ])('fails when metadata %j is not valid for any kind: 422', async (metadata, message) => {
    const { code, status } = await failure(
      h.core.createNamespacedConfigMap({ namespace: 'ns', body: { metadata: { name: 'c', ...metadata } } }),
    );

    expect(code).toBe(422);
    expect(status.message).toContain(message);
  });

  test('GIVEN a schema default WHEN the field is omitted THEN the server fills it in', async () => {
    const body = manifestWork('w', 'cluster1', { spec: { deleteOption: {} } });

    const created = await h.custom.createNamespacedCustomObject({ ...WORKS, namespace: 'cluster1', body });

    expect(created.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
  });

  test('fails when a store write is invalid too: the same error reaches tests acting as other actors', () => {
    h.server.store.create(application('guestbook'));

    expect(() =>
      h.server.store.patch('applications', 'argocd', 'guestbook', 'merge', { status: { sync: {} } }),
    ).toThrow('Application.argoproj.io "guestbook" is invalid: status.sync.status: Required value');
  });
});

describe('fault injection and counters', () => {
  test.each([
    [500, 'InternalError'],
    [429, 'TooManyRequests'],
    [409, 'Conflict'],
  ])(
    'GIVEN failNext %i for patch applications WHEN the client patches twice THEN the first fails with %s and the second succeeds',
    async (code, reason) => {
      h.server.store.create(application('guestbook'));
      h.server.failNext({ verb: 'patch', resource: 'applications', code });
      const patch = () =>
        h.custom.patchNamespacedCustomObject(
          { ...APPS, namespace: 'argocd', name: 'guestbook', body: { spec: { project: 'p' } } },
          merge,
        );

      const first = await failure(patch());
      const second = await patch();

      expect(first.code).toBe(code);
      expect(first.status.reason).toBe(reason);
      expect(second.spec.project).toBe('p');
    },
  );

  test('GIVEN a fault for the status subresource WHEN the main endpoint is written THEN it is unaffected', async () => {
    h.server.store.create(manifestWork('w'));
    h.server.failNext({ verb: 'update', resource: 'manifestworks/status', code: 500, times: 2 });
    const work = h.server.store.get('manifestworks', 'cluster1', 'w');

    await h.custom.replaceNamespacedCustomObject({ ...WORKS, namespace: 'cluster1', name: 'w', body: work });
    const statusFailure = await failure(
      h.custom.replaceNamespacedCustomObjectStatus({ ...WORKS, namespace: 'cluster1', name: 'w', body: work }),
    );

    expect(statusFailure.code).toBe(500);
  });

  test('GIVEN requests of several verbs WHEN counted THEN counters split by verb and resource and writes sum create/update/patch/delete', async () => {
    await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('a') });
    await h.custom.getNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'a' });
    await h.custom.listClusterCustomObject({ ...APPS });
    await h.custom.patchNamespacedCustomObject(
      { ...APPS, namespace: 'argocd', name: 'a', body: { spec: { project: 'p' } } },
      merge,
    );
    await h.custom.deleteNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'a' });
    h.server.store.create(application('by-store'));

    expect(h.server.requestCounts()).toStrictEqual({
      'create applications.argoproj.io': 1,
      'delete applications.argoproj.io': 1,
      'get applications.argoproj.io': 1,
      'list applications.argoproj.io': 1,
      'patch applications.argoproj.io': 1,
    });
    expect(h.server.writeCount('applications')).toBe(3);
    expect(h.server.writeCount('manifestworks')).toBe(0);
    h.server.resetCounts();
    expect(h.server.writeCount()).toBe(0);
  });
});
