import { deepFreeze } from './deepFreeze.js';
import { DeletedFinalStateUnknown } from './DeletedFinalStateUnknown.js';
import { IndexConflictError } from './errors/IndexConflictError.js';
import { IndexError } from './errors/IndexError.js';
import { IndexNotFoundError } from './errors/IndexNotFoundError.js';
import { KeyError } from './errors/KeyError.js';
import { parseFieldSelector, type FieldSelector } from './fieldSelector.js';
import { byNamespace, namespaceIndex } from './indexFuncs.js';
import { metaNamespaceKey } from './keys.js';
import { parseLabelSelector, type LabelSelector } from './labelSelector.js';
import type { IndexFunc, Indexer, Indexers, KeyFunc, KubeObject, ReadonlyIndexer, StoreListOptions } from './types.js';

export type { Indexer, ReadonlyIndexer, StoreListOptions } from './types.js';

/** Options of {@link createIndexer}. */
export interface IndexerOptions<T> {
  /**
   * Computes the key of an object.
   * @default metaNamespaceKey ("namespace/name", or "name" when cluster-scoped)
   */
  readonly keyFunc?: KeyFunc<T>;
  /**
   * Named index functions to maintain from the start.
   * @default {} (no index)
   */
  readonly indexers?: Indexers<T>;
  /**
   * Deep-freeze every stored object in place (no copy), so code that reads
   * the store cannot corrupt it. Turn off only if you never mutate what you
   * read and want to skip the (small, once per object) freezing cost.
   * @default true
   */
  readonly freeze?: boolean;
}

/** The values one object is filed under in one index: a lone value, or several distinct ones. Never empty. */
type Values = string | readonly string[];

/** The keys filed under one value: a lone key needs no Set. Never empty. */
type Bucket = string | Set<string>;

interface IndexState<T> {
  readonly name: string;
  readonly fn: IndexFunc<T>;
  /** value → key(s) filed under it. */
  readonly buckets: Map<string, Bucket>;
  /** key → the values it was filed under, so removal is exact even if the stored object changed since. */
  readonly filed: Map<string, Values>;
}

const OPTION_NAMES = new Set(['keyFunc', 'indexers', 'freeze']);
const LIST_OPTION_NAMES = new Set(['labelSelector', 'fieldSelector', 'namespace']);

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

function checkIndexers<T>(indexers: unknown, where: string): Indexers<T> {
  if (indexers === null || typeof indexers !== 'object' || Array.isArray(indexers)) {
    throw new TypeError(`${where}: indexers must be an object of index functions, got ${typeName(indexers)}`);
  }
  for (const [name, fn] of Object.entries(indexers)) {
    if (typeof fn !== 'function') throw new TypeError(`${where}: indexers[${JSON.stringify(name)}] must be a function, got ${typeName(fn)}`);
  }
  return indexers as Indexers<T>;
}

/** Runs an index function and normalises its answer; throws IndexError. */
function valuesOf<T>(state: { readonly name: string; readonly fn: IndexFunc<T> }, obj: T): Values | undefined {
  let out: unknown;
  try {
    out = state.fn(obj);
  } catch (err) {
    throw new IndexError(state.name, obj, err);
  }
  if (!Array.isArray(out)) throw new IndexError(state.name, obj, new TypeError(`index function returned ${typeName(out)}, expected an array of strings`));
  const n = out.length;
  if (n === 0) return undefined;
  for (let i = 0; i < n; i++) {
    if (typeof out[i] !== 'string') throw new IndexError(state.name, obj, new TypeError(`index function returned ${typeName(out[i])} at position ${i}, expected a string`));
  }
  if (n === 1) return out[0] as string;
  return distinctValues(out as readonly string[]);
}

/** A private de-duplicated copy (the caller's array may change later); quadratic scan for the usual few values. */
function distinctValues(values: readonly string[]): Values {
  const n = values.length;
  if (n > 16) {
    const distinct = [...new Set(values)];
    return distinct.length === 1 ? (distinct[0] as string) : distinct;
  }
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = values[i] as string;
    if (!out.includes(v)) out.push(v);
  }
  return out.length === 1 ? (out[0] as string) : out;
}

function contains(values: Values | undefined, v: string): boolean {
  if (values === undefined) return false;
  return typeof values === 'string' ? values === v : values.includes(v);
}

function file(buckets: Map<string, Bucket>, value: string, key: string): void {
  const b = buckets.get(value);
  if (b === undefined) buckets.set(value, key);
  else if (typeof b === 'string') {
    if (b !== key) buckets.set(value, new Set([b, key]));
  } else b.add(key);
}

function unfile(buckets: Map<string, Bucket>, value: string, key: string): void {
  const b = buckets.get(value);
  if (b === undefined) return;
  if (typeof b === 'string') {
    if (b === key) buckets.delete(value);
  } else if (b.delete(key) && b.size === 0) buckets.delete(value);
}

/** Moves `key` from the values it was filed under to `next`, touching only what changed (I-8). */
function refile<T>(state: IndexState<T>, key: string, next: Values | undefined): void {
  const prev = state.filed.get(key);
  if (prev === next) return;
  const buckets = state.buckets;
  if (prev !== undefined) {
    if (typeof prev === 'string') {
      if (!contains(next, prev)) unfile(buckets, prev, key);
    } else {
      for (const v of prev) if (!contains(next, v)) unfile(buckets, v, key);
    }
  }
  if (next === undefined) {
    state.filed.delete(key);
    return;
  }
  if (typeof next === 'string') {
    if (!contains(prev, next)) file(buckets, next, key);
  } else {
    for (const v of next) if (!contains(prev, v)) file(buckets, v, key);
  }
  state.filed.set(key, next);
}

function unfileAll<T>(state: IndexState<T>, key: string): void {
  const prev = state.filed.get(key);
  if (prev === undefined) return;
  if (typeof prev === 'string') unfile(state.buckets, prev, key);
  else for (const v of prev) unfile(state.buckets, v, key);
  state.filed.delete(key);
}

function buildState<T>(name: string, fn: IndexFunc<T>, filed: Map<string, Values>): IndexState<T> {
  const buckets = new Map<string, Bucket>();
  for (const [key, values] of filed) {
    if (typeof values === 'string') file(buckets, values, key);
    else for (const v of values) file(buckets, v, key);
  }
  return { name, fn, buckets, filed };
}

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
  // Last parsed selector texts: callers pass the same text again and again.
  #labelText: string | undefined;
  #labelSel: LabelSelector | undefined;
  #fieldText: string | undefined;
  #fieldSel: FieldSelector | undefined;
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
      throw new TypeError(`replace: items must be an iterable of objects, got ${typeName(items)}`);
    }
    if (typeof resourceVersion !== 'string') throw new TypeError(`replace: resourceVersion must be a string, got ${typeName(resourceVersion)}`);
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
    if (this.#freeze) for (const obj of next.values()) deepFreeze(obj);
    const states = this.#indexes.map((s, i) => buildState(s.name, s.fn, filedPerIndex[i] as Map<string, Values>));
    this.#items = next;
    this.#indexes = [];
    this.#byName = new Map();
    for (const s of states) this.#register(s);
    this.#rv = resourceVersion;
  }

  bookmark(resourceVersion: string): void {
    if (typeof resourceVersion !== 'string') throw new TypeError(`bookmark: resourceVersion must be a string, got ${typeName(resourceVersion)}`);
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
    if (opts === null || typeof opts !== 'object') throw new TypeError(`list: options must be an object, got ${typeName(opts)}`);
    for (const name in opts) if (!LIST_OPTION_NAMES.has(name)) throw new TypeError(`list: unknown option ${JSON.stringify(name)}`);
    const label = this.#labelSelector(opts.labelSelector);
    const field = this.#fieldSelector(opts.fieldSelector);
    const ns = opts.namespace;
    if (ns !== undefined && typeof ns !== 'string') throw new TypeError(`list: option "namespace" must be a string, got ${typeName(ns)}`);

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
    // A separate object, so a reader cannot reach the write methods even with a cast.
    const store = this;
    const view: ReadonlyIndexer<T> = {
      get size() {
        return store.size;
      },
      keyOf: (obj) => store.keyOf(obj),
      get: (obj) => store.get(obj),
      getByKey: (key) => store.getByKey(key),
      list: (opts) => store.list(opts),
      listKeys: () => store.listKeys(),
      byIndex: (name, value) => store.byIndex(name, value),
      indexKeys: (name, value) => store.indexKeys(name, value),
      listIndexFuncValues: (name) => store.listIndexFuncValues(name),
      index: (name, obj) => store.index(name, obj),
      getIndexers: () => store.getIndexers(),
      lastSyncResourceVersion: () => store.lastSyncResourceVersion(),
    };
    this.#view = Object.freeze(view);
    return this.#view;
  }

  #upsert(obj: T): void {
    const indexes = this.#indexes;
    const pending = this.#pending;
    let key: string;
    this.#enter();
    try {
      key = this.#keyOf(obj);
      // Every index value is computed before anything changes, so a failing index function leaves the store as it was.
      for (let i = 0; i < indexes.length; i++) pending[i] = valuesOf(indexes[i] as IndexState<T>, obj);
    } finally {
      this.#busy = false;
    }
    if (this.#freeze) deepFreeze(obj);
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

  #labelSelector(sel: unknown): LabelSelector | undefined {
    if (sel === undefined) return undefined;
    let parsed: LabelSelector;
    if (typeof sel === 'string') {
      if (sel !== this.#labelText) {
        this.#labelSel = parseLabelSelector(sel);
        this.#labelText = sel;
      }
      parsed = this.#labelSel as LabelSelector;
    } else if (sel !== null && typeof sel === 'object' && typeof (sel as LabelSelector).matches === 'function') {
      parsed = sel as LabelSelector;
    } else {
      throw new TypeError(`list: option "labelSelector" must be a string or a LabelSelector, got ${typeName(sel)}`);
    }
    return parsed.empty ? undefined : parsed;
  }

  #fieldSelector(sel: unknown): FieldSelector | undefined {
    if (sel === undefined) return undefined;
    let parsed: FieldSelector;
    if (typeof sel === 'string') {
      if (sel !== this.#fieldText) {
        this.#fieldSel = parseFieldSelector(sel);
        this.#fieldText = sel;
      }
      parsed = this.#fieldSel as FieldSelector;
    } else if (sel !== null && typeof sel === 'object' && typeof (sel as FieldSelector).matches === 'function') {
      parsed = sel as FieldSelector;
    } else {
      throw new TypeError(`list: option "fieldSelector" must be a string or a FieldSelector, got ${typeName(sel)}`);
    }
    return parsed.empty ? undefined : parsed;
  }
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
 * import { byLabel, byNamespace, namespaceIndex } from 'rxkube';
 * import { createIndexer } from 'rxkube/core';
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
  if (opts === undefined) return new StoreIndexer<T>(metaNamespaceKey as KeyFunc<T>, {}, true);
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new TypeError(`createIndexer: options must be an object, got ${typeName(opts)}`);
  for (const name in opts) if (!OPTION_NAMES.has(name)) throw new TypeError(`createIndexer: unknown option ${JSON.stringify(name)}`);
  const { keyFunc, indexers, freeze } = opts;
  if (keyFunc !== undefined && typeof keyFunc !== 'function') throw new TypeError(`createIndexer: keyFunc must be a function, got ${typeName(keyFunc)}`);
  if (freeze !== undefined && typeof freeze !== 'boolean') throw new TypeError(`createIndexer: freeze must be a boolean, got ${typeName(freeze)}`);
  const checked = indexers === undefined ? {} : checkIndexers<T>(indexers, 'createIndexer');
  return new StoreIndexer<T>(keyFunc ?? (metaNamespaceKey as KeyFunc<T>), checked, freeze ?? true);
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
