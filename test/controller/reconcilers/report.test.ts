import { describe, expect, test } from '@jest/globals';
import { resolveConfig } from '../../../src/controller/runtime/config.js';
import type { ReconcilerContext } from '../../../src/controller/runtime/reconciler.js';
import { createReportReconciler, ReportReconciler } from '../../../src/controller/reconcilers/report.js';
import { FLEET_REPORT, MULTICLUSTER_APPSET_REPORT } from '../../../src/kube/resources.js';
import {
  HOSTING_APPSET_ANNOTATION,
  HUB_APP_NAME_ANNOTATION,
  HUB_APP_NAMESPACE_ANNOTATION,
} from '../../../src/model/core/keys.js';
import { type FleetReport, type MulticlusterApplicationSetReport } from '../../../src/model/report/report.js';
import { APPSET, applicationSet, decision, healthy, hubApp, NOW, NS, work } from '../../model/report/fixtures.js';
import { World as MemoryWorld } from '../../support/world.js';

const KEY = `${NS}/${APPSET}`;

/** The in-memory world, with the report of the ApplicationSet under test at hand. */
class World extends MemoryWorld {
  report(): FleetReport | undefined {
    return this.cache.get<FleetReport>(FLEET_REPORT.id, KEY);
  }
}

function setup(options: { multiclusterReports?: boolean; staleAfterSeconds?: number } = {}): {
  world: World;
  reconciler: ReportReconciler;
  clock: { now: Date };
} {
  const world = new World();
  const clock = { now: NOW };
  const reconciler = new ReportReconciler(
    world.cache,
    world,
    (kind, object) => world.applyStatus(kind, object),
    () => clock.now,
    {
      staleAfterSeconds: options.staleAfterSeconds ?? 900,
      multiclusterReports: options.multiclusterReports ?? false,
    },
  );
  for (const watch of reconciler.watches)
    for (const [name, fn] of Object.entries(watch.indexes ?? {})) world.cache.addIndex(watch.kind.id, name, fn);
  return { world, reconciler, clock };
}

/** An ApplicationSet with two selected clusters, both delivered, east healthy and west without feedback. */
function populate(world: World): void {
  world.put('ApplicationSet', applicationSet());
  world.put('PlacementDecision', decision('prod-decision-1', ['east', 'west']));
  world.put('Application', hubApp('east'));
  world.put('Application', hubApp('west'));
  world.put('ManifestWork', work('east', healthy, { applied: 'True', available: 'True' }));
  world.put('ManifestWork', work('west', undefined, { created: '2026-01-01T00:58:00Z' }));
}

describe('report reconciler: writes', () => {
  test('creates the report owned by the ApplicationSet and writes its status through the status subresource', async () => {
    // GIVEN an ApplicationSet with decisions, apps and works
    const { world, reconciler } = setup();
    populate(world);
    // WHEN its key is reconciled
    const result = await reconciler.reconcile(KEY);
    // THEN the report exists with one row per cluster, and a recheck is asked for when west would go stale
    const report = world.report()!;
    expect(report.metadata.ownerReferences).toStrictEqual([
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'ApplicationSet',
        name: APPSET,
        uid: `${APPSET}-uid`,
        controller: true,
        blockOwnerDeletion: false,
      },
    ]);
    expect(report.status!.clusters.map((row) => [row.cluster, row.state])).toStrictEqual([
      ['east', 'Healthy'],
      ['west', 'Unknown'],
    ]);
    expect(world.writes.map((w) => w.verb)).toStrictEqual(['apply', 'applyStatus']);
    // west's work was created at 00:58 and turns stale 900 s later; plus the safety margin
    expect(result).toStrictEqual({ requeueAfterMs: 780_000 + 500 });
  });

  test('a second reconcile of an unchanged world writes nothing', async () => {
    const { world, reconciler } = setup();
    populate(world);
    await reconciler.reconcile(KEY);
    const before = world.writes.length;
    await reconciler.reconcile(KEY);
    expect(world.writes.length).toBe(before);
  });

  test('a restarted controller reads the report first: unchanged content is not rewritten and transition times survive', async () => {
    // GIVEN a report written an hour ago by an earlier controller
    const { world, reconciler: earlier, clock } = setup();
    populate(world);
    world.put('ManifestWork', work('west', healthy));
    await earlier.reconcile(KEY);
    // WHEN a new controller (empty memory) reconciles the same world an hour later
    // (staleness off, so an hour without feedback changes nothing but the recorded threshold)
    const laterReconciler = new ReportReconciler(
      world.cache,
      world,
      (kind, object) => world.applyStatus(kind, object),
      () => clock.now,
      { staleAfterSeconds: 0, multiclusterReports: false },
    );
    clock.now = new Date('2026-01-01T02:00:00Z');
    world.writes.length = 0;
    await laterReconciler.reconcile(KEY);
    // THEN it only confirmed the object (a no-op apply) and kept the conditions as they were
    expect(world.writes.map((w) => w.verb)).toStrictEqual(['apply']);
    expect(world.report()!.status!.conditions.map((c) => c.lastTransitionTime)).toStrictEqual([
      '2026-01-01T01:00:00Z',
      '2026-01-01T01:00:00Z',
    ]);
  });

  test('a feedback change rewrites the status only', async () => {
    const { world, reconciler } = setup();
    populate(world);
    await reconciler.reconcile(KEY);
    world.writes.length = 0;
    world.put('ManifestWork', work('west', { ...healthy, health: 'Degraded', sync: 'OutOfSync' }));
    await reconciler.reconcile(KEY);
    expect(world.writes.map((w) => w.verb)).toStrictEqual(['applyStatus']);
    const west = world.report()!.status!.clusters.find((row) => row.cluster === 'west')!;
    expect([west.state, west.syncStatus]).toStrictEqual(['Degraded', 'OutOfSync']);
    expect(world.report()!.status!.conditions.find((c) => c.type === 'Degraded')!.status).toBe('True');
  });

  test('time passing turns a row Stale on the requested recheck', async () => {
    const { world, reconciler, clock } = setup();
    populate(world);
    const first = await reconciler.reconcile(KEY);
    clock.now = new Date(NOW.getTime() + (first as { requeueAfterMs: number }).requeueAfterMs);
    await reconciler.reconcile(KEY);
    expect(world.report()!.status!.clusters.find((row) => row.cluster === 'west')!.state).toBe('Stale');
  });

  test('a report edited or deleted by hand is put back once the server copy is re-read', async () => {
    const { world, reconciler, clock } = setup();
    populate(world);
    await reconciler.reconcile(KEY);
    const edited = world.report()!;
    edited.status!.summary.healthy = 99;
    world.put(FLEET_REPORT.id, edited);
    clock.now = new Date(NOW.getTime() + 300_000);
    await reconciler.reconcile(KEY);
    expect(world.report()!.status!.summary.healthy).toBe(1);
    world.cache.remove(FLEET_REPORT.id, KEY);
    clock.now = new Date(NOW.getTime() + 600_000);
    await reconciler.reconcile(KEY);
    expect(world.report()!.status!.summary.clusters).toBe(2);
  });

  test('the ApplicationSet being deleted deletes its report', async () => {
    const { world, reconciler } = setup();
    populate(world);
    await reconciler.reconcile(KEY);
    world.cache.remove('ApplicationSet', KEY);
    await reconciler.reconcile(KEY);
    expect(world.report()).toBeUndefined();
    expect(world.writes.at(-1)).toStrictEqual({ verb: 'delete', resource: 'fleetreports', key: KEY });
    // AND later events for the gone ApplicationSet (its apps being cleaned up) delete nothing more
    const writes = world.writes.length;
    await reconciler.reconcile(KEY);
    expect(world.writes.length).toBe(writes);
  });

  test('ApplicationSets that come and go leave no bookkeeping behind after a resync', async () => {
    const { world, reconciler } = setup();
    populate(world);
    await reconciler.reconcile(KEY);
    world.cache.remove('ApplicationSet', KEY);
    await reconciler.reconcile(KEY);
    expect(world.report()).toBeUndefined();
    reconciler.resyncKeys();
    expect(reconciler.bookkeeping()).toBe(0);
  });

  test('an ApplicationSet that never had a report writes nothing', async () => {
    const { world, reconciler } = setup();
    world.put('ApplicationSet', applicationSet({ pull: false }));
    await reconciler.reconcile(KEY);
    expect(world.writes).toStrictEqual([]);
  });

  test('with ACM compatibility on, the MulticlusterApplicationSetReport is written once per change', async () => {
    const { world, reconciler } = setup({ multiclusterReports: true });
    populate(world);
    await reconciler.reconcile(KEY);
    await reconciler.reconcile(KEY);
    const mcas = world.cache.get<MulticlusterApplicationSetReport>(MULTICLUSTER_APPSET_REPORT.id, KEY)!;
    expect(mcas.statuses!.summary).toStrictEqual({
      clusters: '2',
      healthy: '1',
      inProgress: '0',
      notHealthy: '1',
      notSynced: '1',
      synced: '1',
    });
    expect(world.writes.filter((w) => w.resource === 'multiclusterapplicationsetreports')).toHaveLength(1);
    world.cache.remove('ApplicationSet', KEY);
    await reconciler.reconcile(KEY);
    expect(world.cache.get(MULTICLUSTER_APPSET_REPORT.id, KEY)).toBeUndefined();
  });
});

describe('report reconciler: events map to ApplicationSet keys', () => {
  function watchFor(reconciler: ReportReconciler, kindId: string) {
    return reconciler.watches.find((w) => w.kind.id === kindId)!;
  }

  test('a ManifestWork maps through its hosting-applicationset annotation', () => {
    const { reconciler } = setup();
    const w = work('east', healthy);
    w.metadata.annotations = { [HOSTING_APPSET_ANNOTATION]: KEY };
    expect(watchFor(reconciler, 'ManifestWork').keysFor(w, undefined)).toStrictEqual([KEY]);
  });

  test('a ManifestWork without it maps through the hub Application it names', () => {
    const { world, reconciler } = setup();
    world.put('Application', hubApp('east'));
    const w = work('east', healthy);
    w.metadata.annotations = { [HUB_APP_NAMESPACE_ANNOTATION]: NS, [HUB_APP_NAME_ANNOTATION]: 'east-guestbook' };
    expect(watchFor(reconciler, 'ManifestWork').keysFor(w, undefined)).toStrictEqual([KEY]);
  });

  test('an unrelated ManifestWork maps to nothing', () => {
    const { reconciler } = setup();
    expect(watchFor(reconciler, 'ManifestWork').keysFor(work('east', healthy), undefined)).toStrictEqual([]);
  });

  test('an Application maps to its owning ApplicationSet, before and after an update', () => {
    const { reconciler } = setup();
    const before = hubApp('east', 'old');
    expect(watchFor(reconciler, 'Application').keysFor(hubApp('east'), before)).toStrictEqual([KEY, `${NS}/old`]);
  });

  test('a PlacementDecision maps to the pull ApplicationSets of its namespace that read it, by old or new labels', () => {
    const { world, reconciler } = setup();
    world.put('ApplicationSet', applicationSet());
    world.put('ApplicationSet', applicationSet({ name: 'staging-apps', placement: 'staging' }));
    world.put('ApplicationSet', applicationSet({ name: 'push-apps', pull: false }));
    const watch = watchFor(reconciler, 'PlacementDecision');
    expect(watch.keysFor(decision('d', ['east']), undefined)).toStrictEqual([KEY]);
    expect(watch.keysFor(decision('d', ['east'], 'staging'), decision('d', ['east']))).toStrictEqual([
      KEY,
      `${NS}/staging-apps`,
    ]);
    expect(watch.keysFor(decision('d', ['east'], 'prod', 'other-ns'), undefined)).toStrictEqual([]);
  });

  test('resync covers pull ApplicationSets and reports written for ones gone since', async () => {
    const { world, reconciler } = setup();
    world.put('ApplicationSet', applicationSet({ name: 'gone' }));
    await reconciler.reconcile(`${NS}/gone`);
    world.cache.remove('ApplicationSet', `${NS}/gone`);
    world.put('ApplicationSet', applicationSet());
    world.put('ApplicationSet', applicationSet({ name: 'push-apps', pull: false }));
    expect(reconciler.resyncKeys()).toStrictEqual([`${NS}/gone`, KEY]);
  });
});

describe('report reconciler: configuration', () => {
  function context(overrides: Parameters<typeof resolveConfig>[0]): ReconcilerContext {
    const world = new World();
    return {
      cache: world.cache,
      writer: world,
      config: resolveConfig(overrides),
      logger: undefined as never,
      metrics: undefined as never,
      now: () => NOW,
    };
  }

  test('switched off, no reconciler runs', () => {
    expect(createReportReconciler(context({ fleetReports: false }))).toBeUndefined();
  });

  test('by default it runs, using the controller stale threshold', async () => {
    const ctx = context({ staleAfterSeconds: 60 });
    const reconciler = createReportReconciler(ctx)!;
    expect(reconciler.name).toBe('fleet-report');
    const world = ctx.writer as World;
    for (const watch of reconciler.watches)
      for (const [name, fn] of Object.entries(watch.indexes ?? {})) world.cache.addIndex(watch.kind.id, name, fn);
    populate(world);
    await reconciler.reconcile(KEY, { enqueuedAt: 0 });
    expect(world.report()!.spec.staleAfterSeconds).toBe(60);
    expect(world.report()!.status!.summary.stale).toBe(2);
  });
});
