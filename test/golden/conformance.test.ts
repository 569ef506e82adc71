/**
 * Every synthesized object validates against its schema: core kinds with kubernetes-models, Argo CD and OCM
 * kinds with the validators generated from the description-stripped CRD schemas in imports/schemas. Objects
 * inside ManifestWorks are checked too.
 */
import { describe, expect, test } from '@jest/globals';
import { checkObject, hasSchema, schemaFindings } from '../../src/validate/schema.js';
import { AppSource, PullApplication } from '../../src/constructs/index.js';
import { buildFleet } from '../fixtures/example-fleet.js';
import { smallFleet } from '../constructs/helpers.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: unknown };

/** Why `obj` does not validate against its schema (the same module synth uses), or undefined. */
function violation(obj: Obj): string | undefined {
  if (!hasSchema(obj.apiVersion, obj.kind))
    return `no schema known for ${obj.apiVersion}/${obj.kind}: add one to src/validate/schema.ts`;
  const findings = schemaFindings(obj) ?? [];
  return findings.length
    ? `${obj.apiVersion}/${obj.kind} ${obj.metadata.name}: ${findings.map((f) => f.message).join('; ')}`
    : undefined;
}

/** The object and, for ManifestWorks, every manifest inside. */
function withNested(obj: Obj): Obj[] {
  if (obj.kind !== 'ManifestWork') return [obj];
  const manifests = (obj.spec as { workload: { manifests: Obj[] } }).workload.manifests ?? [];
  return [obj, ...manifests];
}

function everyObject(files: Map<string, Array<Record<string, unknown>>>): Obj[] {
  return [...files.values()].flat().flatMap((o) => withNested(o as Obj));
}

describe('conformance', () => {
  test('GIVEN the example fleet THEN every object, and every object inside a ManifestWork, validates', () => {
    const objects = everyObject(buildFleet().renderObjects());
    expect(new Set(objects.map((o) => o.kind)).size).toBeGreaterThanOrEqual(12);
    expect(objects.map(violation).filter(Boolean)).toStrictEqual([]);
  });

  test('GIVEN a Helm app with values, sync options, prune-on-delete and a cluster-scoped grant THEN it validates too', () => {
    const { fleet, hub, east } = smallFleet();
    new PullApplication(hub, 'podinfo', {
      source: AppSource.helm({
        repoURL: 'https://stefanprodan.github.io/podinfo',
        chart: 'podinfo',
        targetRevision: '6.7.1',
        releaseName: 'web',
        values: { a: [1, 2] },
      }),
      destinationNamespace: 'podinfo',
      project: 'web-team',
      syncOptions: ['ServerSideApply=true'],
      pruneOnDelete: true,
      spokes: [east],
      resources: [
        {
          apiGroup: 'rbac.authorization.k8s.io',
          resources: ['clusterroles'],
          clusterScoped: true,
          kinds: ['ClusterRole'],
        },
      ],
    });
    const objects = everyObject(fleet.renderObjects());
    expect(
      objects
        .filter((o) => o.kind === 'AppProject')
        .map((o) => (o.spec as { clusterResourceWhitelist?: unknown }).clusterResourceWhitelist),
    ).toStrictEqual([
      [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }],
      [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }],
    ]);
    expect(objects.filter((o) => o.kind === 'AppProject').map((o) => o.metadata.name)).toStrictEqual([
      'web-team',
      'web-team',
    ]);
    expect(objects.map(violation).filter(Boolean)).toStrictEqual([]);
  });

  test('fails when an object breaks its schema (the check is real)', () => {
    const bad = {
      apiVersion: 'cluster.open-cluster-management.io/v1beta1',
      kind: 'Placement',
      metadata: { name: 'p' },
      spec: { numberOfClusters: 'two' },
    };
    expect(violation(bad)).toContain('spec.numberOfClusters is "two", which must be integer');
    const badApp = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'a' },
      spec: { project: 'default' },
    };
    expect(violation(badApp)).toContain('spec must have required property destination');
  });

  test('GIVEN the example fleet THEN every object also passes the rules Kubernetes applies beyond the schema', () => {
    const objects = [...buildFleet().renderObjects().values()].flat();
    expect(objects.flatMap((o) => checkObject(o as Obj, { sizeBudget: 512000 }))).toStrictEqual([]);
  });
});
