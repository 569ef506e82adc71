/**
 * Taking an app over from ACM's propagation controller where ACM and pullfleet differ (docs/controller/takeover.md):
 * an empty destination namespace ACM filled in, ACM's narrower tenancy rule, and the hub itself (ACM 2.17
 * delivers pull apps to local-cluster, pullfleet never does). The Application reconciler on an in-memory world.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { createApplicationReconciler } from '../../../src/controller/reconcilers/application.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, PULL_LABEL } from '../../../src/model/core/keys.js';
import { manifestWorkName } from '../../../src/model/core/names.js';
import type { Application, ManifestWork } from '../../../src/model/core/types.js';
import { ACM_TENANCY_CONDITION, DELIVERY_ERROR_CONDITION } from '../../../src/model/reconcile/status.js';
import { INHERITED_DESTINATION_NAMESPACE_ANNOTATION, TAKEOVER_LABEL } from '../../../src/model/reconcile/takeover.js';
import { legacyWork, type LegacyFlavour } from '../../support/takeover-legacy.js';
import { pullApplication, World } from '../../support/world.js';
import { placementDecision } from '../../support/appsets.js';

const NS = 'apps';
const KEY = `${NS}/guestbook`;
const OWN = `spoke1/${manifestWorkName(NS, 'guestbook')}`;

function app(cluster = 'spoke1', destinationNamespace?: string, labels: Record<string, string> = {}): Application {
  return pullApplication({
    namespace: NS,
    cluster,
    labels: { [PULL_LABEL]: 'true', ...labels },
    metadata: { uid: 'a1b2c3d4-0000-0000-0000-000000000000' },
    spec: {
      project: 'default',
      source: { repoURL: 'https://git.example/apps', path: 'guestbook', targetRevision: 'main' },
      destination: {
        server: 'https://kubernetes.default.svc',
        ...(destinationNamespace !== undefined ? { namespace: destinationNamespace } : {}),
      },
    },
  });
}

function managedCluster(world: World, name: string, labels: Record<string, string> = {}): void {
  world.addCluster(name, { clusterSet: 'prod', labels });
}

const destinationOf = (work: ManifestWork | undefined) =>
  (work?.spec.workload.manifests.find((m) => m.kind === 'Application') as { spec?: { destination?: unknown } })?.spec
    ?.destination;

/** The work agent reports the work's current generation applied (what the hand-over waits for). */
function agentObserved(world: World, key: string): void {
  const work = world.get<ManifestWork>('ManifestWork', key)!;
  const generation = (work.metadata.generation ?? 0) + 1;
  world.put('ManifestWork', {
    ...work,
    metadata: { ...work.metadata, generation },
    status: {
      conditions: [
        {
          type: 'Applied',
          status: 'True',
          reason: 'AppliedManifestWorkComplete',
          message: 'ok',
          observedGeneration: generation,
        },
      ],
    },
  });
}

describe('taking over from ACM', () => {
  let world: World;

  beforeEach(() => {
    world = World.hub({ clusters: ['spoke1'], namespace: NS });
  });

  describe('an empty destination namespace', () => {
    async function takeOver(flavour: LegacyFlavour, reconciler: Reconciler, destinationNamespace?: string) {
      const hub = app('spoke1', destinationNamespace);
      const legacy = legacyWork(hub, flavour);
      world.put('Application', hub);
      world.put('ManifestWork', legacy);
      const legacyKey = `${legacy.metadata.namespace}/${legacy.metadata.name}`;
      await world.settle(reconciler, KEY);
      // The legacy work is orphaned first; once the agent saw it, pullfleet writes its own work
      expect(world.get<ManifestWork>('ManifestWork', legacyKey)?.metadata.labels?.[TAKEOVER_LABEL]).toBe('orphaned');
      agentObserved(world, legacyKey);
      await world.settle(reconciler, KEY);
      expect(world.get('ManifestWork', OWN)).toBeDefined();
      return { legacy, legacyKey };
    }

    test('GIVEN an ACM work that filled it in WHEN pullfleet takes over THEN its payload keeps ACM destination, also once the ACM work is gone', async () => {
      const reconciler = world.reconciler(createApplicationReconciler);
      // GIVEN ACM delivered the app with destination.namespace filled in with the Application namespace
      const { legacy, legacyKey } = await takeOver('acm', reconciler);
      const acm = destinationOf(legacy) as Record<string, string>;
      expect(acm.namespace).toBe(NS);
      // THEN pullfleet's payload has the same destination (ACM's empty `name` aside: Argo CD reads it as unset)
      const { name: _emptyName, ...acmDestination } = acm;
      expect(destinationOf(world.get<ManifestWork>('ManifestWork', OWN))).toStrictEqual(acmDestination);
      expect(
        world.get<ManifestWork>('ManifestWork', OWN)!.metadata.annotations?.[
          INHERITED_DESTINATION_NAMESPACE_ANNOTATION
        ],
      ).toBe(NS);
      // WHEN the agent applied pullfleet's work and the hand-over deleted ACM's
      agentObserved(world, OWN);
      await world.settle(reconciler, KEY);
      expect(world.get('ManifestWork', legacyKey)).toBeUndefined();
      // THEN later reconciles (and a restarted controller) keep it
      const restarted = world.reconciler(createApplicationReconciler);
      await world.settle(restarted, KEY);
      expect(destinationOf(world.get<ManifestWork>('ManifestWork', OWN))).toStrictEqual(acmDestination);
      // WHEN the hub app sets a namespace itself THEN that one wins and nothing is inherited any more
      const current = world.get<Application>('Application', KEY)!;
      current.spec.destination = { ...current.spec.destination, namespace: 'guestbook' };
      world.put('Application', current);
      await world.settle(restarted, KEY);
      const own = world.get<ManifestWork>('ManifestWork', OWN)!;
      expect((destinationOf(own) as { namespace?: string }).namespace).toBe('guestbook');
      expect(own.metadata.annotations?.[INHERITED_DESTINATION_NAMESPACE_ANNOTATION]).toBeUndefined();
    });

    test('GIVEN an argocd-pull-integration work that left it empty WHEN pullfleet takes over THEN it stays empty', async () => {
      const reconciler = world.reconciler(createApplicationReconciler);
      await takeOver('argocd-pull-integration', reconciler);
      expect(destinationOf(world.get<ManifestWork>('ManifestWork', OWN))).toStrictEqual({
        server: 'https://kubernetes.default.svc',
      });
    });
  });

  describe("ACM's narrower tenancy rule", () => {
    test('GIVEN no PlacementDecision in the namespace selects the cluster WHEN a pull app pullfleet did not render is delivered THEN it says so, until a decision selects it', async () => {
      const reconciler = world.reconciler(createApplicationReconciler, { acmTenancyWarnings: true });
      world.put('Application', app());
      await world.settle(reconciler, KEY);
      // Delivered (a bound set contains the cluster), with the warning
      expect(world.get('ManifestWork', OWN)).toBeDefined();
      const warning = () =>
        world.get<Application>('Application', KEY)!.status?.conditions?.find((c) => c.type === ACM_TENANCY_CONDITION);
      expect(warning()?.message).toBe(
        `ACM's propagation controller would not deliver this Application: no PlacementDecision in namespace "${NS}" selects ManagedCluster "spoke1"; pullfleet delivers it because a ManagedClusterSet bound to "${NS}" contains the cluster. If it was meant to stay undelivered (as under ACM), remove the pull label; to make both rules agree, add a Placement in "${NS}" that selects "spoke1"`,
      );
      // WHEN a Placement in the namespace selects the cluster THEN the warning goes
      world.put('PlacementDecision', placementDecision('p', ['spoke1'], { namespace: NS, labelled: false }));
      await world.settle(reconciler, KEY);
      expect(warning()).toBeUndefined();
    });

    test('GIVEN an app pullfleet rendered, or the setting off THEN no warning', async () => {
      const on = world.reconciler(createApplicationReconciler, { acmTenancyWarnings: true });
      world.put('Application', app('spoke1', undefined, { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE }));
      await world.settle(on, KEY);
      expect(world.get<Application>('Application', KEY)!.status?.conditions ?? []).toStrictEqual([]);
      const off = world.reconciler(createApplicationReconciler);
      world.put('Application', { ...app(), status: {} });
      await world.settle(off, KEY);
      expect((world.get<Application>('Application', KEY)!.status?.conditions ?? []).map((c) => c.type)).not.toContain(
        ACM_TENANCY_CONDITION,
      );
    });
  });

  describe('the hub itself (ACM 2.17 embedded pull)', () => {
    test.each([
      ['local-cluster', {}],
      ['hub-a', { 'local-cluster': 'true' }],
    ])(
      'GIVEN ACM delivered the app to %s WHEN pullfleet runs THEN ACM work is left exactly as it is and the app says what to do',
      async (cluster, labels) => {
        managedCluster(world, cluster, labels);
        const reconciler = world.reconciler(createApplicationReconciler);
        const hub = app(cluster);
        const legacy = legacyWork(hub, 'acm');
        world.put('Application', hub);
        world.put('ManifestWork', legacy);
        const legacyKey = `${legacy.metadata.namespace}/${legacy.metadata.name}`;
        const before = structuredClone(world.get<ManifestWork>('ManifestWork', legacyKey));
        await world.settle(reconciler, KEY);
        // ACM's work: untouched (not orphaned, not deleted, not rewritten); no work of pullfleet's
        expect(world.get<ManifestWork>('ManifestWork', legacyKey)).toStrictEqual(before);
        expect(world.get('ManifestWork', `${cluster}/${manifestWorkName(NS, 'guestbook')}`)).toBeUndefined();
        const error = world
          .get<Application>('Application', KEY)!
          .status?.conditions?.find((c) => c.type === DELIVERY_ERROR_CONDITION);
        expect(error?.message).toBe(
          `pullfleet does not deliver to the hub itself (ManagedCluster "${cluster}"), which ACM 2.17 does ("embedded pull"): ManifestWork ${legacyKey} that ACM wrote is left as it is, so the Application keeps running on the hub as last delivered, but nothing updates it any more. To manage it again, deploy it with the hub's own Argo CD (remove the pull label and the skip-reconcile annotation), or target a spoke cluster`,
        );
      },
    );
  });
});
