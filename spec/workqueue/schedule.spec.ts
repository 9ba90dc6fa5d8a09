import { describe, expect, it } from 'vitest';
import { itemExponentialFailureRateLimiter } from '../../src/workqueue/rateLimiters.js';
import { workQueue, type WorkQueue } from '../../src/workqueue/index.js';
import { virtualClock, type VirtualClock } from './virtualTime.js';

/** Takes an item that must be there now. */
async function take<T>(queue: WorkQueue<T>): Promise<T> {
  if (queue.len() === 0) throw new Error('expected an item to be ready');
  const got = await queue.get();
  if (got.shutdown) throw new Error('expected an item, the queue has shut down');
  return got.item;
}

/** Moves the clock in 50 ms steps and records when the item became ready, taking and finishing it each time. */
async function readyTimes(clock: VirtualClock, queue: WorkQueue<string>, untilMs: number): Promise<number[]> {
  const times: number[] = [];
  while (clock.scheduler.now() < untilMs) {
    clock.advance(50);
    while (queue.len() > 0) {
      times.push(clock.scheduler.now());
      queue.done(await take(queue));
    }
  }
  return times;
}

describe('workQueue: one schedule per item (DQ-6, DQ-7)', () => {
  it('drops a requeue made moot by a later add: the run that add starts leaves the only schedule', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.add('a');
    await take(q);
    q.addAfter('a', 1_000); // the first run asks to run again at 1000 ms
    q.done('a');
    clock.advance(200);
    q.add('a'); // an event at 200 ms
    expect(await take(q)).toBe('a'); // …is handled at once: the schedule at 1000 ms is gone
    expect(clock.pendingTimers()).toBe(0);
    q.addAfter('a', 1_000); // this run's own schedule: 1200 ms
    q.done('a');
    expect(await readyTimes(clock, q, 3_000)).toEqual([1_200]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('drops the requeue of a run when an add during that run supersedes it, whichever came first', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });

    // The add arrives during the run, before the run asks for its requeue: the requeue is moot at once.
    q.add('a');
    await take(q);
    q.add('a');
    q.addAfter('a', 1_000);
    expect(clock.pendingTimers()).toBe(0);
    q.done('a');
    expect(await take(q)).toBe('a'); // the run the add asked for
    q.done('a');
    expect(await readyTimes(clock, q, 3_000)).toEqual([]);

    // The run asks for its requeue first, then the add arrives: taking the item again drops the requeue.
    q.add('b');
    await take(q);
    q.addAfter('b', 1_000);
    q.add('b');
    q.done('b');
    expect(await take(q)).toBe('b');
    expect(clock.pendingTimers()).toBe(0);
    q.done('b');
    expect(await readyTimes(clock, q, 6_000)).toEqual([]);
  });

  it('drops a backoff superseded by an add whose run succeeds', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler, rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 1_000 }) });
    q.add('a');
    await take(q);
    q.addRateLimited('a'); // the run failed: retry at 1000 ms
    q.done('a');
    clock.advance(200);
    q.add('a');
    expect(await take(q)).toBe('a');
    q.forget('a'); // this run succeeds
    q.done('a');
    expect(q.numRequeues('a')).toBe(0);
    expect(await readyTimes(clock, q, 5_000)).toEqual([]);
  });

  it('treats addAfter of an item already waiting to run as moot, but lets it raise the priority', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.add('first');
    q.add('a');
    q.addAfter('a', 500);
    q.addAfter('a', 500, { priority: 3 });
    expect(clock.pendingTimers()).toBe(0);
    expect(q.len()).toBe(2);
    expect(q.metrics().retries).toBe(2); // still counted, as client-go counts every delayed add
    expect(await take(q)).toBe('a');
    q.done('a');
    expect(await take(q)).toBe('first');
    q.done('first');
    expect(await readyTimes(clock, q, 2_000)).toEqual([]);
  });

  it('drops only the taken item’s schedule; the timer follows the next earliest one', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addAfter('a', 100);
    q.addAfter('b', 300);
    q.add('a');
    expect(await take(q)).toBe('a');
    q.done('a');
    expect(clock.pendingTimers()).toBe(1);
    expect(await readyTimes(clock, q, 1_000)).toEqual([300]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
