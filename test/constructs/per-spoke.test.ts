/**
 * Values per spoke of static apps: `perSpoke` overrides and `SpokeParam` parameters, rendered into each spoke's
 * hub Application and ManifestWork; equal inputs render equal specs; every problem names app and spoke.
 */
import { describe, expect, test } from '@jest/globals';
import {
  AppSource,
  ClusterSet,
  Fleet,
  Hub,
  PullApplication,
  Rollout,
  Spoke,
  SpokeParam,
  type SpokeInfo,
} from '../../src/constructs/index.js';
import { DeliveryModel } from '../../src/model/delivery/delivery-model.js';
import { find, smallFleet, synthError, type Obj } from './helpers.js';

const chart = (values?: Record<string, unknown>) =>
  AppSource.helm({
    repoURL: 'https://charts.example.com',
    chart: 'web',
    targetRevision: '1.0.0',
    ...(values ? { values } : {}),
  });

type Spec = { source: Record<string, unknown>; sources?: Record<string, unknown>[] };
const specOf = (app: Obj) => app.spec as Spec;
const payloadOf = (work: Obj) =>
  (work as unknown as { spec: { workload: { manifests: Obj[] } } }).spec.workload.manifests.find(
    (m) => m.kind === 'Application',
  )!;

describe('perSpoke on a PullApplication', () => {
  test('GIVEN values computed from the spoke label THEN each spoke renders its own merged values, in the hub app and in the work', () => {
    const { fleet, hub, east, west } = smallFleet();
    new PullApplication(hub, 'web', {
      source: chart({ replicas: 2, ingress: { enabled: true, hosts: ['a'] } }),
      destinationNamespace: 'web',
      spokes: [east, west],
      perSpoke: (spoke) => ({ values: { region: spoke.labels.region, ingress: { hosts: [spoke.name] } } }),
    });

    expect(specOf(find(fleet, 'Application', 'web-east')).source).toStrictEqual({
      repoURL: 'https://charts.example.com',
      chart: 'web',
      targetRevision: '1.0.0',
      helm: { valuesObject: { replicas: 2, ingress: { enabled: true, hosts: ['east'] }, region: 'us-east' } },
    });
    expect(
      (specOf(find(fleet, 'Application', 'web-west')).source.helm as { valuesObject: unknown }).valuesObject,
    ).toStrictEqual({ replicas: 2, ingress: { enabled: true, hosts: ['west'] }, region: 'us-west' });
    const payload = payloadOf(find(fleet, 'ManifestWork', 'argocd-web-west', 'west'));
    expect((specOf(payload).source.helm as { valuesObject: unknown }).valuesObject).toStrictEqual({
      replicas: 2,
      ingress: { enabled: true, hosts: ['west'] },
      region: 'us-west',
    });
  });

  test('GIVEN the function THEN it sees the spoke as plain read-only data: name, labels, claims, sets, model, versions, openshift', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const prod = new ClusterSet(hub, 'prod');
    const spoke = new Spoke(hub, 'ocp1', {
      clusterSet: prod,
      labels: { region: 'eu' },
      claims: { platform: 'AWS' },
      versions: { argoCD: '3.1', openshift: '4.16' },
    });
    const seen: SpokeInfo[] = [];
    new PullApplication(hub, 'web', {
      source: chart(),
      destinationNamespace: 'web',
      spokes: [spoke],
      perSpoke: (info) => {
        seen.push(info);
        return {};
      },
    });
    fleet.renderObjects();
    expect(seen).toHaveLength(1);
    const info = seen[0];
    expect(info.name).toBe('ocp1');
    expect(info.labels.region).toBe('eu');
    expect(info.claims).toStrictEqual({ platform: 'AWS' });
    expect(info.clusterSets).toStrictEqual(['prod']);
    expect(info.model).toBe(DeliveryModel.BASIC);
    expect(info.versions.argoCD).toBe('3.1');
    expect(info.versions.openshift).toBe('4.16');
    expect(info.openshift).toBe(true);
    expect(Object.isFrozen(info) && Object.isFrozen(info.labels)).toBe(true);
  });

  test('GIVEN spokes whose computed spec is equal THEN their specs are equal, and output is byte-stable across synths', () => {
    const render = () => {
      const { fleet, hub, east, west, ocp } = smallFleet();
      new PullApplication(hub, 'web', {
        source: chart({ a: 1 }),
        destinationNamespace: 'web',
        spokes: [east, west, ocp],
        perSpoke: (spoke) => ({ values: { tier: spoke.openshift ? 'ocp' : 'k8s' } }),
      });
      return fleet;
    };
    const fleet = render();
    expect(specOf(find(fleet, 'Application', 'web-east'))).toStrictEqual(
      specOf(find(fleet, 'Application', 'web-west')),
    );
    expect(specOf(find(fleet, 'Application', 'web-ocp'))).not.toStrictEqual(
      specOf(find(fleet, 'Application', 'web-east')),
    );
    expect([...render().renderFiles()]).toStrictEqual([...fleet.renderFiles()]);
  });

  test('GIVEN no perSpoke THEN the output is what it was without the feature (every spoke gets the definition)', () => {
    const { fleet, hub, east, west } = smallFleet();
    const app = new PullApplication(hub, 'web', {
      source: chart({ a: 1 }),
      destinationNamespace: 'web',
      spokes: [east, west],
    });
    expect(specOf(find(fleet, 'Application', 'web-east')).source).toStrictEqual(app.definition.sources[0]);
  });

  test('GIVEN kustomize overrides, targetRevision and path THEN they apply to the kustomization', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', {
      source: AppSource.kustomize({
        repoURL: 'https://git.example.com/web.git',
        path: 'base',
        images: ['nginx:1.25', 'redis:7'],
        commonLabels: { team: 'web' },
      }),
      destinationNamespace: 'web',
      spokes: [east],
      perSpoke: (spoke) => ({
        images: ['nginx:1.26'],
        namePrefix: `${spoke.name}-`,
        commonLabels: { region: spoke.labels.region },
        namespace: 'web-east',
        targetRevision: 'v2',
        path: `overlays/${spoke.labels.region}`,
      }),
    });
    expect(specOf(find(fleet, 'Application', 'web-east')).source).toStrictEqual({
      repoURL: 'https://git.example.com/web.git',
      path: 'overlays/us-east',
      targetRevision: 'v2',
      kustomize: {
        images: ['nginx:1.26', 'redis:7'],
        commonLabels: { region: 'us-east', team: 'web' },
        namePrefix: 'east-',
        namespace: 'web-east',
      },
    });
  });

  test('GIVEN several sources THEN overrides go by index or ref name; parameters and value files are added', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', {
      sources: [
        AppSource.helm({
          repoURL: 'https://charts.example.com',
          chart: 'web',
          targetRevision: '1.0.0',
          valueFiles: ['$values/web/common.yaml'],
          parameters: [{ name: 'image.tag', value: '1' }],
        }),
        AppSource.ref('values', { repoURL: 'https://git.example.com/values.git' }),
      ],
      destinationNamespace: 'web',
      spokes: [east],
      perSpoke: (spoke) => ({
        sources: {
          '0': {
            valueFiles: [`$values/web/${spoke.name}.yaml`],
            parameters: [
              { name: 'image.tag', value: '2' },
              { name: 'region', value: spoke.labels.region },
            ],
          },
          values: { targetRevision: 'release-1' },
        },
      }),
    });
    expect(specOf(find(fleet, 'Application', 'web-east')).sources).toStrictEqual([
      {
        repoURL: 'https://charts.example.com',
        chart: 'web',
        targetRevision: '1.0.0',
        helm: {
          valueFiles: ['$values/web/common.yaml', '$values/web/east.yaml'],
          parameters: [
            { name: 'image.tag', value: '2' },
            { name: 'region', value: 'us-east' },
          ],
        },
      },
      { repoURL: 'https://git.example.com/values.git', targetRevision: 'release-1', ref: 'values' },
    ]);
  });

  test('GIVEN SpokeParam in a static app THEN synth fills in the spoke label and name', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', {
      source: chart({ region: SpokeParam.label('region'), cluster: SpokeParam.NAME }),
      destinationNamespace: 'web',
      spokes: [east],
    });
    expect(
      (specOf(find(fleet, 'Application', 'web-east')).source.helm as { valuesObject: unknown }).valuesObject,
    ).toStrictEqual({ region: 'us-east', cluster: 'east' });
  });

  test('fails when the function throws, returns something invalid, or a spoke lacks a label: one report naming app and spoke for each', () => {
    const { fleet, hub, east, west, ocp } = smallFleet();
    new PullApplication(hub, 'web', {
      source: chart(),
      destinationNamespace: 'web',
      spokes: [east, west, ocp],
      perSpoke: (spoke) => {
        if (spoke.name === 'east') throw new Error('no size for east');
        if (spoke.name === 'west') return { values: { size: Number.NaN }, images: ['nginx:1'] };
        return { values: { region: spoke.labels.region } };
      },
    });
    new PullApplication(hub, 'api', {
      source: chart({ region: SpokeParam.label('region') }),
      destinationNamespace: 'api',
      spokes: [ocp],
    });
    const message = synthError(fleet);
    expect(message).toMatch(/perSpoke of app "web" threw for spoke "east": no size for east/);
    expect(message).toMatch(/perSpoke of app "web" for spoke "west": the override: Helm value values\.size is NaN/);
    expect(message).toMatch(
      /perSpoke of app "web" for spoke "west": the override\.images applies to Kustomize sources only/,
    );
    expect(message).toMatch(
      /app "api" reads label "region" of spoke "ocp" \(SpokeParam\.label\), which it does not have/,
    );
  });

  test('fails when an override names no source', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'web', {
      source: chart(),
      destinationNamespace: 'web',
      spokes: [east],
      perSpoke: () => ({ sources: { '3': { targetRevision: '2' } } }),
    });
    expect(synthError(fleet)).toMatch(
      /perSpoke of app "web" for spoke "east": sources\["3"\] names no source of the app: use an index from 0 to 0/,
    );
  });

  test('GIVEN a waved app THEN each hub Application carries its own spec and the revision covers the per-spoke specs', () => {
    const revisionOf = (perSpoke: boolean) => {
      const { fleet, hub, east, west } = smallFleet();
      new PullApplication(hub, 'web', {
        source: chart({ a: 1 }),
        destinationNamespace: 'web',
        spokes: [east, west],
        rollout: Rollout.waves([
          { name: 'one', spokes: [east] },
          { name: 'two', spokes: [west] },
        ]),
        ...(perSpoke ? { perSpoke: (spoke: SpokeInfo) => ({ values: { region: spoke.labels.region } }) } : {}),
      });
      const east1 = find(fleet, 'Application', 'web-east');
      return {
        revision: east1.metadata.annotations?.['pullfleet.io/rollout-revision'],
        values: (specOf(east1).source.helm as { valuesObject: unknown }).valuesObject,
        westRevision: find(fleet, 'Application', 'web-west').metadata.annotations?.['pullfleet.io/rollout-revision'],
      };
    };
    const plain = revisionOf(false);
    const per = revisionOf(true);
    expect(per.values).toStrictEqual({ a: 1, region: 'us-east' });
    expect(per.revision).toBe(per.westRevision);
    expect(per.revision).not.toBe(plain.revision);
  });
});
