/**
 * `pullfleet plan` in the pure model: deletion semantics by deleteOption, runtime deletions of
 * ApplicationSet-generated works, field diffs, first synth, acknowledgements. Fleets come from the
 * fixture in test/support/plan-fleet.ts, never from the repository's fleet.config.ts.
 */
import { describe, expect, test } from '@jest/globals';
import { resourceOfKind } from '../../../src/model/plan/deletion.js';
import { diffFields, formatFieldChange } from '../../../src/model/plan/diff.js';
import { acknowledge, formatPlan, parseAcknowledgements, planFleet } from '../../../src/model/plan/plan.js';
import { type PlannedObject, type PlanSide } from '../../../src/model/plan/controller-deletions.js';
import { output } from '../../support/plan-fleet.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const work = (name: string, cluster: string, deleteOption: Obj | undefined, manifests: Obj[]): PlannedObject => ({
  file: `hub/hub/works/${cluster}.yaml`,
  object: {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name, namespace: cluster },
    spec: { workload: { manifests }, ...(deleteOption ? { deleteOption } : {}) },
  } as never,
});
const spokeApp = (name: string, finalizer = false): Obj => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: {
    name,
    namespace: 'argocd',
    ...(finalizer ? { finalizers: ['resources-finalizer.argocd.argoproj.io'] } : {}),
  },
});
const namespace = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const side = (...objects: PlannedObject[]): PlanSide => ({ objects });
const keep = (): PlannedObject => ({
  file: 'hub/hub/hub.yaml',
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept', namespace: 'argocd' } },
});

describe('deletion semantics follow the deleteOption, not the kind', () => {
  const cases: Array<[string, Obj | undefined, string[]]> = [
    [
      'no deleteOption (Foreground)',
      undefined,
      ['Namespace web and everything in it', 'Application argocd/web-east (prunes its workload: resources finalizer)'],
    ],
    [
      'Foreground',
      { propagationPolicy: 'Foreground' },
      ['Namespace web and everything in it', 'Application argocd/web-east (prunes its workload: resources finalizer)'],
    ],
    [
      'Background',
      { propagationPolicy: 'Background' },
      ['Namespace web and everything in it', 'Application argocd/web-east (prunes its workload: resources finalizer)'],
    ],
    [
      'SelectivelyOrphan orphaning the namespace',
      {
        propagationPolicy: 'SelectivelyOrphan',
        selectivelyOrphans: { orphaningRules: [{ group: '', resource: 'namespaces', name: 'web' }] },
      },
      ['Application argocd/web-east (prunes its workload: resources finalizer)'],
    ],
  ];
  test.each(cases)(
    'GIVEN a removed work with %s THEN exactly its non-orphaned manifests are deletions on the spoke',
    (_, option, effects) => {
      const plan = planFleet(
        side(keep(), work('argocd-web-east', 'east', option, [namespace('web'), spokeApp('web-east', true)])),
        side(keep()),
      );
      expect(plan.spokeDeletions).toHaveLength(1);
      expect(plan.spokeDeletions[0].id).toBe('hub/east/argocd-web-east');
      expect(plan.spokeDeletions[0].removals.map((r) => r.effect)).toStrictEqual(effects);
      expect(plan.removed).toStrictEqual([]);
    },
  );

  test('GIVEN a removed Orphan work (the bootstrap) THEN it is not a deletion on the spoke and says its resources stay', () => {
    const plan = planFleet(
      side(
        keep(),
        work('pullfleet-bootstrap', 'east', { propagationPolicy: 'Orphan' }, [namespace('web'), namespace('podinfo')]),
      ),
      side(keep()),
    );
    expect(plan.spokeDeletions).toStrictEqual([]);
    expect(plan.removed.map((c) => [c.name, c.note])).toStrictEqual([
      ['pullfleet-bootstrap', 'deleteOption Orphan: its 2 resources stay on the spoke'],
    ]);
    expect(acknowledge(plan, []).unacknowledged).toStrictEqual([]);
  });

  test('GIVEN a removed spoke in a rendered fleet THEN its static work is a deletion and its Orphan bootstrap work is not', () => {
    const before = output({ appSet: false, staticApp: true });
    const after = output({ appSet: false, staticApp: true, spokes: [{ name: 'east', labels: { env: 'prod' } }] });
    const plan = planFleet(before, after);
    expect(plan.spokeDeletions.map((d) => [d.id, d.policy, d.prunesWorkload])).toStrictEqual([
      ['hub/west/argocd-web-west', 'Foreground', false],
    ]);
    expect(plan.spokeDeletions[0].removals.map((r) => r.effect)).toStrictEqual([
      'Application argocd/web-west (its workload stays: no resources finalizer)',
    ]);
    const bootstrap = plan.removed.find((c) => c.kind === 'ManifestWork');
    expect(bootstrap).toMatchObject({ namespace: 'west', name: 'pullfleet-bootstrap' });
    expect(bootstrap!.note).toMatch(/^deleteOption Orphan: its \d+ resources stay on the spoke$/);
  });

  test('GIVEN a manifest dropped from a Foreground work that stays THEN it is a deletion; dropped from an Orphan work it is a note', () => {
    const foreground = planFleet(
      side(work('w', 'east', undefined, [namespace('a'), spokeApp('x')])),
      side(work('w', 'east', undefined, [spokeApp('x')])),
    );
    expect(foreground.spokeDeletions.map((d) => [d.id, d.reason])).toStrictEqual([
      ['hub/east/w/Namespace/a', 'manifest dropped'],
    ]);
    const orphan = planFleet(
      side(work('w', 'east', { propagationPolicy: 'Orphan' }, [namespace('a'), spokeApp('x')])),
      side(work('w', 'east', { propagationPolicy: 'Orphan' }, [spokeApp('x')])),
    );
    expect(orphan.spokeDeletions).toStrictEqual([]);
    expect(orphan.changed[0].note).toBe('deleteOption Orphan: Namespace a dropped from the work but left on the spoke');
  });

  test('kinds map to the resource names orphaning rules use', () => {
    expect(
      ['Namespace', 'NetworkPolicy', 'Ingress', 'ClusterRoleBinding', 'Application'].map(resourceOfKind),
    ).toStrictEqual(['namespaces', 'networkpolicies', 'ingresses', 'clusterrolebindings', 'applications']);
  });
});

describe('runtime deletions of ApplicationSet-generated works', () => {
  test('GIVEN a removed PullApplicationSet THEN every generated app and work is a runtime deletion that blocks', () => {
    const plan = planFleet(output({ appSetPrune: true }), output({ appSet: false }));
    expect(plan.runtimeDeletions.map((d) => d.text)).toStrictEqual([
      'ApplicationSet podinfo removed: its app east-podinfo and its work argocd-east-podinfo on spoke east will be deleted at runtime (prunes its workload: resources finalizer)',
      'ApplicationSet podinfo removed: its app west-podinfo and its work argocd-west-podinfo on spoke west will be deleted at runtime (prunes its workload: resources finalizer)',
    ]);
    expect(acknowledge(plan, []).unacknowledged).toStrictEqual([
      'hub/east/argocd-east-podinfo',
      'hub/west/argocd-west-podinfo',
    ]);
    expect(formatPlan(plan)).toContain(
      'RUNTIME DELETIONS (2): the hub deletes these ApplicationSet-generated apps and their works once the change is applied\n',
    );
  });

  test('GIVEN a spoke whose label stops matching THEN it leaves the placement with the label named', () => {
    const plan = planFleet(
      output(),
      output({
        spokes: [
          { name: 'east', labels: {} },
          { name: 'west', labels: { env: 'prod' } },
        ],
      }),
    );
    expect(plan.runtimeDeletions.map((d) => [d.id, d.text])).toStrictEqual([
      [
        'hub/east/argocd-east-podinfo',
        "spoke east leaves placement all-prod (label env=prod removed): ApplicationSet podinfo's app east-podinfo and its work argocd-east-podinfo will be deleted at runtime (its workload stays: no resources finalizer)",
      ],
    ]);
  });

  test('GIVEN a spoke that leaves the cluster set THEN the runtime deletion names the set', () => {
    const plan = planFleet(
      output(),
      output({
        spokes: [
          { name: 'east', labels: { env: 'prod' }, set: 'none' },
          { name: 'west', labels: { env: 'prod' } },
        ],
      }),
    );
    expect(plan.runtimeDeletions.map((d) => d.cause)).toStrictEqual([
      'spoke east leaves placement all-prod (left cluster set prod; label cluster.open-cluster-management.io/clusterset=prod removed)',
    ]);
  });

  test('GIVEN a spoke that leaves a label-selected cluster set THEN the runtime deletion names the set and the label', () => {
    const spokes = (labels: Record<string, string>) => [{ name: 'edge', labels, set: 'none' as const }];
    const plan = planFleet(
      output({ gpuSet: true, spokes: spokes({ env: 'prod', gpu: 'true' }) }),
      output({ gpuSet: true, spokes: spokes({ env: 'prod' }) }),
    );
    expect(plan.runtimeDeletions.map((d) => [d.id, d.cause])).toStrictEqual([
      [
        'hub/edge/argocd-edge-podinfo',
        'spoke edge leaves placement all-prod (left cluster set gpu; label gpu=true removed)',
      ],
    ]);
  });

  test('GIVEN a new spoke that sorts first under numberOfClusters and the default prioritizers THEN Steady keeps the decided spoke, and the plan notes that Balance may choose otherwise', () => {
    const plan = planFleet(
      output({ numberOfClusters: 1, spokes: [{ name: 'east', labels: { env: 'prod' } }] }),
      output({
        numberOfClusters: 1,
        spokes: [
          { name: 'alpha', labels: { env: 'prod' } },
          { name: 'east', labels: { env: 'prod' } },
        ],
      }),
    );
    expect(plan.runtimeDeletions).toStrictEqual([]);
    expect(plan.notes).toContainEqual(
      expect.stringMatching(
        /^hub hub placement argocd\/all-prod: the hub may decide other spokes .*Balance prioritizer/,
      ),
    );
  });

  test('GIVEN a selected spoke gains a NoSelectIfNew taint THEN it keeps its apps (no runtime deletion), and a NoSelect taint removes them', () => {
    const tainted = (effect: 'NoSelect' | 'NoSelectIfNew') =>
      output({
        spokes: [
          { name: 'east', labels: { env: 'prod' }, taints: [{ key: 'drain', effect }] },
          { name: 'west', labels: { env: 'prod' } },
        ],
      });
    expect(planFleet(output(), tainted('NoSelectIfNew')).runtimeDeletions).toStrictEqual([]);
    expect(planFleet(output(), tainted('NoSelect')).runtimeDeletions.map((d) => d.cause)).toStrictEqual([
      'spoke east leaves placement all-prod (taint drain:NoSelect added)',
    ]);
  });

  test('GIVEN a new spoke that sorts first under numberOfClusters and Exact prioritizers THEN the displaced spoke is a runtime deletion', () => {
    const plan = planFleet(
      output({ numberOfClusters: 1, exactPrioritizers: true, spokes: [{ name: 'east', labels: { env: 'prod' } }] }),
      output({
        numberOfClusters: 1,
        exactPrioritizers: true,
        spokes: [
          { name: 'alpha', labels: { env: 'prod' } },
          { name: 'east', labels: { env: 'prod' } },
        ],
      }),
    );
    expect(plan.runtimeDeletions.map((d) => d.cause)).toStrictEqual([
      'spoke east leaves placement all-prod (numberOfClusters 1 is filled by other spokes (offline, scores only the hub has tie and go by name))',
    ]);
    expect(plan.notes.filter((n) => n.includes('may decide other spokes'))).toStrictEqual([]);
  });

  test('GIVEN a removed spoke, a changed predicate, a lowered numberOfClusters THEN each is a runtime deletion with its cause', () => {
    expect(
      planFleet(output(), output({ spokes: [{ name: 'west', labels: { env: 'prod' } }] })).runtimeDeletions.map(
        (d) => d.cause,
      ),
    ).toStrictEqual(['spoke east leaves placement all-prod (spoke east removed from the fleet)']);
    expect(
      planFleet(output(), output({ match: { env: 'staging' } })).runtimeDeletions.map((d) => d.cause),
    ).toStrictEqual([
      'spoke east leaves placement all-prod (placement changed: spec.predicates[0].requiredClusterSelector.labelSelector.matchLabels.env: "prod" → "staging")',
      'spoke west leaves placement all-prod (placement changed: spec.predicates[0].requiredClusterSelector.labelSelector.matchLabels.env: "prod" → "staging")',
    ]);
    expect(
      planFleet(output({ numberOfClusters: 2 }), output({ numberOfClusters: 1 })).runtimeDeletions.map((d) => d.cause),
    ).toStrictEqual(['spoke west leaves placement all-prod (placement changed: spec.numberOfClusters: 2 → 1)']);
  });

  test('GIVEN a spoke label change THEN the spoke shows as changed with its labels', () => {
    const plan = planFleet(
      output(),
      output({
        spokes: [
          { name: 'east', labels: { env: 'prod', tier: 'gold' } },
          { name: 'west', labels: { env: 'prod' } },
        ],
      }),
    );
    expect(plan.runtimeDeletions).toStrictEqual([]);
    expect(formatPlan(plan)).toContain('  ~ Spoke east  (hub/plan-state.json)\n      labels.tier: added "gold"\n');
  });

  const withAppSet = (side: PlanSide, change: (appSet: Obj) => void): PlanSide => ({
    ...side,
    objects: side.objects.map((o) => {
      if (o.object.kind !== 'ApplicationSet') return o;
      const copy = structuredClone(o.object) as Obj;
      change(copy);
      return { ...o, object: copy };
    }),
  });

  test('GIVEN a renamed generated app THEN the old app and work are runtime deletions', () => {
    const after = withAppSet(output(), (a) => {
      a.spec.template.metadata.name = 'podinfo-{{name}}';
    });
    expect(planFleet(output(), after).runtimeDeletions.map((d) => d.text)[0]).toBe(
      "ApplicationSet podinfo now names spoke east's app podinfo-east (work argocd-podinfo-east): ApplicationSet podinfo's app east-podinfo and its work argocd-east-podinfo will be deleted at runtime (its workload stays: no resources finalizer)",
    );
  });

  test('GIVEN preserveResourcesOnDeletion or applicationsSync create-only THEN apps stay and a note says why', () => {
    const preserved = withAppSet(output(), (a) => {
      a.spec.syncPolicy = { preserveResourcesOnDeletion: true };
    });
    const gone = planFleet(preserved, output({ appSet: false }));
    expect(gone.runtimeDeletions).toStrictEqual([]);
    expect(gone.notes[0]).toBe(
      'ApplicationSet podinfo removed with syncPolicy.preserveResourcesOnDeletion: its app east-podinfo and work east/argocd-east-podinfo stay',
    );
    const createOnly = (side: PlanSide) =>
      withAppSet(side, (a) => {
        a.spec.syncPolicy = { applicationsSync: 'create-only' };
      });
    const left = planFleet(
      createOnly(output()),
      createOnly(
        output({
          spokes: [
            { name: 'east', labels: {} },
            { name: 'west', labels: { env: 'prod' } },
          ],
        }),
      ),
    );
    expect(left.runtimeDeletions).toStrictEqual([]);
    expect(left.notes).toStrictEqual([
      'ApplicationSet podinfo has syncPolicy.applicationsSync create-only: its app east-podinfo on spoke east stays although the spoke leaves placement all-prod',
    ]);
  });

  test('GIVEN a spoke that joins the placement THEN nothing is deleted', () => {
    const plan = planFleet(
      output({ spokes: [{ name: 'east', labels: {} }] }),
      output({ spokes: [{ name: 'east', labels: { env: 'prod' } }] }),
    );
    expect(plan.runtimeDeletions).toStrictEqual([]);
    expect(plan.spokeDeletions).toStrictEqual([]);
  });

  test('GIVEN a previous output without plan state THEN a removed spoke is assumed selected and a note says why', () => {
    const before = output();
    const plan = planFleet(
      { objects: before.objects },
      output({ spokes: [{ name: 'west', labels: { env: 'prod' } }] }),
    );
    expect(plan.runtimeDeletions.map((d) => [d.id, d.assumed])).toStrictEqual([['hub/east/argocd-east-podinfo', true]]);
    expect(plan.notes.join('\n')).toContain('the previous output of hub hub has no plan-state.json');
  });

  test('GIVEN an unchanged fleet THEN the plan is empty', () => {
    const plan = planFleet(output({ staticApp: true }), output({ staticApp: true }));
    expect(formatPlan(plan)).toBe('no changes: dist/ matches the fleet\n');
  });
});

describe('acknowledgements', () => {
  test('GIVEN acknowledged ids and patterns THEN those deletions no longer block and unused ones are reported', () => {
    const plan = planFleet(output(), output({ appSet: false }));
    const ack = acknowledge(plan, ['hub/east/argocd-east-podinfo', 'hub/west/*', 'hub/north/*']);
    expect(ack).toStrictEqual({
      acknowledged: ['hub/east/argocd-east-podinfo', 'hub/west/argocd-west-podinfo'],
      unacknowledged: [],
      unused: ['hub/north/*'],
    });
    expect(formatPlan(plan, { acknowledgement: ack })).toContain(
      '  - hub/east/argocd-east-podinfo (acknowledged): ApplicationSet podinfo removed',
    );
  });

  test('an acknowledgements file holds one id per line with # comments', () => {
    expect(
      parseAcknowledgements(
        '# reviewed in PR 42\nhub/east/argocd-east-podinfo  # moving east off podinfo\n\n  hub/west/*\n',
      ),
    ).toStrictEqual(['hub/east/argocd-east-podinfo', 'hub/west/*']);
  });
});

describe('field diffs and first synth', () => {
  test('GIVEN a changed object THEN each changed field is listed with old and new values, long values cut', () => {
    const before = { spec: { source: { targetRevision: '6.7.1', path: 'a' }, list: ['x'] } };
    const after = { spec: { source: { targetRevision: '6.8.0', chart: 'c'.repeat(100) }, list: ['x', 'y'] } };
    expect(diffFields(before, after).map(formatFieldChange)).toStrictEqual([
      'spec.list: ["x"] → ["x","y"]',
      `spec.source.chart: added "${'c'.repeat(58)}…`,
      'spec.source.path: removed (was "a")',
      'spec.source.targetRevision: "6.7.1" → "6.8.0"',
    ]);
  });

  test('GIVEN a long list of names that gains one and loses one THEN the change line names both items, not two lists cut alike', () => {
    const spokes = Array.from({ length: 30 }, (_, i) => `spoke-${i + 1}`);
    const before = { values: spokes };
    const after = { values: [...spokes.filter((s) => s !== 'spoke-4'), 'spoke-31'] };
    expect(diffFields(before, after).map(formatFieldChange)).toStrictEqual([
      'values: 30 → 30 items: + "spoke-31"; - "spoke-4"',
    ]);
    const many = { values: [...spokes, ...Array.from({ length: 7 }, (_, i) => `new-${i + 1}`)] };
    expect(diffFields(before, many).map(formatFieldChange)).toStrictEqual([
      'values: 30 → 37 items: + "new-1", "new-2", "new-3", "new-4", "new-5" and 2 more',
    ]);
  });

  test('GIVEN a long value that differs past the cut THEN both sides are cut around where they differ', () => {
    const wave = (clusters: string[]) =>
      JSON.stringify({ name: 'main', soakSeconds: 0, clusters: [...clusters].sort() });
    const spokes = Array.from({ length: 30 }, (_, i) => `spoke-${String(i + 1).padStart(2, '0')}`);
    const [line] = diffFields({ data: wave(spokes) }, { data: wave([...spokes, 'spoke-31']) }).map(formatFieldChange);
    expect(line).toBe(
      'data: …27\\",\\"spoke-28\\",\\"spoke-29\\",\\"spoke-30\\"]}" → …27\\",\\"spoke-28\\",\\"spoke-29\\",\\"spoke-30\\",\\"spoke-31\\"]}"',
    );
    // a difference in the middle: the window starts 16 characters before it, on both sides
    const [middle] = diffFields(
      { note: `${'x'.repeat(50)}OLD${'y'.repeat(50)}` },
      { note: `${'x'.repeat(50)}NEW${'y'.repeat(50)}` },
    ).map(formatFieldChange);
    expect(middle).toBe(`note: …${'x'.repeat(16)}OLD${'y'.repeat(39)}… → …${'x'.repeat(16)}NEW${'y'.repeat(39)}…`);
  });

  test('GIVEN a manifest inserted in a work THEN later manifests are matched by identity, not position', () => {
    const a = { manifests: [spokeApp('x')] };
    const b = { manifests: [namespace('n'), { ...spokeApp('x'), spec: { project: 'p' } }] };
    expect(diffFields(a, b).map((f) => f.path)).toStrictEqual([
      'manifests[Application argocd/x].spec',
      'manifests[Namespace n]',
    ]);
  });

  test('GIVEN a changed app in a rendered fleet THEN the plan shows the field lines under the change', () => {
    const spokes = [{ name: 'east', labels: { env: 'prod' } }];
    const plan = planFleet(output({ staticApp: true, spokes }), output({ staticApp: true, spokes, webRevision: 'v2' }));
    expect(plan.spokeDeletions).toStrictEqual([]);
    expect(formatPlan(plan)).toBe(
      [
        'changed (2):',
        '  ~ Application argocd/web-east  (hub/hub/applications.yaml)',
        '      spec.source.targetRevision: "main" → "v2"',
        '  ~ ManifestWork east/argocd-web-east  (hub/hub/works/east.yaml)',
        '      spec.workload.manifests[Application argocd/web-east].spec.source.targetRevision: "main" → "v2"',
        'summary: 0 deletions on spokes, 0 runtime deletions, 0 other removals, 2 changed, 0 added',
        '',
      ].join('\n'),
    );
  });

  test('GIVEN an empty previous output THEN the plan says first synth instead of listing everything as added', () => {
    const after = output({ staticApp: true });
    const plan = planFleet(side(), after);
    expect(plan.firstSynth).toBe(true);
    const text = formatPlan(plan);
    expect(text.split('\n')[0]).toBe(
      'first synth: dist/ is missing or empty, so there is nothing to compare with and nothing on a spoke is deleted.',
    );
    expect(text).not.toContain('added (');
  });
});
