/**
 * Every synthesized object validates against its schema: Argo CD kinds with @kubernetes-models/argo-cd
 * (and the stripped CRD schema), core kinds with kubernetes-models, OCM kinds with ajv against the
 * description-stripped CRD schemas in imports/schemas. Objects inside ManifestWorks are checked too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { AppProject } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/AppProject';
import { Application } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/Application';
import { ApplicationSet } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/ApplicationSet';
import { Ajv, type ValidateFunction } from 'ajv';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { AppSource, PullApplication } from '../../src/constructs/index.js';
import { buildFleet } from '../fixtures/example-fleet.js';
import { smallFleet } from '../constructs/helpers.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: unknown };
type ModelClass = new (data: never) => { validate(): void };

const models: Record<string, ModelClass> = {
  'argoproj.io/v1alpha1/Application': Application as unknown as ModelClass,
  'argoproj.io/v1alpha1/ApplicationSet': ApplicationSet as unknown as ModelClass,
  'argoproj.io/v1alpha1/AppProject': AppProject as unknown as ModelClass,
  'v1/Secret': Secret as unknown as ModelClass,
  'v1/ConfigMap': ConfigMap as unknown as ModelClass,
  'v1/Namespace': Namespace as unknown as ModelClass,
  'v1/ServiceAccount': ServiceAccount as unknown as ModelClass,
  'v1/Service': Service as unknown as ModelClass,
  'apps/v1/Deployment': Deployment as unknown as ModelClass,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as unknown as ModelClass,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': CustomResourceDefinition as unknown as ModelClass,
  'rbac.authorization.k8s.io/v1/Role': Role as unknown as ModelClass,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding as unknown as ModelClass,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole as unknown as ModelClass,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding as unknown as ModelClass,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': ValidatingAdmissionPolicy as unknown as ModelClass,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': ValidatingAdmissionPolicyBinding as unknown as ModelClass,
};

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const schemaDir = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../../imports/schemas');
const crdValidators = new Map<string, ValidateFunction>();
for (const file of fs.readdirSync(schemaDir)) {
  const entry = JSON.parse(fs.readFileSync(path.join(schemaDir, file), 'utf8')) as { group: string; kind: string; version: string; schema: object };
  crdValidators.set(`${entry.group}/${entry.version}/${entry.kind}`, ajv.compile(entry.schema));
}

/** Why `obj` does not validate, or undefined. */
function violation(obj: Obj): string | undefined {
  const key = `${obj.apiVersion}/${obj.kind}`;
  const crd = crdValidators.get(key);
  const model = models[key];
  if (!crd && !model) return `no schema known for ${key}: add one to this test`;
  if (crd && !crd(JSON.parse(JSON.stringify(obj)) as unknown)) return `${key} ${obj.metadata.name}: ${ajv.errorsText(crd.errors)}`;
  if (model) {
    try {
      new model(obj as never).validate();
    } catch (error) {
      return `${key} ${obj.metadata.name}: ${(error as Error).message}`;
    }
  }
  return undefined;
}

/** The object and, for ManifestWorks, every manifest inside. */
function withNested(obj: Obj): Obj[] {
  if (obj.kind !== 'ManifestWork') return [obj];
  const manifests = ((obj.spec as { workload: { manifests: Obj[] } }).workload.manifests ?? []);
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
      source: AppSource.helm({ repoURL: 'https://stefanprodan.github.io/podinfo', chart: 'podinfo', targetRevision: '6.7.1', releaseName: 'web', values: { a: [1, 2] } }),
      destinationNamespace: 'podinfo',
      project: 'web-team',
      syncOptions: ['ServerSideApply=true'],
      pruneOnDelete: true,
      spokes: [east],
      resources: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterroles'], clusterScoped: true, kinds: ['ClusterRole'] }],
    });
    const objects = everyObject(fleet.renderObjects());
    expect(objects.filter((o) => o.kind === 'AppProject').map((o) => (o.spec as { clusterResourceWhitelist?: unknown }).clusterResourceWhitelist)).toStrictEqual([
      [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }],
      [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' }],
    ]);
    expect(objects.filter((o) => o.kind === 'AppProject').map((o) => o.metadata.name)).toStrictEqual(['web-team', 'web-team']);
    expect(objects.map(violation).filter(Boolean)).toStrictEqual([]);
  });

  test('fails when an object breaks its schema (the check is real)', () => {
    const bad = { apiVersion: 'cluster.open-cluster-management.io/v1beta1', kind: 'Placement', metadata: { name: 'p' }, spec: { numberOfClusters: 'two' } };
    expect(violation(bad)).toContain('numberOfClusters must be integer');
    const badApp = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'a' }, spec: { project: 'default' } };
    expect(violation(badApp)).toContain("must have required property 'destination'");
  });
});
