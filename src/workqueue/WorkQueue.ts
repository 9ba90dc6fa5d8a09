import type { AsyncIterableX } from 'ix/asynciterable';
import { AsyncSubject, asyncScheduler, concat, interval, map, of, startWith, takeUntil, type Observable, type SchedulerLike } from 'rxjs';
import { reportError, toError } from '../errors/reportError.js';
import { DelayedAdds } from './delayedAdds.js';
import { processItems, QueueItems } from './consume.js';
import { QueueMetricsRecorder, type WorkQueueMetrics } from './metrics.js';
import { checkRateLimiter, defaultControllerRateLimiter, type RateLimiter } from './rateLimiters.js';
import type { WorkQueueGetOptions, WorkQueueGetResult, WorkQueueItemsOptions, WorkQueueProcessOptions, WorkQueueWorker, WorkOutcome, WorkQueueOptions } from './types.js';
import { checkOptionNames, delayArgument, functionOption, schedulerOption, show } from './validate.js';

const SHUT_DOWN: WorkQueueGetResult<never> = Object.freeze({ shutdown: true });

// client-go refreshes its unfinished-work gauges this often; metrics$ emits at the same pace.
const METRICS_PERIOD_MS = 500;

/** A caller of get() waiting for an item. */
interface Waiter<T> {
  readonly resolve: (result: WorkQueueGetResult<T>) => void;
  readonly detach: () => void;
}

/**
 * client-go's work queue (util/workqueue), with its delaying and
 * rate-limiting layers in one object. Build it with {@link workQueue}.
 *
 * - An item waits at most once: adding it again before a worker takes it
 *   does nothing. An item added while it is being processed is queued again
 *   only after `done(item)`, so no item is ever processed by two workers at
 *   once, and any number of adds during processing collapse into one more run.
 * - `get()` hands out items in order, waiting for one when the queue is
 *   empty; every item it returns must be given back with `done(item)`.
 *   `items()` and `process()` do that for you.
 * - `addAfter(item, ms)` adds later; an item waiting twice keeps the earlier
 *   time. `addRateLimited(item)` adds after the delay the rate limiter gives;
 *   `forget(item)` clears its failure count once it succeeded.
 * - `shutDown()` stops taking adds, drops delayed items and cancels every
 *   timer; workers still get the items queued before, then the news that the
 *   queue shut down. `shutDownWithDrain()` also waits for the items being
 *   processed; `shutDown()` cuts that wait short.
 *
 * Items are compared as Map keys (SameValueZero): strings such as
 * `'namespace/name'` in practice; objects by identity.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 *
 * const queue = workQueue<string>({ name: 'services' });
 * queue.add('default/web');
 * queue.add('default/web'); // collapses into the first
 *
 * // client-go's worker loop, by hand; items() and process() do the same for you.
 * for (;;) {
 *   const next = await queue.get();
 *   if (next.shutdown) break;
 *   try {
 *     await reconcile(next.item);
 *     queue.forget(next.item);
 *   } catch {
 *     queue.addRateLimited(next.item);
 *   } finally {
 *     queue.done(next.item);
 *   }
 * }
 * ```
 */
export class WorkQueue<T> {
  // Labels the metrics.
  readonly #name: string;
  // Reads the clock and runs the timers, so virtual time drives the queue exactly.
  readonly #scheduler: SchedulerLike;
  // Decides the delay of addRateLimited and remembers failures per item.
  readonly #rateLimiter: RateLimiter<T>;
  // Where failures the queue meets on its own go; reportError when unset.
  readonly #onError: ((err: Error) => void) | undefined;
  // The order of work: every item here is dirty and not being processed. A head index keeps taking O(1).
  #queue: T[] = [];
  #head = 0;
  // Items that need processing: waiting in #queue, or added again while being processed.
  readonly #dirty = new Set<T>();
  // Items handed out by get() and not yet done().
  readonly #processing = new Set<T>();
  // Callers of get() waiting for work, first come first served.
  readonly #waiters: Waiter<T>[] = [];
  // Once set, adds are ignored and an empty queue answers get() with the shutdown.
  #shuttingDown = false;
  // Set while shutDownWithDrain() waits for processing to empty; shutDown() or the last done() settles it.
  #drained: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;
  // Items of addAfter() waiting for their time.
  readonly #delayed: DelayedAdds<T>;
  // Counters, latencies and the start times of items being processed.
  readonly #metrics: QueueMetricsRecorder<T>;
  // Emits once at shutdown (and to anyone subscribing later), ending metrics$.
  readonly #closed = new AsyncSubject<void>();

  /**
   * A snapshot of the queue's metrics when subscribed, then every 500 ms (on
   * the queue's scheduler), and a last one at shutdown, after which it
   * completes. Nothing runs while nobody subscribes.
   *
   * ## Example
   * ```ts
   * import { workQueue } from 'rxkube';
   *
   * const queue = workQueue<string>({ name: 'pods' });
   * queue.metrics$.subscribe((m) => gauge.set({ name: m.name }, m.depth));
   * ```
   */
  readonly metrics$: Observable<WorkQueueMetrics>;

  /** @internal Use {@link workQueue}. */
  constructor(opts: WorkQueueOptions<T>) {
    const where = 'workQueue';
    const o = checkOptionNames(where, opts, ['name', 'scheduler', 'rateLimiter', 'onError']);
    const name = o['name'] ?? '';
    if (typeof name !== 'string') throw new TypeError(`${where}: option "name" must be a string, got ${show(name)}`);
    this.#name = name;
    this.#scheduler = schedulerOption(where, o['scheduler'], asyncScheduler);
    if (o['rateLimiter'] !== undefined) checkRateLimiter(where, 'option "rateLimiter"', o['rateLimiter']);
    this.#rateLimiter = (o['rateLimiter'] as RateLimiter<T> | undefined) ?? defaultControllerRateLimiter<T>({ scheduler: this.#scheduler });
    this.#onError = functionOption<(err: Error) => void>(where, 'onError', o['onError']);
    this.#delayed = new DelayedAdds<T>(this.#scheduler, (item) => this.add(item));
    this.#metrics = new QueueMetricsRecorder<T>(name, () => this.#scheduler.now());
    this.metrics$ = concat(
      interval(METRICS_PERIOD_MS, this.#scheduler).pipe(startWith(0), takeUntil(this.#closed)),
      of(0),
    ).pipe(map(() => this.metrics()));
  }

  /** The queue's `name` option. */
  get name(): string {
    return this.#name;
  }

  /**
   * Marks `item` as needing processing (client-go's `Add`). Ignored after
   * shutdown, and while the item already waits; an item being processed is
   * queued again when it is done.
   * @param item the item, compared as a Map key.
   */
  add(item: T): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.#metrics.add(item);
    this.#dirty.add(item);
    if (this.#processing.has(item)) return;
    this.#queue.push(item);
    this.#wake();
  }

  /**
   * Adds `item` after `delayMs` milliseconds on the queue's clock
   * (client-go's `AddAfter`). A delay of 0 or less adds at once. If the item
   * is already waiting, the earlier of the two times wins. Ignored after
   * shutdown; delayed items still waiting at shutdown are dropped.
   * @param item the item.
   * @param delayMs the delay in milliseconds.
   * @throws {TypeError} when `delayMs` is NaN, infinite or not a number.
   */
  addAfter(item: T, delayMs: number): void {
    delayArgument('WorkQueue.addAfter', 'delayMs', delayMs);
    if (this.#shuttingDown) return;
    this.#metrics.retry();
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    this.#delayed.schedule(item, delayMs);
  }

  /**
   * Adds `item` after the delay its rate limiter gives, counting one more
   * failure of it (client-go's `AddRateLimited`).
   * @param item the item.
   * @throws {TypeError} when the rate limiter returns something other than a finite number; whatever a custom rate limiter throws.
   */
  addRateLimited(item: T): void {
    const delayMs = this.#rateLimiter.when(item);
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs)) {
      throw new TypeError(`WorkQueue.addRateLimited: the rate limiter returned ${show(delayMs)}, not a finite number of milliseconds`);
    }
    this.addAfter(item, delayMs);
  }

  /**
   * Clears the failure count of `item` in the rate limiter, normally after it
   * was processed successfully. It does not mark the item done.
   * @param item the item.
   */
  forget(item: T): void {
    this.#rateLimiter.forget(item);
  }

  /**
   * How many failures of `item` the rate limiter remembers.
   * @param item the item.
   * @returns the count.
   */
  numRequeues(item: T): number {
    return this.#rateLimiter.numRequeues(item);
  }

  /**
   * Takes the next item, waiting while the queue is empty (client-go's
   * `Get`). The item counts as being processed until `done(item)`. After
   * shutdown the items queued before are still handed out; then, and for
   * every waiting caller at shutdown, the result is `{ shutdown: true }`.
   *
   * @param opts an AbortSignal that stops the wait.
   * @returns the item, or the shutdown.
   */
  get(opts: WorkQueueGetOptions = {}): Promise<WorkQueueGetResult<T>> {
    const signal = opts.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      return Promise.reject(new TypeError(`WorkQueue.get: option "signal" must be an AbortSignal, got ${show(signal)}`));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#queue.length > this.#head) return Promise.resolve({ shutdown: false, item: this.#take() });
    if (this.#shuttingDown) return Promise.resolve(SHUT_DOWN);
    return new Promise<WorkQueueGetResult<T>>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter<T> = { resolve, detach: () => signal?.removeEventListener('abort', onAbort) };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /**
   * Marks `item` as processed (client-go's `Done`). If it was added again
   * meanwhile it is queued now, even during shutdown. `done` of an item that
   * is not being processed changes nothing and is reported through `onError`.
   * @param item an item returned by `get()`.
   */
  done(item: T): void {
    if (!this.#processing.delete(item)) {
      this.#report(new Error(`WorkQueue.done: ${show(item)} is not being processed (done twice, or never taken by get)`));
      return;
    }
    this.#metrics.done(item);
    if (this.#dirty.has(item)) {
      this.#queue.push(item);
      this.#wake();
    }
    if (this.#processing.size === 0 && this.#drained !== undefined) this.#releaseDrain();
  }

  /** How many items wait to be taken (not counting items re-added while being processed), as client-go's `Len`. */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /**
   * Stops the queue (client-go's `ShutDown`): later adds are ignored,
   * delayed items are dropped and every timer is cancelled, waiting `get()`
   * calls resolve with `{ shutdown: true }`, and a pending
   * `shutDownWithDrain()` resolves at once. It does not wait for the items
   * being processed.
   */
  shutDown(): void {
    this.#shutDown();
    this.#releaseDrain();
  }

  /**
   * Stops the queue like `shutDown()`, then waits until every item being
   * processed is done (client-go's `ShutDownWithDrain`). Workers must call
   * `done` for what they hold, or this waits forever; a later `shutDown()`
   * ends the wait.
   * @returns a promise that resolves once nothing is being processed, or `shutDown()` was called.
   */
  shutDownWithDrain(): Promise<void> {
    this.#shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    if (this.#drained === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#drained = { promise, resolve };
    }
    return this.#drained.promise;
  }

  /** Whether `shutDown()` or `shutDownWithDrain()` was called. */
  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * The queue's metrics now; see {@link WorkQueueMetrics}.
   * @returns a snapshot.
   */
  metrics(): WorkQueueMetrics {
    return this.#metrics.snapshot(this.#dirty.size);
  }

  /**
   * The items as an ix async iterable, for `for await`: each item is marked
   * done when the loop body finishes with it, whether it completes, breaks
   * or throws. The iteration ends when the queue has shut down and is empty,
   * or when `signal` aborts (it then ends normally, without an error). Every
   * iterator is one worker: several loops over the queue share the work,
   * and never get the same item at once.
   *
   * ## Example
   * ```ts
   * import { workQueue } from 'rxkube';
   *
   * const queue = workQueue<string>({ name: 'pods' });
   * const stop = new AbortController();
   * for await (const key of queue.items({ signal: stop.signal })) {
   *   try {
   *     await reconcile(key);
   *     queue.forget(key);
   *   } catch {
   *     queue.addRateLimited(key);
   *   }
   * }
   * ```
   *
   * @param opts an AbortSignal that ends the iteration.
   * @returns an ix `AsyncIterableX`.
   */
  items(opts: WorkQueueItemsOptions = {}): AsyncIterableX<T> {
    return new QueueItems(this, opts);
  }

  /** `for await (const item of queue)`: the same as iterating `queue.items()`. */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.items()[Symbol.asyncIterator]();
  }

  /**
   * Runs `worker` over the items as an Observable of outcomes: subscribing
   * starts `concurrency` workers, unsubscribing stops taking items and aborts
   * the signal given to the workers still running (their items are still
   * marked done, and requeued if they fail). It follows client-go's worker
   * loop: a success forgets the item's failures, a failure puts it back
   * through `addRateLimited` (unless `requeue` is false), and the item is
   * marked done either way. A failing worker never ends the stream: the error
   * is in the outcome. The stream completes when the queue has shut down and
   * its workers found it empty.
   *
   * ## Example
   * ```ts
   * import { workQueue } from 'rxkube';
   *
   * const queue = workQueue<string>({ name: 'deployments' });
   * const run = queue.process(async (key, signal) => reconcile(key, signal), { concurrency: 4 }).subscribe((outcome) => {
   *   if (!outcome.ok) console.warn(`${outcome.item}: ${outcome.error.message}`);
   * });
   * ```
   *
   * @param worker processes one item; throw or reject to have it retried.
   * @param opts concurrency and what to do with failures.
   * @returns a cold Observable of {@link WorkOutcome}s.
   * @throws {TypeError} when `worker` is not a function or an option is invalid.
   */
  process(worker: WorkQueueWorker<T>, opts: WorkQueueProcessOptions = {}): Observable<WorkOutcome<T>> {
    return processItems(this, worker, opts, (err) => this.#report(err));
  }

  #take(): T {
    const item = this.#queue[this.#head] as T;
    this.#queue[this.#head++] = undefined as T; // let the item be collected
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#metrics.get(item);
    this.#processing.add(item);
    this.#dirty.delete(item);
    return item;
  }

  #wake(): void {
    while (this.#waiters.length > 0 && this.#queue.length > this.#head) {
      const waiter = this.#waiters.shift() as Waiter<T>;
      waiter.detach();
      waiter.resolve({ shutdown: false, item: this.#take() });
    }
  }

  #shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#delayed.clear();
    // Waiters exist only while the queue is empty, so each of them learns of the shutdown.
    for (const waiter of this.#waiters.splice(0)) {
      waiter.detach();
      waiter.resolve(SHUT_DOWN);
    }
    this.#closed.next();
    this.#closed.complete();
  }

  #releaseDrain(): void {
    const drained = this.#drained;
    this.#drained = undefined;
    drained?.resolve();
  }

  #report(err: Error): void {
    if (this.#onError === undefined) {
      reportError(err);
      return;
    }
    try {
      this.#onError(err);
    } catch (handlerErr) {
      reportError(toError(handlerErr));
      reportError(err);
    }
  }
}

/**
 * Creates a work queue: client-go's rate-limiting, delaying work queue in
 * one object, for controllers that must process each key (say
 * `'namespace/name'`) one at a time, however often it changes.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 *
 * const queue = workQueue<string>({ name: 'pods' });
 * pods.addHandler({ add: (pod) => queue.add(`${pod.metadata.namespace}/${pod.metadata.name}`) });
 *
 * queue.process(async (key) => {
 *   await reconcile(key); // throw to retry with backoff
 * }, { concurrency: 2 }).subscribe();
 *
 * process.on('SIGTERM', () => void queue.shutDownWithDrain());
 * ```
 *
 * @param opts name, clock, rate limiter and error sink.
 * @returns the queue.
 * @throws {TypeError} when an option is invalid or unknown.
 */
export function workQueue<T>(opts: WorkQueueOptions<T> = {}): WorkQueue<T> {
  return new WorkQueue<T>(opts);
}
