/**
 * `pullfleet plan` shows changes of the Application spec fields of issue 28 (sources, Helm and Kustomize
 * options, retry, ignoreDifferences, info...) as field changes of the hub Application, its ManifestWork and
 * the ApplicationSet, with list items matched by name where they have one.
 */
import { describe, expect, test } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  AppSource,
  Placement,
  PullApplication,
  PullApplicationSet,
  SyncOption,
  type PullAppOptions,
} from '../../../src/constructs/index.js';
import { testFleet } from '../../support/fleet-builder.js';
import { planSideOf } from '../../support/plan-fleet.js';
import { formatFieldChange } from '../../../src/model/plan/diff.js';
import { planFleet } from '../../../src/model/plan/plan.js';
import type { PlanSide } from '../../../src/model/plan/controller-deletions.js';

const CHARTS = 'https://charts.example.com';
const VALUES = 'https://git.example.com/values.git';

function side(app: Partial<PullAppOptions>): PlanSide {
  const {
    fleet,
    hub,
    spokes: [east],
  } = testFleet({ hub: { argoNamespace: 'argocd', controller: { enabled: false } }, spokes: ['east'] });
  const props = {
    destinationNamespace: 'web',
    resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
    ...app,
  } as PullAppOptions;
  new PullApplication(hub, 'web', { ...props, spokes: [east] });
  new PullApplicationSet(hub, 'api', { ...props, placement: new Placement(hub, 'everywhere') });
  return planSideOf(fleet);
}

/** Field change lines of one changed object. */
function changes(before: PlanSide, after: PlanSide, kind: string, name: string): string[] {
  const plan = planFleet(before, after);
  const change = plan.changed.find((c) => c.kind === kind && c.name === name);
  return (change?.fields ?? []).map(formatFieldChange);
}

const base: Partial<PullAppOptions> = {
  sources: [
    AppSource.helm({
      repoURL: CHARTS,
      chart: 'web',
      targetRevision: '1.0.0',
      valueFiles: ['$values/web/prod.yaml'],
      parameters: [
        { name: 'image.tag', value: '1.0' },
        { name: 'replicas', value: '2' },
      ],
    }),
    AppSource.ref('values', { repoURL: VALUES, targetRevision: 'main' }),
  ],
  syncOptions: [SyncOption.SERVER_SIDE_APPLY],
  retry: { limit: 3 },
  info: [{ name: 'Owner', value: 'team-a' }],
};

describe('plan shows changes of the Application spec fields', () => {
  test('GIVEN a changed Helm parameter, ref revision, retry, info and a new ignoreDifferences THEN each is one field change of the hub Application', () => {
    const after: Partial<PullAppOptions> = {
      ...base,
      sources: [
        AppSource.helm({
          repoURL: CHARTS,
          chart: 'web',
          targetRevision: '1.0.0',
          valueFiles: ['$values/web/prod.yaml', '$values/web/east.yaml'],
          parameters: [
            { name: 'image.tag', value: '1.1' },
            { name: 'replicas', value: '2' },
          ],
        }),
        AppSource.ref('values', { repoURL: VALUES, targetRevision: 'v2' }),
      ],
      retry: { limit: 5, backoff: { duration: Duration.seconds(10) } },
      info: [{ name: 'Owner', value: 'team-b' }],
      ignoreDifferences: [{ group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] }],
    };
    const before = side(base);
    const next = side(after);
    const lines = changes(before, next, 'Application', 'web-east');
    expect(lines).toStrictEqual([
      expect.stringMatching(
        /^spec\.ignoreDifferences: added \[\{"group":"apps","jsonPointers":\["\/spec\/replicas"\]/,
      ) as unknown,
      'spec.info[Owner].value: "team-a" → "team-b"',
      'spec.sources[0].helm.parameters[image.tag].value: "1.0" → "1.1"',
      expect.stringMatching(/^spec\.sources\[0\]\.helm\.valueFiles: /) as unknown,
      'spec.sources[1].targetRevision: "main" → "v2"',
      'spec.syncPolicy.retry.backoff: added {"duration":"10s"}',
      'spec.syncPolicy.retry.limit: 3 → 5',
    ]);
    // The work carries the same changes in its payload; the ApplicationSet in its template.
    const work = changes(before, next, 'ManifestWork', 'argocd-web-east').join('\n');
    expect(work).toContain('.spec.sources[1].targetRevision: "main" → "v2"');
    expect(work).toContain('.spec.info[Owner].value: "team-a" → "team-b"');
    const appSet = changes(before, next, 'ApplicationSet', 'api').join('\n');
    expect(appSet).toContain('spec.template.spec.syncPolicy.retry.limit: 3 → 5');
    expect(appSet).toContain('spec.template.spec.sources[0].helm.parameters[image.tag].value: "1.0" → "1.1"');
  });

  test('GIVEN the same spec twice THEN nothing changes', () => {
    expect(planFleet(side(base), side(base)).changed).toStrictEqual([]);
  });
});
