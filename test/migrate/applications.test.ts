/**
 * `pullfleet migrate applications` on real upstream Application / ApplicationSet YAML (kept under
 * test/fixtures/migrate-applications/, sources named in its README): each case translates to exactly
 * golden/<case>.golden.ts and golden/<case>.report.txt (UPDATE_GOLDEN=1 rewrites them), whatever the order
 * of the documents; the code type-checks against src/ and, synthesized, gives hub Applications and
 * ApplicationSet templates whose spec equals the input's modulo what the report lists; bad input is an
 * error naming the file, document and field, and the binary then writes nothing.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import * as prettier from 'prettier';
import ts from 'typescript';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ClusterSet, Fleet, Hub } from '../../src/constructs/index.js';
import {
  MigrationInputError,
  parseDocuments,
  renderApplicationsReport,
  translateApplications,
  type AppMigrationResult,
  type SourceDocument,
} from '../../src/migrate/applications.js';
import { yamlFiles } from '../../src/cli/commands/migrate-applications.js';
import { canonicalJson } from '../../src/model/core/canonical-json.js';
import { runBinary, runCli } from '../support/cli.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const FIXTURES = 'test/fixtures/migrate-applications';
const golden = join(root, FIXTURES, 'golden');
const IMPORT = '../../../../src/index.js';
const tmp = mkdtempSync(join(tmpdir(), 'pullfleet-migrate-apps-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Each case: the paths given (files or folders, as a user would) and the push-model destinations mapped to clusters. */
const CASES: Record<string, { paths: string[]; clusters?: Record<string, string> }> = {
  'pull-integration-v0.17.0': { paths: [`${FIXTURES}/argocd-pull-integration/v0.17.0`] },
  'pull-integration-v0.28.1': { paths: [`${FIXTURES}/argocd-pull-integration/v0.28.1`] },
  'multicloud-integrations': { paths: [`${FIXTURES}/multicloud-integrations`] },
  'argo-cd-docs': {
    paths: [`${FIXTURES}/argo-cd`],
    clusters: { 'https://kubernetes.default.svc': 'east' },
  },
  'argo-cd-docs-unmapped': { paths: [`${FIXTURES}/argo-cd`] },
  'argo-cd-cluster-generator': { paths: [`${FIXTURES}/argo-cd-applicationset`] },
};
const caseNames = Object.keys(CASES).sort();

function documentsOf(name: string): { files: string[]; documents: SourceDocument[] } {
  const files = yamlFiles(CASES[name].paths);
  return { files, documents: parseDocuments(files.map((file) => ({ file, text: readFileSync(file, 'utf8') }))) };
}

function translate(name: string, documents?: SourceDocument[]): AppMigrationResult {
  const read = documentsOf(name);
  return translateApplications(documents ?? read.documents, {
    importFrom: IMPORT,
    sources: CASES[name].paths,
    clusters: CASES[name].clusters,
  });
}

describe('migrate applications: golden translations of upstream YAML', () => {
  test.each(caseNames)('%s translates to the golden code and report', async (name) => {
    const result = translate(name);
    const report = renderApplicationsReport(result);
    const codeFile = join(golden, `${name}.golden.ts`);
    const reportFile = join(golden, `${name}.report.txt`);
    // The golden code is kept as prettier formats it (npm run format rewrites every .ts file).
    const code = await prettier.format(result.code, {
      ...(await prettier.resolveConfig(codeFile)),
      filepath: codeFile,
    });
    if (process.env.UPDATE_GOLDEN === '1') {
      writeFileSync(codeFile, code);
      writeFileSync(reportFile, report);
    }
    expect(code).toBe(readFileSync(codeFile, 'utf8'));
    expect(report).toBe(readFileSync(reportFile, 'utf8'));
  });

  test.each(caseNames)('%s gives the same code and report whatever the order of the documents', (name) => {
    const { documents } = documentsOf(name);
    const forward = translate(name, documents);
    const backward = translate(name, [...documents].reverse());
    expect(backward.code).toBe(forward.code);
    expect(renderApplicationsReport(backward)).toBe(renderApplicationsReport(forward));
  });

  test('every fixture file is named in the README with its repository and revision', () => {
    const readme = readFileSync(join(root, FIXTURES, 'README.md'), 'utf8');
    const files = yamlFiles([join(root, FIXTURES)]).map((f) => f.slice(join(root, FIXTURES).length + 1));
    for (const file of files.filter((f) => !f.startsWith('golden/'))) expect(readme).toContain(`\`${file}\``);
  });

  test('every golden file type-checks against src/ with the TypeScript compiler', () => {
    const configPath = join(root, 'tsconfig.json');
    const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
    const files = caseNames.map((n) => join(golden, `${n}.golden.ts`));
    const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && files.includes(d.file.fileName))
      .map((d) => `${d.file?.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(diagnostics).toStrictEqual([]);
  });
});

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read deep into synthesized specs
  spec: Record<string, any>;
};

/**
 * Synthesizes generated `code` in a scratch fleet: transpiled to CommonJS and run with its two imports
 * (the constructs and cdk8s) bound to the modules this test already loaded, so nothing is written.
 */
async function synthCode(code: string, clusterSets: readonly string[] = []): Promise<Obj[]> {
  const modules: Record<string, unknown> = {
    [IMPORT]: await import('../../src/index.js'),
    cdk8s: await import('cdk8s'),
  };
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const exports: { addMigratedApps?: (hub: Hub) => void } = {};
  const load = (id: string): unknown => {
    if (!(id in modules)) throw new Error(`the generated code imports ${id}`);
    return modules[id];
  };
  // The Function of this realm (not node:vm's outer one), so the module's object literals are plain objects
  // to the constructs' prop checks.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- runs the code this test just generated
  new Function('require', 'exports', js.outputText)(load, exports);
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub');
  for (const set of clusterSets) new ClusterSet(hub, set);
  exports.addMigratedApps!(hub);
  return [...fleet.renderObjects().values()].flat() as Obj[];
}

/** Field paths (`spec.source.kustomize`) the report says were dropped from `subject`. */
function droppedPaths(result: AppMigrationResult, subject: string): string[] {
  return result.notes
    .filter((n) => n.subject === subject && n.severity === 'untranslated')
    .map((n) => /^(spec[\w.[\]]*)/.exec(n.message)?.[1])
    .filter((p): p is string => Boolean(p));
}

function deletePath(obj: Record<string, unknown>, path: string): void {
  const parts = path.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '');
  let at: unknown = obj;
  for (const p of parts.slice(0, -1)) at = (at as Record<string, unknown> | undefined)?.[p];
  if (at && typeof at === 'object') delete (at as Record<string, unknown>)[parts[parts.length - 1]];
}

/**
 * The Application spec pullfleet should render for `input` (an Application or an ApplicationSet's
 * template spec), as the report describes it: untranslated fields removed, a Helm values string as
 * valuesObject, the destination the spoke's own cluster, Argo CD's defaults written out.
 */
function expectedSpec(spec: Record<string, unknown>, dropped: string[], prefix: string): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
  const wrapped = prefix === 'spec' ? { spec: copy } : { spec: { template: { spec: copy } } };
  for (const path of dropped) deletePath(wrapped, path);
  const sources = (Array.isArray(copy.sources) ? copy.sources : [copy.source]) as Array<Record<string, unknown>>;
  for (const s of sources) {
    const helm = s.helm as Record<string, unknown> | undefined;
    if (helm && typeof helm.values === 'string') {
      helm.valuesObject = parseYaml(helm.values) as unknown;
      delete helm.values;
    }
    if (s.targetRevision === undefined && s.chart === undefined) s.targetRevision = 'HEAD';
  }
  // Argo CD's defaults written out: automated prune and selfHeal are false unless set; allowEmpty false is the default.
  const policy = copy.syncPolicy as Record<string, Record<string, unknown>> | undefined;
  if (policy?.automated) {
    const { allowEmpty, ...automated } = policy.automated;
    policy.automated = { prune: false, selfHeal: false, ...automated, ...(allowEmpty ? { allowEmpty } : {}) };
  }
  copy.destination = {
    namespace: (copy.destination as Record<string, unknown>).namespace,
    server: 'https://kubernetes.default.svc',
  };
  copy.project = copy.project ?? 'default';
  return copy;
}

/** The parts of a rendered spec the input can say something about (pullfleet adds nothing else there). */
function comparable(spec: Record<string, unknown>): Record<string, unknown> {
  const { source, sources, destination, project, syncPolicy, ignoreDifferences, info, revisionHistoryLimit } = spec;
  return JSON.parse(
    canonicalJson({ source, sources, destination, project, syncPolicy, ignoreDifferences, info, revisionHistoryLimit }),
  ) as Record<string, unknown>;
}

/**
 * Compares every translated Application / ApplicationSet of `documents` with what `result`'s code
 * synthesizes to: the hub Application (`<app>-<cluster>`) or the ApplicationSet template.
 */
async function expectRoundTrip(
  result: AppMigrationResult,
  documents: readonly SourceDocument[],
  clusterSets: readonly string[] = [],
): Promise<number> {
  const objects = await synthCode(result.code, clusterSets);
  let compared = 0;
  for (const d of documents) {
    const o = d.object as unknown as Obj;
    if (o.kind !== 'Application' && o.kind !== 'ApplicationSet') continue;
    const subject = `${o.kind} ${o.metadata.namespace ?? 'argocd'}/${o.metadata.name}`;
    if (result.notes.some((n) => n.subject === subject && n.severity === 'skipped')) continue;
    const dropped = droppedPaths(result, subject);
    if (o.kind === 'Application') {
      const renamed = /its hub Application is named "([^"]+)"/.exec(
        result.notes.find((n) => n.subject === subject && n.message.startsWith('its hub Application'))?.message ?? '',
      );
      const name = renamed ? renamed[1] : o.metadata.name;
      const app = objects.find((r) => r.kind === 'Application' && r.metadata.name === name);
      expect(app).toBeDefined();
      expect(comparable(app!.spec)).toStrictEqual(comparable(expectedSpec(o.spec, dropped, 'spec')));
    } else {
      const app = /^\{\{\s*\.?name\s*\}\}-(.+)$/.exec(o.spec.template.metadata.name as string)?.[1];
      const set = objects.find(
        (r) => r.kind === 'ApplicationSet' && r.spec.template.metadata.name === `{{name}}-${app}`,
      );
      expect(set).toBeDefined();
      expect(comparable(set!.spec.template.spec)).toStrictEqual(
        comparable(expectedSpec(o.spec.template.spec, dropped, 'spec.template.spec')),
      );
    }
    compared++;
  }
  return compared;
}

describe('migrate applications: the generated code synthesizes to the input', () => {
  test.each(['pull-integration-v0.17.0', 'pull-integration-v0.28.1', 'multicloud-integrations'])(
    '%s: hub Applications and ApplicationSet templates equal the input modulo the report',
    async (name) => {
      expect(await expectRoundTrip(translate(name), documentsOf(name).documents)).toBeGreaterThan(0);
    },
  );

  // Argo CD's reference Application (every source tool, retry durations, ignoreDifferences with the glob
  // patterns group "*" and kind "*"), its push-model destination mapped to cluster east.
  test('argo-cd docs: hub Applications equal the input modulo the report', async () => {
    expect(await expectRoundTrip(translate('argo-cd-docs'), documentsOf('argo-cd-docs').documents)).toBe(2);
  });

  test('every source kind (kustomize, a Helm chart in Git with a ref source, a plugin, Jsonnet) round-trips', async () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop-east, namespace: argocd, finalizers: [resources-finalizer.argocd.argoproj.io], labels: {team: shop}, annotations: {notes: kept}}
spec:
  project: shop
  destination: {name: east, namespace: shop}
  revisionHistoryLimit: 3
  info: [{name: owner, value: shop-team}]
  sources:
  - repoURL: https://git.example/shop.git
    path: deploy/overlays/prod
    targetRevision: v1.2.0
    kustomize:
      namePrefix: prod-
      images: [ghcr.io/example/shop:1.2.0]
      commonLabels: {tier: web}
      commonAnnotations: {owner: shop}
      replicas: [{name: shop, count: 3}]
      components: [../../components/metrics]
      patches: [{target: {kind: Deployment, name: shop}, patch: '[{"op": "replace", "path": "/spec/template/spec/priorityClassName", "value": "high"}]'}]
  - repoURL: https://git.example/charts.git
    path: charts/cache
    targetRevision: main
    helm:
      releaseName: cache
      valueFiles: [$values/cache/prod.yaml]
      ignoreMissingValueFiles: true
      parameters: [{name: replicas, value: "2", forceString: true}]
      valuesObject: {persistence: {enabled: true}}
      skipCrds: true
  - repoURL: https://git.example/values.git
    targetRevision: main
    ref: values
  - repoURL: https://git.example/tools.git
    path: cmp
    plugin: {name: envsubst, env: [{name: REGION, value: eu-1}]}
  - repoURL: https://git.example/jsonnet.git
    path: dashboards
    directory: {recurse: true, exclude: '*.libsonnet', jsonnet: {tlas: [{name: env, value: prod}], libs: [vendor]}}
  syncPolicy:
    automated: {prune: true, selfHeal: true}
    syncOptions: [CreateNamespace=true, ServerSideApply=true, RespectIgnoreDifferences=true, PrunePropagationPolicy=background, SkipDryRunOnMissingResource=true]
    managedNamespaceMetadata: {labels: {team: shop}}
    retry: {limit: 3, backoff: {duration: 10s, factor: 2, maxDuration: 1h}}
  ignoreDifferences:
  - {group: apps, kind: Deployment, name: shop, jqPathExpressions: [.spec.replicas]}
`;
    const documents = parseDocuments([{ file: 'shop.yaml', text }]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.notes.map((n) => n.severity)).toStrictEqual(['changed']);
    expect(await expectRoundTrip(result, documents)).toBe(1);
  });

  test('Applications of one app on several clusters with one spec become one PullApplication on each spoke', async () => {
    const app = (cluster: string) =>
      `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: guestbook-${cluster}, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: 'https://github.com/argoproj/argocd-example-apps.git', path: guestbook, targetRevision: HEAD}\n  destination: {name: ${cluster}, namespace: guestbook}\n  syncPolicy: {automated: {prune: true, selfHeal: true}}\n`;
    const documents = parseDocuments([{ file: 'apps.yaml', text: [app('west'), app('east')].join('---\n') }]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.applications).toStrictEqual(['guestbook']);
    expect(result.code).toContain("spokes: [spoke(hub, 'east'), spoke(hub, 'west')],");
    expect(await expectRoundTrip(result, documents)).toBe(2);
  });

  // Hub Applications as pullfleet renders them (a dist/ kept in Git, issue 28).
  const rendered = (cluster: string, delivery: string, extra = '') =>
    `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web-${cluster}
  namespace: argocd
  labels: {app.kubernetes.io/managed-by: pullfleet, apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "true", pullfleet.io/app: web, pullfleet.io/delivery-model: basic, team: web}
  annotations: {apps.open-cluster-management.io/ocm-managed-cluster: ${cluster}, argocd.argoproj.io/skip-reconcile: "true", pullfleet.io/construct-path: hub/PullApplication:web/${cluster}, pullfleet.io/delivery: ${delivery}${extra}}
  finalizers: [pullfleet.io/manifestwork-cleanup]
spec:
  project: default
  destination: {namespace: web, server: https://kubernetes.default.svc}
  source: {repoURL: https://git.example/web.git, path: web, targetRevision: v1}
  syncPolicy: {automated: {prune: true, selfHeal: true}}
`;

  test('hub Applications pullfleet rendered become one app again, without pullfleet keys, carried over exactly', async () => {
    const documents = parseDocuments([
      {
        file: 'dist/hub/hub/applications.yaml',
        text: [rendered('east', 'static'), rendered('west', 'static')].join('---\n'),
      },
    ]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.applications).toStrictEqual(['web']);
    expect(result.notes).toStrictEqual([]);
    expect(result.exact).toStrictEqual(['Application argocd/web-east', 'Application argocd/web-west']);
    expect(result.inputNotes).toStrictEqual([
      '2 of the objects were rendered by pullfleet: its own labels, annotations, finalizers and preserved fields (pullfleet.io/…, app.kubernetes.io/managed-by: pullfleet) are left out, as pullfleet renders them again',
    ]);
    expect(result.code).not.toContain('pullfleet.io/');
    expect(result.code).toContain("labels: { team: 'web' },");
    expect(await expectRoundTrip(result, documents)).toBe(2);
  });

  test('a waved hub Application reports its waves; an annotation an app may not set is reported, not generated', async () => {
    const text = rendered(
      'east',
      'waved',
      ', pullfleet.io/rollout: pullfleet-rollout-web, argocd.argoproj.io/refresh: hard',
    );
    const documents = parseDocuments([{ file: 'applications.yaml', text }]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.notes.map((n) => `${n.severity} ${n.message}`)).toStrictEqual([
      'untranslated it is rolled out in waves (pullfleet.io/delivery: waved, rollout policy ConfigMap pullfleet-rollout-web): the waves are not translated; give the PullApplication rollout: Rollout.waves([...]) with the waves that ConfigMap lists',
      'untranslated metadata.annotations.argocd.argoproj.io/refresh is a key pullfleet, OCM or Argo CD sets or acts on itself, which an app may not set: not translated',
    ]);
    expect(result.code).not.toContain('refresh');
    expect(await expectRoundTrip(result, documents)).toBe(1);
  });

  test('an ApplicationSet pullfleet rendered is carried over exactly (its preservedFields, finalizer and own keys left out)', async () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: web
  namespace: argocd
  labels: {app.kubernetes.io/managed-by: pullfleet, pullfleet.io/app: web}
  annotations: {pullfleet.io/construct-path: hub/PullApplicationSet:web/ApplicationSet}
spec:
  generators:
    - clusterDecisionResource: {configMapRef: ocm-placement-generator, labelSelector: {matchLabels: {cluster.open-cluster-management.io/placement: prod}}, requeueAfterSeconds: 180}
  preservedFields: {annotations: [pullfleet.io/forwarded-operation, pullfleet.io/legacy-controller-seen]}
  template:
    metadata:
      name: '{{name}}-web'
      labels: {app.kubernetes.io/managed-by: pullfleet, apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "true", pullfleet.io/app: web}
      annotations: {apps.open-cluster-management.io/ocm-managed-cluster: '{{name}}', argocd.argoproj.io/skip-reconcile: "true", pullfleet.io/delivery: dynamic}
      finalizers: [pullfleet.io/manifestwork-cleanup]
    spec:
      project: default
      destination: {namespace: web, server: https://kubernetes.default.svc}
      source: {repoURL: https://git.example/web.git, path: web, targetRevision: v1}
      syncPolicy: {automated: {prune: true, selfHeal: true}}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: prod, namespace: argocd, labels: {app.kubernetes.io/managed-by: pullfleet}}
spec: {clusterSets: [prod]}
`;
    const documents = parseDocuments([{ file: 'application-sets.yaml', text }]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.notes).toStrictEqual([]);
    expect(result.exact).toStrictEqual(['ApplicationSet argocd/web', 'Placement argocd/prod']);
    expect(result.code).not.toContain('pullfleet.io/');
    expect(await expectRoundTrip(result, documents, ['prod'])).toBe(1);
  });

  test("an ApplicationSet reading spoke labels (pullfleet's matrix) becomes a PullApplicationSet with SpokeParam", async () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: api, namespace: argocd}
spec:
  generators:
    - matrix:
        generators:
          - clusterDecisionResource: {configMapRef: ocm-placement-generator, labelSelector: {matchLabels: {cluster.open-cluster-management.io/placement: prod}}, requeueAfterSeconds: 180}
          - clusters: {selector: {matchLabels: {pullfleet.io/cluster: '{{name}}'}}}
  template:
    metadata:
      name: '{{name}}-api'
      labels: {apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "true"}
      annotations: {apps.open-cluster-management.io/ocm-managed-cluster: '{{name}}', argocd.argoproj.io/skip-reconcile: "true"}
    spec:
      project: default
      destination: {namespace: api, server: https://kubernetes.default.svc}
      sources:
        - repoURL: https://charts.example.com
          chart: api
          targetRevision: 1.0.0
          helm:
            valueFiles: ['$values/api/{{metadata.labels.spoke.pullfleet.io/region}}.yaml']
            valuesObject: {cluster: '{{name}}', zone: '{{metadata.labels.topology.example.com.spoke.pullfleet.io/zone}}'}
        - {repoURL: https://git.example/values.git, targetRevision: HEAD, ref: values}
      syncPolicy: {automated: {prune: true, selfHeal: true}}
`;
    const documents = parseDocuments([{ file: 'application-sets.yaml', text }]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.applicationSets).toStrictEqual(['api']);
    // the Placement imported by name; the matrix of before gains the Exists selector of each label read
    expect(result.notes.map((n) => n.severity)).toStrictEqual(['changed', 'changed']);
    expect(result.code).toContain("valueFiles: [`$values/api/${SpokeParam.label('region')}.yaml`],");
    expect(result.code).toContain(
      "values: { cluster: SpokeParam.NAME, zone: SpokeParam.label('topology.example.com/zone') },",
    );
    expect(result.code).toMatch(/^import \{ [^}]*\bSpokeParam\b[^}]*\} from /m);
    expect(await expectRoundTrip(result, documents)).toBe(1);
    // The generators too: the same matrix, now requiring each label read on the cluster's Secret.
    const objects = await synthCode(result.code);
    const appSet = objects.find((o) => o.kind === 'ApplicationSet')!;
    const generators = structuredClone((documents[0].object.spec as Obj['spec']).generators) as Array<{
      matrix: { generators: Array<{ clusters: { selector: Record<string, unknown> } }> };
    }>;
    generators[0].matrix.generators[1].clusters.selector.matchExpressions = [
      { key: 'spoke.pullfleet.io/region', operator: 'Exists' },
      { key: 'topology.example.com.spoke.pullfleet.io/zone', operator: 'Exists' },
    ];
    expect(appSet.spec.generators).toStrictEqual(generators);
    // Migrating that output again changes nothing more.
    const again = translateApplications(
      parseDocuments([
        {
          file: 'application-sets.yaml',
          text: stringifyYaml({
            ...documents[0].object,
            spec: { ...(documents[0].object.spec as object), generators },
          }),
        },
      ]),
      { importFrom: IMPORT },
    );
    expect(again.notes.map((n) => n.severity)).toStrictEqual(['changed']);
  });

  test("an ApplicationSet with another matrix, or spoke labels without pullfleet's matrix, is skipped", () => {
    const text = (generators: string, value: string) => `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: api, namespace: argocd}
spec:
  generators: ${generators}
  template:
    metadata: {name: '{{name}}-api'}
    spec: {project: default, destination: {name: '{{name}}', namespace: api}, source: {repoURL: r, path: 'p', helm: {valuesObject: {v: '${value}'}}}}
`;
    const cdr =
      '{clusterDecisionResource: {configMapRef: c, labelSelector: {matchLabels: {cluster.open-cluster-management.io/placement: p}}}}';
    const cases = [
      text(
        `[{matrix: {generators: [${cdr}, {clusters: {selector: {matchLabels: {env: prod}}}}]}}]`,
        '{{metadata.labels.spoke.pullfleet.io/region}}',
      ),
      text(`[${cdr}]`, '{{metadata.labels.spoke.pullfleet.io/region}}'),
      text(
        `[{matrix: {generators: [${cdr}, {clusters: {selector: {matchLabels: {pullfleet.io/cluster: '{{name}}'}}}}]}}]`,
        '{{server}}',
      ),
    ].map((t) => translateApplications(parseDocuments([{ file: 'a.yaml', text: t }])));
    expect(cases.map((r) => r.applicationSets)).toStrictEqual([[], [], []]);
    expect(
      cases.map((r) =>
        r.notes
          .find((n) => n.severity === 'skipped')
          ?.message.split(' ')
          .slice(0, 3)
          .join(' '),
      ),
    ).toStrictEqual(['its generators (matrix)', 'template parameters in', 'its generators (matrix)']);
  });

  test("a push-model ApplicationSet's cluster generator becomes a Placement choosing the ManagedClusters by its labels", async () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbook, namespace: argocd}
spec:
  generators:
    - clusters:
        selector:
          matchLabels: {env: prod}
          matchExpressions: [{key: region, operator: In, values: [eu, us]}]
  template:
    metadata: {name: '{{name}}-guestbook'}
    spec:
      project: default
      source: {repoURL: 'https://github.com/argoproj/argocd-example-apps.git', targetRevision: HEAD, path: guestbook}
      destination: {server: '{{server}}', namespace: guestbook}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: everywhere, namespace: argocd}
spec:
  generators: [{clusters: {}}]
  template:
    metadata: {name: '{{name}}-everywhere'}
    spec:
      project: default
      source: {repoURL: 'https://git.example.com/apps.git', path: base}
      destination: {name: '{{name}}', namespace: base}
`;
    const documents = parseDocuments([{ file: 'application-sets.yaml', text }]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.applicationSets).toStrictEqual(['everywhere', 'guestbook']);
    expect(result.placements).toStrictEqual(['everywhere-clusters', 'guestbook-clusters']);
    expect(result.code).toContain("new Placement(hub, 'guestbook-clusters', {");
    expect(result.code).toContain('predicates: [');
    expect(result.code).toContain("labels: { env: 'prod' }");
    expect(result.code).toContain(
      "labelExpressions: [{ key: 'region', operator: SelectorOperator.IN, values: ['eu', 'us'] }]",
    );
    expect(result.code).toContain('placement: guestbookClustersPlacement,');
    const changed = result.notes.filter((n) => n.subject === 'ApplicationSet argocd/guestbook').map((n) => n.message);
    expect(changed.some((m) => m.startsWith('its cluster generator (the Argo CD cluster Secrets matching'))).toBe(true);
    expect(result.notes.filter((n) => n.severity === 'skipped')).toStrictEqual([]);
    // The code synthesizes, and each ApplicationSet's template is the input's (destination aside, as for every push app).
    expect(await expectRoundTrip(result, documents)).toBe(2);
    const objects = await synthCode(result.code);
    const placement = objects.find((o) => o.kind === 'Placement' && o.metadata.name === 'guestbook-clusters')!;
    expect(placement.spec.predicates).toStrictEqual([
      {
        requiredClusterSelector: {
          labelSelector: {
            matchLabels: { env: 'prod' },
            matchExpressions: [{ key: 'region', operator: 'In', values: ['eu', 'us'] }],
          },
        },
      },
    ]);
  });

  test('a cluster generator passing values, or with a flat list, is skipped with the reason', () => {
    const text = (generator: string) => `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: api, namespace: argocd}
spec:
  generators: [${generator}]
  template:
    metadata: {name: '{{name}}-api'}
    spec: {project: default, destination: {name: '{{name}}', namespace: api}, source: {repoURL: r, path: p}}
`;
    const results = ['{clusters: {values: {a: b}}}', '{clusters: {flatList: true}}'].map((g) =>
      translateApplications(parseDocuments([{ file: 'a.yaml', text: text(g) }])),
    );
    expect(results.map((r) => r.applicationSets)).toStrictEqual([[], []]);
    expect(results.map((r) => r.notes.find((n) => n.severity === 'skipped')?.message.split(':')[0])).toStrictEqual([
      'its cluster generator uses values, which a Placement cannot express',
      'its cluster generator uses flatList, which a Placement cannot express',
    ]);
  });

  test('Applications of one app whose specs differ in per-spoke values become one PullApplication with perSpoke', async () => {
    const app = (cluster: string, source: string) =>
      `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: api-${cluster}, namespace: argocd}\nspec:\n  destination: {name: ${cluster}, namespace: api}\n  sources:\n${source}  syncPolicy: {automated: {prune: true, selfHeal: true}}\n`;
    const sources = (region: string, revision: string, kustomizePrefix: string) =>
      [
        `  - repoURL: https://charts.example.com\n    chart: api\n    targetRevision: 1.0.0\n    helm:\n      valueFiles: [$values/common.yaml, $values/${region}.yaml]\n      valuesObject: {replicas: 2, ingress: {enabled: true, host: api.${region}.example.com}}\n`,
        `  - {repoURL: https://git.example/values.git, targetRevision: ${revision}, ref: values}\n`,
        `  - {repoURL: https://git.example/overlays.git, path: base, targetRevision: HEAD, kustomize: {namePrefix: ${kustomizePrefix}, commonLabels: {team: api, region: ${region}}}}\n`,
      ].join('');
    const documents = parseDocuments([
      {
        file: 'apps.yaml',
        text: [app('east', sources('us-east', 'main', 'e-')), app('west', sources('us-west', 'next', 'w-'))].join(
          '---\n',
        ),
      },
    ]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.applications).toStrictEqual(['api']);
    expect(result.notes.map((n) => n.message.split(':')[0])).toStrictEqual(['push becomes pull', 'push becomes pull']);
    expect(result.code).toContain('perSpoke: (spoke) => apiPerSpoke[spoke.name] ?? {},');
    expect(result.code).toContain("type SpokeOverrides } from '");
    expect(await expectRoundTrip(result, documents)).toBe(2);
    // West's override: its value file, host, revision of the ref source, prefix and label; the rest is shared.
    const objects = await synthCode(result.code);
    const west = objects.find((o) => o.metadata.name === 'api-west')!;
    expect(west.spec.sources[1]).toStrictEqual({
      repoURL: 'https://git.example/values.git',
      targetRevision: 'next',
      ref: 'values',
    });
  });

  test('Applications of one app that differ in what perSpoke cannot set stay apps of their own', () => {
    const app = (cluster: string, repo: string) =>
      `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web-${cluster}, namespace: argocd}\nspec:\n  destination: {name: ${cluster}, namespace: web}\n  source: {repoURL: ${repo}, path: web, helm: {releaseName: web-${cluster}}}\n`;
    const result = translateApplications(
      parseDocuments([
        {
          file: 'a.yaml',
          text: [app('east', 'https://a.example/r.git'), app('west', 'https://b.example/r.git')].join('---\n'),
        },
      ]),
    );
    expect(result.applications).toStrictEqual(['web', 'web-2']);
    expect(result.code).not.toContain('perSpoke');
  });

  test('an oci:// chart source (Argo CD 3.1+) becomes AppSource.helm with the chart name, and renders the same source', async () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web-east, namespace: argocd}
spec:
  destination: {name: east, namespace: web}
  source: {repoURL: oci://ghcr.io/example/charts/web, path: ., targetRevision: 1.0.0, helm: {releaseName: web, valuesObject: {replicas: 2}}}
`;
    const documents = parseDocuments([{ file: 'oci.yaml', text }]);
    const result = translateApplications(documents, { importFrom: IMPORT });
    expect(result.code).toContain(
      "source: AppSource.helm({\n      repoURL: 'oci://ghcr.io/example/charts',\n      chart: 'web',\n      targetRevision: '1.0.0',",
    );
    expect(result.code).not.toContain('helmGit');
    expect(await expectRoundTrip(result, documents)).toBe(1);
  });
});

describe('migrate applications: bad input', () => {
  const parse =
    (text: string, file = 'apps.yaml') =>
    () =>
      translateApplications(parseDocuments([{ file, text }]));
  const error = (fn: () => unknown): MigrationInputError => {
    try {
      fn();
    } catch (e) {
      if (e instanceof MigrationInputError) return e;
      throw e;
    }
    throw new Error('no error thrown');
  };

  test('fails when a document is not YAML, naming the file and document', () => {
    const e = error(parse('apiVersion: argoproj.io/v1alpha1\nkind: Application\n---\nspec: [unclosed\n'));
    expect([e.file, e.index, e.field]).toStrictEqual(['apps.yaml', '2', '(document)']);
    expect(e.message).toMatch(/^apps\.yaml, document 2: \(document\) is not valid YAML: /);
  });

  test('fails when an argoproj.io kind is unknown, naming it', () => {
    const e = error(parse('apiVersion: argoproj.io/v1alpha1\nkind: Applicaton\nmetadata: {name: x}\n'));
    expect(e.message).toBe(
      'apps.yaml, document 1: kind "Applicaton" is not an Argo CD kind this command reads: give Application and ApplicationSet documents (AppProjects are read and left as they are)',
    );
  });

  test('fails when a document has no kind', () => {
    expect(error(parse('apiVersion: v1\nmetadata: {name: x}\n')).message).toBe(
      'apps.yaml, document 1: kind is missing: every document must be a Kubernetes object',
    );
  });

  test('fails on the upstream multi-source fragment without metadata.name (argo-cd docs)', () => {
    const file = `${FIXTURES}/invalid/argo-cd/docs/user-guide/multiple_sources-prometheus.yaml`;
    const e = error(parse(readFileSync(join(root, file), 'utf8'), file));
    expect(e.message).toBe(`${file}, document 1: metadata.name is missing: every Application needs a name`);
  });

  test.each([
    [
      'no destination',
      'source: {repoURL: r, path: p}',
      'spec.destination is missing: give the destination namespace and cluster',
    ],
    ['no source', 'destination: {namespace: n, name: c}', 'spec.source is missing: give spec.source (or spec.sources)'],
    [
      'a source without repoURL',
      'sources: [{repoURL: r, path: p}, {path: q}]\n  destination: {namespace: n, name: c}',
      'spec.sources[1].repoURL is missing: every source needs the repository URL',
    ],
  ])('fails on an Application with %s, naming the field', (_what, spec, message) => {
    const text = `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec:\n  ${spec}\n`;
    expect(error(parse(`kind: List\napiVersion: v1\nitems: []\n---\n${text}`)).message).toBe(
      `apps.yaml, document 2: ${message}`,
    );
  });

  test('fails on an ApplicationSet without generators', () => {
    const text =
      'apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators: []\n  template: {spec: {}}\n';
    expect(error(parse(text)).message).toBe(
      'apps.yaml, document 1: spec.generators is missing or empty: an ApplicationSet needs a generator',
    );
  });
});

describe('migrate applications: what becomes what', () => {
  const one = (text: string, clusters?: Record<string, string>) =>
    translateApplications(parseDocuments([{ file: 'a.yaml', text }]), { clusters });
  const app = (spec: string, meta = '') =>
    `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\n${meta}spec:\n${spec}`;

  test('a push-model Application whose destination names a cluster becomes a PullApplication on that spoke', () => {
    const result = one(
      app(
        '  destination: {name: east, namespace: web}\n  source: {repoURL: https://git.example/r.git, path: web, kustomize: {namePrefix: p-, replicas: [{name: web, count: "3"}]}}\n  syncPolicy: {automated: {prune: true}, retry: {limit: 2, backoff: {duration: 1m30s}}}\n',
      ),
    );
    expect(result.applications).toStrictEqual(['web']);
    expect(result.code).toContain("spokes: [spoke(hub, 'east')],");
    expect(result.code).toContain("replicas: [{ name: 'web', count: 3 }]");
    expect(result.code).toContain('backoff: { duration: Duration.seconds(90) }');
    expect(result.code).toContain('selfHeal: false,');
    expect(result.notes.map((n) => n.severity)).toStrictEqual(['changed', 'changed']);
  });

  test('an ApplicationSet with a list generator, templatePatch or per-cluster parameters is skipped, saying why', () => {
    const set = (generators: string, extra = '', source = 'path: p') =>
      `apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s, namespace: argocd}\nspec:\n  generators: ${generators}\n${extra}  template:\n    metadata: {name: '{{name}}-s'}\n    spec: {project: default, source: {repoURL: r, ${source}}, destination: {name: '{{name}}', namespace: n}}\n`;
    const cdr =
      '[{clusterDecisionResource: {configMapRef: c, labelSelector: {matchLabels: {cluster.open-cluster-management.io/placement: p}}}}]';
    const cases = [
      one(set('[{list: {elements: []}}]')),
      one(set(cdr, '  templatePatch: x\n')),
      one(set(cdr, '', "path: 'envs/{{metadata.labels.env}}'")),
      one(set(cdr.replace('configMapRef: c,', 'configMapRef: c, values: {size: large},'))),
    ];
    expect(
      cases.map((r) =>
        r.notes.filter((n) => n.severity === 'skipped').map((n) => n.message.split(' ').slice(0, 3).join(' ')),
      ),
    ).toStrictEqual([
      ['its generators (list)'],
      ['templatePatch changes the'],
      ['template parameters in'],
      ['its generator passes'],
    ]);
    for (const r of cases) expect(r.applicationSets).toStrictEqual([]);
  });

  test('a pull-labelled Application: the pull keys are dropped, a spoke namespace or destination override is reported', () => {
    const meta = [
      '  labels: {apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "True", team: web}',
      '  annotations:',
      '    apps.open-cluster-management.io/ocm-managed-cluster: east',
      '    apps.open-cluster-management.io/ocm-managed-cluster-app-namespace: gitops',
      '    apps.open-cluster-management.io/destination-name: other',
      '    argocd.argoproj.io/skip-reconcile: "true"',
      '',
    ].join('\n');
    const result = one(
      app(
        '  destination: {server: https://kubernetes.default.svc, namespace: web}\n  source: {repoURL: r, path: p}\n',
        meta,
      ),
    );
    expect(result.code).toContain("labels: { team: 'web' },");
    expect(result.code).not.toContain('annotations:');
    expect(result.code).toContain("spokes: [spoke(hub, 'east')],");
    expect(result.notes.map((n) => `${n.severity} ${n.message.split(':')[0]}`)).toStrictEqual([
      "changed the spoke copy goes to the hub's Argo CD namespace (pullfleet puts every pulled Application there), not gitops (apps.open-cluster-management.io/ocm-managed-cluster-app-namespace)",
      'untranslated annotation apps.open-cluster-management.io/destination-name',
      'changed its hub Application is named "web-east", not "web"',
    ]);
  });

  test('a pull label that is not true (Go ParseBool) reads the Application as push-model; a pull label without the cluster annotation is skipped', () => {
    const destination = '  destination: {name: east, namespace: web}\n  source: {repoURL: r, path: p}\n';
    const off = one(
      app(destination, '  labels: {apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "no"}\n'),
    );
    expect(off.notes[0].message).toBe(
      'label apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "no" is not true (Go ParseBool): read as a push-model Application',
    );
    expect(off.applications).toStrictEqual(['web']);
    const nowhere = one(
      app(destination, '  labels: {apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "1"}\n'),
    );
    expect(nowhere.notes.map((n) => n.severity)).toStrictEqual(['skipped']);
    expect(nowhere.applications).toStrictEqual([]);
  });

  test('managedNamespaceMetadata without CreateNamespace=true (which Argo CD ignores) is dropped and reported', () => {
    const result = one(
      app(
        '  destination: {name: east, namespace: web}\n  source: {repoURL: r, path: p}\n  syncPolicy: {managedNamespaceMetadata: {labels: {a: b}}}\n',
      ),
    );
    expect(result.code).not.toContain('managedNamespaceMetadata');
    expect(result.notes.filter((n) => n.severity === 'untranslated').map((n) => n.message)).toStrictEqual([
      'spec.syncPolicy.managedNamespaceMetadata is dropped: Argo CD applies it only to a namespace it creates (CreateNamespace=true), which this app does not ask for',
    ]);
  });

  test('an Application given twice identically is translated once; given differently, neither is', () => {
    const a = app('  destination: {name: east, namespace: web}\n  source: {repoURL: r, path: p}\n');
    const b = app('  destination: {name: east, namespace: web}\n  source: {repoURL: r, path: q}\n');
    const twice = translateApplications(
      parseDocuments([
        { file: 'a.yaml', text: a },
        { file: 'b.yaml', text: a },
      ]),
    );
    expect(twice.applications).toStrictEqual(['web']);
    expect(twice.inputNotes).toStrictEqual([
      'Application argocd/web is given 2 times (a.yaml document 1 and b.yaml document 1), identically: translated once',
    ]);
    const differing = translateApplications(
      parseDocuments([
        { file: 'a.yaml', text: a },
        { file: 'b.yaml', text: b },
      ]),
    );
    expect(differing.applications).toStrictEqual([]);
    expect(differing.inputNotes[0]).toContain('differently: neither is translated');
  });
});

describe('pullfleet migrate applications', () => {
  test('fails when --cluster is not <destination>=<cluster>, or nothing is an Application, writing nothing', async () => {
    const output = join(tmp, 'bad-flag.ts');
    const badFlag = await runCli(['migrate', 'applications', `${FIXTURES}/argo-cd`, '--cluster', 'east', '-o', output]);
    expect(badFlag).toStrictEqual({
      code: 2,
      out: '',
      err: 'pullfleet migrate applications: --cluster "east" is not <destination>=<managed cluster>: for example --cluster https://kubernetes.default.svc=local-cluster (nothing was written)\n',
    });
    const placementOnly = `${FIXTURES}/argocd-pull-integration/v0.28.1/examples/placement.yaml`;
    const none = await runCli(['migrate', 'applications', placementOnly, '-o', output]);
    expect(none.code).toBe(2);
    expect(none.err).toBe(
      `pullfleet migrate applications: no Argo CD Application or ApplicationSet in ${placementOnly} (nothing was written)\n`,
    );
    expect(existsSync(output)).toBe(false);
  });
});

describe('pullfleet migrate applications (the binary)', () => {
  test('writes the code and a JSON report; --strict exits 1 when something was not translated', () => {
    const output = join(tmp, 'apps.ts');
    const report = join(tmp, 'report.json');
    const result = runBinary([
      'migrate',
      'applications',
      `${FIXTURES}/argo-cd`,
      '--cluster',
      'https://kubernetes.default.svc=east',
      '-o',
      output,
      '--report',
      report,
      '--json',
      '--strict',
      '--import',
      IMPORT,
    ]);
    expect(result.code).toBe(1);
    expect(result.err).toBe(`wrote ${output} and ${report}\n`);
    expect(readFileSync(output, 'utf8')).toBe(translate('argo-cd-docs').code);
    const json = JSON.parse(readFileSync(report, 'utf8')) as { generated: { applications: string[] } };
    expect(json.generated.applications).toStrictEqual(['guestbook', 'my-billing-app']);
  });

  test('fails when the output file exists without --force, leaving it untouched; replaces it with --force', () => {
    const output = join(tmp, 'existing.ts');
    writeFileSync(output, 'mine\n');
    const refused = runBinary(['migrate', 'applications', `${FIXTURES}/multicloud-integrations`, '-o', output]);
    expect(refused.code).toBe(2);
    expect(refused.err).toBe(
      `pullfleet migrate applications: ${output} exists: pass --force to replace it (nothing was written)\n`,
    );
    expect(readFileSync(output, 'utf8')).toBe('mine\n');
    const forced = runBinary([
      'migrate',
      'applications',
      `${FIXTURES}/multicloud-integrations`,
      '-o',
      output,
      '--force',
    ]);
    expect(forced.code).toBe(0);
    expect(readFileSync(output, 'utf8')).toContain('new PullApplication(hub, ');
  });

  test('fails on invalid input naming the file, document and field, and writes nothing', () => {
    const output = join(tmp, 'never.ts');
    const result = runBinary(['migrate', 'applications', `${FIXTURES}/invalid`, '-o', output]);
    expect(result.code).toBe(2);
    expect(result.err).toBe(
      `pullfleet migrate applications: ${FIXTURES}/invalid/argo-cd/docs/user-guide/multiple_sources-prometheus.yaml, document 1: metadata.name is missing: every Application needs a name (nothing was written)\n`,
    );
    expect(result.out).toBe('');
    expect(existsSync(output)).toBe(false);
  });
});
