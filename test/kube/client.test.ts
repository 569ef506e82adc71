/**
 * The REST client against tiny servers on 127.0.0.1 written here: a server that accepts and never answers,
 * one that answers 429 with Retry-After, one that keeps a watch open past its timeoutSeconds.
 */
import http from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import {
  KubeApiError,
  KubeClient,
  KubeTimeoutError,
  parseRetryAfter,
  type KubeClientOptions,
} from '../../src/kube/client.js';
import { LEASE, MANAGED_CLUSTER } from '../../src/kube/resources.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A client of the server on `port`, authenticating with `token`; closed after the test. */
function clientFor(port: number, options: KubeClientOptions = {}, token = 't'): KubeClient {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'local', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'me', token }],
    contexts: [{ name: 'local', cluster: 'local', user: 'me' }],
    currentContext: 'local',
  });
  const client = new KubeClient(kubeConfig, options);
  cleanups.push(() => client.close());
  return client;
}

/** Accepts every connection and never writes a byte. */
async function silentServer(): Promise<{ port: number; connections: () => number }> {
  const sockets: Socket[] = [];
  const server: TcpServer = createTcpServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as { port: number }).port, connections: () => sockets.length };
}

async function httpServer(handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as { port: number }).port;
}

describe('KubeClient timeouts', () => {
  test('GIVEN a server that accepts and never answers WHEN a get is made THEN it fails with a timeout error naming the request', async () => {
    const server = await silentServer();
    const client = clientFor(server.port, { requestTimeoutMs: 200 });
    const error = await client.get(LEASE, 'platform', 'pullfleet-controller').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeTimeoutError);
    expect((error as Error).message).toBe(
      `GET /apis/coordination.k8s.io/v1/namespaces/platform/leases/pullfleet-controller: no answer from 127.0.0.1:${server.port} within 0.2s`,
    );
    expect(server.connections()).toBe(1);
  });

  test('GIVEN a server that never answers WHEN a list is made THEN it fails with a timeout, not a hang', async () => {
    const server = await silentServer();
    const client = clientFor(server.port, { requestTimeoutMs: 200 });
    await expect(client.list(MANAGED_CLUSTER)).rejects.toBeInstanceOf(KubeTimeoutError);
  });

  test('GIVEN a per-call timeout and an abort signal THEN the shorter one wins', async () => {
    const server = await silentServer();
    const client = clientFor(server.port, { requestTimeoutMs: 60_000 });
    await expect(client.get(LEASE, 'a', 'b', { timeoutMs: 100 })).rejects.toBeInstanceOf(KubeTimeoutError);
    const controller = new AbortController();
    const pending = client.get(LEASE, 'a', 'b', { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toThrow('aborted');
  });

  test('GIVEN a server that never sends watch headers WHEN a watch opens THEN it fails within the request timeout', async () => {
    const server = await silentServer();
    const client = clientFor(server.port, { requestTimeoutMs: 200 });
    const error = await client
      .watch(MANAGED_CLUSTER, {}, '1', () => undefined, new AbortController().signal, 300)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeTimeoutError);
    expect((error as Error).message).toContain('watch managedclusters: no answer from');
  });

  test('GIVEN a watch the server keeps open past timeoutSeconds WHEN the grace period ends THEN the client gives it up', async () => {
    let query = '';
    const port = await httpServer((req, res) => {
      query = req.url ?? '';
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'c1', resourceVersion: '5' } } })}\n`);
      // …and never ends the stream.
    });
    const client = clientFor(port, { watchGraceMs: 200 });
    const events: string[] = [];
    const error = await client
      .watch(
        MANAGED_CLUSTER,
        {},
        '1',
        (event) => events.push(`${event.type} ${event.object.metadata.name}`),
        new AbortController().signal,
        0,
      )
      .catch((e: unknown) => e);
    expect(events).toStrictEqual(['ADDED c1']);
    expect(error).toBeInstanceOf(KubeTimeoutError);
    expect((error as Error).message).toBe(
      'watch managedclusters: the server did not end the watch (timeoutSeconds 0) within 0.2s',
    );
    expect(query).toContain('timeoutSeconds=0');
  });
});

describe('KubeClient Retry-After', () => {
  test('GIVEN 429 with Retry-After twice WHEN a request is made THEN it waits as told and then succeeds', async () => {
    let calls = 0;
    const port = await httpServer((_req, res) => {
      calls++;
      if (calls <= 2) {
        res.writeHead(429, { 'Retry-After': '7', 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ metadata: { name: 'x' } }));
    });
    const waits: number[] = [];
    const client = clientFor(port, { sleep: async (ms) => void waits.push(ms) });
    const lease = await client.get(LEASE, 'a', 'x');
    expect(lease.metadata.name).toBe('x');
    expect(waits).toStrictEqual([7000, 7000]);
    expect(calls).toBe(3);
  });

  test('GIVEN 429 forever with a huge Retry-After WHEN a request is made THEN each wait is capped and it gives up after the retries with the Retry-After on the error', async () => {
    let calls = 0;
    const port = await httpServer((_req, res) => {
      calls++;
      res.writeHead(429, { 'Retry-After': '3600' });
      res.end();
    });
    const waits: number[] = [];
    const client = clientFor(port, { sleep: async (ms) => void waits.push(ms), maxRetries: 2, maxRetryAfterMs: 5000 });
    const error = await client.get(LEASE, 'a', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).statusCode).toBe(429);
    expect((error as KubeApiError).retryAfterMs).toBe(3_600_000);
    expect(waits).toStrictEqual([5000, 5000]);
    expect(calls).toBe(3);
  });

  test('Retry-After is read as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:10 GMT', Date.parse('2026-11-22T12:00:00Z'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('KubeClient requests Node refuses to send', () => {
  test('GIVEN a token Node will not put in a header WHEN requests are made one after another THEN each fails with the reason and gives its slot back', async () => {
    const port = await httpServer((_req, res) => res.end('{}'));
    const client = clientFor(port, { maxInFlight: 1 }, 'line\nbreak');
    // With one slot, a slot kept by the first failure would leave the second waiting for ever.
    for (let i = 0; i < 3; i++)
      await expect(client.get(MANAGED_CLUSTER, undefined, 'east')).rejects.toThrow(/Invalid character in header/);
  });

  test('GIVEN the same token WHEN a watch is opened THEN it fails with the reason and leaves no timer behind to fire later', async () => {
    const port = await httpServer((_req, res) => res.end('{}'));
    const client = clientFor(port, { requestTimeoutMs: 20 }, 'line\nbreak');
    const done = new AbortController();
    await expect(client.watch(MANAGED_CLUSTER, {}, '1', () => undefined, done.signal)).rejects.toThrow(
      /Invalid character in header/,
    );
    // Past the header timeout: a timer left armed would now fire on a request that never existed.
    await new Promise((resolve) => setTimeout(resolve, 100));
    done.abort();
  });
});
