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
 *   // couldn't create key for object an object with keys ["metadata"]: object has no metadata.name
 * }
 * ```
 */
export class KeyError extends Error {
  override readonly name: string = 'KeyError';
  /** The object that could not be keyed (not enumerable, so serialising the error leaves it out). */
  declare readonly obj: unknown;

  /**
   * @param obj the object that could not be keyed.
   * @param cause what the key function threw (or why its result was rejected).
   */
  constructor(obj: unknown, cause: unknown) {
    super(`couldn't create key for object ${describeObject(obj)}: ${messageOf(cause)}`, { cause });
    // Not enumerable: a logger that serialises an error's fields must not write the object (it may be a Secret).
    Object.defineProperty(this, 'obj', { value: obj, enumerable: false, writable: false, configurable: true });
  }
}
