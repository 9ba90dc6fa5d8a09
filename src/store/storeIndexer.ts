// The indexed store itself: objects by key and their indexes, every write
// keyed and indexed before anything changes. Internal: built and reached
// through the functions of indexer.ts.

import { freezeSharing } from './freezeSharing.js';
import { DeletedFinalStateUnknown } from './DeletedFinalStateUnknown.js';
import { IndexConflictError } from './errors/IndexConflictError.js';
import { IndexNotFoundError } from './errors/IndexNotFoundError.js';
import { KeyError } from './errors/KeyError.js';
import { fileKeyed, type KeyedFiling, type KeyedReplaceFailure } from './keyedFiling.js';
import { buildState, fileAll, refile, unfileAll, valuesOf, type IndexState, type Values } from './indexBuckets.js';
import { checkIndexers } from './indexerOptions.js';
import { countEntries, type IndexerStats } from './indexerStats.js';
import { keysIn, objectsIn, objectsUnderAny } from './indexQueries.js';
import { selectObjects } from './listSelection.js';
import { readonlyView } from './readonlyView.js';
import { SelectorCache } from './selectorCache.js';
import { typeName } from './typeName.js';
import type { IndexFunc, Indexer, Indexers, KeyFunc, KubeObject, ReadonlyIndexer, StoreListOptions } from './types.js';
import { describeValue } from '../options/validate.js';

/** The resourceVersion a write records: the object's, `""` if it has metadata without one, undefined if it has no metadata. */
function resourceVersionOf(obj: unknown): string | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  const meta = (obj as KubeObject).metadata;
  if (meta === null || typeof meta !== 'object') return undefined;
  const rv = meta.resourceVersion;
  return typeof rv === 'string' ? rv : '';
}

/** The store `createIndexer` makes; its static members are the ways in of the keyed writes and the leak counts. */
export class StoreIndexer<T> implements Indexer<T> {
  // The objects by key: the source of truth every read starts from.
  #items = new Map<string, T>();
  // Index states in registration order, iterated on every write.
  #indexes: IndexState<T>[] = [];
  // The same states by name, for queries.
  #byName = new Map<string, IndexState<T>>();
  // Fixed at construction so every key in the map was made the same way.
  readonly #keyFunc: KeyFunc<T>;
  // Whether writes deep-freeze the stored objects.
  readonly #freeze: boolean;
  // Per-index values computed before a write is applied; reused so a write allocates no array.
  readonly #pending: (Values | undefined)[] = [];
  // True while user key/index functions run for a write: a nested write would clobber #pending.
  #busy = false;
  // The resourceVersion of the last write (I-15).
  #rv = '';
  // The list() selectors, parsed once per distinct text.
  readonly #selectors = new SelectorCache();
  // Created on first request and reused, so identity is stable for callers.
  #view: ReadonlyIndexer<T> | undefined;

  constructor(keyFunc: KeyFunc<T>, indexers: Indexers<T>, freeze: boolean) {
    this.#keyFunc = keyFunc;
    this.#freeze = freeze;
    for (const [name, fn] of Object.entries(indexers)) this.#register(buildState(name, fn, new Map()));
  }

  get size(): number {
    return this.#items.size;
  }

  add(obj: T): void {
    this.#upsert(obj);
  }

  update(obj: T): void {
    this.#upsert(obj);
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    let key: string;
    if (obj instanceof DeletedFinalStateUnknown) {
      this.#assertIdle();
      key = obj.key;
    } else {
      this.#enter();
      try {
        key = this.#keyOf(obj);
      } finally {
        this.#busy = false;
      }
      const rv = resourceVersionOf(obj);
      if (rv !== undefined) this.#rv = rv;
    }
    if (!this.#items.delete(key)) return;
    const indexes = this.#indexes;
    for (let i = 0; i < indexes.length; i++) unfileAll(indexes[i] as IndexState<T>, key);
  }

  replace(items: Iterable<T>, resourceVersion = ''): void {
    if (items === null || typeof items !== 'object' || typeof (items as Iterable<T>)[Symbol.iterator] !== 'function') {
      throw new TypeError(`replace: items must be an iterable of objects, got ${describeValue(items)}`);
    }
    if (typeof resourceVersion !== 'string') throw new TypeError(`replace: resourceVersion must be a string, got ${describeValue(resourceVersion)}`);
    this.#enter();
    const next = new Map<string, T>();
    const filedPerIndex: Map<string, Values>[] = [];
    try {
      // Key everything first: the first failure aborts with the store untouched (I-5).
      for (const obj of items) next.set(this.#keyOf(obj), obj);
      for (const state of this.#indexes) filedPerIndex.push(fileAll(state, next));
    } finally {
      this.#busy = false;
    }
    this.#swap(next, filedPerIndex, resourceVersion);
  }

  /** {@link replaceKeyed}: the caller keyed the list; what an index function refuses keeps the stored copy (PF-10). */
  #replaceKeyed(keys: readonly string[], items: readonly T[], resourceVersion: string): KeyedReplaceFailure[] {
    this.#enter();
    let filing: KeyedFiling<T>;
    try {
      filing = fileKeyed(this.#indexes, this.#items, keys, items);
    } finally {
      this.#busy = false;
    }
    this.#swap(filing.next, filing.filedPerIndex, resourceVersion);
    return filing.failures;
  }

  /** Swaps in content keyed and indexed in full beforehand, rebuilding every index in one step. */
  #swap(next: Map<string, T>, filedPerIndex: Map<string, Values>[], resourceVersion: string): void {
    if (this.#freeze) {
      // Each object shares what it has in common with the one it replaces (PF-49), read before the swap.
      const before = this.#items;
      for (const [key, obj] of next) freezeSharing(obj as object, before.get(key));
    }
    const states = this.#indexes.map((s, i) => buildState(s.name, s.fn, filedPerIndex[i] as Map<string, Values>));
    this.#items = next;
    this.#indexes = [];
    this.#byName = new Map();
    for (const s of states) this.#register(s);
    this.#rv = resourceVersion;
  }

  bookmark(resourceVersion: string): void {
    if (typeof resourceVersion !== 'string') throw new TypeError(`bookmark: resourceVersion must be a string, got ${describeValue(resourceVersion)}`);
    this.#rv = resourceVersion;
  }

  addIndexers(indexers: Indexers<T>): void {
    checkIndexers<T>(indexers, 'addIndexers');
    const entries = Object.entries(indexers);
    const conflicts = entries.map(([name]) => name).filter((name) => this.#byName.has(name));
    if (conflicts.length > 0) throw new IndexConflictError(conflicts);
    this.#enter();
    const states: IndexState<T>[] = [];
    try {
      for (const [name, fn] of entries) states.push(buildState(name, fn, fileAll({ name, fn }, this.#items)));
    } finally {
      this.#busy = false;
    }
    for (const s of states) this.#register(s);
  }

  keyOf(obj: T | DeletedFinalStateUnknown<T>): string {
    return obj instanceof DeletedFinalStateUnknown ? obj.key : this.#keyOf(obj);
  }

  get(obj: T): T | undefined {
    return this.#items.get(this.#keyOf(obj));
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(opts?: StoreListOptions): T[] {
    if (opts === undefined) return Array.from(this.#items.values());
    return selectObjects(this.#items, this.#byName, opts, this.#selectors);
  }

  listKeys(): string[] {
    return Array.from(this.#items.keys());
  }

  byIndex(indexName: string, value: string): T[] {
    return objectsIn(this.#state(indexName), value, this.#items);
  }

  indexKeys(indexName: string, value: string): string[] {
    return keysIn(this.#state(indexName), value);
  }

  listIndexFuncValues(indexName: string): string[] {
    const state = this.#byName.get(indexName);
    return state === undefined ? [] : Array.from(state.buckets.keys());
  }

  index(indexName: string, obj: T): T[] {
    const state = this.#state(indexName);
    const values = valuesOf(state, obj);
    if (values === undefined) return [];
    if (typeof values === 'string') return objectsIn(state, values, this.#items);
    return objectsUnderAny(state, values, this.#items);
  }

  getIndexers(): Indexers<T> {
    const out: Record<string, IndexFunc<T>> = {};
    for (const s of this.#indexes) out[s.name] = s.fn;
    return Object.freeze(out);
  }

  lastSyncResourceVersion(): string {
    return this.#rv;
  }

  asReadonly(): ReadonlyIndexer<T> {
    if (this.#view !== undefined) return this.#view;
    this.#view = readonlyView(this);
    return this.#view;
  }

  #upsert(obj: T): void {
    this.#enter();
    let key: string;
    try {
      key = this.#keyOf(obj);
    } finally {
      this.#busy = false;
    }
    this.#put(key, obj);
  }

  /** Stores `obj` under `key`, already worked out with this store's key function. */
  #put(key: string, obj: T): void {
    const indexes = this.#indexes;
    const pending = this.#pending;
    this.#enter();
    try {
      // Every index value is computed before anything changes, so a failing index function leaves the store as it was.
      for (let i = 0; i < indexes.length; i++) pending[i] = valuesOf(indexes[i] as IndexState<T>, obj);
    } finally {
      this.#busy = false;
    }
    if (this.#freeze) freezeSharing(obj as object, this.#items.get(key));
    this.#items.set(key, obj);
    for (let i = 0; i < indexes.length; i++) {
      refile(indexes[i] as IndexState<T>, key, pending[i]);
      pending[i] = undefined;
    }
    const rv = resourceVersionOf(obj);
    if (rv !== undefined) this.#rv = rv;
  }

  #keyOf(obj: T): string {
    let key: unknown;
    try {
      key = this.#keyFunc(obj);
    } catch (err) {
      throw new KeyError(obj, err);
    }
    if (typeof key !== 'string') throw new KeyError(obj, new TypeError(`key function returned ${typeName(key)}, expected a string`));
    return key;
  }

  /** {@link putKeyed}'s way in. */
  static put<U>(store: StoreIndexer<U>, key: string, obj: U): void {
    store.#put(key, obj);
  }

  /** {@link replaceKeyed}'s way in. */
  static replaceKeyed<U>(store: StoreIndexer<U>, keys: readonly string[], items: readonly U[], resourceVersion: string): KeyedReplaceFailure[] {
    return store.#replaceKeyed(keys, items, resourceVersion);
  }

  /** Sizes of the internal maps, for leak tests. */
  static stats<U>(store: StoreIndexer<U>): IndexerStats {
    return countEntries(store.#items, store.#indexes);
  }

  #assertIdle(): void {
    if (this.#busy) throw new Error('store written from inside one of its own key or index functions');
  }

  #enter(): void {
    this.#assertIdle();
    this.#busy = true;
  }

  #register(state: IndexState<T>): void {
    this.#indexes.push(state);
    this.#byName.set(state.name, state);
  }

  #state(indexName: string): IndexState<T> {
    const state = this.#byName.get(indexName);
    if (state === undefined) throw new IndexNotFoundError(indexName);
    return state;
  }
}
