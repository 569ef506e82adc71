/**
 * The API double answers create / get / update / delete like the real API server, through the real
 * client-node: server-set metadata, one global resourceVersion, 404 / 409 Status objects, generation,
 * and the status subresource rules.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { APPS, WORKS, application, failure, harness, manifestWork, merge, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.server.close();
});

describe('create and get', () => {
  test('GIVEN a new Application WHEN it is created THEN the server sets uid, creationTimestamp, generation 1 and a resourceVersion', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook'),
    });

    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.metadata.generation).toBe(1);
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(0);
    const read = await h.custom.getNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'guestbook' });
    expect(read).toStrictEqual(created);
  });

  test('GIVEN client-supplied uid and resourceVersion WHEN creating THEN the server ignores them', async () => {
    const body = application('guestbook', 'argocd', { metadata: { uid: 'mine', resourceVersion: '999' } });
    const created = await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body });

    expect(created.metadata.uid).not.toBe('mine');
    expect(created.metadata.resourceVersion).not.toBe('999');
  });

  test('fails when the name already exists: 409 AlreadyExists', async () => {
    await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('guestbook') });

    const { code, status } = await failure(
      h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('guestbook') }),
    );

    expect(code).toBe(409);
    expect(status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'AlreadyExists',
      code: 409,
      message: 'applications.argoproj.io "guestbook" already exists',
    });
  });

  test('fails when the object is missing: 404 NotFound Status', async () => {
    const { code, status } = await failure(
      h.custom.getNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'nope' }),
    );

    expect(code).toBe(404);
    expect(status).toMatchObject({
      reason: 'NotFound',
      message: 'applications.argoproj.io "nope" not found',
      details: { name: 'nope', group: 'argoproj.io', kind: 'applications' },
    });
  });

  test('fails when the name is not a DNS subdomain: 422 Invalid', async () => {
    const { code, status } = await failure(
      h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('Not_Valid') }),
    );

    expect(code).toBe(422);
    expect(status.reason).toBe('Invalid');
    expect(status.message).toContain('metadata.name: Invalid value: "Not_Valid"');
  });

  test('GIVEN core kinds WHEN namespaces, secrets and leases are written THEN they are served at their core and group paths', async () => {
    await h.core.createNamespace({ body: { metadata: { name: 'hub-system' } } });
    await h.core.createNamespacedSecret({
      namespace: 'hub-system',
      body: {
        metadata: { name: 'cluster1', labels: { 'argocd.argoproj.io/secret-type': 'cluster' } },
        stringData: { name: 'cluster1' },
      },
    });
    await h.coordination.createNamespacedLease({
      namespace: 'hub-system',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
    });

    expect((await h.core.readNamespace({ name: 'hub-system' })).metadata?.name).toBe('hub-system');
    expect(
      (await h.core.readNamespacedSecret({ namespace: 'hub-system', name: 'cluster1' })).metadata?.labels,
    ).toStrictEqual({ 'argocd.argoproj.io/secret-type': 'cluster' });
    expect(
      (await h.coordination.readNamespacedLease({ namespace: 'hub-system', name: 'leader' })).spec?.holderIdentity,
    ).toBe('a');
  });
});

describe('core kinds', () => {
  test('GIVEN an Event with generateName WHEN created THEN the server picks a unique name with that prefix', async () => {
    const body = {
      metadata: { generateName: 'guestbook.' },
      involvedObject: { kind: 'Application', name: 'guestbook', namespace: 'argocd' },
      reason: 'Delivered',
      message: 'ok',
      type: 'Normal',
    };

    const first = await h.core.createNamespacedEvent({ namespace: 'argocd', body });
    const second = await h.core.createNamespacedEvent({ namespace: 'argocd', body });

    expect(first.metadata?.name).toMatch(/^guestbook\.[a-z0-9]{5}$/);
    expect(second.metadata?.name).not.toBe(first.metadata?.name);
    const listed = await h.core.listNamespacedEvent({
      namespace: 'argocd',
      fieldSelector: 'involvedObject.name=guestbook',
    });
    expect(listed.items).toHaveLength(2);
  });

  test('GIVEN a ServiceAccount and a Lease WHEN updated with a stale resourceVersion THEN 409, and with the current one THEN stored', async () => {
    await h.core.createNamespacedServiceAccount({
      namespace: 'pullfleet-system',
      body: { metadata: { name: 'controller' } },
    });
    const lease = await h.coordination.createNamespacedLease({
      namespace: 'pullfleet-system',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a' } },
    });
    const renewed = await h.coordination.replaceNamespacedLease({
      namespace: 'pullfleet-system',
      name: 'leader',
      body: { ...lease, spec: { holderIdentity: 'a', leaseTransitions: 0 } },
    });

    const stale = await failure(
      h.coordination.replaceNamespacedLease({
        namespace: 'pullfleet-system',
        name: 'leader',
        body: { ...lease, spec: { holderIdentity: 'b' } },
      }),
    );

    expect(stale.code).toBe(409);
    expect(renewed.spec?.holderIdentity).toBe('a');
    expect(
      (await h.core.readNamespacedServiceAccount({ namespace: 'pullfleet-system', name: 'controller' })).metadata?.uid,
    ).toBeDefined();
  });
});

describe('resourceVersion and update', () => {
  test('GIVEN writes to different kinds WHEN each is stored THEN resourceVersions come from one increasing counter', async () => {
    const a = await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('a') });
    const w = await h.custom.createNamespacedCustomObject({ ...WORKS, namespace: 'cluster1', body: manifestWork('w') });
    const b = await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('b') });

    const rvs = [a, w, b].map((o) => Number(o.metadata.resourceVersion));
    expect(rvs[1]).toBeGreaterThan(rvs[0]);
    expect(rvs[2]).toBeGreaterThan(rvs[1]);
  });

  test('fails when a PUT carries a stale resourceVersion: 409 Conflict', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook'),
    });
    await h.custom.replaceNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      name: 'guestbook',
      body: { ...created, spec: { ...created.spec, project: 'p1' } },
    });

    const { code, status } = await failure(
      h.custom.replaceNamespacedCustomObject({
        ...APPS,
        namespace: 'argocd',
        name: 'guestbook',
        body: { ...created, spec: { ...created.spec, project: 'p2' } },
      }),
    );

    expect(code).toBe(409);
    expect(status.reason).toBe('Conflict');
    expect(status.message).toBe(
      'Operation cannot be fulfilled on applications.argoproj.io "guestbook": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(h.server.store.get('applications', 'argocd', 'guestbook').spec.project).toBe('p1');
  });

  test('fails when a PUT of a custom resource has no resourceVersion: 422', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook'),
    });
    const body = { ...created, metadata: { ...created.metadata, resourceVersion: undefined } };

    const { code, status } = await failure(
      h.custom.replaceNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'guestbook', body }),
    );

    expect(code).toBe(422);
    expect(status.message).toContain('metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
  });

  test('GIVEN a PUT of a core object without resourceVersion WHEN stored THEN it is an unconditional update', async () => {
    await h.core.createNamespacedConfigMap({ namespace: 'ns', body: { metadata: { name: 'c' }, data: { a: '1' } } });

    const updated = await h.core.replaceNamespacedConfigMap({
      namespace: 'ns',
      name: 'c',
      body: { metadata: { name: 'c' }, data: { a: '2' } },
    });

    expect(updated.data).toStrictEqual({ a: '2' });
  });

  test('GIVEN an object WHEN its spec changes THEN generation increases, and WHEN only labels change THEN it does not', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook'),
    });

    const specChanged = await h.custom.patchNamespacedCustomObject(
      { ...APPS, namespace: 'argocd', name: 'guestbook', body: { spec: { project: 'other' } } },
      merge,
    );
    const labelChanged = await h.custom.patchNamespacedCustomObject(
      { ...APPS, namespace: 'argocd', name: 'guestbook', body: { metadata: { labels: { a: 'b' } } } },
      merge,
    );

    expect(created.metadata.generation).toBe(1);
    expect(specChanged.metadata.generation).toBe(2);
    expect(labelChanged.metadata.generation).toBe(2);
    expect(Number(labelChanged.metadata.resourceVersion)).toBeGreaterThan(Number(specChanged.metadata.resourceVersion));
  });

  test('GIVEN an unchanged object WHEN it is written again THEN resourceVersion stays (a no-op write changes nothing)', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook'),
    });

    const again = await h.custom.replaceNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      name: 'guestbook',
      body: created,
    });

    expect(again.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  test('fails when a PUT names another object: 400 BadRequest', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook'),
    });

    const { code, status } = await failure(
      h.custom.replaceNamespacedCustomObject({
        ...APPS,
        namespace: 'argocd',
        name: 'guestbook',
        body: { ...created, metadata: { ...created.metadata, name: 'other' } },
      }),
    );

    expect(code).toBe(400);
    expect(status.message).toBe('the name of the object (other) does not match the name on the URL (guestbook)');
  });
});

describe('status subresource', () => {
  const workStatus = {
    conditions: [
      { type: 'Applied', status: 'True', reason: 'Done', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  };

  test('GIVEN a ManifestWork (status subresource) WHEN created with a status THEN the status is dropped', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...WORKS,
      namespace: 'cluster1',
      body: { ...manifestWork('w'), status: workStatus },
    });

    expect(created.status).toBeUndefined();
  });

  test('GIVEN a ManifestWork WHEN its main endpoint is written with a status THEN the status is ignored', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...WORKS,
      namespace: 'cluster1',
      body: manifestWork('w'),
    });

    const updated = await h.custom.replaceNamespacedCustomObject({
      ...WORKS,
      namespace: 'cluster1',
      name: 'w',
      body: { ...created, status: workStatus },
    });

    expect(updated.status).toBeUndefined();
    expect(updated.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  test('GIVEN a ManifestWork WHEN /status is written THEN only the status changes and generation stays', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...WORKS,
      namespace: 'cluster1',
      body: manifestWork('w'),
    });
    const body = {
      ...created,
      spec: { workload: { manifests: [] } },
      metadata: { ...created.metadata, labels: { sneaky: 'yes' } },
      status: workStatus,
    };

    const updated = await h.custom.replaceNamespacedCustomObjectStatus({
      ...WORKS,
      namespace: 'cluster1',
      name: 'w',
      body,
    });

    expect(updated.status).toStrictEqual(workStatus);
    expect(updated.spec).toStrictEqual(created.spec);
    expect(updated.metadata.labels).toBeUndefined();
    expect(updated.metadata.generation).toBe(1);
  });

  test('GIVEN an Application (no status subresource) WHEN status is merge-patched on the object THEN it is stored', async () => {
    await h.custom.createNamespacedCustomObject({ ...APPS, namespace: 'argocd', body: application('guestbook') });

    const patched = await h.custom.patchNamespacedCustomObject(
      {
        ...APPS,
        namespace: 'argocd',
        name: 'guestbook',
        body: { status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } } },
      },
      merge,
    );

    expect(patched.status).toStrictEqual({ sync: { status: 'Synced' }, health: { status: 'Healthy' } });
  });

  test('fails when /status is used on a kind without a status subresource: 404', async () => {
    const created = await h.custom.createNamespacedCustomObject({
      ...APPS,
      namespace: 'argocd',
      body: application('guestbook'),
    });

    const { code } = await failure(
      h.custom.replaceNamespacedCustomObjectStatus({
        ...APPS,
        namespace: 'argocd',
        name: 'guestbook',
        body: { ...created, status: { sync: { status: 'Synced' } } },
      }),
    );

    expect(code).toBe(404);
  });
});

describe('store API', () => {
  test('GIVEN a write through the store WHEN read over HTTP THEN it is the same object with a fresh resourceVersion', async () => {
    const before = Number(h.server.store.resourceVersion);

    const stored = h.server.store.create(application('guestbook'));
    const read = await h.custom.getNamespacedCustomObject({ ...APPS, namespace: 'argocd', name: 'guestbook' });

    expect(read).toStrictEqual(stored);
    expect(Number(stored.metadata.resourceVersion)).toBe(before + 1);
  });

  test('GIVEN the FleetReport CRD WHEN registered at runtime THEN its kind is served and validated against its schema', async () => {
    const { fleetReportCrd } = await import('../../src/model/report/report-crd.js');
    h.server.store.registerCrd(fleetReportCrd());
    const coords = { group: 'pullfleet.io', version: 'v1alpha1', plural: 'fleetreports', namespace: 'argocd' };
    const report = (spec: object) => ({
      apiVersion: 'pullfleet.io/v1alpha1',
      kind: 'FleetReport',
      metadata: { name: 'guestbook' },
      spec,
    });

    const rejected = await failure(h.custom.createNamespacedCustomObject({ ...coords, body: report({}) }));
    const created = await h.custom.createNamespacedCustomObject({
      ...coords,
      body: report({ applicationSet: 'guestbook' }),
    });

    expect(rejected.code).toBe(422);
    expect(rejected.status.message).toBe(
      'FleetReport.pullfleet.io "guestbook" is invalid: spec.applicationSet: Required value',
    );
    expect(created.spec).toStrictEqual({ applicationSet: 'guestbook' });
  });
});
