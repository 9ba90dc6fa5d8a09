import type { KeyListerGetter } from '../store/types.js';
import { keyOfEntry, transformedEntry, type EntryConfig } from './queueEntry.js';
import type { OrderedFifoItem, ReplacedAll } from './orderedTypes.js';
import type { Delta, Deltas } from './types.js';

/** What the queue needs, already validated and defaulted by `orderedFifo`. */
export interface OrderedFifoQueueConfig<T> extends EntryConfig<T> {
  readonly knownObjects: KeyListerGetter<T> | undefined;
}

/** What is queued: an item still to be stamped with isInInitialList when it is taken. */
type Pending<T> =
  | { readonly kind: 'event'; readonly key: string; readonly delta: Delta<T> }
  | { readonly kind: 'list'; readonly list: ListUnderWay<T>; readonly resourceVersion: string }
  | { readonly kind: 'sync' };

/** The pages of a list received so far, held until its end (PF-6). */
interface ListUnderWay<T> {
  readonly items: T[];
  readonly keys: string[];
  readonly kept: string[];
}

const SYNC_ALL = Object.freeze({ type: 'SyncAll' as const });

/**
 * The in-order queue behind `orderedFifo`: client-go's RealFIFO with atomic
 * events, without locks, since JavaScript runs one mutation at a time.
 * Internal; the operator drives it and owns emission.
 *
 * One entry per server fact in arrival order: nothing is merged per key, so a
 * key may be queued many times. A list, whole or page by page, becomes one
 * entry at its end.
 */
export class OrderedFifoQueue<T> {
  readonly #config: OrderedFifoQueueConfig<T>;
  // Entries in pop order from #head on; an array with a moving head so taking the oldest is O(1).
  #queue: Pending<T>[] = [];
  #head = 0;
  // The list whose pages are arriving; undefined when none is under way.
  #listing: ListUnderWay<T> | undefined;
  // Set by the first Added/Modified/Deleted or completed list: from then on sync depends only on the initial count.
  #populated = false;
  // Entries still to be handed out before the first list counts as delivered.
  #initialPopulationCount = 0;
  // Sticky once true, as in client-go.
  #synced = false;

  constructor(config: OrderedFifoQueueConfig<T>) {
    this.#config = config;
  }

  /** True once the first list has been handed out and processed, or a watch event came before any list. */
  get hasSynced(): boolean {
    return this.#synced;
  }

  /** Entries waiting (diagnostics and tests). */
  get size(): number {
    return this.#queue.length - this.#head;
  }

  /** An `Added`, `Modified` or `Deleted` event (PF-2, PF-4). */
  event(type: 'Added' | 'Updated' | 'Deleted', obj: T): void {
    // A watch event abandons a list under way: nothing of an unfinished list is ever applied (PF-9).
    this.#listing = undefined;
    this.#populated = true;
    this.#checkSynced();
    const key = keyOfEntry(this.#config, obj);
    if (key === undefined) return;
    const prepared = transformedEntry(this.#config, key, obj);
    if (!prepared.ok) return;
    this.#queue.push({ kind: 'event', key, delta: Object.freeze({ type, obj: prepared.obj }) });
  }

  /** One page of a list (PF-6): held, transformed, until the list ends. */
  replacePage(items: readonly T[], first: boolean): void {
    if (first || this.#listing === undefined) this.#listing = { items: [], keys: [], kept: [] };
    const list = this.#listing;
    for (const item of items) {
      const key = keyOfEntry(this.#config, item);
      if (key === undefined) continue;
      const prepared = transformedEntry(this.#config, key, item);
      if (prepared.ok) {
        list.items.push(prepared.obj);
        list.keys.push(key);
      } else list.kept.push(key);
    }
  }

  /** The list is complete: it is queued as one entry (PF-5). */
  replaceEnd(resourceVersion: string): void {
    const list = this.#listing ?? { items: [], keys: [], kept: [] };
    this.#listing = undefined;
    this.#queue.push({ kind: 'list', list, resourceVersion });
    if (!this.#populated) {
      this.#populated = true;
      this.#initialPopulationCount = this.size;
    }
  }

  /** A resync tick: one entry that re-delivers the whole store (PF-11). */
  resync(): void {
    this.#queue.push({ kind: 'sync' });
  }

  /**
   * Takes the oldest entry, or `undefined` when none. A delete of a key the
   * consumer's store does not hold is dropped here, when everything queued
   * before it has been applied (PF-4).
   */
  pop(): OrderedFifoItem<T> | undefined {
    for (;;) {
      if (this.#head >= this.#queue.length) return undefined;
      const entry = this.#queue[this.#head] as Pending<T>;
      // Released at once: a held list would otherwise live as long as the queue's array.
      this.#queue[this.#head] = undefined as unknown as Pending<T>;
      this.#head++;
      if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      const isInInitialList = !this.#synced;
      const item = this.#itemOf(entry, isInInitialList);
      if (item !== undefined) return item;
      this.taken();
    }
  }

  /** The entry last popped has been processed: it counts towards sync now, not when it was taken (PF-12). */
  taken(): void {
    if (this.#initialPopulationCount === 0) return;
    this.#initialPopulationCount--;
    this.#checkSynced();
  }

  /** Drops everything queued and any list under way (teardown, source error). Sync state is kept. */
  clear(): void {
    this.#listing = undefined;
    this.#queue = [];
    this.#head = 0;
  }

  #itemOf(entry: Pending<T>, isInInitialList: boolean): OrderedFifoItem<T> | undefined {
    switch (entry.kind) {
      case 'event':
        if (entry.delta.type === 'Deleted' && !this.#mayBeKnown(entry.key)) return undefined;
        return Object.freeze({ key: entry.key, deltas: Object.freeze([entry.delta]), isInInitialList }) as Deltas<T>;
      case 'list': {
        const { items, keys, kept } = entry.list;
        const whole: ReplacedAll<T> = { type: 'ReplacedAll', items, keys, kept, resourceVersion: entry.resourceVersion, isInInitialList };
        return Object.freeze(whole);
      }
      case 'sync':
        return SYNC_ALL;
    }
  }

  /** False only when the consumer's store is known not to hold `key`; a failed lookup says true. */
  #mayBeKnown(key: string): boolean {
    const known = this.#config.knownObjects;
    if (known === undefined) return true;
    try {
      return known.getByKey(key) !== undefined;
    } catch (err) {
      this.#config.report(err instanceof Error ? err : new Error(`knownObjects.getByKey(${JSON.stringify(key)}) threw: ${String(err)}`, { cause: err }));
      return true;
    }
  }

  #checkSynced(): void {
    if (!this.#synced && this.#populated && this.#initialPopulationCount === 0) this.#synced = true;
  }
}
