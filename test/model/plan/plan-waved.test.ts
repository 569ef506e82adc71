/**
 * `pullfleet plan` for waved static apps: synth renders their hub Applications and no work, and the hub
 * controller deletes a work at runtime when its hub Application goes (or rewrites it when the app changes).
 * Plan lists those deletions with the others on spokes, counts them, gates them and puts them in the JSON.
 * test/envtest/plan-waved.test.ts checks the same edits against the shipped controller on a real server.
 */
import { describe, expect, test } from '@jest/globals';
import { SPOKE_APP_NAMESPACE_ANNOTATION, PULL_LABEL } from '../../../src/model/core/keys.js';
import { acknowledge, formatPlan, planFleet, planJson } from '../../../src/model/plan/plan.js';
import { DELIVERY_MODEL_LABEL } from '../../../src/model/delivery/delivery-model.js';
import type { PlannedObject, PlanSide } from '../../../src/model/plan/controller-deletions.js';
import { wavedOutput } from '../../support/plan-waved-fleet.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `side` with the hub Application `name` edited by `edit` (as an escape hatch would). */
function withHubApp(side: PlanSide, name: string, edit: (app: Obj) => Obj): PlanSide {
  return {
    ...side,
    objects: side.objects.map((o): PlannedObject =>
      o.object.kind === 'Application' && o.object.metadata?.name === name
        ? { ...o, object: edit(structuredClone(o.object)) }
        : o,
    ),
  };
}

describe('plan lists the works the hub controller deletes for waved static apps', () => {
  test('GIVEN a waved app on s1..s3 WHEN s3 is dropped THEN its work is one deletion on spoke s3, and its hub Application is not "removed, nothing deleted"', () => {
    const plan = planFleet(wavedOutput(), wavedOutput({ targets: ['s1', 's2'] }));

    expect(plan.spokeDeletions).toStrictEqual([
      {
        id: 'hub/s3/argocd-web-s3',
        hub: 'hub',
        cluster: 's3',
        work: 'argocd-web-s3',
        file: 'hub/hub/applications.yaml',
        policy: 'Foreground',
        reason: 'work removed',
        removals: [
          {
            group: 'argoproj.io',
            kind: 'Application',
            namespace: 'argocd',
            name: 'web-s3',
            prunesWorkload: false,
            effect: 'Application argocd/web-s3 (its workload stays: no resources finalizer)',
          },
        ],
        prunesWorkload: false,
        runtime: {
          application: 'argocd/web-s3',
          app: 'web',
          cause: 'hub Application argocd/web-s3 of waved app web removed',
        },
      },
    ]);
    expect(plan.runtimeDeletions).toStrictEqual([]);
    expect(plan.removed.filter((c) => c.kind === 'Application')).toStrictEqual([]);
  });

  test('GIVEN a waved app on s1..s3 WHEN it is renamed THEN every work of the old app is a deletion, counted in the summary', () => {
    const plan = planFleet(wavedOutput(), wavedOutput({ app: 'shop' }));

    expect(plan.spokeDeletions.map((d) => [d.id, d.reason, d.runtime?.cause])).toStrictEqual([
      ['hub/s1/argocd-web-s1', 'work removed', 'hub Application argocd/web-s1 of waved app web removed'],
      ['hub/s2/argocd-web-s2', 'work removed', 'hub Application argocd/web-s2 of waved app web removed'],
      ['hub/s3/argocd-web-s3', 'work removed', 'hub Application argocd/web-s3 of waved app web removed'],
    ]);
    const text = formatPlan(plan);
    expect(text).toContain(
      '  - hub/s1/argocd-web-s1: hub Application argocd/web-s1 of waved app web removed: the hub controller deletes ManifestWork s1/argocd-web-s1 at runtime, at once, whatever the waves (deleteOption Foreground), deleting Application argocd/web-s1 (its workload stays: no resources finalizer)  (hub/hub/applications.yaml)\n',
    );
    expect(text).not.toContain('Application argocd/web-s1  (hub/hub/applications.yaml)');
    expect(text).toMatch(
      /\nsummary: 3 deletions on spokes, 0 runtime deletions, 1 other removals, 3 changed, 4 added\n$/,
    );
  });

  test('GIVEN the renamed app WHEN deletions are gated THEN each old work must be acknowledged, and the JSON counts and lists them', () => {
    const plan = planFleet(wavedOutput(), wavedOutput({ app: 'shop' }));

    expect(acknowledge(plan, []).unacknowledged).toStrictEqual([
      'hub/s1/argocd-web-s1',
      'hub/s2/argocd-web-s2',
      'hub/s3/argocd-web-s3',
    ]);
    const ack = acknowledge(plan, ['hub/s1/argocd-web-s1', 'hub/s2/*']);
    expect(ack.unacknowledged).toStrictEqual(['hub/s3/argocd-web-s3']);
    const json = planJson(plan, { acknowledgement: ack });
    expect(json.counts).toMatchObject({ spokeDeletions: 3, runtimeDeletions: 0, unacknowledgedDeletions: 1 });
    expect((json.spokeDeletions as Obj[]).map((d) => [d.id, d.acknowledged, d.runtime.application])).toStrictEqual([
      ['hub/s1/argocd-web-s1', true, 'argocd/web-s1'],
      ['hub/s2/argocd-web-s2', true, 'argocd/web-s2'],
      ['hub/s3/argocd-web-s3', false, 'argocd/web-s3'],
    ]);
  });

  test('GIVEN a waved app with pruneOnDelete WHEN a spoke is dropped THEN the deletion says it prunes the workload', () => {
    const plan = planFleet(
      wavedOutput({ pruneOnDelete: true }),
      wavedOutput({ pruneOnDelete: true, targets: ['s1', 's3'] }),
    );

    expect(plan.spokeDeletions.map((d) => [d.id, d.prunesWorkload, d.removals.map((r) => r.effect)])).toStrictEqual([
      ['hub/s2/argocd-web-s2', true, ['Application argocd/web-s2 (prunes its workload: resources finalizer)']],
    ]);
  });

  test('GIVEN a waved app WHEN its revision changes or a spoke joins THEN nothing is deleted', () => {
    const revision = planFleet(wavedOutput(), wavedOutput({ revision: 'v2' }));
    const join = planFleet(wavedOutput({ targets: ['s1', 's2'] }), wavedOutput());

    expect(revision.spokeDeletions).toStrictEqual([]);
    expect(join.spokeDeletions).toStrictEqual([]);
    expect(revision.changed.filter((c) => c.kind === 'Application')).toHaveLength(3);
  });

  test('GIVEN a waved app WHEN its rollout is dropped THEN the rendered works take the controller works over and nothing is deleted', () => {
    const plan = planFleet(wavedOutput(), wavedOutput({ waved: false }));

    expect(plan.spokeDeletions).toStrictEqual([]);
    expect(plan.added.filter((c) => c.kind === 'ManifestWork').map((c) => `${c.namespace}/${c.name}`)).toStrictEqual([
      's1/argocd-web-s1',
      's2/argocd-web-s2',
      's3/argocd-web-s3',
    ]);
  });

  test('GIVEN a waved hub Application WHEN its spoke Application namespace changes THEN the old spoke Application is a deletion of the rewrite', () => {
    const before = wavedOutput();
    const after = withHubApp(wavedOutput(), 'web-s2', (app) => ({
      ...app,
      metadata: {
        ...app.metadata,
        annotations: { ...app.metadata.annotations, [SPOKE_APP_NAMESPACE_ANNOTATION]: 'apps' },
      },
    }));

    const plan = planFleet(before, after);

    expect(plan.spokeDeletions.map((d) => [d.id, d.reason, d.policy, d.runtime?.cause])).toStrictEqual([
      [
        'hub/s2/argocd-web-s2/argoproj.io/Application/argocd/web-s2',
        'manifest dropped',
        'Foreground',
        'hub Application argocd/web-s2 changed: the hub controller rewrites its work',
      ],
    ]);
    expect(formatPlan(plan)).toContain(
      'the hub controller rewrites ManifestWork s2/argocd-web-s2 without it at runtime (deleteOption Foreground), deleting Application argocd/web-s2',
    );
  });

  test('GIVEN a waved hub Application WHEN it turns agent-model THEN the controller hands its work off orphan-first and plan lists no deletion', () => {
    const before = wavedOutput();
    const after = withHubApp(wavedOutput(), 'web-s1', (app) => {
      const { [PULL_LABEL]: _pull, ...labels } = app.metadata.labels as Record<string, string>;
      return {
        ...app,
        metadata: { ...app.metadata, labels: { ...labels, [DELIVERY_MODEL_LABEL]: 'agent-managed' } },
      };
    });

    expect(planFleet(before, after).spokeDeletions).toStrictEqual([]);
  });

  test('GIVEN a waved hub Application WHEN its pull label goes THEN the controller deletes its work', () => {
    const before = wavedOutput();
    const after = withHubApp(wavedOutput(), 'web-s1', (app) => ({
      ...app,
      metadata: { ...app.metadata, labels: { ...app.metadata.labels, [PULL_LABEL]: 'false' } },
    }));

    const plan = planFleet(before, after);

    expect(plan.spokeDeletions.map((d) => [d.id, d.reason, d.runtime?.cause])).toStrictEqual([
      ['hub/s1/argocd-web-s1', 'work removed', 'hub Application argocd/web-s1 no longer carries the pull label'],
    ]);
  });
});
