/**
 * A deletion that was inferred rather than observed: the object vanished from
 * a relist while the watch that would have announced its deletion was lost.
 * `obj` is the last state rxkube knew, which may be stale, or `undefined`
 * when nothing was known.
 *
 * ## Example
 * ```ts
 * import { DeletedFinalStateUnknown, type Informer } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 *
 * pods.addHandler({
 *   delete: (obj) => {
 *     const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
 *     console.log(`deleted ${pod?.metadata?.name}`);
 *   },
 * });
 * ```
 */
export class DeletedFinalStateUnknown<T> {
  readonly key: string;
  readonly obj: T | undefined;

  /**
   * @param key the store key of the deleted object.
   * @param obj the last known state, if any.
   */
  constructor(key: string, obj: T | undefined) {
    this.key = key;
    this.obj = obj;
    Object.freeze(this);
  }
}

/**
 * Returns the object inside a tombstone, or the value itself when it is not
 * a tombstone.
 *
 * ## Example
 * ```ts
 * import { unwrapTombstone, type InformerEvent } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const event: InformerEvent<V1Pod>;
 *
 * const pod = unwrapTombstone(event.obj); // V1Pod | undefined
 * ```
 *
 * @param obj an object or a `DeletedFinalStateUnknown`.
 * @returns the object, or `undefined` for a tombstone with no last state.
 */
export function unwrapTombstone<T>(obj: T | DeletedFinalStateUnknown<T>): T | undefined {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}
