/** The tests' one fake clock: timers fire only when time is moved, at their own instant, in order. */
import { describe, expect, test } from '@jest/globals';
import { ManualClock } from './clock.js';

describe('ManualClock', () => {
  test('GIVEN timers WHEN ticked THEN each due one fires at its own instant, earliest first (first set among equals), and a cleared one never', () => {
    const clock = new ManualClock({ start: 100 });
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`a2@${clock.now()}`), 10);
    const cleared = clock.setTimeout(() => fired.push('never'), 5);
    clock.clearTimeout(cleared);
    clock.tick(15);
    expect([fired, clock.now(), clock.pendingTimers]).toStrictEqual([['a@110', 'a2@110'], 115, 1]);
    clock.tick(5);
    expect([fired, clock.now(), clock.pendingTimers]).toStrictEqual([['a@110', 'a2@110', 'b@120'], 120, 0]);
  });

  test('GIVEN a timer WHEN time passes inside a call THEN the clock moves and the timer does not fire', () => {
    const clock = new ManualClock();
    let fired = false;
    clock.setTimeout(() => (fired = true), 10);
    clock.pass(50);
    expect([fired, clock.now(), clock.pendingTimers]).toStrictEqual([false, 50, 1]);
  });

  test('GIVEN a timer whose callback awaits WHEN advanced THEN the awaited work settles before the next timer fires', async () => {
    const clock = new ManualClock();
    const seen: string[] = [];
    clock.setTimeout(() => {
      void Promise.resolve().then(() => seen.push(`settled@${clock.now()}`));
    }, 10);
    clock.setTimeout(() => seen.push(`second@${clock.now()}`), 20);
    await clock.advance(30);
    expect([seen, clock.now()]).toStrictEqual([['settled@10', 'second@20'], 30]);
  });
});
