import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { checkOptionNames, numberOption, schedulerOption, describeValue, optionNames } from '../options/validate.js';

/**
 * Decides how long an item waits before it is retried, and remembers failures
 * per item until told to forget them. Every rate limiter of rxkube has this
 * shape, and so can yours: a work queue only calls these three methods.
 *
 * ## Example
 * ```ts
 * import { workQueue, type RateLimiter } from 'rxkube';
 *
 * // Retry every item after a fixed second, however often it failed.
 * const counts = new Map<string, number>();
 * const everySecond: RateLimiter<string> = {
 *   when: (item) => (counts.set(item, (counts.get(item) ?? 0) + 1), 1_000),
 *   forget: (item) => void counts.delete(item),
 *   numRequeues: (item) => counts.get(item) ?? 0,
 * };
 * const queue = workQueue<string>({ rateLimiter: everySecond });
 * ```
 */
export interface RateLimiter<T> {
  /** Records one more failure of `item` and returns its delay in milliseconds (0 or less: at once). */
  when(item: T): number;
  /** Clears what is remembered about `item`, normally after it was processed successfully. */
  forget(item: T): void;
  /** How many failures of `item` are remembered. */
  numRequeues(item: T): number;
}

/** Options of {@link itemExponentialFailureRateLimiter}. */
export interface ItemExponentialFailureRateLimiterOptions {
  /** Delay after the first failure, in milliseconds; it doubles with every further one. @default 5 */
  readonly baseDelayMs?: number;
  /** The delay never exceeds this, in milliseconds. @default 1_000_000 (1000 s) */
  readonly maxDelayMs?: number;
}

/**
 * Per-item exponential backoff: an item's n-th failure (counting from 0)
 * waits `baseDelayMs · 2ⁿ`, capped at `maxDelayMs`, as client-go's
 * `ItemExponentialFailureRateLimiter`. With the defaults the delays run
 * 5 ms, 10 ms, 20 ms, … 655.36 s, then 1000 s from the 19th failure on. A
 * delay too large to represent is the maximum, never a wrap-around.
 * Items do not affect each other; `forget(item)` starts an item over.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 * import { itemExponentialFailureRateLimiter } from 'rxkube/core';
 *
 * const queue = workQueue<string>({ rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 100, maxDelayMs: 60_000 }) });
 * ```
 *
 * @param opts base and maximum delay.
 * @returns the rate limiter.
 * @throws {TypeError} when an option is not a finite number >= 0.
 */
export function itemExponentialFailureRateLimiter<T>(opts: ItemExponentialFailureRateLimiterOptions = {}): RateLimiter<T> {
  const where = 'itemExponentialFailureRateLimiter';
  const o = checkOptionNames(where, opts, optionNames<ItemExponentialFailureRateLimiterOptions>({ baseDelayMs: true, maxDelayMs: true }));
  const baseDelayMs = numberOption(where, 'baseDelayMs', o['baseDelayMs'], 5);
  const maxDelayMs = numberOption(where, 'maxDelayMs', o['maxDelayMs'], 1_000_000);
  return perItem((n) => {
    // 2 ** n becomes Infinity long before n itself is a problem, so the cap also catches overflow.
    const delay = baseDelayMs * 2 ** n;
    return Number.isFinite(delay) && delay <= maxDelayMs ? delay : maxDelayMs;
  });
}

/** A rate limiter whose delay depends only on how often the item failed since it was last forgotten (`n`, from 0). */
function perItem<T>(delayOf: (n: number) => number): RateLimiter<T> {
  const failures = new Map<T, number>();
  return {
    when(item) {
      const n = failures.get(item) ?? 0;
      failures.set(item, n + 1);
      return delayOf(n);
    },
    forget: (item) => void failures.delete(item),
    numRequeues: (item) => failures.get(item) ?? 0,
  };
}

/** Options of {@link itemFastSlowRateLimiter}. */
export interface ItemFastSlowRateLimiterOptions {
  /** Delay of the first `maxFastAttempts` failures, in milliseconds. */
  readonly fastDelayMs: number;
  /** Delay of every later failure, in milliseconds. */
  readonly slowDelayMs: number;
  /** How many failures of an item get the fast delay. */
  readonly maxFastAttempts: number;
}

/**
 * Retries an item quickly a few times, then slowly, as client-go's
 * `ItemFastSlowRateLimiter`: failures 1…`maxFastAttempts` of an item wait
 * `fastDelayMs`, later ones `slowDelayMs`, until the item is forgotten.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 * import { itemFastSlowRateLimiter } from 'rxkube/core';
 *
 * // Three quick retries 100 ms apart, then one a minute.
 * const queue = workQueue<string>({
 *   rateLimiter: itemFastSlowRateLimiter({ fastDelayMs: 100, slowDelayMs: 60_000, maxFastAttempts: 3 }),
 * });
 * ```
 *
 * @param opts the two delays and the number of fast attempts (all required).
 * @returns the rate limiter.
 * @throws {TypeError} when an option is missing or not a finite number >= 0 (an integer for `maxFastAttempts`).
 */
export function itemFastSlowRateLimiter<T>(opts: ItemFastSlowRateLimiterOptions): RateLimiter<T> {
  const where = 'itemFastSlowRateLimiter';
  const o = checkOptionNames(where, opts, optionNames<ItemFastSlowRateLimiterOptions>({ fastDelayMs: true, slowDelayMs: true, maxFastAttempts: true }));
  const fastDelayMs = numberOption(where, 'fastDelayMs', o['fastDelayMs'], NaN);
  const slowDelayMs = numberOption(where, 'slowDelayMs', o['slowDelayMs'], NaN);
  const maxFastAttempts = numberOption(where, 'maxFastAttempts', o['maxFastAttempts'], NaN, { integer: true });
  for (const [name, value] of [['fastDelayMs', fastDelayMs], ['slowDelayMs', slowDelayMs], ['maxFastAttempts', maxFastAttempts]] as const) {
    if (Number.isNaN(value)) throw new TypeError(`${where}: option "${name}" is required, got undefined`);
  }
  // The n-th failure, from 0, is among the first maxFastAttempts while n < maxFastAttempts.
  return perItem((n) => (n < maxFastAttempts ? fastDelayMs : slowDelayMs));
}

/** Options of {@link bucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /** Tokens added per second; `Infinity` never delays. @default 10 */
  readonly qps?: number;
  /** Size of the bucket, which starts full: this many calls in a burst are not delayed. @default 100 */
  readonly burst?: number;
  /** The clock, read through its `now()`. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/**
 * An overall token bucket shared by all items, as client-go's
 * `BucketRateLimiter` over golang.org/x/time/rate: the bucket holds `burst`
 * tokens and refills at `qps` per second; every `when()` call, whatever the
 * item, takes one token, and when none is left it reserves the next one, so
 * with no time passing the calls after the burst wait 100 ms, 200 ms, … at
 * 10 qps. It remembers nothing per item: `numRequeues` is always 0 and
 * `forget` does nothing.
 *
 * Unlike client-go, which reads the wall clock here even when its queue has
 * a fake clock, the bucket reads the injected scheduler's `now()`, so tests
 * on virtual time are exact.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 * import { bucketRateLimiter } from 'rxkube/core';
 *
 * // At most 50 retries per second overall, 300 at once.
 * const queue = workQueue<string>({ rateLimiter: bucketRateLimiter({ qps: 50, burst: 300 }) });
 * ```
 *
 * @param opts rate, burst and clock.
 * @returns the rate limiter.
 * @throws {TypeError} when `qps` is not a number > 0, `burst` not an integer >= 1, or `scheduler` not a scheduler.
 */
export function bucketRateLimiter<T>(opts: BucketRateLimiterOptions = {}): RateLimiter<T> {
  const where = 'bucketRateLimiter';
  const o = checkOptionNames(where, opts, optionNames<BucketRateLimiterOptions>({ qps: true, burst: true, scheduler: true }));
  const qps = numberOption(where, 'qps', o['qps'], 10, { min: Number.MIN_VALUE, finite: false });
  const burst = numberOption(where, 'burst', o['burst'], 100, { min: 1, integer: true });
  const scheduler = schedulerOption(where, o['scheduler'], asyncScheduler);
  // Tokens left, negative when calls have reserved tokens not yet refilled; starts full.
  let tokens = burst;
  // When tokens was last brought up to date.
  let last = scheduler.now();
  return {
    when() {
      if (qps === Infinity) return 0;
      const now = scheduler.now();
      // A clock that went backwards refills nothing, as x/time/rate does.
      const elapsedMs = Math.max(0, now - last);
      tokens = Math.min(burst, tokens + (elapsedMs * qps) / 1000);
      last = now;
      tokens -= 1;
      return tokens >= 0 ? 0 : (-tokens * 1000) / qps;
    },
    forget: () => undefined,
    numRequeues: () => 0,
  };
}

/**
 * Combines rate limiters: the delay is the longest any of them gives, as
 * client-go's `MaxOfRateLimiter`. Every limiter is asked each time, so each
 * counts every failure; `numRequeues` is the largest count and `forget`
 * reaches all of them.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 * import { bucketRateLimiter, itemExponentialFailureRateLimiter, maxOfRateLimiter } from 'rxkube/core';
 *
 * const queue = workQueue<string>({
 *   rateLimiter: maxOfRateLimiter(itemExponentialFailureRateLimiter({ baseDelayMs: 50 }), bucketRateLimiter({ qps: 5, burst: 20 })),
 * });
 * ```
 *
 * @param limiters one or more rate limiters.
 * @returns the combined rate limiter.
 * @throws {TypeError} when no limiter is given or one is not a {@link RateLimiter}.
 */
export function maxOfRateLimiter<T>(...limiters: readonly RateLimiter<T>[]): RateLimiter<T> {
  if (limiters.length === 0) throw new TypeError('maxOfRateLimiter: at least one rate limiter is required');
  limiters.forEach((limiter, i) => checkRateLimiter('maxOfRateLimiter', `limiters[${i}]`, limiter));
  return {
    when: (item) => Math.max(0, ...limiters.map((limiter) => limiter.when(item))),
    forget: (item) => limiters.forEach((limiter) => limiter.forget(item)),
    numRequeues: (item) => Math.max(0, ...limiters.map((limiter) => limiter.numRequeues(item))),
  };
}

/**
 * Caps the delay of another rate limiter at `maxDelayMs`, as client-go's
 * `WithMaxWaitRateLimiter`; `forget` and `numRequeues` pass through.
 *
 * ## Example
 * ```ts
 * import { defaultControllerRateLimiter, workQueue } from 'rxkube';
 * import { withMaxWaitRateLimiter } from 'rxkube/core';
 *
 * // The default backoff, but never more than five minutes.
 * const queue = workQueue<string>({ rateLimiter: withMaxWaitRateLimiter(defaultControllerRateLimiter(), 300_000) });
 * ```
 *
 * @param limiter the rate limiter to cap.
 * @param maxDelayMs the longest delay, in milliseconds.
 * @returns the capped rate limiter.
 * @throws {TypeError} when `limiter` is not a {@link RateLimiter} or `maxDelayMs` not a finite number >= 0.
 */
export function withMaxWaitRateLimiter<T>(limiter: RateLimiter<T>, maxDelayMs: number): RateLimiter<T> {
  checkRateLimiter('withMaxWaitRateLimiter', 'limiter', limiter);
  if (typeof maxDelayMs !== 'number' || !Number.isFinite(maxDelayMs) || maxDelayMs < 0) {
    throw new TypeError(`withMaxWaitRateLimiter: maxDelayMs must be a finite number >= 0, got ${describeValue(maxDelayMs)}`);
  }
  return {
    when: (item) => Math.min(limiter.when(item), maxDelayMs),
    forget: (item) => limiter.forget(item),
    numRequeues: (item) => limiter.numRequeues(item),
  };
}

/** Options of {@link defaultControllerRateLimiter}. */
export interface DefaultControllerRateLimiterOptions {
  /** The clock of the token bucket. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/**
 * The rate limiter a work queue uses unless told otherwise, as client-go's
 * `DefaultControllerRateLimiter`: the longer of per-item exponential backoff
 * (5 ms doubling up to 1000 s) and an overall bucket of 10 qps with a burst
 * of 100. One item failing over and over backs off on its own; many items
 * failing at once are held to 10 retries a second after the first 100.
 *
 * ## Example
 * ```ts
 * import { defaultControllerRateLimiter, workQueue } from 'rxkube';
 *
 * const queue = workQueue<string>({ rateLimiter: defaultControllerRateLimiter() });
 * ```
 *
 * @param opts the clock of the bucket.
 * @returns the rate limiter.
 * @throws {TypeError} when `scheduler` is not a scheduler.
 */
export function defaultControllerRateLimiter<T>(opts: DefaultControllerRateLimiterOptions = {}): RateLimiter<T> {
  const o = checkOptionNames('defaultControllerRateLimiter', opts, optionNames<DefaultControllerRateLimiterOptions>({ scheduler: true }));
  const scheduler = schedulerOption('defaultControllerRateLimiter', o['scheduler'], asyncScheduler);
  return maxOfRateLimiter<T>(
    itemExponentialFailureRateLimiter({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    bucketRateLimiter({ qps: 10, burst: 100, scheduler }),
  );
}

/**
 * Per-item exponential backoff from 1 ms up to 1000 s, as client-go's
 * `DefaultItemBasedRateLimiter`: no overall limit.
 *
 * ## Example
 * ```ts
 * import { workQueue } from 'rxkube';
 * import { defaultItemBasedRateLimiter } from 'rxkube/core';
 *
 * const queue = workQueue<string>({ rateLimiter: defaultItemBasedRateLimiter() });
 * ```
 *
 * @returns the rate limiter.
 */
export function defaultItemBasedRateLimiter<T>(): RateLimiter<T> {
  return itemExponentialFailureRateLimiter<T>({ baseDelayMs: 1, maxDelayMs: 1_000_000 });
}

/** Throws unless `value` has the three methods of a {@link RateLimiter}. */
export function checkRateLimiter(where: string, name: string, value: unknown): void {
  const l = value as Record<keyof RateLimiter<unknown>, unknown> | null;
  if (typeof value !== 'object' || l === null || (['when', 'forget', 'numRequeues'] as const).some((m) => typeof l[m] !== 'function')) {
    throw new TypeError(`${where}: ${name} must be a RateLimiter (when, forget, numRequeues), got ${describeValue(value)}`);
  }
}
