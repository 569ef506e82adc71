/**
 * Golden tests of `pullfleet migrate subscriptions`: each fixtures/<name>.yaml translates to exactly
 * fixtures/<name>.golden.ts and fixtures/<name>.report.txt (UPDATE_GOLDEN=1 rewrites them), the code
 * type-checks against the real src/constructs with the TypeScript compiler, and it synthesizes.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from '@jest/globals';
import ts from 'typescript';
import { ClusterSet, Fleet, Hub } from '../../src/constructs/index.js';
import { renderMigrationReport, translateSubscriptions, type JsonObject } from '../../src/model/index.js';
import { readObjects } from '../../src/cli/migrate.js';
import { startFakeApiServer } from '../support/fake-apiserver.js';
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

function translate(name: string, objects?: JsonObject[]) {
  const file = `test/migrate/fixtures/${name}.yaml`;
  return translateSubscriptions(objects ?? readObjects([join(root, file)]), { importFrom: IMPORT, sources: [file] });
}

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
  test.each(names)('%s translates to the golden code and report', (name) => {
    const result = translate(name);
    const codeFile = join(fixtures, `${name}.golden.ts`);
    const reportFile = join(fixtures, `${name}.report.txt`);
    const report = renderMigrationReport(result);
    if (process.env.UPDATE_GOLDEN === '1') {
      writeFileSync(codeFile, result.code);
      writeFileSync(reportFile, report);
    }
    expect(result.code).toBe(readFileSync(codeFile, 'utf8'));
    expect(report).toBe(readFileSync(reportFile, 'utf8'));
  });

  test.each(names)('%s gives the same code and report whatever the order of the objects', (name) => {
    const objects = readObjects([join(fixtures, `${name}.yaml`)]);
    const forward = translate(name, objects);
    const backward = translate(name, [...objects].reverse());
    expect(backward.code).toBe(forward.code);
    expect(renderMigrationReport(backward)).toBe(renderMigrationReport(forward));
  });

  test('every golden file type-checks against src/constructs with the TypeScript compiler', () => {
    const configPath = join(root, 'tsconfig.json');
    const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root);
    const files = names.map((n) => join(fixtures, `${n}.golden.ts`));
    const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toStrictEqual([]);
  });
});

/** Diagnostics of `code` compiled as a file in test/migrate/fixtures (never written to disk). */
function typeCheckVirtual(code: string): string[] {
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, root);
  const options = { ...parsed.options, noEmit: true };
  const virtual = join(fixtures, '__virtual-migrated.ts');
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) => (file === virtual ? ts.createSourceFile(file, code, language) : getSourceFile(file, language, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === virtual || fileExists(file);
  const program = ts.createProgram([virtual], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('migrate subscriptions: nothing translatable', () => {
  test('GIVEN only untranslatable Subscriptions THEN the module still compiles (no unused imports or parameters) and the report says why', () => {
    const objects = readObjects([join(fixtures, 'untranslatable.yaml')]).filter((o) => !['batch-jobs', 'db-migrate-subscription-1'].includes(String((o.metadata as { name?: string })?.name)));
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
        '  // Nothing could be translated: see the migration report.',
        '}',
        '',
      ].join('\n'),
    );
    expect(typeCheckVirtual(result.code)).toStrictEqual([]);
    expect(result.notes.map((n) => `${n.subject} ${n.severity}`)).toStrictEqual(['batch/batch-jobs-local skipped', 'batch/orphan skipped', 'reports/reports-subscription skipped', 'shared/shared-config-subscription skipped']);
  });
});

describe('migrate subscriptions: the generated code synthesizes', () => {
  test('Git subscriptions sharing a PlacementRule become two pull ApplicationSets on one Placement', async () => {
    const objects = await synth('git-placementrule');
    const placement = objects.find((o) => o.kind === 'Placement')!;
    expect(placement.metadata).toMatchObject({ name: 'guestbook-placement-1', namespace: 'argocd' });
    expect(placement.spec).toStrictEqual({
      numberOfClusters: 3,
      predicates: [{ requiredClusterSelector: { labelSelector: { matchLabels: { environment: 'prod' }, matchExpressions: [{ key: 'region', operator: 'In', values: ['us-east-1', 'us-west-2'] }] } } }],
    });
    const appSets = objects.filter((o) => o.kind === 'ApplicationSet');
    expect(appSets.map((a) => a.metadata.name).sort()).toStrictEqual(['guestbook', 'guestbook-redis']);
    const redis = appSets.find((a) => a.metadata.name === 'guestbook-redis')!;
    expect(redis.spec.generators[0].clusterDecisionResource.labelSelector.matchLabels).toStrictEqual({ 'cluster.open-cluster-management.io/placement': 'guestbook-placement-1' });
    expect(redis.spec.template.spec.source).toStrictEqual({ repoURL: 'https://github.com/example/apps.git', path: 'guestbook/redis', targetRevision: '2f6c1d0e9a4b7c3d5e8f1a2b3c4d5e6f7a8b9c0d' });
    expect(redis.spec.template.spec.destination.namespace).toBe('guestbook');
  });

  test('a Helm subscription keeps its chart, version constraint, release alias and values', async () => {
    const objects = await synth('helm-placement', (hub) => new ClusterSet(hub, 'edge'));
    const appSet = objects.find((o) => o.kind === 'ApplicationSet' && o.metadata.name === 'ingress-nginx')!;
    expect(appSet.spec.template.spec.source).toStrictEqual({
      repoURL: 'https://kubernetes.github.io/ingress-nginx',
      chart: 'ingress-nginx',
      targetRevision: '4.11.*',
      helm: { releaseName: 'edge-ingress', valuesObject: { controller: { replicaCount: 2, service: { type: 'LoadBalancer' }, metrics: { enabled: true } } } },
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
    await expect(synth('helm-placement')).rejects.toThrow(`hub: the migrated placements use cluster set "edge": declare it (new ClusterSet(hub, 'edge')) before addMigratedApps(hub)`);
  });

  test('a paused subscription is generated without auto-sync; untranslatable channels generate nothing', async () => {
    const objects = await synth('untranslatable');
    const appSets = objects.filter((o) => o.kind === 'ApplicationSet');
    expect(appSets.map((a) => a.metadata.name).sort()).toStrictEqual(['batch-jobs', 'db-migrate']);
    expect(appSets.find((a) => a.metadata.name === 'db-migrate')!.spec.template.spec.syncPolicy?.automated).toBeUndefined();
    expect(appSets.find((a) => a.metadata.name === 'batch-jobs')!.spec.template.spec.syncPolicy?.automated).toBeDefined();
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
    expect(result).toStrictEqual({ code: 2, out: '', err: `pullfleet migrate subscriptions: ${output} exists: pass --force to replace it (nothing was written)\n` });
    expect(readFileSync(output, 'utf8')).toBe('// my own code\n');
    expect((await run([fixture('helm-placement'), '-o', output, '--force'])).code).toBe(0);
    expect(readFileSync(output, 'utf8')).toContain('AppSource.helm(');
  });

  test('fails when the input has no Subscription or is not YAML', async () => {
    const empty = join(tmp, 'empty.yaml');
    writeFileSync(empty, 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n');
    expect(await run([empty])).toStrictEqual({ code: 2, out: '', err: `pullfleet migrate subscriptions: no apps.open-cluster-management.io Subscription in ${empty}\n` });
    const broken = join(tmp, 'broken.yaml');
    writeFileSync(broken, 'kind: [\n');
    const result = await run([broken]);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(new RegExp(`^pullfleet migrate subscriptions: ${broken.replace(/[.]/g, '\\.')} is not valid YAML`));
    expect(await run([])).toStrictEqual({ code: 2, out: '', err: 'pullfleet migrate subscriptions: give Subscription YAML files, or --kubeconfig / --context to read them from the hub\n' });
  });

  test('reads Subscriptions, Channels and PlacementRules from the hub with --kubeconfig', async () => {
    const server = await startFakeApiServer();
    try {
      for (const [kind, plural, group, version] of [
        ['Subscription', 'subscriptions', 'apps.open-cluster-management.io', 'v1'],
        ['Channel', 'channels', 'apps.open-cluster-management.io', 'v1'],
        ['PlacementRule', 'placementrules', 'apps.open-cluster-management.io', 'v1'],
      ] as const) {
        server.store.registerDefinition({ group, version, kind, plural, namespaced: true, subresources: ['status'], custom: true });
      }
      const objects = readObjects([fixture('git-placementrule')]).filter((obj) => String(obj.apiVersion).startsWith('apps.open-cluster-management.io/'));
      // As on a real hub, the objects' namespaces exist.
      for (const ns of new Set(objects.map((obj) => (obj.metadata as { namespace: string }).namespace))) server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } as never);
      for (const obj of objects) server.store.create(obj as never);
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
