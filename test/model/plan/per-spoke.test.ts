/**
 * `pullfleet plan` sees per-spoke values as the hub will render them: a static app's per-spoke spec changes on
 * the spokes it changes for only; an ApplicationSet reading spoke labels changes through the cluster Secrets;
 * and runtime deletions still follow the placement inside the matrix generator.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  Placement,
  PullApplication,
  PullApplicationSet,
  SpokeParam,
} from '../../../src/constructs/index.js';
import { planSideOf } from '../../support/plan-fleet.js';
import { testFleet } from '../../support/fleet-builder.js';
import { formatPlan, planFleet } from '../../../src/model/plan/plan.js';
import { type PlanSide } from '../../../src/model/plan/controller-deletions.js';

interface Spec {
  regions: Record<string, string>;
  env?: Record<string, string>;
}

function side(spec: Spec): PlanSide {
  const { fleet, hub, sets } = testFleet({
    hub: { argoNamespace: 'argocd', controller: { enabled: false } },
    sets: ['prod'],
    spokes: Object.entries(spec.regions).map(([name, region]) => ({
      name,
      labels: { env: spec.env?.[name] ?? 'prod', region },
    })),
  });
  const placement = new Placement(hub, 'all-prod', {
    clusterSets: [sets.prod],
    predicates: [{ labels: { env: 'prod' } }],
  });
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
  return planSideOf(fleet);
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
