import { queueScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { workQueue } from '../../src/workqueue/index.js';
import { drainNow, virtualClock } from './virtualTime.js';

describe('workQueue: delayed adds (DQ-1 … DQ-5)', () => {
  it('adds an item once its delay has passed on the queue clock, not before', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('foo', 50);
    clock.advance(49);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(await drainNow(q)).toEqual(['foo']);
    // Nothing fires again later, and no timer is left behind.
    clock.advance(10_000);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('adds at once for a delay of zero or less', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('zero', 0);
    q.addAfter('negative', -5);
    expect(q.len()).toBe(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects a NaN, infinite or non-number delay with a TypeError', () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    expect(() => q.addAfter('a', NaN)).toThrow(/delayMs must be a finite number of milliseconds, got NaN/);
    expect(() => q.addAfter('a', Infinity)).toThrow(TypeError);
    expect(() => q.addAfter('a', '5' as unknown as number)).toThrow(/got "5"/);
    expect(q.metrics().retries).toBe(0);
  });

  it('deduping: an item scheduled twice keeps the earlier time, whichever came first', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('foo', 50);
    q.addAfter('foo', 70); // later: does not postpone
    clock.advance(60);
    expect(await drainNow(q)).toEqual(['foo']);
    clock.advance(20); // past the 70 ms add: it was collapsed
    expect(q.len()).toBe(0);

    q.addAfter('foo', 50);
    q.addAfter('foo', 30); // earlier: wins
    clock.advance(29);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(await drainNow(q)).toEqual(['foo']);
    clock.advance(30);
    expect(q.len()).toBe(0);
  });

  it('add two fire early: entries fire in readyAt order, whatever the insertion order', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('foo', 1_000);
    q.addAfter('bar', 50);
    clock.advance(60);
    expect(await drainNow(q)).toEqual(['bar']);
    q.addAfter('baz', 2_000);
    clock.advance(1_000);
    expect(await drainNow(q)).toEqual(['foo']);
    clock.advance(2_000);
    expect(await drainNow(q)).toEqual(['baz']);
  });

  it('copy shifting: items ready together are queued earliest first', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('foo', 1_000);
    q.addAfter('bar', 500);
    q.addAfter('baz', 250);
    clock.advance(2_000);
    expect(await drainNow(q)).toEqual(['baz', 'bar', 'foo']);
  });

  it('a fired entry goes through the normal dedup: it collapses into a waiting add', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.add('foo');
    q.addAfter('foo', 10);
    clock.advance(10);
    expect(q.len()).toBe(1);
    expect(await drainNow(q)).toEqual(['foo']);
  });

  it('a delayed item that fires while the item is processed runs again after done', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.add('foo');
    await q.get();
    q.addAfter('foo', 5);
    clock.advance(5);
    expect(q.len()).toBe(0);
    q.done('foo');
    expect(await drainNow(q)).toEqual(['foo']);
  });

  it('keeps a single timer, for the earliest entry', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    for (let i = 0; i < 50; i++) q.addAfter(`item-${i}`, 1_000 - i);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(951);
    expect(q.len()).toBe(1);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('counts every delayed add as a retry, also the ones added at once', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('a', 10);
    q.addAfter('a', 20);
    q.addAfter('b', 0);
    q.add('c');
    expect(q.metrics().retries).toBe(3);
    q.shutDown();
    q.addAfter('d', 10); // ignored after shutdown, not counted
    expect(q.metrics().retries).toBe(3);
  });

  it('drops pending delayed items at shutdown and cancels the timer', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('late', 100);
    q.add('now');
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(1_000);
    expect(await q.get()).toEqual({ shutdown: false, item: 'now', priority: 0 });
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('drops pending delayed items at shutDownWithDrain too', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('late', 100);
    await q.shutDownWithDrain();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(1_000);
    expect(q.len()).toBe(0);
  });

  it('waits longer than a Node timer can in one step without firing early', () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    const thirtyDays = 30 * 24 * 3600 * 1000;
    q.addAfter('monthly', thirtyDays);
    clock.advance(2 ** 31); // one full timer step
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(thirtyDays - 2 ** 31 - 1);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
  });

  it('works with a scheduler that runs due work synchronously', () => {
    const q = workQueue<string>({ scheduler: queueScheduler });
    q.addAfter('a', -1);
    expect(q.len()).toBe(1);
    q.shutDown();
  });
});
