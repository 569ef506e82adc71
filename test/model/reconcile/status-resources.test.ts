import { describe, expect, test } from '@jest/globals';
import { type Application, type ManifestWork } from '../../../src/model/core/types.js';
import { buildManifestWork } from '../../../src/model/delivery/manifestwork.js';
import {
  RESOURCE_LIST_TRUNCATED_CONDITION,
  RESOURCE_SUMMARY_HEADER,
  RESOURCE_SUMMARY_WARNING_CONDITION,
  RESOURCES_DIGEST_FIELD,
  resourcesDigest,
} from '../../../src/model/reconcile/resource-summary.js';
import { computeApplicationStatus } from '../../../src/model/reconcile/status.js';
import { WorkAgent, type ReportOptions } from '../../support/work-agent.js';
import { spokeApplication, type SpokeAppOptions } from '../../support/spoke-apps.js';
import { pullApplication } from '../../support/world.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const agent = new WorkAgent(undefined as never, () => NOW);

function hubApp(status?: Application['status']): Application {
  const app = pullApplication({
    name: 'shop',
    spec: { project: 'default', destination: { server: 'https://kubernetes.default.svc', namespace: 'shop' } },
  });
  return status ? { ...app, status } : app;
}

/** The app's work as the agent reports it: feedback, and the rule evaluated against the spoke app (unless told). */
function reported(spoke: SpokeAppOptions | undefined, opts: ReportOptions = {}): ManifestWork {
  const work = buildManifestWork(hubApp());
  work.metadata.generation = 1;
  const app = spoke ? spokeApplication(spoke) : undefined;
  work.status = agent.statusFor(
    work,
    {
      healthStatus: (app?.object.status as { health: { status: string } } | undefined)?.health.status ?? 'Healthy',
      syncStatus: 'Synced',
    },
    { ...(app ? { spokeApplication: app.object } : {}), ...opts },
  );
  return work;
}

function statusFrom(app: Application, work: ManifestWork) {
  return computeApplicationStatus({ app, work, now: NOW, staleAfterMs: 0 });
}

/** The hub app after a patch is merged (status fields only; null removes). */
function applied(app: Application, patch: { status: Record<string, unknown> } | undefined): Application {
  if (!patch) return app;
  const status: Record<string, unknown> = { ...(app.status ?? {}) };
  for (const [key, value] of Object.entries(patch.status)) {
    if (value === null) delete status[key];
    else if (key === 'summary') status.summary = { ...(status.summary as object), ...(value as object) };
    else status[key] = value;
  }
  return { ...app, status: status };
}

describe('resource summaries in the hub Application status', () => {
  test('GIVEN a reported summary WHEN the status is computed THEN status.resources and summary.images carry it, problems first', () => {
    const { patch } = statusFrom(
      hubApp(),
      reported({ resources: 4, degraded: 1, outOfSync: 1, images: ['nginx:1.25'] }),
    );
    const status = patch!.status as { resources: Array<Record<string, unknown>>; summary: unknown };
    expect(
      status.resources.map((r) => [r.kind, r.name, (r.health as { status: string }).status, r.status]),
    ).toStrictEqual([
      ['Deployment', 'component-0', 'Degraded', 'Synced'],
      ['Service', 'component-1', 'Healthy', 'OutOfSync'],
      ['ConfigMap', 'component-2', 'Healthy', 'Synced'],
      ['ServiceAccount', 'component-3', 'Healthy', 'Synced'],
    ]);
    expect(status.resources[0]).toStrictEqual({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      namespace: 'shop',
      name: 'component-0',
      status: 'Synced',
      health: { status: 'Degraded', message: 'Deployment "component-0" exceeded its progress deadline' },
    });
    expect(status.summary).toStrictEqual({ images: ['nginx:1.25'] });
  });

  test('GIVEN the list already written WHEN nothing changed THEN no patch, from the full status or from the digest the cache keeps', () => {
    const work = reported({ resources: 4, degraded: 1, images: ['nginx:1.25'] });
    const first = statusFrom(hubApp(), work);
    const written = applied(hubApp(), first.patch);
    expect(statusFrom(written, work).patch).toBeUndefined();
    const { resources, summary, ...rest } = written.status!;
    const cached = hubApp({
      ...rest,
      [RESOURCES_DIGEST_FIELD]: resourcesDigest(resources, (summary as { images: unknown }).images),
    });
    expect(statusFrom(cached, work).patch).toBeUndefined();
  });

  test('GIVEN a resource turns Degraded WHEN the status is computed THEN only the list changes', () => {
    const before = applied(hubApp(), statusFrom(hubApp(), reported({ resources: 4 })).patch);
    const { patch } = statusFrom(before, reported({ resources: 4, degraded: 1 }));
    expect(Object.keys(patch!.status).sort()).toStrictEqual(['health', 'resources', 'summary']);
  });

  test('GIVEN summaries turned off WHEN an OCM 1.0 agent still carries the last summary THEN the list the hub showed goes, and nothing reads the stale one', () => {
    const work = reported({ resources: 4, degraded: 1, images: ['nginx:1.25'] });
    const before = applied(hubApp(), statusFrom(hubApp(), work).patch);
    expect(before.status!.resources).toHaveLength(4);
    // the rule is gone from the work; the agent's status (conditions of the removed rule included) is unchanged
    delete (work.spec.manifestConfigs![0] as { conditionRules?: unknown }).conditionRules;
    const { patch, desired } = statusFrom(before, work);
    expect(patch!.status.resources).toBeNull();
    expect(patch!.status.summary).toStrictEqual({ images: null });
    expect(desired.conditions ?? []).toStrictEqual([]);
    const after = applied(before, patch);
    expect(after.status).not.toHaveProperty('resources');
    expect(statusFrom(after, work).patch).toBeUndefined();
  });

  test('GIVEN an agent that rejects the rule THEN a warning names its message, and the last list stays', () => {
    const before = applied(hubApp(), statusFrom(hubApp(), reported({ resources: 2 })).patch);
    const { patch, desired } = statusFrom(
      before,
      reported(undefined, { ruleError: "ERROR: <input>:1:1: undeclared reference to 'join'" }),
    );
    expect(patch!.status.resources).toBeUndefined();
    expect(desired.resources).toBeUndefined();
    const warning = desired.conditions!.find((c) => c.type === RESOURCE_SUMMARY_WARNING_CONDITION)!;
    expect(warning.message).toBe(
      "the work agent on cluster spoke1 could not build the resource summary (condition pullfleet.io/ResourceSummary): ERROR: <input>:1:1: undeclared reference to 'join'; status.resources and status.summary.images keep their last values, and sync, health and operation still come through status feedback",
    );
  });

  test('GIVEN an agent that returns no summary while it reports feedback THEN a warning says what it needs; scalar status still flows', () => {
    const { desired } = statusFrom(hubApp(), reported(undefined));
    expect(desired.sync).toStrictEqual({ status: 'Synced' });
    expect(desired.health).toStrictEqual({ status: 'Healthy' });
    expect(desired.conditions!.map((c) => c.type)).toStrictEqual([RESOURCE_SUMMARY_WARNING_CONDITION]);
    expect(desired.conditions![0].message).toContain('work agents before OCM 1.0 do not evaluate conditionRules');
  });

  test('GIVEN the stored conditions with their keys in another order (the server returns them sorted) THEN no patch rewrites them', () => {
    const warned = applied(hubApp(), statusFrom(hubApp(), reported(undefined)).patch);
    const sortedKeys = (o: object) =>
      Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const reordered = {
      ...warned,
      status: { ...warned.status, conditions: warned.status!.conditions!.map(sortedKeys) },
    };
    expect(Object.keys(reordered.status.conditions[0])).not.toStrictEqual(Object.keys(warned.status!.conditions![0]));
    const { patch } = statusFrom(reordered as Application, reported(undefined));
    expect(patch?.status.conditions).toBeUndefined();
  });

  test('GIVEN a summary again after a warning THEN the warning goes', () => {
    const warned = applied(hubApp(), statusFrom(hubApp(), reported(undefined)).patch);
    expect(warned.status!.conditions).toHaveLength(1);
    const { patch } = statusFrom(warned, reported({ resources: 2 }));
    expect(patch!.status.conditions).toBeNull();
  });

  test('GIVEN a degraded app on a spoke whose Argo CD keeps no per-resource health THEN a warning says how to get it', () => {
    const { desired } = statusFrom(hubApp(), reported({ resources: 3, degraded: 1, appTree: true }));
    expect(desired.conditions!.find((c) => c.type === RESOURCE_SUMMARY_WARNING_CONDITION)!.message).toContain(
      'set controller.resource.health.persist: "true" in argocd-cmd-params-cm there',
    );
    const healthy = statusFrom(hubApp(), reported({ resources: 3, appTree: true })).desired;
    expect(healthy.conditions).toStrictEqual([]);
  });

  test('GIVEN a summary cut for size THEN a condition says how many more resources there are and which are problems', () => {
    const { desired } = statusFrom(hubApp(), reported({ resources: 1000, degraded: 240 }));
    const truncated = desired.conditions!.find((c) => c.type === RESOURCE_LIST_TRUNCATED_CONDITION)!;
    const listed = (desired.resources as unknown[]).length;
    expect(truncated.message).toMatch(
      new RegExp(
        `^status\\.resources lists ${listed} of 1000 resources, problems first .*: and ${1000 - listed} more$`,
      ),
    );
    // A summary cut before all its Degraded resources fit (as from an app of several thousand resources).
    const work = reported({ resources: 1 });
    const condition = work.status!.resourceStatus!.manifests![0].conditions!.find(
      (c) => c.reason === 'ConditionRuleEvaluated',
    )!;
    condition.message = `${RESOURCE_SUMMARY_HEADER} resources=4000 Healthy=3000 Degraded=1000 OutOfSync=0 images=0\nimages \nD- apps/v1/Deployment/shop/a\nD- apps/v1/Deployment/shop/b\nD- apps/v1/Depl`;
    const { desired: many } = statusFrom(hubApp(), work);
    expect(many.conditions!.find((c) => c.type === RESOURCE_LIST_TRUNCATED_CONDITION)!.message).toMatch(
      /: and 3998 more, 998 of them Degraded$/,
    );
  });
});
