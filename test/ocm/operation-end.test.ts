/**
 * The end of a forwarded `operation`, with the shipped controller on the hub, OCM's real work agent (v1.3.1)
 * between the hub and a spoke API server, and the test playing the spoke Argo CD as its application
 * controller writes (argo-cd controller/appcontroller.go, every release from v2.14.0 to v3.5.1):
 * - it goes on with an operation only while the Application carries `.operation`
 *   (`processAppOperationQueueItem`), so an `.operation` removed while `operationState.phase` is Running
 *   leaves the sync half done, Running for ever;
 * - it removes `.operation` itself, with the final operation state, in one merge patch (`setOperationState`).
 *
 * The agent owns `.operation` from the forward (field manager `work-agent`), so a work that stops carrying it
 * makes the agent's next server-side apply remove it from the spoke Application. The controller must keep it
 * in the work until the spoke's phase is over, and forward a new operation only then.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { manifestWorkName } from '../../src/model/core/names.js';
import { describeRealOcm, type OcmSpoke } from '../support/real-ocm.js';
import { waitFor } from '../support/wait.js';
import { OcmFleet } from '../support/ocm-fleet.js';
import { hubApp } from '../e2e/scenarios.js';
import { APP_API, argoStatus, conditionOf, payloadOf, readApp, readWork, report, type Obj } from './support.js';
import type { ManifestWork } from '../../src/model/core/types.js';

const WAIT = { timeoutMs: 90_000, intervalMs: 50 };
const FORWARD_INFO = 'pullfleet.io/forwarded';

describeRealOcm('the end of a forwarded operation', (hubKubeconfig) => {
  const world = new OcmFleet(hubKubeconfig, 'opend');
  const { cluster, fleet, spokeCluster } = world;
  const ns = fleet.hubNamespace;
  let ocm: OcmSpoke;

  beforeAll(async () => {
    ({ ocm } = await world.setUp());
  }, 300_000);

  afterAll(async () => {
    await world.tearDown();
  }, 120_000);

  const workName = (name: string) => manifestWorkName(ns, name);
  const hubAppNow = (name: string) => readApp(ocm.hub, ns, name);
  const spokeApp = (name: string) => readApp(ocm.spoke, ns, name);
  const forwardIdOf = (operation: Obj | undefined): string | undefined =>
    (operation?.info as Obj[] | undefined)?.find((entry) => entry.name === FORWARD_INFO)?.value;

  /** The work as the agent last applied it: its Applied condition observed the work's current generation. */
  async function workAppliedByAgent(name: string): Promise<ManifestWork> {
    return waitFor(
      `the agent applied the current generation of work ${workName(name)}`,
      async () => {
        const work = await readWork(ocm.hub, spokeCluster, workName(name));
        const applied = conditionOf(work?.status?.conditions, 'Applied');
        return (
          applied?.status === 'True' &&
          applied.observedGeneration === work?.metadata.generation &&
          (work as unknown as ManifestWork)
        );
      },
      { ...WAIT, describe: async () => (await readWork(ocm.hub, spokeCluster, workName(name)))?.status },
    );
  }

  /**
   * The spoke Argo CD ends the running operation as `setOperationState` does: the final phase (the state it ran,
   * `startedAt` included, kept) and `operation: null` in one patch.
   */
  async function spokeFinishes(name: string, forwardId: string | undefined): Promise<void> {
    const running = (await spokeApp(name))?.status?.operationState as Obj;
    await ocm.spoke.mergePatch(APP_API, 'Application', ns, name, {
      operation: null,
      status: {
        ...argoStatus({ sync: 'Synced', health: 'Healthy', phase: 'Succeeded', forwardId }),
        operationState: {
          ...running,
          phase: 'Succeeded',
          message: 'successfully synced (all tasks run)',
          finishedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        },
      },
    });
  }

  test('a running sync keeps its .operation on the spoke until its phase ends; the next operation reaches the spoke after it', () =>
    ocm.track(async () => {
      // GIVEN a hub Application with an operation (a RollingSync step or a user's sync)
      const name = 'checkout';
      await cluster.create({ ...hubApp(name, ns, spokeCluster), operation: { sync: { revision: 'v1' } } });
      const delivered = await waitFor(
        'the forwarded operation on the spoke Application',
        async () => {
          const app = await spokeApp(name);
          return app?.operation && app;
        },
        WAIT,
      );
      const first = forwardIdOf(delivered.operation);
      expect(delivered.operation.sync).toStrictEqual({ revision: 'v1' });
      expect(first).toMatch(/^[0-9a-f]{12}$/);

      // WHEN the spoke Argo CD starts the sync (Running, more waves to go)
      await ocm.spoke.mergePatch(APP_API, 'Application', ns, name, {
        status: argoStatus({ sync: 'OutOfSync', health: 'Progressing', phase: 'Running', forwardId: first }),
      });
      // THEN the controller sees it taken: the operation leaves the hub Application, which shows Running
      await waitFor(
        'the hub Application without its operation, Running',
        async () => {
          const app = await hubAppNow(name);
          return app && app.operation === undefined && app.status?.operationState?.phase === 'Running';
        },
        { ...WAIT, describe: () => hubAppNow(name) },
      );
      // and once the agent applied the work as it is now, the spoke Application still has its operation
      const whileRunning = await workAppliedByAgent(name);
      expect((await spokeApp(name))?.operation).toStrictEqual(delivered.operation);
      expect(forwardIdOf(payloadOf(whileRunning).operation)).toBe(first);

      // WHEN the applicationset-controller writes the next operation while the spoke still runs the first
      await ocm.hub.mergePatch(APP_API, 'Application', ns, name, { operation: { sync: { revision: 'v2' } } });
      // and the spoke Argo CD ends the first (removing `.operation` itself)
      await spokeFinishes(name, first);
      // THEN the next operation reaches the spoke, marked as a new forwarding
      const next = await waitFor(
        'the next operation on the spoke Application',
        async () => {
          const app = await spokeApp(name);
          return app?.operation?.sync?.revision === 'v2' && app;
        },
        { ...WAIT, describe: async () => ({ spoke: await spokeApp(name), hub: await hubAppNow(name) }) },
      );
      const second = forwardIdOf(next.operation);
      expect(second).toMatch(/^[0-9a-f]{12}$/);
      expect(second).not.toBe(first);

      // WHEN the spoke runs it to its end
      await ocm.spoke.mergePatch(APP_API, 'Application', ns, name, {
        status: argoStatus({ sync: 'OutOfSync', health: 'Progressing', phase: 'Running', forwardId: second }),
      });
      await spokeFinishes(name, second);
      // THEN the work no longer carries an operation, the agent applied it, and the spoke was not sent one again
      const ended = await waitFor(
        'the work without an operation',
        async () => {
          const work = await workAppliedByAgent(name);
          return payloadOf(work).operation === undefined && work;
        },
        WAIT,
      );
      const after = await spokeApp(name);
      expect(after?.operation).toBeUndefined();
      expect(after?.status?.operationState?.phase).toBe('Succeeded');
      expect((await hubAppNow(name))?.operation).toBeUndefined();
      report(`operation end: work generation ${ended.metadata.generation} after two forwarded operations`);
      await cluster.delete({ apiVersion: APP_API, kind: 'Application', namespace: ns, name });
      await waitFor('the spoke Application gone', async () => !(await spokeApp(name)), WAIT);
    }));
});
