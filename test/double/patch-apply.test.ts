/**
 * PATCH on the API double through client-node: JSON merge patch (RFC 7386), JSON patch (RFC 6902),
 * strategic merge (415 for custom resources), and server-side apply with field managers, removal of
 * fields a manager stops sending, conflicts, force, and create-on-apply.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import {
  APPS,
  WORKS,
  application,
  apply,
  failure,
  harness,
  jsonPatch,
  manifestWork,
  merge,
  strategic,
  type Harness,
} from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.server.close();
});

const patchApp = (body: unknown, options: typeof merge, extra: { fieldManager?: string; force?: boolean } = {}) =>
  h.custom.patchNamespacedCustomObject(
    { ...APPS, namespace: 'argocd', name: 'guestbook', body: body as object, ...extra },
    options,
  );

describe('merge patch', () => {
  test('GIVEN an app WHEN merge-patched THEN objects merge, null removes a key and lists are replaced', async () => {
    h.server.store.create(
      application('guestbook', 'argocd', { metadata: { labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] } }),
    );

    const patched = await patchApp({ metadata: { labels: { b: null, c: '3' }, finalizers: ['z'] } }, merge);

    expect(patched.metadata.labels).toStrictEqual({ a: '1', c: '3' });
    expect(patched.metadata.finalizers).toStrictEqual(['z']);
  });

  test('fails when the merge patch carries a stale resourceVersion: 409 Conflict', async () => {
    const created = h.server.store.create(application('guestbook'));
    h.server.store.patch('applications', 'argocd', 'guestbook', 'merge', { spec: { project: 'moved' } });

    const { code, status } = await failure(
      patchApp({ metadata: { resourceVersion: created.metadata.resourceVersion, labels: { a: '1' } } }, merge),
    );

    expect(code).toBe(409);
    expect(status.reason).toBe('Conflict');
  });

  test('fails when the object does not exist: 404', async () => {
    const { code } = await failure(patchApp({ spec: { project: 'x' } }, merge));

    expect(code).toBe(404);
  });
});

describe('json patch', () => {
  test('GIVEN an app WHEN a JSON patch adds, replaces and removes THEN each operation applies in order', async () => {
    h.server.store.create(application('guestbook', 'argocd', { metadata: { labels: { a: '1' }, finalizers: ['x'] } }));

    const patched = await patchApp(
      [
        { op: 'test', path: '/metadata/labels/a', value: '1' },
        { op: 'add', path: '/metadata/finalizers/-', value: 'y' },
        { op: 'replace', path: '/spec/project', value: 'p' },
        { op: 'remove', path: '/metadata/labels/a' },
        { op: 'add', path: '/metadata/annotations', value: { 'x/y': 'z' } },
      ],
      jsonPatch,
    );

    expect(patched.metadata.finalizers).toStrictEqual(['x', 'y']);
    expect(patched.spec.project).toBe('p');
    expect(patched.metadata.labels).toStrictEqual({});
    expect(patched.metadata.annotations).toStrictEqual({ 'x/y': 'z' });
  });

  test('fails when a test operation does not hold: 422 and nothing is applied', async () => {
    const created = h.server.store.create(application('guestbook', 'argocd', { metadata: { labels: { a: '1' } } }));

    const { code, status } = await failure(
      patchApp(
        [
          { op: 'replace', path: '/spec/project', value: 'p' },
          { op: 'test', path: '/metadata/labels/a', value: '2' },
        ],
        jsonPatch,
      ),
    );

    expect(code).toBe(422);
    expect(status.message).toContain('the test operation failed');
    expect(h.server.store.get('applications', 'argocd', 'guestbook')).toStrictEqual(created);
  });
});

describe('strategic merge patch', () => {
  test('fails when used on a custom resource: 415 UnsupportedMediaType, as the real server', async () => {
    h.server.store.create(application('guestbook'));

    const { code, status } = await failure(patchApp({ spec: { project: 'p' } }, strategic));

    expect(code).toBe(415);
    expect(status.reason).toBe('UnsupportedMediaType');
  });

  test('GIVEN a core ConfigMap WHEN strategic-merge-patched THEN maps merge', async () => {
    await h.core.createNamespacedConfigMap({ namespace: 'ns', body: { metadata: { name: 'c' }, data: { a: '1' } } });

    const patched = await h.core.patchNamespacedConfigMap(
      { namespace: 'ns', name: 'c', body: { data: { b: '2' } } },
      strategic,
    );

    expect(patched.data).toStrictEqual({ a: '1', b: '2' });
  });
});

describe('server-side apply', () => {
  const work = (labels: Record<string, string>, extra: object = {}) => ({
    ...manifestWork('w'),
    metadata: { name: 'w', namespace: 'cluster1', labels },
    ...extra,
  });
  const applyWork = (body: object, fieldManager: string, force = false) =>
    h.custom.patchNamespacedCustomObject(
      { ...WORKS, namespace: 'cluster1', name: 'w', body, fieldManager, force },
      apply,
    );

  test('fails when the applied configuration carries a field the schema does not declare: 500 naming the field, nothing stored', async () => {
    const body = work({ a: '1' }) as { spec?: object };
    const withUnknown = {
      ...body,
      spec: {
        ...body.spec,
        manifestConfigs: [
          { resourceIdentifier: { resource: 'configmaps', name: 'cm', namespace: 'default' }, bogus: 1 },
        ],
      },
    };

    const { code, status } = await failure(applyWork(withUnknown, 'pullfleet-controller'));

    expect(code).toBe(500);
    expect(status.reason).toBeUndefined();
    expect(status.message).toBe(
      'failed to create typed patch object (cluster1/w; work.open-cluster-management.io/v1, Kind=ManifestWork): .spec.manifestConfigs[0].bogus: field not declared in schema',
    );
    expect(h.server.store.list('manifestworks')).toStrictEqual([]);
  });

  test('GIVEN no object WHEN applied THEN it is created with the manager recorded in managedFields', async () => {
    const created = await applyWork(work({ a: '1' }), 'pullfleet-controller');

    expect(created.metadata.uid).toBeDefined();
    expect(created.metadata.labels).toStrictEqual({ a: '1' });
    expect(created.metadata.managedFields).toStrictEqual([
      expect.objectContaining({
        manager: 'pullfleet-controller',
        operation: 'Apply',
        fieldsV1: expect.objectContaining({ 'f:metadata': { 'f:labels': { 'f:a': {} } } }),
      }),
    ]);
  });

  test("GIVEN a manager applied a label WHEN it applies again without it THEN the label is removed but another manager's label stays", async () => {
    await applyWork(work({ mine: '1', dropped: '1' }), 'pullfleet-controller');
    await h.custom.patchNamespacedCustomObject(
      { ...WORKS, namespace: 'cluster1', name: 'w', body: { metadata: { labels: { theirs: '1' } } } },
      merge,
    );

    const after = await applyWork(work({ mine: '1' }), 'pullfleet-controller');

    expect(after.metadata.labels).toStrictEqual({ mine: '1', theirs: '1' });
  });

  test('fails when applying a value another manager set differently: 409 Conflict naming the manager and field', async () => {
    await applyWork(work({ tier: 'web' }), 'someone-else');

    const { code, status } = await failure(applyWork(work({ tier: 'db' }), 'pullfleet-controller'));

    expect(code).toBe(409);
    expect(status.reason).toBe('Conflict');
    expect(status.message).toBe('Apply failed with 1 conflict: conflict with "someone-else": .metadata.labels.tier');
    expect(status.details.causes).toStrictEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "someone-else"', field: '.metadata.labels.tier' },
    ]);
  });

  test('GIVEN a conflict WHEN applied with force THEN the applier wins and takes ownership', async () => {
    await applyWork(work({ tier: 'web' }), 'someone-else');

    const forced = await applyWork(work({ tier: 'db' }), 'pullfleet-controller', true);
    const removed = await applyWork(work({}), 'pullfleet-controller', true);

    expect(forced.metadata.labels).toStrictEqual({ tier: 'db' });
    expect(removed.metadata.labels ?? {}).toStrictEqual({});
  });

  test('GIVEN the same value from two managers WHEN applied THEN there is no conflict and both own it', async () => {
    await applyWork(work({ tier: 'web' }), 'one');

    const both = await applyWork(work({ tier: 'web' }), 'two');
    const afterOneLeaves = await applyWork(work({}), 'one');

    expect(both.metadata.managedFields.map((m: { manager: string }) => m.manager)).toStrictEqual(['one', 'two']);
    expect(afterOneLeaves.metadata.labels).toStrictEqual({ tier: 'web' });
  });

  test('GIVEN finalizers (a set) WHEN two managers each apply their own THEN both are kept and each can remove only its own', async () => {
    h.server.store.create(application('guestbook'));
    const applyApp = (finalizers: string[], manager: string) =>
      patchApp(
        { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'guestbook', finalizers } },
        apply,
        { fieldManager: manager },
      );

    await applyApp(['a.io/one'], 'one');
    const both = await applyApp(['b.io/two'], 'two');
    const afterOne = await applyApp([], 'one');

    expect(both.metadata.finalizers).toStrictEqual(['a.io/one', 'b.io/two']);
    expect(afterOne.metadata.finalizers).toStrictEqual(['b.io/two']);
  });

  test('GIVEN a ManifestWork WHEN applied through /status THEN only the status changes; WHEN applied on the main endpoint THEN status is ignored', async () => {
    await applyWork(work({ a: '1' }), 'controller');
    const status = {
      conditions: [
        { type: 'Applied', status: 'True', reason: 'Done', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
    };

    const viaStatus = await h.custom.patchNamespacedCustomObjectStatus(
      {
        ...WORKS,
        namespace: 'cluster1',
        name: 'w',
        body: {
          apiVersion: 'work.open-cluster-management.io/v1',
          kind: 'ManifestWork',
          metadata: { name: 'w', labels: { b: '2' } },
          status,
        },
        fieldManager: 'work-agent',
      },
      apply,
    );
    const viaMain = await applyWork(work({ a: '1' }, { status: { conditions: [] } }), 'controller');

    expect(viaStatus.status).toStrictEqual(status);
    expect(viaStatus.metadata.labels).toStrictEqual({ a: '1' });
    expect(viaMain.status).toStrictEqual(status);
  });

  test('GIVEN an applied configuration written as YAML WHEN applied THEN it is parsed like JSON', () => {
    const yaml = [
      'apiVersion: work.open-cluster-management.io/v1',
      'kind: ManifestWork',
      'metadata:',
      '  name: w',
      '  labels:',
      '    from: yaml',
      'spec:',
      '  workload:',
      '    manifests: []',
    ].join('\n');

    const created = h.server.store.patch('manifestworks', 'cluster1', 'w', 'apply', yaml, { fieldManager: 'kubectl' });

    expect(created.metadata.labels).toStrictEqual({ from: 'yaml' });
    expect(created.spec).toStrictEqual({ workload: { manifests: [] } });
  });

  test('fails when the apply has no fieldManager: 400', async () => {
    const { code, status } = await failure(
      h.custom.patchNamespacedCustomObject({ ...WORKS, namespace: 'cluster1', name: 'w', body: work({}) }, apply),
    );

    expect(code).toBe(400);
    expect(status.message).toBe('PATCH requests using apply must set fieldManager');
  });

  test('GIVEN an unchanged apply WHEN repeated THEN resourceVersion stays', async () => {
    const first = await applyWork(work({ a: '1' }), 'controller');

    const second = await applyWork(work({ a: '1' }), 'controller');

    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
  });
});
