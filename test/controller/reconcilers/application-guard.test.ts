import { beforeEach, describe, expect, test } from '@jest/globals';
import {
  AGENT_PULL_CONFLICT_CONDITION,
  createApplicationReconciler,
} from '../../../src/controller/reconcilers/application.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import type { ResourceKind } from '../../../src/kube/resources.js';
import { CLEANUP_FINALIZER, MANAGED_CLUSTER_ANNOTATION, PULL_LABEL } from '../../../src/model/core/keys.js';
import {
  type Application,
  type ApplicationStatus,
  type KubeObject,
  type ManifestWork,
} from '../../../src/model/core/types.js';
import { DELIVERY_MODEL_LABEL } from '../../../src/model/delivery/delivery-model.js';
import { pullApplication, World } from '../../support/world.js';

const NS = 'argocd';
const KEY = `${NS}/guestbook`;
/** The status the principal mirrored from the agent: the controller must leave it exactly as it is. */
const PRINCIPAL_STATUS: ApplicationStatus = {
  sync: { status: 'Synced', revision: 'abc123' },
  health: { status: 'Healthy' },
  reconciledAt: '2026-03-01T11:59:00Z',
};

function agentApp(options: { model?: string; pull?: boolean } = {}): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'guestbook',
      namespace: NS,
      labels: {
        [DELIVERY_MODEL_LABEL]: options.model ?? 'agent-managed',
        ...(options.pull ? { [PULL_LABEL]: 'true' } : {}),
      },
      annotations: options.pull ? { [MANAGED_CLUSTER_ANNOTATION]: 'spoke1' } : {},
    },
    spec: {
      project: 'default',
      destination: { name: 'spoke1', namespace: 'guestbook' },
      source: { repoURL: 'https://git.example/apps', path: 'guestbook' },
    },
    status: structuredClone(PRINCIPAL_STATUS),
  };
}

function basicApp(): Application {
  return pullApplication({ namespace: NS });
}

describe('application reconciler and agent-model Applications', () => {
  let world: World;
  let reconciler: Reconciler;

  beforeEach(() => {
    world = World.hub({
      clusters: ['spoke1'],
      namespace: NS,
      clusterSetSpec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } },
    });
    reconciler = world.reconciler(createApplicationReconciler);
  });

  test.each(['agent-managed', 'agent-autonomous'])(
    'GIVEN a %s hub Application WHEN reconciled THEN nothing is written: no work, no finalizer, status untouched',
    async (model) => {
      world.put('Application', agentApp({ model }));
      await world.settle(reconciler, KEY);
      expect(world.writes).toStrictEqual([]);
      expect(world.cache.list('ManifestWork')).toHaveLength(0);
      expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toBeUndefined();
    },
  );

  test('GIVEN an agent-managed Application that also carries the pull label WHEN reconciled THEN no work, only a conflict condition, and the principal status stays', async () => {
    world.put('Application', agentApp({ pull: true }));
    await world.settle(reconciler, KEY);
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
    const stored = world.get<Application>('Application', KEY)!;
    expect(stored.metadata.finalizers).toBeUndefined();
    const { conditions, ...rest } = stored.status!;
    expect(rest).toStrictEqual(PRINCIPAL_STATUS);
    expect(conditions).toHaveLength(1);
    expect(conditions![0]).toMatchObject({
      type: AGENT_PULL_CONFLICT_CONDITION,
      message: `the Application is labelled ${DELIVERY_MODEL_LABEL}=agent-managed and also ${PULL_LABEL}: the argocd-agent principal delivers agent-model Applications, so pullfleet does not wrap it into a ManifestWork; remove the ${PULL_LABEL} label, or set ${DELIVERY_MODEL_LABEL} to basic to deliver it through a ManifestWork`,
    });
    // Level-triggered and idempotent: a second pass writes nothing.
    const before = world.writes.length;
    await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    expect(world.writes.length).toBe(before);
  });

  test('GIVEN the conflict condition WHEN the pull label is removed THEN the condition is cleared and nothing else changes', async () => {
    world.put('Application', agentApp({ pull: true }));
    await world.settle(reconciler, KEY);
    const current = world.get<Application>('Application', KEY)!;
    delete current.metadata.labels![PULL_LABEL];
    world.put('Application', current);
    const before = world.writes.length;
    await world.settle(reconciler, KEY);
    // One write: the condition list without the conflict (the principal's sync and health are not in it).
    expect(world.writes.slice(before)).toStrictEqual([
      { verb: 'patch', resource: 'applications', key: KEY, body: { status: { conditions: null } } },
    ]);
    expect(world.get<Application>('Application', KEY)!.status?.conditions).toBeUndefined();
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
  });

  test('GIVEN the conflict condition WHEN the app moves back to basic delivery THEN it is delivered through a work and the condition goes', async () => {
    world.put('Application', agentApp({ pull: true }));
    await world.settle(reconciler, KEY);
    const current = world.get<Application>('Application', KEY)!;
    expect(current.status?.conditions?.map((c) => c.type)).toStrictEqual([AGENT_PULL_CONFLICT_CONDITION]);
    current.metadata.labels![DELIVERY_MODEL_LABEL] = 'basic';
    current.metadata.annotations!['argocd.argoproj.io/skip-reconcile'] = 'true';
    current.spec.destination = { server: 'https://kubernetes.default.svc', namespace: 'guestbook' };
    world.put('Application', current);
    await world.settle(reconciler, KEY);
    expect(world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')).toBeDefined();
    expect((world.get<Application>('Application', KEY)!.status?.conditions ?? []).map((c) => c.type)).not.toContain(
      AGENT_PULL_CONFLICT_CONDITION,
    );
  });

  /** Records every delete with the preconditions it carried (World itself keeps only the key). */
  function recordDeletes(): Array<{ key: string; options: unknown }> {
    const deletes: Array<{ key: string; options: unknown }> = [];
    const original = world.delete.bind(world);
    world.delete = async (kind, namespace, name, options = {}) => {
      deletes.push({ key: `${namespace}/${name}`, options });
      return original(kind, namespace, name);
    };
    return deletes;
  }

  /** The API server bumps a work's generation on every spec change (World does not): part of the same write. */
  function bumpGenerations(): void {
    const original = world.mergePatch.bind(world);
    world.mergePatch = async <T extends KubeObject>(
      kind: ResourceKind,
      namespace: string | undefined,
      name: string,
      patch: object,
    ): Promise<T> => {
      const written = await original<T>(kind, namespace, name, patch);
      if (kind.plural === 'manifestworks' && 'spec' in patch) {
        const stored = world.cache.get<ManifestWork>('ManifestWork', `${namespace}/${name}`)!;
        stored.metadata.generation = (stored.metadata.generation ?? 1) + 1;
        written.metadata.generation = stored.metadata.generation;
      }
      return written;
    };
  }

  /** What the work agent does: reports on the work's spec at `generation` (the API server bumped it to `generation`). */
  function agentReports(key: string, generation: number, observedGeneration: number): ManifestWork {
    const work = world.get<ManifestWork>('ManifestWork', key)!;
    work.metadata.generation = generation;
    work.status = {
      conditions: [
        {
          type: 'Applied',
          status: 'True',
          reason: 'AppliedManifestWorkComplete',
          message: '',
          lastTransitionTime: '2026-03-01T12:00:00Z',
          observedGeneration,
        },
      ],
    };
    return world.put('ManifestWork', work);
  }

  function relabelAgent(): void {
    const current = world.get<Application>('Application', KEY)!;
    delete current.metadata.labels![PULL_LABEL];
    current.metadata.labels![DELIVERY_MODEL_LABEL] = 'agent-managed';
    current.spec.destination = { name: 'spoke1', namespace: 'guestbook' };
    current.status = structuredClone(PRINCIPAL_STATUS);
    world.put('Application', current);
  }

  test('GIVEN a basic app with its work WHEN it is relabelled agent-managed THEN the work is orphaned first, deleted (guarded) only once the agent observed it, and the status is never written', async () => {
    world.put('Application', basicApp());
    await world.settle(reconciler, KEY);
    const delivered = agentReports('spoke1/argocd-guestbook', 1, 1);
    expect(delivered.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Foreground' });
    const deletes = recordDeletes();
    bumpGenerations();
    relabelAgent();
    const writesBefore = world.writes.length;
    await world.settle(reconciler, KEY);
    // Step 1: one guarded merge patch to Orphan; nothing deleted, the hub app not written.
    expect(world.writes.slice(writesBefore)).toStrictEqual([
      {
        verb: 'patch',
        resource: 'manifestworks',
        key: 'spoke1/argocd-guestbook',
        body: {
          metadata: { resourceVersion: delivered.metadata.resourceVersion },
          spec: { deleteOption: { propagationPolicy: 'Orphan', selectivelyOrphans: null } },
        },
      },
    ]);
    const orphaned = world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!;
    expect(orphaned.spec.deleteOption).toStrictEqual({ propagationPolicy: 'Orphan' });
    expect(orphaned.spec.workload).toStrictEqual(delivered.spec.workload);

    // The API server bumped the generation; the agent still reports the old one: nothing is deleted.
    expect(orphaned.metadata.generation).toBe(2);
    expect(deletes).toStrictEqual([]);
    const stale = agentReports('spoke1/argocd-guestbook', 2, 1);
    const staleBefore = world.writes.length;
    await world.settle(reconciler, KEY);
    expect(world.writes.slice(staleBefore)).toStrictEqual([]);
    expect(world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')).toStrictEqual(stale);
    expect(deletes).toStrictEqual([]);

    // Step 2: the agent observed Orphan: one delete with uid and resourceVersion preconditions.
    const observed = agentReports('spoke1/argocd-guestbook', 2, 2);
    const observedBefore = world.writes.length;
    await world.settle(reconciler, KEY);
    expect(world.writes.slice(observedBefore)).toStrictEqual([
      { verb: 'delete', resource: 'manifestworks', key: 'spoke1/argocd-guestbook' },
    ]);
    expect(deletes).toStrictEqual([
      {
        key: 'spoke1/argocd-guestbook',
        options: { uid: observed.metadata.uid, resourceVersion: observed.metadata.resourceVersion },
      },
    ]);
    expect(world.get('ManifestWork', 'spoke1/argocd-guestbook')).toBeUndefined();
    // The principal's status was never written over, nor the app patched at all.
    expect(
      world.writes.filter((write) => write.resource === 'applications' && world.writes.indexOf(write) >= writesBefore),
    ).toStrictEqual([]);
    expect(world.get<Application>('Application', KEY)!.status).toStrictEqual(PRINCIPAL_STATUS);
  });

  test('GIVEN a relabelled agent app still holding the cleanup finalizer WHEN it is deleted THEN the finalizer is held until its work is handed off orphan-first, and no Foreground work is deleted', async () => {
    world.put('Application', basicApp());
    await world.settle(reconciler, KEY);
    const deletes = recordDeletes();
    relabelAgent();
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([CLEANUP_FINALIZER]);
    world.remove('Application', KEY);
    await world.settle(reconciler, KEY);
    // The agent has not observed Orphan yet: the work stays and so does the finalizer (the app is terminating).
    expect(world.get<Application>('Application', KEY)!.metadata.deletionTimestamp).toBeDefined();
    expect(world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!.spec.deleteOption).toStrictEqual({
      propagationPolicy: 'Orphan',
    });
    expect(deletes).toStrictEqual([]);
    agentReports('spoke1/argocd-guestbook', 2, 2);
    await world.settle(reconciler, KEY);
    expect(world.get('ManifestWork', 'spoke1/argocd-guestbook')).toBeUndefined();
    expect(world.get('Application', KEY)).toBeUndefined();
    expect(deletes.map((entry) => entry.key)).toStrictEqual(['spoke1/argocd-guestbook']);
  });

  test("GIVEN an agent-model app WHEN a static work and another controller's work point at it THEN neither is touched", async () => {
    world.put('Application', agentApp());
    const payload = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'guestbook', namespace: NS },
    };
    const annotations = {
      'apps.open-cluster-management.io/hub-application-namespace': NS,
      'apps.open-cluster-management.io/hub-application-name': 'guestbook',
    };
    world.put('ManifestWork', {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: {
        name: 'static-guestbook',
        namespace: 'spoke1',
        labels: { 'app.kubernetes.io/managed-by': 'pullfleet', 'pullfleet.io/delivery': 'static' },
        annotations,
      },
      spec: { workload: { manifests: [payload] }, deleteOption: { propagationPolicy: 'Foreground' } },
    });
    world.put('ManifestWork', {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name: 'legacy-guestbook', namespace: 'spoke1', annotations },
      spec: { workload: { manifests: [payload] } },
    });
    await world.settle(reconciler, KEY);
    expect(world.writes).toStrictEqual([]);
  });
});
