// The work queue: which items wait, which are being processed, and the
// public face of adding, taking and finishing them.

import type { AsyncIterableX } from 'ix/asynciterable';
import { AsyncSubject, firstValueFrom, Subject, type Observable } from 'rxjs';
import { reportTo } from '../errors/reportTo.js';
import { DelayedAdds } from './delayedAdds.js';
import { processItems, QueueItems } from './consume.js';
import { metricsEvery, QueueMetricsRecorder, type WorkQueueMetrics } from './metrics.js';
import { priorityOption } from './priority.js';
import { checkQueueOptions } from './queueOptions.js';
import type { RateLimiter } from './rateLimiters.js';
import { FairReadyQueue } from './fairReadyQueue.js';
import { ReadyQueue } from './readyQueue.js';
import { Waiters, type GetResult } from './waiters.js';
import type {
  WorkQueueAddOptions,
  WorkQueueGetOptions,
  WorkQueueItemsOptions,
  WorkQueueProcessOptions,
  WorkOutcome,
  WorkQueueOptions,
} from './types.js';
import { delayArgument, describeValue } from '../options/validate.js';

/**
 * client-go's work queue (util/workqueue), with its delaying and
 * rate-limiting layers in one object and controller-runtime's priorities.
 * Build it with {@link workQueue}.
 *
 * - An item waits at most once: adding it again before a worker takes it
 *   does nothing (but raise its priority). An item added while it is being
 *   processed is queued again only after `done(item)`, so no item is ever
 *   processed by two workers at once, and any number of adds during
 *   processing collapse into one more run.
 * - `get()` hands out items highest priority first (with `fairBy`, the
 *   groups in turn), and every item it returns must be given back with
 *   `done(item)`; `items()` and `process()` do that for you.
 * - `addAfter` and `addRateLimited` add later, `shutDown()` and
 *   `shutDownWithDrain()` stop the queue: each method states its rules, and
 *   docs/semantics.md "Work queue" all of them.
 *
 * Items are compared as Map keys (SameValueZero): strings such as
 * `'namespace/name'` in practice; objects by identity.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 * declare function reconcile(key: string): Promise<void>;
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
  // Decides the delay of addRateLimited and remembers failures per item.
  readonly #rateLimiter: RateLimiter<T>;
  // Where failures the queue meets on its own go; reportError when unset.
  readonly #onError: ((err: Error) => void) | undefined;
  // The items waiting for a worker (dirty and not being processed), by priority then arrival; with `fairBy`, by group in turn first.
  readonly #ready: ReadyQueue<T> | FairReadyQueue<T>;
  // Items added again while being processed, with the highest priority asked: queued at done().
  readonly #rerun = new Map<T, number>();
  // Items handed out by get() and not yet done().
  readonly #processing = new Set<T>();
  // Callers of get() waiting for work, first come first served.
  readonly #waiters: Waiters<T>;
  // Once set, adds are ignored and an empty queue answers get() with the shutdown.
  #shuttingDown = false;
  // Ends the waits of shutDownWithDrain(): the last done() or shutDown() emits.
  readonly #drained = new Subject<void>();
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
   * declare const gauge: { set(labels: { name: string }, value: number): void };
   *
   * const queue = workQueue<string>({ name: 'pods' });
   * queue.metrics$.subscribe((m) => gauge.set({ name: m.name }, m.depth));
   * ```
   */
  readonly metrics$: Observable<WorkQueueMetrics>;

  /** @internal Use {@link workQueue}. */
  constructor(opts: WorkQueueOptions<T>) {
    const { name, scheduler, rateLimiter, onError, fairBy } = checkQueueOptions(opts);
    this.#name = name;
    this.#rateLimiter = rateLimiter;
    this.#onError = onError;
    this.#ready = fairBy === undefined ? new ReadyQueue<T>() : new FairReadyQueue<T>(fairBy, (err) => reportTo(this.#onError, err));
    this.#delayed = new DelayedAdds<T>(scheduler, (item, priority) => this.#add(item, priority));
    this.#waiters = new Waiters<T>(scheduler, {
      size: () => this.#ready.size,
      take: () => this.#take(),
      shuttingDown: () => this.#shuttingDown,
    });
    this.#metrics = new QueueMetricsRecorder<T>(name, () => scheduler.now());
    this.metrics$ = metricsEvery(scheduler, this.#closed, () => this.metrics());
  }

  /** The queue's `name` option. */
  get name(): string {
    return this.#name;
  }

  /**
   * Marks `item` as needing processing (client-go's `Add`). Ignored after
   * shutdown, and while the item already waits, except that a higher
   * priority raises it; an item being processed is queued again when it is
   * done, at the highest priority it was added with meanwhile.
   * @param item the item, compared as a Map key.
   * @param opts the priority, higher first.
   * @throws {TypeError} when the priority is not a finite number.
   */
  add(item: T, opts?: WorkQueueAddOptions): void {
    this.#add(item, priorityOption('WorkQueue.add', opts));
  }

  /**
   * Adds `item` after `delayMs` milliseconds on the queue's clock
   * (client-go's `AddAfter`). A delay of 0 or less adds at once. If the item
   * is already scheduled, the earlier of the two times and the higher of the
   * two priorities win. If it already waits to run (ready, or added again
   * while being processed), the delay is moot: it runs sooner anyway, and
   * its priority is raised if this one is higher. Ignored after shutdown;
   * delayed items still waiting at shutdown are dropped.
   * @param item the item.
   * @param delayMs the delay in milliseconds.
   * @param opts the priority it becomes ready at.
   * @throws {TypeError} when `delayMs` is NaN, infinite or not a number, or the priority is not a finite number.
   */
  addAfter(item: T, delayMs: number, opts?: WorkQueueAddOptions): void {
    delayArgument('WorkQueue.addAfter', 'delayMs', delayMs);
    const priority = priorityOption('WorkQueue.addAfter', opts);
    if (this.#shuttingDown) return;
    this.#metrics.retry();
    if (delayMs <= 0 || this.#ready.has(item) || this.#rerun.has(item)) {
      this.#add(item, priority);
      return;
    }
    this.#delayed.schedule(item, delayMs, priority);
  }

  /**
   * Adds `item` after the delay its rate limiter gives, counting one more
   * failure of it (client-go's `AddRateLimited`), with `addAfter`'s rules.
   * @param item the item.
   * @param opts the priority it becomes ready at.
   * @throws {TypeError} when the rate limiter returns something other than a finite number, or the priority is not a finite number; whatever a custom rate limiter throws.
   */
  addRateLimited(item: T, opts?: WorkQueueAddOptions): void {
    priorityOption('WorkQueue.addRateLimited', opts);
    const delayMs = this.#rateLimiter.when(item);
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs)) {
      throw new TypeError(`WorkQueue.addRateLimited: the rate limiter returned ${describeValue(delayMs)}, not a finite number of milliseconds`);
    }
    this.addAfter(item, delayMs, opts);
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
   * Takes the next item, highest priority first, waiting while the queue is
   * empty (client-go's `Get`). The item counts as being processed until
   * `done(item)`; a delayed entry it had is dropped. After shutdown the
   * items queued before are still handed out; then, and for every waiting
   * caller at shutdown, the result is `{ shutdown: true }`. After about 5 ms
   * of items handed out without a turn of the event loop (or 1000 items),
   * the next one comes after a `setImmediate`.
   *
   * @param opts an AbortSignal that stops the wait.
   * @returns the item to process with the priority it waited at, or the news that the queue shut down and is empty.
   */
  get(
    opts: WorkQueueGetOptions = {},
  ): Promise<
    | { readonly shutdown: false; readonly item: T; readonly priority: number }
    | { readonly shutdown: true; readonly item?: undefined; readonly priority?: undefined }
  > {
    const signal = opts.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      return Promise.reject(new TypeError(`WorkQueue.get: option "signal" must be an AbortSignal, got ${describeValue(signal)}`));
    }
    return this.#waiters.get(signal);
  }

  /**
   * Marks `item` as processed (client-go's `Done`). If it was added again
   * meanwhile it is queued now, even during shutdown. `done` of an item that
   * is not being processed changes nothing and is reported through `onError`.
   * @param item an item returned by `get()`.
   */
  done(item: T): void {
    if (!this.#processing.delete(item)) {
      reportTo(this.#onError, new Error(`WorkQueue.done: ${describeValue(item)} is not being processed (done twice, or never taken by get)`));
      return;
    }
    this.#metrics.done(item);
    const priority = this.#rerun.get(item);
    if (priority !== undefined) {
      this.#rerun.delete(item);
      this.#ready.push(item, priority);
      this.#waiters.wake();
    }
    // Only a drain waits to hear that nothing is being processed.
    if (this.#processing.size === 0 && this.#shuttingDown) this.#drained.next();
  }

  /** How many items wait to be taken (not counting items re-added while being processed), as client-go's `Len`. */
  len(): number {
    return this.#ready.size;
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
    this.#drained.next();
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
    return this.#processing.size === 0 ? Promise.resolve() : firstValueFrom(this.#drained);
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
    const m = this.#metrics.snapshot(this.#ready.size + this.#rerun.size);
    if (!(this.#ready instanceof FairReadyQueue)) return m;
    // Items re-added while processed count as waiting, as in `depth`: the groups sum to it.
    return { ...m, depthByGroup: Object.fromEntries(this.#ready.depths()) };
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
   * declare function reconcile(key: string): Promise<void>;
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
   * declare function reconcile(key: string, signal: AbortSignal): Promise<void>;
   *
   * const queue = workQueue<string>({ name: 'deployments' });
   * const run = queue.process(async (key, signal) => reconcile(key, signal), { concurrency: 4 }).subscribe((outcome) => {
   *   if (!outcome.ok) console.warn(`${outcome.item}: ${outcome.error.message}`);
   * });
   * ```
   *
   * @param worker processes one item; throw or reject to have it retried. Its signal aborts when the subscription ends.
   * @param opts concurrency and what to do with failures.
   * @returns a cold Observable of {@link WorkOutcome}s.
   * @throws {TypeError} when `worker` is not a function or an option is invalid.
   */
  process(worker: (item: T, signal: AbortSignal) => unknown, opts: WorkQueueProcessOptions = {}): Observable<WorkOutcome<T>> {
    return processItems(this, worker, opts, (err) => reportTo(this.#onError, err));
  }

  #add(item: T, priority: number): void {
    if (this.#shuttingDown) return;
    if (this.#processing.has(item)) {
      const asked = this.#rerun.get(item);
      if (asked === undefined) {
        this.#metrics.add(item);
        this.#rerun.set(item, priority);
        if (this.#ready instanceof FairReadyQueue) this.#ready.hold(item);
      } else if (priority > asked) {
        this.#rerun.set(item, priority);
      }
      return;
    }
    if (this.#ready.push(item, priority) !== 'added') return;
    this.#metrics.add(item);
    this.#waiters.wake();
  }

  /** Hands out the first ready item (the caller checked there is one). */
  #take(): GetResult<T> {
    const { item, priority } = this.#ready.shift() as { item: T; priority: number };
    this.#metrics.get(item);
    this.#processing.add(item);
    // One schedule per item: the run that starts now supersedes it and leaves its own.
    this.#delayed.cancel(item);
    return { shutdown: false, item, priority };
  }

  #shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#delayed.clear();
    // Waiters of an empty queue learn of the shutdown now; those deferred behind ready items get the items first.
    this.#waiters.wake();
    this.#closed.next();
    this.#closed.complete();
  }
}

/**
 * Creates a work queue: client-go's rate-limiting, delaying work queue in
 * one object, for controllers that must process each key (say
 * `'namespace/name'`) one at a time, however often it changes.
 *
 * ## Example
 * ```ts
 * import { metaNamespaceKey, workQueue, type Informer } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 * declare function reconcile(key: string): Promise<void>;
 *
 * const queue = workQueue<string>({ name: 'pods' });
 * pods.addHandler({ add: (pod) => queue.add(metaNamespaceKey(pod)) });
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
