import { describe, expect, test } from '@jest/globals';
import { WorkQueue } from '../../src/controller/queue.js';

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
});
