import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { loadKubeConfig } from '../../src/kube/client.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-kubeconfig-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return file;
}

const twoContexts = kubeconfig(
  'two.yaml',
  `apiVersion: v1
kind: Config
clusters:
  - name: hub-a
    cluster: { server: https://hub-a.example:6443 }
  - name: hub-b
    cluster: { server: https://hub-b.example:6443 }
users:
  - name: me
    user: { token: not-a-secret }
contexts:
  - name: a
    context: { cluster: hub-a, user: me }
  - name: b
    context: { cluster: hub-b, user: me }
current-context: a
`,
);

describe('loadKubeConfig', () => {
  test('GIVEN a file THEN its current context is used', () => {
    expect(loadKubeConfig({ path: twoContexts }).getCurrentCluster()?.server).toBe('https://hub-a.example:6443');
  });

  test('GIVEN --context THEN that context is used', () => {
    expect(loadKubeConfig({ path: twoContexts, context: 'b' }).getCurrentCluster()?.server).toBe(
      'https://hub-b.example:6443',
    );
  });

  test('fails naming the contexts there are when the context is unknown', () => {
    expect(() => loadKubeConfig({ path: twoContexts, context: 'c' })).toThrow(
      'context "c" is not in the kubeconfig (contexts: a, b)',
    );
  });

  test('fails naming the file when it cannot be read', () => {
    const missing = path.join(dir, 'missing.yaml');
    expect(() => loadKubeConfig({ path: missing })).toThrow(`cannot read kubeconfig ${missing}`);
  });

  test('fails when the kubeconfig has no current cluster', () => {
    const empty = kubeconfig('empty.yaml', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => loadKubeConfig({ path: empty })).toThrow(
      'the kubeconfig has no current cluster: pass --kubeconfig and --context',
    );
  });

  test('GIVEN $KUBECONFIG with two files THEN both are merged and the first file picks the context', () => {
    const other = kubeconfig(
      'other.yaml',
      'apiVersion: v1\nkind: Config\nclusters: [{ name: hub-c, cluster: { server: "https://hub-c.example:6443" } }]\nusers: [{ name: you, user: { token: t } }]\ncontexts: [{ name: c, context: { cluster: hub-c, user: you } }]\n',
    );
    const env = { KUBECONFIG: `${twoContexts}${path.delimiter}${other}`, HOME: dir };
    expect(loadKubeConfig({ env }).getCurrentCluster()?.server).toBe('https://hub-a.example:6443');
    expect(loadKubeConfig({ env, context: 'c' }).getCurrentCluster()?.server).toBe('https://hub-c.example:6443');
  });

  test('GIVEN no --kubeconfig and no $KUBECONFIG THEN ~/.kube/config is used', () => {
    const home = fs.mkdtempSync(path.join(dir, 'home-'));
    fs.mkdirSync(path.join(home, '.kube'));
    fs.copyFileSync(twoContexts, path.join(home, '.kube', 'config'));
    expect(loadKubeConfig({ env: { HOME: home } }).getCurrentCluster()?.server).toBe('https://hub-a.example:6443');
  });

  test('fails saying no kubeconfig was found when there is none, instead of falling back to localhost', () => {
    const home = fs.mkdtempSync(path.join(dir, 'empty-home-'));
    expect(() => loadKubeConfig({ env: { HOME: home } })).toThrow(
      `no kubeconfig found: --kubeconfig not given, $KUBECONFIG not set, ${path.join(home, '.kube', 'config')} does not exist and this is not a pod: pass --kubeconfig <file> or set KUBECONFIG`,
    );
  });

  test('fails naming the file when one in $KUBECONFIG cannot be read', () => {
    const missing = path.join(dir, 'gone.yaml');
    expect(() => loadKubeConfig({ env: { KUBECONFIG: missing } })).toThrow(
      `cannot read kubeconfig ${missing} (from $KUBECONFIG)`,
    );
  });
});
