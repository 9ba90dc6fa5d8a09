/** One priority level's items in arrival order; `seqs` tells a live entry from one left behind by a raise. */
interface Level<T> {
  readonly priority: number;
  items: T[];
  seqs: number[];
  head: number;
}

/** Where a waiting item's live entry is. */
interface Place {
  readonly priority: number;
  readonly seq: number;
}

/**
 * The items of a work queue that wait for a worker: highest priority first,
 * first in, first out within one priority. Each level is an array with a
 * head index, so a push and a shift cost O(1) amortised; raising an item
 * pushes a new entry at its new level and leaves the old one behind, to be
 * skipped when the shift reaches it (lazy deletion). Levels are kept sorted,
 * highest first; there are as many as distinct priorities in use (usually
 * one or two).
 */
export class ReadyQueue<T> {
  // Non-empty levels, highest priority first.
  readonly #levels: Level<T>[] = [];
  // The live entry of every waiting item: a Map lookup decides dedup and raises.
  readonly #places = new Map<T, Place>();
  // Entry counter; an entry is live while its item's place carries the same number.
  #seq = 0;

  /** How many items wait. */
  get size(): number {
    return this.#places.size;
  }

  has(item: T): boolean {
    return this.#places.has(item);
  }

  /**
   * Queues `item` at `priority`. An item already waiting moves up to a
   * higher priority (behind the items already there) and never down.
   * @returns 'added' for a new item, 'raised', or 'kept' when nothing changed.
   */
  push(item: T, priority: number): 'added' | 'raised' | 'kept' {
    const place = this.#places.get(item);
    if (place !== undefined && place.priority >= priority) return 'kept';
    const seq = this.#seq++;
    this.#places.set(item, { priority, seq });
    const level = this.#level(priority);
    level.items.push(item);
    level.seqs.push(seq);
    return place === undefined ? 'added' : 'raised';
  }

  /** Takes the first item of the highest priority, or undefined when none waits. */
  shift(): { readonly item: T; readonly priority: number } | undefined {
    for (;;) {
      const level = this.#levels[0];
      if (level === undefined) return undefined;
      while (level.head < level.items.length) {
        const i = level.head++;
        const item = level.items[i] as T;
        const seq = level.seqs[i] as number;
        level.items[i] = undefined as T; // let the item be collected
        this.#compact(level);
        const place = this.#places.get(item);
        if (place === undefined || place.seq !== seq) continue; // left behind by a raise
        this.#places.delete(item);
        return { item, priority: level.priority };
      }
      this.#levels.shift();
    }
  }

  #level(priority: number): Level<T> {
    // Binary search on descending priorities; almost always a hit on the first or second level.
    let lo = 0;
    let hi = this.#levels.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const p = (this.#levels[mid] as Level<T>).priority;
      if (p === priority) return this.#levels[mid] as Level<T>;
      if (p > priority) lo = mid + 1;
      else hi = mid;
    }
    const level: Level<T> = { priority, items: [], seqs: [], head: 0 };
    this.#levels.splice(lo, 0, level);
    return level;
  }

  #compact(level: Level<T>): void {
    if (level.head > 1024 && level.head * 2 > level.items.length) {
      level.items = level.items.slice(level.head);
      level.seqs = level.seqs.slice(level.head);
      level.head = 0;
    }
  }
}
