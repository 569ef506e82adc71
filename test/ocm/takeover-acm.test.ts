/**
 * Taking an app over from ACM's propagation controller with OCM's real work agent (v1.3.1) between the hub and a
 * spoke API server and the shipped controller on the hub: ACM filled the empty destination namespace of the
 * hub Application in (stolostron/multicloud-integrations release-2.15 to release-2.17
 * `propagation-controller/application/helper.go`, `prepareApplicationForWorkPayload`); after the hand-over the
 * spoke Application still has that destination, so nothing Argo CD placed there moves or is pruned.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { manifestWorkName } from '../../src/model/core/names.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { describeRealOcm, type OcmSpoke } from '../support/real-ocm.js';
import { shippedControllerStarter } from '../support/shipped-controller.js';
import { legacyWork } from '../support/takeover-legacy.js';
import { waitFor } from '../support/wait.js';
import { OcmFleet } from '../support/ocm-fleet.js';
import { hubApp } from '../e2e/scenarios.js';
import { APP_API, conditionOf, payloadOf, raw, readApp, readWork, report, WORK_API, type Obj } from './support.js';

const WAIT = { timeoutMs: 90_000, intervalMs: 100 };

describeRealOcm('taking over from ACM', (hubKubeconfig) => {
  const world = new OcmFleet(hubKubeconfig, 'tkacm');
  const { cluster, fleet, spokeCluster } = world;
  const ns = fleet.hubNamespace;
  let ocm: OcmSpoke;
  let controllers: ReturnType<typeof shippedControllerStarter>;

  beforeAll(async () => {
    ({ ocm, controllers } = await world.setUp({ startController: false }));
  }, 300_000);

  afterAll(async () => {
    await world.tearDown();
  }, 120_000);

  const applied = (work: Obj | undefined) => {
    const condition = conditionOf(work?.status?.conditions, 'Applied');
    return condition?.status === 'True' && condition.observedGeneration === work?.metadata.generation;
  };

  test('an empty destination namespace ACM filled in stays on the spoke Application after the hand-over', () =>
    ocm.track(async () => {
      // GIVEN a hub Application with no destination namespace, delivered by ACM's propagation controller
      const name = 'shop';
      const base = hubApp(name, ns, spokeCluster);
      const created = await cluster.create<Application>({
        ...base,
        spec: { ...base.spec, destination: { server: 'https://kubernetes.default.svc' } },
      });
      const acm = legacyWork(created, 'acm');
      await ocm.hub.create(raw(acm));
      const delivered = await waitFor(
        "the spoke Application as ACM's work delivered it",
        async () => {
          const work = await readWork(ocm.hub, spokeCluster, acm.metadata.name);
          return applied(work) && (await readApp(ocm.spoke, ns, name));
        },
        WAIT,
      );
      const acmDestination = delivered.spec.destination as Record<string, string>;
      expect(acmDestination.namespace).toBe(ns);

      // WHEN pullfleet's controller starts and takes the app over
      await controllers.start();
      const own = await waitFor(
        "pullfleet's work applied and ACM's gone",
        async () => {
          const work = await readWork(ocm.hub, spokeCluster, manifestWorkName(ns, name));
          const legacy = await readWork(ocm.hub, spokeCluster, acm.metadata.name);
          return !legacy && applied(work) && (work as unknown as ManifestWork);
        },
        WAIT,
      );

      // THEN the payload and the spoke Application keep ACM's destination (its empty `name` aside, which Argo CD
      // reads as unset)
      const { name: _emptyName, ...kept } = acmDestination;
      expect(payloadOf(own).spec.destination).toStrictEqual(kept);
      const after = await readApp(ocm.spoke, ns, name);
      expect({ ...after?.spec.destination, name: undefined }).toStrictEqual({ ...kept, name: undefined });
      expect(after?.metadata.uid).toBe(delivered.metadata.uid);
      report(
        `ACM takeover: spoke destination before ${JSON.stringify(acmDestination)}, after ${JSON.stringify(after?.spec.destination)}`,
      );
      await cluster.delete({ apiVersion: APP_API, kind: 'Application', namespace: ns, name });
      await waitFor('the spoke Application gone', async () => !(await readApp(ocm.spoke, ns, name)), WAIT);
      await waitFor(
        "pullfleet's work gone",
        async () => !(await ocm.hub.get(WORK_API, 'ManifestWork', spokeCluster, manifestWorkName(ns, name))),
        WAIT,
      );
    }));
});
