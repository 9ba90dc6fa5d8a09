/**
 * A token bucket per object (internal), as client-go's event spam filter
 * keeps one per source and object: `burst` tokens to start with, one more
 * every `refillMs`, at most `maxObjects` buckets (the least recently used
 * go, which gives that object a full bucket again). Computed from the clock
 * when asked, so no timer runs.
 */
export class ObjectBuckets {
  readonly #burst: number;
  readonly #refillMs: number;
  readonly #maxObjects: number;
  /** Tokens per object key and when they were counted; insertion order is recency. */
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(burst: number, refillMs: number, maxObjects: number) {
    this.#burst = burst;
    this.#refillMs = refillMs;
    this.#maxObjects = maxObjects;
  }

  /** Takes a token of `key`'s bucket at time `now`; false when it has none. */
  take(key: string, now: number): boolean {
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) bucket = { tokens: this.#burst, at: now };
    else {
      this.#buckets.delete(key);
      bucket.tokens = Math.min(this.#burst, bucket.tokens + Math.max(0, now - bucket.at) / this.#refillMs);
      bucket.at = now;
    }
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > this.#maxObjects) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
