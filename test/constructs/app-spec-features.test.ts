/**
 * The table of src/model/core/argo-spec-features.ts against the Application CRDs of every Argo CD release users
 * run (../shared/upstream-versions/argo-cd): each field entry's `since` is the first release whose CRD has the
 * field (`before 2.14` when the oldest has it), and every field added after the oldest release has an entry.
 */
import { describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  ARGO_FIELD_FEATURES,
  ARGO_VALUE_FEATURES,
  BEFORE_TRACKED,
  argoSpecRequirements,
  argoSpecUnsupported,
  argoVersionHas,
} from '../../src/model/core/argo-spec-features.js';
import type { JsonObject } from '../../src/model/core/types.js';

const ARGO = join(process.cwd(), '..', 'shared', 'upstream-versions', 'argo-cd');

type Schema = { properties?: Record<string, Schema>; items?: Schema; additionalProperties?: Schema | boolean };

/** Every field path below `spec` a CRD declares: `source.helm.valueFiles`, `sources.helm.valueFiles`, ... */
function specPaths(tag: string): Set<string> {
  const crd = parseYaml(readFileSync(join(ARGO, tag, 'application-crd.yaml'), 'utf8')) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
  };
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties!.spec;
  const out = new Set<string>();
  const walk = (schema: Schema, at: string) => {
    if (at) out.add(at);
    for (const [key, child] of Object.entries(schema.properties ?? {})) walk(child, at ? `${at}.${key}` : key);
    if (schema.items) walk(schema.items, at);
  };
  walk(spec, '');
  return out;
}

const minor = (tag: string) => tag.replace(/^v/, '').split('.').slice(0, 2).join('.');
const tags = existsSync(ARGO)
  ? readdirSync(ARGO).sort((a, b) => {
      const [x, y] = minor(a).split('.').map(Number);
      const [u, v] = minor(b).split('.').map(Number);
      return x !== u ? x - u : y - v;
    })
  : [];
const paths = new Map(tags.map((t) => [t, specPaths(t)]));

/** The CRD paths one table field stands for (`source.` is `source` and every item of `sources`). */
const crdPathsOf = (field: string) =>
  field.startsWith('source.') ? [field, `sources.${field.slice('source.'.length)}`] : [field];

describe('argo-spec-features table against the Application CRDs', () => {
  test('the CRDs of the releases are there (v2.14 to v3.5)', () => {
    expect(tags.map(minor)).toStrictEqual(['2.14', '3.0', '3.1', '3.2', '3.3', '3.4', '3.5']);
  });

  test.each(ARGO_FIELD_FEATURES.map((f) => [f.field, f.since] as const))(
    'GIVEN field %s WHEN read off the CRDs THEN it first appears in %s and stays',
    (field, since) => {
      for (const crdPath of crdPathsOf(field)) {
        const first = tags.find((t) => paths.get(t)!.has(crdPath));
        expect(first).toBeDefined();
        const expected = first === tags[0] ? BEFORE_TRACKED : minor(first!);
        expect(`${crdPath}: ${since}`).toBe(`${crdPath}: ${expected}`);
        // Never removed again.
        for (const t of tags.slice(tags.indexOf(first!)))
          expect(`${t} ${crdPath} ${paths.get(t)!.has(crdPath)}`).toBe(`${t} ${crdPath} true`);
      }
    },
  );

  test('every field a later release added to the spec is in the table', () => {
    const covered = (p: string) =>
      ARGO_FIELD_FEATURES.some((f) => crdPathsOf(f.field).some((c) => p === c || p.startsWith(`${c}.`)));
    const missing: string[] = [];
    for (let i = 1; i < tags.length; i++)
      for (const p of paths.get(tags[i])!)
        if (!paths.get(tags[i - 1])!.has(p) && !covered(p)) missing.push(`${minor(tags[i])}: ${p}`);
    expect(missing).toStrictEqual([]);
  });

  test('every value feature names where upstream shows it', () => {
    for (const f of ARGO_VALUE_FEATURES) expect(f.upstream).toMatch(/^argoproj\/argo-cd v\d+\.\d+\.\d+ \S+/);
  });
});

describe('argoSpecRequirements', () => {
  test('GIVEN a spec using new and old fields THEN each is listed with its path and release', () => {
    const spec: JsonObject = {
      project: 'default',
      sources: [
        {
          repoURL: 'oci://ghcr.io/example/charts/web',
          path: '.',
          targetRevision: '1.0.0',
          helm: { skipSchemaValidation: true },
        },
        { repoURL: 'https://git.example.com/values', targetRevision: 'main', ref: 'values' },
      ],
      destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
      syncPolicy: { automated: { enabled: true }, retry: { limit: 2 } },
      ignoreDifferences: [
        { kind: 'Deployment', jsonPointers: ['/spec/replicas'] },
        { kind: 'Service', jqPathExpressions: ['.spec'] },
      ],
    };
    expect(argoSpecRequirements(spec)).toStrictEqual([
      { path: 'spec.sources', since: 'before 2.14', what: 'several sources (spec.sources)' },
      { path: 'spec.sources[1].ref', since: 'before 2.14', what: 'a ref source (value files from another repository)' },
      { path: 'spec.sources[0].helm.skipSchemaValidation', since: 'before 2.14', what: 'Helm skipSchemaValidation' },
      { path: 'spec.ignoreDifferences', since: 'before 2.14', what: 'ignoreDifferences' },
      {
        path: 'spec.ignoreDifferences[1].jqPathExpressions',
        since: 'before 2.14',
        what: 'ignoreDifferences jqPathExpressions',
      },
      { path: 'spec.syncPolicy.automated.enabled', since: '3.1', what: 'syncPolicy.automated.enabled' },
      { path: 'spec.syncPolicy.retry', since: 'before 2.14', what: 'sync retries' },
      {
        path: 'spec.sources[0].repoURL',
        since: '3.1',
        what: 'an oci:// repoURL (an OCI artifact source, also for Helm charts from an OCI registry)',
      },
    ]);
  });

  test('GIVEN a spoke on 3.0 THEN only the 3.1 features are unsupported; on 3.1 none', () => {
    const spec: JsonObject = {
      source: { repoURL: 'oci://ghcr.io/example/charts/web', path: '.', targetRevision: '1.0.0' },
      syncPolicy: { automated: { enabled: false } },
    };
    expect(argoSpecUnsupported(spec, 'v3.0.23').map((r) => r.path)).toStrictEqual([
      'spec.syncPolicy.automated.enabled',
      'spec.source.repoURL',
    ]);
    expect(argoSpecUnsupported(spec, '3.1')).toStrictEqual([]);
  });

  test.each([
    ['2.14.21', '3.0', false],
    ['3.0', '3.0', true],
    ['v3.10.1', '3.5', true],
    ['2.9', BEFORE_TRACKED, true],
    ['not a version', '3.0', false],
  ])('argoVersionHas(%s, %s) is %s', (version, since, expected) => {
    expect(argoVersionHas(version, since)).toBe(expected);
  });
});
