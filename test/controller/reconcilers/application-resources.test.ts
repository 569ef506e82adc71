/**
 * The application reconciler carries the resource summary the work agent reports into the hub Application's
 * status (status.resources, status.summary.images), writes it once, and keeps scalar feedback flowing when the
 * agent rejects the rule or returns none.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import {
  createApplicationReconciler,
  SUMMARY_RULE_RECHECK_MS,
} from '../../../src/controller/reconcilers/application.js';
import type { ControllerConfig } from '../../../src/controller/runtime/config.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { MANAGED_CLUSTER_ANNOTATION, PULL_LABEL } from '../../../src/model/core/keys.js';
import { FeedbackScrape, type Application, type KubeObject, type ManifestWork } from '../../../src/model/core/types.js';
import { RESOURCE_SUMMARY_WARNING_CONDITION } from '../../../src/model/reconcile/resource-summary.js';
import { World } from '../../support/world.js';
import { WorkAgent, type ReportOptions } from '../../support/work-agent.js';
import { spokeApplication, type SpokeAppOptions } from '../../support/spoke-apps.js';

const NS = 'argocd';
const KEY = `${NS}/shop`;
const WORK_KEY = 'spoke1/argocd-shop';

function hubApp(): Application {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: 'shop',
      namespace: NS,
      labels: { [PULL_LABEL]: 'true' },
      annotations: { [MANAGED_CLUSTER_ANNOTATION]: 'spoke1', 'argocd.argoproj.io/skip-reconcile': 'true' },
    },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' },
      source: { repoURL: 'https://git.example/apps', path: 'shop' },
    },
  };
}

/**
 * A world with cluster spoke1 and the app `shop` on it, and the application reconciler; `server` shapes what the
 * API server refuses or keeps before anything is written.
 */
function worldWithApp(
  server: (world: World) => void = () => undefined,
  config: Partial<ControllerConfig> = {},
): { world: World; reconciler: Reconciler } {
  const world = new World();
  server(world);
  world.addCluster('spoke1', { clusterSet: 'prod' });
  const reconciler = world.reconciler(createApplicationReconciler, { relaxTenancy: true, ...config });
  world.put('Application', hubApp());
  return { world, reconciler };
}

describe('application reconciler and resource summaries', () => {
  let world: World;
  let reconciler: Reconciler;
  const agent = new WorkAgent(undefined as never, () => new Date('2026-03-01T12:00:00Z'));

  /** The work agent reports on the work as it is in the world (the spoke app, or no summary / an error). */
  function report(spoke: SpokeAppOptions | undefined, opts: ReportOptions = {}): void {
    const work = world.get<ManifestWork>('ManifestWork', WORK_KEY)!;
    const app = spoke ? spokeApplication(spoke) : undefined;
    const health = (app?.object.status as { health?: { status: string } } | undefined)?.health?.status ?? 'Healthy';
    work.status = agent.statusFor(
      work,
      { healthStatus: health, syncStatus: 'Synced', reconciledAt: '2026-03-01T11:59:00Z' },
      { ...(app ? { spokeApplication: app.object } : {}), ...opts },
    );
    world.put('ManifestWork', work);
  }

  /** The hub app's status as the API server holds it: every status patch written so far, merged. */
  function serverStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = {};
    for (const write of world.writes) {
      if (write.resource !== 'applications' || write.key !== KEY) continue;
      for (const [key, value] of Object.entries((write.body as { status?: Record<string, unknown> }).status ?? {})) {
        if (value === null) delete status[key];
        else status[key] = value;
      }
    }
    return status;
  }

  beforeEach(async () => {
    ({ world, reconciler } = worldWithApp());
    await world.settle(reconciler, KEY);
  });

  test('GIVEN the agent reports a summary WHEN reconciled THEN status.resources and summary.images carry it in one write, and a rerun writes nothing', async () => {
    report({ resources: 6, degraded: 1, images: ['nginx:1.25'] });
    const writes = world.writes.length;
    await world.settle(reconciler, KEY);
    expect(world.writes.length - writes).toBe(1);
    const status = serverStatus() as Application['status'] & Record<string, unknown>;
    expect((status.resources as Array<{ kind: string; name: string }>).map((r) => `${r.kind}/${r.name}`)).toStrictEqual(
      [
        'Deployment/component-0',
        'Service/component-1',
        'ConfigMap/component-2',
        'ServiceAccount/component-3',
        'Deployment/component-4',
        'Service/component-5',
      ],
    );
    expect(status.summary).toStrictEqual({ images: ['nginx:1.25'] });
    expect(status.health).toStrictEqual({ status: 'Degraded' });
    // The cache holds a digest, not the list; an unchanged summary is not written again.
    expect(world.get<Application>('Application', KEY)!.status!.resources).toBeUndefined();
    report({ resources: 6, degraded: 1, images: ['nginx:1.25'] });
    const again = world.writes.length;
    await world.settle(reconciler, KEY);
    expect(world.writes.length).toBe(again);
  });

  test('GIVEN a summary on the hub WHEN the agent starts rejecting the rule THEN scalar status still changes, the list stays, and a warning says why', async () => {
    report({ resources: 2, images: ['nginx:1.25'] });
    await world.settle(reconciler, KEY);
    report(undefined, { ruleError: 'no such key: resources' });
    const work = world.get<ManifestWork>('ManifestWork', WORK_KEY)!;
    work.status!.resourceStatus!.manifests![0].statusFeedback!.values![0] = {
      name: 'healthStatus',
      fieldValue: { type: 'String', string: 'Progressing' },
    };
    world.put('ManifestWork', work);
    await world.settle(reconciler, KEY);
    const status = serverStatus() as Application['status'] & Record<string, unknown>;
    expect(status.health).toStrictEqual({ status: 'Progressing' });
    expect(status.resources).toHaveLength(2);
    expect(status.conditions!.find((c) => c.type === RESOURCE_SUMMARY_WARNING_CONDITION)!.message).toContain(
      'could not build the resource summary (condition pullfleet.io/ResourceSummary): no such key: resources',
    );
  });
});

describe('application reconciler on a hub whose ManifestWork CRD drops conditionRules', () => {
  const withoutRules = (kindId: string, object: KubeObject): KubeObject => {
    if (kindId !== 'ManifestWork') return object;
    const work = structuredClone(object) as ManifestWork;
    for (const config of work.spec.manifestConfigs ?? [])
      delete (config as { conditionRules?: unknown }).conditionRules;
    return work;
  };
  const workWrites = (world: World) => world.writes.filter((w) => w.resource === 'manifestworks').length;

  const refusesRules = (kindId: string, object: KubeObject): string | undefined =>
    kindId === 'ManifestWork' &&
    ((object as ManifestWork).spec.manifestConfigs ?? []).some((config) => 'conditionRules' in config)
      ? `failed to create typed patch object (${objectKeyOf(object)}; work.open-cluster-management.io/v1, Kind=ManifestWork): .spec.manifestConfigs[0].conditionRules: field not declared in schema`
      : undefined;
  const objectKeyOf = (object: KubeObject) => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

  test('GIVEN a hub that refuses a server-side apply carrying the rule WHEN an app reconciles THEN its work is written without it at once, later works are too, and the app says why', async () => {
    const { world, reconciler } = worldWithApp((w) => (w.refusesApply = refusesRules));
    await world.settle(reconciler, KEY);
    const stored = world.get<ManifestWork>('ManifestWork', WORK_KEY)!;
    expect(stored.spec.manifestConfigs![0]).not.toHaveProperty('conditionRules');
    expect(stored.spec.manifestConfigs![0].feedbackRules).toBeDefined();
    // The refused apply and the one without the rule.
    expect(workWrites(world)).toBe(2);
    for (let i = 0; i < 3; i++) await world.settle(reconciler, KEY);
    expect(workWrites(world)).toBe(2);
    // A second app goes out without the rule in one write.
    world.put('Application', { ...hubApp(), metadata: { ...hubApp().metadata, name: 'cart' } });
    await world.settle(reconciler, `${NS}/cart`);
    expect(workWrites(world)).toBe(3);
    const warning = world
      .get<Application>('Application', KEY)!
      .status?.conditions?.find((c) => c.type === RESOURCE_SUMMARY_WARNING_CONDITION);
    expect(warning?.message).toContain("the hub's ManifestWork CRD has no manifestConfigs[].conditionRules");
  });

  test('GIVEN the hub stores works without the rule WHEN apps reconcile again and again THEN each work is written once, the apps say why, and after an hour one write tries the rule again', async () => {
    const { world, reconciler } = worldWithApp((w) => (w.storedAs = withoutRules));
    await world.settle(reconciler, KEY);
    expect(workWrites(world)).toBe(1);

    // Resyncs: the stored work is what the controller now asks for, so nothing is written again.
    for (let i = 0; i < 3; i++) await world.settle(reconciler, KEY);
    expect(workWrites(world)).toBe(1);
    const warning = world
      .get<Application>('Application', KEY)!
      .status?.conditions?.find((c) => c.type === RESOURCE_SUMMARY_WARNING_CONDITION);
    expect(warning?.message).toContain("the hub's ManifestWork CRD has no manifestConfigs[].conditionRules");
    expect(warning?.message).toContain("upgrade the hub's cluster manager");

    // An hour later the rule is tried once more; the hub still drops it, so that one write is all.
    world.clock = new Date(world.clock.getTime() + SUMMARY_RULE_RECHECK_MS + 1000);
    for (let i = 0; i < 3; i++) await world.settle(reconciler, KEY);
    expect(workWrites(world)).toBe(2);

    // The hub's cluster manager is upgraded: the next try keeps the rule, and the warning goes.
    world.storedAs = undefined;
    world.clock = new Date(world.clock.getTime() + SUMMARY_RULE_RECHECK_MS + 1000);
    for (let i = 0; i < 3; i++) await world.settle(reconciler, KEY);
    expect(workWrites(world)).toBe(3);
    const stored = world.get<ManifestWork>('ManifestWork', WORK_KEY)!;
    expect(stored.spec.manifestConfigs![0]).toHaveProperty('conditionRules');
    const after = world.get<Application>('Application', KEY)!.status?.conditions ?? [];
    expect(after.some((c) => c.message?.includes('has no manifestConfigs[].conditionRules'))).toBe(false);
  });
});

describe('application reconciler and a CRD older than another field of the work', () => {
  test('GIVEN a hub that refuses works carrying feedbackScrapeType (the controller set to Watch) WHEN an app reconciles THEN it gets a DeliveryError naming the field and the fix, and no reconcile fails', async () => {
    const { world, reconciler } = worldWithApp(
      (w) =>
        (w.refusesApply = (kindId, object) =>
          kindId === 'ManifestWork' &&
          ((object as ManifestWork).spec.manifestConfigs ?? []).some((config) => 'feedbackScrapeType' in config)
            ? 'failed to create typed patch object (spoke1/argocd-shop; work.open-cluster-management.io/v1, Kind=ManifestWork): .spec.manifestConfigs[0].feedbackScrapeType: field not declared in schema'
            : undefined),
      { feedbackScrapeType: FeedbackScrape.WATCH },
    );
    // Each reconcile ends normally (no error, so no retry with backoff): the next try comes with the next
    // change or resync.
    for (let i = 0; i < 3; i++) await reconciler.reconcile(KEY, { enqueuedAt: Date.now() });
    expect(world.get('ManifestWork', WORK_KEY)).toBeUndefined();
    const error = world
      .get<Application>('Application', KEY)!
      .status?.conditions?.find((c) => c.type === 'DeliveryError');
    expect(error?.message).toContain('feedbackScrapeType: field not declared in schema');
    expect(error?.message).toContain("upgrade the hub's cluster manager");
  });
});
