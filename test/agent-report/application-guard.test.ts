import { beforeEach, describe, expect, test } from '@jest/globals';
import { AGENT_PULL_CONFLICT_CONDITION, createApplicationReconciler } from '../../src/controller/application-reconciler.js';
import type { Reconciler } from '../../src/controller/reconciler.js';
import {
  CLEANUP_FINALIZER,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  REPORT_DELIVERY_MODEL_LABEL,
  type Application,
  type ApplicationStatus,
  type ManifestWork,
} from '../../src/model/index.js';
import { World } from '../controller/world.js';

const NS = 'argocd';
const KEY = `${NS}/guestbook`;
/** The status the principal mirrored from the agent: the controller must leave it exactly as it is. */
const PRINCIPAL_STATUS: ApplicationStatus = { sync: { status: 'Synced', revision: 'abc123' }, health: { status: 'Healthy' }, reconciledAt: '2026-03-01T11:59:00Z' };

function agentApp(options: { model?: string; pull?: boolean } = {}): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'guestbook',
      namespace: NS,
      labels: { [REPORT_DELIVERY_MODEL_LABEL]: options.model ?? 'agent-managed', ...(options.pull ? { [PULL_LABEL]: 'true' } : {}) },
      annotations: options.pull ? { [MANAGED_CLUSTER_ANNOTATION]: 'spoke1' } : {},
    },
    spec: { project: 'default', destination: { name: 'spoke1', namespace: 'guestbook' }, source: { repoURL: 'https://git.example/apps', path: 'guestbook' } },
    status: structuredClone(PRINCIPAL_STATUS),
  };
}

function basicApp(): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'guestbook', namespace: NS, labels: { [PULL_LABEL]: 'true' }, annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'spoke1', 'argocd.argoproj.io/skip-reconcile': 'true' } },
    spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' }, source: { repoURL: 'https://git.example/apps', path: 'guestbook' } },
  };
}

describe('application reconciler and agent-model Applications', () => {
  let world: World;
  let reconciler: Reconciler;

  beforeEach(() => {
    world = new World();
    world.put('ManagedCluster', { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster', metadata: { name: 'spoke1', labels: { 'cluster.open-cluster-management.io/clusterset': 'prod' } } });
    world.put('ManagedClusterSet', { apiVersion: 'cluster.open-cluster-management.io/v1beta2', kind: 'ManagedClusterSet', metadata: { name: 'prod' }, spec: { clusterSelector: { selectorType: 'ExclusiveClusterSetLabel' } } });
    world.put('ManagedClusterSetBinding', { apiVersion: 'cluster.open-cluster-management.io/v1beta2', kind: 'ManagedClusterSetBinding', metadata: { name: 'prod', namespace: NS }, spec: { clusterSet: 'prod' } });
    reconciler = world.reconciler(createApplicationReconciler);
  });

  test.each(['agent-managed', 'agent-autonomous'])('GIVEN a %s hub Application WHEN reconciled THEN nothing is written: no work, no finalizer, status untouched', async (model) => {
    world.put('Application', agentApp({ model }));
    await world.settle(reconciler, KEY);
    expect(world.writes).toStrictEqual([]);
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
    expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toBeUndefined();
  });

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
      message: `the Application is labelled ${REPORT_DELIVERY_MODEL_LABEL}=agent-managed and also ${PULL_LABEL}: the argocd-agent principal delivers agent-model Applications, so pullfleet does not wrap it into a ManifestWork; remove the ${PULL_LABEL} label, or set ${REPORT_DELIVERY_MODEL_LABEL} to basic to deliver it through a ManifestWork`,
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
    expect(world.writes.slice(before)).toStrictEqual([{ verb: 'patch', resource: 'applications', key: KEY, body: { status: { conditions: null } } }]);
    expect(world.get<Application>('Application', KEY)!.status?.conditions).toBeUndefined();
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
  });

  test('GIVEN the conflict condition WHEN the app moves back to basic delivery THEN it is delivered through a work and the condition goes', async () => {
    world.put('Application', agentApp({ pull: true }));
    await world.settle(reconciler, KEY);
    const current = world.get<Application>('Application', KEY)!;
    expect(current.status?.conditions?.map((c) => c.type)).toStrictEqual([AGENT_PULL_CONFLICT_CONDITION]);
    current.metadata.labels![REPORT_DELIVERY_MODEL_LABEL] = 'basic';
    current.metadata.annotations!['argocd.argoproj.io/skip-reconcile'] = 'true';
    current.spec.destination = { server: 'https://kubernetes.default.svc', namespace: 'guestbook' };
    world.put('Application', current);
    await world.settle(reconciler, KEY);
    expect(world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')).toBeDefined();
    expect((world.get<Application>('Application', KEY)!.status?.conditions ?? []).map((c) => c.type)).not.toContain(AGENT_PULL_CONFLICT_CONDITION);
  });

  test('GIVEN a basic app with its work WHEN it is relabelled agent-managed THEN the work stays exactly as it was and the status is never written again', async () => {
    world.put('Application', basicApp());
    await world.settle(reconciler, KEY);
    const work = world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!;
    expect(work).toBeDefined();
    const current = world.get<Application>('Application', KEY)!;
    delete current.metadata.labels![PULL_LABEL];
    current.metadata.labels![REPORT_DELIVERY_MODEL_LABEL] = 'agent-managed';
    current.spec.destination = { name: 'spoke1', namespace: 'guestbook' };
    current.status = structuredClone(PRINCIPAL_STATUS);
    world.put('Application', current);
    const writesBefore = world.writes.length;
    await world.settle(reconciler, KEY);
    expect(world.writes.slice(writesBefore)).toStrictEqual([]);
    expect(world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')).toStrictEqual(work);
    expect(world.get<Application>('Application', KEY)!.status).toStrictEqual(PRINCIPAL_STATUS);
  });

  test('GIVEN a relabelled agent app still holding the cleanup finalizer WHEN it is deleted THEN the finalizer is released and the work is kept', async () => {
    world.put('Application', basicApp());
    await world.settle(reconciler, KEY);
    const current = world.get<Application>('Application', KEY)!;
    delete current.metadata.labels![PULL_LABEL];
    current.metadata.labels![REPORT_DELIVERY_MODEL_LABEL] = 'agent-managed';
    world.put('Application', current);
    await world.settle(reconciler, KEY);
    expect(world.get<Application>('Application', KEY)!.metadata.finalizers).toStrictEqual([CLEANUP_FINALIZER]);
    world.remove('Application', KEY);
    await world.settle(reconciler, KEY);
    expect(world.get('Application', KEY)).toBeUndefined();
    const work = world.get<ManifestWork>('ManifestWork', 'spoke1/argocd-guestbook')!;
    expect(work).toBeDefined();
    expect(work.metadata.deletionTimestamp).toBeUndefined();
    expect(world.writes.filter((write) => write.verb === 'delete')).toStrictEqual([]);
  });
});
