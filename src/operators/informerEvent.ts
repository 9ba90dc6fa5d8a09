import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';

/**
 * A change to a cache, as an informer tells its subscribers, in delivery
 * order; the store has already been updated when the event is emitted.
 * It lives with the operators that consume it, below the informer that
 * produces it, so imports run down the layers (docs/architecture.md).
 */
export type InformerEvent<T> =
  | { readonly type: 'add'; readonly obj: T; readonly isInInitialList: boolean }
  | { readonly type: 'update'; readonly oldObj: T; readonly obj: T }
  | { readonly type: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };
