/**
 * The client's adaptive in-flight limit: it starts at its maximum, halves when the server throttles (once
 * for answers to requests sent together), holds new requests back for the Retry-After, grows back as the
 * server accepts requests; and the client wires it to 429 answers, exempt requests and its metrics hook.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { AdaptiveLimiter } from '../../src/kube/limiter.js';
import { KubeClient, describeRequest, type ResponseInfo } from '../../src/kube/client.js';
import { LEASE } from '../../src/kube/resources.js';
import { waitFor } from '../support/wait.js';
import { ManualClock } from '../support/clock.js';

const clock = () => new ManualClock();

describe('AdaptiveLimiter', () => {
  test('GIVEN a maximum of 2 WHEN a third request comes THEN it waits for a slot, and gets the one given back', async () => {
    const limiter = new AdaptiveLimiter({ max: 2 });
    const first = await limiter.acquire();
    await limiter.acquire();
    let third = false;
    const waiting = limiter.acquire().then(() => (third = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect([third, limiter.state.inFlight, limiter.state.waiting]).toStrictEqual([false, 2, 1]);
    first();
    await waiting;
    expect([third, limiter.state.inFlight, limiter.state.waiting]).toStrictEqual([true, 2, 0]);
  });

  test('GIVEN answers throttled together WHEN counted THEN the limit halves once per window, and grows back one slot per round of accepted requests', () => {
    const time = clock();
    const limiter = new AdaptiveLimiter({ max: 16, timers: time });
    limiter.throttled(1000);
    limiter.throttled(1000);
    expect(limiter.state.limit).toBe(8);
    time.pass(1500);
    limiter.throttled(0);
    expect(limiter.state.limit).toBe(4);
    for (let i = 0; i < 4; i++) limiter.succeeded();
    expect(limiter.state.limit).toBe(4);
    limiter.succeeded();
    expect(limiter.state.limit).toBe(5);
    for (let i = 0; i < 1000; i++) limiter.succeeded();
    expect(limiter.state.limit).toBe(16);
    expect(limiter.state.throttled).toBe(3);
  });

  test('GIVEN a Retry-After of 3 s WHEN a request comes THEN it waits the rest of the pause, once', async () => {
    const time = clock();
    const waits: number[] = [];
    const limiter = new AdaptiveLimiter({
      max: 4,
      timers: time,
      sleep: async (ms) => {
        waits.push(ms);
        time.pass(ms);
      },
    });
    limiter.throttled(3000);
    time.pass(1000);
    expect(limiter.state.pausedForMs).toBe(2000);
    await limiter.acquire();
    await limiter.acquire(undefined, { pastGate: true });
    expect(waits).toStrictEqual([2000]);
  });

  test('GIVEN the limit at its floor THEN it never falls below it', () => {
    const time = clock();
    const limiter = new AdaptiveLimiter({ max: 4, min: 2, timers: time });
    for (let i = 0; i < 5; i++) {
      limiter.throttled(0);
      time.pass(2000);
    }
    expect(limiter.state.limit).toBe(2);
  });

  test('fails when the maximum is below 1', () => {
    expect(() => new AdaptiveLimiter({ max: 0 })).toThrow("the client's in-flight maximum must be >= 1, got 0");
  });
});

describe('describeRequest', () => {
  test('names the verb and the resource (with subresource) of a request path', () => {
    expect(describeRequest('GET', '/apis/argoproj.io/v1alpha1/namespaces/argocd/applications?limit=500')).toStrictEqual(
      {
        verb: 'list',
        resource: 'applications',
      },
    );
    expect(describeRequest('GET', '/api/v1/namespaces/argocd')).toStrictEqual({ verb: 'get', resource: 'namespaces' });
    expect(
      describeRequest(
        'PATCH',
        '/apis/work.open-cluster-management.io/v1/namespaces/east/manifestworks/argocd-guestbook',
        'application/apply-patch+yaml',
      ),
    ).toStrictEqual({ verb: 'apply', resource: 'manifestworks' });
    expect(
      describeRequest('PATCH', '/apis/pullfleet.io/v1alpha1/namespaces/argocd/fleetreports/guestbook/status'),
    ).toStrictEqual({ verb: 'patch', resource: 'fleetreports/status' });
    expect(describeRequest('DELETE', '/api/v1/namespaces/argocd/secrets/cluster-east')).toStrictEqual({
      verb: 'delete',
      resource: 'secrets',
    });
  });
});

describe('KubeClient in-flight limit', () => {
  async function server(handler: http.RequestListener) {
    const srv = http.createServer(handler);
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    return { srv, kc };
  }
  const lease = (res: http.ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x' } }));
  };

  test('GIVEN an APF 429 WHEN the request is retried THEN the limit halved, the error names APF, and the metrics hook saw both answers', async () => {
    let calls = 0;
    const { srv, kc } = await server((_req, res) => {
      if (calls++ === 0) {
        res.writeHead(429, {
          'Retry-After': '1',
          'X-Kubernetes-PF-FlowSchema-UID': 'fs-uid',
          'X-Kubernetes-PF-PriorityLevel-UID': 'pl-uid',
          'Content-Type': 'application/json',
        });
        res.end(JSON.stringify({ kind: 'Status', code: 429, message: 'Too many requests, please try again later.' }));
        return;
      }
      lease(res);
    });
    const seen: ResponseInfo[] = [];
    const client = new KubeClient(kc, {
      maxInFlight: 8,
      sleep: async () => undefined,
      onResponse: (info) => seen.push(info),
    });
    try {
      await client.get(LEASE, 'a', 'x');
      expect(seen.map((s) => [s.verb, s.resource, s.code, s.apf])).toStrictEqual([
        ['get', 'leases', 429, true],
        ['get', 'leases', 200, false],
      ]);
      expect(client.limit.limit).toBe(4);
      expect(client.limit.throttled).toBe(1);
    } finally {
      client.close();
      srv.close();
    }
  });

  test('GIVEN 429 forever THEN the error says API Priority and Fairness refused it, naming the flow schema', async () => {
    const { srv, kc } = await server((_req, res) => {
      res.writeHead(429, {
        'Retry-After': '1',
        'X-Kubernetes-PF-FlowSchema-UID': 'fs-uid',
        'X-Kubernetes-PF-PriorityLevel-UID': 'pl-uid',
      });
      res.end('{"message":"Too many requests, please try again later."}');
    });
    const client = new KubeClient(kc, { maxRetries: 0, sleep: async () => undefined });
    try {
      await expect(client.get(LEASE, 'a', 'x')).rejects.toThrow(
        'GET /apis/coordination.k8s.io/v1/namespaces/a/leases/x: 429 Too many requests, please try again later. (API Priority and Fairness: flow schema fs-uid, priority level pl-uid)',
      );
    } finally {
      client.close();
      srv.close();
    }
  });

  test('GIVEN every slot taken by hung requests WHEN an exempt request (the Lease) is sent THEN it is answered', async () => {
    const hung: http.ServerResponse[] = [];
    const { srv, kc } = await server((req, res) => {
      if (req.url?.includes('/hang')) hung.push(res);
      else lease(res);
    });
    const client = new KubeClient(kc, { maxInFlight: 1, requestTimeoutMs: 10_000 });
    try {
      const stuck = client.request('GET', '/api/v1/namespaces/a/configmaps/hang').catch(() => undefined);
      await waitFor('the hung request in flight', () => client.limit.inFlight === 1 && hung.length === 1);
      const answer = await client.get(LEASE, 'a', 'x', { exempt: true });
      expect(answer.metadata.name).toBe('x');
      for (const res of hung) res.end('{}');
      await stuck;
    } finally {
      client.close();
      srv.close();
    }
  });
});
