import { describeObject, messageOf } from '../describe.js';

/**
 * A key function failed (threw, or returned something other than a string)
 * for an object. The store was left unchanged. `cause` is what the key
 * function threw; a `KeyError` wrapping another `KeyError` keeps the chain.
 *
 * ## Example
 * ```ts
 * import { createIndexer, KeyError } from 'rxkube/core';
 *
 * const store = createIndexer();
 * try {
 *   store.add({ metadata: {} });
 * } catch (err) {
 *   if (err instanceof KeyError) console.error(err.message, err.cause);
 *   // couldn't create key for object {"metadata":{}}: object has no metadata.name
 * }
 * ```
 */
export class KeyError extends Error {
  override readonly name: string = 'KeyError';
  /** The object that could not be keyed. */
  readonly obj: unknown;

  /**
   * @param obj the object that could not be keyed.
   * @param cause what the key function threw (or why its result was rejected).
   */
  constructor(obj: unknown, cause: unknown) {
    super(`couldn't create key for object ${describeObject(obj)}: ${messageOf(cause)}`, { cause });
    this.obj = obj;
  }
}
