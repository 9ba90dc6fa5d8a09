import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';

/**
 * What an informer tells its subscribers, in delivery order. The store has
 * already been updated when an event is emitted.
 */
export type InformerEvent<T> =
  | { readonly type: 'add'; readonly obj: T; readonly isInInitialList: boolean }
  | { readonly type: 'update'; readonly oldObj: T; readonly obj: T }
  | { readonly type: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };
