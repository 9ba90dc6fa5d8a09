import { freezeSharing } from './freezeSharing.js';
import { DeletedFinalStateUnknown } from './DeletedFinalStateUnknown.js';
import { IndexConflictError } from './errors/IndexConflictError.js';
import { IndexNotFoundError } from './errors/IndexNotFoundError.js';
import { KeyError } from './errors/KeyError.js';
import { fileKeyed, type KeyedFiling, type KeyedReplaceFailure } from './keyedFiling.js';
import { buildState, refile, unfileAll, valuesOf, type IndexState, type Values } from './indexBuckets.js';
import { byNamespace, namespaceIndex } from './indexFuncs.js';
import { checkIndexerOptions, checkIndexers, checkListOptionNames, type IndexerOptions } from './indexerOptions.js';
import { readonlyView } from './readonlyView.js';
import { SelectorCache } from './selectorCache.js';
import { typeName } from './typeName.js';
import type { IndexFunc, Indexer, Indexers, KeyFunc, KubeObject, ReadonlyIndexer, StoreListOptions } from './types.js';
import { describeValue } from '../options/validate.js';

export type { Indexer, ReadonlyIndexer, StoreListOptions } from './types.js';
export type { IndexerOptions } from './indexerOptions.js';

/** The resourceVersion a write records: the object's, `""` if it has metadata without one, undefined if it has no metadata. */
function resourceVersionOf(obj: unknown): string | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  const meta = (obj as KubeObject).metadata;
  if (meta === null || typeof meta !== 'object') return undefined;
  const rv = meta.resourceVersion;
  return typeof rv === 'string' ? rv : '';
}

function namespaceOf(obj: unknown): string {
  const ns = (obj as KubeObject | null | undefined)?.metadata?.namespace;
  return typeof ns === 'string' ? ns : '';
}

class StoreIndexer<T> implements Indexer<T> {
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
      for (const state of this.#indexes) {
        const filed = new Map<string, Values>();
        for (const [key, obj] of next) {
          const values = valuesOf(state, obj);
          if (values !== undefined) filed.set(key, values);
        }
        filedPerIndex.push(filed);
      }
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
      for (const [name, fn] of entries) {
        const filed = new Map<string, Values>();
        for (const [key, obj] of this.#items) {
          const values = valuesOf({ name, fn }, obj);
          if (values !== undefined) filed.set(key, values);
        }
        states.push(buildState(name, fn, filed));
      }
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
    checkListOptionNames(opts);
    const label = this.#selectors.label(opts.labelSelector);
    const field = this.#selectors.field(opts.fieldSelector);
    const ns = opts.namespace;
    if (ns !== undefined && typeof ns !== 'string') throw new TypeError(`list: option "namespace" must be a string, got ${describeValue(ns)}`);

    let source: Iterable<T>;
    let checkNamespace = false;
    if (ns === undefined || ns === '') source = this.#items.values();
    else {
      const nsIndex = this.#byName.get(namespaceIndex);
      if (nsIndex !== undefined && nsIndex.fn === (byNamespace as unknown)) source = this.#objectsIn(nsIndex, ns);
      else {
        source = this.#items.values();
        checkNamespace = true;
      }
    }
    if (label === undefined && field === undefined && !checkNamespace) return Array.isArray(source) ? source : Array.from(source);
    const out: T[] = [];
    for (const obj of source) {
      if (checkNamespace && namespaceOf(obj) !== ns) continue;
      if (label !== undefined && !label.matches((obj as KubeObject | null | undefined)?.metadata?.labels)) continue;
      if (field !== undefined && !field.matches(obj)) continue;
      out.push(obj);
    }
    return out;
  }

  listKeys(): string[] {
    return Array.from(this.#items.keys());
  }

  byIndex(indexName: string, value: string): T[] {
    return this.#objectsIn(this.#state(indexName), value);
  }

  indexKeys(indexName: string, value: string): string[] {
    const b = this.#state(indexName).buckets.get(value);
    if (b === undefined) return [];
    if (typeof b === 'string') return [b];
    return Array.from(b).sort();
  }

  listIndexFuncValues(indexName: string): string[] {
    const state = this.#byName.get(indexName);
    return state === undefined ? [] : Array.from(state.buckets.keys());
  }

  index(indexName: string, obj: T): T[] {
    const state = this.#state(indexName);
    const values = valuesOf(state, obj);
    if (values === undefined) return [];
    if (typeof values === 'string') return this.#objectsIn(state, values);
    const keys = new Set<string>();
    for (const v of values) {
      const b = state.buckets.get(v);
      if (b === undefined) continue;
      if (typeof b === 'string') keys.add(b);
      else for (const k of b) keys.add(k);
    }
    const out: T[] = [];
    for (const k of keys) out.push(this.#items.get(k) as T);
    return out;
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
    const indexes: Record<string, { values: number; filedKeys: number; bucketKeys: number }> = {};
    for (const s of store.#indexes) {
      let bucketKeys = 0;
      for (const b of s.buckets.values()) bucketKeys += typeof b === 'string' ? 1 : b.size;
      indexes[s.name] = { values: s.buckets.size, filedKeys: s.filed.size, bucketKeys };
    }
    return { items: store.#items.size, indexes };
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

  #objectsIn(state: IndexState<T>, value: string): T[] {
    const b = state.buckets.get(value);
    if (b === undefined) return [];
    if (typeof b === 'string') return [this.#items.get(b) as T];
    const out = new Array<T>(b.size);
    let i = 0;
    for (const k of b) out[i++] = this.#items.get(k) as T;
    return out;
  }
}

/**
 * Internal: adds or updates `obj` under `key`, which the caller worked out
 * with the store's own key function. The informer's path: its queue keyed
 * every object already, so the store does not build and hash the key a
 * second time. Any other `Indexer` is written through `update`.
 *
 * @param store the store to write
 * @param key the object's key, as the store's key function gives it
 * @param obj the object
 */
export function putKeyed<T>(store: Indexer<T>, key: string, obj: T): void {
  if (store instanceof StoreIndexer) StoreIndexer.put(store, key, obj);
  else store.update(obj);
}

/**
 * Internal: replaces the store's content with `items[i]` under `keys[i]`,
 * keys the caller worked out with the store's own key function, so a
 * transform that changed an object's key cannot re-file it (PF-43). Each
 * object's index values are worked out once; one an index function refuses
 * is left out and its key keeps what the store held (or stays absent), and
 * the rest is swapped in one step. The informer's relist path (PF-10); any
 * other `Indexer` gets `replace`, which refuses the whole list instead.
 *
 * @param store the store to write
 * @param keys `keys[i]` is the key of `items[i]`
 * @param items the new content, in list order
 * @param resourceVersion the list's resourceVersion
 * @returns the objects left out, in list order
 */
export function replaceKeyed<T>(store: Indexer<T>, keys: readonly string[], items: readonly T[], resourceVersion: string): KeyedReplaceFailure[] {
  if (store instanceof StoreIndexer) return StoreIndexer.replaceKeyed(store, keys, items, resourceVersion);
  store.replace(items, resourceVersion);
  return [];
}

/**
 * Creates an in-memory indexed store (client-go's `Indexer`): objects by key,
 * plus named secondary indices kept exact on every write.
 *
 * - `add`/`update` are the same upsert; `delete` takes an object or a
 *   `DeletedFinalStateUnknown` (removed by its key); deleting an absent key
 *   is a no-op.
 * - A key or index function that throws gives a `KeyError` / `IndexError`
 *   naming the object, and the store is unchanged: every value is computed
 *   before anything is written.
 * - When an object's index values change, its key leaves the old buckets;
 *   a bucket left empty is removed, so churn does not grow the indices.
 * - `replace(items, rv)` keys and indexes everything first, then swaps the
 *   content and rebuilds every index in one step; duplicate keys keep the
 *   last item.
 * - Stored objects are deep-frozen in place by default: reads hand out the
 *   stored object itself, never a copy, and nobody can change it.
 * - `lastSyncResourceVersion()` follows client-go: the resourceVersion of the
 *   last object written (last write wins, not the highest), of a delete given
 *   an object, of `replace`, or of `bookmark`; `replace` without one resets it
 *   to `""`.
 *
 * ## Example
 * ```ts
 * import { byLabel, byNamespace } from 'rxkube';
 * import { createIndexer, namespaceIndex } from 'rxkube/core';
 * import type { V1Pod } from '@kubernetes/client-node';
 *
 * const pods = createIndexer<V1Pod>({ indexers: { [namespaceIndex]: byNamespace, app: byLabel('app') } });
 * pods.add({ metadata: { namespace: 'shop', name: 'web-1', labels: { app: 'web' } } });
 * pods.getByKey('shop/web-1');                           // the pod (frozen)
 * pods.byIndex('app', 'web');                            // [web-1]
 * pods.list({ namespace: 'shop', labelSelector: 'app in (web,api)' });
 * ```
 *
 * @param opts the key function, index functions and freezing.
 * @returns a new empty store.
 * @throws {TypeError} on an unknown option or an option of the wrong type.
 */
export function createIndexer<T = KubeObject>(opts?: IndexerOptions<T>): Indexer<T> {
  const { keyFunc, indexers, freeze } = checkIndexerOptions(opts);
  return new StoreIndexer<T>(keyFunc, indexers, freeze);
}

/** Internal sizes of a store made by {@link createIndexer}. */
export interface IndexerStats {
  readonly items: number;
  /** Per index: distinct values (buckets), keys with at least one value, and key entries summed over all buckets. */
  readonly indexes: Readonly<Record<string, { readonly values: number; readonly filedKeys: number; readonly bucketKeys: number }>>;
}

/**
 * Counts what a store holds internally, to prove that churn leaves nothing
 * behind. Not part of the public surface (not re-exported).
 * @internal
 * @param store a store made by {@link createIndexer}.
 * @returns the sizes of its maps.
 */
export function indexerStats<T>(store: ReadonlyIndexer<T>): IndexerStats {
  if (!(store instanceof StoreIndexer)) throw new TypeError('indexerStats: not a store made by createIndexer');
  return StoreIndexer.stats(store);
}
