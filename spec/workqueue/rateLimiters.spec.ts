import { describe, expect, it } from 'vitest';
import {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  itemExponentialFailureRateLimiter,
  itemFastSlowRateLimiter,
  maxOfRateLimiter,
  withMaxWaitRateLimiter,
  type RateLimiter,
} from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

const whenTimes = <T>(limiter: RateLimiter<T>, item: T, times: number): number[] => Array.from({ length: times }, () => limiter.when(item));

describe('itemExponentialFailureRateLimiter (RL-1)', () => {
  it('doubles from the base delay per failure of an item, items apart', () => {
    const limiter = itemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 1_000 });
    expect(whenTimes(limiter, 'one', 5)).toEqual([1, 2, 4, 8, 16]);
    expect(limiter.numRequeues('one')).toBe(5);
    expect(whenTimes(limiter, 'two', 2)).toEqual([1, 2]);
    expect(limiter.numRequeues('two')).toBe(2);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).toBe(0);
    expect(limiter.when('one')).toBe(1);
    expect(limiter.numRequeues('two')).toBe(2);
  });

  it('stops at the maximum', () => {
    const limiter = itemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 10 });
    expect(whenTimes(limiter, 'one', 6)).toEqual([1, 2, 4, 8, 10, 10]);
  });

  it('overflow: a delay too large to represent is the maximum, never a wrap-around', () => {
    const limiter = itemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 1_000_000 });
    for (let i = 0; i < 5; i++) limiter.when('overflow1');
    expect(limiter.when('overflow1')).toBe(32);
    for (let i = 0; i < 1_000; i++) limiter.when('overflow2');
    expect(limiter.when('overflow2')).toBe(1_000_000);
    expect(limiter.numRequeues('overflow2')).toBe(1_001);
  });

  it('defaults to the controller values: 5 ms doubling to 1000 s, reached at the 19th failure', () => {
    const delays = whenTimes(itemExponentialFailureRateLimiter<string>(), 'x', 20);
    expect(delays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(delays[17]).toBe(655_360);
    expect(delays[18]).toBe(1_000_000);
    expect(delays[19]).toBe(1_000_000);
  });

  it('the item-based default starts at 1 ms', () => {
    expect(whenTimes(defaultItemBasedRateLimiter<string>(), 'x', 3)).toEqual([1, 2, 4]);
  });

  it('rejects bad options with a TypeError naming the option', () => {
    expect(() => itemExponentialFailureRateLimiter({ baseDelayMs: -1 })).toThrow(/option "baseDelayMs" must be a finite number >= 0, got -1/);
    expect(() => itemExponentialFailureRateLimiter({ maxDelayMs: NaN })).toThrow(/option "maxDelayMs" .* got NaN/);
    expect(() => itemExponentialFailureRateLimiter({ base: 1 } as never)).toThrow(/unknown option "base"/);
  });
});

describe('itemFastSlowRateLimiter (RL-4)', () => {
  it('gives the fast delay for the first attempts of an item, then the slow one', () => {
    const limiter = itemFastSlowRateLimiter<string>({ fastDelayMs: 5, slowDelayMs: 10_000, maxFastAttempts: 3 });
    expect(whenTimes(limiter, 'one', 5)).toEqual([5, 5, 5, 10_000, 10_000]);
    expect(limiter.numRequeues('one')).toBe(5);
    expect(whenTimes(limiter, 'two', 2)).toEqual([5, 5]);
    expect(limiter.numRequeues('two')).toBe(2);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).toBe(0);
    expect(limiter.when('one')).toBe(5);
  });

  it('requires every option', () => {
    expect(() => itemFastSlowRateLimiter({ fastDelayMs: 1, slowDelayMs: 2 } as never)).toThrow(/option "maxFastAttempts" is required/);
    expect(() => itemFastSlowRateLimiter({ fastDelayMs: 1, slowDelayMs: 2, maxFastAttempts: 1.5 })).toThrow(/must be an integer >= 0, got 1.5/);
  });
});

describe('bucketRateLimiter (RL-2, RL-7)', () => {
  it('lets a burst through, then reserves tokens 100 ms apart at 10 qps', () => {
    const clock = virtualClock();
    const limiter = bucketRateLimiter<string>({ qps: 10, burst: 100, scheduler: clock.scheduler });
    for (let i = 0; i < 100; i++) expect(limiter.when(`item-${i}`)).toBe(0);
    expect(limiter.when('a')).toBe(100);
    expect(limiter.when('b')).toBe(200);
    expect(limiter.when('c')).toBe(300);
  });

  it('counts every call, whatever the item, and remembers nothing per item', () => {
    const clock = virtualClock();
    const limiter = bucketRateLimiter<string>({ qps: 1, burst: 1, scheduler: clock.scheduler });
    expect(limiter.when('same')).toBe(0);
    expect(limiter.when('same')).toBe(1_000);
    expect(limiter.numRequeues('same')).toBe(0);
    limiter.forget('same');
    expect(limiter.when('other')).toBe(2_000);
  });

  it('refills with time on the injected clock, up to the burst', () => {
    const clock = virtualClock();
    const limiter = bucketRateLimiter<string>({ qps: 10, burst: 2, scheduler: clock.scheduler });
    expect(whenTimes(limiter, 'x', 3)).toEqual([0, 0, 100]);
    clock.advance(100); // the reserved token arrived
    expect(limiter.when('x')).toBe(100);
    clock.advance(10_000); // refills to the burst, no further
    expect(whenTimes(limiter, 'x', 3)).toEqual([0, 0, 100]);
  });

  it('never delays at an infinite rate', () => {
    const limiter = bucketRateLimiter<string>({ qps: Infinity, burst: 1 });
    expect(whenTimes(limiter, 'x', 3)).toEqual([0, 0, 0]);
  });

  it('rejects bad options with a TypeError naming the option', () => {
    expect(() => bucketRateLimiter({ qps: 0 })).toThrow(/option "qps"/);
    expect(() => bucketRateLimiter({ burst: 0 })).toThrow(/option "burst" must be an integer >= 1, got 0/);
    expect(() => bucketRateLimiter({ scheduler: Date as never })).toThrow(/option "scheduler"/);
  });
});

describe('maxOfRateLimiter (RL-5)', () => {
  it('gives the longest delay; every limiter counts; numRequeues is the largest; forget reaches all', () => {
    const limiter = maxOfRateLimiter<string>(
      itemFastSlowRateLimiter({ fastDelayMs: 5, slowDelayMs: 3_000, maxFastAttempts: 3 }),
      itemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 1_000 }),
    );
    expect(whenTimes(limiter, 'one', 5)).toEqual([5, 5, 5, 3_000, 3_000]);
    expect(limiter.numRequeues('one')).toBe(5);
    expect(whenTimes(limiter, 'two', 2)).toEqual([5, 5]);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).toBe(0);
    expect(limiter.when('one')).toBe(5);
  });

  it('rejects no limiters or a non-limiter', () => {
    expect(() => maxOfRateLimiter()).toThrow(/at least one rate limiter/);
    expect(() => maxOfRateLimiter({ when: () => 0 } as never)).toThrow(/limiters\[0\] must be a RateLimiter/);
  });
});

describe('defaultControllerRateLimiter (RL-2)', () => {
  it('is the longer of per-item backoff and the shared bucket', () => {
    const clock = virtualClock();
    const limiter = defaultControllerRateLimiter<string>({ scheduler: clock.scheduler });
    expect(whenTimes(limiter, 'one', 3)).toEqual([5, 10, 20]);
    // 97 more distinct items empty the bucket of 100 without delay beyond their first backoff.
    for (let i = 0; i < 97; i++) expect(limiter.when(`item-${i}`)).toBe(5);
    // The bucket now decides for a fresh item: 101st token at 10 qps.
    expect(limiter.when('fresh')).toBe(100);
    expect(limiter.when('fresh2')).toBe(200);
    // A long per-item backoff still wins over the bucket.
    for (let i = 0; i < 10; i++) limiter.when('one');
    expect(limiter.when('one')).toBe(5 * 2 ** 13);
    expect(limiter.numRequeues('one')).toBe(14);
  });
});

describe('withMaxWaitRateLimiter (RL-6)', () => {
  it('caps the delay and passes forget and numRequeues through', () => {
    const limiter = withMaxWaitRateLimiter(itemExponentialFailureRateLimiter<string>({ baseDelayMs: 1_000, maxDelayMs: 60_000 }), 5_000);
    expect(whenTimes(limiter, 'one', 5)).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(limiter.numRequeues('one')).toBe(5);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).toBe(0);
    expect(limiter.when('one')).toBe(1_000);
  });

  it('rejects a bad limiter or maximum', () => {
    expect(() => withMaxWaitRateLimiter(null as never, 5)).toThrow(/limiter must be a RateLimiter/);
    expect(() => withMaxWaitRateLimiter(defaultItemBasedRateLimiter(), NaN)).toThrow(/maxDelayMs must be a finite number >= 0, got NaN/);
  });
});
