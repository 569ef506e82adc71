/**
 * End to end with nothing played but the spoke Argo CD: the shipped controller (its own process,
 * authenticated as the ServiceAccount its install renders, test/support/shipped-controller.ts) on the
 * hub, OCM's real work agent between the hub and a spoke API server. A pull-labelled hub Application
 * becomes a work, the work an Application on the spoke, and a status the spoke Argo CD writes comes back
 * to the hub Application through the agent's feedback and the controller. Both clusters of the fleet are
 * served, by one agent each; a payload the spoke refuses shows on the hub Application.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { SPOKE_APP_NAMESPACE_ANNOTATION } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import type { Application } from '../../src/model/core/types.js';
import { DELIVERY_ERROR_CONDITION } from '../../src/model/reconcile/status.js';
import { describeRealOcm, type OcmSpoke } from '../support/real-ocm.js';
import { waitFor } from '../support/wait.js';
import { OcmFleet } from '../support/ocm-fleet.js';
import { hubApp } from '../e2e/scenarios.js';
import { APP_API, argoStatus, conditionOf, manifestStatus, readApp, readWork, report, type Obj } from './support.js';

const WAIT = { timeoutMs: 90_000, intervalMs: 50 };

describeRealOcm('the shipped controller with the real work agent', (hubKubeconfig) => {
  const world = new OcmFleet(hubKubeconfig, 'ocm');
  const { cluster, fleet, spokeCluster } = world;
  let ocm: OcmSpoke;

  beforeAll(async () => {
    // Both clusters of the fleet, one agent each, on one spoke API server; a payload keeps the hub app's
    // namespace on the spoke (no spoke-namespace annotation).
    ({ ocm } = await world.setUp({ allClusters: true }));
  }, 300_000);

  afterAll(async () => {
    const forbidden = await world.tearDown();
    // Every request the controller made was allowed by the RBAC its install ships.
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  test('two cluster names, one agent each: every agent applies the works of its own cluster only', () =>
    ocm.track(async () => {
      // GIVEN an app for each cluster of the fleet
      const ns = fleet.hubNamespace;
      await cluster.create(hubApp('cart', ns, fleet.clusters[0]));
      await cluster.create(hubApp('billing', ns, fleet.clusters[1]));
      // THEN both reach the spoke, each through the AppliedManifestWork of its own agent
      for (const name of ['cart', 'billing'])
        await waitFor(`${name} on the spoke`, () => readApp(ocm.spoke, ns, name), WAIT);
      const applied = await ocm.spoke.list<Obj>('work.open-cluster-management.io/v1', 'AppliedManifestWork');
      const agentOf = (work: string) => applied.find((a) => a.spec.manifestWorkName === work)?.spec.agentID;
      expect(agentOf(manifestWorkName(ns, 'cart'))).toBe(fleet.clusters[0]);
      expect(agentOf(manifestWorkName(ns, 'billing'))).toBe(fleet.clusters[1]);
      // and each work reports only its own Application, applied
      for (const [name, c] of [
        ['cart', fleet.clusters[0]],
        ['billing', fleet.clusters[1]],
      ] as const) {
        const work = await waitFor(
          `the work of ${name} Applied`,
          async () => {
            const w = await readWork(ocm.hub, c, manifestWorkName(ns, name));
            return (
              (w?.status?.conditions as Obj[] | undefined)?.some((x) => x.type === 'Applied' && x.status === 'True') &&
              w
            );
          },
          WAIT,
        );
        expect((work.status.resourceStatus.manifests as Obj[]).map((m) => m.resourceMeta.name)).toStrictEqual([name]);
      }
      // WHEN both hub apps are deleted THEN both spoke Applications go
      for (const name of ['cart', 'billing'])
        await cluster.delete({ apiVersion: APP_API, kind: 'Application', namespace: ns, name });
      for (const name of ['cart', 'billing'])
        await waitFor(`${name} gone from the spoke`, async () => !(await readApp(ocm.spoke, ns, name)), WAIT);
    }));

  test('a payload the spoke refuses shows as a DeliveryError on the hub Application', () =>
    ocm.track(async () => {
      // GIVEN a hub Application whose spoke namespace does not exist on the spoke
      const ns = fleet.hubNamespace;
      await cluster.create(
        hubApp('broken', ns, spokeCluster, { annotations: { [SPOKE_APP_NAMESPACE_ANNOTATION]: 'no-such-namespace' } }),
      );
      // THEN the real agent reports the work not applied, and the controller says so on the hub Application
      const work = await waitFor(
        'the work Applied=False',
        async () => {
          const w = await readWork(ocm.hub, spokeCluster, manifestWorkName(ns, 'broken'));
          return conditionOf(w?.status?.conditions, 'Applied')?.status === 'False' && w;
        },
        WAIT,
      );
      const manifest = manifestStatus(work, 'Application', 'no-such-namespace', 'broken');
      report(
        `refused payload: work Applied ${JSON.stringify(conditionOf(work.status.conditions, 'Applied'))}; ` +
          `manifest Applied ${JSON.stringify(conditionOf(manifest?.conditions, 'Applied'))}`,
      );
      const error = await waitFor(
        'DeliveryError on the hub Application',
        async () => conditionOf((await hubStatus('broken'))?.conditions, DELIVERY_ERROR_CONDITION),
        { ...WAIT, describe: () => hubStatus('broken') },
      );
      report(`refused payload: hub Application DeliveryError ${JSON.stringify(error.message)}`);
      expect(error.message).toContain(manifestWorkName(ns, 'broken'));
      await cluster.delete({ apiVersion: APP_API, kind: 'Application', namespace: ns, name: 'broken' });
      await waitFor(
        'the refused work gone',
        async () => !(await readWork(ocm.hub, spokeCluster, manifestWorkName(ns, 'broken'))),
        WAIT,
      );
    }));

  // pullfleet gap: DeliveryError quotes the work's Applied condition, whose message the real agent keeps
  // generic ("Failed to apply manifest work"); the cause is only in the manifest's Applied condition
  // ("Failed to apply manifest: namespaces \"…\" not found"). The double (test/support/work-agent.ts
  // appliedMessage) puts the cause on the work condition too, so the end-to-end scenario that checks the
  // message passes there. src/model/reconcile/status.ts would read the failed manifests' messages.
  test('the DeliveryError names the reason the spoke refused the payload', async () => {
    const ns = fleet.hubNamespace;
    await cluster.create(
      hubApp('refused', ns, spokeCluster, { annotations: { [SPOKE_APP_NAMESPACE_ANNOTATION]: 'missing-namespace' } }),
    );
    try {
      const error = await waitFor(
        'DeliveryError on the hub Application',
        async () => conditionOf((await hubStatus('refused'))?.conditions, DELIVERY_ERROR_CONDITION),
        WAIT,
      );
      expect(error.message).toContain('namespaces "missing-namespace" not found');
    } finally {
      await cluster.delete({ apiVersion: APP_API, kind: 'Application', namespace: ns, name: 'refused' });
    }
  });

  const hubStatus = async (name: string): Promise<Obj | undefined> =>
    (await readApp(ocm.hub, fleet.hubNamespace, name))?.status as Obj | undefined;

  test('a pull-labelled hub Application reaches the spoke, and the spoke status comes back to it', () =>
    ocm.track(async () => {
      // GIVEN the controller running and the agent serving the spoke
      const ns = fleet.hubNamespace;
      // WHEN the applicationset-controller writes a pull-labelled hub Application
      const t0 = Date.now();
      await cluster.create(hubApp('guestbook', ns, spokeCluster));
      // THEN the controller writes its work and the agent applies the payload on the spoke
      const spokeApp = await waitFor('the Application on the spoke', () => readApp(ocm.spoke, ns, 'guestbook'), WAIT);
      const deliveredMs = Date.now() - t0;
      const work = await readWork(ocm.hub, spokeCluster, manifestWorkName(ns, 'guestbook'));
      expect(work?.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'pullfleet' });
      expect(spokeApp.spec.destination).toStrictEqual({
        server: 'https://kubernetes.default.svc',
        namespace: 'guestbook',
      });
      expect(spokeApp.spec.source).toStrictEqual({
        repoURL: 'https://github.com/argoproj/argocd-example-apps.git',
        path: 'guestbook',
        targetRevision: 'HEAD',
      });

      // WHEN the spoke Argo CD reports its sync and health, twice
      const samples: number[] = [];
      for (const [sync, health, phase] of [
        ['Synced', 'Healthy', 'Succeeded'],
        ['OutOfSync', 'Degraded', 'Failed'],
      ] as const) {
        const revision = `rev-${samples.length}-${Date.now()}`;
        const t = Date.now();
        await ocm.spoke.mergePatch(APP_API, 'Application', ns, 'guestbook', {
          status: argoStatus({ sync, health, phase, revision }),
        });
        // THEN the hub Application carries it
        const status = await waitFor(
          `the hub Application ${sync}/${health} at ${revision}`,
          async () => {
            const s = await hubStatus('guestbook');
            return s?.health?.status === health && s?.sync?.status === sync && s?.sync?.revision === revision && s;
          },
          { ...WAIT, describe: () => hubStatus('guestbook') },
        );
        samples.push(Date.now() - t);
        expect(status.operationState?.phase).toBe(phase);
        // the resource summary (the agent's CEL) lists the spoke Application's resources on the hub
        const resources = await waitFor(
          'the resources of the summary on the hub',
          async () => {
            const s = await hubStatus('guestbook');
            const r = (s?.resources as Obj[] | undefined) ?? [];
            return r.find((x) => x.kind === 'Deployment')?.health?.status === health && r;
          },
          { ...WAIT, describe: () => hubStatus('guestbook') },
        );
        expect(resources.map((r) => `${r.kind}/${r.name}`).sort()).toStrictEqual([
          'Deployment/guestbook-ui',
          'Service/guestbook-ui',
        ]);
      }
      report(
        `end to end: hub Application → spoke Application ${deliveredMs} ms; spoke status → hub Application ` +
          `${samples.map((ms) => `${ms} ms`).join(', ')} (agent --status-sync-interval=${ocm.statusSyncInterval}, controller defaults)`,
      );

      // WHEN the hub Application is deleted
      const t1 = Date.now();
      await cluster.delete({ apiVersion: APP_API, kind: 'Application', namespace: ns, name: 'guestbook' });
      // THEN the work goes, the agent removes the spoke Application (Foreground), and the hub app is released
      await waitFor('the spoke Application gone', async () => !(await readApp(ocm.spoke, ns, 'guestbook')), WAIT);
      await waitFor(
        'the hub Application gone',
        async () =>
          !(await cluster.get<Application>({
            apiVersion: APP_API,
            kind: 'Application',
            namespace: ns,
            name: 'guestbook',
          })),
        WAIT,
      );
      expect(await readWork(ocm.hub, spokeCluster, manifestWorkName(ns, 'guestbook'))).toBeUndefined();
      report(`end to end: hub Application delete → spoke Application and hub Application gone ${Date.now() - t1} ms`);
    }));
});
