/**
 * A user `transform` threw while deltaFifo prepared an object for the queue.
 * The object was not queued; the stream carries on with the next event.
 * `key` and `obj` name the object as it arrived (before the transform), and
 * `cause` is what the transform threw.
 *
 * ## Example
 * ```ts
 * import { deltaFifo, TransformError, type ReflectorEvent } from 'rxkube/core';
 * import type { Observable } from 'rxjs';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const reflectorEvents$: Observable<ReflectorEvent<V1Pod>>;
 * declare function stripManagedFields(pod: V1Pod): V1Pod;
 *
 * reflectorEvents$.pipe(
 *   deltaFifo({
 *     transform: stripManagedFields,
 *     onError: (err) => {
 *       if (err instanceof TransformError) console.warn(`dropped ${err.key}:`, err.cause);
 *     },
 *   }),
 * );
 * ```
 */
export class TransformError<T = unknown> extends Error {
  override readonly name = 'TransformError';
  /** The store key of the object the transform rejected. */
  readonly key: string;
  /** The object as it arrived, before the transform ran. */
  readonly obj: T;

  /**
   * @param key the store key of the object.
   * @param obj the untransformed object.
   * @param cause what the transform threw.
   */
  constructor(key: string, obj: T, cause: unknown) {
    super(`transform failed for object ${JSON.stringify(key)}: ${describe(cause)}`, { cause });
    this.key = key;
    this.obj = obj;
  }
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
