import { describe, expect, it } from 'vitest';
import { itemExponentialFailureRateLimiter, workQueue, type RateLimiter } from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

describe('workQueue: rate limited adds (RQ-1)', () => {
  it('adds after the rate limiter delay, counting failures per item until forgotten', () => {
    const clock = virtualClock();
    const q = workQueue<string>({
      scheduler: clock.scheduler,
      rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 1_000 }),
    });
    q.addRateLimited('one'); // 1 ms
    q.addRateLimited('one'); // 2 ms, collapses into the 1 ms entry
    q.addRateLimited('two'); // 1 ms
    expect(q.numRequeues('one')).toBe(2);
    expect(q.numRequeues('two')).toBe(1);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(2);

    q.forget('one');
    expect(q.numRequeues('one')).toBe(0);
    q.addRateLimited('one'); // 1 ms again
    q.addRateLimited('two'); // 2 ms
    expect(q.numRequeues('two')).toBe(2);
    expect(q.metrics().retries).toBe(5);
  });

  it('forget does not mark the item done', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.add('a');
    await q.get();
    q.forget('a');
    q.add('a');
    expect(q.len()).toBe(0); // still being processed
    q.done('a');
    expect(q.len()).toBe(1);
  });

  it('uses the default controller limiter on the queue clock: 5 ms, 10 ms, 20 ms for one item', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addRateLimited('a');
    clock.advance(4);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues('a')).toBe(1);
  });

  it('the default bucket gives 100 ms after a burst of 100 distinct items at the same instant', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    for (let i = 0; i < 101; i++) q.addRateLimited(`item-${i}`);
    clock.advance(5);
    expect(q.len()).toBe(100);
    clock.advance(94);
    expect(q.len()).toBe(100);
    clock.advance(1);
    expect(q.len()).toBe(101);
  });

  it('consults the rate limiter even after shutdown, as client-go does, but adds nothing', () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.shutDown();
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(1);
    expect(q.len()).toBe(0);
  });

  it('rejects what a custom rate limiter returns when it is not a finite number', () => {
    const broken: RateLimiter<string> = { when: () => NaN, forget: () => {}, numRequeues: () => 0 };
    const q = workQueue<string>({ scheduler: virtualClock().scheduler, rateLimiter: broken });
    expect(() => q.addRateLimited('a')).toThrow(/the rate limiter returned NaN/);
    expect(q.len()).toBe(0);
  });

  it('takes a user rate limiter through the three-method interface', () => {
    const clock = virtualClock();
    const seen: string[] = [];
    const fixed: RateLimiter<string> = {
      when: (item) => (seen.push(`when ${item}`), 50),
      forget: (item) => void seen.push(`forget ${item}`),
      numRequeues: () => 7,
    };
    const q = workQueue<string>({ scheduler: clock.scheduler, rateLimiter: fixed });
    q.addRateLimited('a');
    q.forget('a');
    expect(q.numRequeues('a')).toBe(7);
    expect(seen).toEqual(['when a', 'forget a']);
    clock.advance(50);
    expect(q.len()).toBe(1);
  });
});
