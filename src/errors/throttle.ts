/** What {@link Throttle.pass} says of an occurrence it lets through. */
export interface Passed {
  /** Occurrences of the kind held back since the last one let through. */
  readonly held: number;
  /** Milliseconds since the last one let through; 0 for the first of its kind. */
  readonly sinceMs: number;
}

/**
 * The one rate limit of reports (internal; LT-60): the first occurrence of a
 * kind goes through, later ones at most once per `intervalMs`, and what is
 * held back in between is counted, so the next report can say how many.
 * What a kind is belongs to the caller: a class of error for the stderr
 * reporter and the event recorder, a key for the controller's failures.
 */
export class Throttle {
  // The window after a report in which more of its kind are only counted.
  readonly #intervalMs: number;
  // The caller's clock, so virtual time drives the window.
  readonly #now: () => number;
  // Per kind: when it last went through and how many were held back since.
  readonly #kinds = new Map<string, { at: number; held: number }>();
  // The size at which stale kinds are swept, so memory follows the kinds still occurring, not every kind ever seen.
  #sweepAt = 1024;

  constructor(intervalMs: number, now: () => number) {
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /**
   * An occurrence of `kind`: `undefined` when it is held back (and counted),
   * else how many were held back before it and how long since the last one
   * went through.
   */
  pass(kind: string): Passed | undefined {
    const now = this.#now();
    const last = this.#kinds.get(kind);
    if (last !== undefined && now - last.at < this.#intervalMs) {
      last.held++;
      return undefined;
    }
    this.#kinds.set(kind, { at: now, held: 0 });
    if (this.#kinds.size >= this.#sweepAt) this.#sweep(now);
    return { held: last?.held ?? 0, sinceMs: last === undefined ? 0 : now - last.at };
  }

  /** `kind` stopped occurring: it is forgotten once its window passed with nothing held back. */
  settled(kind: string): void {
    const last = this.#kinds.get(kind);
    if (last !== undefined && last.held === 0 && this.#now() - last.at >= this.#intervalMs) this.#kinds.delete(kind);
  }

  #sweep(now: number): void {
    for (const [kind, r] of this.#kinds) if (r.held === 0 && now - r.at >= this.#intervalMs) this.#kinds.delete(kind);
    this.#sweepAt = Math.max(1024, this.#kinds.size * 2);
  }
}

/** The tail a report gets for what its throttle held back: `" (3 more like it held back)"`, or nothing. */
export function heldBack(passed: Passed): string {
  return passed.held > 0 ? ` (${passed.held} more like it held back)` : '';
}
