import { describe, expect, test } from '@jest/globals';
import { CLEANUP_FINALIZER, SPOKE_APP_NAMESPACE_ANNOTATION } from '../../../src/model/core/keys.js';
import { type Application, type ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import { computePropagation } from '../../../src/model/reconcile/propagation.js';
import {
  LEGACY_CONTROLLER_SEEN_ANNOTATION,
  LEGACY_CONTROLLER_WINDOW_MS,
  TAKEOVER_LABEL,
  TAKEOVER_ORPHANED,
  computeTakeover,
  isLegacyWorkFor,
  legacyControllerWarning,
  orphanPatch,
} from '../../../src/model/reconcile/takeover.js';
import { legacyWork, type LegacyFlavour } from '../../support/takeover-legacy.js';
import { pullApplication } from '../../support/world.js';

/** argocd/guestbook for cluster east with the cleanup finalizer; `extra` fields replace its own metadata. */
function hubApp(extra: Partial<Application['metadata']> = {}): Application {
  const app = pullApplication({
    cluster: 'east',
    metadata: { uid: '3f2a9c1e-0000-4000-8000-000000000001', resourceVersion: '10', finalizers: [CLEANUP_FINALIZER] },
  });
  return { ...app, metadata: { ...app.metadata, ...extra } };
}

const appSetApp = () =>
  hubApp({
    name: 'east-guestbook',
    ownerReferences: [{ apiVersion: 'argoproj.io/v1alpha1', kind: 'ApplicationSet', name: 'guestbook', uid: 'as-1' }],
  });

/** A work as stored: uid, resourceVersion, generation, and optionally the agent's Applied condition at a generation. */
function stored(
  work: ManifestWork,
  opts: { generation?: number; observed?: number; applied?: boolean; rv?: string } = {},
): ManifestWork {
  const generation = opts.generation ?? 1;
  return {
    ...work,
    metadata: { ...work.metadata, uid: `uid-${work.metadata.name}`, resourceVersion: opts.rv ?? '100', generation },
    ...(opts.observed !== undefined
      ? {
          status: {
            conditions: [
              {
                type: 'Applied',
                status: opts.applied === false ? 'False' : 'True',
                reason: 'r',
                message: 'm',
                lastTransitionTime: '2026-03-01T12:00:00Z',
                observedGeneration: opts.observed,
              },
            ],
          },
        }
      : {}),
  };
}

/** What the legacy work looks like once pullfleet's orphan patch landed. */
function orphaned(work: ManifestWork): ManifestWork {
  return {
    ...work,
    metadata: { ...work.metadata, labels: { ...work.metadata.labels, [TAKEOVER_LABEL]: TAKEOVER_ORPHANED } },
    spec: { ...work.spec, deleteOption: { propagationPolicy: 'Orphan' } },
  };
}

const flavours: Array<[LegacyFlavour, () => Application]> = [
  ['argocd-pull-integration', hubApp],
  ['argocd-pull-integration', appSetApp],
  ['acm', hubApp],
  ['acm', appSetApp],
];

/** The propagation plan of argocd/guestbook when `other` stands beside the work at its target, `atTarget`. */
function propagateBeside(app: Application, other: ManifestWork, atTarget: ManifestWork) {
  return computePropagation({
    namespace: 'argocd',
    name: 'guestbook',
    app,
    works: [other, atTarget],
    workAtTarget: atTarget,
  });
}

describe('recognising a legacy work', () => {
  test.each(flavours)('GIVEN a %s work for the app THEN it is a legacy work of that app', (flavour, make) => {
    const app = make();
    expect(isLegacyWorkFor(legacyWork(app, flavour), app)).toBe(true);
  });

  test("GIVEN pullfleet's own work, a work in another cluster namespace, one for another app, or one delivering another spoke namespace THEN none is legacy", () => {
    const app = hubApp();
    const other = legacyWork(app, 'argocd-pull-integration');
    expect(isLegacyWorkFor(buildManifestWork(app), app)).toBe(false);
    expect(isLegacyWorkFor({ ...other, metadata: { ...other.metadata, namespace: 'west' } }, app)).toBe(false);
    expect(isLegacyWorkFor(other, hubApp({ name: 'other' }))).toBe(false);
    const moved = hubApp({
      annotations: { ...hubApp().metadata.annotations, [SPOKE_APP_NAMESPACE_ANNOTATION]: 'apps' },
    });
    expect(isLegacyWorkFor(other, moved)).toBe(false);
  });
});

describe('the hand-over, step by step (computePropagation)', () => {
  test.each(flavours)(
    'GIVEN a %s work as its controller left it WHEN reconciled THEN it is orphaned first and pullfleet writes nothing of its own',
    (flavour, make) => {
      const app = make();
      const legacy = stored(legacyWork(app, flavour), { observed: 1 });
      const plan = computePropagation({ namespace: 'argocd', name: app.metadata.name, app, works: [legacy] });
      expect(plan.apply).toBeUndefined();
      expect(plan.deletes).toStrictEqual([]);
      expect(plan.orphan).toStrictEqual([
        { namespace: 'east', name: legacy.metadata.name, uid: legacy.metadata.uid, resourceVersion: '100' },
      ]);
      expect(plan.statusWork).toStrictEqual({ namespace: 'east', name: legacy.metadata.name });
      expect(plan.legacyControllerActive).toBeUndefined();
    },
  );

  test("GIVEN the orphan patch THEN it sets the whole work to Orphan (dropping ACM's orphaning rules), labels it, and is guarded by resourceVersion", () => {
    expect(orphanPatch({ namespace: 'east', name: 'guestbook-3f2a9', resourceVersion: '100' })).toStrictEqual({
      metadata: { labels: { [TAKEOVER_LABEL]: TAKEOVER_ORPHANED }, resourceVersion: '100' },
      spec: { deleteOption: { propagationPolicy: 'Orphan', selectivelyOrphans: null } },
    });
  });

  test('GIVEN the legacy work is Orphan but the agent has not reported on that generation THEN pullfleet still waits', () => {
    const app = hubApp();
    const legacy = stored(orphaned(legacyWork(app, 'acm')), { generation: 2, observed: 1 });
    const plan = computePropagation({ namespace: 'argocd', name: 'guestbook', app, works: [legacy] });
    expect(plan.apply).toBeUndefined();
    expect(plan.orphan).toBeUndefined();
    expect(plan.deletes).toStrictEqual([]);
    expect(plan.takeoverWaiting).toContain('observe deleteOption Orphan');
  });

  test('GIVEN the agent observed the Orphan THEN pullfleet writes its own work and deletes nothing yet', () => {
    const app = hubApp();
    const legacy = stored(orphaned(legacyWork(app, 'acm')), { generation: 2, observed: 2 });
    const plan = computePropagation({ namespace: 'argocd', name: 'guestbook', app, works: [legacy] });
    expect(plan.apply?.metadata.name).toBe('argocd-guestbook');
    expect(plan.deletes).toStrictEqual([]);
  });

  test("GIVEN pullfleet's work exists but is not applied at its generation THEN the legacy work stays", () => {
    const app = hubApp();
    const legacy = stored(orphaned(legacyWork(app, 'argocd-pull-integration')), { generation: 2, observed: 2 });
    const own = stored(buildManifestWork(app), { generation: 1 });
    const plan = propagateBeside(app, legacy, own);
    expect(plan.deletes).toStrictEqual([]);
    // Status stays with the legacy work until the agent reports on pullfleet's, so the hub app never flaps to Unknown.
    expect(plan.statusWork).toStrictEqual({ namespace: 'east', name: legacy.metadata.name });
    const refused = stored(buildManifestWork(app), { generation: 1, observed: 1, applied: false });
    const refusedPlan = propagateBeside(app, legacy, refused);
    expect(refusedPlan.deletes).toStrictEqual([]);
    // A refusal is pullfleet's to report: status comes from its own work then.
    expect(refusedPlan.statusWork).toBeUndefined();
  });

  test("GIVEN pullfleet's work is Applied THEN the Orphan legacy work is deleted with uid and resourceVersion preconditions", () => {
    const app = hubApp();
    const legacy = stored(orphaned(legacyWork(app, 'acm')), { generation: 2, observed: 2, rv: '205' });
    const own = stored(buildManifestWork(app), { generation: 1, observed: 1 });
    const plan = propagateBeside(app, legacy, own);
    expect(plan.apply).toBeUndefined();
    expect(plan.deletes).toStrictEqual([
      { namespace: 'east', name: legacy.metadata.name, uid: legacy.metadata.uid, resourceVersion: '205' },
    ]);
    expect(plan.statusWork).toBeUndefined();
  });

  test("GIVEN pullfleet's work exists and a legacy work is Foreground again (rewritten or re-created) THEN it is orphaned, not deleted, and the old controller is named", () => {
    const app = hubApp();
    const legacy = stored(legacyWork(app, 'argocd-pull-integration'), { generation: 3, observed: 3 });
    const own = stored(buildManifestWork(app), { generation: 1, observed: 1 });
    const plan = propagateBeside(app, legacy, own);
    expect(plan.deletes).toStrictEqual([]);
    expect(plan.orphan?.map((ref) => ref.name)).toStrictEqual([legacy.metadata.name]);
    expect(plan.legacyControllerActive).toContain("scale argocd-pull-integration or ACM's propagation controller down");
  });

  test("GIVEN an Orphan legacy work someone else set (no takeover label) and pullfleet's work Applied THEN it is labelled first and deleted on the next pass", () => {
    const app = hubApp();
    const unlabelled = stored(
      {
        ...legacyWork(app, 'argocd-pull-integration'),
        spec: { ...legacyWork(app, 'argocd-pull-integration').spec, deleteOption: { propagationPolicy: 'Orphan' } },
      },
      { observed: 1 },
    );
    const own = stored(buildManifestWork(app), { generation: 1, observed: 1 });
    const first = propagateBeside(app, unlabelled, own);
    expect(first.orphan?.map((item) => item.name)).toStrictEqual([unlabelled.metadata.name]);
    expect(first.deletes).toStrictEqual([]);
    expect(first.legacyControllerActive).toBeUndefined();
    const labelled = stored(orphaned(unlabelled), { observed: 1, rv: '101' });
    expect(
      computePropagation({
        namespace: 'argocd',
        name: 'guestbook',
        app,
        works: [labelled, own],
        workAtTarget: own,
      }).deletes.map((item) => item.name),
    ).toStrictEqual([unlabelled.metadata.name]);
  });

  test('GIVEN a terminating legacy work THEN the hand-over leaves it alone', () => {
    const app = hubApp();
    const legacy = stored(legacyWork(app, 'acm'), { observed: 1 });
    const terminating = { ...legacy, metadata: { ...legacy.metadata, deletionTimestamp: '2026-03-01T12:00:00Z' } };
    expect(computeTakeover({ app, works: [terminating] })).toStrictEqual({ orphan: [], deletes: [], mayApply: true });
  });
});

describe('a legacy work whose `<app>-<uid5>` name is over 63 characters (neither old controller shortens it)', () => {
  const longName = 'payments-gateway-eu-central-1-production-canary-long-suffix';
  const longApp = () => hubApp({ name: longName });

  test.each(['argocd-pull-integration', 'acm'] as LegacyFlavour[])(
    'GIVEN a %s work named `<app>-<uid5>` in full WHEN handed over THEN it is recognised, orphaned, and finally deleted by that full name',
    (flavour) => {
      const app = longApp();
      const fullName = `${longName}-3f2a9`;
      expect(fullName.length).toBeGreaterThan(63);
      const legacy = stored(legacyWork(app, flavour), { observed: 1 });
      expect(legacy.metadata.name).toBe(fullName);
      expect(isLegacyWorkFor(legacy, app)).toBe(true);

      const first = computePropagation({ namespace: 'argocd', name: longName, app, works: [legacy] });
      expect(first.apply).toBeUndefined();
      expect(first.orphan).toStrictEqual([
        { namespace: 'east', name: fullName, uid: legacy.metadata.uid, resourceVersion: '100' },
      ]);
      expect(first.statusWork).toStrictEqual({ namespace: 'east', name: fullName });

      const observedOrphan = stored(orphaned(legacy), { generation: 2, observed: 2, rv: '205' });
      const second = computePropagation({ namespace: 'argocd', name: longName, app, works: [observedOrphan] });
      expect(second.apply?.metadata.name).toHaveLength(63);
      expect(second.apply?.metadata.name).not.toBe(fullName);

      const own = stored(buildManifestWork(app), { generation: 1, observed: 1 });
      const third = computePropagation({
        namespace: 'argocd',
        name: longName,
        app,
        works: [observedOrphan, own],
        workAtTarget: own,
      });
      expect(third.deletes).toStrictEqual([
        { namespace: 'east', name: fullName, uid: observedOrphan.metadata.uid, resourceVersion: '205' },
      ]);
    },
  );
});

describe('the sweep never deletes a legacy work', () => {
  const app = hubApp();
  const legacy = stored(orphaned(legacyWork(app, 'acm')), { generation: 2, observed: 2 });

  test('GIVEN the hub app is gone THEN nothing is deleted', () => {
    expect(computePropagation({ namespace: 'argocd', name: 'guestbook', works: [legacy] }).deletes).toStrictEqual([]);
  });

  test('GIVEN the hub app is being deleted THEN the legacy work stays and the finalizer is released', () => {
    const deleting = hubApp({ deletionTimestamp: '2026-03-01T12:00:00Z' });
    expect(
      computePropagation({ namespace: 'argocd', name: 'guestbook', app: deleting, works: [legacy] }),
    ).toStrictEqual({ deletes: [], finalizer: 'remove' });
  });

  test('GIVEN the pull label is removed THEN the legacy work stays', () => {
    const optedOut = hubApp({ labels: {} });
    expect(
      computePropagation({ namespace: 'argocd', name: 'guestbook', app: optedOut, works: [legacy] }).deletes,
    ).toStrictEqual([]);
  });

  test('GIVEN the app cannot be delivered (tenancy) THEN nothing is orphaned or deleted', () => {
    const plan = computePropagation({
      namespace: 'argocd',
      name: 'guestbook',
      app,
      works: [stored(legacyWork(app, 'acm'))],
      deliveryProblem: 'not bound',
    });
    expect(plan).toStrictEqual({
      deletes: [],
      problem:
        'not bound. ManifestWork east/guestbook-3f2a9, written by another controller, is left as it is: what it delivered keeps running, but nothing updates it until this is fixed',
    });
  });
});

describe('legacyControllerWarning', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  test('GIVEN a fight now THEN the message is shown and rechecked after the window', () => {
    expect(legacyControllerWarning(hubApp(), 'fight', now)).toStrictEqual({
      message: 'fight',
      recheckAt: new Date(now.getTime() + LEGACY_CONTROLLER_WINDOW_MS + 1),
    });
  });

  test('GIVEN a fight recorded within the window THEN it is still shown; after it THEN not', () => {
    const seen = hubApp({ annotations: { [LEGACY_CONTROLLER_SEEN_ANNOTATION]: '2026-03-01T11:55:00Z' } });
    expect(legacyControllerWarning(seen, undefined, now).message).toContain('2026-03-01T11:55:00Z');
    expect(
      legacyControllerWarning(seen, undefined, new Date(now.getTime() + LEGACY_CONTROLLER_WINDOW_MS)),
    ).toStrictEqual({});
  });
});
