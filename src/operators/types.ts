import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';

/**
 * What reflect() emits: server facts in the order they were learned.
 * `Replace` follows every (re)list with the complete set of objects. With
 * `listDelivery: 'pages'` a paged list arrives instead as it downloads: a
 * `ReplacePage` per LIST page, then one `ReplaceEnd`. `first` marks a page
 * that starts a list (a new list, or one started over when its continue
 * token expired): what earlier pages listed no longer counts. At
 * `ReplaceEnd` every key not listed since the last `first` page is gone. A
 * list that fails part-way emits no `ReplaceEnd`; its pages were true
 * states of the server, and the next list starts with a `first` page.
 */
export type ReflectorEvent<T> =
  | { readonly type: 'Replace'; readonly items: readonly T[]; readonly resourceVersion: string }
  | { readonly type: 'ReplacePage'; readonly items: readonly T[]; readonly first: boolean }
  | { readonly type: 'ReplaceEnd'; readonly resourceVersion: string }
  | { readonly type: 'Added'; readonly obj: T; readonly resourceVersion: string }
  | { readonly type: 'Modified'; readonly obj: T; readonly resourceVersion: string }
  | { readonly type: 'Deleted'; readonly obj: T; readonly resourceVersion: string }
  | { readonly type: 'Bookmark'; readonly resourceVersion: string }
  | { readonly type: 'Resync' };

/** What happened to an object, as a DeltaFIFO records it (`Updated` for a change, `Replaced` for a relist, `Sync` for a resync). */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/** One change to one key. A `Deleted` delta may carry a tombstone. */
export interface Delta<T> {
  readonly type: DeltaType;
  readonly obj: T | DeletedFinalStateUnknown<T>;
}

/** Everything pending for one key, oldest first, as popped from the FIFO. */
export interface Deltas<T> {
  readonly key: string;
  readonly deltas: readonly Delta<T>[];
  /** True while the first Replace's items have not all been popped (client-go's isInInitialList). */
  readonly isInInitialList: boolean;
}
