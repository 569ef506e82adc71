/**
 * Regenerates everything under imports/ from the upstream CRDs in ../shared/crds:
 *  - imports/schemas/*.json: each served version's openAPIV3Schema with descriptions stripped,
 *    the one schema source for OCM and Argo CD kinds: the API test double serves them, and the validators below
 *    are generated from them;
 *  - imports/validators/*.cjs and index.json: ajv standalone code for each of those schemas and the FleetReport
 *    CRD pullfleet renders, which `pullfleet validate` and synth load instead of compiling (scripts/validator-code.ts);
 *  - imports/*.ts: typed cdk8s classes (`cdk8s import`) for the kinds the constructs build with them
 *    (ManagedClusterSet, ManagedClusterSetBinding); every other kind is written as a plain ApiObject.
 * The CRD files themselves never enter the project: only their structure does.
 *
 * Usage: npm run import [-- --crds <dir>] [--out <dir>]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import {
  FLEET_REPORT_API_VERSION,
  FLEET_REPORT_GROUP,
  FLEET_REPORT_KIND,
  FLEET_REPORT_VERSION,
  fleetReportCrd,
} from '../src/model/report/report-crd.js';
import { argoSchema, schemaHash, validatorModule } from './validator-code.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index > 0 && process.argv[index + 1] ? resolve(process.argv[index + 1]) : fallback;
}
const crdRoot = option('--crds', resolve(root, '..', 'shared', 'crds'));
const out = option('--out', join(root, 'imports'));

/**
 * CRDs that get typed cdk8s classes: only those src/ imports (src/constructs/cluster-set.ts), so that
 * imports/ holds no module nothing uses. The prefix keeps one group's kinds from overwriting each other.
 */
const TYPED: ReadonlyArray<{ file: string; prefix: string }> = [
  { file: 'cluster.open-cluster-management.io/ManagedClusterSet.yaml', prefix: 'managedclusterset' },
  { file: 'cluster.open-cluster-management.io/ManagedClusterSetBinding.yaml', prefix: 'managedclustersetbinding' },
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The parts of a CustomResourceDefinition this script reads; everything else is copied as it is. */
interface Crd {
  kind?: string;
  spec: {
    group: string;
    names: { kind: string; plural: string };
    scope: string;
    versions: CrdVersion[];
  };
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: Record<string, Json>;
  schema: { openAPIV3Schema: Json };
}

/** Removes the prose of a structural schema, keeping every field name (property keys are data, not prose). */
export function stripDescriptions(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(stripDescriptions);
  if (schema === null || typeof schema !== 'object') return schema;
  const result: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description' && typeof value === 'string') continue;
    if (
      (key === 'properties' || key === 'patternProperties' || key === 'definitions') &&
      value &&
      typeof value === 'object' &&
      !Array.isArray(value)
    ) {
      result[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, stripDescriptions(sub)]));
    } else {
      result[key] = stripDescriptions(value);
    }
  }
  return result;
}

function crdFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? crdFiles(join(dir, entry.name))
        : entry.name.endsWith('.yaml')
          ? [join(dir, entry.name)]
          : [],
    )
    .sort();
}

/** One generated validator, as imports/validators/index.json lists it under its apiVersion/kind. */
interface ValidatorEntry {
  /** The module under imports/validators/. */
  module: string;
  /** Where its schema came from, relative to imports/ (or the source file for FleetReport). */
  source: string;
  /** SHA-256 of the schema's JSON text (scripts/validator-code.ts: schemaHash). */
  schema: string;
}

/** Writes imports/validators/: a module per schema envelope in imports/schemas, one for FleetReport, and the index. */
function writeValidators(): void {
  const dir = join(out, 'validators');
  mkdirSync(dir, { recursive: true });
  const index: Record<string, ValidatorEntry> = {};
  const write = (key: string, base: string, schema: Json, source: string, formats = false): void => {
    const module = `${base}.cjs`;
    writeFileSync(join(dir, module), validatorModule(schema, source, formats));
    index[key] = { module, source, schema: schemaHash(schema) };
  };
  for (const file of readdirSync(join(out, 'schemas')).sort()) {
    const envelope = JSON.parse(readFileSync(join(out, 'schemas', file), 'utf8')) as {
      group: string;
      kind: string;
      version: string;
      schema: Json;
    };
    const apiVersion = envelope.group ? `${envelope.group}/${envelope.version}` : envelope.version;
    // Argo CD kinds are judged as kubernetes-models judged them: metadata checked, optional fields nullable,
    // formats checked.
    const argo = envelope.group === 'argoproj.io';
    const schema = argo ? argoSchema(envelope.schema) : envelope.schema;
    write(`${apiVersion}/${envelope.kind}`, file.replace(/\.json$/, ''), schema, `schemas/${file}`, argo);
  }
  const report = fleetReportCrd() as { spec: { versions: Array<{ schema: { openAPIV3Schema: Json } }> } };
  write(
    `${FLEET_REPORT_API_VERSION}/${FLEET_REPORT_KIND}`,
    `${FLEET_REPORT_GROUP}_${FLEET_REPORT_KIND}_${FLEET_REPORT_VERSION}`,
    report.spec.versions[0].schema.openAPIV3Schema,
    'src/model/report/report-crd.ts',
  );
  const sorted = Object.fromEntries(
    Object.keys(index)
      .sort()
      .map((key) => [key, index[key]]),
  );
  writeFileSync(join(dir, 'index.json'), JSON.stringify(sorted, null, 2) + '\n');
  console.log(`imports: validators <- ${Object.keys(sorted).length} schemas`);
}

function main(): void {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'schemas'), { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'pullfleet-import-'));
  const stripped = new Map<string, string>();
  try {
    for (const file of crdFiles(crdRoot)) {
      const rel = file.slice(crdRoot.length + 1);
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
        const crd = doc.toJS() as Crd | null;
        if (crd?.kind !== 'CustomResourceDefinition') continue;
        for (const version of crd.spec.versions ?? []) {
          const schema = stripDescriptions(version.schema?.openAPIV3Schema ?? {});
          const name = `${crd.spec.group}_${crd.spec.names.kind}_${version.name}.json`;
          const envelope = {
            group: crd.spec.group,
            kind: crd.spec.names.kind,
            plural: crd.spec.names.plural,
            version: version.name,
            scope: crd.spec.scope,
            served: version.served,
            storage: version.storage,
            subresources: Object.keys(version.subresources ?? {}).sort(),
            schema,
          };
          writeFileSync(join(out, 'schemas', name), JSON.stringify(envelope) + '\n');
        }
        const copy = {
          ...crd,
          spec: {
            ...crd.spec,
            versions: crd.spec.versions.map((v) => ({
              ...v,
              schema: { openAPIV3Schema: stripDescriptions(v.schema.openAPIV3Schema) },
            })),
          },
        };
        const target = join(work, rel.replace(/\//g, '__'));
        writeFileSync(target, stringify(copy));
        stripped.set(rel, target);
      }
    }
    for (const { file, prefix } of TYPED) {
      const path = stripped.get(file);
      if (!path) throw new Error(`import-crds: ${file} not found under ${crdRoot}`);
      // `cdk8s import` takes one spec per call.
      const args = [
        'import',
        '--language',
        'typescript',
        '--output',
        out,
        '--no-check-upgrade',
        '--no-save',
        `${prefix}:=${path}`,
      ];
      execFileSync(join(root, 'node_modules', '.bin', 'cdk8s'), args, {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      console.log(`imports: ${prefix} <- ${file}`);
    }
    writeValidators();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main();
