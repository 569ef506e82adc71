/**
 * Chaos scenarios: the controller killed or stopped mid-burst, the API server gone for a while,
 * conflicting writers, a leader whose requests hang, and a corpus of malformed hub Applications and
 * ManifestWork feedback. Each ends with the shared fleet invariants (no crash, no lost or duplicate work,
 * the right work or a condition saying why not). Scenarios marked `needsFaults` run only on the double.
 */
import { expect } from '@jest/globals';
import {
  CLUSTER_API_VERSION,
  LOCAL_CLUSTER,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  SKIP_RECONCILE_ANNOTATION,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { bumpRevision, ConflictWriter, touchAnnotation, touchLabel } from '../support/conflict-writer.js';
import { WRITE_VERBS, type FakeApiServer } from '../double/fake-apiserver.js';
import { waitFor } from '../support/wait.js';
import { assertFleetInvariants, workMatchesApp } from './invariants.js';
import { appRef, hubApp, workRef, type Scenario, type ScenarioContext } from './scenarios.js';

function serverOf(ctx: ScenarioContext): FakeApiServer {
  const server = ctx.cluster.faults?.server;
  if (!server) throw new Error('this scenario injects faults and needs the API double');
  return server;
}

/** Applies a merge patch with optimistic locking, retrying on 409. */
async function patchApp(
  ctx: ScenarioContext,
  name: string,
  patch: (app: Application) => Record<string, unknown>,
  namespace = ctx.fleet.hubNamespace,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const current = await ctx.cluster.get<Application>(appRef(namespace, name));
    if (!current) throw new Error(`${namespace}/${name} does not exist`);
    const body = patch(current);
    try {
      await ctx.cluster.mergePatch(appRef(namespace, name), {
        ...body,
        metadata: {
          ...((body.metadata as object | undefined) ?? {}),
          resourceVersion: current.metadata.resourceVersion,
        },
      });
      return;
    } catch (e) {
      if ((e as { code?: number }).code !== 409 || attempt > 20) throw e;
    }
  }
}

/**
 * A burst of hub-side changes: `count` new apps spread over both clusters, then a retarget, an opt-out
 * and a deletion among them. Calls `midway` after the first half of the creates.
 */
export async function burst(
  ctx: ScenarioContext,
  prefix: string,
  count: number,
  midway?: () => Promise<void>,
): Promise<void> {
  const { hubNamespace, clusters } = ctx.fleet;
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
  for (const [i, name] of names.entries()) {
    if (i === Math.floor(count / 2)) await midway?.();
    await ctx.cluster.create(hubApp(name, hubNamespace, clusters[i % 2]));
  }
  await patchApp(ctx, names[0], () => ({ metadata: { annotations: { [MANAGED_CLUSTER_ANNOTATION]: clusters[1] } } }));
  await patchApp(ctx, names[1], () => ({ metadata: { labels: { [PULL_LABEL]: 'false' } } }));
  await ctx.cluster.delete(appRef(hubNamespace, names[2]));
}

const leaseRef = (ctx: ScenarioContext, name: string) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  namespace: ctx.fleet.controllerNamespace,
  name,
});
type Lease = {
  spec?: { holderIdentity?: string; renewTime?: string; acquireTime?: string; leaseDurationSeconds?: number };
};

async function leaderGauge(controller: { metrics(): Promise<string> }): Promise<number> {
  const match = /^pullfleet_leader (\d+)/m.exec(await controller.metrics());
  return match ? Number(match[1]) : 0;
}

/** A payload string of `bytes` characters (an oversized Helm values block). */
const bigValues = (bytes: number) => 'x'.repeat(bytes);

export const CHAOS_SCENARIOS: Scenario[] = [
  {
    name: 'kill -9 mid-burst and restart: the killed replica never acts again and the new one converges with nothing lost or duplicated',
    needsFaults: true,
    async run(ctx) {
      const server = serverOf(ctx);
      const election = {
        leaderElection: true,
        namespace: ctx.fleet.controllerNamespace,
        leaseName: 'chaos-kill',
        leaseDurationSeconds: 2,
        renewDeadlineSeconds: 1.5,
        retryPeriodSeconds: 0.2,
      };
      await ctx.startController({ ...election, identity: 'killed' }, { client: 'killed' });

      await burst(ctx, 'k', 16, async () => {
        // kill -9: every connection of the process is cut, it never comes back, no Lease release, no cleanup.
        server.partition('killed', 'refuse');
      });
      const writesWhenKilled = server.writeCount(undefined, 'killed');
      // The successor takes over once the killed replica's 2-second Lease has expired. Its own Lease has the
      // shipped timings: a 1.5-second renew deadline would assume this process (API double, test and
      // controller on one event loop) is never starved that long. If it still loses the Lease it stops,
      // as it must, and its Deployment restarts it.
      await ctx.startController(
        { ...election, identity: 'successor', leaseDurationSeconds: 15, renewDeadlineSeconds: 10 },
        { client: 'successor', restartOnLeadershipLost: true },
      );

      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      expect(server.writeCount(undefined, 'killed')).toBe(writesWhenKilled);
      const lease = await ctx.cluster.get<Lease>(leaseRef(ctx, 'chaos-kill'));
      expect(lease?.spec?.holderIdentity).toBe('successor');
    },
  },
  {
    name: 'the only replica stalls past its renew deadline mid-burst (a loaded node): it stops, its Deployment restarts it, and the restarted replica converges',
    needsFaults: true,
    async run(ctx) {
      const server = serverOf(ctx);
      const election = {
        leaderElection: true,
        namespace: ctx.fleet.controllerNamespace,
        leaseName: 'chaos-stall',
        leaseDurationSeconds: 4,
        renewDeadlineSeconds: 3,
        retryPeriodSeconds: 0.2,
      };
      const first = await ctx.startController(
        { ...election, identity: 'replica' },
        { client: 'replica', restartOnLeadershipLost: true },
      );

      await burst(ctx, 's', 16, async () => {
        // What a starved event loop looks like from the API server: nothing the replica sends is answered,
        // so it cannot renew within its deadline and stops itself (the shipped binary then exits).
        server.partition('replica', 'hang');
        await waitFor('the stalled replica to give up the Lease', async () => (await leaderGauge(first)) === 0, {
          timeoutMs: ctx.timeoutMs,
        });
        server.heal('replica');
      });

      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      const lease = await ctx.cluster.get<Lease>(leaseRef(ctx, 'chaos-stall'));
      expect(lease?.spec?.holderIdentity).toBe('replica');
    },
  },
  {
    name: 'SIGTERM mid-burst (graceful stop) and restart: stop finishes, and the next replica converges with nothing lost or duplicated',
    async run(ctx) {
      const first = await ctx.startController({}, { client: 'first' });
      let stopped = false;
      await burst(ctx, 't', 16, async () => {
        await first.stop();
        stopped = true;
      });
      expect(stopped).toBe(true);
      await ctx.startController({}, { client: 'second' });

      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
    },
  },
  {
    name: 'the API server is unavailable for a while (listener closed, connections cut) and comes back on the same port: the controller reconnects and catches up',
    needsFaults: true,
    async run(ctx) {
      const server = serverOf(ctx);
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await burst(ctx, 'before', 6);
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);

      await server.goDown();
      // Another API server replica of an HA control plane keeps taking writes meanwhile.
      for (let i = 0; i < 4; i++) await ctx.cluster.create(hubApp(`during-${i}`, hubNamespace, clusters[i % 2]));
      await patchApp(ctx, 'before-03', () => ({
        metadata: { annotations: { [MANAGED_CLUSTER_ANNOTATION]: clusters[0] } },
      }));
      await ctx.cluster.delete(appRef(hubNamespace, 'before-04'));
      // The outage lasts a while after those writes (its length, not something the test waits for):
      // long enough for the controller's watches and retries to fail several times and back off.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await server.comeBack();

      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      expect(await ctx.cluster.get(workRef(clusters[0], manifestWorkName(hubNamespace, 'during-0')))).toBeDefined();
    },
  },
  {
    name: 'conflicting writers on the same hub apps (annotations, labels, spec): every work ends equal to buildManifestWork of the final app',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      const names = Array.from({ length: 8 }, (_, i) => `contested-${i}`);
      for (const [i, name] of names.entries()) await ctx.cluster.create(hubApp(name, hubNamespace, clusters[i % 2]));
      await ctx.startController();
      const writer = new ConflictWriter(
        ctx.cluster,
        names.map((name) => appRef(hubNamespace, name)),
        [touchAnnotation(), touchLabel(), bumpRevision],
        { seed: 7 },
      );

      writer.start();
      await waitFor('the second writer to land 60 writes', () => writer.written >= 60, { timeoutMs: ctx.timeoutMs });
      await writer.stop();

      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      for (const name of names) {
        const app = await ctx.cluster.get<Application>(appRef(hubNamespace, name));
        const work = await ctx.cluster.get<ManifestWork>(
          workRef(app!.metadata.annotations![MANAGED_CLUSTER_ANNOTATION], manifestWorkName(hubNamespace, name)),
        );
        expect(workMatchesApp(work, app)).toBe(true);
      }
    },
  },
  {
    name: "two replicas, the leader's requests hang: the standby takes over only once the Lease has really expired, and the old leader's stuck writes never land",
    needsFaults: true,
    async run(ctx) {
      const server = serverOf(ctx);
      const { hubNamespace, clusters } = ctx.fleet;
      const leaseDurationSeconds = 3;
      const election = {
        leaderElection: true,
        namespace: ctx.fleet.controllerNamespace,
        leaseName: 'chaos-hang',
        leaseDurationSeconds,
        renewDeadlineSeconds: 2,
        retryPeriodSeconds: 0.2,
      };
      const a = await ctx.startController({ ...election, identity: 'replica-a' }, { client: 'replica-a' });
      const b = await ctx.startController(
        { ...election, identity: 'replica-b' },
        { client: 'replica-b', waitReady: false },
      );
      await ctx.cluster.create(hubApp('first', hubNamespace, clusters[0]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);

      // The leader's writes start hanging (a stuck connection), then everything it sends does.
      server.hangNext({ client: 'replica-a', verb: WRITE_VERBS, times: 1_000_000 });
      await ctx.cluster.create(hubApp('second', hubNamespace, clusters[1]));
      await waitFor(
        'a write of the leader to hang',
        () => server.heldCount({ client: 'replica-a', verb: WRITE_VERBS }) > 0,
        { timeoutMs: ctx.timeoutMs },
      );
      server.partition('replica-a', 'hang');
      const lastRenew = Date.parse((await ctx.cluster.get<Lease>(leaseRef(ctx, 'chaos-hang')))!.spec!.renewTime!);

      await waitFor('replica-b to lead', async () => (await leaderGauge(b)) === 1, { timeoutMs: ctx.timeoutMs });
      const lease = (await ctx.cluster.get<Lease>(leaseRef(ctx, 'chaos-hang')))!;
      expect(lease.spec?.holderIdentity).toBe('replica-b');
      expect(Date.parse(lease.spec!.acquireTime!)).toBeGreaterThanOrEqual(lastRenew + leaseDurationSeconds * 1000);
      await ctx.cluster.create(hubApp('third', hubNamespace, clusters[0]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);

      // The old leader must have given up on its requests (timeouts) and stopped acting by now.
      const writesBeforeHeal = server.writeCount(undefined, 'replica-a');
      server.heal('replica-a');
      server.dropHung();
      await waitFor('replica-a to stop leading', async () => (await leaderGauge(a)) === 0, {
        timeoutMs: ctx.timeoutMs,
      });
      await ctx.cluster.create(hubApp('fourth', hubNamespace, clusters[1]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      expect(server.writeCount(undefined, 'replica-a')).toBe(writesBeforeHeal);
    },
  },
  {
    name: 'malformed hub Applications (invalid / 300-character / unknown / local-cluster targets, pull label TRUE / 1 / yes / false, an oversized payload): no crash, the right work or a condition',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      const cases: Array<[string, Application]> = [
        ['bad-chars', hubApp('bad-chars', hubNamespace, 'Not_A_Cluster!')],
        ['too-long', hubApp('too-long', hubNamespace, 'c'.repeat(300))],
        ['unknown', hubApp('unknown', hubNamespace, `${ctx.fleet.id}-nowhere`)],
        ['hub-itself', hubApp('hub-itself', hubNamespace, LOCAL_CLUSTER)],
        ['label-upper', hubApp('label-upper', hubNamespace, clusters[0], { labels: { [PULL_LABEL]: 'TRUE' } })],
        ['label-one', hubApp('label-one', hubNamespace, clusters[1], { labels: { [PULL_LABEL]: '1' } })],
        ['label-yes', hubApp('label-yes', hubNamespace, clusters[0], { labels: { [PULL_LABEL]: 'yes' } })],
        ['label-false', hubApp('label-false', hubNamespace, clusters[0], { labels: { [PULL_LABEL]: 'false' } })],
      ];
      const huge = hubApp('oversized', hubNamespace, clusters[0]);
      (huge.spec as { source: Record<string, unknown> }).source.helm = { values: bigValues(600 * 1024) };
      cases.push(['oversized', huge]);
      for (const [, app] of cases) await ctx.cluster.create(app);
      await ctx.cluster.create(hubApp('healthy', hubNamespace, clusters[1]));

      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      const works = async (name: string) =>
        (
          await Promise.all(clusters.map((c) => ctx.cluster.get(workRef(c, manifestWorkName(hubNamespace, name)))))
        ).filter((w) => w !== undefined).length;
      expect(await works('label-upper')).toBe(1);
      expect(await works('label-one')).toBe(1);
      expect(await works('label-yes')).toBe(0);
      expect(await works('label-false')).toBe(0);
      expect(await works('oversized')).toBe(0);
      expect(await works('healthy')).toBe(1);
    },
  },
  {
    name: 'opted-in apps with an empty, blank or missing cluster annotation, or without skip-reconcile, get a condition saying so',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      const missing = hubApp('no-annotation', hubNamespace, clusters[0]);
      delete missing.metadata.annotations![MANAGED_CLUSTER_ANNOTATION];
      const noSkip = hubApp('no-skip', hubNamespace, clusters[0]);
      delete noSkip.metadata.annotations![SKIP_RECONCILE_ANNOTATION];
      for (const app of [hubApp('empty', hubNamespace, ''), hubApp('blank', hubNamespace, '   '), missing, noSkip])
        await ctx.cluster.create(app);

      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
    },
  },
  {
    name: 'malformed ManifestWork feedback (every fieldValue type, mismatched resourceMeta, feedback for a deleted app): no crash, valid values land, the controller keeps working',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      for (const name of ['typed', 'mismatched', 'doomed'])
        await ctx.cluster.create(hubApp(name, hubNamespace, clusters[0]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      const work = (name: string) => manifestWorkName(hubNamespace, name);

      await ctx.agent.report(
        clusters[0],
        work('typed'),
        { healthStatus: 'Healthy' },
        {
          values: [
            { name: 'syncStatus', fieldValue: { type: 'JsonRaw', jsonRaw: '"Synced"' } },
            { name: 'syncRevision', fieldValue: { type: 'Integer', integer: 7 } },
            { name: 'operationStatePhase', fieldValue: { type: 'Boolean', boolean: true } },
            { name: 'operationStateMessage', fieldValue: { type: 'JsonRaw', jsonRaw: '{"not":"a scalar"}' } },
            { name: 'unknownFeedback', fieldValue: { type: 'String', string: 'ignored' } },
          ],
        },
      );
      // Feedback for a manifest this work does not carry (another name): must not be read as this app's.
      const stored = (await ctx.cluster.get<ManifestWork>(workRef(clusters[0], work('mismatched'))))!;
      const status = ctx.agent.statusFor(stored, { healthStatus: 'Degraded', syncStatus: 'OutOfSync' });
      for (const m of status.resourceStatus!.manifests!) m.resourceMeta = { ...m.resourceMeta, name: 'someone-else' };
      await ctx.cluster.replaceStatus({ ...stored, status });
      // The app goes away while its work reports.
      await ctx.cluster.delete(appRef(hubNamespace, 'doomed'));
      await ctx.agent
        .report(clusters[0], work('doomed'), { healthStatus: 'Healthy', syncStatus: 'Synced' })
        .catch(() => undefined);

      await waitFor(
        'typed feedback on the hub app',
        async () => {
          const app = await ctx.cluster.get<Application>(appRef(hubNamespace, 'typed'));
          return (
            app?.status?.health?.status === 'Healthy' &&
            app.status.sync?.status === 'Synced' &&
            app.status.sync.revision === '7'
          );
        },
        { timeoutMs: ctx.timeoutMs, describe: () => ctx.cluster.get(appRef(hubNamespace, 'typed')) },
      );
      await waitFor(
        'the deleted app and its work to be gone',
        async () =>
          !(await ctx.cluster.get(appRef(hubNamespace, 'doomed'))) &&
          !(await ctx.cluster.get(workRef(clusters[0], work('doomed')))),
        {
          timeoutMs: ctx.timeoutMs,
        },
      );
      const mismatched = await ctx.cluster.get<Application>(appRef(hubNamespace, 'mismatched'));
      expect(mismatched?.status?.health?.status).not.toBe('Degraded');
      // Still alive: a new app is delivered and its feedback lands.
      await ctx.cluster.create(hubApp('after', hubNamespace, clusters[1]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
      await ctx.agent.report(clusters[1], work('after'), { healthStatus: 'Healthy', syncStatus: 'Synced' });
      await waitFor(
        'feedback of the new app',
        async () =>
          (await ctx.cluster.get<Application>(appRef(hubNamespace, 'after')))?.status?.health?.status === 'Healthy',
        { timeoutMs: ctx.timeoutMs },
      );
    },
  },
  {
    name: 'feedback the hub app schema rejects (an Integer operationStateStartedAt) does not freeze the status write-back: valid fields land and a condition names the field',
    async run(ctx) {
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController();
      await ctx.cluster.create(hubApp('epoch', hubNamespace, clusters[0]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);

      await ctx.agent.report(
        clusters[0],
        manifestWorkName(hubNamespace, 'epoch'),
        { healthStatus: 'Healthy', syncStatus: 'Synced', operationStatePhase: 'Succeeded' },
        {
          values: [{ name: 'operationStateStartedAt', fieldValue: { type: 'Integer', integer: 1_700_000_000 } }],
        },
      );

      const app = await waitFor(
        'Healthy with a condition naming operationStateStartedAt',
        async () => {
          const current = await ctx.cluster.get<Application>(appRef(hubNamespace, 'epoch'));
          return current?.status?.health?.status === 'Healthy' &&
            (current.status.conditions ?? []).some((c) => c.message?.includes('operationStateStartedAt'))
            ? current
            : undefined;
        },
        { timeoutMs: ctx.timeoutMs, describe: () => ctx.cluster.get(appRef(hubNamespace, 'epoch')) },
      );
      expect(app.status?.sync?.status).toBe('Synced');
    },
  },
  {
    name: '429 with Retry-After: the controller waits at least as long as the API server asked before it retries the write',
    needsFaults: true,
    async run(ctx) {
      const server = serverOf(ctx);
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController({}, { client: 'controller' });
      server.failNext({ verb: 'patch', resource: 'manifestworks', code: 429, times: 3 });

      await ctx.cluster.create(hubApp('throttled', hubNamespace, clusters[0]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);

      // Lower bounds only: a controller that honours Retry-After can never be faster than this.
      const attempts = server.requestLog({ verb: 'patch', resource: 'manifestworks', client: 'controller' });
      expect(attempts.slice(0, 4).map((a) => (a.code < 300 ? 'ok' : a.code))).toStrictEqual([429, 429, 429, 'ok']);
      for (let i = 1; i < 4; i++) expect(attempts[i].at - attempts[i - 1].at).toBeGreaterThanOrEqual(950);
    },
  },
  {
    name: 'watches that end at once without an event count as failures: the controller backs off instead of spinning, and recovers',
    needsFaults: true,
    async run(ctx) {
      const server = serverOf(ctx);
      const { hubNamespace, clusters } = ctx.fleet;
      await ctx.startController({}, { client: 'controller' });
      const kinds = new Set(server.requestLog({ verb: 'list', client: 'controller' }).map((r) => r.resource)).size;
      expect(kinds).toBeGreaterThan(0);

      server.endWatchesAtOnce(true);
      const before = server.requestCount({ verb: ['watch', 'list'], client: 'controller' });
      const started = performance.now();
      // A measurement window, not a wait for a state: how many list/watch requests in about 2 s.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const requests = server.requestCount({ verb: ['watch', 'list'], client: 'controller' }) - before;
      const seconds = (performance.now() - started) / 1000;
      server.endWatchesAtOnce(false);

      // With backoff from 200 ms, each informer makes a handful of attempts in 2 s; a spinning one makes thousands.
      expect(requests / seconds).toBeLessThan(kinds * 10);
      await ctx.cluster.create(hubApp('after-storm', hubNamespace, clusters[0]));
      await assertFleetInvariants(ctx.cluster, ctx.fleet, ctx.timeoutMs);
    },
  },
  {
    name: 'a cluster whose namespace does not exist yet: a condition on the hub app, and the work follows promptly once the namespace appears',
    async run(ctx) {
      const { hubNamespace } = ctx.fleet;
      const late = `${ctx.fleet.id}-late`;
      await ctx.cluster.create({
        apiVersion: CLUSTER_API_VERSION,
        kind: 'ManagedCluster',
        metadata: { name: late, labels: { 'cluster.open-cluster-management.io/clusterset': ctx.fleet.clusterSet } },
        spec: { hubAcceptsClient: true },
      });
      await ctx.startController();
      await ctx.cluster.create(hubApp('early', hubNamespace, late));

      await waitFor(
        'a condition on the hub app',
        async () =>
          ((await ctx.cluster.get<Application>(appRef(hubNamespace, 'early')))?.status?.conditions ?? []).some((c) =>
            c.message?.includes(late),
          ),
        {
          timeoutMs: ctx.timeoutMs,
          describe: () => ctx.cluster.get(appRef(hubNamespace, 'early')),
        },
      );
      await ctx.cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: late } });

      // "Promptly": well before the controller's default backoff ceiling.
      await waitFor(
        'the work in the new namespace',
        () => ctx.cluster.get(workRef(late, manifestWorkName(hubNamespace, 'early'))),
        { timeoutMs: 10_000 },
      );
      await ctx.cluster.delete(appRef(hubNamespace, 'early'));
      await waitFor(
        'the work to be swept',
        async () => !(await ctx.cluster.get(workRef(late, manifestWorkName(hubNamespace, 'early')))),
        { timeoutMs: ctx.timeoutMs },
      );
      await ctx.cluster.delete({ apiVersion: CLUSTER_API_VERSION, kind: 'ManagedCluster', name: late });
      await ctx.cluster.delete({ apiVersion: 'v1', kind: 'Namespace', name: late });
    },
  },
];
