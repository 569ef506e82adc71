/**
 * The work-agent double's apply and delete (test/support/work-agent.ts `applyManifest`, `deleteApplied`), on the
 * in-process API double: what OCM v1.3.1's agent does to the spoke objects of a work, as
 * test/ocm/conformance.test.ts measured it against the real agent (the config-spec-hash annotation, the apply
 * skipped while it matches, the AppliedManifestWork owner unless orphaned, and deleting only what it owns).
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { MANAGED_CLUSTER_ANNOTATION, STAND_BY_ANNOTATION } from '../../src/model/core/keys.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import { fakeCluster, type TestCluster } from '../support/cluster.js';
import {
  CONFIG_SPEC_HASH_ANNOTATION,
  newAppliedManifestWork,
  WorkAgent,
  type AppliedManifestWorkRef,
} from '../support/work-agent.js';
import { startFakeApiServer, type FakeApiServer } from './fake-apiserver.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const HUB = 'https://127.0.0.1:6443';
const APP_API = 'argoproj.io/v1alpha1';

let server: FakeApiServer;
let cluster: TestCluster;
let agent: WorkAgent;
beforeEach(async () => {
  server = await startFakeApiServer();
  for (const name of ['argocd', 'spoke', 'default'])
    server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  cluster = fakeCluster(server);
  agent = new WorkAgent(cluster);
});
afterEach(async () => {
  await server.close();
});

/** A hub Application pulled to cluster1, optionally standing by or carrying an operation. */
function hubApp(name: string, opts: { standBy?: boolean; operation?: Obj; tier?: string } = {}): Application {
  return {
    apiVersion: APP_API,
    kind: 'Application',
    metadata: {
      name,
      namespace: 'argocd',
      labels: {
        'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'true',
        ...(opts.tier ? { tier: opts.tier } : {}),
      },
      annotations: {
        [MANAGED_CLUSTER_ANNOTATION]: 'cluster1',
        ...(opts.standBy ? { [STAND_BY_ANNOTATION]: 'true' } : {}),
      },
    },
    spec: {
      project: 'default',
      source: { repoURL: 'https://git.example/apps.git', path: name, targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: name },
    },
    ...(opts.operation ? { operation: opts.operation } : {}),
  };
}

const payload = (work: ManifestWork): Obj => work.spec.workload.manifests[0];
const spokeRef = (name: string) => ({ apiVersion: APP_API, kind: 'Application', namespace: 'spoke', name });
const readSpoke = (name: string) => cluster.get<Obj>(spokeRef(name));
const applyWork = (work: ManifestWork, owner: AppliedManifestWorkRef) =>
  agent.applyManifest(work, payload(work), owner, 'spoke');
const editSpoke = async (name: string, edit: Obj) => cluster.mergePatch(spokeRef(name), edit);

describe('apply', () => {
  test('GIVEN a work WHEN applied THEN the spoke Application carries the config-spec-hash and is owned by the AppliedManifestWork', async () => {
    const work = buildManifestWork(hubApp('cart'));
    const owner = newAppliedManifestWork(HUB, work.metadata.name);

    const { object, created } = await applyWork(work, owner);

    expect(created).toBe(true);
    expect(object.metadata.annotations[CONFIG_SPEC_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{32}$/);
    expect(object.metadata.ownerReferences).toStrictEqual([
      {
        apiVersion: 'work.open-cluster-management.io/v1',
        kind: 'AppliedManifestWork',
        name: owner.name,
        uid: owner.uid,
      },
    ]);
    expect(owner.name).toMatch(new RegExp(`^[0-9a-f]{64}-${work.metadata.name}$`));
    expect(object.spec).toStrictEqual(payload(work).spec);
  });

  test("GIVEN a manifest of OCM's own tests WHEN applied THEN its hash is the one OCM computes (md5 of Go's %v of the object)", async () => {
    // pkg/work/spoke/apply/server_side_apply_test.go (v1.3.1), "server side apply ignore update"
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'default', name: 'test' },
      data: { foo1: 'bar1' },
    };
    const work = {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name: 'cm', namespace: 'cluster1' },
      spec: {
        workload: { manifests: [configMap] },
        manifestConfigs: [
          {
            resourceIdentifier: { group: '', resource: 'configmaps', namespace: 'default', name: 'test' },
            updateStrategy: {
              type: 'ServerSideApply',
              serverSideApply: { force: true, ignoreFields: [{ condition: 'OnSpokeChange', jsonPaths: ['.data'] }] },
            },
          },
        ],
      },
    } as unknown as ManifestWork;

    const { object } = await agent.applyManifest(work, configMap, newAppliedManifestWork(HUB, 'cm'));

    expect(object.metadata.annotations).toStrictEqual({
      [CONFIG_SPEC_HASH_ANNOTATION]: '4c07ba481d04e9c38e5ed3bf24139537',
    });
  });

  test('GIVEN an applied work WHEN it is applied again unchanged THEN an operation the spoke cleared and a spoke edit stay', async () => {
    const work = buildManifestWork(hubApp('cart', { operation: { sync: { revision: 'main' } } }));
    const owner = newAppliedManifestWork(HUB, work.metadata.name);
    expect((await applyWork(work, owner)).object.operation).toStrictEqual({ sync: { revision: 'main' } });
    await editSpoke('cart', { operation: null, spec: { source: { targetRevision: 'edited-on-spoke' } } });

    const { object } = await applyWork(work, owner);

    expect(object.operation).toBeUndefined();
    expect(object.spec.source.targetRevision).toBe('edited-on-spoke');
  });

  test('GIVEN a spoke edit WHEN the work changes THEN the changed manifest is applied and the edit reverted, an operation a spoke user wrote kept', async () => {
    const owner = newAppliedManifestWork(HUB, buildManifestWork(hubApp('cart')).metadata.name);
    const before = (await applyWork(buildManifestWork(hubApp('cart')), owner)).object;
    await editSpoke('cart', {
      spec: { source: { targetRevision: 'edited-on-spoke' } },
      operation: { sync: { revision: 'hotfix' } },
    });

    const { object } = await applyWork(buildManifestWork(hubApp('cart', { tier: 'gold' })), owner);

    expect(object.metadata.labels.tier).toBe('gold');
    expect(object.spec.source.targetRevision).toBe('main');
    expect(object.operation).toStrictEqual({ sync: { revision: 'hotfix' } });
    expect(object.metadata.annotations[CONFIG_SPEC_HASH_ANNOTATION]).not.toBe(
      before.metadata.annotations[CONFIG_SPEC_HASH_ANNOTATION],
    );
  });

  test('GIVEN a work standing by (CreateOnly, Orphan) WHEN applied THEN it creates a missing Application with no mark and no owner', async () => {
    const work = buildManifestWork(hubApp('cart', { standBy: true }));

    const { object } = await applyWork(work, newAppliedManifestWork(HUB, work.metadata.name));

    expect(object.metadata.annotations[CONFIG_SPEC_HASH_ANNOTATION]).toBeUndefined();
    expect(object.metadata.ownerReferences).toBeUndefined();
  });

  test('GIVEN an Application a standing-by work created WHEN the work takes it over (ServerSideApply, Foreground) THEN it is applied and owned', async () => {
    const name = buildManifestWork(hubApp('cart')).metadata.name;
    const owner = newAppliedManifestWork(HUB, name);
    await applyWork(buildManifestWork(hubApp('cart', { standBy: true })), owner);
    await editSpoke('cart', { spec: { source: { targetRevision: 'pinned-on-spoke' } } });

    const { object } = await applyWork(buildManifestWork(hubApp('cart')), owner);

    expect(object.spec.source.targetRevision).toBe('main');
    expect((object.metadata.ownerReferences as Obj[]).map((o) => o.uid)).toStrictEqual([owner.uid]);
  });
});

describe('delete', () => {
  test('GIVEN a Foreground work WHEN what it applied is deleted THEN the Application goes', async () => {
    const work = buildManifestWork(hubApp('cart'));
    const owner = newAppliedManifestWork(HUB, work.metadata.name);
    const { object } = await applyWork(work, owner);

    const pending = await agent.deleteApplied([{ ...spokeRef('cart'), uid: object.metadata.uid }], owner);

    expect(pending).toStrictEqual([]);
    expect(await readSpoke('cart')).toBeUndefined();
  });

  test('GIVEN an orphaning work WHEN what it applied is deleted THEN the Application stays', async () => {
    const work = buildManifestWork(hubApp('cart', { standBy: true }));
    const owner = newAppliedManifestWork(HUB, work.metadata.name);
    const { object } = await applyWork(work, owner);

    await agent.deleteApplied([{ ...spokeRef('cart'), uid: object.metadata.uid }], owner);

    expect((await readSpoke('cart'))?.metadata.uid).toBe(object.metadata.uid);
  });

  test('GIVEN an Application two works own WHEN one deletes what it applied THEN it only loses that owner', async () => {
    const work = buildManifestWork(hubApp('cart'));
    const first = newAppliedManifestWork(HUB, work.metadata.name);
    const second = newAppliedManifestWork(HUB, 'other-work');
    const { object } = await applyWork(work, first);
    await applyWork(work, second);

    await agent.deleteApplied([{ ...spokeRef('cart'), uid: object.metadata.uid }], first);

    expect(((await readSpoke('cart'))?.metadata.ownerReferences as Obj[]).map((o) => o.name)).toStrictEqual([
      second.name,
    ]);
  });

  test('GIVEN an Application made again since the work applied it WHEN deleted THEN the new one stays', async () => {
    const work = buildManifestWork(hubApp('cart'));
    const owner = newAppliedManifestWork(HUB, work.metadata.name);
    const { object } = await applyWork(work, owner);
    await cluster.delete(spokeRef('cart'));
    const again = (await applyWork(work, owner)).object;

    await agent.deleteApplied([{ ...spokeRef('cart'), uid: object.metadata.uid }], owner);

    expect((await readSpoke('cart'))?.metadata.uid).toBe(again.metadata.uid);
  });
});
