/**
 * Leader election on a manual monotonic clock and an in-memory Lease: expiry judged from when this replica
 * saw the record change (never from the holder's clock), renew under the renew deadline, a hung request
 * bounded, loss acted on at once, failing Lease access made visible.
 */
import { describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { KubeApiError, type CallOptions } from '../../../src/kube/client.js';
import { LeaderElector, type LeaseClient, type LeaseObject } from '../../../src/controller/runtime/leader.js';
import type { KubeObject } from '../../../src/model/core/types.js';
import { ManualClock } from '../../support/clock.js';

const OPTIONS = {
  namespace: 'platform',
  name: 'pullfleet-controller',
  identity: 'me',
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
  requestTimeoutSeconds: 5,
};

/** The manual clock, with five turns for promises to settle between timers. */
const manualClock = () => new ManualClock({ start: 1_000_000, settleTurns: 5 });

type Mode = 'ok' | 'hang' | 'forbidden';

/** One Lease in memory with resourceVersion checks; `mode` makes every call hang or fail with 403. */
function leaseServer(initial?: LeaseObject['spec'], onGet: () => void = () => undefined) {
  let lease: LeaseObject | undefined = initial
    ? {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: OPTIONS.name, namespace: OPTIONS.namespace, resourceVersion: '1' },
        spec: initial,
      }
    : undefined;
  let version = 1;
  const state = { mode: 'ok' as Mode, calls: 0, aborted: 0, writes: 0 };
  const gate = <T>(call: CallOptions | undefined, run: () => T): Promise<T> => {
    state.calls++;
    if (state.mode === 'forbidden')
      return Promise.reject(
        new KubeApiError(
          403,
          'leases.coordination.k8s.io "pullfleet-controller" is forbidden: User "system:serviceaccount:platform:pullfleet-controller" cannot get resource "leases" in the namespace "pullfleet-system"',
        ),
      );
    if (state.mode === 'hang') {
      return new Promise<T>((_, reject) =>
        call?.signal?.addEventListener('abort', () => {
          state.aborted++;
          reject(new Error('aborted'));
        }),
      );
    }
    try {
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const client: LeaseClient = {
    get: <T extends KubeObject>(_kind: unknown, _ns: unknown, _name: unknown, call?: CallOptions) =>
      gate(call, () => {
        onGet();
        if (!lease) throw new KubeApiError(404, 'not found');
        return structuredClone(lease) as unknown as T;
      }),
    create: <T extends KubeObject>(_kind: unknown, object: T, call?: CallOptions) =>
      gate(call, () => {
        if (lease) throw new KubeApiError(409, 'exists');
        state.writes++;
        lease = {
          ...(structuredClone(object) as LeaseObject),
          metadata: { ...object.metadata, resourceVersion: String(++version) },
        };
        return structuredClone(lease) as unknown as T;
      }),
    replace: <T extends KubeObject>(_kind: unknown, object: T, call?: CallOptions) =>
      gate(call, () => {
        if (object.metadata.resourceVersion !== lease?.metadata.resourceVersion)
          throw new KubeApiError(409, 'conflict');
        state.writes++;
        lease = {
          ...(structuredClone(object) as LeaseObject),
          metadata: { ...object.metadata, resourceVersion: String(++version) },
        };
        return structuredClone(lease) as unknown as T;
      }),
  };
  return {
    client,
    state,
    get lease() {
      return lease;
    },
    /** Another replica renews (or takes) the Lease. */
    write(spec: LeaseObject['spec']) {
      lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: OPTIONS.name, namespace: OPTIONS.namespace, resourceVersion: String(++version) },
        spec,
      };
    },
  };
}

function logLines() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

function elector(
  server: ReturnType<typeof leaseServer>,
  clock: ReturnType<typeof manualClock>,
  options: Partial<typeof OPTIONS> & { wallClock?: () => Date } = {},
) {
  const { logger, lines } = logLines();
  const events: string[] = [];
  let errors = 0;
  const e = new LeaderElector(server.client, { ...OPTIONS, ...options }, logger, {
    clock,
    random: () => 0,
    wallClock: options.wallClock ?? (() => new Date('2026-11-22T12:00:00Z')),
    onError: () => errors++,
  });
  e.start(
    () => events.push(`started@${clock.now()}`),
    () => events.push(`stopped@${clock.now()}`),
  );
  return { elector: e, events, lines, errors: () => errors };
}

const heldBy = (holder: string, renewTime: string) => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  renewTime,
  acquireTime: renewTime,
  leaseTransitions: 3,
});

describe('LeaderElector: expiry from observed time', () => {
  test('GIVEN a Lease whose holder clock is an hour behind WHEN a candidate starts THEN it waits a full lease duration of no change before taking it', async () => {
    const clock = manualClock();
    const server = leaseServer(heldBy('other', '2026-11-22T11:00:00.000000Z'));
    const { elector: e, events } = elector(server, clock);
    await clock.advance(14_000);
    expect(events).toStrictEqual([]);
    expect(server.lease?.spec?.holderIdentity).toBe('other');
    await clock.advance(2_000);
    expect(events).toStrictEqual([`started@${1_000_000 + 16_000}`]);
    expect(server.lease?.spec).toMatchObject({ holderIdentity: 'me', leaseTransitions: 4, leaseDurationSeconds: 15 });
    await e.stop();
  });

  test('GIVEN a holder whose clock runs an hour ahead WHEN it stops renewing THEN the candidate still takes over one lease duration later', async () => {
    const clock = manualClock();
    const server = leaseServer(heldBy('other', '2026-11-22T13:00:00.000000Z'));
    const { elector: e, events } = elector(server, clock);
    await clock.advance(16_000);
    expect(events).toHaveLength(1);
    expect(server.lease?.spec?.holderIdentity).toBe('me');
    await e.stop();
  });

  test('GIVEN a holder that keeps renewing WHEN its renewTime looks old on this clock THEN the candidate never takes the Lease', async () => {
    const clock = manualClock();
    const server = leaseServer(heldBy('other', '2000-01-01T00:00:00.000000Z'));
    const { elector: e, events } = elector(server, clock);
    for (let i = 0; i < 30; i++) {
      await clock.advance(2_000);
      server.write({ ...heldBy('other', `2000-01-01T00:00:${String(i).padStart(2, '0')}.000000Z`) });
    }
    expect(events).toStrictEqual([]);
    expect(server.lease?.spec?.holderIdentity).toBe('other');
    expect(e.health().healthy).toBe(true);
    await e.stop();
  });

  test('GIVEN Lease reads that take half a second WHEN a candidate takes the Lease THEN the acquireTime it writes is no earlier than the moment it judged the Lease expired', async () => {
    const clock = manualClock();
    const start = clock.now();
    const wallAt = (monotonic: number) => new Date(Date.parse('2026-11-22T12:00:00Z') + monotonic - start);
    const server = leaseServer(
      heldBy(
        'other',
        wallAt(start)
          .toISOString()
          .replace(/\.(\d{3})Z$/, '.$1000Z'),
      ),
      () => clock.pass(500),
    );
    const { elector: e, events } = elector(server, clock, { wallClock: () => wallAt(clock.now()) });
    await clock.advance(30_000);
    expect(events).toHaveLength(1);
    // The record was first seen when the first read returned (start + 500 ms); it is expired one lease
    // duration after that, and the takeover is stamped at or after that instant.
    const seen = start + 500;
    expect(Date.parse(server.lease!.spec!.acquireTime!)).toBeGreaterThanOrEqual(wallAt(seen + 15_000).getTime());
    expect(server.lease!.spec).toMatchObject({ holderIdentity: 'me', leaseTransitions: 4 });
    await e.stop();
  });

  test('GIVEN no Lease WHEN a candidate starts THEN it creates it and leads at once', async () => {
    const clock = manualClock();
    const server = leaseServer();
    const { elector: e, events } = elector(server, clock);
    await clock.flush();
    expect(events).toStrictEqual([`started@${1_000_000}`]);
    expect(server.lease?.spec).toMatchObject({
      holderIdentity: 'me',
      renewTime: '2026-11-22T12:00:00.000000Z',
      leaseTransitions: 0,
    });
    await e.stop();
  });
});

describe('LeaderElector: losing leadership', () => {
  test('GIVEN a leader WHEN every Lease request hangs THEN it stops at the renew deadline, before the Lease could expire for others, and the hung request is aborted', async () => {
    const clock = manualClock();
    const server = leaseServer();
    const { elector: e, events, lines } = elector(server, clock);
    await clock.flush();
    const start = clock.now();
    await clock.advance(2_000); // one renewal at start + 2 s
    expect(server.state.writes).toBe(2);
    server.state.mode = 'hang';
    await clock.advance(30_000);
    // Last successful renew started at start + 2 s; the deadline is 10 s after it.
    expect(events).toStrictEqual([`started@${start}`, `stopped@${start + 12_000}`]);
    expect(start + 12_000).toBeLessThan(start + 2_000 + OPTIONS.leaseDurationSeconds * 1000);
    expect(e.isLeader).toBe(false);
    expect(server.state.aborted).toBeGreaterThan(0);
    expect(
      lines.some(
        (line) =>
          line.level === 50 &&
          /lost leadership: could not renew the Lease platform\/pullfleet-controller within the renew deadline \(10s\)/.test(
            line.msg,
          ),
      ),
    ).toBe(true);
    // It stops campaigning: no request after the loss.
    const calls = server.state.calls;
    await clock.advance(60_000);
    expect(server.state.calls).toBe(calls);
    await e.stop();
  });

  test('GIVEN a leader WHEN another replica holds the Lease THEN it stops at its next renew, without waiting for the deadline', async () => {
    const clock = manualClock();
    const server = leaseServer();
    const { elector: e, events } = elector(server, clock);
    await clock.flush();
    server.write(heldBy('intruder', '2026-11-22T12:00:01.000000Z'));
    await clock.advance(2_000);
    expect(events).toStrictEqual([`started@${1_000_000}`, `stopped@${1_002_000}`]);
    expect(server.lease?.spec?.holderIdentity).toBe('intruder');
    await e.stop();
    // Losing never releases somebody else's Lease.
    expect(server.lease?.spec?.holderIdentity).toBe('intruder');
  });

  test('GIVEN a leader WHEN it stops THEN it releases the Lease; with release false it leaves it to expire', async () => {
    const clock = manualClock();
    const server = leaseServer();
    const first = elector(server, clock);
    await clock.flush();
    await first.elector.stop();
    expect(server.lease?.spec?.holderIdentity).toBeUndefined();
    const second = elector(server, clock, { identity: 'two' });
    await clock.flush();
    expect(second.events).toHaveLength(1);
    await second.elector.stop({ release: false });
    expect(server.lease?.spec?.holderIdentity).toBe('two');
  });

  test('GIVEN a leader whose Lease requests hang WHEN it stops THEN stop returns within the request timeout', async () => {
    const clock = manualClock();
    const server = leaseServer();
    const { elector: e } = elector(server, clock);
    await clock.flush();
    server.state.mode = 'hang';
    let stopped = false;
    void e.stop().then(() => (stopped = true));
    await clock.advance(4_999);
    expect(stopped).toBe(false);
    await clock.advance(1);
    expect(stopped).toBe(true);
  });
});

describe('LeaderElector: failing Lease access is visible', () => {
  test('GIVEN 403 on every Lease request WHEN several lease periods pass THEN it is unhealthy with the reason and fix, counts every error and logs only a few lines', async () => {
    const clock = manualClock();
    const server = leaseServer();
    server.state.mode = 'forbidden';
    const { elector: e, events, lines, errors } = elector(server, clock);
    await clock.advance(44_000);
    expect(e.health().healthy).toBe(true);
    await clock.advance(4_000);
    const health = e.health();
    expect(health.healthy).toBe(false);
    expect(health.secondsSinceSuccess).toBeGreaterThan(45);
    expect(health.reason).toContain('cannot read or write the leader Lease platform/pullfleet-controller for 4');
    expect(health.reason).toContain('403 ');
    expect(health.reason).toContain(
      'check that --namespace / POD_NAMESPACE is the namespace the controller is installed in, "platform" now',
    );
    expect(events).toStrictEqual([]);
    await clock.advance(300_000);
    expect(errors()).toBeGreaterThan(100);
    const about = lines.filter((line) => /leader election/.test(line.msg));
    // First failure, then at most one line per 30 s, plus one "not ready" error.
    expect(about.length).toBeLessThanOrEqual(2 + Math.ceil(348 / 30));
    expect(about.filter((line) => /this replica is not ready/.test(line.msg))).toHaveLength(1);
    server.state.mode = 'ok';
    await clock.advance(2_500);
    expect(e.health().healthy).toBe(true);
    expect(events).toHaveLength(1);
    expect(lines.some((line) => /Lease requests succeed again/.test(line.msg))).toBe(true);
    await e.stop();
  });

  test('GIVEN a standby whose Lease reads succeed WHEN it never leads THEN it stays healthy', async () => {
    const clock = manualClock();
    const server = leaseServer(heldBy('other', '2026-11-22T12:00:00.000000Z'));
    const { elector: e } = elector(server, clock);
    for (let i = 0; i < 50; i++) {
      await clock.advance(2_000);
      server.write(heldBy('other', `2026-11-22T12:${String(i).padStart(2, '0')}:00.000000Z`));
    }
    expect(e.health()).toMatchObject({ healthy: true });
    await e.stop();
  });
});
