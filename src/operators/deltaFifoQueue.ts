import { DeletedFinalStateUnknown, unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { KeyListerGetter } from '../store/types.js';
import { keyOfEntry, transformedEntry, type EntryConfig } from './queueEntry.js';
import type { Delta, Deltas } from './types.js';

type DeltaType = Delta<unknown>['type'];

/** What the queue needs, already validated and defaulted by `deltaFifo`. */
export interface DeltaFifoQueueConfig<T> extends EntryConfig<T> {
  readonly knownObjects: KeyListerGetter<T> | undefined;
  readonly emitDeltaTypeReplaced: boolean;
}

/**
 * The per-key delta queue behind `deltaFifo`: client-go's DeltaFIFO state
 * machine without locks or blocking, since JavaScript runs one mutation at a
 * time. Internal; the operator drives it and owns emission.
 *
 * State is DeltaFIFO's pair: `items` (pending Deltas per key) and `queue`
 * (keys in order of their first pending delta), with the invariant that a
 * key is in the live part of `queue` exactly when it has an entry in
 * `items`. Appending to a pending key never touches `queue`, so the key keeps
 * its place in line.
 */
export class DeltaFifoQueue<T> {
  readonly #config: DeltaFifoQueueConfig<T>;
  // Pending deltas per key; never holds an empty array.
  readonly #items = new Map<string, Delta<T>[]>();
  // Keys in pop order from #head on; a separate array because taking the first key of a Map
  // after many deletions walks over the deleted slots, which makes draining a large list quadratic.
  #queue: string[] = [];
  // Index of the next key to pop; the consumed prefix is cut off in pop() once it dominates.
  #head = 0;
  // Set by the first Add/Update/Delete/Replace: from then on sync depends only on the initial count.
  #populated = false;
  // How many pops remain until every key queued by the first Replace has been handed out.
  #initialPopulationCount = 0;
  // Sticky once true: hasSynced never goes back, as in client-go.
  #synced = false;
  // Keys listed so far by a list arriving page by page; undefined when no such list is under way.
  #listing: Set<string> | undefined;

  constructor(config: DeltaFifoQueueConfig<T>) {
    this.#config = config;
  }

  /** True once the first list has been fully popped, or an Add/Update/Delete came before any list. */
  get hasSynced(): boolean {
    return this.#synced;
  }

  /** Number of keys with pending deltas. */
  get size(): number {
    return this.#items.size;
  }

  /** Pending keys, oldest first (diagnostics and tests). */
  keys(): string[] {
    return this.#queue.slice(this.#head);
  }

  /** A copy of the pending deltas for `key`, or `undefined` when none. */
  pending(key: string): Delta<T>[] | undefined {
    const deltas = this.#items.get(key);
    return deltas === undefined ? undefined : [...deltas];
  }

  /**
   * An object was added, modified or deleted on the server (D-2, D-4). A
   * `Deleted` is ignored when the key is neither pending nor known: there is
   * nothing downstream to delete.
   */
  event(type: 'Added' | 'Updated' | 'Deleted', obj: T): void {
    const key = keyOfEntry(this.#config, obj);
    if (key === undefined && type === 'Deleted') return;
    this.#listing = undefined;
    this.#populated = true;
    this.#checkSynced();
    if (key === undefined) return;
    if (type === 'Deleted' && !this.#items.has(key)) {
      const known = this.#config.knownObjects;
      const lookup = known === undefined ? undefined : this.#getKnown(known, key);
      // A failed lookup queues the delete: better a redundant delete than a missed one.
      if (lookup === undefined || (lookup.ok && lookup.obj === undefined)) return;
    }
    const prepared = transformedEntry(this.#config, key, obj);
    if (prepared.ok) this.#append(key, type, prepared.obj);
  }

  /**
   * One page of a list that arrives page by page (D-21): its items are
   * queued as a `Replace` queues them, and their keys remembered until
   * {@link replaceEnd}. A `first` page starts the list over, forgetting what
   * earlier pages listed.
   */
  replacePage(items: readonly T[], first: boolean): void {
    if (first || this.#listing === undefined) this.#listing = new Set();
    const listed = this.#listing;
    const action: DeltaType = this.#config.emitDeltaTypeReplaced ? 'Replaced' : 'Sync';
    for (const item of items) {
      const key = keyOfEntry(this.#config, item);
      // An object without a key cannot be stored, so it cannot be known either: skipping it loses nothing.
      if (key === undefined) continue;
      // Recorded before transforming, so a transform failure leaves the stored object alone instead of deleting it.
      listed.add(key);
      const prepared = transformedEntry(this.#config, key, item);
      if (prepared.ok) this.#append(key, action, prepared.obj);
    }
  }

  /**
   * The list whose pages came since the last `first` page is complete: every
   * key pending or known but not listed gets a `Deleted` tombstone (D-7).
   */
  replaceEnd(): void {
    const listed = this.#listing ?? new Set<string>();
    this.#listing = undefined;

    // Pending keys that vanished from the list: tombstone with the newest pending state.
    for (const [key, deltas] of this.#items) {
      if (listed.has(key)) continue;
      const newest = deltas[deltas.length - 1];
      const last = newest === undefined ? undefined : unwrapTombstone(newest.obj);
      this.#append(key, 'Deleted', new DeletedFinalStateUnknown(key, last));
    }

    // Known keys that vanished and have nothing pending: tombstone with the stored state.
    const known = this.#config.knownObjects;
    if (known !== undefined) {
      for (const key of this.#listKnownKeys(known)) {
        if (listed.has(key) || this.#items.has(key)) continue;
        const lookup = this.#getKnown(known, key);
        this.#append(key, 'Deleted', new DeletedFinalStateUnknown(key, lookup.ok ? lookup.obj : undefined));
      }
    }

    if (!this.#populated) {
      this.#populated = true;
      // Every key pending now was either listed or tombstoned by this Replace, so it is the initial population.
      this.#initialPopulationCount = this.#items.size;
      this.#checkSynced();
    }
  }

  /**
   * Re-deliver every known object as `Sync` (D-8), except keys with pending
   * deltas: a Sync of the stored state would otherwise follow, and undo, a
   * newer queued change. Sync objects are the stored ones, not re-transformed.
   */
  resync(): void {
    const known = this.#config.knownObjects;
    if (known === undefined) return;
    for (const key of this.#listKnownKeys(known)) {
      if (this.#items.has(key)) continue;
      const lookup = this.#getKnown(known, key);
      if (!lookup.ok || lookup.obj === undefined) continue;
      this.#append(key, 'Sync', lookup.obj);
    }
  }

  /**
   * Takes the oldest key's Deltas (D-9), or `undefined` when nothing is
   * pending. `isInInitialList` is computed before the pop counts towards sync.
   */
  pop(): Deltas<T> | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const key = this.#queue[this.#head] as string;
    this.#head++;
    if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    const deltas = this.#items.get(key) as Delta<T>[];
    this.#items.delete(key);
    const isInInitialList = !this.#synced;
    if (this.#initialPopulationCount > 0) {
      this.#initialPopulationCount--;
      this.#checkSynced();
    }
    Object.freeze(deltas);
    return Object.freeze({ key, deltas, isInInitialList });
  }

  /** Drops everything pending (teardown). Sync state is kept: it describes what was already popped. */
  clear(): void {
    this.#listing = undefined;
    this.#items.clear();
    this.#queue = [];
    this.#head = 0;
  }

  #append(key: string, type: DeltaType, obj: T | DeletedFinalStateUnknown<T>): void {
    const delta: Delta<T> = Object.freeze({ type, obj });
    const deltas = this.#items.get(key);
    if (deltas === undefined) {
      this.#items.set(key, [delta]);
      this.#queue.push(key);
      return;
    }
    deltas.push(delta);
    dedupLastTwo(deltas);
  }

  #checkSynced(): void {
    if (!this.#synced && this.#populated && this.#initialPopulationCount === 0) this.#synced = true;
  }

  #listKnownKeys(known: KeyListerGetter<T>): Iterable<string> {
    try {
      // Copied so a consumer mutating its store while we iterate cannot skip or repeat keys.
      return [...known.listKeys()];
    } catch (err) {
      this.#config.report(asError(err, 'knownObjects.listKeys() threw'));
      return [];
    }
  }

  #getKnown(known: KeyListerGetter<T>, key: string): { ok: true; obj: T | undefined } | { ok: false } {
    try {
      return { ok: true, obj: known.getByKey(key) };
    } catch (err) {
      this.#config.report(asError(err, `knownObjects.getByKey(${JSON.stringify(key)}) threw`));
      return { ok: false };
    }
  }
}

/**
 * D-6: two deletes in a row say the same thing once. Keep the one that
 * carries more: a real object beats a tombstone; between equals the older.
 */
function dedupLastTwo<T>(deltas: Delta<T>[]): void {
  const n = deltas.length;
  if (n < 2) return;
  const older = deltas[n - 2];
  const newer = deltas[n - 1];
  if (older === undefined || newer === undefined) return;
  if (older.type !== 'Deleted' || newer.type !== 'Deleted') return;
  if (older.obj instanceof DeletedFinalStateUnknown) deltas.splice(n - 2, 1);
  else deltas.pop();
}

function asError(err: unknown, context: string): Error {
  return err instanceof Error ? err : new Error(`${context}: ${String(err)}`, { cause: err });
}
