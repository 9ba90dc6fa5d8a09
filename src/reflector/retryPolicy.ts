/**
 * How long reflect() waits before its next request, by kind of failure.
 *
 * Two families. Faults that the next request fixes (a watch that closed early,
 * a line that would not parse, a 410 that calls for a relist, a stall, a
 * streaming list cut short) are retried at once, with a few tens of
 * milliseconds of jitter; only when the same kind repeats does its own
 * exponential backoff grow, so a watch that closes, then 410s, then relists
 * waits three jitters rather than a growing sum. Faults of the server's health
 * (5xx, refused or reset connections, 429 without Retry-After, 401/403/404 and
 * anything unknown) share client-go's one backoff: 800 ms × 2 up to 30 s with
 * full jitter, started over after a healthy period or a healthy watch
 * (HI-52). A 429 or 5xx with Retry-After waits what the server asked, within
 * [initialMs, maxMs] (HI-50, HI-51).
 */
import { Backoff, type BackoffOptions } from './backoff.js';
import type { RetryKind } from './types.js';

/** Largest jitter of a first, immediate retry, in milliseconds. */
export const IMMEDIATE_JITTER_MS = 50;

/** One kind's streak: immediate first, then the backoff sequence while it keeps repeating. */
class Streak {
  /** The sequence the second and later retries follow. */
  readonly #backoff: Backoff;
  /** The streak ends after this long without a retry of its kind. */
  readonly #resetAfterMs: number;
  /** Ceiling of the first retry's jitter. */
  readonly #jitterMs: number;
  /** Clock in milliseconds. */
  readonly #now: () => number;
  /** Jitter source. */
  readonly #random: () => number;
  /** Retries in the current streak. */
  #count = 0;
  /** When the last retry's wait ends; the streak is judged from there. */
  #lastEnd = 0;

  constructor(opts: BackoffOptions, now: () => number, random: () => number) {
    this.#backoff = new Backoff(opts, now, random);
    this.#resetAfterMs = opts.resetAfterMs;
    this.#jitterMs = Math.min(IMMEDIATE_JITTER_MS, opts.initialMs);
    this.#now = now;
    this.#random = random;
  }

  next(): number {
    const now = this.#now();
    if (this.#count > 0 && this.#resetAfterMs > 0 && now - this.#lastEnd > this.#resetAfterMs) this.reset();
    const delay = this.#count === 0 ? unit(this.#random()) * this.#jitterMs : this.#backoff.next();
    this.#count += 1;
    this.#lastEnd = now + delay;
    return delay;
  }

  reset(): void {
    this.#count = 0;
    this.#backoff.reset();
  }
}

function unit(r: number): number {
  return Number.isFinite(r) ? Math.min(Math.max(r, 0), 0.999_999) : 0;
}

/** The delays of one reflect() subscription. */
export class RetryPolicy {
  /** Tuning shared by every sequence. */
  readonly #opts: BackoffOptions;
  /** Clock in milliseconds (the scheduler's, so virtual time works). */
  readonly #now: () => number;
  /** Jitter source. */
  readonly #random: () => number;
  /** client-go's shared backoff, for every failure of the server's health. */
  readonly #health: Backoff;
  /** One streak per kind of fault a new request fixes, created on first use. */
  readonly #streaks = new Map<RetryKind, Streak>();

  constructor(opts: BackoffOptions, now: () => number, random: () => number) {
    this.#opts = opts;
    this.#now = now;
    this.#random = random;
    this.#health = new Backoff(opts, now, random);
  }

  /**
   * The wait before retrying after a failure of this kind; advances that kind's sequence.
   *
   * A server's Retry-After replaces the sequence (and does not advance it), but
   * is kept within [initialMs, maxMs]: a day-long Retry-After would park the
   * informer long after the server recovered, and a zero one repeated would
   * make a tight loop (HI-50).
   *
   * @param kind what failed
   * @param retryAfterMs what the server asked for (429 or 5xx with Retry-After)
   * @returns milliseconds to wait
   */
  delay(kind: RetryKind, retryAfterMs?: number): number {
    if (retryAfterMs !== undefined) return Math.min(Math.max(retryAfterMs, this.#opts.initialMs), this.#opts.maxMs);
    if (kind === 'server' || kind === 'throttled') return this.#health.next();
    let streak = this.#streaks.get(kind);
    if (streak === undefined) {
      streak = new Streak(this.#opts, this.#now, this.#random);
      this.#streaks.set(kind, streak);
    }
    return streak.next();
  }

  /**
   * A watch proved healthy: every fault a new request fixes is immediate
   * again, and the health backoff starts over, so faults that come every
   * minute or so each cost a first delay, not a growing one (HI-52).
   */
  healthy(): void {
    for (const streak of this.#streaks.values()) streak.reset();
    this.#health.reset();
  }
}
