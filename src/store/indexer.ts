// The indexed store's entry points: createIndexer (client-go's Indexer), the
// informer's keyed ways in, and the leak tests' counts. The store itself is
// in storeIndexer.ts.

import type { KeyedReplaceFailure } from './keyedFiling.js';
import { checkIndexerOptions, type IndexerOptions } from './indexerOptions.js';
import type { IndexerStats } from './indexerStats.js';
import { StoreIndexer } from './storeIndexer.js';
import type { Indexer, KubeObject, ReadonlyIndexer } from './types.js';

export type { Indexer, ReadonlyIndexer, StoreListOptions } from './types.js';
export type { IndexerOptions } from './indexerOptions.js';
export type { IndexerStats } from './indexerStats.js';

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
