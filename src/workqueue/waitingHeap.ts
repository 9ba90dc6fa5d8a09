/** An item waiting for its time, and where it sits in the heap. */
interface Entry<T> {
  readonly item: T;
  readyAt: number;
  // The priority it becomes ready at: the highest asked for while it waited.
  priority: number;
  // Ties on readyAt fire in the order they were first scheduled.
  readonly seq: number;
  index: number;
}

/**
 * The delayed items of a work queue: a binary min-heap by ready time, with
 * one entry per item, so scheduling an item that already waits can only move
 * it earlier (client-go's delaying queue keeps the same invariant) or raise
 * its priority (controller-runtime's priority queue does both).
 */
export class WaitingHeap<T> {
  // The heap itself, earliest readyAt (then lowest seq) at index 0.
  readonly #heap: Entry<T>[] = [];
  // Finds an item's entry for dedup without a scan.
  readonly #byItem = new Map<T, Entry<T>>();
  // Insertion counter behind the tie-break.
  #seq = 0;

  /** The earliest ready time, or undefined when nothing waits. */
  peekReadyAt(): number | undefined {
    return this.#heap[0]?.readyAt;
  }

  /**
   * Schedules `item` at `readyAt`; an item already waiting keeps the earlier
   * of its two times and the higher of its two priorities.
   * @returns true when the earliest ready time of the heap changed.
   */
  schedule(item: T, readyAt: number, priority: number): boolean {
    const before = this.peekReadyAt();
    const existing = this.#byItem.get(item);
    if (existing !== undefined) {
      if (priority > existing.priority) existing.priority = priority;
      if (readyAt >= existing.readyAt) return false;
      existing.readyAt = readyAt;
      this.#up(existing.index);
    } else {
      const entry: Entry<T> = { item, readyAt, priority, seq: this.#seq++, index: this.#heap.length };
      this.#heap.push(entry);
      this.#byItem.set(item, entry);
      this.#up(entry.index);
    }
    return this.peekReadyAt() !== before;
  }

  /** Removes and returns the items whose time has come, earliest first, with their priorities. */
  takeReady(now: number): { readonly item: T; readonly priority: number }[] {
    const ready: { readonly item: T; readonly priority: number }[] = [];
    for (let top = this.#heap[0]; top !== undefined && top.readyAt <= now; top = this.#heap[0]) {
      this.#removeAt(0);
      ready.push(top);
    }
    return ready;
  }

  /**
   * Drops the entry of `item`, if it has one.
   * @returns true when the earliest ready time of the heap changed.
   */
  remove(item: T): boolean {
    const entry = this.#byItem.get(item);
    if (entry === undefined) return false;
    const wasFirst = entry.index === 0;
    this.#removeAt(entry.index);
    return wasFirst;
  }

  clear(): void {
    this.#heap.length = 0;
    this.#byItem.clear();
  }

  #removeAt(i: number): void {
    const removed = this.#heap[i];
    const last = this.#heap.pop();
    if (removed === undefined || last === undefined) return;
    this.#byItem.delete(removed.item);
    if (last !== removed) {
      last.index = i;
      this.#heap[i] = last;
      // The entry moved into the hole may belong above or below it.
      this.#up(i);
      this.#down(last.index);
    }
  }

  #less(a: Entry<T>, b: Entry<T>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  #swap(i: number, j: number): void {
    const a = this.#heap[i] as Entry<T>;
    const b = this.#heap[j] as Entry<T>;
    this.#heap[i] = b;
    this.#heap[j] = a;
    b.index = i;
    a.index = j;
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(this.#heap[i] as Entry<T>, this.#heap[parent] as Entry<T>)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const n = this.#heap.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < n && this.#less(this.#heap[left] as Entry<T>, this.#heap[smallest] as Entry<T>)) smallest = left;
      if (right < n && this.#less(this.#heap[right] as Entry<T>, this.#heap[smallest] as Entry<T>)) smallest = right;
      if (smallest === i) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
