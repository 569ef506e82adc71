import { describe, expect, test } from '@jest/globals';
import { WorkQueue } from '../../../src/controller/runtime/queue.js';
import { ManualClock } from '../../support/clock.js';

describe('WorkQueue', () => {
  test('GIVEN duplicate adds WHEN drained THEN each key comes out once, in first-add order', async () => {
    const queue = new WorkQueue();
    for (const key of ['a', 'b', 'a', 'c', 'b']) queue.add(key);
    expect(queue.depth).toBe(3);
    const taken = [await queue.get(), await queue.get(), await queue.get()];
    expect(taken).toStrictEqual(['a', 'b', 'c']);
  });

  test('GIVEN a key in flight WHEN it is added again THEN it is not handed out until done, then exactly once more', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const first = await queue.get();
    queue.add('a');
    queue.add('a');
    expect(queue.depth).toBe(0);
    queue.done(first!);
    expect(queue.depth).toBe(1);
    expect(await queue.get()).toBe('a');
    queue.done('a');
    expect(queue.depth).toBe(0);
  });

  test('GIVEN repeated failures WHEN rate-limited THEN delays double, stay within jitter bounds and hit the cap', () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 });
    const delays = [1, 2, 3, 4, 5, 6].map(() => {
      const delay = queue.addRateLimited('a');
      queue.shutdown();
      return delay;
    });
    expect(delays).toStrictEqual([100, 200, 400, 800, 1000, 1000]);
    const low = new WorkQueue({ baseDelayMs: 100, random: () => 0 });
    expect(low.addRateLimited('b')).toBe(50);
    low.shutdown();
    queue.forget('a');
    expect(queue.failureCount('a')).toBe(0);
  });

  test('GIVEN waiting workers WHEN the queue shuts down THEN they receive undefined', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.shutdown();
    expect(await waiting).toBeUndefined();
  });
});

describe('WorkQueue lanes', () => {
  test('GIVEN a background resync WHEN an event-driven key arrives THEN it is handed out before the resync keys', async () => {
    const queue = new WorkQueue();
    for (const key of ['r1', 'r2', 'r3']) queue.add(key, { background: true });
    queue.add('event');
    queue.add('r3');
    expect(queue.depth).toBe(4);
    const order = [await queue.get(), await queue.get(), await queue.get(), await queue.get()];
    expect(order).toStrictEqual(['event', 'r3', 'r1', 'r2']);
    expect(queue.depth).toBe(0);
  });

  test('GIVEN a key waiting for idle WHEN other keys wait THEN it comes last, is not counted as busy, and an event promotes it', async () => {
    const queue = new WorkQueue();
    queue.add('later', { idle: true });
    queue.add('r1', { background: true });
    queue.add('event');
    expect([queue.depth, queue.busyDepth]).toStrictEqual([3, 2]);
    expect([await queue.get(), await queue.get(), await queue.get()]).toStrictEqual(['event', 'r1', 'later']);
    for (const key of ['event', 'r1', 'later']) queue.done(key);
    queue.add('later', { idle: true });
    queue.add('r2', { background: true });
    queue.add('later');
    queue.add('later', { idle: true });
    expect([queue.depth, queue.busyDepth]).toStrictEqual([2, 2]);
    expect([await queue.get(), await queue.get()]).toStrictEqual(['later', 'r2']);
    expect(queue.busyDepth).toBe(0);
  });
});

describe('WorkQueue delayed adds', () => {
  test('GIVEN a key waiting 60 s WHEN it is added again after 1 s THEN it comes out after 1 s, not 60 s', () => {
    const timers = new ManualClock();
    const queue = new WorkQueue({ timers });
    queue.addAfter('a', 60_000);
    queue.addAfter('a', 1_000);
    timers.tick(999);
    expect(queue.depth).toBe(0);
    timers.tick(1);
    expect(queue.depth).toBe(1);
    expect(queue.delayed).toBe(0);
    // The superseded 60 s deadline does not add the key a second time.
    timers.tick(60_000);
    expect(queue.depth).toBe(1);
    expect(timers.pendingTimers).toBe(0);
  });

  test('GIVEN a key waiting 1 s WHEN a 60 s requeue arrives THEN the earlier deadline is kept', () => {
    const timers = new ManualClock();
    const queue = new WorkQueue({ timers });
    queue.addAfter('a', 1_000);
    queue.addAfter('a', 60_000);
    timers.tick(1_000);
    expect(queue.depth).toBe(1);
  });

  test('GIVEN a failing key with a long requeue pending WHEN it is rate-limited THEN the backoff retry wins', () => {
    const timers = new ManualClock();
    const queue = new WorkQueue({ timers, baseDelayMs: 100, random: () => 1 });
    queue.addAfter('a', 300_000);
    expect(queue.addRateLimited('a')).toBe(100);
    timers.tick(100);
    expect(queue.depth).toBe(1);
  });

  test('GIVEN many keys with shuffled delays WHEN time passes THEN each comes out at its own deadline, in deadline order', async () => {
    const timers = new ManualClock();
    const queue = new WorkQueue({ timers });
    const delays = [50, 10, 40, 20, 30, 0];
    delays.forEach((delay, i) => queue.addAfter(`k${i}`, delay));
    expect(queue.depth).toBe(1); // delay 0 is added at once
    timers.tick(25);
    expect(queue.depth).toBe(3);
    timers.tick(25);
    const order = [];
    for (let i = 0; i < delays.length; i++) order.push(await queue.get());
    expect(order).toStrictEqual(['k5', 'k1', 'k3', 'k4', 'k2', 'k0']);
  });

  test('GIVEN delayed keys WHEN the queue shuts down THEN no timer is left and nothing is added later', () => {
    const timers = new ManualClock();
    const queue = new WorkQueue({ timers });
    queue.addAfter('a', 10);
    queue.shutdown();
    expect(timers.pendingTimers).toBe(0);
    timers.tick(10);
    expect(queue.depth).toBe(0);
  });
});

describe('WorkQueue rate limiting with Retry-After', () => {
  test('GIVEN a first failure answered with Retry-After 20 s THEN the retry waits 20 s, not the 100 ms backoff', () => {
    const timers = new ManualClock();
    const queue = new WorkQueue({ timers, baseDelayMs: 100, random: () => 1 });
    expect(queue.addRateLimited('a', 20_000)).toBe(20_000);
    timers.tick(19_999);
    expect(queue.depth).toBe(0);
    timers.tick(1);
    expect(queue.depth).toBe(1);
  });

  test('GIVEN a Retry-After longer than the cap THEN the cap wins', () => {
    const timers = new ManualClock();
    const queue = new WorkQueue({ timers, maxDelayMs: 1_000 });
    expect(queue.addRateLimited('a', 3_600_000)).toBe(1_000);
  });
});
