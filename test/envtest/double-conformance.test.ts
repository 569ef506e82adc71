/**
 * The in-process API double (test/double/fake-apiserver.ts) against the real kube-apiserver: the same
 * requests go to both, and what each answers (status code, reason, the fields that matter) must be the
 * same. Where they differ the real server is right and the double is fixed; a case here keeps it so.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { describeRealServer } from '../support/real-server.js';
import { loadKubeConfig } from '../support/envtest-cluster.js';
import { RawApiError, RawClient, type RawObject } from '../support/raw-client.js';
import { startFakeApiServer, type FakeApiServer } from '../double/fake-apiserver.js';
import { KubeClient } from '../../src/kube/client.js';
import { MANIFEST_WORK } from '../../src/kube/resources.js';

type Observe = (c: RawClient, ns: string) => Promise<unknown>;

/** The answer of a call that must fail, as `{code, reason}`; a success is returned as `{ok: true}`. */
async function outcome(call: Promise<unknown>): Promise<{ ok: true } | { code: number; reason?: string }> {
  try {
    await call;
    return { ok: true };
  } catch (e) {
    if (!(e instanceof RawApiError)) throw e;
    let reason: string | undefined;
    try {
      reason = (JSON.parse(e.body) as { reason?: string }).reason;
    } catch {
      reason = undefined;
    }
    return { code: e.code, reason };
  }
}

const app = (name: string, ns: string, extra: Record<string, unknown> = {}): RawObject => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name, namespace: ns },
  spec: {
    project: 'default',
    destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
    source: { repoURL: 'https://git.example/repo.git', path: 'guestbook' },
  },
  ...extra,
});
const work = (name: string, ns: string): RawObject => ({
  apiVersion: 'work.open-cluster-management.io/v1',
  kind: 'ManifestWork',
  metadata: { name, namespace: ns },
  spec: {
    workload: {
      manifests: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, data: { a: '1' } },
      ],
    },
  },
});
const APP = ['argoproj.io/v1alpha1', 'Application'] as const;
const WORK = ['work.open-cluster-management.io/v1', 'ManifestWork'] as const;

/** Behaviours the controller and the tests rely on, each observed the same way on both servers. */
const CASES: Record<string, Observe> = {
  'an Application status with sync but no sync.status is refused (422 Invalid)': (c, ns) =>
    outcome(c.create(app('a', ns, { status: { sync: { revision: 'x' } } }))),

  'an Application status with an operationState lacking operation and startedAt is refused': (c, ns) =>
    outcome(c.create(app('a', ns, { status: { operationState: { phase: 'Running' } } }))),

  'Application has no status subresource: a merge patch on the object writes status': async (c, ns) => {
    await c.create(app('a', ns));
    const patched = await c.mergePatch<RawObject & { status?: unknown }>(...APP, ns, 'a', {
      status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } },
    });
    return {
      status: patched.status,
      statusEndpoint: await outcome(c.mergePatch(...APP, ns, 'a', { status: {} }, 'status')),
    };
  },

  'ManifestWork has a status subresource: the main endpoint ignores status, /status changes only status': async (
    c,
    ns,
  ) => {
    await c.create({ ...work('w', ns), status: { conditions: [] } });
    const afterMain = await c.mergePatch<RawObject & { status?: { conditions?: unknown[] } }>(...WORK, ns, 'w', {
      status: {
        conditions: [
          { type: 'Applied', status: 'True', reason: 'r', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' },
        ],
      },
    });
    const afterStatus = await c.mergePatch<
      RawObject & { status?: { conditions?: unknown[] }; metadata: { labels?: Record<string, string> } }
    >(
      ...WORK,
      ns,
      'w',
      {
        metadata: { labels: { ignored: 'yes' } },
        status: {
          conditions: [
            { type: 'Applied', status: 'True', reason: 'r', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' },
          ],
        },
      },
      'status',
    );
    return {
      main: afterMain.status?.conditions ?? [],
      status: afterStatus.status?.conditions?.length,
      labelsViaStatus: afterStatus.metadata.labels ?? {},
    };
  },

  'a merge patch carrying a stale resourceVersion is a 409 Conflict': async (c, ns) => {
    const created = await c.create<RawObject>(app('a', ns));
    await c.mergePatch(...APP, ns, 'a', { metadata: { labels: { x: '1' } } });
    return outcome(
      c.mergePatch(...APP, ns, 'a', {
        metadata: { resourceVersion: created.metadata.resourceVersion as string, labels: { x: '2' } },
      }),
    );
  },

  'server-side apply of a field another manager owns is a 409 Conflict without force': async (c, ns) => {
    await c.apply(app('a', ns, { metadata: { name: 'a', namespace: ns, labels: { owner: 'one' } } }), 'one');
    const path = await c.path(...APP, ns, 'a');
    return outcome(
      c.request('PATCH', path, {
        body: app('a', ns, { metadata: { name: 'a', namespace: ns, labels: { owner: 'two' } } }),
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'two' },
      }),
    );
  },

  'server-side apply drops a field the same manager no longer sends': async (c, ns) => {
    await c.apply(app('a', ns, { metadata: { name: 'a', namespace: ns, labels: { keep: '1', drop: '1' } } }), 'me');
    const after = await c.apply<RawObject & { metadata: { labels?: Record<string, string> } }>(
      app('a', ns, { metadata: { name: 'a', namespace: ns, labels: { keep: '1' } } }),
      'me',
    );
    return after.metadata.labels;
  },

  'a finalizer keeps a deleted object, with a deletionTimestamp, until it is removed; no new finalizer while deleting':
    async (c, ns) => {
      await c.create(app('a', ns, { metadata: { name: 'a', namespace: ns, finalizers: ['example.com/hold'] } }));
      await c.delete(...APP, ns, 'a');
      const deleting = await c.get<RawObject & { metadata: { deletionTimestamp?: string } }>(...APP, ns, 'a');
      const addFinalizer = await outcome(
        c.mergePatch(...APP, ns, 'a', { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } }),
      );
      await c.mergePatch(...APP, ns, 'a', { metadata: { finalizers: null } });
      return {
        stays: deleting !== undefined,
        deleting: typeof deleting?.metadata.deletionTimestamp === 'string',
        addFinalizer,
        gone: (await c.get(...APP, ns, 'a')) === undefined,
      };
    },

  'a delete whose uid precondition does not match is a 409 Conflict': async (c, ns) => {
    await c.create(app('a', ns));
    const path = await c.path(...APP, ns, 'a');
    return outcome(
      c.request('DELETE', path, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } },
      }),
    );
  },

  'a create into a namespace that does not exist is a 404 NotFound': (c) =>
    outcome(c.create(app('a', 'no-such-namespace'))),

  'a second create of the same name is a 409 AlreadyExists': async (c, ns) => {
    await c.create(app('a', ns));
    return outcome(c.create(app('a', ns)));
  },

  'an invalid object name is a 422 Invalid': (c, ns) => outcome(c.create(app('Not_A_Name', ns))),

  'a label value over 63 characters is a 422 Invalid': (c, ns) =>
    outcome(c.create(app('a', ns, { metadata: { name: 'a', namespace: ns, labels: { k: 'v'.repeat(64) } } }))),

  'unknown fields of a custom resource are pruned (non-strict create)': async (c, ns) => {
    const created = await c.create<RawObject & { spec: Record<string, unknown> }>(
      app('a', ns, { spec: { ...(app('a', ns).spec as object), notInSchema: true } }),
    );
    return Object.keys(created.spec).sort();
  },

  'a server-side apply of a field the schema does not declare is a 500 naming it, with no reason (a create prunes it)':
    async (c, ns) => {
      const answers: unknown[] = [];
      for (const object of [
        app('a', ns, { spec: { ...(app('a', ns).spec as object), notInSchema: true } }),
        {
          ...work('w', ns),
          spec: {
            ...(work('w', ns).spec as object),
            manifestConfigs: [
              { resourceIdentifier: { resource: 'configmaps', name: 'cm', namespace: 'default' }, bogus: 1 },
            ],
          },
        },
      ]) {
        try {
          await c.apply(object, 'conformance');
          answers.push({ ok: true });
        } catch (e) {
          if (!(e instanceof RawApiError)) throw e;
          const body = JSON.parse(e.body) as { message?: string; reason?: string };
          answers.push({ code: e.code, reason: body.reason, message: body.message });
        }
      }
      return answers;
    },

  'a list with limit pages with continue tokens, and label selectors with in / notin / !key select the same objects':
    async (c, ns) => {
      for (const [name, tier] of [
        ['a', 'web'],
        ['b', 'db'],
        ['c', 'cache'],
        ['d', undefined],
      ] as const) {
        await c.create(app(name, ns, { metadata: { name, namespace: ns, labels: tier ? { tier } : {} } }));
      }
      const path = await c.path(...APP, ns);
      const first = await c.request<{ items: RawObject[]; metadata: { continue?: string } }>('GET', path, {
        query: { limit: 3 },
      });
      const second = await c.request<{ items: RawObject[]; metadata: { continue?: string } }>('GET', path, {
        query: { limit: 3, continue: first.metadata.continue },
      });
      const names = async (labelSelector: string) =>
        (await c.list(...APP, ns, labelSelector)).map((o) => o.metadata.name).sort();
      return {
        pages: [
          first.items.map((o) => o.metadata.name),
          second.items.map((o) => o.metadata.name),
          typeof first.metadata.continue,
          second.metadata.continue ?? '',
        ],
        in: await names('tier in (web,db)'),
        notin: await names('tier notin (web)'),
        absent: await names('!tier'),
      };
    },

  'a strategic merge patch on a custom resource is a 415': async (c, ns) => {
    await c.create(app('a', ns));
    return outcome(
      c.request('PATCH', await c.path(...APP, ns, 'a'), {
        body: { metadata: { labels: { x: '1' } } },
        contentType: 'application/strategic-merge-patch+json',
      }),
    );
  },

  'a JSON patch whose test fails changes nothing and is a 422': async (c, ns) => {
    await c.create(app('a', ns, { metadata: { name: 'a', namespace: ns, labels: { x: '1' } } }));
    const result = await outcome(
      c.request('PATCH', await c.path(...APP, ns, 'a'), {
        body: [
          { op: 'replace', path: '/metadata/labels/x', value: '2' },
          { op: 'test', path: '/spec/project', value: 'other' },
        ],
        contentType: 'application/json-patch+json',
      }),
    );
    return {
      result,
      label: (await c.get<RawObject & { metadata: { labels: Record<string, string> } }>(...APP, ns, 'a'))!.metadata
        .labels.x,
    };
  },

  'annotations over 256 KiB in total are a 422 Invalid': (c, ns) =>
    outcome(
      c.create(app('a', ns, { metadata: { name: 'a', namespace: ns, annotations: { big: 'x'.repeat(256 * 1024) } } })),
    ),

  'a finalizer listed twice by server-side apply is kept once (finalizers are a set)': async (c, ns) => {
    await c.apply(app('a', ns, { metadata: { name: 'a', namespace: ns, finalizers: ['example.com/one'] } }), 'one');
    const after = await c.apply<RawObject & { metadata: { finalizers?: string[] } }>(
      app('a', ns, { metadata: { name: 'a', namespace: ns, finalizers: ['example.com/one', 'example.com/two'] } }),
      'two',
    );
    const finalizers = after.metadata.finalizers ?? [];
    await c.mergePatch(...APP, ns, 'a', { metadata: { finalizers: null } });
    return finalizers;
  },

  'a write that changes nothing keeps the resourceVersion': async (c, ns) => {
    const created = await c.create<RawObject>(
      app('a', ns, { metadata: { name: 'a', namespace: ns, labels: { x: '1' } } }),
    );
    const same = await c.mergePatch<RawObject>(...APP, ns, 'a', { metadata: { labels: { x: '1' } } });
    return same.metadata.resourceVersion === created.metadata.resourceVersion;
  },

  'generation moves with spec, not with metadata or (for kinds with a status subresource) status': async (c, ns) => {
    await c.create(work('w', ns));
    const g = async () =>
      (await c.get<RawObject & { metadata: { generation?: number } }>(...WORK, ns, 'w'))!.metadata.generation;
    const start = await g();
    await c.mergePatch(...WORK, ns, 'w', { metadata: { labels: { x: '1' } } });
    const afterLabel = await g();
    await c.mergePatch(...WORK, ns, 'w', { spec: { deleteOption: { propagationPolicy: 'Orphan' } } });
    return { start, afterLabel, afterSpec: await g() };
  },
};

describeRealServer('the API double answers as the real server does', (kubeconfigPath) => {
  const real = new RawClient(loadKubeConfig(kubeconfigPath));
  let fake: FakeApiServer;
  let double: RawClient;
  let n = 0;

  beforeAll(async () => {
    fake = await startFakeApiServer();
    double = new RawClient(fake.kubeConfig());
  });
  afterAll(async () => {
    await fake?.close();
  });

  /** A fresh namespace of the same name on both servers. */
  async function namespace(): Promise<string> {
    const name = `conf-${Date.now().toString(36)}-${n++}`;
    for (const c of [real, double]) await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return name;
  }

  for (const [name, observe] of Object.entries(CASES)) {
    test(name, async () => {
      const ns = await namespace();
      const onServer = await observe(real, ns);
      const onDouble = await observe(double, ns);
      expect({ double: onDouble }).toEqual({ double: onServer });
    });
  }
});

/**
 * The controller's own client deletes a ManifestWork only while it is the object the controller saw:
 * the uid and resourceVersion preconditions reach the real server (a body without framing would be
 * ignored and the delete would go through unconditionally).
 */
describeRealServer("the controller's client keeps its delete preconditions", (kubeconfigPath) => {
  const raw = new RawClient(loadKubeConfig(kubeconfigPath));
  const ns = `guard-${Date.now().toString(36)}`;
  let client: KubeClient;

  beforeAll(async () => {
    await raw.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    client = new KubeClient(loadKubeConfig(kubeconfigPath), { requestTimeoutMs: 10_000 });
  });
  afterAll(() => client?.close());

  test('a work replaced by a new one (other uid) is not deleted, and the delete counts as done', async () => {
    const old = await raw.create<RawObject>(work('replaced', ns));
    await raw.delete(...WORK, ns, 'replaced');
    const replacement = await raw.create<RawObject>(work('replaced', ns));
    await client.delete(MANIFEST_WORK, ns, 'replaced', { uid: old.metadata.uid as string });
    expect((await raw.get<RawObject>(...WORK, ns, 'replaced'))?.metadata.uid).toBe(replacement.metadata.uid);
  });

  test('a work changed since it was read (other resourceVersion) is not deleted: the caller gets a 409', async () => {
    const seen = await raw.create<RawObject>(work('changed', ns));
    await raw.mergePatch(...WORK, ns, 'changed', { metadata: { labels: { changed: 'yes' } } });
    await expect(
      client.delete(MANIFEST_WORK, ns, 'changed', {
        uid: seen.metadata.uid as string,
        resourceVersion: seen.metadata.resourceVersion as string,
      }),
    ).rejects.toMatchObject({ statusCode: 409 });
    expect(await raw.get(...WORK, ns, 'changed')).toBeDefined();
  });

  test('the work it saw is deleted', async () => {
    const seen = await raw.create<RawObject>(work('seen', ns));
    await client.delete(MANIFEST_WORK, ns, 'seen', {
      uid: seen.metadata.uid as string,
      resourceVersion: seen.metadata.resourceVersion as string,
    });
    expect(await raw.get(...WORK, ns, 'seen')).toBeUndefined();
  });
});
