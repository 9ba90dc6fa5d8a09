/**
 * A handler's bounded buffer was full. With `overflow: 'dropOldest'` the
 * oldest pending notification was dropped and `dropped` says which; with
 * `overflow: 'error'` the registration was ended and its pending
 * notifications discarded.
 *
 * ## Example
 * ```ts
 * import { BufferOverflowError, type Informer } from 'rxkube';
 * declare const informer: Informer<unknown>;
 *
 * informer.errors$.subscribe((err) => {
 *   if (err instanceof BufferOverflowError) console.warn('handler fell behind; dropped', err.droppedKey);
 * });
 * ```
 */
export class BufferOverflowError extends Error {
  override readonly name = 'BufferOverflowError';
  /** The configured limit. */
  readonly limit: number;
  /** Key of the dropped notification, for `dropOldest`. */
  readonly droppedKey: string | undefined;

  constructor(message: string, limit: number, droppedKey?: string) {
    super(message);
    this.limit = limit;
    this.droppedKey = droppedKey;
  }
}
