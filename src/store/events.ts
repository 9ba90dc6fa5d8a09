import type { DeletedFinalStateUnknown } from './DeletedFinalStateUnknown.js';

/**
 * A change to a cache, as an informer tells its subscribers, in delivery
 * order; the store has already been updated when the event is emitted.
 * It lives beside the store because both the operators that consume it and
 * the informer that produces it build on the store.
 */
export type InformerEvent<T> =
  | { readonly type: 'add'; readonly obj: T; readonly isInInitialList: boolean }
  | { readonly type: 'update'; readonly oldObj: T; readonly obj: T }
  | { readonly type: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };
