/**
 * The project's work-agent double against OCM's real work agent: the same scenarios on both, and what
 * each leaves in the world compared (the spoke Application, the work's finalizers, conditions and
 * feedback values). Where they differ the real agent is right.
 *
 * The double is what the end-to-end suites use, in its two parts: the klusterlet work agent of
 * test/support/pull-delivery-sim.ts (applies the payload with test/support/work-agent.ts's `applyManifest`:
 * server-side, the config-spec-hash annotation and the apply skipped while it matches, the
 * AppliedManifestWork owner unless orphaned; holds the cleanup finalizer, deletes what it owns on work
 * deletion; spoke Applications live in `<cluster>-apps` of the one server) and
 * the status writer of test/support/work-agent.ts (conditions, resourceStatus, feedback values, and the
 * condition rules evaluated with test/support/cel.ts), given the spoke Application the real agent reads.
 *
 * A test marked `test.failing` records a difference found here: it fails as long as the double differs
 * from the real agent (and then passes as a failing test); fixing the double makes it fail, and the marker
 * goes.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import {
  MANAGED_CLUSTER_ANNOTATION,
  SPOKE_APP_NAMESPACE_ANNOTATION,
  STAND_BY_ANNOTATION,
} from '../../src/model/core/keys.js';
import { FeedbackScrape, type Application, type ManifestWork } from '../../src/model/core/types.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import { RESOURCE_SUMMARY_CONDITION } from '../../src/model/reconcile/resource-summary.js';
import { realCluster } from '../support/cluster.js';
import { PullDeliverySim } from '../support/pull-delivery-sim.js';
import { describeRealOcm, startOcmSpoke, type OcmSpoke } from '../support/real-ocm.js';
import { waitFor } from '../support/wait.js';
import { WorkAgent, type SpokeApplicationState } from '../support/work-agent.js';
import {
  APP_API,
  argoStatus,
  conditionOf,
  conditionShape,
  expectedFeedback,
  feedbackValues,
  manifestStatus,
  payloadOf,
  raw,
  readApp,
  readWork,
  report,
  WORK_API,
  type Obj,
} from './support.js';

const REAL_CLUSTER = 'conform-real';
const DOUBLE_CLUSTER = 'conform-double';
const WAIT = { timeoutMs: 60_000, intervalMs: 50 };

/** One agent under test: where its works and spoke Applications live, and how a scenario drives it. */
interface Side {
  readonly name: 'real' | 'double';
  readonly cluster: string;
  /** Writes the work and waits until the agent has applied it (and reported on it). */
  deliver(work: ManifestWork): Promise<void>;
  spokeApp(name: string): Promise<Obj | undefined>;
  /** Creates an Application on the spoke as another tool would (not through a work). */
  createSpokeApp(app: Obj): Promise<void>;
  /** Edits the spoke Application as Argo CD or a user on the spoke would. */
  editSpokeApp(name: string, edit: (app: Obj) => Obj): Promise<Obj>;
  /** Waits until the agent has reported the spoke Application's current state in the work status. */
  synced(workName: string, appName: string): Promise<Obj>;
  /** Deletes the work and waits until it is gone from the hub. */
  deleteWork(name: string): Promise<void>;
  work(name: string): Promise<Obj | undefined>;
}

/** The state the double's status writer is told: what the real agent's JSONPaths select from `app`. */
function stateOf(app: Obj): SpokeApplicationState {
  return expectedFeedback(app);
}

describeRealOcm('the work-agent double against the real work agent', (hubKubeconfig) => {
  let ocm: OcmSpoke;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(hubKubeconfig);
  const cluster = realCluster(kubeConfig);
  const sim = new PullDeliverySim(cluster, 'conform-hub', [DOUBLE_CLUSTER]);
  const statusWriter = new WorkAgent(cluster);
  let real: Side;
  let double: Side;

  beforeAll(async () => {
    await sim.createNamespaces();
    ocm = await startOcmSpoke(hubKubeconfig, { clusters: [REAL_CLUSTER] });
    const spokeRead = (name: string) => readApp(ocm.spoke, 'argocd', name);
    real = {
      name: 'real',
      cluster: REAL_CLUSTER,
      async deliver(work) {
        const written = await ocm.hub.apply<Obj>(raw(work), 'argocd-controller');
        await waitFor(
          `the real agent to apply ${work.metadata.name} at generation ${written.metadata.generation}`,
          async () => {
            const w = await readWork(ocm.hub, REAL_CLUSTER, work.metadata.name);
            return ['Applied', 'Available'].every(
              (t) => conditionOf(w?.status?.conditions, t)?.observedGeneration === written.metadata.generation,
            );
          },
          WAIT,
        );
      },
      spokeApp: spokeRead,
      async createSpokeApp(app) {
        await ocm.spoke.create(raw({ ...app, metadata: { ...app.metadata, namespace: 'argocd' } }));
      },
      async editSpokeApp(name, edit) {
        const app = (await spokeRead(name))!;
        const { managedFields: _m, ...metadata } = app.metadata;
        return ocm.spoke.replace<Obj>(raw(edit({ ...app, metadata })));
      },
      async synced(workName, appName) {
        const app = (await spokeRead(appName))!;
        const want = expectedFeedback(app);
        return waitFor(
          `the real agent to report ${JSON.stringify(want)}`,
          async () => {
            const w = await readWork(ocm.hub, REAL_CLUSTER, workName);
            const m = manifestStatus(w, 'Application', 'argocd', appName);
            const { values } = feedbackValues(m);
            const summary = conditionOf(m?.conditions, RESOURCE_SUMMARY_CONDITION);
            const current =
              JSON.stringify(sortKeys(values as Record<string, string>)) === JSON.stringify(sortKeys(want));
            // the summary condition is evaluated on the same sync as the values
            return current && summary?.status === (app.status ? 'True' : 'False') && w;
          },
          { ...WAIT, describe: () => readWork(ocm.hub, REAL_CLUSTER, workName) },
        );
      },
      async deleteWork(name) {
        await ocm.hub.delete(WORK_API, 'ManifestWork', REAL_CLUSTER, name);
        // Playing the spoke Argo CD: an Application being deleted loses its resources finalizer (its
        // workload pruned), which lets the agent finish a Foreground delete.
        await waitFor(
          `work ${name} gone`,
          async () => {
            for (const app of await ocm.spoke.list<Obj>(APP_API, 'Application', 'argocd')) {
              if (app.metadata.deletionTimestamp && app.metadata.finalizers?.length)
                await ocm.spoke.mergePatch(APP_API, 'Application', 'argocd', app.metadata.name, {
                  metadata: { finalizers: null },
                });
            }
            return !(await readWork(ocm.hub, REAL_CLUSTER, name));
          },
          WAIT,
        );
      },
      work: (name) => readWork(ocm.hub, REAL_CLUSTER, name),
    };
    const doubleRead = (name: string) => readApp(ocm.hub, sim.appNs(DOUBLE_CLUSTER), name);
    const report_ = async (workName: string, appName: string) => {
      const app = await doubleRead(appName);
      return statusWriter.report(DOUBLE_CLUSTER, workName, app ? stateOf(app) : {}, {
        ...(app ? { spokeApplication: app } : {}),
      });
    };
    double = {
      name: 'double',
      cluster: DOUBLE_CLUSTER,
      async deliver(work) {
        await ocm.hub.apply(raw(work), 'argocd-controller');
        await sim.settle();
        const appName = payloadOf(work).metadata.name;
        await report_(work.metadata.name, appName);
      },
      spokeApp: doubleRead,
      async createSpokeApp(app) {
        await ocm.hub.create(raw({ ...app, metadata: { ...app.metadata, namespace: sim.appNs(DOUBLE_CLUSTER) } }));
      },
      async editSpokeApp(name, edit) {
        const app = (await doubleRead(name))!;
        const { managedFields: _m, ...metadata } = app.metadata;
        const written = await ocm.hub.replace<Obj>(raw(edit({ ...app, metadata })));
        await sim.settle();
        return written;
      },
      async synced(workName, appName) {
        await sim.settle();
        return await report_(workName, appName);
      },
      async deleteWork(name) {
        await ocm.hub.delete(WORK_API, 'ManifestWork', DOUBLE_CLUSTER, name);
        await sim.settle();
        await waitFor(`work ${name} gone`, async () => !(await readWork(ocm.hub, DOUBLE_CLUSTER, name)), WAIT);
      },
      work: (name) => readWork(ocm.hub, DOUBLE_CLUSTER, name),
    };
  }, 300_000);

  afterAll(async () => {
    await ocm?.stop();
  }, 120_000);

  /** The hub Application a scenario delivers, to `side`'s cluster. */
  function hubApp(side: Side, name: string, annotations: Record<string, string> = {}, operation?: Obj): Application {
    return {
      apiVersion: APP_API,
      kind: 'Application',
      metadata: {
        name,
        namespace: 'argocd',
        uid: `uid-${name}`,
        labels: { 'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'true', team: 'shop' },
        annotations: { [MANAGED_CLUSTER_ANNOTATION]: side.cluster, ...annotations },
        finalizers: ['resources-finalizer.argocd.argoproj.io'],
      },
      spec: {
        project: 'default',
        source: { repoURL: 'https://git.example/apps.git', path: name, targetRevision: 'main' },
        destination: { server: 'https://kubernetes.default.svc', namespace: name },
        syncPolicy: { automated: { prune: true } },
      },
      ...(operation ? { operation } : {}),
    };
  }

  /** The spoke Application as compared: what the payload put there and what the agent adds. */
  function spokeView(app: Obj | undefined): Obj | undefined {
    if (!app) return undefined;
    return {
      labels: app.metadata.labels,
      annotations: app.metadata.annotations,
      finalizers: app.metadata.finalizers,
      ownerKinds: ((app.metadata.ownerReferences as Obj[] | undefined) ?? []).map((o) => o.kind),
      spec: app.spec,
      operation: app.operation,
    };
  }

  /** The work as compared: finalizers, conditions (times left out) and per-manifest status. */
  function workView(work: Obj | undefined): Obj | undefined {
    if (!work) return undefined;
    const generation = work.metadata.generation;
    return {
      finalizers: work.metadata.finalizers,
      conditions: conditionShape(work.status?.conditions),
      conditionsAtGeneration: (work.status?.conditions as Obj[] | undefined)?.every(
        (c) => c.observedGeneration === generation,
      ),
      manifests: ((work.status?.resourceStatus?.manifests as Obj[] | undefined) ?? []).map((m) => ({
        resourceMeta: m.resourceMeta,
        conditions: conditionShape(m.conditions),
        feedback: feedbackValues(m),
      })),
    };
  }

  /** The views of one scenario run on the real agent, then on the double; their differences are reported. */
  async function onBoth<T>(scenario: (side: Side) => Promise<T>): Promise<{ real: T; double: T }> {
    const r = await scenario(real);
    const d = await scenario(double);
    const differences = diff(r, d);
    for (const line of differences) report(`double vs real: ${line}`);
    return { real: r, double: d };
  }

  test('a. propagation: the spoke Application carries the same payload', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        const work = buildManifestWork(hubApp(side, 'prop'));
        await side.deliver(work);
        const view = spokeView(await side.spokeApp('prop'));
        await side.deleteWork(work.metadata.name);
        return view;
      });
      // spec, labels, finalizers and operation are what the payload says on both
      expect({ ...d, annotations: undefined, ownerKinds: undefined }).toStrictEqual({
        ...r,
        annotations: undefined,
        ownerKinds: undefined,
      });
      // and so are the agent's marks (the config-spec-hash annotation, the AppliedManifestWork owner)
      expect(d).toStrictEqual(r);
    }));

  // The real agent annotates the spoke Application with open-cluster-management.io/config-spec-hash (ServerSideApply
  // with ignoreFields: an md5 of the manifest) and, unless the work orphans it, makes it owned by its
  // AppliedManifestWork `<sha256 of the hub URL>-<work name>` (the uid is the AppliedManifestWork's own).
  test('a. propagation: the agent marks the spoke Application (config-spec-hash annotation, AppliedManifestWork owner)', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        const work = buildManifestWork(hubApp(side, 'marks'));
        await side.deliver(work);
        const app = await side.spokeApp('marks');
        await side.deleteWork(work.metadata.name);
        return {
          annotations: app?.metadata.annotations,
          owners: ((app?.metadata.ownerReferences as Obj[] | undefined) ?? []).map(({ uid, ...owner }: Obj) => ({
            ...owner,
            uid: typeof uid === 'string' && uid.length > 0,
          })),
        };
      });
      expect(r.annotations?.['open-cluster-management.io/config-spec-hash']).toMatch(/^[0-9a-f]{32}$/);
      expect(r.owners).toStrictEqual([
        {
          apiVersion: 'work.open-cluster-management.io/v1',
          kind: 'AppliedManifestWork',
          name: expect.stringMatching(new RegExp(`^[0-9a-f]{64}-${manifestWorkName('argocd', 'marks')}$`)),
          uid: true,
        },
      ]);
      expect(d).toStrictEqual(r);
    }));

  test('a. propagation: the work conditions and manifest status after the apply, before the spoke has a status', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        const work = buildManifestWork(hubApp(side, 'fresh'));
        await side.deliver(work);
        const view = workView(await side.synced(work.metadata.name, 'fresh'));
        await side.deleteWork(work.metadata.name);
        return view;
      });
      // what the real agent reports: Applied, Available and the summary rule's False condition on the work and
      // the manifest (plus StatusFeedbackSynced there), only the spec hash as feedback, all at the work's generation
      expect(r?.conditions.map((c: Obj) => `${c.type}=${c.status}`)).toStrictEqual([
        'Applied=True',
        'Available=True',
        `${RESOURCE_SUMMARY_CONDITION}=False`,
      ]);
      expect(r?.conditionsAtGeneration).toBe(true);
      expect(r?.manifests[0].conditions.map((c: Obj) => `${c.type}=${c.status}`)).toStrictEqual([
        'Applied=True',
        'Available=True',
        `${RESOURCE_SUMMARY_CONDITION}=False`,
        'StatusFeedbackSynced=True',
      ]);
      expect(Object.keys(r?.manifests[0].feedback.values)).toStrictEqual(['specHash']);
      expect(d).toStrictEqual(r);
    }));

  // Difference: for a manifest the spoke refuses, the real agent writes the cause on the manifest's Applied
  // condition only ("Failed to apply manifest: <error>"), fixed messages on the work's Applied ("Failed to
  // apply manifest work") and Available ("1 of 1 resources are not available"); the double's status writer
  // (test/support/work-agent.ts, `applied: false`) puts the message it is given on the work's Applied too, and
  // "Some resources are not available" on its Available. The manifest conditions agree.
  test('a. a payload the spoke refuses: the same work and manifest conditions', async () => {
    const views: Obj = {};
    for (const side of [real, double]) {
      const work = buildManifestWork(
        hubApp(side, 'refused', { [SPOKE_APP_NAMESPACE_ANNOTATION]: 'missing-namespace' }),
      );
      const written = await ocm.hub.apply<Obj>(raw(work), 'argocd-controller');
      if (side.name === 'double')
        await statusWriter.report(
          DOUBLE_CLUSTER,
          work.metadata.name,
          {},
          {
            applied: false,
            appliedMessage: conditionOf(
              manifestStatus(views.real.raw, 'Application', 'missing-namespace', 'refused')?.conditions,
              'Applied',
            )?.message,
          },
        );
      const failed = await waitFor(
        `${side.name}: the work Applied=False and Available reported at generation ${written.metadata.generation}`,
        async () => {
          const w = await side.work(work.metadata.name);
          const applied = conditionOf(w?.status?.conditions, 'Applied');
          const available = conditionOf(w?.status?.conditions, 'Available');
          const manifest = manifestStatus(w, 'Application', 'missing-namespace', 'refused');
          return (
            applied?.status === 'False' &&
            applied.observedGeneration === written.metadata.generation &&
            available?.observedGeneration === written.metadata.generation &&
            conditionOf(manifest?.conditions, 'Available') !== undefined &&
            w
          );
        },
        WAIT,
      );
      // finalizers left out: the double's status writer never holds the work (its klusterlet does, which
      // this scenario cannot run: it applies to a namespace of its own, where nothing is refused)
      views[side.name] = { raw: failed, view: { ...workView(failed), finalizers: undefined } };
      await ocm.hub.delete(WORK_API, 'ManifestWork', side.cluster, work.metadata.name);
      await ocm.hub
        .mergePatch(WORK_API, 'ManifestWork', side.cluster, work.metadata.name, {
          metadata: { finalizers: null },
        })
        .catch(() => undefined);
    }
    for (const line of diff(views.real.view, views.double.view)) report(`double vs real: ${line}`);
    expect(views.double.view).toStrictEqual(views.real.view);
  });

  test('b. status feedback: the same values, types and resource summary for the same spoke status', () =>
    ocm.track(async () => {
      // one status for both sides, its times included
      const base = argoStatus({
        sync: 'OutOfSync',
        health: 'Degraded',
        phase: 'Failed',
        forwardId: 'fwd-7',
        message: 'one or more objects failed to apply',
      });
      const status = {
        ...base,
        // the revision the last sync applied comes back as operationStateSyncRevision (what a 2.x hub compares)
        operationState: { ...base.operationState, syncResult: { revision: base.sync.revision, resources: [] } },
        resources: [
          {
            group: 'apps',
            version: 'v1',
            kind: 'Deployment',
            namespace: 'fed',
            name: 'api',
            status: 'OutOfSync',
            health: { status: 'Degraded', message: 'Deployment "api" exceeded its progress deadline\nsecond line' },
          },
          { version: 'v1', kind: 'Namespace', name: 'fed', status: 'Synced' },
          {
            group: 'batch',
            version: 'v1',
            kind: 'Job',
            namespace: 'fed',
            name: 'migrate',
            status: 'Synced',
            health: { status: 'Missing' },
          },
          {
            version: 'v1',
            kind: 'Service',
            namespace: 'fed',
            name: 'api',
            status: 'Synced',
            health: { status: 'Healthy' },
          },
        ],
        summary: { images: ['ghcr.io/acme/api:2', 'busybox:1.36'] },
      };
      const { real: r, double: d } = await onBoth(async (side) => {
        const work = buildManifestWork(hubApp(side, 'fed'));
        await side.deliver(work);
        await side.editSpokeApp('fed', (app) => ({ ...app, status }));
        const view = workView(await side.synced(work.metadata.name, 'fed'));
        await side.deleteWork(work.metadata.name);
        return view;
      });
      // the feedback values, their types, and the summary message (cel-go against the tests' CEL evaluator)
      expect(d?.manifests.map((m: Obj) => m.feedback)).toStrictEqual(r?.manifests.map((m: Obj) => m.feedback));
      const summary = (v: Obj | undefined) =>
        v?.manifests.map((m: Obj) => conditionOf(m.conditions, RESOURCE_SUMMARY_CONDITION));
      expect(summary(d)).toStrictEqual(summary(r));
      expect(d).toStrictEqual(r);
    }));

  // The real agent skips the apply while the manifest's hash (annotation open-cluster-management.io/config-spec-hash)
  // is unchanged (pkg/work/spoke/apply/server_side_apply.go), so an operation the spoke Argo CD cleared stays cleared
  // until the work changes.
  test('c. ignoreFields .operation: an operation the spoke cleared is not applied again while the work is unchanged', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        const work = buildManifestWork(hubApp(side, 'op', {}, { sync: { revision: 'main' } }));
        await side.deliver(work);
        const created = spokeView(await side.spokeApp('op'))?.operation;
        // the spoke Argo CD ran the operation and cleared it
        await side.editSpokeApp('op', (app) => ({
          ...app,
          operation: undefined,
          status: argoStatus({ sync: 'Synced', health: 'Healthy', phase: 'Succeeded' }),
        }));
        // a pass over the work at a new generation whose payload is unchanged (only its manifest config changed)
        await side.deliver(
          buildManifestWork(hubApp(side, 'op', {}, { sync: { revision: 'main' } }), {
            feedbackScrapeType: FeedbackScrape.POLL,
          }),
        );
        const after = spokeView(await side.spokeApp('op'))?.operation;
        await side.deleteWork(work.metadata.name);
        return { created, after };
      });
      expect(r).toStrictEqual({ created: { sync: { revision: 'main' } }, after: undefined });
      expect(d).toStrictEqual(r);
    }));

  test('c. ignoreFields .operation: an operation written on the spoke stays when a changed work is applied again', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        const app = hubApp(side, 'keep');
        await side.deliver(buildManifestWork(app));
        await side.editSpokeApp('keep', (a) => ({
          ...a,
          operation: { sync: { revision: 'hotfix' }, initiatedBy: { username: 'oncall' } },
        }));
        const changed = buildManifestWork({
          ...app,
          metadata: { ...app.metadata, labels: { ...app.metadata.labels, tier: 'gold' } },
        });
        await side.deliver(changed);
        const view = spokeView(await side.spokeApp('keep'));
        await side.deleteWork(changed.metadata.name);
        return { tier: view?.labels?.tier, operation: view?.operation };
      });
      expect(r).toStrictEqual({
        tier: 'gold',
        operation: { sync: { revision: 'hotfix' }, initiatedBy: { username: 'oncall' } },
      });
      expect(d).toStrictEqual(r);
    }));

  // The same shortcut: a spoke-side edit of a field the work sets stays until the work changes.
  test('c. a spoke-side edit of a field the work sets stays while the work is unchanged', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        const work = buildManifestWork(hubApp(side, 'drift'));
        await side.deliver(work);
        await side.editSpokeApp('drift', (a) => ({
          ...a,
          spec: { ...a.spec, source: { ...a.spec.source, targetRevision: 'edited-on-spoke' } },
          status: argoStatus({ sync: 'OutOfSync', health: 'Healthy', phase: 'Succeeded' }),
        }));
        // a pass over the work at a new generation whose payload is unchanged (only its manifest config changed)
        await side.deliver(buildManifestWork(hubApp(side, 'drift'), { feedbackScrapeType: FeedbackScrape.POLL }));
        const targetRevision = (await side.spokeApp('drift'))?.spec.source.targetRevision;
        await side.deleteWork(work.metadata.name);
        return { targetRevision };
      });
      expect(r).toStrictEqual({ targetRevision: 'edited-on-spoke' });
      expect(d).toStrictEqual(r);
    }));

  test('c. an operation dropped from the payload goes from the spoke Application the agent created it on', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        // the controller forwarded an operation, then dropped it from the payload once the spoke started it
        const app = hubApp(side, 'taken', {}, { sync: { revision: 'main' } });
        await side.deliver(buildManifestWork(app));
        const before = spokeView(await side.spokeApp('taken'))?.operation;
        const dropped = buildManifestWork({ ...app, operation: undefined });
        await side.deliver(dropped);
        const after = spokeView(await side.spokeApp('taken'))?.operation;
        await side.deleteWork(dropped.metadata.name);
        return { before, after };
      });
      expect(r).toStrictEqual({ before: { sync: { revision: 'main' } }, after: undefined });
      expect(d).toStrictEqual(r);
    }));

  test('d. CreateOnly (a work standing by) leaves an existing spoke Application as it is', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        // an Application already on the spoke, written by the model the app moves from (not by a work)
        const payload = payloadOf(buildManifestWork(hubApp(side, 'existing')));
        await side.createSpokeApp({
          ...payload,
          spec: { ...payload.spec, source: { ...payload.spec.source, targetRevision: 'pinned-on-spoke' } },
        });
        const standBy = buildManifestWork(
          hubApp(side, 'existing', { [STAND_BY_ANNOTATION]: 'true' }, { sync: { revision: 'main' } }),
        );
        expect(standBy.spec.manifestConfigs![0].updateStrategy).toStrictEqual({ type: 'CreateOnly' });
        await side.deliver(standBy);
        const view = spokeView(await side.spokeApp('existing'));
        await side.deleteWork(standBy.metadata.name);
        return { targetRevision: view?.spec.source.targetRevision, operation: view?.operation };
      });
      expect(r).toStrictEqual({ targetRevision: 'pinned-on-spoke', operation: undefined });
      expect(d).toStrictEqual(r);
    }));

  test('d. deleteOption: Orphan leaves the spoke Application, Foreground removes it', () =>
    ocm.track(async () => {
      const { real: r, double: d } = await onBoth(async (side) => {
        const orphan = buildManifestWork(hubApp(side, 'standby', { [STAND_BY_ANNOTATION]: 'true' }));
        const regular = buildManifestWork(hubApp(side, 'regular'));
        await side.deliver(orphan);
        await side.deliver(regular);
        const heldBefore = {
          orphan: (await side.work(orphan.metadata.name))?.metadata.finalizers,
          regular: (await side.work(regular.metadata.name))?.metadata.finalizers,
        };
        await side.deleteWork(orphan.metadata.name);
        await side.deleteWork(regular.metadata.name);
        const out = {
          heldBefore,
          orphan: spokeView(await side.spokeApp('standby')),
          regularLeft: (await side.spokeApp('regular')) !== undefined,
        };
        return out;
      });
      expect(r).toMatchObject({
        heldBefore: {
          orphan: ['cluster.open-cluster-management.io/manifest-work-cleanup'],
          regular: ['cluster.open-cluster-management.io/manifest-work-cleanup'],
        },
        orphan: { finalizers: ['resources-finalizer.argocd.argoproj.io'], ownerKinds: [] },
        regularLeft: false,
      });
      expect({ ...d, orphan: { ...d.orphan, annotations: undefined } }).toStrictEqual({
        ...r,
        orphan: { ...r.orphan, annotations: undefined },
      });
      expect(d).toStrictEqual(r);
    }));
});

/** Object keys sorted (stable JSON for comparisons). */
function sortKeys(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/** Paths where `a` (real) and `b` (double) differ, with both values, for the report. */
function diff(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => diff((a as Obj)[k], (b as Obj)[k], `${path}.${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length)
    return a.flatMap((x, i) => diff(x, b[i], `${path}[${i}]`));
  return [`${path || '.'}: real ${JSON.stringify(a)} | double ${JSON.stringify(b)}`];
}
