import { describeValue } from '../options/validate.js';
/**
 * Exponential backoff with jitter and a reset after a healthy period: the
 * delay function shared by the reflector's retries (and, later, the work
 * queue's requeues).
 */

/** Tuning of an exponential backoff. */
export interface BackoffOptions {
  /** First delay, in milliseconds. @default 800 */
  readonly initialMs: number;
  /** Multiplier applied after every delay. @default 2 */
  readonly factor: number;
  /** Largest base delay, in milliseconds. @default 30_000 */
  readonly maxMs: number;
  /** Each delay is `base + random() · jitter · base`, so 1.0 gives [base, 2·base). 0 turns jitter off. @default 1.0 */
  readonly jitter: number;
  /** Start again from `initialMs` after this long without a delay being asked for (0: never reset). @default 120_000 */
  readonly resetAfterMs: number;
}

/** client-go's reflector backoff: 800 ms, ×2, capped at 30 s, full jitter, reset after 2 minutes of health. */
export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({
  initialMs: 800,
  factor: 2,
  maxMs: 30_000,
  jitter: 1.0,
  resetAfterMs: 120_000,
});

function isNonNegativeFinite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}


/**
 * Checks partial backoff options and fills in the defaults.
 *
 * @param value the options as given by a caller (may be undefined)
 * @param name the option's name, used in error messages (`backoff`)
 * @returns complete, frozen options
 * @throws TypeError naming the offending field and its value
 */
export function resolveBackoffOptions(value: unknown, name = 'backoff'): BackoffOptions {
  if (value === undefined) return DEFAULT_BACKOFF;
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`${name} must be an object, got ${describeValue(value)}`);
  }
  const given = value as Partial<Record<keyof BackoffOptions, unknown>>;
  const pick = (key: keyof BackoffOptions): number => {
    const v = given[key];
    if (v === undefined) return DEFAULT_BACKOFF[key];
    if (!isNonNegativeFinite(v)) {
      throw new TypeError(`${name}.${key} must be a finite number >= 0, got ${describeValue(v)}`);
    }
    return v;
  };
  const keys = Object.keys(DEFAULT_BACKOFF) as (keyof BackoffOptions)[];
  const resolved = Object.fromEntries(keys.map((key) => [key, pick(key)])) as unknown as BackoffOptions;
  if (resolved.initialMs <= 0) throw new TypeError(`${name}.initialMs must be > 0, got ${resolved.initialMs}`);
  if (resolved.factor < 1) throw new TypeError(`${name}.factor must be >= 1, got ${resolved.factor}`);
  if (resolved.maxMs < resolved.initialMs) {
    throw new TypeError(`${name}.maxMs must be >= ${name}.initialMs (${resolved.initialMs}), got ${resolved.maxMs}`);
  }
  return Object.freeze(resolved);
}

/**
 * A stateful delay sequence: `next()` returns 0.8 s, 1.6 s, 3.2 s … capped at
 * `maxMs`, each stretched by jitter, and starts over once no delay has been
 * asked for during `resetAfterMs` after the previous delay ended.
 *
 * The reset is idle-based (client-go ≤ v0.35's backoff manager) rather than
 * client-go v0.36's periodic reset: a caller that keeps failing stays at the
 * cap instead of dropping back to 0.8 s every two minutes.
 *
 * Internal, shared by reflect() and the work queue (not exported, so no
 * `## Example`): `new Backoff({ initialMs: 100, maxMs: 5_000 }, () => scheduler.now())`,
 * then each `next()` gives a delay, the first in [100, 200) with the default
 * full jitter.
 */
export class Backoff {
  /** Frozen tuning; copied so a caller cannot change it mid-sequence. */
  readonly #opts: BackoffOptions;
  /** Clock in milliseconds (a scheduler's `now`, so virtual time works). */
  readonly #now: () => number;
  /** Jitter source, injectable for deterministic tests. */
  readonly #random: () => number;
  /** Base delay the next call will stretch by jitter. */
  #base: number;
  /** Number of delays handed out since the last reset. */
  #attempts = 0;
  /** When the last delay ends; health is measured from there. */
  #lastDelayEnd: number | undefined;

  constructor(opts: Partial<BackoffOptions> = {}, now: () => number = Date.now, random: () => number = Math.random) {
    this.#opts = resolveBackoffOptions(opts);
    this.#now = now;
    this.#random = random;
    this.#base = this.#opts.initialMs;
  }

  /** Delays handed out since the last reset. */
  get attempts(): number {
    return this.#attempts;
  }

  /**
   * The next delay in milliseconds; advances the sequence.
   *
   * @returns a delay in [base, base · (1 + jitter)), base growing by `factor` up to `maxMs`
   */
  next(): number {
    const now = this.#now();
    const reset = this.#opts.resetAfterMs;
    if (reset > 0 && this.#lastDelayEnd !== undefined && now - this.#lastDelayEnd > reset) this.reset();
    const base = this.#base;
    this.#base = Math.min(base * this.#opts.factor, this.#opts.maxMs);
    this.#attempts += 1;
    const r = this.#random();
    const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
    const delay = this.#opts.jitter > 0 ? base + unit * this.#opts.jitter * base : base;
    this.#lastDelayEnd = now + delay;
    return delay;
  }

  /** Starts the sequence over from `initialMs`. */
  reset(): void {
    this.#base = this.#opts.initialMs;
    this.#attempts = 0;
    this.#lastDelayEnd = undefined;
  }
}
