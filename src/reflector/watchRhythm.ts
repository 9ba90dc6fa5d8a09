/**
 * Learns how often a watch normally hears from the server, so that a watch
 * gone silent for several of its usual intervals can be declared stalled long
 * before the source's idle timeout.
 *
 * The expected interval is the longest gap between arrivals seen in the last
 * ten minutes of watching. A maximum rather than a median or an average,
 * because its errors fall on the safe side: bursts (the initial events, the
 * replay after a reconnect, a rollout touching a hundred objects) only add
 * short gaps and never shorten it, and an unusually long gap lengthens the
 * deadline rather than cutting a healthy watch. Time with no watch open is not
 * a gap. A deadline is only given once the watch has been heard for twice
 * that deadline, so a burst followed by silence teaches nothing.
 */

/** How a stall is recognised. */
export interface StallOptions {
  /** A watch is stalled after this many expected intervals of silence. @default 4 */
  readonly missedBeats: number;
  /** Never declare a stall after less silence than this, in milliseconds. @default 5000 */
  readonly minMs: number;
}

/** The defaults: four missed beats, never under five seconds. */
export const DEFAULT_STALL: StallOptions = Object.freeze({ missedBeats: 4, minMs: 5000 });

/** Gaps older than this are forgotten, so a stream whose rhythm changed is learnt again. */
const HORIZON_MS = 10 * 60_000;
/** Gaps are kept in buckets of this width, so a busy stream costs a few hundred entries at most. */
const BUCKET_MS = 1000;

interface Bucket {
  readonly start: number;
  maxGap: number;
  span: number;
}

/** The rhythm of one reflector's watches, shared by every watch it opens in turn. */
export class WatchRhythm {
  /** Tuning of the deadline. */
  readonly #opts: StallOptions;
  /** Recent gaps, oldest first, grouped by arrival time. */
  readonly #buckets: Bucket[] = [];
  /** The longest gap in #buckets, cached because arrivals are frequent and evictions rare. */
  #maxGap = 0;
  /** Watched time covered by #buckets: the evidence behind #maxGap. */
  #span = 0;
  /** The last arrival (or the opening) on the open watch; undefined while none is open. */
  #last: number | undefined;

  constructor(opts: StallOptions) {
    this.#opts = opts;
  }

  /** When silence started on the open watch, or undefined while none is open. */
  get lastHeard(): number | undefined {
    return this.#last;
  }

  /** A watch opened: silence counts from now, and the time since the last watch is not a gap. */
  opened(now: number): void {
    this.#last = now;
  }

  /** The watch closed: nothing counts until the next one opens. */
  closed(): void {
    this.#last = undefined;
  }

  /** Something arrived that tells about the rhythm (a live event or a bookmark). */
  beat(now: number): void {
    const last = this.#last;
    this.#last = now;
    if (last === undefined) return;
    this.#record(now, Math.max(0, now - last));
  }

  /** Something arrived that says the server is alive but not how often it speaks (the initial events). */
  touch(now: number): void {
    if (this.#last !== undefined) this.#last = now;
  }

  /**
   * A stall was declared: the silence that ended in it is not learnt as a gap
   * (HI-55). Learnt, it would stretch the deadline to four times the silence,
   * so each stall would take four times longer to notice than the one before,
   * soon longer than the idle timeout. A rhythm that really slowed is learnt
   * from the gaps its next watches hear, once the old ones are forgotten.
   */
  stalled(): void {
    this.#last = undefined;
  }

  /** The longest recent gap, in milliseconds (0 before any). */
  get expectedIntervalMs(): number {
    return this.#maxGap;
  }

  /**
   * The silence after which the open watch counts as stalled, or undefined
   * while the rhythm is unknown (then only the source's idle timeout applies).
   */
  deadlineMs(now: number): number | undefined {
    this.#evict(now);
    const deadline = Math.max(this.#opts.minMs, this.#opts.missedBeats * this.#maxGap);
    return this.#span >= 2 * deadline ? deadline : undefined;
  }

  #record(now: number, gap: number): void {
    this.#evict(now);
    let bucket = this.#buckets.at(-1);
    if (bucket === undefined || now - bucket.start >= BUCKET_MS) {
      bucket = { start: now, maxGap: 0, span: 0 };
      this.#buckets.push(bucket);
    }
    bucket.maxGap = Math.max(bucket.maxGap, gap);
    bucket.span += gap;
    this.#maxGap = Math.max(this.#maxGap, gap);
    this.#span += gap;
  }

  #evict(now: number): void {
    let dropped = 0;
    while (dropped < this.#buckets.length && now - this.#buckets[dropped]!.start > HORIZON_MS) dropped += 1;
    if (dropped === 0) return;
    this.#buckets.splice(0, dropped);
    this.#maxGap = 0;
    this.#span = 0;
    for (const b of this.#buckets) {
      this.#maxGap = Math.max(this.#maxGap, b.maxGap);
      this.#span += b.span;
    }
  }
}
