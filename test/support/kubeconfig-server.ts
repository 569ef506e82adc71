/**
 * The API double (namespaces created on first write) with a kubeconfig file pointing at it, for tests that
 * drive the CLI: started before the describe block it is called in, closed (and the file removed) after.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from '@jest/globals';
import { startFakeApiServer, type FakeApiServer } from '../double/fake-apiserver.js';

export function kubeconfigServer(prefix: string): { server: FakeApiServer; kubeconfig: string } {
  const held = {} as { server: FakeApiServer; kubeconfig: string; dir: string };
  beforeAll(async () => {
    held.server = await startFakeApiServer({ implicitNamespaces: true });
    held.dir = mkdtempSync(join(tmpdir(), prefix));
    held.kubeconfig = join(held.dir, 'kubeconfig');
    writeFileSync(held.kubeconfig, held.server.kubeConfigYaml());
  });
  afterAll(async () => {
    await held.server.close();
    rmSync(held.dir, { recursive: true, force: true });
  });
  return held;
}
