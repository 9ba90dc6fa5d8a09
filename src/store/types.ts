import type { DeletedFinalStateUnknown } from './DeletedFinalStateUnknown.js';
import type { FieldSelector } from './fieldSelector.js';
import type { LabelSelector } from './labelSelector.js';

/**
 * The minimal shape rxkube needs from a Kubernetes object. Every object the
 * API server returns has it; custom resources included.
 */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
}

/**
 * The metadata fields rxkube reads. Everything else is carried untouched.
 * There is deliberately no index signature: classes such as client-node's
 * `V1ObjectMeta` have none, and one here would make `V1Pod` unassignable to
 * `KubeObject`.
 */
export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly deletionTimestamp?: string | Date;
  readonly creationTimestamp?: string | Date;
}

/** A reference from an object to its owner (`metadata.ownerReferences[]`); `controller: true` marks the managing one. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** Computes the store key of an object (`"ns/name"` or `"name"` by default). */
export type KeyFunc<T> = (obj: T) => string;

/** Computes the values an object is indexed under; zero, one or many. */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** Named index functions: `indexName → IndexFunc`. */
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

/**
 * The read side of a store that deltaFifo needs to infer deletions and
 * resyncs (client-go's `KeyListerGetter`).
 */
export interface KeyListerGetter<T> {
  /** Every stored key. */
  listKeys(): readonly string[] | Iterable<string>;
  /** The stored object under `key`, if any. */
  getByKey(key: string): T | undefined;
}

/** Filters for `Indexer.list`. All given filters must hold. */
export interface StoreListOptions {
  /** Label selector text (`app=web,!canary`) or a parsed selector. */
  readonly labelSelector?: string | LabelSelector;
  /** Field selector text (`spec.nodeName=node-1`) or a parsed selector. */
  readonly fieldSelector?: string | FieldSelector;
  /** Only objects whose `metadata.namespace` is this; `""` or absent means all namespaces. */
  readonly namespace?: string;
}

/**
 * The reader side of an {@link Indexer}: what user code gets from an
 * informer. Objects returned are the stored ones (deep-frozen by default),
 * not copies. Lists are fresh arrays in no particular order.
 */
export interface ReadonlyIndexer<T> extends KeyListerGetter<T> {
  /** Number of stored objects. */
  readonly size: number;
  /** The key this store files `obj` under (a tombstone's own key for a tombstone). Throws `KeyError` when `obj` cannot be keyed. */
  keyOf(obj: T | DeletedFinalStateUnknown<T>): string;
  /** The stored object with the same key as `obj`. Throws `KeyError` when `obj` cannot be keyed. */
  get(obj: T): T | undefined;
  /** The stored object under `key`. */
  getByKey(key: string): T | undefined;
  /** Stored objects, optionally filtered by namespace and label/field selectors. */
  list(opts?: StoreListOptions): T[];
  /** Every stored key. */
  listKeys(): string[];
  /** Stored objects indexed under `value` by index `indexName`. Throws `IndexNotFoundError`. */
  byIndex(indexName: string, value: string): T[];
  /** Keys indexed under `value` by index `indexName`, sorted ascending. Throws `IndexNotFoundError`. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value index `indexName` currently holds; `[]` for an unknown index. */
  listIndexFuncValues(indexName: string): string[];
  /** Stored objects sharing any index value with `obj` under `indexName`. Throws `IndexNotFoundError`, `IndexError`. */
  index(indexName: string, obj: T): T[];
  /** The registered index functions by name. */
  getIndexers(): Indexers<T>;
  /** The resourceVersion of the last write, replace or bookmark; `""` before any. */
  lastSyncResourceVersion(): string;
}

/**
 * An in-memory store of objects by key with named secondary indices
 * (client-go's `Indexer`). Writes are synchronous; a write that throws
 * (`KeyError`, `IndexError`) leaves the store unchanged.
 */
export interface Indexer<T> extends ReadonlyIndexer<T> {
  /** Inserts or replaces the object under its key (same as `update`). */
  add(obj: T): void;
  /** Inserts or replaces the object under its key (same as `add`). */
  update(obj: T): void;
  /** Removes the object with the same key; a tombstone is removed by its `key`. Absent → no-op. */
  delete(obj: T | DeletedFinalStateUnknown<T>): void;
  /** Replaces the whole content with `items` and rebuilds every index. */
  replace(items: Iterable<T>, resourceVersion?: string): void;
  /** Records a resourceVersion without changing content (a watch bookmark). */
  bookmark(resourceVersion: string): void;
  /** Registers more index functions and indexes what is already stored. */
  addIndexers(indexers: Indexers<T>): void;
  /** A view with the reader methods only, safe to hand to user code. */
  asReadonly(): ReadonlyIndexer<T>;
}
