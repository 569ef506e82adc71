/**
 * The schema validators `pullfleet validate` and synth run, generated at import time (npm run import) instead
 * of compiled at run time: each schema becomes one CommonJS module of ajv standalone code under
 * imports/validators/, and imports/validators/index.json lists them by apiVersion/kind. The program loads a
 * module with a plain require the first time it meets its kind; nothing is compiled, cached or evaluated at
 * run time.
 *
 * The output depends only on the schemas and the ajv version (one fresh ajv per schema, names in a fixed
 * order), so running the import twice writes the same bytes, which CI checks.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { _, Ajv, type Options as AjvOptions, type ValidateFunction } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * How a schema is compiled. Defaults are never applied (validation does not change the object). Formats are
 * checked only with `formats` (the Argo CD kinds, whose date-time and int64 fields kubernetes-models checked
 * with ajv-formats' full formats); the OCM and pullfleet kinds never had their formats checked.
 */
export function validatorOptions(formats: boolean): AjvOptions {
  if (!formats) return { strict: false, allErrors: true, validateFormats: false, code: { source: true } };
  return {
    strict: false,
    allErrors: true,
    formats: Object.fromEntries(CHECKED_FORMATS.map((name) => [name, fullFormats[name]])),
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
  };
}

/** The formats checked with `formats`: those the Argo CD CRDs use. */
const CHECKED_FORMATS = ['date-time', 'int32', 'int64'] as const;

/** ajv's standalone code generator (a CommonJS module whose export is `default`). */
const { default: standaloneCode } = createRequire(import.meta.url)('ajv/dist/standalone') as {
  default: (ajv: Ajv, validate: ValidateFunction) => string;
};

/** A subschema whose JSON text is shorter than this is left in place even when it repeats. */
const SHARED_MIN_LENGTH = 256;

/** The SHA-256 of a schema's JSON text: the index records it, so a test can tell a stale validator. */
export function schemaHash(schema: unknown): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

/**
 * The same schema with every large subschema that occurs more than once moved to `definitions` and referenced
 * by `$ref`, so ajv generates its code once. The Argo CD ApplicationSet schema repeats the Application spec in
 * every generator's template (and again in nested matrix and merge generators): inlined, its validator is
 * about 7 MB of code. A `$ref` changes no instance path, so every finding reads the same.
 */
export function shareRepeatedSubschemas(schema: Json): Json {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const counts = new Map<string, number>();
  countSubschemas(schema, counts);
  const names = new Map<string, string>();
  const definitions: { [key: string]: Json } = {};
  const share = (node: Json, root: boolean): Json => {
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((item) => share(item, false));
    const text = JSON.stringify(node);
    if (!root && text.length >= SHARED_MIN_LENGTH && (counts.get(text) ?? 0) > 1) {
      let name = names.get(text);
      if (!name) {
        name = `shared${names.size}`;
        names.set(text, name);
        definitions[name] = {}; // reserved first, so the numbering follows the order of first use
        definitions[name] = shareChildren(node, share);
      }
      return { $ref: `#/definitions/${name}` };
    }
    return shareChildren(node, share);
  };
  const shared = inlineSingleUses(share(schema, true) as { [key: string]: Json }, definitions);
  return Object.keys(shared.definitions).length ? { ...shared.root, definitions: shared.definitions } : shared.root;
}

/** The children of a schema object, each passed through `share` (property names are data, kept as they are). */
function shareChildren(node: { [key: string]: Json }, share: (node: Json, root: boolean) => Json): Json {
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    const isMap =
      (key === 'properties' || key === 'patternProperties' || key === 'definitions') &&
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value);
    out[key] = isMap
      ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, share(sub, false)]))
      : key === 'enum' || key === 'required' || key === 'default' || key === 'example'
        ? value
        : share(value, false);
  }
  return out;
}

/** Counts every schema object by its JSON text (values of enum, required and default are data, not schemas). */
function countSubschemas(node: Json, counts: Map<string, number>): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) countSubschemas(item, counts);
    return;
  }
  const text = JSON.stringify(node);
  if (text.length >= SHARED_MIN_LENGTH) counts.set(text, (counts.get(text) ?? 0) + 1);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'enum' || key === 'required' || key === 'default' || key === 'example') continue;
    if (
      (key === 'properties' || key === 'patternProperties') &&
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value)
    ) {
      for (const sub of Object.values(value)) countSubschemas(sub, counts);
    } else {
      countSubschemas(value, counts);
    }
  }
}

/**
 * A subschema repeated only inside one larger shared subschema ends up referenced once: it is put back in
 * place, and the definitions left are renumbered in order of first use.
 */
function inlineSingleUses(
  root: { [key: string]: Json },
  definitions: { [key: string]: Json },
): { root: { [key: string]: Json }; definitions: { [key: string]: Json } } {
  const refs = new Map<string, number>();
  const countRefs = (node: Json): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(countRefs);
    if (typeof node.$ref === 'string') refs.set(node.$ref, (refs.get(node.$ref) ?? 0) + 1);
    Object.values(node).forEach(countRefs);
  };
  countRefs(root);
  Object.values(definitions).forEach(countRefs);
  const kept = new Map<string, string>();
  const out: { [key: string]: Json } = {};
  const rewrite = (node: Json): Json => {
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map(rewrite);
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/definitions/')) {
      const name = node.$ref.slice('#/definitions/'.length);
      if ((refs.get(node.$ref) ?? 0) < 2) return rewrite(definitions[name]);
      let renamed = kept.get(name);
      if (!renamed) {
        renamed = `shared${kept.size}`;
        kept.set(name, renamed);
        out[renamed] = {};
        out[renamed] = rewrite(definitions[name]);
      }
      return { $ref: `#/definitions/${renamed}` };
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, rewrite(value)]));
  };
  return { root: rewrite(root) as { [key: string]: Json }, definitions: out };
}

const nullable = (schema: { [key: string]: Json }): { [key: string]: Json } => ({ ...schema, nullable: true });
const STRING = nullable({ type: 'string' });
const TIME = nullable({ type: 'string', format: 'date-time' });
const STRING_MAP = nullable({ type: 'object', additionalProperties: { type: 'string' } });

/**
 * The fields of Kubernetes ObjectMeta (meta/v1) and their types. A CRD's schema declares `metadata` as a bare
 * object, because the API server checks metadata itself; kubernetes-models checked these types for the Argo CD
 * kinds, so their generated validators keep checking them. Optional fields accept null, as they did there.
 */
export const OBJECT_META: Json = {
  type: 'object',
  properties: {
    annotations: STRING_MAP,
    creationTimestamp: TIME,
    deletionGracePeriodSeconds: nullable({ type: 'integer' }),
    deletionTimestamp: TIME,
    finalizers: nullable({ type: 'array', items: { type: 'string' } }),
    generateName: STRING,
    generation: nullable({ type: 'integer' }),
    labels: STRING_MAP,
    managedFields: nullable({
      type: 'array',
      items: {
        type: 'object',
        properties: {
          apiVersion: STRING,
          fieldsType: STRING,
          fieldsV1: nullable({ type: 'object' }),
          manager: STRING,
          operation: STRING,
          subresource: STRING,
          time: TIME,
        },
      },
    }),
    name: STRING,
    namespace: STRING,
    ownerReferences: nullable({
      type: 'array',
      items: {
        type: 'object',
        required: ['apiVersion', 'kind', 'name', 'uid'],
        properties: {
          apiVersion: { type: 'string' },
          blockOwnerDeletion: nullable({ type: 'boolean' }),
          controller: nullable({ type: 'boolean' }),
          kind: { type: 'string' },
          name: { type: 'string' },
          uid: { type: 'string' },
        },
      },
    }),
    resourceVersion: STRING,
    selfLink: STRING,
    uid: STRING,
  },
};

/** The schema with its top-level `metadata` checked as {@link OBJECT_META}. */
export function withObjectMeta(schema: Json): Json {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const properties = schema.properties;
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) return schema;
  return { ...schema, properties: { ...properties, metadata: OBJECT_META } };
}

/**
 * The schema with every optional field that has a type also accepting null, as kubernetes-models judged the
 * Argo CD kinds.
 */
export function withNullableOptionals(schema: Json): Json {
  if (schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map(withNullableOptionals);
  const out: { [key: string]: Json } = {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'enum' || key === 'required' || key === 'default') out[key] = value;
    else if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => {
          const inner = withNullableOptionals(sub);
          const optional = !required.has(name) && inner !== null && typeof inner === 'object' && !Array.isArray(inner);
          return [name, optional && typeof inner.type === 'string' ? { ...inner, nullable: true } : inner];
        }),
      );
    } else out[key] = withNullableOptionals(value);
  }
  return out;
}

/**
 * The CommonJS module of ajv standalone code that validates `schema`; `source` names where the schema came from,
 * `formats` whether it checks formats ({@link validatorOptions}).
 */
export function validatorModule(schema: Json, source: string, formats: boolean): string {
  const ajv = new Ajv(validatorOptions(formats));
  const validate = ajv.compile(shareRepeatedSubschemas(schema) as object);
  const code = standaloneCode(ajv, validate);
  return `// Generated by scripts/import-crds.ts from ${source} (ajv standalone code); do not edit: run npm run import.\n${code}\n`;
}

/** How an Argo CD kind's CRD schema is judged: {@link withObjectMeta} and {@link withNullableOptionals}. */
export function argoSchema(schema: Json): Json {
  return withObjectMeta(withNullableOptionals(schema));
}
