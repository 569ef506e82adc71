/**
 * The controller's client honours a kubeconfig `proxy-url`, on a real API server: every connection it
 * opens (requests and watches) is a CONNECT tunnel through a proxy this test runs on loopback, and the
 * answers are the server's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { NAMESPACE } from '../../src/kube/resources.js';
import type { KubeObject } from '../../src/model/core/types.js';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.js';
import { describeRealServer } from '../support/real-server.js';

describeRealServer('kube client through a kubeconfig proxy-url', (kubeconfigPath) => {
  let proxy: ConnectProxy;
  let dir: string;
  let client: KubeClient;
  let server: URL;
  const namespace = `pfproxy-${Date.now().toString(36).slice(-6)}`;

  beforeAll(async () => {
    proxy = await startConnectProxy();
    dir = mkdtempSync(join(tmpdir(), 'pullfleet-proxy-'));
    const original = new KubeConfig();
    original.loadFromFile(kubeconfigPath);
    server = new URL(original.getCurrentCluster()!.server);
    // The same kubeconfig, with the current cluster reached through the proxy (JSON is YAML).
    const config = JSON.parse(original.exportConfig()) as {
      clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
    };
    for (const entry of config.clusters)
      if (entry.name === original.getCurrentCluster()!.name) entry.cluster['proxy-url'] = proxy.url;
    writeFileSync(join(dir, 'kubeconfig'), JSON.stringify(config));
    client = new KubeClient(loadKubeConfig({ path: join(dir, 'kubeconfig') }), { requestTimeoutMs: 20_000 });
  });

  afterAll(async () => {
    await client?.delete(NAMESPACE, undefined, namespace).catch(() => undefined);
    client?.close();
    await proxy?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('GIVEN a kubeconfig with proxy-url WHEN the client writes, reads and watches THEN every connection is tunnelled through the proxy to the API server', async () => {
    const created = await client.create<KubeObject>(NAMESPACE, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    expect(created.metadata.uid).toBeDefined();
    const read = await client.get<KubeObject>(NAMESPACE, undefined, namespace);
    expect(read.metadata.uid).toBe(created.metadata.uid);
    const listed = await client.list(NAMESPACE);
    expect(listed.items.map((item) => item.metadata.name)).toContain(namespace);

    // A watch from the list's version sees the label change made through the proxy too.
    const abort = new AbortController();
    const seen = new Promise<KubeObject>((resolve, reject) => {
      const watching = client.watch<KubeObject>(
        NAMESPACE,
        {},
        listed.resourceVersion,
        (event) => {
          if (event.object.metadata.name === namespace && event.object.metadata.labels?.proxied === 'yes') {
            resolve(event.object);
            abort.abort();
          }
        },
        abort.signal,
        60,
      );
      watching.then(() => reject(new Error('the watch ended before the change was seen')), reject);
    });
    await client.mergePatch(NAMESPACE, undefined, namespace, { metadata: { labels: { proxied: 'yes' } } });
    expect((await seen).metadata.uid).toBe(created.metadata.uid);

    // At least one tunnel for requests and one for the watch, each to the API server and nowhere else.
    expect(proxy.connects.length).toBeGreaterThanOrEqual(2);
    expect(new Set(proxy.connects)).toStrictEqual(new Set([`${server.hostname}:${server.port}`]));
  });
});
