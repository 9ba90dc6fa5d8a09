/**
 * The one seeded PRNG the specs draw from (mulberry32), with the few draws they need. Everything a seed
 * decides comes from one of these, so a failing run replays from its seed: a spec either fixes the seed or
 * prints it with the failure. Property tests keep fast-check's own seeding, which it prints itself.
 */
export class Rng {
  // The generator's whole state: one 32-bit word.
  #state: number;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed) || seed < 0) throw new TypeError(`seed must be a non-negative integer, got ${String(seed)}`);
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty array');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A key of `weights`, drawn in proportion to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [key, w] of entries) {
      r -= w;
      if (r < 0) return key;
    }
    return (entries.at(-1) as [K, number])[0];
  }

  /** A child generator for an independent stream of decisions (so adding a draw in one place does not shift another). */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 2 ** 32));
  }
}
