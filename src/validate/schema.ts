/**
 * Schema validation of rendered objects, at synth time and by `pullfleet validate <dir>`: Argo CD,
 * Prometheus Operator and core kinds with the kubernetes-models packages, OCM and pullfleet kinds with ajv against the
 * description-stripped CRD schemas in imports/schemas (and the FleetReport CRD pullfleet renders).
 * Validators are loaded on first use of their kind; the code ajv compiles for a CRD schema is kept in
 * node_modules/.cache/pullfleet (PULLFLEET_CACHE_DIR overrides) under the hash of the schema, so the next run
 * loads it instead of compiling again. {@link checkObject} adds the rules of object-rules.ts and descends into
 * ManifestWork manifests.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import type { Ajv as AjvClass, ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv';
import {
  objectRuleFindings,
  type PlainObject,
  type ObjectFinding,
  type ObjectRuleOptions,
} from '../model/validation/object-rules.js';
import { FLEET_REPORT_API_VERSION, FLEET_REPORT_KIND, fleetReportCrd } from '../model/report/report-crd.js';

/** Loads the validators and ajv on first use: a command that validates nothing (or few kinds) does not pay for all. */
const load = createRequire(import.meta.url);

type ModelClass = (new (data: never) => { validate(): void }) & { prototype: { validate(): void } };

/**
 * apiVersion/kind → the kubernetes-models class that validates it (module and export name), loaded on first
 * use of the kind.
 */
const MODELS: ReadonlyMap<string, readonly [string, string]> = new Map(
  (
    [
      ['argoproj.io/v1alpha1/Application', '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/Application'],
      ['argoproj.io/v1alpha1/ApplicationSet', '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/ApplicationSet'],
      ['argoproj.io/v1alpha1/AppProject', '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/AppProject'],
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

interface SchemaEntry {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly schema: object;
}

/** How every CRD schema is compiled; part of the key of a compiled validator kept on disk. */
const AJV_OPTIONS: AjvOptions = { strict: false, allErrors: true, validateFormats: false, code: { source: true } };
let ajv: AjvClass | undefined;
const schemaDir = new URL('../../imports/schemas/', import.meta.url);
let crdSchemas: Map<string, object> | undefined;
const crdValidators = new Map<string, ValidateFunction>();

/** apiVersion/kind → stripped CRD schema, read once. Argo CD kinds are left to kubernetes-models. */
function crdSchemaIndex(): Map<string, object> {
  if (crdSchemas) return crdSchemas;
  crdSchemas = new Map();
  for (const file of fs.readdirSync(schemaDir).sort()) {
    // Files are named <group>_<Kind>_<version>.json; the Argo CD ones (the largest) are not even read.
    if (!file.endsWith('.json') || file.startsWith('argoproj.io_')) continue;
    const entry = JSON.parse(fs.readFileSync(new URL(file, schemaDir), 'utf8')) as SchemaEntry;
    if (entry.group === 'argoproj.io') continue;
    crdSchemas.set(`${entry.group}/${entry.version}/${entry.kind}`, entry.schema);
  }
  const report = fleetReportCrd() as { spec: { versions: Array<{ schema: { openAPIV3Schema: object } }> } };
  crdSchemas.set(`${FLEET_REPORT_API_VERSION}/${FLEET_REPORT_KIND}`, report.spec.versions[0].schema.openAPIV3Schema);
  return crdSchemas;
}

/**
 * Where compiled CRD validators are kept between runs: $PULLFLEET_CACHE_DIR, else
 * node_modules/.cache/pullfleet of the working folder when it has a node_modules folder (the type-check's
 * cache sits there too); undefined (nothing kept) otherwise.
 */
function validatorCacheDir(): string | undefined {
  const configured = process.env.PULLFLEET_CACHE_DIR;
  if (configured) return configured;
  const modules = path.join(process.cwd(), 'node_modules');
  return fs.existsSync(modules) ? path.join(modules, '.cache', 'pullfleet') : undefined;
}

/** The first line of a kept validator: the SHA-256 of the code below it, checked before the code is run. */
const CODE_HASH_PREFIX = '// sha256:';

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Runs the module code ajv generated for a validator (CommonJS) and returns the function it exports. */
function evaluateValidator(code: string, file: string): ValidateFunction {
  const wrapper = vm.runInThisContext(`(function (require, module, exports) {${code}\n})`, {
    filename: file,
  }) as (require: NodeJS.Require, module: { exports: unknown }, exports: unknown) => void;
  const module = { exports: {} as unknown };
  wrapper(load, module, module.exports);
  return module.exports as ValidateFunction;
}

/** A kept validator for `key`, when one exists and is intact; undefined otherwise. */
function keptValidator(file: string): ValidateFunction | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const newline = text.indexOf('\n');
  const code = text.slice(newline + 1);
  // A file cut short (or changed by hand) is compiled again, never trusted.
  if (newline < 0 || text.slice(0, newline) !== `${CODE_HASH_PREFIX}${sha256(code)}`) return undefined;
  try {
    const validate = evaluateValidator(code, file);
    return typeof validate === 'function' ? validate : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps the code of a compiled validator for the next run; a cache that cannot be written only costs time. */
function keepValidator(file: string, code: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(temporary, `${CODE_HASH_PREFIX}${sha256(code)}\n${code}`, 'utf8');
    fs.renameSync(temporary, file); // whole files only: a run beside this one reads the old file or the new one
  } catch {
    try {
      fs.rmSync(temporary, { force: true });
    } catch {
      // nothing was written
    }
  }
}

/**
 * The ajv validator of a CRD schema. Compiling one costs tens of milliseconds, so the code ajv generates is
 * kept in `dir` under a key made of the ajv version, the options and the schema itself: a changed schema
 * (or ajv) is always compiled again, an unchanged one is loaded. A kept file whose code does not match the
 * hash on its first line (cut short, edited) is compiled again and replaced.
 */
export function compiledValidator(schema: object, dir: string | undefined = validatorCacheDir()): ValidateFunction {
  const version = (load('ajv/package.json') as { version: string }).version;
  const key = sha256(`${version}\0${JSON.stringify(AJV_OPTIONS)}\0${JSON.stringify(schema)}`).slice(0, 32);
  const file = dir ? path.join(dir, `validator-${key}.cjs`) : undefined;
  const kept = file ? keptValidator(file) : undefined;
  if (kept) return kept;
  if (!ajv) {
    const { Ajv } = load('ajv') as { Ajv: new (options: AjvOptions) => AjvClass };
    ajv = new Ajv(AJV_OPTIONS);
  }
  const validate = ajv.compile(schema);
  if (file) {
    const { default: standaloneCode } = load('ajv/dist/standalone') as {
      default: (ajv: AjvClass, validate: ValidateFunction) => string;
    };
    keepValidator(file, standaloneCode(ajv, validate));
  }
  return validate;
}

function crdValidator(key: string): ValidateFunction | undefined {
  const cached = crdValidators.get(key);
  if (cached) return cached;
  const schema = crdSchemaIndex().get(key);
  if (!schema) return undefined;
  const validate = compiledValidator(schema);
  crdValidators.set(key, validate);
  return validate;
}

/** Whether pullfleet knows a schema for this apiVersion and kind. */
export function hasSchema(apiVersion: string, kind: string): boolean {
  const key = `${apiVersion}/${kind}`;
  return MODELS.has(key) || crdSchemaIndex().has(key);
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
