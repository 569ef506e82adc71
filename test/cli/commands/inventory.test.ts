import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { runInventoryPull, type InventoryIo, type InventorySource } from '../../../src/cli/commands/inventory.js';
import { parseInventory } from '../../../src/model/placement/inventory.js';
import { startFakeApiServer, type FakeApiServer } from '../../double/fake-apiserver.js';
import {
  fleetCluster,
  fleetSets,
  managedCluster,
  seedHub,
  smallHub,
} from '../../model/placement/inventory-fixtures.js';
import { runCli } from '../../support/cli.js';

const run = (args: string[]) => runCli(['inventory', ...args]);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pullfleet-inventory-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function hubWith(seed: (server: FakeApiServer) => void): Promise<{ server: FakeApiServer; kubeconfig: string }> {
  const server = await startFakeApiServer();
  seed(server);
  const kubeconfig = join(mkdtempSync(join(dir, 'kc-')), 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  return { server, kubeconfig };
}

describe('pullfleet inventory pull', () => {
  test('GIVEN 5,000 ManagedClusters WHEN pulled with pages of 500 THEN every cluster is in the file, read in 10 pages', async () => {
    const clusters = Array.from({ length: 5000 }, (_, i) => fleetCluster(i));
    const { server, kubeconfig } = await hubWith((s) => seedHub(s.store, clusters, fleetSets()));
    try {
      const output = join(dir, 'big', 'inventory', 'hub.yaml');
      const result = await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', output]);
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(result.out).toBe(`wrote ${output} (5000 clusters, 6 cluster sets) from ${server.url}\n`);
      expect(server.requestCount({ verb: 'list', resource: 'managedclusters' })).toBe(10);
      const inventory = parseInventory(readFileSync(output, 'utf8'), output);
      expect(inventory.clusters).toHaveLength(5000);
      expect(inventory.clusters[0]).toStrictEqual({
        name: 'cluster-00000',
        openshift: true,
        kubernetesVersion: '1.30',
        clusterSets: ['global', 'openshift', 'prod'],
        labels: {
          'cluster.open-cluster-management.io/clusterset': 'prod',
          env: 'prod',
          region: 'us-east-1',
          vendor: 'OpenShift',
        },
        claims: {
          'id.k8s.io': 'id-0',
          'kubeversion.open-cluster-management.io': 'v1.30.2',
          'product.open-cluster-management.io': 'OpenShift',
        },
        taints: [{ key: 'maintenance', value: 'planned', effect: 'NoSelect' }],
      });
      expect(inventory.clusters.filter((c) => c.openshift)).toHaveLength(1667);
    } finally {
      await server.close();
    }
  });

  test('GIVEN two pulls of the same hub THEN the files are byte-identical and the second says it is up to date', async () => {
    const { clusters, sets } = smallHub();
    const { server, kubeconfig } = await hubWith((s) => seedHub(s.store, clusters, sets));
    try {
      const a = join(dir, 'det', 'a.yaml');
      const b = join(dir, 'det', 'b.yaml');
      await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', a, '--page-size', '1']);
      await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', b]);
      expect(readFileSync(a, 'utf8')).toBe(readFileSync(b, 'utf8'));
      const again = await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', a]);
      expect(again.out).toBe(`${a} is up to date (3 clusters, 4 cluster sets)\n`);
      expect(readdirSync(join(dir, 'det')).sort()).toStrictEqual(['a.yaml', 'b.yaml']);
    } finally {
      await server.close();
    }
  });

  test('GIVEN a continue token that expires mid-list THEN the list starts over and the pull succeeds', async () => {
    const { clusters, sets } = smallHub();
    const { server, kubeconfig } = await hubWith((s) => seedHub(s.store, clusters, sets));
    try {
      server.failNext({
        verb: 'list',
        resource: 'managedclusters',
        code: 410,
        message: 'The provided continue parameter is too old',
      });
      const output = join(dir, 'gone.yaml');
      const result = await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', output, '--page-size', '2']);
      expect(result.code).toBe(0);
      expect(parseInventory(readFileSync(output, 'utf8'), output).clusters.map((c) => c.name)).toStrictEqual([
        'edge-1',
        'ocp-east',
        'prod-west',
      ]);
    } finally {
      await server.close();
    }
  });

  test('fails when a ManagedCluster name is not a DNS label, keeping the existing inventory untouched', async () => {
    const { server, kubeconfig } = await hubWith((s) =>
      seedHub(s.store, [managedCluster('ok-1'), managedCluster('bad.name')], []),
    );
    try {
      const output = join(dir, 'badname.yaml');
      writeFileSync(output, 'previous content\n');
      const result = await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', output]);
      expect(result.code).toBe(2);
      expect(result.err).toBe(
        'pullfleet inventory pull: hub "hub": ManagedCluster "bad.name": name "bad.name" must consist of lower-case letters, digits and "-", and start and end with a letter or digit: ManagedCluster names are namespace names on the hub; rename the cluster (re-import it) or remove the entry\n' +
          `nothing was written to ${output}\n`,
      );
      expect(readFileSync(output, 'utf8')).toBe('previous content\n');
    } finally {
      await server.close();
    }
  });

  test('fails when the source reports a duplicate cluster, writing nothing', async () => {
    const output = join(dir, 'dup', 'hub.yaml');
    const source: InventorySource = {
      description: 'https://hub.example:6443',
      listManagedClusters: async () => [managedCluster('a'), managedCluster('a')],
      listManagedClusterSets: async () => [],
      close: () => undefined,
    };
    let err = '';
    const io: InventoryIo = {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
      env: {},
      source: () => source,
    };
    expect(await runInventoryPull({ hub: 'hub', output }, io)).toBe(2);
    expect(err).toBe(
      `pullfleet inventory pull: hub "hub": ManagedCluster "a" appears 2 times: each name may appear once; remove the duplicates\nnothing was written to ${output}\n`,
    );
    expect(existsSync(join(dir, 'dup'))).toBe(false);
  });

  test('fails when the hub is unreachable, leaving the existing inventory as it was', async () => {
    const { server, kubeconfig } = await hubWith(() => undefined);
    const url = server.url;
    await server.close();
    const output = join(dir, 'unreachable.yaml');
    writeFileSync(output, 'previous content\n');
    const result = await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', output]);
    expect(result.code).toBe(2);
    expect(result.err).toBe(
      `pullfleet inventory pull: cannot reach the hub API server at ${url} (ECONNREFUSED): check --kubeconfig / --context and that the hub is up\nnothing was written to ${output}\n`,
    );
    expect(readFileSync(output, 'utf8')).toBe('previous content\n');
  });

  test('fails when the hub answers 500 after the clusters were read, writing nothing', async () => {
    const { clusters, sets } = smallHub();
    const { server, kubeconfig } = await hubWith((s) => seedHub(s.store, clusters, sets));
    try {
      const output = join(dir, 'page500', 'hub.yaml');
      server.failNext({ verb: 'list', resource: 'managedclustersets', code: 500, message: 'etcd unavailable' });
      const result = await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', output]);
      expect(result.code).toBe(2);
      expect(result.err).toMatch(
        /^pullfleet inventory pull: listing ManagedClusterSets on the hub at http:\/\/127\.0\.0\.1:\d+ failed: .*etcd unavailable/,
      );
      expect(existsSync(output)).toBe(false);
    } finally {
      await server.close();
    }
  });

  test('fails within --timeout when the hub accepts connections and never answers, writing nothing', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const kubeconfig = join(dir, 'silent-kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{ name: silent, cluster: { server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true } }]\nusers: [{ name: me, user: { token: t } }]\ncontexts: [{ name: silent, context: { cluster: silent, user: me } }]\ncurrent-context: silent\n`,
    );
    const output = join(dir, 'silent', 'hub.yaml');
    try {
      const result = await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', output, '--timeout', '0.3']);
      expect(result.code).toBe(2);
      expect(result.err).toBe(
        `pullfleet inventory pull: the hub API server at http://127.0.0.1:${port} did not answer within 0.3s while listing ManagedClusters: check that it is up and reachable, or raise --timeout\nnothing was written to ${output}\n`,
      );
      expect(existsSync(join(dir, 'silent'))).toBe(false);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  test('fails when --hub is not a DNS label, before contacting any hub', async () => {
    const result = await run(['pull', '--hub', 'Prod_Hub', '--kubeconfig', join(dir, 'does-not-exist')]);
    expect(result).toStrictEqual({
      code: 2,
      out: '',
      err: 'pullfleet inventory pull: --hub "Prod_Hub" must consist of lower-case letters, digits and "-", and start and end with a letter or digit: use lower-case letters, digits and "-" (at most 63 characters) (the name of the Hub in fleet.config.ts)\n',
    });
  });
});

describe('pullfleet inventory diff', () => {
  test('GIVEN the committed file matches THEN exit 0; GIVEN drift THEN exit 1 with field-level details', async () => {
    const { clusters, sets } = smallHub();
    const { server, kubeconfig } = await hubWith((s) => seedHub(s.store, clusters, sets));
    try {
      const file = join(dir, 'diff', 'hub.yaml');
      expect((await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', file])).code).toBe(0);
      const equal = await run(['diff', '--kubeconfig', kubeconfig, '--file', file]);
      expect(equal).toStrictEqual({
        code: 0,
        out: `${file} matches the hub at ${server.url} (3 clusters, 4 cluster sets)\n`,
        err: '',
      });

      // WHEN the hub changes: a cluster relabelled, one removed, one joins
      server.store.patch('managedclusters.cluster.open-cluster-management.io', undefined, 'prod-west', 'merge', {
        metadata: { labels: { region: 'eu-west-1' } },
      });
      server.store.delete('managedclusters.cluster.open-cluster-management.io', undefined, 'edge-1');
      seedHub(server.store, [managedCluster('new-1')], []);
      const drift = await run(['diff', '--kubeconfig', kubeconfig, '--hub', 'hub', '--file', file]);
      expect(drift.code).toBe(1);
      expect(drift.out).toBe(
        [
          `${file} differs from the hub at ${server.url}:`,
          '+ ManagedCluster new-1 (on the hub, not in the file)',
          '- ManagedCluster edge-1 (in the file, gone from the hub)',
          '~ ManagedCluster prod-west',
          '    labels.region: "us-west-2" -> "eu-west-1"',
          `run \`pullfleet inventory pull --hub hub -o ${file}\` and review the change`,
          '',
        ].join('\n'),
      );
    } finally {
      await server.close();
    }
  });

  test('fails with exit 2 when the hub is unreachable, the file is missing or belongs to another hub', async () => {
    const { server, kubeconfig } = await hubWith(() => undefined);
    const url = server.url;
    const file = join(dir, 'diff2.yaml');
    await run(['pull', '--kubeconfig', kubeconfig, '--hub', 'hub', '-o', file]);
    await server.close();
    const unreachable = await run(['diff', '--kubeconfig', kubeconfig, '--file', file]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.err).toBe(
      `pullfleet inventory diff: cannot reach the hub API server at ${url} (ECONNREFUSED): check --kubeconfig / --context and that the hub is up\n`,
    );
    const other = await run(['diff', '--kubeconfig', kubeconfig, '--file', file, '--hub', 'other']);
    expect(other).toStrictEqual({
      code: 2,
      out: '',
      err: `pullfleet inventory diff: ${file} is the inventory of hub "hub", not "other": pass the matching --hub or --file\n`,
    });
    const missing = await run(['diff', '--kubeconfig', kubeconfig, '--file', join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(
      /^pullfleet inventory diff: cannot read .*nope\.yaml: .*: create it with `pullfleet inventory pull --hub <name> -o .*nope\.yaml`\n$/,
    );
    const neither = await run(['diff']);
    expect(neither).toStrictEqual({
      code: 2,
      out: '',
      err: 'pullfleet inventory diff: give --hub <name> (reads inventory/<hub>.yaml) or --file <path>\n',
    });
  });
});
