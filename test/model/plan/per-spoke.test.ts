/**
 * `pullfleet plan` sees per-spoke values as the hub will render them: a static app's per-spoke spec changes on
 * the spokes it changes for only; an ApplicationSet reading spoke labels changes through the cluster Secrets;
 * and runtime deletions still follow the placement inside the matrix generator.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
  SpokeParam,
} from '../../../src/constructs/index.js';
import { planStateFiles } from '../../../src/constructs/_plan-state.js';
import { formatPlan, planFleet } from '../../../src/model/plan/plan.js';
import { type PlanSide } from '../../../src/model/plan/controller-deletions.js';
import { parsePlanState } from '../../../src/model/plan/state.js';

interface Spec {
  regions: Record<string, string>;
  env?: Record<string, string>;
}

function side(spec: Spec): PlanSide {
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub', { argoNamespace: 'argocd', controller: { enabled: false } });
  const prod = new ClusterSet(hub, 'prod');
  for (const [name, region] of Object.entries(spec.regions))
    new Spoke(hub, name, { clusterSet: prod, labels: { env: spec.env?.[name] ?? 'prod', region } });
  const placement = new Placement(hub, 'all-prod', { clusterSets: [prod], predicates: [{ labels: { env: 'prod' } }] });
  const chart = (values: Record<string, unknown>) =>
    AppSource.helm({ repoURL: 'https://charts.example.com', chart: 'web', targetRevision: '1.0.0', values });
  new PullApplication(hub, 'web', {
    source: chart({ replicas: 2 }),
    destinationNamespace: 'web',
    placement,
    perSpoke: (spoke) => ({ values: { region: spoke.labels.region } }),
  });
  new PullApplicationSet(hub, 'api', {
    source: chart({ region: SpokeParam.label('region') }),
    destinationNamespace: 'api',
    placement,
  });
  const objects = [...fleet.renderObjects()].flatMap(([file, list]) => list.map((object) => ({ file, object })));
  const states = new Map(
    [...planStateFiles(fleet.hubs)].map(([file, text]) => [file.split('/')[0], parsePlanState(text, file)]),
  );
  return { objects, states };
}

describe('plan with values per spoke', () => {
  test('GIVEN one spoke label changes THEN plan changes that spoke only: its hub Application, work and cluster Secret', () => {
    const before = side({ regions: { east: 'us-east', west: 'us-west' } });
    const after = side({ regions: { east: 'eu-central', west: 'us-west' } });
    const plan = planFleet(before, after);
    const text = formatPlan(plan);
    const changed = plan.changed.map((c) => `${c.kind} ${c.name}`).sort();
    expect(changed).toContain('Application web-east');
    expect(changed).toContain('ManifestWork argocd-web-east');
    expect(changed.some((c) => c.includes('west'))).toBe(false);
    expect(text).toContain('spec.source.helm.valuesObject.region: "us-east" → "eu-central"');
    // The ApplicationSet's template is unchanged; the Secret the matrix reads carries the new label.
    expect(changed).not.toContain('ApplicationSet api');
    expect(text).toContain(
      '  ~ Secret argocd/east-cluster-secret  (hub/hub/cluster-secrets.yaml)\n      metadata.labels.spoke.pullfleet.io/region: "us-east" → "eu-central"\n',
    );
  });

  test("GIVEN a spoke leaves the placement THEN the matrix ApplicationSet's generated app on it is a runtime deletion (fails before plan read nested generators)", () => {
    const before = side({ regions: { east: 'us-east', west: 'us-west' } });
    const after = side({ regions: { east: 'us-east', west: 'us-west' }, env: { west: 'staging' } });
    const plan = planFleet(before, after);
    expect(plan.runtimeDeletions.map((d) => `${d.cluster} ${d.work}`)).toContain('west argocd-west-api');
  });
});
