/**
 * `pullfleet validate [dir]`: a folder of hand-written YAML checked with the same schema and policy
 * rules as synth (in-process), exit codes and `-o json`, and a few runs of the real CLI end to end.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { runValidate, validateFolder, type ValidateReport } from '../../src/cli/commands/validate.js';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const distDir = path.join(repo, 'dist');

const pullApp = (
  overrides: { labels?: Record<string, string>; annotations?: Record<string, string>; server?: string } = {},
) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: {
    name: 'web-east',
    namespace: 'argocd',
    labels: overrides.labels ?? { 'apps.open-cluster-management.io/pull-to-ocm-managed-cluster': 'true' },
    annotations: overrides.annotations ?? {
      'apps.open-cluster-management.io/ocm-managed-cluster': 'east',
      'argocd.argoproj.io/skip-reconcile': 'true',
    },
  },
  spec: {
    project: 'default',
    source: { repoURL: 'https://git.example.com/apps.git', path: 'web' },
    destination: { server: overrides.server ?? 'https://kubernetes.default.svc', namespace: 'web' },
  },
});

function folder(files: Record<string, unknown[]>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-validate-'));
  for (const [file, docs] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), docs.map((d) => stringify(d)).join('---\n'));
  }
  return dir;
}

function messages(report: ValidateReport): string[] {
  return report.errors.map((e) => `${e.file}: ${e.message}`);
}

describe('validate <dir>', () => {
  const dirs: string[] = [];
  const make = (files: Record<string, unknown[]>) => {
    const dir = folder(files);
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  test('GIVEN the committed example dist/ THEN it is valid', async () => {
    const report = validateFolder(distDir);
    expect(report.errors).toStrictEqual([]);
    expect(report.ok).toBe(true);
    expect(report.objects).toBeGreaterThan(40);
  });

  test('fails when an Argo CD cluster Secret carries credentials', async () => {
    const dir = make({
      'hub/cluster-secrets.yaml': [
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: 'cluster-east',
            namespace: 'argocd',
            labels: { 'argocd.argoproj.io/secret-type': 'cluster' },
          },
          stringData: { name: 'east', server: 'https://east:6443', config: '{"bearerToken":"abc"}' },
        },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'db', namespace: 'web' },
          stringData: { password: 'hunter2', host: 'db' },
        },
      ],
    });
    expect(messages(validateFolder(dir))).toStrictEqual([
      'hub/cluster-secrets.yaml: Secret argocd/cluster-east: Argo CD cluster Secret carries "config" (bearer token, TLS client key or exec credentials): pull delivery never contacts spokes, so the Secret holds only name, server, project, namespaces, clusterResources, shard; remove "config" and keep credentials out of Git',
      'hub/cluster-secrets.yaml: Secret web/db: Secret key "password" looks like a credential, written in plain text into Git: remove it and deliver it with a secret manager (External Secrets, Sealed Secrets)',
    ]);
  });

  test('fails on wildcard RBAC and a cluster-admin binding', async () => {
    const dir = make({
      'hub/rbac.yaml': [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'all' },
          rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'admin' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: 'x', namespace: 'y' }],
        },
      ],
    });
    const found = messages(validateFolder(dir));
    expect(found).toHaveLength(4);
    expect(found[0]).toContain('ClusterRole all: rules[0] verbs has "*"');
    expect(found[1]).toContain('rules[0] apiGroups has "*"');
    expect(found[2]).toContain('rules[0] resources has "*"');
    expect(found[3]).toContain('ClusterRoleBinding admin: binds cluster-admin');
  });

  test('fails when a pull app lacks the cluster annotation or skip-reconcile, or deploys elsewhere', async () => {
    const dir = make({
      'hub/applications.yaml': [
        pullApp({ annotations: {} }),
        {
          ...pullApp({ server: 'https://east.example.com:6443' }),
          metadata: { ...pullApp().metadata, name: 'web-west' },
        },
        { ...pullApp({ labels: {} }), metadata: { ...pullApp({ labels: {} }).metadata, name: 'web-north' } },
      ],
    });
    expect(messages(validateFolder(dir))).toStrictEqual([
      'hub/applications.yaml: Application argocd/web-east: Application is a pull app without the apps.open-cluster-management.io/ocm-managed-cluster annotation, so it is delivered nowhere: annotate the target ManagedCluster',
      'hub/applications.yaml: Application argocd/web-east: Application is a pull app without argocd.argoproj.io/skip-reconcile: "true", so the hub Argo CD would also deploy it (to the hub): add the annotation',
      'hub/applications.yaml: Application argocd/web-west: Application has destination server "https://east.example.com:6443": a pulled app always deploys to the spoke it runs on; set destination.server to "https://kubernetes.default.svc"',
      'hub/applications.yaml: Application argocd/web-north: Application has the apps.open-cluster-management.io/ocm-managed-cluster annotation but not the apps.open-cluster-management.io/pull-to-ocm-managed-cluster: "true" label, so the hub Argo CD would deploy it to the hub: add the label',
    ]);
  });

  test('fails on sizes, name limits, duplicates and YAML that is not an object', async () => {
    const dir = make({
      'hub/big.yaml': [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'big', namespace: 'argocd' },
          data: { blob: 'x'.repeat(600 * 1024) },
        },
      ],
      'hub/names.yaml': [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n'.repeat(64) } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name', namespace: 'argocd' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dup', namespace: 'argocd' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dup', namespace: 'argocd' } },
        ['not', 'an', 'object'],
      ],
    });
    const found = messages(validateFolder(dir));
    expect(found).toStrictEqual([
      expect.stringMatching(
        /^hub\/big\.yaml: ConfigMap argocd\/big: is 6\d{5} bytes, over the size budget of 512000 bytes/,
      ),
      `hub/names.yaml: Namespace ${'n'.repeat(64)}: metadata.name "${'n'.repeat(64)}" is 64 characters long; the limit is 63: rename the object`,
      'hub/names.yaml: ConfigMap argocd/Bad_Name: metadata.name "Bad_Name" must consist of lower-case letters, digits, "-" and ".", and start and end with a letter or digit: rename the object',
      'hub/names.yaml: ConfigMap argocd/dup is also defined in hub/names.yaml: the same cluster would apply both; keep one',
      'hub/names.yaml: document 5 is not a Kubernetes object (a list): give each document apiVersion, kind and metadata',
    ]);
    expect(validateFolder(dir, { sizeBudget: 1024 * 1024 }).errors.some((e) => e.file === 'hub/big.yaml')).toBe(false);
  });

  test('fails on schema errors inside a ManifestWork payload; unknown kinds are warnings, errors with --strict', async () => {
    const work = {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name: 'argocd-web', namespace: 'east' },
      spec: {
        workload: {
          manifests: [
            {
              apiVersion: 'argoproj.io/v1alpha1',
              kind: 'Application',
              metadata: { name: 'web', namespace: 'argocd' },
              spec: {
                project: 'default',
                source: { repoURL: 'https://git.example.com/a.git' },
                destination: { server: 'https://elsewhere:6443' },
              },
            },
          ],
        },
      },
    };
    const dir = make({
      'hub/works/east.yaml': [work],
      'hub/custom.yaml': [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }],
    });
    const report = validateFolder(dir);
    expect(messages(report)).toStrictEqual([
      'hub/works/east.yaml: ManifestWork east/argocd-web manifest[0] Application argocd/web: payload Application has destination server "https://elsewhere:6443": on the spoke it must deploy in-cluster; set destination.server to "https://kubernetes.default.svc"',
    ]);
    expect(report.warnings).toStrictEqual([
      {
        file: 'hub/custom.yaml',
        message: 'Widget w: no schema known for example.com/v1 Widget; only metadata and size were checked',
      },
    ]);
    const clean = make({
      'hub/custom.yaml': [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }],
    });
    expect([validateFolder(clean).ok, validateFolder(clean, { strict: true }).ok]).toStrictEqual([true, false]);
  });

  test('-o json reports every finding; exit 1 on errors, 0 when valid, 2 on usage errors', async () => {
    const dir = make({
      'hub/rbac.yaml': [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'r', namespace: 'a' },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['read'] }],
        },
      ],
    });
    const out: string[] = [];
    const err: string[] = [];
    expect(
      await runValidate(
        dir,
        { output: 'json' },
        (t) => out.push(t),
        (t) => err.push(t),
      ),
    ).toBe(1);
    const report = JSON.parse(out.join('')) as ValidateReport;
    expect(report).toStrictEqual({
      ok: false,
      strict: false,
      errors: [
        {
          file: 'hub/rbac.yaml',
          message:
            'Role a/r: rules[0] verb "read" is not an RBAC verb: use get, list, watch, create, update, patch, delete, deletecollection, impersonate, bind, escalate, use, approve, sign, attest',
        },
      ],
      warnings: [],
      objects: 1,
      files: 1,
    });
    expect(
      await runValidate(
        distDir,
        { output: 'text' },
        (t) => out.push(t),
        (t) => err.push(t),
      ),
    ).toBe(0);
    expect(out.at(-1)).toMatch(/^valid: 0 errors, 0 warnings in \d+ objects \(\d+ files\)\n$/);
    expect(
      await runValidate(
        path.join(dir, 'missing'),
        { output: 'text' },
        () => undefined,
        (t) => err.push(t),
      ),
    ).toBe(2);
    expect(
      await runValidate(
        dir,
        { output: 'xml' },
        () => undefined,
        (t) => err.push(t),
      ),
    ).toBe(2);
    expect(
      await runValidate(
        dir,
        { output: 'text', sizeBudget: '2000000' },
        () => undefined,
        (t) => err.push(t),
      ),
    ).toBe(2);
    expect(err).toStrictEqual([
      `pullfleet validate: ${path.join(dir, 'missing')} does not exist: give a folder of YAML files (or no folder to validate the fleet)\n`,
      'pullfleet validate: -o xml is not a format: use text or json\n',
      'pullfleet validate: --size-budget 2000000 must be a whole number of bytes from 1 to 1572864\n',
    ]);
  });
});

describe('pullfleet CLI end to end', () => {
  const cli = path.join(repo, 'bin', 'pullfleet.js');
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cli, ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, ...env, NODE_OPTIONS: '' },
      timeout: 120_000,
    });
  const fixture = 'npx tsx test/validate/fixtures/bad-fleet.ts';
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-cli-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('GIVEN a fleet with many mistakes WHEN validate -o json THEN every error and warning is listed and the exit code is 1', async () => {
    const result = run(['validate', '--app', fixture, '-o', 'json']);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as ValidateReport;
    expect(report.ok).toBe(false);
    const errors = report.errors.map((e) => `[${e.path}] ${e.message}`);
    for (const fragment of [
      '[hub/east] "hub" already has a Spoke with the id "east"',
      '[hub/west] spoke label key "bad key!"',
      '[hub/Placement:weights] numberOfClusters -1',
      '[hub/PullApplication:web] Application argocd/web-east: spec.source.repoURL "not a url"',
      'sync option "Bogus"',
    ]) {
      expect(errors.some((e) => e.includes(fragment))).toBe(true);
    }
    expect(report.warnings.map((w) => w.path).sort()).toStrictEqual([
      'hub/Placement:weights',
      'hub/PullApplication:nowhere',
      'hub/PullApplication:system',
      'hub/PullApplication:web',
    ]);
    // web's syncOptions are strings: besides the error for "Bogus", the deprecation warns.
    expect(report.warnings.find((w) => w.path === 'hub/PullApplication:web')?.message).toMatch(/deprecated/);
  });

  test('GIVEN a fleet with only warnings WHEN synth THEN it writes and shows them; WHEN synth --strict THEN it fails and the output is unchanged', async () => {
    const out = path.join(root, 'dist');
    const lenient = run(['synth', '-o', out, '--app', fixture], { PULLFLEET_FIXTURE: 'warn' });
    expect(lenient.status).toBe(0);
    expect(lenient.stderr).toContain(
      'warning: [hub/PullApplication:system] destinationNamespace "kube-system" is a system namespace',
    );
    expect(lenient.stderr).toContain('warning: [hub/PullApplication:nowhere] app "nowhere" is delivered nowhere');
    const files = fs.readdirSync(out, { recursive: true }).map(String).sort();
    const before = files.map((f) =>
      fs.statSync(path.join(out, f)).isFile() ? fs.readFileSync(path.join(out, f), 'utf8') : '',
    );
    const strict = run(['synth', '-o', out, '--app', fixture, '--strict'], { PULLFLEET_FIXTURE: 'warn' });
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain(
      '[hub/PullApplication:system] destinationNamespace "kube-system" is a system namespace: the app\'s pruning and self-heal would act on cluster components; deploy into a namespace of its own (warning, an error with --strict)',
    );
    expect(fs.readdirSync(out, { recursive: true }).map(String).sort()).toStrictEqual(files);
    expect(
      files.map((f) => (fs.statSync(path.join(out, f)).isFile() ? fs.readFileSync(path.join(out, f), 'utf8') : '')),
    ).toStrictEqual(before);
  });
});
