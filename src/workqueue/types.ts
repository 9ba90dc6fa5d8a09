import type { SchedulerLike } from 'rxjs';
import type { RateLimiter } from './rateLimiters.js';

/** Options of {@link workQueue}. */
export interface WorkQueueOptions<T> {
  /** The queue's name, carried by its metrics. @default '' */
  readonly name?: string;
  /** The clock and timers of delayed adds, rate limiting and metrics. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /**
   * Decides the delay of `addRateLimited`.
   * @default defaultControllerRateLimiter({ scheduler }): the longer of 5 ms doubling per failure up to 1000 s and a 10 qps bucket with a burst of 100
   */
  readonly rateLimiter?: RateLimiter<T>;
  /** Receives failures the queue meets on its own (a rate limiter throwing inside `process`, `done` of an item not being processed). @default reportError */
  readonly onError?: (err: Error) => void;
  /**
   * Groups items for fairness: while several groups have items waiting,
   * `get()` serves them in turn, one item per group per round (each group's
   * highest priority first), so one group's backlog cannot starve another's
   * (docs/semantics.md LT-1). Called once each time an item starts waiting;
   * what it throws is reported and the item waits in the group `''`.
   * @default undefined (one line for every item)
   */
  readonly fairBy?: (item: T) => string;
}

/**
 * Options of `WorkQueue.add`, `WorkQueue.addAfter` and
 * `WorkQueue.addRateLimited`.
 *
 * ## Example
 * ```ts
 * import { LOW_PRIORITY, workQueue } from 'rxkube';
 * import { type WorkQueueAddOptions } from 'rxkube/core';
 *
 * const queue = workQueue<string>();
 * const backlog: WorkQueueAddOptions = { priority: LOW_PRIORITY };
 * queue.add('default/old', backlog);
 * queue.add('default/changed'); // handed out first
 * ```
 */
export interface WorkQueueAddOptions {
  /**
   * Higher is handed out first; items of one priority go first in, first
   * out. Adding an item that already waits can raise its priority, never
   * lower it. Any finite number; `LOW_PRIORITY` is controller-runtime's
   * priority for the initial list and resyncs.
   * @default 0
   */
  readonly priority?: number;
}

/** Options of `WorkQueue.get`. */
export interface WorkQueueGetOptions {
  /** Stops waiting: the promise rejects with the signal's reason. @default none */
  readonly signal?: AbortSignal;
}

/** Options of `WorkQueue.items`. */
export interface WorkQueueItemsOptions {
  /** Ends the iteration: a pending wait returns `done`, and the item in hand is marked done. @default none */
  readonly signal?: AbortSignal;
}

/** Options of `WorkQueue.process`. */
export interface WorkQueueProcessOptions {
  /** How many items are processed at once; never two with the same value. @default 1 */
  readonly concurrency?: number;
  /**
   * What happens to an item whose worker threw or rejected: `true` puts it
   * back through `addRateLimited` (client-go's usual worker loop); `false`
   * forgets it. A success always forgets the item's failures.
   * @default true
   */
  readonly requeue?: boolean;
}

/** What became of one item handed to a worker by `WorkQueue.process`. */
export type WorkOutcome<T> =
  | { readonly item: T; readonly ok: true }
  | {
      readonly item: T;
      readonly ok: false;
      /** What the worker threw or rejected with. */
      readonly error: Error;
      /** Whether the item went back through `addRateLimited` (not when `requeue` is false or the queue is shutting down). */
      readonly requeued: boolean;
    };
