import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { itemExponentialFailureRateLimiter, workQueue, type RateLimiter, type WorkOutcome } from '../../src/workqueue/index.js';
import { virtualClock } from './virtualTime.js';

describe('WorkQueue.process(): an Observable of outcomes', () => {
  it('forgets an item that succeeded and requeues one that failed with backoff, until it succeeds', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({
      scheduler: clock.scheduler,
      rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 10, maxDelayMs: 1_000 }),
    });
    const attempts = new Map<string, number>();
    const outcomes: WorkOutcome<string>[] = [];
    const sub = q
      .process((key) => {
        const n = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, n);
        if (key === 'flaky' && n < 3) throw new Error(`attempt ${n}`);
      })
      .subscribe((o) => outcomes.push(o));
    q.add('fine');
    q.add('flaky');
    await waitFor(() => outcomes.length === 2, 'the first two outcomes');
    expect(outcomes).toEqual([
      { item: 'fine', ok: true },
      { item: 'flaky', ok: false, error: new Error('attempt 1'), requeued: true },
    ]);
    expect(q.numRequeues('flaky')).toBe(1);
    clock.advance(10);
    await waitFor(() => outcomes.length === 3, 'the second attempt');
    expect(q.numRequeues('flaky')).toBe(2);
    clock.advance(19);
    expect(q.len()).toBe(0);
    clock.advance(1);
    await waitFor(() => outcomes.length === 4, 'the third attempt');
    expect(outcomes[3]).toEqual({ item: 'flaky', ok: true });
    expect(q.numRequeues('flaky')).toBe(0);
    sub.unsubscribe();
  });

  it('with requeue: false, forgets a failed item instead of retrying it', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    q.addRateLimited('a'); // one remembered failure
    clock.advance(5);
    const outcomes: WorkOutcome<string>[] = [];
    const sub = q
      .process(
        () => {
          throw new Error('permanent');
        },
        { requeue: false },
      )
      .subscribe((o) => outcomes.push(o));
    await waitFor(() => outcomes.length === 1, 'the outcome');
    expect(outcomes[0]).toEqual({ item: 'a', ok: false, error: new Error('permanent'), requeued: false });
    expect(q.numRequeues('a')).toBe(0);
    clock.advance(10_000);
    expect(q.len()).toBe(0);
    sub.unsubscribe();
  });

  it('turns a non-Error rejection into an Error in the outcome', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.add('a');
    const outcomes: WorkOutcome<string>[] = [];
    const sub = q.process(() => Promise.reject('plain string'), { requeue: false }).subscribe((o) => outcomes.push(o));
    await waitFor(() => outcomes.length === 1, 'the outcome');
    const outcome = outcomes[0];
    expect(outcome?.ok === false && outcome.error).toEqual(new Error('plain string'));
    sub.unsubscribe();
  });

  it('runs up to `concurrency` items at once, and an item added while it runs only after it finished', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    const running = new Map<string, () => void>();
    const log: string[] = [];
    const sub = q
      .process(
        (key) =>
          new Promise<void>((resolve) => {
            log.push(`start ${key}`);
            running.set(key, () => {
              running.delete(key);
              log.push(`end ${key}`);
              resolve();
            });
          }),
        { concurrency: 2 },
      )
      .subscribe();
    q.add('a');
    q.add('b');
    q.add('c');
    await waitFor(() => running.size === 2, 'two workers busy');
    expect([...running.keys()]).toEqual(['a', 'b']);
    q.add('a'); // a is running: waits behind c, and never beside itself
    running.get('a')?.();
    await waitFor(() => running.has('c'), 'c started');
    running.get('b')?.();
    await waitFor(() => running.has('a'), 'a started again');
    running.get('c')?.();
    running.get('a')?.();
    await waitFor(() => log.length === 8, 'everything finished');
    expect(log).toEqual(['start a', 'start b', 'end a', 'start c', 'end b', 'start a', 'end c', 'end a']);
    sub.unsubscribe();
  });

  it('completes when the queue shut down and is empty; shutDownWithDrain waits for the running item', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    const gate = deferred();
    let started = false;
    const all = lastValueFrom(
      q
        .process(async () => {
          started = true;
          await gate.promise;
        })
        .pipe(toArray()),
    );
    q.add('a');
    q.add('b');
    await waitFor(() => started, 'the first item to start');
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    gate.resolve();
    const outcomes = await all;
    await drain;
    expect(drained).toBe(true);
    expect(outcomes).toEqual([
      { item: 'a', ok: true },
      { item: 'b', ok: true },
    ]);
  });

  it('reports a failure during shutdown as not requeued', async () => {
    const q = workQueue<string>({ scheduler: virtualClock().scheduler });
    q.add('a');
    q.shutDown();
    const outcomes = await lastValueFrom(
      q
        .process(() => {
          throw new Error('late');
        })
        .pipe(toArray()),
    );
    expect(outcomes).toEqual([{ item: 'a', ok: false, error: new Error('late'), requeued: false }]);
  });

  it('on unsubscribe, stops taking items, aborts the running worker, and still marks its item done and requeues it', async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ scheduler: clock.scheduler });
    let signal: AbortSignal | undefined;
    const calls: string[] = [];
    const sub = q
      .process(
        (key, s) =>
          new Promise<void>((_resolve, reject) => {
            calls.push(key);
            signal = s;
            s.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          }),
      )
      .subscribe();
    q.add('a');
    await waitFor(() => signal !== undefined, 'the worker to start');
    sub.unsubscribe();
    expect(signal?.aborted).toBe(true);
    await waitFor(() => q.numRequeues('a') === 1, 'the aborted item to be requeued');
    clock.advance(5);
    q.add('b');
    expect(q.len()).toBe(2); // nobody takes them any more
    expect(calls).toEqual(['a']);
    clock.advance(1_000);
    expect(q.metrics().longestRunningProcessorSeconds).toBe(0);
  });

  it('sends what a rate limiter throws to onError and still emits the outcome', async () => {
    const errors: Error[] = [];
    const throwing: RateLimiter<string> = {
      when: () => {
        throw new Error('limiter broke');
      },
      forget: () => {},
      numRequeues: () => 0,
    };
    const q = workQueue<string>({ scheduler: virtualClock().scheduler, rateLimiter: throwing, onError: (err) => errors.push(err) });
    q.add('a');
    const outcomes: WorkOutcome<string>[] = [];
    const sub = q
      .process(() => {
        throw new Error('work broke');
      })
      .subscribe((o) => outcomes.push(o));
    await waitFor(() => outcomes.length === 1, 'the outcome');
    expect(outcomes[0]).toEqual({ item: 'a', ok: false, error: new Error('work broke'), requeued: false });
    expect(errors.map((e) => e.message)).toEqual(['limiter broke']);
    q.add('b'); // the worker survived
    await waitFor(() => outcomes.length === 2, 'the next outcome');
    sub.unsubscribe();
  });

  it('rejects a bad worker or options with a TypeError naming them', () => {
    const q = workQueue<string>();
    expect(() => q.process('work' as never)).toThrow(/worker must be a function, got "work"/);
    expect(() => q.process(() => {}, { concurrency: 0 })).toThrow(/option "concurrency" must be an integer >= 1, got 0/);
    expect(() => q.process(() => {}, { concurrency: 1.5 })).toThrow(/got 1.5/);
    expect(() => q.process(() => {}, { requeue: 'yes' as never })).toThrow(/option "requeue" must be a boolean/);
    expect(() => q.process(() => {}, { parallel: 2 } as never)).toThrow(/unknown option "parallel"/);
  });
});
