/**
 * The resource types the fake API server serves: every CRD envelope under imports/schemas, the core
 * kinds the controller touches, and anything registered at runtime (a CRD object or a definition).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Schema } from './ownership.js';

export interface ResourceDefinition {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** e.g. ['status'] when the kind has a status subresource. */
  readonly subresources: readonly string[];
  /** OpenAPI v3 schema (custom resources only); objects are validated against it. */
  readonly schema?: Schema;
  /** true for custom resources (CRD semantics: validation, generation, 415 for strategic merge). */
  readonly custom: boolean;
}

export function apiVersionOf(def: Pick<ResourceDefinition, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

export function resourceKey(def: Pick<ResourceDefinition, 'group' | 'version' | 'plural'>): string {
  return `${def.group}/${def.version}/${def.plural}`;
}

/** `plural` for the core group, `plural.group` otherwise (how the server names a resource in messages). */
export function qualifiedName(def: Pick<ResourceDefinition, 'group' | 'plural'>): string {
  return def.group ? `${def.plural}.${def.group}` : def.plural;
}

const CORE: ResourceDefinition[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    subresources: ['status'],
    custom: false,
  },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, subresources: [], custom: false },
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    subresources: [],
    custom: false,
  },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true, subresources: [], custom: false },
  {
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    subresources: [],
    custom: false,
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
    subresources: [],
    custom: false,
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    subresources: ['status'],
    custom: false,
  },
];

interface SchemaEnvelope {
  group: string;
  kind: string;
  plural: string;
  version: string;
  scope: 'Namespaced' | 'Cluster';
  subresources: string[];
  schema: Schema;
}

const SCHEMA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'imports', 'schemas');

const loaded = new Map<string, ResourceDefinition[]>();

/** Definitions for every envelope in imports/schemas (read once per process; schemas are shared, never mutated). */
export function importedDefinitions(dir = SCHEMA_DIR): ResourceDefinition[] {
  let defs = loaded.get(dir);
  if (!defs) {
    defs = readDefinitions(dir);
    loaded.set(dir, defs);
  }
  return defs;
}

function readDefinitions(dir: string): ResourceDefinition[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const env = JSON.parse(readFileSync(join(dir, f), 'utf8')) as SchemaEnvelope;
      return {
        group: env.group,
        version: env.version,
        kind: env.kind,
        plural: env.plural,
        namespaced: env.scope === 'Namespaced',
        subresources: env.subresources ?? [],
        schema: env.schema,
        custom: true,
      };
    });
}

/** Definitions from an apiextensions.k8s.io/v1 CustomResourceDefinition object (one per served version). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a CRD object is read as untyped JSON
export function definitionsFromCrd(crd: Record<string, any>): ResourceDefinition[] {
  const spec = crd.spec ?? {};
  const names = spec.names ?? {};
  return ((spec.versions ?? []) as Array<Record<string, any>>) // eslint-disable-line @typescript-eslint/no-explicit-any
    .filter((v) => v.served !== false)
    .map((v) => ({
      group: spec.group,
      version: v.name,
      kind: names.kind,
      plural: names.plural,
      namespaced: spec.scope !== 'Cluster',
      subresources: Object.keys(v.subresources ?? {}),
      schema: v.schema?.openAPIV3Schema,
      custom: true,
    }));
}

export class Registry {
  private readonly byKey = new Map<string, ResourceDefinition>();

  constructor(definitions: ResourceDefinition[] = [...CORE, ...importedDefinitions()]) {
    for (const def of definitions) this.register(def);
  }

  register(def: ResourceDefinition): void {
    this.byKey.set(resourceKey(def), def);
  }

  all(): ResourceDefinition[] {
    return [...this.byKey.values()];
  }

  byPath(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.byKey.get(`${group}/${version}/${plural}`);
  }

  /**
   * Resolves `plural`, `plural.group`, `group/version/plural` or an `apiVersion` + `kind` pair.
   * A bare plural must be unambiguous (the preferred, i.e. last registered, version wins for one group).
   */
  resolve(ref: string | { apiVersion: string; kind: string }): ResourceDefinition {
    if (typeof ref !== 'string') {
      const [group, version] = ref.apiVersion.includes('/') ? ref.apiVersion.split('/') : ['', ref.apiVersion];
      const def = this.all().find((d) => d.group === group && d.version === version && d.kind === ref.kind);
      if (!def) throw new Error(`fake apiserver: no resource for ${ref.apiVersion} ${ref.kind}`);
      return def;
    }
    const direct = this.byKey.get(ref);
    if (direct) return direct;
    const dot = ref.indexOf('.');
    const plural = dot < 0 ? ref : ref.slice(0, dot);
    const group = dot < 0 ? undefined : ref.slice(dot + 1);
    const matches = this.all().filter((d) => d.plural === plural && (group === undefined || d.group === group));
    const groups = new Set(matches.map((d) => d.group));
    if (matches.length === 0) throw new Error(`fake apiserver: unknown resource ${JSON.stringify(ref)}`);
    if (groups.size > 1)
      throw new Error(`fake apiserver: resource ${JSON.stringify(ref)} is ambiguous; use plural.group`);
    return matches[matches.length - 1];
  }
}
