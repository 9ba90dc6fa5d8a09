import type { AsyncIterableX } from 'ix/asynciterable';
import type { Observable } from 'rxjs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  LOW_PRIORITY,
  bucketRateLimiter,
  itemExponentialFailureRateLimiter,
  maxOfRateLimiter,
  workQueue,
  type WorkQueueAddOptions,
  type RateLimiter,
  type WorkOutcome,
  type WorkQueue,
  type WorkQueueMetrics,
} from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

// These lines are checked by `tsc`: each @ts-expect-error must stay an error.
describe('work queue types', () => {
  it('keeps the item type through every method', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    expectTypeOf(q).toEqualTypeOf<WorkQueue<string>>();
    // Never called: these lines are here for the compiler.
    const misuse = (): void => {
      // @ts-expect-error a queue of strings takes no number
      q.add(1);
      // @ts-expect-error nor a delayed one
      q.addAfter(1, 10);
      // @ts-expect-error nor a rate-limited one
      q.addRateLimited({ key: 'a' });
      // @ts-expect-error done takes the item type too
      q.done(2);
      // @ts-expect-error the worker receives the item type
      q.process((item: number) => item);
    };
    expect(misuse).toBeTypeOf('function');
    expect(() =>
      // @ts-expect-error a delay is a number of milliseconds
      q.addAfter('a', '10'),
    ).toThrow(TypeError);

    q.add('a');
    const got = await q.get();
    expectTypeOf(got).toEqualTypeOf<
      { readonly shutdown: false; readonly item: string; readonly priority: number } | { readonly shutdown: true; readonly item?: undefined; readonly priority?: undefined }
    >();
    if (!got.shutdown) {
      expectTypeOf(got.item).toEqualTypeOf<string>();
      expectTypeOf(got.priority).toEqualTypeOf<number>();
    } else {
      expectTypeOf(got.item).toEqualTypeOf<undefined>();
    }
    expect(got).toEqual({ shutdown: false, item: 'a', priority: 0 });

    expectTypeOf(q.items()).toEqualTypeOf<AsyncIterableX<string>>();
    expectTypeOf(q.process(() => {})).toEqualTypeOf<Observable<WorkOutcome<string>>>();
    expectTypeOf(q.metrics$).toEqualTypeOf<Observable<WorkQueueMetrics>>();
    q.shutDown();
  });

  it('takes a numeric priority, and nothing else, on every add', () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.add('a', { priority: LOW_PRIORITY });
    q.addAfter('b', 5, { priority: 3 });
    q.addRateLimited('c', {});
    expectTypeOf<WorkQueueAddOptions>().toEqualTypeOf<{ readonly priority?: number }>();
    expectTypeOf(LOW_PRIORITY).toExtend<number>();
    const misuse = (): void => {
      // @ts-expect-error a priority is a number
      q.add('a', { priority: 'high' });
      // @ts-expect-error options are known by name
      q.add('a', { prio: 1 });
      // @ts-expect-error the third argument of addAfter is the options, not a bare priority
      q.addAfter('a', 5, 1);
      // @ts-expect-error nor of addRateLimited the second
      q.addRateLimited('a', 1);
    };
    expect(misuse).toBeTypeOf('function');
    expect(q.len()).toBe(1);
    expect(LOW_PRIORITY).toBe(-100);
    q.shutDown();
  });

  it('narrows an outcome on ok', () => {
    const outcome = { item: 'a', ok: false, error: new Error('x'), requeued: true } as WorkOutcome<string>;
    if (outcome.ok) {
      // @ts-expect-error a success has no error
      void outcome.error;
    } else {
      expectTypeOf(outcome.error).toEqualTypeOf<Error>();
    }
    expect(outcome.ok).toBe(false);
  });

  it('ties rate limiters to the item type', () => {
    const numbers: RateLimiter<number> = itemExponentialFailureRateLimiter<number>();
    // @ts-expect-error a queue of strings cannot use a rate limiter of numbers
    workQueue<string>({ rateLimiter: numbers });
    // The item type follows from the rate limiter.
    expectTypeOf(workQueue({ rateLimiter: numbers })).toEqualTypeOf<WorkQueue<number>>();
    expectTypeOf(maxOfRateLimiter(numbers, bucketRateLimiter<number>())).toEqualTypeOf<RateLimiter<number>>();
    expect(() =>
      // @ts-expect-error rate limiter options are checked
      itemExponentialFailureRateLimiter({ baseDelay: 5 }),
    ).toThrow(/unknown option "baseDelay"/);
    expect(() =>
      // @ts-expect-error the queue options are checked
      workQueue<string>({ ratelimiter: numbers }),
    ).toThrow(/unknown option "ratelimiter"/);
    expect(numbers.when(1)).toBe(5);
  });
});
