// The options of workQueue(), checked up front and with their defaults filled
// in, so the queue's constructor only wires its parts. Internal.

import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { checkRateLimiter, defaultControllerRateLimiter, type RateLimiter } from './rateLimiters.js';
import type { WorkQueueOptions } from './types.js';
import { checkOptionNames, describeValue, functionOption, optionNames, schedulerOption } from '../options/validate.js';

/** A work queue's options once checked, defaults filled in. */
export interface CheckedQueueOptions<T> {
  readonly name: string;
  readonly scheduler: SchedulerLike;
  readonly rateLimiter: RateLimiter<T>;
  readonly onError: ((err: Error) => void) | undefined;
  readonly fairBy: ((item: T) => string) | undefined;
}

/** Checks workQueue()'s options in the order it always has; throws a TypeError naming the bad or unknown option. */
export function checkQueueOptions<T>(opts: WorkQueueOptions<T>): CheckedQueueOptions<T> {
  const where = 'workQueue';
  const o = checkOptionNames(where, opts, optionNames<WorkQueueOptions<unknown>>({ name: true, scheduler: true, rateLimiter: true, onError: true, fairBy: true }));
  const name = o['name'] ?? '';
  if (typeof name !== 'string') throw new TypeError(`${where}: option "name" must be a string, got ${describeValue(name)}`);
  // Reads the clock and runs the timers, so virtual time drives the queue exactly.
  const scheduler = schedulerOption(where, o['scheduler'], asyncScheduler);
  if (o['rateLimiter'] !== undefined) checkRateLimiter(where, 'option "rateLimiter"', o['rateLimiter']);
  const rateLimiter = (o['rateLimiter'] as RateLimiter<T> | undefined) ?? defaultControllerRateLimiter<T>({ scheduler: scheduler });
  const onError = functionOption<(err: Error) => void>(where, 'onError', o['onError']);
  const fairBy = functionOption<(item: T) => string>(where, 'fairBy', o['fairBy']);
  return { name, scheduler, rateLimiter, onError, fairBy };
}
