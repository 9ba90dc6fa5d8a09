import { describe, expect, it } from 'vitest';
import { itemExponentialFailureRateLimiter } from '../../src/workqueue/rateLimiters.js';
import { LOW_PRIORITY, workQueue } from '../../src/workqueue/index.js';
import { drainNow, virtualClock } from './virtualTime.js';

describe('workQueue: priorities (PQ-1 … PQ-5)', () => {
  it('hands out the highest priority first, first in first out within one priority, 0 by default', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.add('low-1', { priority: LOW_PRIORITY });
    q.add('default-1');
    q.add('high-1', { priority: 10 });
    q.add('low-2', { priority: LOW_PRIORITY });
    q.add('default-2', { priority: 0 });
    q.add('high-2', { priority: 10 });
    q.add('between', { priority: -3.5 });
    expect(await drainNow(q, (got) => [got.item, got.priority])).toEqual([
      ['high-1', 10],
      ['high-2', 10],
      ['default-1', 0],
      ['default-2', 0],
      ['between', -3.5],
      ['low-1', -100],
      ['low-2', -100],
    ]);
  });

  it('raises a waiting item re-added with a higher priority (behind what already waits there), and never lowers it', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.add('a', { priority: LOW_PRIORITY });
    q.add('b', { priority: LOW_PRIORITY });
    q.add('c');
    q.add('b'); // raised to 0, behind c
    q.add('c', { priority: LOW_PRIORITY }); // not lowered
    expect(q.len()).toBe(3);
    expect(q.metrics().adds).toBe(3);
    expect(await drainNow(q, (got) => [got.item, got.priority])).toEqual([
      ['c', 0],
      ['b', 0],
      ['a', -100],
    ]);
  });

  it('queues an item added while it is processed at the highest priority asked meanwhile', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.add('busy');
    const got = await q.get();
    expect(got).toEqual({ shutdown: false, item: 'busy', priority: 0 });
    q.add('busy', { priority: LOW_PRIORITY });
    q.add('busy', { priority: 7 });
    q.add('busy', { priority: 1 });
    q.add('other', { priority: 5 });
    expect(q.metrics().depth).toBe(2); // every waiting item, the one to run again included
    q.done('busy');
    expect(await drainNow(q, (got) => [got.item, got.priority])).toEqual([
      ['busy', 7],
      ['other', 5],
    ]);
  });

  it('makes a delayed item ready at its priority; scheduled twice, it keeps the earlier time and the higher priority', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.add('waiting');
    q.addAfter('late', 100, { priority: 3 });
    q.addAfter('late', 500, { priority: 9 }); // later time: ignored; higher priority: kept
    q.addAfter('later', 200, { priority: LOW_PRIORITY });
    clock.advance(100);
    expect(await drainNow(q, (got) => [got.item, got.priority])).toEqual([
      ['late', 9],
      ['waiting', 0],
    ]);
    clock.advance(100);
    expect(await drainNow(q, (got) => [got.item, got.priority])).toEqual([['later', -100]]);
  });

  it('applies the priority of a rate-limited add when its delay has passed', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler, rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 10 }) });
    q.add('plain');
    q.addRateLimited('retry', { priority: 4 });
    expect(q.len()).toBe(1);
    clock.advance(10);
    expect(await drainNow(q, (got) => [got.item, got.priority])).toEqual([
      ['retry', 4],
      ['plain', 0],
    ]);
  });

  it('rejects a priority that is not a finite number, and unknown options, with a TypeError naming them', () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    expect(() => q.add('a', { priority: NaN })).toThrow(/WorkQueue\.add: option "priority" must be a finite number, got NaN/);
    expect(() => q.add('a', { priority: '1' as unknown as number })).toThrow(/got "1"/);
    expect(() => q.addAfter('a', 10, { priority: Infinity })).toThrow(/WorkQueue\.addAfter: option "priority" must be a finite number, got Infinity/);
    expect(() => q.addRateLimited('a', { priority: -Infinity })).toThrow(/WorkQueue\.addRateLimited: option "priority"/);
    expect(() => q.add('a', { prio: 1 } as never)).toThrow(/unknown option "prio"/);
    // Nothing was added, and the rejected rate-limited add counted no failure.
    expect(q.len()).toBe(0);
    expect(q.numRequeues('a')).toBe(0);
  });

  it('hands 100k keys out in priority order, first in first out within a level, raises included', async () => {
    const q = workQueue<number>({ scheduler: virtualClock().scheduler });
    const n = 100_000;
    const low: number[] = [];
    const normal: number[] = [];
    const high: number[] = [];
    for (let i = 0; i < n; i++) {
      const level = i % 3 === 0 ? low : i % 3 === 1 ? normal : high;
      level.push(i);
      q.add(i, { priority: level === low ? LOW_PRIORITY : level === normal ? 0 : 5 });
    }
    // Raise every low item ending in 9 to the top: it goes behind the items already there.
    const raised = low.filter((i) => i % 10 === 9);
    for (const i of raised) q.add(i, { priority: 5 });
    expect(q.len()).toBe(n);
    const order: number[] = [];
    while (q.len() > 0) {
      const r = await q.get();
      if (r.shutdown) break;
      order.push(r.item);
      q.done(r.item);
    }
    expect(order).toEqual([...high, ...raised, ...normal, ...low.filter((i) => i % 10 !== 9)]);
    expect(q.metrics().depth).toBe(0);
  });
});
