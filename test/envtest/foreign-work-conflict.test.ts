/**
 * A ManifestWork pullfleet does not manage, already at the name a new hub Application's work would take,
 * on a real API server with the controller as it ships (its ServiceAccount, its RBAC). The foreign work is
 * created immediately before the app, for 20 apps at once, so the app's event may reach the controller
 * before the work's and its cache may not hold the work when it writes. Whatever the order, the controller
 * must not take the work over (a server-side apply with force would), must say so on the hub app, and must
 * deliver the app by itself once the foreign work is gone.
 *
 * The second test makes that order certain: the controller's ManifestWork list and watch are refused (its
 * role loses those verbs for a while, its watches end every 2 s), so its cache cannot see any foreign work
 * before the apps are reconciled; the real API server then answers the create-only apply and the live read.
 */
import { afterEach, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { ARGOCD_API_VERSION, FIELD_MANAGER, MANAGED_BY_LABEL, WORK_API_VERSION } from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { isControllerWorkFor } from '../../src/model/reconcile/propagation.js';
import { DELIVERY_ERROR_CONDITION } from '../../src/model/reconcile/status.js';
import { realCluster, type TestCluster } from '../support/cluster.js';
import { RawClient, type RawObject } from '../support/raw-client.js';
import { describeRealServer } from '../support/real-server.js';
import { shippedControllerStarter, type ControllerProcess } from '../support/shipped-controller.js';
import { waitFor } from '../support/wait.js';
import { fleetFor, hubApp, setUpFleet, tearDownFleet, type Fleet } from '../e2e/scenarios.js';

const TIMEOUT_MS = 90_000;
const APPS = 20;
/** The field manager the test writes the foreign works with (kubectl, another controller, a person). */
const FOREIGN_MANAGER = 'someone-else';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

describeRealServer('a foreign ManifestWork at the name of a new app', (kubeconfigPath) => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const cluster: TestCluster = realCluster(kubeConfig);
  const raw = new RawClient(kubeConfig);
  const runId = `fw${Date.now().toString(36).slice(-6)}`;
  let counter = 0;
  let fleet: Fleet | undefined;
  let controllers: ReturnType<typeof shippedControllerStarter> | undefined;
  /** The refusals a test causes on purpose (its list and watch of works taken away): only those may be logged. */
  let expectedRefusal: RegExp | undefined;

  afterEach(async () => {
    await controllers?.stopAll();
    const forbidden = (controllers?.forbidden() ?? []).filter((line) => !expectedRefusal?.test(line));
    controllers = undefined;
    expectedRefusal = undefined;
    if (fleet) await tearDownFleet(cluster, fleet);
    fleet = undefined;
    // Every other request the controller made (the live read of the work included) was allowed by its RBAC.
    expect(forbidden).toStrictEqual([]);
  }, 120_000);

  function given() {
    fleet = fleetFor(`${runId}-${counter++}`);
    const starter = shippedControllerStarter(kubeConfig, {
      namespace: fleet.controllerNamespace,
      argoNamespace: fleet.argoNamespace,
    });
    controllers = starter;
    return { fleet, starter };
  }

  /** The 20 apps of a fleet, each with the work it would write. */
  function appsOf(fleet: Fleet) {
    const { hubNamespace, clusters } = fleet;
    return Array.from({ length: APPS }, (_, i) => {
      const name = `clash-${String(i).padStart(2, '0')}`;
      const target = clusters[i % clusters.length];
      return {
        name,
        target,
        app: { apiVersion: ARGOCD_API_VERSION, kind: 'Application', namespace: hubNamespace, name },
        work: {
          apiVersion: WORK_API_VERSION,
          kind: 'ManifestWork',
          namespace: target,
          name: manifestWorkName(hubNamespace, name),
        },
      };
    });
  }
  type Clash = ReturnType<typeof appsOf>[number];

  /** For every app at once: a work another tool manages at the app's work name, and the app right after it. */
  async function createClashes(fleet: Fleet, clashes: Clash[]): Promise<ManifestWork[]> {
    return Promise.all(
      clashes.map(async ({ name, target, work }) => {
        const created = await cluster.create<ManifestWork>({
          apiVersion: WORK_API_VERSION,
          kind: 'ManifestWork',
          metadata: { name: work.name, namespace: target, labels: { [MANAGED_BY_LABEL]: FOREIGN_MANAGER } },
          spec: {
            workload: {
              manifests: [
                {
                  apiVersion: 'v1',
                  kind: 'ConfigMap',
                  metadata: { name: 'not-pullfleets', namespace: 'default' },
                  data: { owner: FOREIGN_MANAGER },
                },
              ],
            },
          },
        });
        await cluster.create(hubApp(name, fleet.hubNamespace, target));
        return created;
      }),
    );
  }

  /** Every app carries the refusal, every foreign work is as created, and pullfleet wrote no work. */
  async function expectRefusedAndUntouched(
    fleet: Fleet,
    clashes: Clash[],
    foreign: ManifestWork[],
    controller: ControllerProcess,
  ): Promise<void> {
    for (const { name, target, app, work } of clashes)
      await waitFor(
        `the DeliveryError on ${name}`,
        async () =>
          (await cluster.get<Application>(app))?.status?.conditions?.find(
            (c) =>
              c.type === DELIVERY_ERROR_CONDITION &&
              c.message ===
                `ManifestWork ${target}/${work.name} already exists and it is not managed by pullfleet: refusing to take it over; delete it or rename the Application`,
          ),
        {
          timeoutMs: TIMEOUT_MS,
          intervalMs: 200,
          describe: async () => ({ app: (await cluster.get<Application>(app))?.status, log: controller.output(20) }),
        },
      );
    const after = await Promise.all(clashes.map(({ work }) => cluster.get<ManifestWork>(work)));
    const identity = (work: ManifestWork | undefined) => ({
      uid: work?.metadata.uid,
      resourceVersion: work?.metadata.resourceVersion,
      labels: work?.metadata.labels,
      pullfleetOwnsFields: (
        (work?.metadata as { managedFields?: Array<{ manager?: string }> } | undefined)?.managedFields ?? []
      ).some((entry) => entry.manager === FIELD_MANAGER),
    });
    expect(after.map(identity)).toStrictEqual(foreign.map(identity));
    expect(foreign.map(identity).every((work) => !work.pullfleetOwnsFields)).toBe(true);
    const managed = (
      await Promise.all(
        fleet.clusters.map((c) => cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: c })),
      )
    )
      .flat()
      .filter((work) => work.metadata.labels?.[MANAGED_BY_LABEL] === 'pullfleet');
    expect(managed.map((work) => `${work.metadata.namespace}/${work.metadata.name}`)).toStrictEqual([]);
  }

  /** The foreign works are deleted: every app gets its own work, and loses the condition, by itself. */
  async function deleteAndExpectDelivered(fleet: Fleet, clashes: Clash[]): Promise<void> {
    await Promise.all(clashes.map(({ work }) => cluster.delete(work)));
    for (const { name, app, work } of clashes) {
      await waitFor(
        `the work of ${name}`,
        async () => {
          const live = await cluster.get<ManifestWork>(work);
          return live && isControllerWorkFor(live, fleet.hubNamespace, name) ? live : undefined;
        },
        { timeoutMs: TIMEOUT_MS, intervalMs: 200, describe: () => cluster.get(work) },
      );
      await waitFor(
        `${name} without the DeliveryError`,
        async () => {
          const live = await cluster.get<Application>(app);
          return live && !(live.status?.conditions ?? []).some((c) => c.type === DELIVERY_ERROR_CONDITION);
        },
        { timeoutMs: TIMEOUT_MS, intervalMs: 200, describe: async () => (await cluster.get<Application>(app))?.status },
      );
    }
  }

  test('created just before each of 20 apps, the work is never taken over, every app says so, and every app is delivered once the works are deleted', async () => {
    // GIVEN the shipped controller running, with its cache filled
    const { fleet, starter } = given();
    await setUpFleet(cluster, fleet);
    const controller = await starter.start();
    const clashes = appsOf(fleet);

    // WHEN, for 20 apps at once, a foreign work is created at the app's work name and the app right after it
    const foreign = await createClashes(fleet, clashes);

    // THEN every app says so, and no work was written by the controller
    await expectRefusedAndUntouched(fleet, clashes, foreign, controller);

    // WHEN the foreign works are deleted THEN every app is delivered by itself
    await deleteAndExpectDelivered(fleet, clashes);
  }, 420_000);

  test('with the controller’s cache certain not to hold the foreign works, the API server refuses the create-only apply, the controller reads the work live and says so, and delivers once they are gone', async () => {
    // GIVEN the shipped controller running with watches that end every 2 s, then denied list and watch of
    // ManifestWorks: its cache of works stays as it is until they are granted again
    const { fleet, starter } = given();
    await setUpFleet(cluster, fleet);
    const controller = await starter.start({ watchTimeoutSeconds: 2 });
    const roles = starter.install.objects.filter(
      (object) =>
        (object.kind === 'ClusterRole' || object.kind === 'Role') &&
        ((object as unknown as { rules?: Rule[] }).rules ?? []).some((rule) =>
          rule.resources?.includes('manifestworks'),
        ),
    );
    expect(roles.length).toBeGreaterThan(0);
    const withoutListWatch = (role: RawObject): RawObject => {
      const { rules = [] } = role as unknown as { rules?: Rule[] };
      return {
        ...role,
        rules: rules.map((rule) =>
          rule.resources?.includes('manifestworks')
            ? { ...rule, verbs: rule.verbs.filter((verb) => verb !== 'list' && verb !== 'watch') }
            : rule,
        ),
      };
    };
    expectedRefusal = /"kind":"ManifestWork".*list\/watch failed/;
    for (const role of roles) await raw.apply(withoutListWatch(role), 'pullfleet-test');
    await waitFor(
      'the controller refused a list or watch of ManifestWorks',
      () =>
        controller
          .output(Number.MAX_SAFE_INTEGER)
          .split('\n')
          .some((line) => /manifestworks.*\b403\b/.test(line)),
      { timeoutMs: TIMEOUT_MS, intervalMs: 200, describe: () => controller.output(10) },
    );
    const clashes = appsOf(fleet);

    // WHEN, for 20 apps at once, a foreign work is created at the app's work name and the app right after it
    const foreign = await createClashes(fleet, clashes);

    // THEN every app says so, and no work was written by the controller
    await expectRefusedAndUntouched(fleet, clashes, foreign, controller);
    // (each refusal came from the live read: the cache had seen none of the works)
    const judgedLive = new Set(
      controller
        .output(Number.MAX_SAFE_INTEGER)
        .split('\n')
        .filter((line) => line.includes('ManifestWork name taken by a work the cache had not seen'))
        .map((line) => (JSON.parse(line) as { app?: string }).app),
    );
    expect(judgedLive.size).toBe(APPS);

    // WHEN list and watch are granted again and the foreign works are deleted THEN every app is delivered
    for (const role of roles) await raw.apply(role, 'pullfleet-test');
    await deleteAndExpectDelivered(fleet, clashes);
  }, 420_000);
});
