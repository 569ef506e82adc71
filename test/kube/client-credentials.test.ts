/**
 * The REST client picks up rotated client credentials on its next request: a local HTTPS server (test
 * certificates in test/fixtures/tls/) answers every request with the client certificate and token it was
 * made with, while the kubeconfig's credentials change between requests, through an exec plugin or
 * through rewritten certificate files (both re-read by client-node for every request). While nothing
 * changes, requests share one kept-alive connection.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from '@jest/globals';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/client.js';
import { NAMESPACE } from '../../src/kube/resources.js';
import type { KubeObject } from '../../src/model/core/types.js';

const TLS = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'tls');
const pem = (file: string) => readFileSync(join(TLS, file), 'utf8');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Answers every GET with a Namespace named after the client certificate's CN, the token in an annotation. */
async function whoAmIServer(): Promise<{ url: string; connections: () => number }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer(
    { cert: pem('server.pem'), key: pem('server-key.pem'), requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const body = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: peer?.subject?.CN ?? 'anonymous',
          annotations: { authorization: req.headers.authorization ?? '' },
        },
      };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    },
  );
  server.on('secureConnection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `https://127.0.0.1:${(server.address() as { port: number }).port}`, connections: () => connections };
}

function clientFor(url: string, user: User): KubeClient {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'local', server: url, caFile: join(TLS, 'server.pem'), skipTLSVerify: false }],
    users: [user],
    contexts: [{ name: 'local', cluster: 'local', user: user.name }],
    currentContext: 'local',
  });
  const client = new KubeClient(kubeConfig, { requestTimeoutMs: 20_000 });
  cleanups.push(() => client.close());
  return client;
}

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pullfleet-credentials-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Credentials that can be switched from client a to client b. */
interface Rotating {
  readonly user: User;
  use(which: 'a' | 'b'): void;
}

const viaExecPlugin = (): Rotating => {
  const dir = scratch();
  // An exec credential plugin: prints the certificate, key and token of the client named in `current`.
  writeFileSync(
    join(dir, 'plugin.mjs'),
    `import { readFileSync } from 'node:fs';
const which = readFileSync(${JSON.stringify(join(dir, 'current'))}, 'utf8').trim();
const read = (file) => readFileSync(${JSON.stringify(TLS)} + '/' + file, 'utf8');
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',
  status: { clientCertificateData: read('client-' + which + '.pem'), clientKeyData: read('client-' + which + '-key.pem'), token: 'token-' + which } }));
`,
  );
  const use = (which: 'a' | 'b') => writeFileSync(join(dir, 'current'), which);
  use('a');
  return {
    user: {
      name: 'exec',
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [join(dir, 'plugin.mjs')],
      },
    },
    use,
  };
};

const viaCertificateFiles = (): Rotating => {
  const dir = scratch();
  const use = (which: 'a' | 'b') => {
    copyFileSync(join(TLS, `client-${which}.pem`), join(dir, 'client.pem'));
    copyFileSync(join(TLS, `client-${which}-key.pem`), join(dir, 'client-key.pem'));
  };
  use('a');
  return {
    user: { name: 'files', certFile: join(dir, 'client.pem'), keyFile: join(dir, 'client-key.pem') },
    use,
  };
};

test.each([
  ['an exec plugin', viaExecPlugin],
  ['rewritten client-certificate and client-key files', viaCertificateFiles],
])(
  'GIVEN client credentials from %s WHEN they change between requests THEN the next request uses the new ones',
  async (_how, rotating) => {
    const server = await whoAmIServer();
    const credentials = rotating();
    const client = clientFor(server.url, credentials.user);

    expect((await client.get<KubeObject>(NAMESPACE, undefined, 'who')).metadata.name).toBe('pullfleet-test-client-a');
    expect((await client.get<KubeObject>(NAMESPACE, undefined, 'who')).metadata.name).toBe('pullfleet-test-client-a');
    // Unchanged credentials: the connection is kept and reused.
    expect(server.connections()).toBe(1);

    credentials.use('b');
    const after = await client.get<KubeObject>(NAMESPACE, undefined, 'who');
    expect(after.metadata.name).toBe('pullfleet-test-client-b');
    if (credentials.user.exec) expect(after.metadata.annotations?.authorization).toBe('Bearer token-b');
    // And the new credentials are kept too.
    expect((await client.get<KubeObject>(NAMESPACE, undefined, 'who')).metadata.name).toBe('pullfleet-test-client-b');
    expect(server.connections()).toBe(2);
  },
);
