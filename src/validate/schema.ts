/**
 * Schema validation of rendered objects, at synth time and by `pullfleet validate <dir>`: core and Prometheus
 * Operator kinds with the kubernetes-models packages; OCM, Argo CD and pullfleet kinds with the validators
 * `npm run import` generates (scripts/import-crds.ts) from the description-stripped CRD schemas in
 * imports/schemas (the API test double serves the same files) and from the FleetReport CRD pullfleet renders.
 * Each is ajv standalone code, a CommonJS module under imports/validators/ loaded on first use of its kind:
 * nothing is compiled, cached or evaluated at run time. {@link checkObject} adds the rules of
 * object-rules.ts and descends into ManifestWork manifests.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import {
  objectRuleFindings,
  type PlainObject,
  type ObjectFinding,
  type ObjectRuleOptions,
} from '../model/validation/object-rules.js';

/** Loads the validators on first use: a command that validates nothing (or few kinds) does not pay for all. */
const load = createRequire(import.meta.url);

type ModelClass = (new (data: never) => { validate(): void }) & { prototype: { validate(): void } };

/**
 * apiVersion/kind → the kubernetes-models class that validates it (module and export name), loaded on first
 * use of the kind.
 */
const MODELS: ReadonlyMap<string, readonly [string, string]> = new Map(
  (
    [
      ['v1/ConfigMap', 'kubernetes-models/v1/ConfigMap'],
      ['v1/LimitRange', 'kubernetes-models/v1/LimitRange'],
      ['v1/Namespace', 'kubernetes-models/v1/Namespace'],
      ['v1/PersistentVolumeClaim', 'kubernetes-models/v1/PersistentVolumeClaim'],
      ['v1/Pod', 'kubernetes-models/v1/Pod'],
      ['v1/ResourceQuota', 'kubernetes-models/v1/ResourceQuota'],
      ['v1/Secret', 'kubernetes-models/v1/Secret'],
      ['v1/Service', 'kubernetes-models/v1/Service'],
      ['v1/ServiceAccount', 'kubernetes-models/v1/ServiceAccount'],
      ['apps/v1/DaemonSet', 'kubernetes-models/apps/v1/DaemonSet'],
      ['apps/v1/Deployment', 'kubernetes-models/apps/v1/Deployment'],
      ['apps/v1/StatefulSet', 'kubernetes-models/apps/v1/StatefulSet'],
      ['autoscaling/v2/HorizontalPodAutoscaler', 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'],
      ['batch/v1/CronJob', 'kubernetes-models/batch/v1/CronJob'],
      ['batch/v1/Job', 'kubernetes-models/batch/v1/Job'],
      ['coordination.k8s.io/v1/Lease', 'kubernetes-models/coordination.k8s.io/v1/Lease'],
      ['networking.k8s.io/v1/Ingress', 'kubernetes-models/networking.k8s.io/v1/Ingress'],
      ['networking.k8s.io/v1/NetworkPolicy', 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'],
      // ControllerInstall's opt-in monitoring (Prometheus Operator kinds).
      [
        'monitoring.coreos.com/v1/PrometheusRule',
        '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule',
      ],
      [
        'monitoring.coreos.com/v1/ServiceMonitor',
        '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor',
      ],
      ['policy/v1/PodDisruptionBudget', 'kubernetes-models/policy/v1/PodDisruptionBudget'],
      ['rbac.authorization.k8s.io/v1/ClusterRole', 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole'],
      [
        'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
        'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding',
      ],
      ['rbac.authorization.k8s.io/v1/Role', 'kubernetes-models/rbac.authorization.k8s.io/v1/Role'],
      ['rbac.authorization.k8s.io/v1/RoleBinding', 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding'],
      ['scheduling.k8s.io/v1/PriorityClass', 'kubernetes-models/scheduling.k8s.io/v1/PriorityClass'],
      [
        'apiextensions.k8s.io/v1/CustomResourceDefinition',
        'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition',
      ],
      [
        'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy',
        'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy',
      ],
      [
        'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding',
        'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding',
      ],
    ] as Array<[string, string]>
  ).map(([key, module]): [string, readonly [string, string]] => [key, [module, key.slice(key.lastIndexOf('/') + 1)]]),
);

const modelClasses = new Map<string, ModelClass>();

function modelClass(key: string): ModelClass | undefined {
  const cached = modelClasses.get(key);
  if (cached) return cached;
  const entry = MODELS.get(key);
  if (!entry) return undefined;
  const cls = (load(entry[0]) as Record<string, ModelClass>)[entry[1]];
  modelClasses.set(key, cls);
  return cls;
}

/** A validator as ajv standalone code exports it: a function that records its findings on itself. */
interface GeneratedValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** One entry of imports/validators/index.json (written by scripts/import-crds.ts). */
export interface ValidatorEntry {
  /** The module under imports/validators/. */
  readonly module: string;
  /** Where its schema came from. */
  readonly source: string;
  /** SHA-256 of the schema's JSON text. */
  readonly schema: string;
}

/** The generated validators: imports/validators/ beside src/ in a checkout, beside lib/src/ in the package. */
const VALIDATOR_DIR = fileURLToPath(new URL('../../imports/validators/', import.meta.url));
let validatorIndex: Readonly<Record<string, ValidatorEntry>> | undefined;
const validators = new Map<string, GeneratedValidator>();

/** apiVersion/kind → generated validator entry, read once. */
export function generatedValidators(): Readonly<Record<string, ValidatorEntry>> {
  validatorIndex ??= load(`${VALIDATOR_DIR}index.json`) as Record<string, ValidatorEntry>;
  return validatorIndex;
}

function crdValidator(key: string): GeneratedValidator | undefined {
  const cached = validators.get(key);
  if (cached) return cached;
  const entry = Object.hasOwn(generatedValidators(), key) ? generatedValidators()[key] : undefined;
  if (!entry) return undefined;
  const validate = load(`${VALIDATOR_DIR}${entry.module}`) as GeneratedValidator;
  validators.set(key, validate);
  return validate;
}

/** Whether pullfleet knows a schema for this apiVersion and kind. */
export function hasSchema(apiVersion: string, kind: string): boolean {
  const key = `${apiVersion}/${kind}`;
  return MODELS.has(key) || Object.hasOwn(generatedValidators(), key);
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

/** Keywords kubernetes-models words differently from ajv: every kind is reported in its words. */
const KEYWORD_WORDING: Readonly<Record<string, string>> = {
  anyOf: 'must match a schema in "anyOf"',
  oneOf: 'must match exactly one schema in "oneOf"',
  not: 'must NOT be valid according to schema in "not"',
};

function describeError(obj: unknown, e: ErrorObject): ObjectFinding {
  const value = valueAt(obj, e.instancePath);
  let message = KEYWORD_WORDING[e.keyword] ?? e.message ?? 'is invalid';
  if (e.keyword === 'enum')
    message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'required') {
    // Worded as kubernetes-models words it (ajv quotes the name): the same for every kind.
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return {
      severity: 'error',
      message: `${fieldPath(e.instancePath)} must have required property ${missing}: add it (schema)`,
    };
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
  const model = modelClass(key);
  if (model) {
    // The model's validator runs on the object itself: `new model(obj)` would first copy it whole, which
    // costs more than the check. A rendered object is plain JSON (no undefined values), so the copy holds the
    // same data; should the check fail, it runs again as before, on the copy, for the messages.
    try {
      model.prototype.validate.call(obj);
      return [];
    } catch {
      // reported below
    }
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
