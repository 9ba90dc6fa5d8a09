import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';

/** One change to one key. A `Deleted` delta may carry a tombstone. */
export interface Delta<T> {
  /** What happened to the object: `Updated` for a change, `Replaced` for a relist, `Sync` for a resync. */
  readonly type: 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';
  readonly obj: T | DeletedFinalStateUnknown<T>;
}

/** Everything pending for one key, oldest first, as popped from the FIFO. */
export interface Deltas<T> {
  readonly key: string;
  readonly deltas: readonly Delta<T>[];
  /** True while the first Replace's items have not all been popped (client-go's isInInitialList). */
  readonly isInInitialList: boolean;
}
