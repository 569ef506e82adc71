/**
 * Schema validation of rendered objects, at synth time and by `pullfleet validate <dir>`: Argo CD
 * and core kinds with the kubernetes-models packages, OCM and pullfleet kinds with ajv against the
 * description-stripped CRD schemas in imports/schemas (and the FleetReport CRD pullfleet renders).
 * Each schema is compiled once, on first use. {@link checkObject} adds the rules of object-rules.ts
 * and descends into ManifestWork manifests.
 */
import * as fs from 'node:fs';
import { AppProject } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/AppProject';
import { Application } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/Application';
import { ApplicationSet } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/ApplicationSet';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { PriorityClass } from 'kubernetes-models/scheduling.k8s.io/v1/PriorityClass';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { LimitRange } from 'kubernetes-models/v1/LimitRange';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import { ResourceQuota } from 'kubernetes-models/v1/ResourceQuota';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import {
  objectRuleFindings,
  type PlainObject,
  type ObjectFinding,
  type ObjectRuleOptions,
} from '../model/validation/object-rules.js';
import { FLEET_REPORT_API_VERSION, FLEET_REPORT_KIND, fleetReportCrd } from '../model/report/report-crd.js';

type ModelClass = new (data: never) => { validate(): void };

/** apiVersion/kind → the kubernetes-models class that validates it. */
const MODELS: Record<string, ModelClass> = Object.fromEntries(
  (
    [
      ['argoproj.io/v1alpha1/Application', Application],
      ['argoproj.io/v1alpha1/ApplicationSet', ApplicationSet],
      ['argoproj.io/v1alpha1/AppProject', AppProject],
      ['v1/ConfigMap', ConfigMap],
      ['v1/LimitRange', LimitRange],
      ['v1/Namespace', Namespace],
      ['v1/PersistentVolumeClaim', PersistentVolumeClaim],
      ['v1/Pod', Pod],
      ['v1/ResourceQuota', ResourceQuota],
      ['v1/Secret', Secret],
      ['v1/Service', Service],
      ['v1/ServiceAccount', ServiceAccount],
      ['apps/v1/DaemonSet', DaemonSet],
      ['apps/v1/Deployment', Deployment],
      ['apps/v1/StatefulSet', StatefulSet],
      ['autoscaling/v2/HorizontalPodAutoscaler', HorizontalPodAutoscaler],
      ['batch/v1/CronJob', CronJob],
      ['batch/v1/Job', Job],
      ['coordination.k8s.io/v1/Lease', Lease],
      ['networking.k8s.io/v1/Ingress', Ingress],
      ['networking.k8s.io/v1/NetworkPolicy', NetworkPolicy],
      ['policy/v1/PodDisruptionBudget', PodDisruptionBudget],
      ['rbac.authorization.k8s.io/v1/ClusterRole', ClusterRole],
      ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', ClusterRoleBinding],
      ['rbac.authorization.k8s.io/v1/Role', Role],
      ['rbac.authorization.k8s.io/v1/RoleBinding', RoleBinding],
      ['scheduling.k8s.io/v1/PriorityClass', PriorityClass],
      ['apiextensions.k8s.io/v1/CustomResourceDefinition', CustomResourceDefinition],
      ['admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy', ValidatingAdmissionPolicy],
      ['admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding', ValidatingAdmissionPolicyBinding],
    ] as Array<[string, unknown]>
  ).map(([key, cls]) => [key, cls as ModelClass]),
);

interface SchemaEntry {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly schema: object;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const schemaDir = new URL('../../imports/schemas/', import.meta.url);
let crdSchemas: Map<string, object> | undefined;
const crdValidators = new Map<string, ValidateFunction>();

/** apiVersion/kind → stripped CRD schema, read once. Argo CD kinds are left to kubernetes-models. */
function crdSchemaIndex(): Map<string, object> {
  if (crdSchemas) return crdSchemas;
  crdSchemas = new Map();
  for (const file of fs.readdirSync(schemaDir).sort()) {
    if (!file.endsWith('.json')) continue;
    const entry = JSON.parse(fs.readFileSync(new URL(file, schemaDir), 'utf8')) as SchemaEntry;
    if (entry.group === 'argoproj.io') continue;
    crdSchemas.set(`${entry.group}/${entry.version}/${entry.kind}`, entry.schema);
  }
  const report = fleetReportCrd() as { spec: { versions: Array<{ schema: { openAPIV3Schema: object } }> } };
  crdSchemas.set(`${FLEET_REPORT_API_VERSION}/${FLEET_REPORT_KIND}`, report.spec.versions[0].schema.openAPIV3Schema);
  return crdSchemas;
}

function crdValidator(key: string): ValidateFunction | undefined {
  const cached = crdValidators.get(key);
  if (cached) return cached;
  const schema = crdSchemaIndex().get(key);
  if (!schema) return undefined;
  const validate = ajv.compile(schema);
  crdValidators.set(key, validate);
  return validate;
}

/** Whether pullfleet knows a schema for this apiVersion and kind. */
export function hasSchema(apiVersion: string, kind: string): boolean {
  const key = `${apiVersion}/${kind}`;
  return key in MODELS || crdSchemaIndex().has(key);
}

/** `/spec/x/0/y` → `spec.x[0].y`. */
function fieldPath(instancePath: string): string {
  if (!instancePath) return '(the object)';
  return instancePath
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function valueAt(obj: unknown, instancePath: string): unknown {
  let cur: unknown = obj;
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function shortValue(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function describeError(obj: unknown, e: ErrorObject): ObjectFinding {
  const value = valueAt(obj, e.instancePath);
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'enum')
    message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'required') {
    return { severity: 'error', message: `${fieldPath(e.instancePath)} ${message}: add it (schema)` };
  }
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return {
      severity: 'error',
      message: `${fieldPath(e.instancePath)} has the unknown field "${extra}": remove or rename it (schema)`,
      value: extra,
    };
  }
  return {
    severity: 'error',
    message: `${fieldPath(e.instancePath)} is ${shortValue(value)}, which ${message}: fix the value (schema)`,
    value: typeof value === 'string' ? value : shortValue(value),
  };
}

/** Schema findings for one object (not its nested manifests); undefined when no schema is known. */
export function schemaFindings(obj: PlainObject): ObjectFinding[] | undefined {
  const key = `${String(obj.apiVersion)}/${String(obj.kind)}`;
  const model = MODELS[key];
  if (model) {
    try {
      new model(obj as never).validate();
      return [];
    } catch (error) {
      const errors = (error as { errors?: ErrorObject[] }).errors;
      if (errors?.length) return dedupe(errors.map((e) => describeError(obj, e)));
      return [{ severity: 'error', message: `${(error as Error).message}: fix the object to match its schema` }];
    }
  }
  const validate = crdValidator(key);
  if (!validate) return undefined;
  return validate(obj) ? [] : dedupe((validate.errors ?? []).map((e) => describeError(obj, e)));
}

function dedupe(findings: ObjectFinding[]): ObjectFinding[] {
  const seen = new Set<string>();
  return findings.filter((f) => (seen.has(f.message) ? false : (seen.add(f.message), true)));
}

/** `Kind namespace/name` for messages. */
export function objectLabel(obj: PlainObject): string {
  const meta = obj.metadata ?? {};
  const name = String(meta.name ?? meta.generateName ?? '<no name>');
  return `${String(obj.kind ?? '<no kind>')} ${meta.namespace ? `${String(meta.namespace)}/` : ''}${name}`;
}

/** Options of {@link checkObject}. */
export interface CheckObjectOptions extends ObjectRuleOptions {
  /** Severity of "no schema known for this kind". @default 'warning' */
  readonly unknownKind?: 'warning' | 'ignore';
}

/**
 * Every finding for one object: its schema, the rules Kubernetes applies beyond the schema, and the
 * same for each manifest of a ManifestWork. Messages start with the object (`Kind ns/name: ...`).
 */
export function checkObject(obj: PlainObject, options: CheckObjectOptions = {}): ObjectFinding[] {
  const out: ObjectFinding[] = [];
  const label = objectLabel(obj);
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
    return [
      { severity: 'error', message: `${label}: apiVersion and kind must be strings: this is not a Kubernetes object` },
    ];
  }
  const schema = schemaFindings(obj);
  if (schema === undefined) {
    if (options.unknownKind !== 'ignore')
      out.push({
        severity: 'warning',
        message: `${label}: no schema known for ${obj.apiVersion} ${obj.kind}; only metadata and size were checked`,
      });
  } else {
    for (const f of schema) out.push({ ...f, message: `${label}: ${f.message}` });
  }
  for (const f of objectRuleFindings(obj, options)) out.push({ ...f, message: `${label}: ${f.message}` });
  if (obj.kind === 'ManifestWork') {
    const workload = (obj.spec as { workload?: { manifests?: unknown } } | undefined)?.workload;
    const manifests = Array.isArray(workload?.manifests) ? (workload.manifests as PlainObject[]) : [];
    manifests.forEach((manifest, i) => {
      for (const f of checkObject(manifest, { ...options, inWork: true, sizeBudget: undefined })) {
        out.push({ ...f, message: `${label} manifest[${i}] ${f.message}` });
      }
    });
  }
  return out;
}
