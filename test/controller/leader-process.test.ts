/**
 * The controller binary as a real process against the API double: when another holder takes its Lease,
 * the process exits with code 1 (the restart is visible, nothing of the old leader keeps running).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startFakeApiServer, type FakeApiServer, type KubeObj } from '../double/fake-apiserver.js';
import { waitFor } from '../support/wait.js';

let server: FakeApiServer;
let dir: string;

beforeAll(async () => {
  server = await startFakeApiServer();
  // The controller's namespace exists, as the install creates it.
  server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'platform' } });
  dir = mkdtempSync(join(tmpdir(), 'pullfleet-leader-process-'));
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('pullfleet-controller process', () => {
  test('GIVEN the leader process WHEN another holder takes its Lease THEN it exits with code 1', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfigYaml());
    const child = spawn(
      process.execPath,
      [
        'bin/pullfleet-controller.js',
        `--kubeconfig=${kubeconfig}`,
        '--namespace=platform',
        '--identity=proc-1',
        '--lease-duration=2',
        '--renew-deadline=1',
        '--retry-period=0.1',
        '--port=0',
        '--cluster-secrets=false',
        '--fleet-reports=false',
        '--log-level=error',
      ],
      { env: { PATH: process.env.PATH, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const lease = await waitFor(
        'the process to take the Lease in platform',
        () => server.store.find<KubeObj>('leases', 'platform', 'pullfleet-controller'),
        {
          timeoutMs: 45_000,
          describe: () => output,
        },
      );
      expect(lease.spec.holderIdentity).toBe('proc-1');
      server.store.update({ ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60 } });
      expect(await exited).toBe(1);
      expect(output).toContain('lost leadership: the Lease platform/pullfleet-controller is now held by intruder');
      expect(server.store.get<KubeObj>('leases', 'platform', 'pullfleet-controller').spec.holderIdentity).toBe(
        'intruder',
      );
    } finally {
      child.kill('SIGKILL');
    }
  });
});
