/**
 * Spoke labels reaching an ApplicationSet template: `SpokeParam.label` renders a matrix of the placement's
 * decisions and the decided cluster's Secret, the fleet's cluster Secrets carry the labels, offline evaluation of
 * the template gives what a static app renders, and the feature table refuses hubs that cannot run it.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  GitOpsCluster,
  HubFlavor,
  Placement,
  PullApplication,
  PullApplicationSet,
  Spoke,
  SpokeParam,
} from '../../src/constructs/index.js';
import { testFleet } from '../support/fleet-builder.js';
import { DeliveryModel } from '../../src/model/delivery/delivery-model.js';
import { substituteSpokeParams } from '../../src/model/delivery/per-spoke.js';
import { allObjects, find, smallFleet, synthError, type Obj } from './helpers.js';

const chart = (values: Record<string, unknown>) =>
  AppSource.helm({ repoURL: 'https://charts.example.com', chart: 'web', targetRevision: '1.0.0', values });

type AppSet = Obj & {
  spec: { generators: unknown[]; template: { spec: { source: { helm: { valuesObject: unknown } } } } };
};

describe('SpokeParam.label in a PullApplicationSet', () => {
  test('GIVEN a label read in values THEN the generator is a matrix of decisions and the decided cluster Secret carrying the label', () => {
    const { fleet, hub, prod } = smallFleet();
    const placement = new Placement(hub, 'prod-only', { clusterSets: [prod] });
    new PullApplicationSet(hub, 'web', {
      source: chart({ region: SpokeParam.label('region'), cluster: SpokeParam.NAME }),
      destinationNamespace: 'web',
      placement,
    });
    const appSet = find(fleet, 'ApplicationSet', 'web') as AppSet;
    expect(appSet.spec.generators).toStrictEqual([
      {
        matrix: {
          generators: [
            {
              clusterDecisionResource: {
                configMapRef: 'ocm-placement-generator',
                labelSelector: { matchLabels: { 'cluster.open-cluster-management.io/placement': 'prod-only' } },
                requeueAfterSeconds: 180,
              },
            },
            // only a Secret carrying the mirror of each label read: no Application with the {{...}} text
            {
              clusters: {
                selector: {
                  matchLabels: { 'pullfleet.io/cluster': '{{name}}' },
                  matchExpressions: [{ key: 'spoke.pullfleet.io/region', operator: 'Exists' }],
                },
              },
            },
          ],
        },
      },
    ]);
    expect(appSet.spec.template.spec.source.helm.valuesObject).toStrictEqual({
      region: '{{metadata.labels.spoke.pullfleet.io/region}}',
      cluster: '{{name}}',
    });
  });

  test('GIVEN a label read THEN every declared spoke cluster Secret carries its name and the mirrored label it has', () => {
    const { fleet, hub, prod } = smallFleet();
    new PullApplicationSet(hub, 'web', {
      source: chart({ region: SpokeParam.label('region') }),
      destinationNamespace: 'web',
      placement: new Placement(hub, 'prod-only', { clusterSets: [prod] }),
    });
    const secrets = allObjects(fleet).filter(({ obj }) => obj.kind === 'Secret');
    const labelsOf = (cluster: string) =>
      secrets.find(({ obj }) => (obj.stringData as { name: string }).name === cluster)!.obj.metadata.labels ?? {};
    expect(labelsOf('east')).toMatchObject({ 'pullfleet.io/cluster': 'east', 'spoke.pullfleet.io/region': 'us-east' });
    expect(labelsOf('west')).toMatchObject({ 'pullfleet.io/cluster': 'west', 'spoke.pullfleet.io/region': 'us-west' });
    // ocp has no region label (and the placement does not select it): only its name, for the matrix.
    expect(labelsOf('ocp')['spoke.pullfleet.io/region']).toBeUndefined();
    expect(labelsOf('ocp')['pullfleet.io/cluster']).toBe('ocp');
  });

  test('GIVEN no SpokeParam THEN the generator and the cluster Secrets are as before (byte-stable)', () => {
    const { fleet, hub, prod } = smallFleet();
    new PullApplicationSet(hub, 'web', {
      source: chart({ region: 'eu' }),
      destinationNamespace: 'web',
      placement: new Placement(hub, 'prod-only', { clusterSets: [prod] }),
    });
    const appSet = find(fleet, 'ApplicationSet', 'web') as AppSet;
    expect(Object.keys(appSet.spec.generators[0] as object)).toStrictEqual(['clusterDecisionResource']);
    for (const { obj } of allObjects(fleet).filter(({ obj }) => obj.kind === 'Secret'))
      expect(
        Object.keys(obj.metadata.labels ?? {}).filter((k) => k.includes('pullfleet.io/c') || k.startsWith('spoke.')),
      ).toStrictEqual([]);
  });

  test('GIVEN the template evaluated offline with a spoke labels THEN it equals what a static app renders for that spoke', () => {
    const { fleet, hub, prod, east } = smallFleet();
    const values = { region: SpokeParam.label('region'), url: `https://${SpokeParam.NAME}.example.com` };
    new PullApplicationSet(hub, 'dyn', {
      source: chart(values),
      destinationNamespace: 'web',
      placement: new Placement(hub, 'prod-only', { clusterSets: [prod] }),
    });
    new PullApplication(hub, 'stat', { source: chart(values), destinationNamespace: 'web', spokes: [east] });
    const template = (find(fleet, 'ApplicationSet', 'dyn') as AppSet).spec.template.spec.source;
    const offline = substituteSpokeParams(template, { name: 'east', labels: east.labels });
    expect(offline).toStrictEqual((find(fleet, 'Application', 'stat-east').spec as { source: unknown }).source);
    expect(offline.helm.valuesObject).toStrictEqual({ region: 'us-east', url: 'https://east.example.com' });
  });

  test('fails when perSpoke is given to a PullApplicationSet, pointing to SpokeParam.label', () => {
    const { fleet, hub, prod } = smallFleet();
    new PullApplicationSet(hub, 'web', {
      source: chart({}),
      destinationNamespace: 'web',
      placement: new Placement(hub, 'prod-only', { clusterSets: [prod] }),
      perSpoke: () => ({ values: { a: 1 } }),
    });
    expect(synthError(fleet)).toMatch(
      /perSpoke of app "web" cannot apply to a PullApplicationSet: .*put SpokeParam\.label\('<key>'\) in the sources instead/,
    );
  });

  test('fails when a spoke the placement selects lacks the label', () => {
    const { fleet, hub, prod } = smallFleet();
    new Spoke(hub, 'north', { clusterSet: prod });
    new PullApplicationSet(hub, 'web', {
      source: chart({ region: SpokeParam.label('region') }),
      destinationNamespace: 'web',
      placement: new Placement(hub, 'prod-only', { clusterSets: [prod] }),
    });
    expect(synthError(fleet)).toMatch(
      /app "web" reads label "region" of spoke "north" \(SpokeParam\.label\), which it does not have/,
    );
  });

  test('fails when the hub declares an Argo CD older than 2.5 (feature table); 2.14 passes', () => {
    const build = (argoCD: string) => {
      const { fleet, hub, prod } = smallFleet({ versions: { argoCD } });
      new PullApplicationSet(hub, 'web', {
        source: chart({ region: SpokeParam.label('region') }),
        destinationNamespace: 'web',
        placement: new Placement(hub, 'prod-only', { clusterSets: [prod] }),
      });
      return fleet;
    };
    expect(synthError(build('2.4'))).toMatch(
      /PullApplicationSet "web" uses SpokeParam\.label in a PullApplicationSet .*which needs hub Argo CD 2\.5 or later, but hub "hub" declares hub Argo CD 2\.4/,
    );
    expect(() => build('2.14').renderObjects()).not.toThrow();
  });
});

describe('spoke labels and GitOpsClusters', () => {
  test('fails when a spoke the placement selects is registered by a GitOpsCluster (its Secret carries no labels)', () => {
    const { fleet, hub, sets } = testFleet({
      hub: { flavor: HubFlavor.ACM },
      sets: ['edge'],
      spokes: [{ name: 'e1', labels: { region: 'eu' } }],
    });
    const placement = new Placement(hub, 'edge', { clusterSets: [sets.edge] });
    GitOpsCluster.acm(hub, 'edge-gitops', { placement });
    new PullApplicationSet(hub, 'web', {
      source: chart({ region: SpokeParam.label('region') }),
      destinationNamespace: 'web',
      placement,
    });
    expect(synthError(fleet)).toMatch(
      /app "web" reads spoke labels \(SpokeParam\.label\), but spoke "e1" is registered by GitOpsCluster .*edge-gitops.*so the matrix generator would drop the spoke/,
    );
  });

  test('GIVEN a static app to an agent-managed spoke THEN perSpoke sees that model and the hub Application carries the spoke values', () => {
    const { fleet, hub, sets, spokes } = testFleet({
      hub: { flavor: HubFlavor.OCM },
      sets: ['edge'],
      spokes: [{ name: 'e1', labels: { region: 'eu' } }],
    });
    const [e1] = spokes;
    GitOpsCluster.ocm(hub, 'edge-agents', { placement: new Placement(hub, 'edge', { clusterSets: [sets.edge] }) });
    const models: string[] = [];
    new PullApplication(hub, 'web', {
      source: chart({}),
      destinationNamespace: 'web',
      spokes: [e1],
      perSpoke: (spoke) => {
        models.push(spoke.model);
        return { values: { region: spoke.labels.region } };
      },
    });
    const app = find(fleet, 'Application', 'web-e1') as AppSet & {
      spec: { source: { helm: { valuesObject: unknown } } };
    };
    expect(models).toStrictEqual([DeliveryModel.AGENT_MANAGED]);
    expect(app.spec.source.helm.valuesObject).toStrictEqual({ region: 'eu' });
  });
});
