import { describe, expect, it } from 'vitest';
import { workQueue, type WorkQueue } from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

/** Takes an item that must be there now. */
async function take<T>(queue: WorkQueue<T>): Promise<T> {
  const got = await queue.get();
  if (got.shutdown) throw new Error('expected an item, the queue has shut down');
  return got.item;
}

/** Whether a promise has settled, checked after pending callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([promise.then(() => true, () => true), new Promise((r) => setImmediate(() => r(marker)))])) !== marker;
}

describe('workQueue: adding and taking (Q-1, Q-2, Q-5)', () => {
  it('hands out items first in, first out', async () => {
    const q = workQueue<string>();
    q.add('a');
    q.add('b');
    q.add('c');
    expect([await take(q), await take(q), await take(q)]).toEqual(['a', 'b', 'c']);
  });

  it('collapses adds of an item that is still waiting', async () => {
    const q = workQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect([await take(q), await take(q)]).toEqual(['a', 'b']);
    expect(q.len()).toBe(0);
  });

  it('compares items as Map keys: equal strings collapse, equal-looking objects do not', () => {
    const q = workQueue<object | string>();
    q.add('ns/a');
    q.add(`ns/${'a'}`);
    q.add({ key: 'x' });
    q.add({ key: 'x' });
    expect(q.len()).toBe(3);
  });

  it('makes a waiting get() resolve when an item arrives, one waiter per item', async () => {
    const q = workQueue<string>();
    const first = q.get();
    const second = q.get();
    expect(await isSettled(first)).toBe(false);
    q.add('a');
    expect(await first).toEqual({ shutdown: false, item: 'a', priority: 0 });
    expect(await isSettled(second)).toBe(false);
    q.add('b');
    expect(await second).toEqual({ shutdown: false, item: 'b', priority: 0 });
  });

  it('rejects a waiting get() with the reason of its aborted signal, and gives the next item to the next waiter', async () => {
    const q = workQueue<string>();
    const ac = new AbortController();
    const aborted = q.get({ signal: ac.signal });
    const kept = q.get();
    ac.abort(new Error('stop waiting'));
    await expect(aborted).rejects.toThrow('stop waiting');
    q.add('a');
    expect(await kept).toEqual({ shutdown: false, item: 'a', priority: 0 });
    expect(q.len()).toBe(0);
  });

  it('rejects get() with an already aborted signal without taking an item', async () => {
    const q = workQueue<string>();
    q.add('a');
    await expect(q.get({ signal: AbortSignal.abort(new Error('too late')) })).rejects.toThrow('too late');
    expect(q.len()).toBe(1);
  });

  it('counts in len() only the items waiting to be taken, not one re-added while processed', async () => {
    const q = workQueue<string>();
    q.add('a');
    q.add('b');
    expect(q.len()).toBe(2);
    await take(q);
    expect(q.len()).toBe(1);
    q.add('a'); // being processed: waits for done
    expect(q.len()).toBe(1);
    q.done('a');
    expect(q.len()).toBe(2);
  });
});

describe('workQueue: processing (Q-3, Q-4)', () => {
  it('reinsert: an item added again after done is processed again', async () => {
    const q = workQueue<string>();
    q.add('foo');
    const item = await take(q);
    q.add(item);
    q.done(item);
    expect(q.len()).toBe(1);
    expect(await take(q)).toBe('foo');
  });

  it('add while processing: the item is not handed out again until done', async () => {
    const q = workQueue<string>();
    q.add('foo');
    await take(q);
    q.add('foo');
    expect(q.len()).toBe(0);
    const next = q.get();
    expect(await isSettled(next)).toBe(false);
    q.done('foo');
    expect(await next).toEqual({ shutdown: false, item: 'foo', priority: 0 });
  });

  it('collapse while processing: many adds during processing give one more run', async () => {
    const q = workQueue<string>();
    q.add('foo');
    await take(q);
    for (let i = 0; i < 5; i++) q.add('foo');
    q.done('foo');
    expect(q.len()).toBe(1);
    expect(await take(q)).toBe('foo');
    q.done('foo');
    expect(q.len()).toBe(0);
  });

  it('an item done without being re-added leaves the queue', async () => {
    const q = workQueue<string>();
    q.add('foo');
    await take(q);
    q.done('foo');
    expect(q.len()).toBe(0);
    expect(q.metrics().depth).toBe(0);
  });

  it('reports done() of an item that is not being processed, and changes nothing', async () => {
    const errors: Error[] = [];
    const q = workQueue<string>({ onError: (err) => errors.push(err) });
    q.add('a');
    q.done('a'); // waiting, not taken
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('"a" is not being processed')]);
    expect(q.len()).toBe(1);
    expect(await take(q)).toBe('a');
    q.done('a');
    q.done('a');
    expect(errors).toHaveLength(2);
    expect(q.len()).toBe(0);
  });
});

describe('workQueue: shutdown (Q-2, Q-6, Q-7)', () => {
  it('ignores adds after shutdown and reports shuttingDown()', () => {
    const q = workQueue<string>();
    expect(q.shuttingDown()).toBe(false);
    q.shutDown();
    expect(q.shuttingDown()).toBe(true);
    q.add('a');
    q.addAfter('b', 0);
    q.addRateLimited('c');
    expect(q.len()).toBe(0);
  });

  it('still hands out items queued before shutdown, then reports the shutdown', async () => {
    const q = workQueue<string>();
    q.add('a');
    q.add('b');
    q.shutDown();
    expect(await q.get()).toEqual({ shutdown: false, item: 'a', priority: 0 });
    expect(await q.get()).toEqual({ shutdown: false, item: 'b', priority: 0 });
    expect(await q.get()).toEqual({ shutdown: true });
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('wakes every waiting get() with the shutdown', async () => {
    const q = workQueue<string>();
    const waiting = [q.get(), q.get(), q.get()];
    q.shutDown();
    expect(await Promise.all(waiting)).toEqual([{ shutdown: true }, { shutdown: true }, { shutdown: true }]);
  });

  it('queues an item added during processing at done(), even after shutdown', async () => {
    const q = workQueue<string>();
    q.add('a');
    await take(q);
    q.add('a');
    q.shutDown();
    q.done('a');
    expect(await q.get()).toEqual({ shutdown: false, item: 'a', priority: 0 });
    q.done('a');
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('shutDownWithDrain waits for the items being processed', async () => {
    const q = workQueue<string>();
    q.add('a');
    q.add('b');
    await take(q);
    await take(q);
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    expect(q.shuttingDown()).toBe(true);
    q.done('a');
    expect(await isSettled(drain)).toBe(false);
    expect(drained).toBe(false);
    q.done('b');
    await drain;
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain resolves at once when nothing is being processed, even with items still queued', async () => {
    const q = workQueue<string>();
    q.add('a');
    await q.shutDownWithDrain();
    expect(await q.get()).toEqual({ shutdown: false, item: 'a', priority: 0 });
  });

  it('a later shutDown releases a waiting shutDownWithDrain', async () => {
    const q = workQueue<string>();
    q.add('a');
    await take(q);
    const drain = q.shutDownWithDrain();
    expect(await isSettled(drain)).toBe(false);
    q.shutDown();
    await drain;
    // The item is still being processed: done() afterwards is accepted.
    q.done('a');
    expect(q.metrics().unfinishedWorkSeconds).toBe(0);
  });
});

describe('workQueue: options', () => {
  it('rejects bad and unknown options with a TypeError naming them', () => {
    expect(() => workQueue({ name: 3 as unknown as string })).toThrow(/option "name" must be a string, got 3/);
    expect(() => workQueue({ scheduler: {} as never })).toThrow(/option "scheduler" must be an rxjs SchedulerLike/);
    expect(() => workQueue({ rateLimiter: { when: () => 1 } as never })).toThrow(/option "rateLimiter" must be a RateLimiter/);
    expect(() => workQueue({ onError: 'log' as never })).toThrow(/option "onError" must be a function, got "log"/);
    expect(() => workQueue({ ratelimiter: {} } as never)).toThrow(/unknown option "ratelimiter"/);
    expect(() => workQueue(null as never)).toThrow(TypeError);
  });

  it('rejects get() with a signal that is not an AbortSignal', async () => {
    const q = workQueue<string>();
    await expect(q.get({ signal: {} as AbortSignal })).rejects.toThrow(/option "signal" must be an AbortSignal/);
  });

  it('carries its name', () => {
    const { scheduler } = virtualClock();
    expect(workQueue({ name: 'pods', scheduler }).name).toBe('pods');
    expect(workQueue({ scheduler }).metrics().name).toBe('');
  });
});
