import type { Deltas } from './types.js';

/**
 * A whole list, handed on as one item by `orderedFifo` (client-go's
 * `ReplacedAll`): the consumer applies it to its store in one step before
 * anyone hears of any of it, and infers the deletions itself by comparing
 * the list with the store.
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

/** A resync, handed on as one item (client-go's `SyncAll`): every stored object is delivered again, unchanged. */
export interface SyncAll {
  readonly type: 'SyncAll';
}

/**
 * What `orderedFifo` emits: one watch event as a `Deltas` holding exactly
 * one delta, a whole relist, or a whole resync. Tell them apart with
 * `'deltas' in item`, then `item.type`.
 */
export type OrderedFifoItem<T> = Deltas<T> | ReplacedAll<T> | SyncAll;
