/**
 * Golden tests of `pullfleet migrate subscriptions`: each fixtures/<name>.yaml translates to exactly
 * fixtures/<name>.golden.ts and fixtures/<name>.report.txt (UPDATE_GOLDEN=1 rewrites them), the code
 * type-checks against the real src/constructs with the TypeScript compiler, and it synthesizes. The
 * upstream cases translate real Subscription YAML kept under fixtures/upstream/ (each file names its
 * source repository and path) into fixtures/upstream-<case>.golden.ts and .report.txt the same way.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import ts from 'typescript';
import { AppSource, ClusterSet, Fleet, Hub, Placement, PullApplicationSet } from '../../src/constructs/index.js';
import { renderMigrationReport, translateSubscriptions } from '../../src/migrate/subscriptions.js';
import { type JsonObject } from '../../src/model/core/types.js';
import { readObjects } from '../../src/cli/commands/migrate.js';
import { startFakeApiServer } from '../double/fake-apiserver.js';
import { runCli } from '../support/cli.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, 'fixtures');
const root = join(here, '..', '..');
const IMPORT = '../../../src/constructs/index.js';
const names = readdirSync(fixtures)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();
const tmp = mkdtempSync(join(tmpdir(), 'pullfleet-migrate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Real upstream inputs (fixtures/upstream/<repository>/<path>, as fetched) and the options kubectl would apply them with. */
const UPSTREAM = 'test/migrate/fixtures/upstream';
const PACMAN = `${UPSTREAM}/application-samples/subscriptions/pacman`;
const GIT_HELM = `${UPSTREAM}/multicloud-operators-subscription/test/e2e/cases/15-git-helm`;
const GITHUB_CHANNEL = `${UPSTREAM}/multicloud-operators-subscription/examples/github-channel`;
const upstreamCases: Record<string, { files: string[]; namespace?: string }> = {
  // kustomize (subscriptions/pacman/kustomization.yaml) gives these objects namespace pacman-sample.
  pacman: {
    files: [
      `${PACMAN}/subscription.yaml`,
      `${PACMAN}/placementrule.yaml`,
      `${PACMAN}/namespace.yaml`,
      `${PACMAN}/application.yaml`,
      `${UPSTREAM}/application-samples/subscriptions/channel/channel.yaml`,
    ],
    namespace: 'pacman-sample',
  },
  '15-git-helm-install': {
    files: [
      `${GIT_HELM}/install/channel.yaml`,
      `${GIT_HELM}/install/placement.yaml`,
      `${GIT_HELM}/install/subscription.yaml`,
    ],
  },
  '15-git-helm-both': {
    files: [
      `${GIT_HELM}/install/channel.yaml`,
      `${GIT_HELM}/install/placement.yaml`,
      `${GIT_HELM}/install/subscription.yaml`,
      `${GIT_HELM}/update/subscription.yaml`,
    ],
  },
  'github-channel': {
    files: [
      `${GITHUB_CHANNEL}/00-namespace.yaml`,
      `${GITHUB_CHANNEL}/01-channel.yaml`,
      `${GITHUB_CHANNEL}/02-subscription.yaml`,
    ],
  },
};
const upstreamNames = Object.keys(upstreamCases).sort();

function translateUpstream(name: string) {
  const { files, namespace } = upstreamCases[name];
  const origins = new Map<JsonObject, string>();
  const objects = readObjects(files, origins);
  return translateSubscriptions(objects, {
    importFrom: IMPORT,
    sources: files,
    origins,
    ...(namespace ? { namespace } : {}),
  });
}

function translate(name: string, objects?: JsonObject[]) {
  const file = `test/migrate/fixtures/${name}.yaml`;
  return translateSubscriptions(objects ?? readObjects([join(root, file)]), { importFrom: IMPORT, sources: [file] });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read deep into synthesized specs
type Obj = { kind: string; metadata: { name: string; namespace?: string }; spec: Record<string, any> };

async function synth(name: string, prepare: (hub: Hub) => void = () => undefined): Promise<Obj[]> {
  const mod = (await import(`./fixtures/${name}.golden.js`)) as { addMigratedApps(hub: Hub): void };
  const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
  const hub = new Hub(fleet, 'hub');
  prepare(hub);
  mod.addMigratedApps(hub);
  return [...fleet.renderObjects().values()].flat() as Obj[];
}

describe('migrate subscriptions: golden translations', () => {
  /** Compares a translation with fixtures/<golden>.golden.ts and .report.txt (UPDATE_GOLDEN=1 rewrites them). */
  function expectGolden(golden: string, result: ReturnType<typeof translate>): void {
    const codeFile = join(fixtures, `${golden}.golden.ts`);
    const reportFile = join(fixtures, `${golden}.report.txt`);
    const report = renderMigrationReport(result);
    if (process.env.UPDATE_GOLDEN === '1') {
      writeFileSync(codeFile, result.code);
      writeFileSync(reportFile, report);
    }
    expect(result.code).toBe(readFileSync(codeFile, 'utf8'));
    expect(report).toBe(readFileSync(reportFile, 'utf8'));
  }

  test.each(names)('%s translates to the golden code and report', (name) => {
    expectGolden(name, translate(name));
  });

  test.each(names)('%s gives the same code and report whatever the order of the objects', (name) => {
    const objects = readObjects([join(fixtures, `${name}.yaml`)]);
    const forward = translate(name, objects);
    const backward = translate(name, [...objects].reverse());
    expect(backward.code).toBe(forward.code);
    expect(renderMigrationReport(backward)).toBe(renderMigrationReport(forward));
  });

  test.each(upstreamNames)('upstream %s translates to the golden code and report', (name) => {
    expectGolden(`upstream-${name}`, translateUpstream(name));
  });

  test('every upstream fixture names its source repository and path', () => {
    const files = [...new Set(Object.values(upstreamCases).flatMap((c) => c.files))];
    for (const file of files) {
      const [, repo, path] = /^test\/migrate\/fixtures\/upstream\/([^/]+)\/(.+)$/.exec(file)!;
      expect(readFileSync(file, 'utf8').split('\n').slice(0, 3).join('\n')).toContain(
        `# Source: stolostron/${repo}, ${path}\n# https://github.com/stolostron/${repo}/blob/`,
      );
    }
  });

  test('every golden file type-checks against src/constructs with the TypeScript compiler', () => {
    const configPath = join(root, 'tsconfig.json');
    const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
    const files = [
      ...names.map((n) => join(fixtures, `${n}.golden.ts`)),
      ...upstreamNames.map((n) => join(fixtures, `upstream-${n}.golden.ts`)),
    ];
    const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toStrictEqual([]);
  });
});

/** Diagnostics of `code` compiled as a file in test/migrate/fixtures (never written to disk). */
function typeCheckVirtual(code: string): string[] {
  const parsed = ts.parseJsonConfigFileContent(
    ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config,
    ts.sys,
    root,
  );
  const options = { ...parsed.options, noEmit: true };
  const virtual = join(fixtures, '__virtual-migrated.ts');
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) =>
    file === virtual ? ts.createSourceFile(file, code, language) : getSourceFile(file, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === virtual || fileExists(file);
  const program = ts.createProgram([virtual], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('migrate subscriptions: nothing translatable', () => {
  test('GIVEN only untranslatable Subscriptions THEN the module still compiles (no unused imports or parameters) and the report says why', () => {
    const objects = readObjects([join(fixtures, 'untranslatable.yaml')]).filter(
      (o) => !['batch-jobs', 'db-migrate-subscription-1'].includes(String((o.metadata as { name?: string })?.name)),
    );
    const result = translateSubscriptions(objects, { importFrom: IMPORT });
    expect(result.apps).toStrictEqual([]);
    expect(result.code).toBe(
      [
        '// Generated by `pullfleet migrate subscriptions`.',
        '// Review it and the migration report before committing; then call addMigratedApps(hub) in fleet.config.ts.',
        `import { type Hub } from '${IMPORT}';`,
        '',
        '/** The apps 0 ACM Subscriptions delivered, as pull ApplicationSets on `hub`. */',
        'export function addMigratedApps(_hub: Hub): void {',
        '  // Nothing that delivers could be translated: see the migration report.',
        '}',
        '',
      ].join('\n'),
    );
    expect(typeCheckVirtual(result.code)).toStrictEqual([]);
    expect(result.notes.map((n) => `${n.subject} ${n.severity}`)).toStrictEqual([
      'batch/batch-jobs-local skipped',
      'batch/orphan skipped',
      'reports/reports-subscription skipped',
      'shared/shared-config-subscription skipped',
    ]);
  });
});

describe('migrate subscriptions: the generated code synthesizes', () => {
  test('Git subscriptions sharing a PlacementRule become two pull ApplicationSets on one Placement', async () => {
    const objects = await synth('git-placementrule');
    const placement = objects.find((o) => o.kind === 'Placement')!;
    expect(placement.metadata).toMatchObject({ name: 'guestbook-placement-1', namespace: 'argocd' });
    expect(placement.spec).toStrictEqual({
      numberOfClusters: 3,
      predicates: [
        {
          requiredClusterSelector: {
            labelSelector: {
              matchLabels: { environment: 'prod' },
              matchExpressions: [{ key: 'region', operator: 'In', values: ['us-east-1', 'us-west-2'] }],
            },
          },
        },
      ],
    });
    const appSets = objects.filter((o) => o.kind === 'ApplicationSet');
    expect(appSets.map((a) => a.metadata.name).sort()).toStrictEqual(['guestbook', 'guestbook-redis']);
    const redis = appSets.find((a) => a.metadata.name === 'guestbook-redis')!;
    expect(redis.spec.generators[0].clusterDecisionResource.labelSelector.matchLabels).toStrictEqual({
      'cluster.open-cluster-management.io/placement': 'guestbook-placement-1',
    });
    expect(redis.spec.template.spec.source).toStrictEqual({
      repoURL: 'https://github.com/example/apps.git',
      path: 'guestbook/redis',
      targetRevision: '2f6c1d0e9a4b7c3d5e8f1a2b3c4d5e6f7a8b9c0d',
    });
    expect(redis.spec.template.spec.destination.namespace).toBe('guestbook');
  });

  test('a Helm subscription keeps its chart, version constraint, release alias and values', async () => {
    const objects = await synth('helm-placement', (hub) => new ClusterSet(hub, 'edge'));
    const appSet = objects.find((o) => o.kind === 'ApplicationSet' && o.metadata.name === 'ingress-nginx')!;
    expect(appSet.spec.template.spec.source).toStrictEqual({
      repoURL: 'https://kubernetes.github.io/ingress-nginx',
      chart: 'ingress-nginx',
      targetRevision: '4.11.*',
      helm: {
        releaseName: 'edge-ingress',
        valuesObject: {
          controller: { replicaCount: 2, service: { type: 'LoadBalancer' }, metrics: { enabled: true } },
        },
      },
    });
    const placement = objects.find((o) => o.kind === 'Placement')!;
    expect(placement.spec.clusterSets).toStrictEqual(['edge']);
    expect(placement.spec.prioritizerPolicy).toStrictEqual({
      mode: 'Exact',
      configurations: [
        { scoreCoordinate: { type: 'BuiltIn', builtIn: 'Steady' }, weight: 3 },
        { scoreCoordinate: { type: 'AddOn', addOn: { resourceName: 'default', scoreName: 'cpuratio' } }, weight: 1 },
      ],
    });
  });

  test('fails when the fleet does not declare a cluster set the migrated placement uses, naming it', async () => {
    await expect(synth('helm-placement')).rejects.toThrow(
      `hub: the migrated placements use cluster set "edge": declare it (new ClusterSet(hub, 'edge')) before addMigratedApps(hub)`,
    );
  });

  test('a paused subscription is generated without auto-sync; untranslatable channels generate nothing', async () => {
    const objects = await synth('untranslatable');
    const appSets = objects.filter((o) => o.kind === 'ApplicationSet');
    expect(appSets.map((a) => a.metadata.name).sort()).toStrictEqual(['batch-jobs', 'db-migrate']);
    expect(
      appSets.find((a) => a.metadata.name === 'db-migrate')!.spec.template.spec.syncPolicy?.automated,
    ).toBeUndefined();
    expect(
      appSets.find((a) => a.metadata.name === 'batch-jobs')!.spec.template.spec.syncPolicy?.automated,
    ).toBeDefined();
  });
});

describe('pullfleet migrate subscriptions', () => {
  const run = (args: string[]) => runCli(['migrate', 'subscriptions', ...args]);

  const fixture = (name: string) => join(fixtures, `${name}.yaml`);

  test('writes the code and the report to files; --strict exits 1 when something was not translated', async () => {
    const output = join(tmp, 'out', 'migrated.ts');
    const report = join(tmp, 'out', 'report.txt');
    const result = await run([fixture('untranslatable'), '-o', output, '--report', report, '--strict']);
    expect(result.code).toBe(1);
    expect(result.err).toBe(`wrote ${output} and ${report}\n`);
    expect(readFileSync(report, 'utf8')).toContain('[skipped] channel channels/bucket is an ObjectBucket channel');
    expect(readFileSync(output, 'utf8')).toContain("new PullApplicationSet(hub, 'db-migrate', {");
  });

  test('fails when the output file exists without --force, leaving it untouched', async () => {
    const output = join(tmp, 'existing.ts');
    writeFileSync(output, '// my own code\n');
    const result = await run([fixture('helm-placement'), '-o', output]);
    expect(result).toStrictEqual({
      code: 2,
      out: '',
      err: `pullfleet migrate subscriptions: ${output} exists: pass --force to replace it (nothing was written)\n`,
    });
    expect(readFileSync(output, 'utf8')).toBe('// my own code\n');
    expect((await run([fixture('helm-placement'), '-o', output, '--force'])).code).toBe(0);
    expect(readFileSync(output, 'utf8')).toContain('AppSource.helm(');
  });

  test('fails when the input has no Subscription or is not YAML', async () => {
    const empty = join(tmp, 'empty.yaml');
    writeFileSync(empty, 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n');
    expect(await run([empty])).toStrictEqual({
      code: 2,
      out: '',
      err: `pullfleet migrate subscriptions: no apps.open-cluster-management.io Subscription in ${empty}\n`,
    });
    const broken = join(tmp, 'broken.yaml');
    writeFileSync(broken, 'kind: [\n');
    const result = await run([broken]);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      new RegExp(`^pullfleet migrate subscriptions: ${broken.replace(/[.]/g, '\\.')} is not valid YAML`),
    );
    expect(await run([])).toStrictEqual({
      code: 2,
      out: '',
      err: 'pullfleet migrate subscriptions: give Subscription YAML files, or --kubeconfig / --context to read them from the hub\n',
    });
  });

  test('reads Subscriptions, Channels and PlacementRules from the hub with --kubeconfig', async () => {
    const server = await startFakeApiServer();
    try {
      for (const [kind, plural, group, version] of [
        ['Subscription', 'subscriptions', 'apps.open-cluster-management.io', 'v1'],
        ['Channel', 'channels', 'apps.open-cluster-management.io', 'v1'],
        ['PlacementRule', 'placementrules', 'apps.open-cluster-management.io', 'v1'],
      ] as const) {
        server.store.registerDefinition({
          group,
          version,
          kind,
          plural,
          namespaced: true,
          subresources: ['status'],
          custom: true,
        });
      }
      const objects = readObjects([fixture('git-placementrule')]).filter((obj) =>
        String(obj.apiVersion).startsWith('apps.open-cluster-management.io/'),
      );
      // As on a real hub, the objects' namespaces exist.
      for (const ns of new Set(objects.map((obj) => (obj.metadata as { namespace: string }).namespace)))
        server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      for (const obj of objects) server.store.create(obj);
      const kubeconfig = join(tmp, 'kubeconfig');
      writeFileSync(kubeconfig, server.kubeConfigYaml());
      const result = await run(['--kubeconfig', kubeconfig, '--import', IMPORT]);
      expect(result.code).toBe(0);
      // the same code as from the files, but for the header naming the source
      const fromFiles = translate('git-placementrule').code;
      expect(result.out.split('\n').slice(1).join('\n')).toBe(fromFiles.split('\n').slice(1).join('\n'));
      expect(result.out.split('\n')[0]).toBe(`// Generated by \`pullfleet migrate subscriptions\` from ${server.url}.`);
    } finally {
      await server.close();
    }
  });

  test('fails when the hub does not serve Subscriptions', async () => {
    const server = await startFakeApiServer();
    const kubeconfig = join(tmp, 'kubeconfig-nosub');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
    try {
      const result = await run(['--kubeconfig', kubeconfig]);
      expect(result).toStrictEqual({
        code: 2,
        out: '',
        err: `pullfleet migrate subscriptions: the hub at ${server.url} does not serve Subscriptions (apps.open-cluster-management.io/v1): is the ACM application lifecycle installed? Check --kubeconfig / --context\n`,
      });
    } finally {
      await server.close();
    }
  });
});

/** `node bin/pullfleet.js …`, as a user runs it. */
function binary(args: readonly string[]): { code: number | null; out: string; err: string } {
  const result = spawnSync(process.execPath, [join(root, 'bin', 'pullfleet.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (result.error) throw result.error;
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe('pullfleet migrate subscriptions on real upstream inputs (the binary)', () => {
  const migrate = (args: readonly string[]) => binary(['migrate', 'subscriptions', ...args]);

  test('objects without metadata.namespace are read in the default namespace (or --namespace) and matched: the pacman sample', () => {
    const { files } = upstreamCases.pacman;
    const plain = migrate(['--import', IMPORT, ...files]);
    expect(plain.code).toBe(0);
    expect(plain.err).not.toContain('is not in the input');
    expect(plain.err).toContain(
      'input: 2 objects have no metadata.namespace and are read in namespace "default", as kubectl apply would (pass --namespace for the one kustomize or kubectl -n gave them): PlacementRule pacman-sample, Subscription pacman-sample\n',
    );
    expect(plain.err).toContain('Subscription default/pacman-sample:\n');
    expect(plain.out).toContain("const pacmanSamplePlacement = new Placement(hub, 'pacman-sample', {");
    expect(plain.out).toContain("destinationNamespace: 'default',");
    // as kustomize applies them (kustomization.yaml: namespace: pacman-sample)
    const kustomized = migrate(['--import', IMPORT, '--namespace', 'pacman-sample', ...files]);
    expect(kustomized).toStrictEqual({
      code: 0,
      out: readFileSync(join(fixtures, 'upstream-pacman.golden.ts'), 'utf8'),
      err: readFileSync(join(fixtures, 'upstream-pacman.report.txt'), 'utf8'),
    });
    expect(migrate(['--namespace', 'Not_A_Namespace', ...files])).toStrictEqual({
      code: 2,
      out: '',
      err: 'pullfleet migrate subscriptions: --namespace "Not_A_Namespace" is not a namespace name (a DNS label)\n',
    });
  });

  test('the same Subscription in two files is one Subscription: differing, neither is translated and both files are named; identical, it is translated once', () => {
    const { files } = upstreamCases['15-git-helm-both'];
    const both = migrate(['--import', IMPORT, ...files]);
    expect(both.code).toBe(0);
    expect(both.out).not.toContain('PullApplicationSet(hub');
    expect(both.err).toBe(readFileSync(join(fixtures, 'upstream-15-git-helm-both.report.txt'), 'utf8'));
    expect(both.err.match(/^Subscription default\/git-app-sub:$/gm)).toHaveLength(1);
    expect(both.err).toContain(
      `[skipped] the Subscription is given in ${GIT_HELM}/install/subscription.yaml and ${GIT_HELM}/update/subscription.yaml, differently (metadata.annotations["apps.open-cluster-management.io/github-path"] "mortgage-fail-helm" ≠ "helloworld-helm"): neither is translated`,
    );
    expect(migrate(['--import', IMPORT, '--strict', ...files]).code).toBe(1);
    // The same file twice: one app, every report line once.
    const install = upstreamCases['15-git-helm-install'].files;
    const twice = migrate(['--import', IMPORT, ...install, `${GIT_HELM}/install/subscription.yaml`]);
    expect(twice.code).toBe(0);
    expect(twice.out.match(/new PullApplicationSet\(/g)).toHaveLength(1);
    expect(twice.out).not.toContain('git-app-sub-2');
    expect(twice.err).toContain(
      `input: Subscription default/git-app-sub is given 2 times in ${GIT_HELM}/install/subscription.yaml, identically: translated once\n`,
    );
    const once = migrate(['--import', IMPORT, ...install]);
    expect(twice.err.split('\n').filter((l) => !l.startsWith('input: '))).toStrictEqual(once.err.split('\n'));
  });

  test('Helm values of a chart kept in Git stay Helm values; an inline placement naming no cluster generates nothing that delivers', () => {
    const { files } = upstreamCases['github-channel'];
    const result = migrate(['--import', IMPORT, ...files]);
    expect(result.code).toBe(0);
    expect(result.err).not.toContain('Kustomize');
    expect(result.err).toContain('[changed] packageOverrides of chart "ibm-mongodb-dev" become the app\'s Helm values');
    expect(result.err).toContain(
      '[skipped] its inline placement names no cluster (local: false, and no clusters, clusterSelector or placementRef)',
    );
    expect(result.err.split('\n')[0]).toBe('translated 0 Subscriptions into 0 PullApplicationSets and 0 Placements');
    // Nothing delivers: no Placement, no app outside comments.
    const live = result.out.split('\n').filter((l) => !l.trimStart().startsWith('//'));
    expect(live.join('\n')).not.toMatch(/new (Placement|PullApplicationSet)\(/);
    expect(result.out).toBe(readFileSync(join(fixtures, 'upstream-github-channel.golden.ts'), 'utf8'));
    expect(migrate(['--import', IMPORT, '--strict', ...files]).code).toBe(1);
  });

  test('the generated code imports the package by default (--import overrides it) and the report says what resources to declare', () => {
    const { files, namespace } = upstreamCases.pacman;
    const result = migrate(['--namespace', namespace!, ...files]);
    expect(result.code).toBe(0);
    expect(result.out).toContain("import { AppSource, Placement, PullApplicationSet, type Hub } from 'pullfleet';\n");
    expect(result.out).not.toContain('src/constructs');
    expect(result.err).toContain(
      'to do: declare resources on each app: the generated apps declare none, so their spokes get the destination namespace but no Role in it for the spoke Argo CD',
    );
    expect(migrate(['--namespace', namespace!, '--import', '@acme/fleet-kit', ...files]).out).toContain(
      "from '@acme/fleet-kit';\n",
    );
  });
});

describe('migrated apps on the constructs', () => {
  test('a Git source with Helm values renders them as the Application helm.valuesObject', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const placement = new Placement(hub, 'dev', { predicates: [{ labels: { usage: 'development' } }] });
    new PullApplicationSet(hub, 'git-mongodb', {
      source: AppSource.git({
        repoURL: 'https://github.com/IBM/charts.git',
        path: 'stable/ibm-mongodb-dev',
        releaseName: 'mongo',
        values: { persistence: { enabled: false } },
      }),
      destinationNamespace: 'mongo',
      placement,
      resources: [{ apiGroup: 'apps', resources: ['deployments'] }],
    });
    const appSet = [...fleet.renderObjects().values()].flat().find((o) => (o as Obj).kind === 'ApplicationSet') as Obj;
    expect(appSet.spec.template.spec.source).toStrictEqual({
      repoURL: 'https://github.com/IBM/charts.git',
      path: 'stable/ibm-mongodb-dev',
      targetRevision: 'HEAD',
      helm: { releaseName: 'mongo', valuesObject: { persistence: { enabled: false } } },
    });
    expect(fleet.warnings().filter((w) => w.message.includes('declares no resources'))).toStrictEqual([]);
  });

  test('an app that declares no resources is a warning (an error with --strict): its spokes would get a namespace and no Role', () => {
    const fleet = new Fleet({ outdir: '/nonexistent/never-written' });
    const hub = new Hub(fleet, 'hub');
    const placement = new Placement(hub, 'dev', { predicates: [{ labels: { usage: 'development' } }] });
    new PullApplicationSet(hub, 'pacman', {
      source: AppSource.git({ repoURL: 'https://github.com/stolostron/application-samples.git', path: 'pacman' }),
      destinationNamespace: 'pacman',
      placement,
    });
    expect(fleet.warnings().map((w) => w.message)).toContain(
      `app "pacman" declares no resources: its spokes get namespace "pacman" but no Role in it for their Argo CD, which then cannot create the app's objects there (unless it has cluster-wide rights some other way); list what the manifests hold, for example resources: [{ apiGroup: 'apps', resources: ['deployments'] }, { apiGroup: '', resources: ['services'] }]`,
    );
  });
});
