import { AsyncIterableX } from 'ix/asynciterable';
import { Observable } from 'rxjs';
import { toError } from '../errors/reportError.js';
import type { WorkQueueItemsOptions, WorkQueueProcessOptions, WorkOutcome } from './types.js';
import type { WorkQueueGetOptions } from './types.js';
import type { GetResult } from './waiters.js';
import { booleanOption, checkOptionNames, describeValue, numberOption, optionNames } from '../options/validate.js';
import { followSignals } from '../options/followSignals.js';

/** What the consumers below need of a work queue; `WorkQueue` has it (kept here so the queue's file imports this one, not the reverse). */
interface WorkQueue<T> {
  get(opts?: WorkQueueGetOptions): Promise<GetResult<T>>;
  done(item: T): void;
  forget(item: T): void;
  addRateLimited(item: T): void;
  shuttingDown(): boolean;
}

/** The queue's items as an ix async iterable whose every iterator is one worker. */
export class QueueItems<T> extends AsyncIterableX<T> {
  // The queue the iterators take work from.
  readonly #queue: WorkQueue<T>;
  // The caller's signal from items({ signal }), combined with the one ix passes to each iterator.
  readonly #signal: AbortSignal | undefined;

  constructor(queue: WorkQueue<T>, opts: WorkQueueItemsOptions) {
    super();
    const o = checkOptionNames('WorkQueue.items', opts, optionNames<WorkQueueItemsOptions>({ signal: true }));
    if (o['signal'] !== undefined && !(o['signal'] instanceof AbortSignal)) {
      throw new TypeError(`WorkQueue.items: option "signal" must be an AbortSignal, got ${describeValue(o['signal'])}`);
    }
    this.#queue = queue;
    this.#signal = opts.signal;
  }

  override [Symbol.asyncIterator](signal?: AbortSignal): AsyncIterator<T> {
    return itemIterator(this.#queue, [this.#signal, signal].filter((s): s is AbortSignal => s !== undefined));
  }
}

function itemIterator<T>(queue: WorkQueue<T>, signals: readonly AbortSignal[]): AsyncIterator<T, undefined> {
  // Aborted when the iteration finishes or any of `signals` aborts, to end a pending get(); released at the end.
  const stop = followSignals(...signals);
  let current: { readonly item: T } | undefined;
  let finished = false;

  const release = (): void => {
    if (current === undefined) return;
    const { item } = current;
    current = undefined;
    queue.done(item);
  };
  const finish = (): IteratorReturnResult<undefined> => {
    finished = true;
    stop.release();
    stop.abort();
    release();
    return { done: true, value: undefined };
  };

  const step = async (): Promise<IteratorResult<T, undefined>> => {
    // Asking for the next item means the consumer finished with the previous one.
    release();
    if (finished || signals.some((s) => s.aborted)) return finish();
    let got;
    try {
      got = await queue.get({ signal: stop.signal });
    } catch (err) {
      if (stop.signal.aborted) return finish();
      throw err;
    }
    if (got.shutdown) return finish();
    current = { item: got.item };
    // The iteration may have been ended while the item was on its way: it must not stay in processing.
    if (finished) return finish();
    return { done: false, value: got.item };
  };
  // Calls of next() that overlap run one after the other, so one iterator never holds two items.
  let queued: Promise<unknown> = Promise.resolve();

  return {
    next(): Promise<IteratorResult<T, undefined>> {
      const result = queued.then(step);
      queued = result.catch(() => undefined);
      return result;
    },
    // A loop that breaks, returns or throws lands here: the item in hand is done.
    async return(): Promise<IteratorResult<T, undefined>> {
      return finish();
    },
  };
}

/** The Observable behind {@link WorkQueue.process}. */
export function processItems<T>(
  queue: WorkQueue<T>,
  worker: (item: T, signal: AbortSignal) => unknown,
  opts: WorkQueueProcessOptions,
  report: (err: Error) => void,
): Observable<WorkOutcome<T>> {
  const where = 'WorkQueue.process';
  if (typeof worker !== 'function') throw new TypeError(`${where}: worker must be a function, got ${describeValue(worker)}`);
  const o = checkOptionNames(where, opts, optionNames<WorkQueueProcessOptions>({ concurrency: true, requeue: true }));
  const concurrency = numberOption(where, 'concurrency', o['concurrency'], 1, { min: 1, integer: true });
  const requeue = booleanOption(where, 'requeue', o['requeue'], true);

  return new Observable<WorkOutcome<T>>((subscriber) => {
    const stop = new AbortController();
    let running = concurrency;

    const settle = (item: T, error: Error | undefined): WorkOutcome<T> => {
      try {
        if (error === undefined) {
          queue.forget(item);
          return { item, ok: true };
        }
        if (!requeue) {
          queue.forget(item);
          return { item, ok: false, error, requeued: false };
        }
        const requeued = !queue.shuttingDown();
        queue.addRateLimited(item);
        return { item, ok: false, error, requeued };
      } catch (limiterErr) {
        // A rate limiter that throws must not stop the worker; the outcome still reaches the subscriber.
        report(toError(limiterErr));
        return error === undefined ? { item, ok: true } : { item, ok: false, error, requeued: false };
      }
    };

    const loop = async (): Promise<void> => {
      for (;;) {
        let got;
        try {
          got = await queue.get({ signal: stop.signal });
        } catch {
          return; // only an abort rejects get(): the subscription ended
        }
        if (got.shutdown) return;
        const item = got.item;
        let error: Error | undefined;
        try {
          await worker(item, stop.signal);
        } catch (err) {
          error = toError(err);
        }
        let outcome: WorkOutcome<T>;
        try {
          outcome = settle(item, error);
        } finally {
          queue.done(item);
        }
        subscriber.next(outcome);
      }
    };

    for (let i = 0; i < concurrency; i++) {
      loop().then(
        () => {
          if (--running === 0) subscriber.complete();
        },
        (err: unknown) => subscriber.error(err),
      );
    }
    return () => stop.abort();
  });
}
