import type { Deltas } from './types.js';

/**
 * A whole list, handed on as one item by `orderedFifo` (client-go's
 * `ReplacedAll`): the consumer applies it to its store in one step before
 * anyone hears of any of it, and infers the deletions itself by comparing
 * the list with the store.
 *
 * ## Example
 * ```ts
 * import type { V1Pod } from '@kubernetes/client-node';
 * import { createIndexer, type ReplacedAll } from 'rxkube/core';
 *
 * const store = createIndexer<V1Pod>();
 * function applyList(list: ReplacedAll<V1Pod>): string[] {
 *   const listed = new Set([...list.keys, ...list.kept]);
 *   const gone = store.listKeys().filter((key) => !listed.has(key));
 *   store.replace(list.items, list.resourceVersion); // one step: readers never see half a list
 *   return gone; // the deletions the list implies
 * }
 * ```
 */
export interface ReplacedAll<T> {
  readonly type: 'ReplacedAll';
  /** The listed objects, transformed, in list order. */
  readonly items: readonly T[];
  /** `keys[i]` is the key of `items[i]`, computed once by the queue. */
  readonly keys: readonly string[];
  /** Listed keys whose object could not be transformed: the stored copy stays (it is neither replaced nor deleted). */
  readonly kept: readonly string[];
  /** The list's resourceVersion. */
  readonly resourceVersion: string;
  /** True when this is the first list of the subscription (client-go's isInInitialList). */
  readonly isInInitialList: boolean;
}

/**
 * A resync, handed on as one item (client-go's `SyncAll`): every stored
 * object is delivered again, unchanged, in its turn among the other items,
 * so it carries the newest state of each.
 *
 * ## Example
 * ```ts
 * import type { V1Pod } from '@kubernetes/client-node';
 * import type { OrderedFifoItem } from 'rxkube/core';
 *
 * const isResync = (item: OrderedFifoItem<V1Pod>): boolean => !('deltas' in item) && item.type === 'SyncAll';
 * ```
 */
export interface SyncAll {
  readonly type: 'SyncAll';
}

/**
 * What `orderedFifo` emits: one watch event as a `Deltas` holding exactly
 * one delta, a whole relist, or a whole resync. Tell them apart with
 * `'deltas' in item`, then `item.type`.
 *
 * ## Example
 * ```ts
 * import type { V1Pod } from '@kubernetes/client-node';
 * import type { OrderedFifoItem } from 'rxkube/core';
 *
 * function describe(item: OrderedFifoItem<V1Pod>): string {
 *   if ('deltas' in item) return `${item.deltas[0]?.type} ${item.key}`;
 *   return item.type === 'ReplacedAll' ? `relist of ${item.items.length}` : 'resync';
 * }
 * ```
 */
export type OrderedFifoItem<T> = Deltas<T> | ReplacedAll<T> | SyncAll;
