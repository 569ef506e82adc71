/**
 * End-to-end scenarios for the hub controller, written against a {@link TestCluster}: the in-process API
 * double (test/e2e) or a real API server (test/envtest). The test plays the other actors — the
 * applicationset-controller / a user writing hub Applications, OCM registering clusters, and the work
 * agent reporting feedback — and asserts the resulting state of the world, polling with a bound.
 */
import { expect } from '@jest/globals';
import { pino } from 'pino';
import type { ControllerConfig } from '../../src/controller/runtime/config.js';
import { startController, type RunningController } from '../../src/controller/runtime/manager.js';
import {
  ARGOCD_API_VERSION,
  CLEANUP_FINALIZER,
  CLUSTERSET_LABEL,
  CLUSTERSET_API_VERSION,
  CLUSTER_API_VERSION,
  DELIVERY_ANNOTATION,
  DELIVERY_STATIC,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
  WORK_API_VERSION,
  LOCAL_CLUSTER,
  REFRESH_ANNOTATION,
  ARGOCD_SECRET_TYPE_LABEL,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { clusterSecretName } from '../../src/model/delivery/cluster-secret.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import { FORWARDED_OPERATION_ANNOTATION } from '../../src/model/reconcile/propagation.js';
import { DELIVERY_ERROR_CONDITION } from '../../src/model/reconcile/status.js';
import { errorCode, type TestCluster } from '../support/cluster.js';
import {
  createPlacementDecision,
  placementApplicationSet,
  placementDecision,
  pullTemplate,
} from '../support/appsets.js';
import { waitFor } from '../support/wait.js';
import { workMatchesApp } from './invariants.js';
import { WorkAgent } from '../support/work-agent.js';

/** The finalizer the real OCM hub puts on every ManifestWork until the spoke has cleaned up. */
export const WORK_AGENT_FINALIZER = 'cluster.open-cluster-management.io/manifest-work-cleanup';

/** The hub objects one scenario runs in, all named after a unique id so runs never collide. */
export interface Fleet {
  readonly id: string;
  /** Hub namespace bound to the cluster set (may deliver to `clusters`). */
  readonly hubNamespace: string;
  /** Hub namespace with no binding (tenancy violations). */
  readonly unboundNamespace: string;
  /** Two ManagedClusters in the bound set; their namespaces hold the works. */
  readonly clusters: readonly [string, string];
  readonly clusterSet: string;
  /** Namespace playing the hub Argo CD namespace (cluster Secrets, ApplicationSets). */
  readonly argoNamespace: string;
  /** Namespace the controller runs in (its leader Lease). */
  readonly controllerNamespace: string;
}

export interface StartControllerOptions {
  /** Resolve only once ready (caches synced and leading). @default true */
  waitReady?: boolean;
  /** The client name its requests carry on the double (per-process counters, partitions, hangs). */
  client?: string;
  /**
   * Play the Deployment that runs the shipped binary: it exits when it loses the leader Lease
   * (src/controller/cli.ts) and the kubelet starts it again, so a replica that stopped because it lost
   * the Lease is started again here, with the same config and client. @default false
   */
  restartOnLeadershipLost?: boolean;
}

export interface ScenarioContext {
  readonly cluster: TestCluster;
  readonly fleet: Fleet;
  readonly agent: WorkAgent;
  /**
   * Starts a controller against the cluster (stopped by the runner after the scenario); resolves once it
   * is ready (caches synced and leading) unless `waitReady` is false.
   */
  startController(config?: Partial<ControllerConfig>, options?: StartControllerOptions): Promise<RunningController>;
  /** Bound for every wait. */
  readonly timeoutMs: number;
}

export interface Scenario {
  readonly name: string;
  /** Runs only where the cluster can inject faults (the double). */
  readonly needsFaults?: boolean;
  run(ctx: ScenarioContext): Promise<void>;
}

const namespaceObject = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

export function fleetFor(id: string): Fleet {
  return {
    id,
    hubNamespace: `${id}-apps`,
    unboundNamespace: `${id}-other`,
    clusters: [`${id}-c1`, `${id}-c2`],
    clusterSet: `${id}-set`,
    argoNamespace: `${id}-argocd`,
    controllerNamespace: `${id}-system`,
  };
}

function fleetNamespaces(fleet: Fleet): string[] {
  return [
    fleet.hubNamespace,
    fleet.unboundNamespace,
    fleet.argoNamespace,
    fleet.controllerNamespace,
    ...fleet.clusters,
  ];
}

/** Creates namespaces, ManagedClusters, the ManagedClusterSet and its binding to the hub namespace. */
export async function setUpFleet(cluster: TestCluster, fleet: Fleet): Promise<void> {
  for (const ns of fleetNamespaces(fleet)) await cluster.create(namespaceObject(ns));
  await cluster.create({
    apiVersion: CLUSTERSET_API_VERSION,
    kind: 'ManagedClusterSet',
    metadata: { name: fleet.clusterSet },
    spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
  });
  for (const name of fleet.clusters) {
    await cluster.create({
      apiVersion: CLUSTER_API_VERSION,
      kind: 'ManagedCluster',
      metadata: { name, labels: { [CLUSTERSET_LABEL]: fleet.clusterSet } },
      spec: { hubAcceptsClient: true },
    });
  }
  await cluster.create({
    apiVersion: CLUSTERSET_API_VERSION,
    kind: 'ManagedClusterSetBinding',
    metadata: { name: fleet.clusterSet, namespace: fleet.hubNamespace },
    spec: { clusterSet: fleet.clusterSet },
  });
}

/** Removes everything a scenario created (finalizers first, so nothing is left terminating). */
export async function tearDownFleet(cluster: TestCluster, fleet: Fleet): Promise<void> {
  for (const ns of [fleet.hubNamespace, fleet.unboundNamespace]) {
    for (const app of await cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: ns })) {
      const ref = { apiVersion: ARGOCD_API_VERSION, kind: 'Application', namespace: ns, name: app.metadata.name };
      if (app.metadata.finalizers?.length)
        await cluster.mergePatch(ref, { metadata: { finalizers: null } }).catch(() => undefined);
      await cluster.delete(ref);
    }
  }
  for (const ns of fleet.clusters) {
    for (const work of await cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: ns })) {
      const ref = { apiVersion: WORK_API_VERSION, kind: 'ManifestWork', namespace: ns, name: work.metadata.name };
      if (work.metadata.finalizers?.length)
        await cluster.mergePatch(ref, { metadata: { finalizers: null } }).catch(() => undefined);
      await cluster.delete(ref);
    }
  }
  for (const name of fleet.clusters)
    await cluster.delete({ apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name });
  await cluster.delete({ apiVersion: CLUSTERSET_API_VERSION, kind: 'ManagedClusterSet', name: fleet.clusterSet });
  for (const ns of fleetNamespaces(fleet)) await cluster.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
}

/** A hub Application opted into pull delivery to `targetCluster`, as the applicationset-controller writes it. */
export function hubApp(
  name: string,
  namespace: string,
  targetClusterName: string,
  extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Application {
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: 'Application',
    metadata: {
      name,
      namespace,
      labels: { [PULL_LABEL]: 'true', ...extra.labels },
      annotations: {
        [MANAGED_CLUSTER_ANNOTATION]: targetClusterName,
        [SKIP_RECONCILE_ANNOTATION]: 'true',
        ...extra.annotations,
      },
    },
    spec: {
      project: 'default',
      source: {
        repoURL: 'https://github.com/argoproj/argocd-example-apps.git',
        path: 'guestbook',
        targetRevision: 'HEAD',
      },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
      syncPolicy: { automated: { prune: true, selfHeal: true } },
    },
  };
}

// ------------------------------------------------------------------------------------------- helpers

/** The reference of hub Application `namespace`/`name`, for the cluster's get/delete. */
export const appRef = (namespace: string, name: string) => ({
  apiVersion: ARGOCD_API_VERSION,
  kind: 'Application',
  namespace,
  name,
});
/** The reference of ManifestWork `namespace`/`name`. */
export const workRef = (namespace: string, name: string) => ({
  apiVersion: WORK_API_VERSION,
  kind: 'ManifestWork',
  namespace,
  name,
});

async function getApp(ctx: ScenarioContext, namespace: string, name: string): Promise<Application | undefined> {
  return ctx.cluster.get<Application>(appRef(namespace, name));
}

async function getWork(
  ctx: ScenarioContext,
  cluster: string,
  hubNamespace: string,
  app: string,
): Promise<ManifestWork | undefined> {
  return ctx.cluster.get<ManifestWork>(workRef(cluster, manifestWorkName(hubNamespace, app)));
}

/** Works pullfleet manages in the fleet's cluster namespaces, as `cluster/name`, sorted. */
async function managedWorks(ctx: ScenarioContext): Promise<string[]> {
  const out: string[] = [];
  for (const ns of ctx.fleet.clusters) {
    for (const work of await ctx.cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', {
      namespace: ns,
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
    })) {
      out.push(`${ns}/${work.metadata.name}`);
    }
  }
  return out.sort();
}

/** Waits until the app's work exists at `cluster` with the content buildManifestWork gives for the app as stored now. */
async function waitForDelivered(
  ctx: ScenarioContext,
  namespace: string,
  name: string,
  cluster: string,
): Promise<ManifestWork> {
  return waitFor(
    `ManifestWork for ${namespace}/${name} on ${cluster} equal to buildManifestWork`,
    async () => {
      const [app, work] = [await getApp(ctx, namespace, name), await getWork(ctx, cluster, namespace, name)];
      return workMatchesApp(work, app) ? work : undefined;
    },
    {
      timeoutMs: ctx.timeoutMs,
      describe: async () => ({
        app: await getApp(ctx, namespace, name),
        work: await getWork(ctx, cluster, namespace, name),
      }),
    },
  );
}

async function waitForAppStatus(
  ctx: ScenarioContext,
  namespace: string,
  name: string,
  what: string,
  check: (app: Application) => boolean,
): Promise<Application> {
  return waitFor(
    `${namespace}/${name}: ${what}`,
    async () => {
      const app = await getApp(ctx, namespace, name);
      return app && check(app) ? app : undefined;
    },
    { timeoutMs: ctx.timeoutMs, describe: () => getApp(ctx, namespace, name) },
  );
}

async function waitForGone(ctx: ScenarioContext, what: string, read: () => Promise<unknown>): Promise<void> {
  await waitFor(`${what} to be gone`, async () => (await read()) === undefined, {
    timeoutMs: ctx.timeoutMs,
    describe: read,
  });
}

/** Applies `change` to the stored object with optimistic locking, retrying on 409 (as any controller would). */
async function patchFresh(
  ctx: ScenarioContext,
  ref: ReturnType<typeof appRef>,
  change: (current: Application) => object,
): Promise<Application> {
  for (let attempt = 0; ; attempt++) {
    const current = await ctx.cluster.get<Application>(ref);
    if (!current) throw new Error(`${ref.namespace}/${ref.name} does not exist`);
    try {
      return await ctx.cluster.mergePatch<Application>(ref, {
        ...change(current),
        metadata: {
          ...((change(current) as { metadata?: object }).metadata ?? {}),
          resourceVersion: current.metadata.resourceVersion,
        },
      });
    } catch (e) {
      if (errorCode(e) !== 409 || attempt > 20) throw e;
    }
  }
}

const deliveryError = (app: Application) => app.status?.conditions?.find((c) => c.type === DELIVERY_ERROR_CONDITION);

// ------------------------------------------------------------------------------------------- scenarios

export const SCENARIOS: Scenario[] = [
  {
    name: 'hub Applications opted into pull get a ManifestWork equal to buildManifestWork, and the cleanup finalizer',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();

      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      await ctx.cluster.create(hubApp('billing', hubNamespace, clusters[1]));
      await ctx.cluster.create({
        ...hubApp('not-pull', hubNamespace, clusters[0]),
        metadata: { ...hubApp('not-pull', hubNamespace, clusters[0]).metadata, labels: {} },
      });

      await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);
      await waitForDelivered(ctx, hubNamespace, 'billing', clusters[1]);
      await waitForAppStatus(ctx, hubNamespace, 'guestbook', 'cleanup finalizer added', (app) =>
        (app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER),
      );
      expect(await managedWorks(ctx)).toStrictEqual(
        [
          `${clusters[0]}/${manifestWorkName(hubNamespace, 'guestbook')}`,
          `${clusters[1]}/${manifestWorkName(hubNamespace, 'billing')}`,
        ].sort(),
      );
      expect((await getApp(ctx, hubNamespace, 'not-pull'))?.metadata.finalizers).toBeUndefined();
    },
  },
  {
    name: 'a spec change on the hub app updates its work in place',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      const before = await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);

      await patchFresh(ctx, appRef(hubNamespace, 'guestbook'), () => ({ spec: { source: { targetRevision: 'v2' } } }));

      const after = await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);
      expect(after.metadata.uid).toBe(before.metadata.uid);
      const payload = after.spec.workload.manifests[after.spec.workload.manifests.length - 1] as {
        spec: { source: { targetRevision: string } };
      };
      expect(payload.spec.source.targetRevision).toBe('v2');
    },
  },
  {
    name: 'retargeting an app to another cluster deletes the old work and creates the new one',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);

      await patchFresh(ctx, appRef(hubNamespace, 'guestbook'), () => ({
        metadata: { annotations: { [MANAGED_CLUSTER_ANNOTATION]: clusters[1] } },
      }));

      await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[1]);
      await waitForGone(ctx, 'the work on the old cluster', () => getWork(ctx, clusters[0], hubNamespace, 'guestbook'));
      expect(await managedWorks(ctx)).toStrictEqual([`${clusters[1]}/${manifestWorkName(hubNamespace, 'guestbook')}`]);
    },
  },
  {
    name: 'opting out (pull label removed) deletes the work and releases the finalizer',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);
      await waitForAppStatus(ctx, hubNamespace, 'guestbook', 'cleanup finalizer added', (app) =>
        (app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER),
      );

      await patchFresh(ctx, appRef(hubNamespace, 'guestbook'), () => ({
        metadata: { labels: { [PULL_LABEL]: null } },
      }));

      await waitForGone(ctx, 'the work', () => getWork(ctx, clusters[0], hubNamespace, 'guestbook'));
      await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'finalizer released',
        (app) => !(app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER),
      );
      expect(await managedWorks(ctx)).toStrictEqual([]);
    },
  },
  {
    name: 'deleting a hub app deletes its work first and releases the finalizer only once the work is gone',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      const work = await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);
      await waitForAppStatus(ctx, hubNamespace, 'guestbook', 'cleanup finalizer added', (app) =>
        (app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER),
      );
      await ctx.agent.addFinalizer(work.metadata.namespace!, work.metadata.name, WORK_AGENT_FINALIZER);

      await ctx.cluster.delete(appRef(hubNamespace, 'guestbook'));

      // The spoke has not cleaned up yet (the agent holds its finalizer): the work is terminating and the app must wait.
      await waitFor(
        'the work to be terminating',
        async () => (await getWork(ctx, clusters[0], hubNamespace, 'guestbook'))?.metadata.deletionTimestamp,
        { timeoutMs: ctx.timeoutMs },
      );
      const waiting = await getApp(ctx, hubNamespace, 'guestbook');
      expect(waiting?.metadata.deletionTimestamp).toBeDefined();
      expect(waiting?.metadata.finalizers).toContain(CLEANUP_FINALIZER);

      await ctx.agent.removeFinalizer(work.metadata.namespace!, work.metadata.name, WORK_AGENT_FINALIZER);

      await waitForGone(ctx, 'the work', () => getWork(ctx, clusters[0], hubNamespace, 'guestbook'));
      await waitForGone(ctx, 'the hub app', () => getApp(ctx, hubNamespace, 'guestbook'));
    },
  },
  {
    name: 'a work whose hub app is gone (deleted while the controller was down, finalizer removed by hand) is swept',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      const first = await ctx.startController();
      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);
      await first.stop();

      await ctx.cluster.mergePatch(appRef(hubNamespace, 'guestbook'), { metadata: { finalizers: null } });
      await ctx.cluster.delete(appRef(hubNamespace, 'guestbook'));
      await ctx.startController();

      await waitForGone(ctx, 'the orphaned work', () => getWork(ctx, clusters[0], hubNamespace, 'guestbook'));
    },
  },
  {
    name: 'feedback written into work status by the work agent reaches the hub status (matched by resourceMeta, any fieldValue type), including Progressing -> Healthy',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      const work = await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);

      await ctx.agent.report(
        work.metadata.namespace!,
        work.metadata.name,
        { syncStatus: 'Synced', healthStatus: 'Progressing', syncRevision: 'abc123' },
        { reverse: true },
      );
      const progressing = await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'Progressing',
        (app) => app.status?.health?.status === 'Progressing',
      );
      expect(progressing.status?.sync).toStrictEqual({ status: 'Synced', revision: 'abc123' });

      await ctx.agent.report(work.metadata.namespace!, work.metadata.name, {
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
        syncRevision: 'abc123',
      });
      await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'Healthy',
        (app) => app.status?.health?.status === 'Healthy',
      );

      // Agents type feedback differently: a JsonRaw string and a non-string revision still land as text.
      await ctx.agent.report(
        work.metadata.namespace!,
        work.metadata.name,
        { healthStatus: 'Degraded' },
        {
          values: [
            { name: 'syncStatus', fieldValue: { type: 'JsonRaw', jsonRaw: '"OutOfSync"' } },
            { name: 'syncRevision', fieldValue: { type: 'Integer', integer: 42 } },
          ],
        },
      );
      const degraded = await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'Degraded and OutOfSync',
        (app) => app.status?.health?.status === 'Degraded' && app.status?.sync?.status === 'OutOfSync',
      );
      expect(degraded.status?.sync).toStrictEqual({ status: 'OutOfSync', revision: '42' });
    },
  },
  {
    name: 'a work the spoke failed to apply shows as a DeliveryError condition on the hub app',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await ctx.cluster.create(hubApp('guestbook', hubNamespace, clusters[0]));
      const work = await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);

      await ctx.agent.report(
        work.metadata.namespace!,
        work.metadata.name,
        {},
        { applied: false, appliedMessage: 'the Application CRD is not installed' },
      );

      const app = await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'DeliveryError',
        (a) => deliveryError(a) !== undefined,
      );
      expect(deliveryError(app)?.message).toContain('the Application CRD is not installed');
    },
  },
  {
    name: 'a statically delivered work is never written by the controller, but its feedback still reaches the hub app',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      const staticApp = hubApp('static-app', hubNamespace, clusters[0], {
        annotations: { [DELIVERY_ANNOTATION]: DELIVERY_STATIC },
      });
      const created = await ctx.cluster.create<Application>(staticApp);
      const staticWork = buildManifestWork({ ...staticApp, metadata: { ...staticApp.metadata, uid: undefined } }, {});
      await ctx.cluster.apply(staticWork, 'argocd-hub-sync');
      const reported = await ctx.agent.report(clusters[0], staticWork.metadata.name, {
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
        syncRevision: 'static-rev',
      });

      await ctx.startController();

      await waitForAppStatus(
        ctx,
        hubNamespace,
        'static-app',
        'Healthy from the static work',
        (app) => app.status?.health?.status === 'Healthy',
      );
      const work = await getWork(ctx, clusters[0], hubNamespace, 'static-app');
      expect(work?.metadata.resourceVersion).toBe(reported.metadata.resourceVersion);
      expect(
        work?.metadata.managedFields
          ?.map((m) => (m as { manager: string }).manager)
          .filter((m) => m === 'pullfleet-controller'),
      ).toStrictEqual([]);
      const app = await getApp(ctx, hubNamespace, 'static-app');
      expect(app?.metadata.finalizers ?? []).not.toContain(CLEANUP_FINALIZER);
      expect(app?.metadata.uid).toBe(created.metadata.uid);
    },
  },
  {
    name: 'tenancy: an app in a namespace with no binding for its cluster (or targeting local-cluster) gets a DeliveryError and no work',
    async run(ctx) {
      const { hubNamespace, unboundNamespace, clusters } = ctx.fleet;
      await ctx.startController();

      await ctx.cluster.create(hubApp('intruder', unboundNamespace, clusters[0]));
      await ctx.cluster.create(hubApp('to-hub', hubNamespace, LOCAL_CLUSTER));
      await ctx.cluster.create(hubApp('to-nowhere', hubNamespace, `${ctx.fleet.id}-missing`));
      await ctx.cluster.create(hubApp('allowed', hubNamespace, clusters[0]));

      const intruder = await waitForAppStatus(
        ctx,
        unboundNamespace,
        'intruder',
        'DeliveryError',
        (a) => deliveryError(a) !== undefined,
      );
      const toHub = await waitForAppStatus(
        ctx,
        hubNamespace,
        'to-hub',
        'DeliveryError',
        (a) => deliveryError(a) !== undefined,
      );
      const toNowhere = await waitForAppStatus(
        ctx,
        hubNamespace,
        'to-nowhere',
        'DeliveryError',
        (a) => deliveryError(a) !== undefined,
      );
      await waitForDelivered(ctx, hubNamespace, 'allowed', clusters[0]);
      expect(deliveryError(intruder)?.message).toBe(
        `namespace "${unboundNamespace}" may not deliver to ManagedCluster "${clusters[0]}": no ManagedClusterSet is bound to it; add a ManagedClusterSetBinding in "${unboundNamespace}" for a set that contains the cluster`,
      );
      expect(deliveryError(toHub)?.message).toContain('local-cluster is the hub itself');
      expect(deliveryError(toNowhere)?.message).toContain(`ManagedCluster "${ctx.fleet.id}-missing" does not exist`);
      expect(await getWork(ctx, clusters[0], unboundNamespace, 'intruder')).toBeUndefined();
      expect(await managedWorks(ctx)).toStrictEqual([`${clusters[0]}/${manifestWorkName(hubNamespace, 'allowed')}`]);

      // Binding the set to the namespace lifts the restriction: the app is delivered and the condition clears.
      await ctx.cluster.create({
        apiVersion: CLUSTERSET_API_VERSION,
        kind: 'ManagedClusterSetBinding',
        metadata: { name: ctx.fleet.clusterSet, namespace: unboundNamespace },
        spec: { clusterSet: ctx.fleet.clusterSet },
      });
      await waitForDelivered(ctx, unboundNamespace, 'intruder', clusters[0]);
      await waitForAppStatus(
        ctx,
        unboundNamespace,
        'intruder',
        'DeliveryError cleared',
        (a) => deliveryError(a) === undefined,
      );
    },
  },
  {
    name: 'restarting the controller mid-stream loses and duplicates nothing',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      const names = Array.from({ length: 12 }, (_, i) => `app-${String(i).padStart(2, '0')}`);
      const targetOf = (i: number) => clusters[i % 2];
      const first = await ctx.startController();
      for (const [i, name] of names.slice(0, 6).entries())
        await ctx.cluster.create(hubApp(name, hubNamespace, targetOf(i)));
      await waitForDelivered(ctx, hubNamespace, names[0], targetOf(0));
      await first.stop();

      // While no controller runs: more apps, a retarget, an opt-out and a deletion.
      for (const [i, name] of names.slice(6).entries())
        await ctx.cluster.create(hubApp(name, hubNamespace, targetOf(i + 6)));
      await patchFresh(ctx, appRef(hubNamespace, names[0]), () => ({
        metadata: { annotations: { [MANAGED_CLUSTER_ANNOTATION]: targetOf(1) } },
      }));
      await patchFresh(ctx, appRef(hubNamespace, names[1]), () => ({
        metadata: { labels: { [PULL_LABEL]: 'false' } },
      }));
      await ctx.cluster.delete(appRef(hubNamespace, names[2]));
      await ctx.startController();

      const expected = new Map<string, string>(names.map((name, i) => [name, targetOf(i)]));
      expected.set(names[0], targetOf(1));
      expected.delete(names[1]);
      expected.delete(names[2]);
      for (const [name, cluster] of expected) await waitForDelivered(ctx, hubNamespace, name, cluster);
      await waitForGone(ctx, 'the deleted app', () => getApp(ctx, hubNamespace, names[2]));
      const want = [...expected].map(([name, cluster]) => `${cluster}/${manifestWorkName(hubNamespace, name)}`).sort();
      await waitFor(
        'exactly one work per delivered app',
        async () => JSON.stringify(await managedWorks(ctx)) === JSON.stringify(want),
        {
          timeoutMs: ctx.timeoutMs,
          describe: () => managedWorks(ctx),
        },
      );
    },
  },
  {
    name: 'watch expiry (410 Gone) mid-stream: the controller relists and converges, including feedback',
    needsFaults: true,
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      const controller = await ctx.startController();
      await ctx.cluster.create(hubApp('before', hubNamespace, clusters[0]));
      const work = await waitForDelivered(ctx, hubNamespace, 'before', clusters[0]);

      ctx.cluster.faults!.expireWatches();
      await ctx.cluster.create(hubApp('during', hubNamespace, clusters[1]));
      await patchFresh(ctx, appRef(hubNamespace, 'before'), () => ({ spec: { source: { targetRevision: 'v3' } } }));
      ctx.cluster.faults!.expireWatches();
      await ctx.agent.report(work.metadata.namespace!, work.metadata.name, {
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
      });

      await waitForDelivered(ctx, hubNamespace, 'during', clusters[1]);
      const updated = await waitForDelivered(ctx, hubNamespace, 'before', clusters[0]);
      expect(
        (updated.spec.workload.manifests.at(-1) as { spec: { source: { targetRevision: string } } }).spec.source
          .targetRevision,
      ).toBe('v3');
      await waitForAppStatus(ctx, hubNamespace, 'before', 'Healthy', (app) => app.status?.health?.status === 'Healthy');
      const relists = [
        ...(await controller.metrics()).matchAll(/^pullfleet_watch_relists_total\{[^}]*\} (\d+)/gm),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
      expect(relists).toBeGreaterThan(0);
    },
  },
  {
    name: 'the refresh annotation is forwarded once; operation stays on the hub app and in the work until the spoke starts it; the hub shows no operation state the spoke did not report',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      const app = hubApp('guestbook', hubNamespace, clusters[0], { annotations: { [REFRESH_ANNOTATION]: 'hard' } });
      await ctx.cluster.create({
        ...app,
        operation: { sync: { revision: 'HEAD' }, initiatedBy: { username: 'rollout' } },
      });

      const forwarded = await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'operation forwarded and kept until taken',
        (a) =>
          (a as { operation?: unknown }).operation !== undefined &&
          a.metadata.annotations?.[REFRESH_ANNOTATION] === undefined &&
          a.metadata.annotations?.[FORWARDED_OPERATION_ANNOTATION] !== undefined,
      );
      const waiting = await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'a status written while the spoke has not started',
        (a) => a.status?.health?.status !== undefined,
      );
      // Never a phase or a startedAt the spoke did not report (RollingSync would take it for a sync).
      expect(waiting.status?.operationState).toBeUndefined();
      expect(forwarded.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION]).toBe(clusters[0]);
      const work = await waitForDelivered(ctx, hubNamespace, 'guestbook', clusters[0]);

      await ctx.agent.report(work.metadata.namespace!, work.metadata.name, {
        syncStatus: 'Synced',
        healthStatus: 'Healthy',
        syncRevision: 'abc123',
        operationStatePhase: 'Succeeded',
        operationStateStartedAt: '2030-01-01T00:00:00Z',
      });

      const done = await waitForAppStatus(
        ctx,
        hubNamespace,
        'guestbook',
        'Healthy after the spoke sync, operation taken',
        (a) => a.status?.health?.status === 'Healthy' && (a as { operation?: unknown }).operation === undefined,
      );
      expect(done.status?.operationState).toMatchObject({ phase: 'Succeeded', startedAt: '2030-01-01T00:00:00Z' });
    },
  },
  {
    name: 'two replicas with leader election: only the leader delivers, and the standby takes over when it stops',
    async run(ctx) {
      const { hubNamespace, clusters, controllerNamespace } = ctx.fleet;
      const election = {
        leaderElection: true,
        namespace: controllerNamespace,
        leaseName: 'pullfleet-e2e',
        leaseDurationSeconds: 4,
        renewDeadlineSeconds: 3,
        retryPeriodSeconds: 0.2,
      };
      const a = await ctx.startController({ ...election, identity: 'replica-a' });
      const b = await ctx.startController({ ...election, identity: 'replica-b' }, { waitReady: false });
      const leaseRef = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace: controllerNamespace,
        name: 'pullfleet-e2e',
      };

      await ctx.cluster.create(hubApp('first', hubNamespace, clusters[0]));
      await waitForDelivered(ctx, hubNamespace, 'first', clusters[0]);
      expect((await ctx.cluster.get<{ spec?: { holderIdentity?: string } }>(leaseRef))?.spec?.holderIdentity).toBe(
        'replica-a',
      );

      await a.stop();
      await waitFor(
        'replica-b to lead',
        () =>
          Promise.race([
            b.ready().then(() => true),
            new Promise<false>((resolve) => setTimeout(() => resolve(false), 200)),
          ]),
        { timeoutMs: ctx.timeoutMs },
      );
      await ctx.cluster.create(hubApp('second', hubNamespace, clusters[1]));

      await waitForDelivered(ctx, hubNamespace, 'second', clusters[1]);
      expect((await ctx.cluster.get<{ spec?: { holderIdentity?: string } }>(leaseRef))?.spec?.holderIdentity).toBe(
        'replica-b',
      );
      expect(await managedWorks(ctx)).toStrictEqual(
        [
          `${clusters[0]}/${manifestWorkName(hubNamespace, 'first')}`,
          `${clusters[1]}/${manifestWorkName(hubNamespace, 'second')}`,
        ].sort(),
      );
    },
  },
  {
    name: 'cluster secrets: a blank Argo CD cluster Secret for each cluster a pull ApplicationSet may select, foreign Secrets untouched, deleted only when the ManagedCluster is gone',
    async run(ctx) {
      const { argoNamespace, clusters } = ctx.fleet;
      const placement = `${ctx.fleet.id}-placement`;
      const secretRef = (cluster: string) => ({
        apiVersion: 'v1',
        kind: 'Secret',
        namespace: argoNamespace,
        name: clusterSecretName(cluster),
      });
      // Someone else already registers the second cluster with Argo CD: the controller must leave it alone.
      const foreign = await ctx.cluster.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'hand-made', namespace: argoNamespace, labels: { [ARGOCD_SECRET_TYPE_LABEL]: 'cluster' } },
        stringData: { name: clusters[1], server: 'https://example.invalid' },
      });
      await ctx.cluster.create(
        placementApplicationSet({
          name: 'guestbook',
          namespace: argoNamespace,
          placement,
          requeueAfterSeconds: 180,
          configMapRef: 'acm-placement',
          template: pullTemplate('guestbook', { repoURL: 'https://example.com/repo.git', skipReconcile: false }),
        }),
      );
      await createPlacementDecision(
        ctx.cluster,
        placementDecision(placement, [...clusters, LOCAL_CLUSTER, `${ctx.fleet.id}-unregistered`], {
          namespace: argoNamespace,
        }),
      );
      await ctx.startController({ clusterSecrets: true, argoNamespace });

      const secret = await waitFor(
        'the blank cluster Secret',
        () =>
          ctx.cluster.get<{ data?: Record<string, string>; metadata: { labels?: Record<string, string> } }>(
            secretRef(clusters[0]),
          ),
        {
          timeoutMs: ctx.timeoutMs,
        },
      );
      expect(Object.keys(secret.data ?? {}).sort()).toStrictEqual(['name', 'server']);
      expect(Buffer.from(secret.data!.name, 'base64').toString()).toBe(clusters[0]);
      expect(secret.metadata.labels?.[ARGOCD_SECRET_TYPE_LABEL]).toBe('cluster');
      const inArgo = await ctx.cluster.list<{ metadata: { name: string; resourceVersion?: string } }>('v1', 'Secret', {
        namespace: argoNamespace,
        labelSelector: `${ARGOCD_SECRET_TYPE_LABEL}=cluster`,
      });
      expect(inArgo.map((s) => s.metadata.name).sort()).toStrictEqual(
        [clusterSecretName(clusters[0]), 'hand-made'].sort(),
      );
      expect(inArgo.find((s) => s.metadata.name === 'hand-made')?.metadata.resourceVersion).toBe(
        foreign.metadata.resourceVersion,
      );

      await ctx.cluster.delete({ apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name: clusters[0] });

      await waitForGone(ctx, 'the Secret of the removed cluster', () => ctx.cluster.get(secretRef(clusters[0])));
      expect(await ctx.cluster.get(secretRef(clusters[1]))).toBeUndefined();
      expect(
        await ctx.cluster.get({ apiVersion: 'v1', kind: 'Secret', namespace: argoNamespace, name: 'hand-made' }),
      ).toBeDefined();
    },
  },
];

/** Starts controllers for one scenario and stops them all afterwards. */
export function controllerStarter(cluster: TestCluster, base: Partial<ControllerConfig> = {}) {
  const running: RunningController[] = [];
  /** Restarts of replicas that lost the Lease, still starting (stopAll waits for them, then stops them too). */
  const restarts = new Set<Promise<unknown>>();
  let closed = false;
  async function launch(
    config: Partial<ControllerConfig>,
    options: StartControllerOptions,
  ): Promise<RunningController> {
    const logger = pino({ level: process.env.PULLFLEET_E2E_LOG ?? 'silent' });
    const onLeadershipLost = () => {
      if (closed) return;
      logger.warn(
        { client: options.client },
        'test harness: the replica stopped after losing the Lease; starting it again, as its Deployment would',
      );
      const restart = launch(config, options).catch((error: unknown) =>
        logger.error({ err: error instanceof Error ? error.message : String(error) }, 'test harness: restart failed'),
      );
      restarts.add(restart);
      void restart.finally(() => restarts.delete(restart));
    };
    const controller = await startController({
      kubeConfig: cluster.kubeConfig(options.client),
      config: { leaderElection: false, clusterSecrets: false, workers: 4, ...base, ...config },
      logger,
      ...(options.restartOnLeadershipLost ? { onLeadershipLost } : {}),
    });
    running.push(controller);
    return controller;
  }
  return {
    async start(
      config: Partial<ControllerConfig> = {},
      options: StartControllerOptions = {},
    ): Promise<RunningController> {
      const controller = await launch(config, options);
      if (options.waitReady !== false) await controller.ready();
      return controller;
    },
    /**
     * Stops every controller started here (and every restart of one). Bounded: a controller whose stop()
     * does not finish in `boundMs` is abandoned and named in the result (stop() must not hang; the caller decides).
     */
    async stopAll(boundMs = 15_000): Promise<string[]> {
      closed = true;
      await Promise.all([...restarts]);
      const stuck: string[] = [];
      await Promise.all(
        running.splice(0).map(async (c, i) => {
          let timer: NodeJS.Timeout | undefined;
          const bound = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), boundMs)));
          const result = await Promise.race([c.stop().then(() => 'stopped' as const), bound]);
          clearTimeout(timer);
          if (result === 'stuck') stuck.push(`controller #${i + 1}`);
        }),
      );
      return stuck;
    },
  };
}
