/**
 * Sharding on a real API server: three replicas of the controller as it ships (install rendered with
 * `shards: 3`, its ServiceAccount and Lease RBAC, the Deployment's args) split the clusters by shard, one
 * is killed with SIGKILL, and its shards go to the others; before that, one app moves to a cluster of
 * another shard. The assertions are about the state of the world
 * and the replicas' write logs (each replica logs every write at debug level with the shard it wrote
 * under), never about how long anything took:
 * - every shard's Lease is held by a live replica, every app has exactly one work, at its target, equal to
 *   what buildManifestWork makes of it, including the apps created and changed after the kill;
 * - every object written was written under exactly one shard, the shard of its cluster (the moved app:
 *   under its old cluster's shard until it moved, its old work deleted by that shard);
 * - no two replicas wrote for the same shard at the same time: per shard, one replica's writes all come
 *   before the next one's.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import {
  MANAGED_CLUSTER_ANNOTATION,
  ARGOCD_API_VERSION,
  CLEANUP_FINALIZER,
  CLUSTERSET_API_VERSION,
  CLUSTERSET_LABEL,
  CLUSTER_API_VERSION,
  WORK_API_VERSION,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { shardLeaseName, shardOf } from '../../src/model/reconcile/shards.js';
import { realCluster } from '../support/cluster.js';
import { loadKubeConfig } from '../support/envtest-cluster.js';
import { describeRealServer } from '../support/real-server.js';
import { shippedReplicas, type ReplicaProcess } from '../support/shipped-controller.js';
import { waitFor } from '../support/wait.js';
import { hubApp } from '../e2e/scenarios.js';
import { workMatchesApp } from '../e2e/invariants.js';

const SHARDS = 3;
const TIMEOUT_MS = 120_000;

interface LeaseLike {
  spec?: { holderIdentity?: string; leaseTransitions?: number };
}

/** One write of a replica's log. */
interface Write {
  readonly replica: string;
  readonly time: number;
  readonly verb: string;
  readonly object: string;
  readonly shard: number | undefined;
}

describeRealServer('sharded replicas of the shipped controller', (kubeconfigPath) => {
  const kubeConfig = loadKubeConfig(kubeconfigPath);
  const cluster = realCluster(kubeConfig);
  const id = `sh${Date.now().toString(36).slice(-5)}`;
  const ns = { controller: `${id}-system`, argo: `${id}-argocd`, apps: `${id}-apps` };
  const clusterSet = `${id}-set`;
  // Three clusters per shard.
  const clusters: string[] = [];
  for (let i = 0; clusters.length < 3 * SHARDS; i++) {
    const name = `${id}-c${i}`;
    if (clusters.filter((c) => shardOf(c, SHARDS) === shardOf(name, SHARDS)).length < 3) clusters.push(name);
  }
  let replicas: ReturnType<typeof shippedReplicas> | undefined;
  // An app that moves from a cluster of one shard to a cluster of another.
  const from = clusters[0];
  const to = clusters.find((c) => shardOf(c, SHARDS) !== shardOf(from, SHARDS))!;

  const appRef = (name: string) => ({ apiVersion: ARGOCD_API_VERSION, kind: 'Application', namespace: ns.apps, name });
  const lease = (shard: number) =>
    cluster.get<LeaseLike>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: ns.controller,
      name: shardLeaseName('pullfleet-controller', shard, SHARDS),
    });

  beforeAll(async () => {
    for (const name of [ns.controller, ns.argo, ns.apps, ...clusters])
      await cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await cluster.create({
      apiVersion: CLUSTERSET_API_VERSION,
      kind: 'ManagedClusterSet',
      metadata: { name: clusterSet },
      spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
    });
    for (const name of clusters)
      await cluster.create({
        apiVersion: CLUSTER_API_VERSION,
        kind: 'ManagedCluster',
        metadata: { name, labels: { [CLUSTERSET_LABEL]: clusterSet } },
        spec: { hubAcceptsClient: true },
      });
    await cluster.create({
      apiVersion: CLUSTERSET_API_VERSION,
      kind: 'ManagedClusterSetBinding',
      metadata: { name: clusterSet, namespace: ns.apps },
      spec: { clusterSet },
    });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await replicas?.stopAll();
    for (const app of await cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: ns.apps })) {
      await cluster.mergePatch(appRef(app.metadata.name), { metadata: { finalizers: null } }).catch(() => undefined);
      await cluster.delete(appRef(app.metadata.name));
    }
    for (const name of clusters) {
      for (const work of await cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: name }))
        await cluster.delete({
          apiVersion: WORK_API_VERSION,
          kind: 'ManifestWork',
          namespace: name,
          name: work.metadata.name,
        });
      await cluster.delete({ apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name });
    }
    await cluster.delete({ apiVersion: CLUSTERSET_API_VERSION, kind: 'ManagedClusterSet', name: clusterSet });
    for (const name of [ns.controller, ns.argo, ns.apps, ...clusters])
      await cluster.delete({ apiVersion: 'v1', kind: 'Namespace', name });
  }, TIMEOUT_MS);

  /** Every app has exactly its one work, at its target, as buildManifestWork makes it, and the cleanup finalizer. */
  async function fleetDelivered(): Promise<string | undefined> {
    const apps = await cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: ns.apps });
    const works = (
      await Promise.all(
        clusters.map((name) => cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: name })),
      )
    ).flat();
    const byKey = new Map(works.map((work) => [`${work.metadata.namespace}/${work.metadata.name}`, work]));
    for (const app of apps) {
      const target = app.metadata.annotations!['apps.open-cluster-management.io/ocm-managed-cluster'];
      const work = byKey.get(`${target}/${manifestWorkName(ns.apps, app.metadata.name)}`);
      if (!workMatchesApp(work, app)) return `${app.metadata.name}: its work is missing or out of date`;
      if (!(app.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) return `${app.metadata.name}: no finalizer`;
    }
    if (works.length !== apps.length) return `${works.length} works for ${apps.length} apps`;
    return undefined;
  }

  function writeLog(all: readonly ReplicaProcess[]): Write[] {
    return all.flatMap((replica) =>
      replica
        .output(Number.MAX_SAFE_INTEGER)
        .split('\n')
        .flatMap((line) => {
          if (!line.includes('"msg":"write"')) return [];
          const entry = JSON.parse(line) as {
            time: number;
            write: string;
            kind: string;
            namespace?: string;
            name: string;
            shard?: number;
          };
          return [
            {
              replica: replica.identity,
              time: entry.time,
              verb: entry.write,
              object: `${entry.kind} ${entry.namespace ?? ''}/${entry.name}`,
              shard: entry.shard,
            },
          ];
        }),
    );
  }

  test('GIVEN three replicas of a 3-shard install WHEN one is killed THEN its shards go to the others, every work is present once, and no shard was written by two replicas at once', async () => {
    // GIVEN the install rendered for three shards and three replicas
    replicas = shippedReplicas(kubeConfig, {
      namespace: ns.controller,
      argoNamespace: ns.argo,
      shards: SHARDS,
      replicas: SHARDS,
    });
    expect(replicas.install.args).toContain(`--shards=${SHARDS}`);
    const deployment = replicas.install.objects.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { replicas: number; strategy: { type: string } };
    };
    expect(deployment.spec).toMatchObject({ replicas: SHARDS, strategy: { type: 'Recreate' } });
    const leaseRole = replicas.install.objects.find(
      (o) => o.kind === 'Role' && o.metadata.namespace === ns.controller,
    ) as unknown as { rules: Array<{ verbs: string[] }> };
    expect(leaseRole.rules).toStrictEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] },
    ]);
    const flags = ['--lease-duration=6', '--renew-deadline=4', '--retry-period=1', '--log-level=debug'];
    const started = await Promise.all(
      [0, 1, 2].map((i) => replicas!.start({ identity: `${id}-replica-${i}`, extraArgs: flags, waitReady: false })),
    );
    await Promise.all(started.map((replica) => replica.ready()));
    const identities = new Set(started.map((replica) => replica.identity));
    await waitFor(
      'every shard Lease held by a replica',
      async () => {
        for (let shard = 0; shard < SHARDS; shard++)
          if (!identities.has((await lease(shard))?.spec?.holderIdentity ?? '')) return false;
        return true;
      },
      { timeoutMs: TIMEOUT_MS },
    );

    // WHEN apps are delivered across all shards
    for (const target of clusters)
      for (const n of [1, 2]) await cluster.create(hubApp(`${target}-app-${n}`, ns.apps, target));
    await cluster.create(hubApp('mover', ns.apps, from));
    await waitFor('the first apps delivered', async () => (await fleetDelivered()) === undefined, {
      timeoutMs: TIMEOUT_MS,
      intervalMs: 250,
      describe: fleetDelivered,
    });
    // AND one app moves to a cluster of another shard
    await cluster.mergePatch(appRef('mover'), { metadata: { annotations: { [MANAGED_CLUSTER_ANNOTATION]: to } } });
    await waitFor(
      'the moved app delivered at its new cluster only',
      async () => (await fleetDelivered()) === undefined,
      {
        timeoutMs: TIMEOUT_MS,
        intervalMs: 250,
        describe: fleetDelivered,
      },
    );

    // AND the replica leading the first cluster's shard is killed (no shutdown, no Lease release)
    const victimIdentity = (await lease(shardOf(clusters[0], SHARDS)))!.spec!.holderIdentity!;
    const victim = started.find((replica) => replica.identity === victimIdentity)!;
    const victimShards: number[] = [];
    for (let shard = 0; shard < SHARDS; shard++)
      if ((await lease(shard))?.spec?.holderIdentity === victimIdentity) victimShards.push(shard);
    await victim.kill();
    const killedAt = Date.now();
    const survivors = new Set(started.filter((r) => r !== victim).map((r) => r.identity));

    // AND meanwhile new apps arrive everywhere and the killed replica's apps change
    for (const target of clusters) await cluster.create(hubApp(`${target}-app-3`, ns.apps, target));
    for (const target of clusters.filter((c) => victimShards.includes(shardOf(c, SHARDS))))
      await cluster.mergePatch(appRef(`${target}-app-1`), {
        spec: { source: { targetRevision: 'v2' } },
      });

    // THEN the survivors hold every shard and the whole fleet is delivered, changes included
    await waitFor(
      'every shard Lease held by a survivor',
      async () => {
        for (let shard = 0; shard < SHARDS; shard++)
          if (!survivors.has((await lease(shard))?.spec?.holderIdentity ?? '')) return false;
        return true;
      },
      { timeoutMs: TIMEOUT_MS },
    );
    // For the record (not asserted): how long the shards of the killed replica went without a holder.
    process.stderr.write(
      `sharding: shards ${victimShards.join(', ')} of the killed replica held by a survivor ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill (Lease duration 6 s, retry period 1 s)\n`,
    );
    await waitFor('the fleet delivered after the kill', async () => (await fleetDelivered()) === undefined, {
      timeoutMs: TIMEOUT_MS,
      intervalMs: 250,
      describe: fleetDelivered,
    });
    for (const shard of victimShards) expect((await lease(shard))?.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);

    // AND every object was written under one shard only, the shard of its cluster
    // This test's objects (the replicas watch the whole server, where other suites leave objects too).
    const ours = new Set([ns.apps, ...clusters]);
    const writes = writeLog(started).filter((w) => ours.has(w.object.split(' ')[1].split('/')[0]));
    const works = writes.filter((w) => w.object.startsWith('ManifestWork '));
    expect(works.length).toBeGreaterThanOrEqual(clusters.length * 3);
    const shardsByObject = new Map<string, Set<number | undefined>>();
    for (const write of writes) {
      const set = shardsByObject.get(write.object) ?? new Set();
      set.add(write.shard);
      shardsByObject.set(write.object, set);
    }
    const wrong = [...shardsByObject].filter(([object, shards]) => {
      if (object.includes('mover')) return false;
      const [namespace, name] = object.split(' ')[1].split('/');
      const target = object.startsWith('ManifestWork ') ? namespace : name.replace(/-app-\d+$/, '');
      return shards.size !== 1 || [...shards][0] !== shardOf(target, SHARDS);
    });
    expect(wrong).toStrictEqual([]);
    // The moved app: its old work written (and deleted) under the old cluster's shard, the new one under
    // the new cluster's, and the app itself under the old shard until it moved, under the new one after.
    const moverWork = manifestWorkName(ns.apps, 'mover');
    expect([...(shardsByObject.get(`ManifestWork ${from}/${moverWork}`) ?? [])]).toStrictEqual([shardOf(from, SHARDS)]);
    expect(writes.some((w) => w.object === `ManifestWork ${from}/${moverWork}` && w.verb === 'delete')).toBe(true);
    expect([...(shardsByObject.get(`ManifestWork ${to}/${moverWork}`) ?? [])]).toStrictEqual([shardOf(to, SHARDS)]);
    const moverShards = writes
      .filter((w) => w.object === `Application ${ns.apps}/mover`)
      .sort((a, b) => a.time - b.time)
      .map((w) => w.shard);
    const moved = moverShards.indexOf(shardOf(to, SHARDS));
    const before = moved < 0 ? moverShards : moverShards.slice(0, moved);
    const after = moved < 0 ? [] : moverShards.slice(moved);
    expect([...new Set(before)]).toStrictEqual([shardOf(from, SHARDS)]);
    expect(after.filter((shard) => shard !== shardOf(to, SHARDS))).toStrictEqual([]);

    // AND per shard, no two replicas wrote at the same time: each replica's writes end before the next one's begin
    const overlaps: string[] = [];
    for (let shard = 0; shard < SHARDS; shard++) {
      const spans = new Map<string, { first: number; last: number }>();
      for (const write of writes.filter((w) => w.shard === shard)) {
        const span = spans.get(write.replica) ?? { first: write.time, last: write.time };
        spans.set(write.replica, { first: Math.min(span.first, write.time), last: Math.max(span.last, write.time) });
      }
      const ordered = [...spans].sort((a, b) => a[1].first - b[1].first);
      for (let i = 1; i < ordered.length; i++)
        if (ordered[i][1].first <= ordered[i - 1][1].last)
          overlaps.push(`shard ${shard}: ${ordered[i - 1][0]} and ${ordered[i][0]}`);
    }
    expect(overlaps).toStrictEqual([]);
    // The killed replica's shards were written by a survivor after the kill (its apps changed then).
    for (const shard of victimShards)
      expect(works.some((w) => w.shard === shard && survivors.has(w.replica))).toBe(true);
    expect(replicas.forbidden()).toStrictEqual([]);
  }, 300_000);
});
