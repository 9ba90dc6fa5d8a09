import { describeObject, messageOf } from '../describe.js';

/**
 * An index function failed (threw, or returned something other than an
 * array of strings) for an object. The store was left unchanged. `cause` is
 * what the index function threw.
 *
 * ## Example
 * ```ts
 * import { createIndexer, IndexError } from 'rxkube/core';
 *
 * const store = createIndexer({ indexers: { owner: (o) => [o.metadata!.ownerReferences![0]!.uid] } });
 * try {
 *   store.add({ metadata: { name: 'orphan' } });
 * } catch (err) {
 *   if (err instanceof IndexError) console.error(err.indexName, err.message);
 *   // owner  index function "owner" failed for object orphan: Cannot read properties of undefined …
 * }
 * ```
 */
export class IndexError extends Error {
  override readonly name: string = 'IndexError';
  /** The name of the index whose function failed. */
  readonly indexName: string;
  /** The object being indexed (not enumerable, so serialising the error leaves it out). */
  declare readonly obj: unknown;

  /**
   * @param indexName the index whose function failed.
   * @param obj the object being indexed.
   * @param cause what the index function threw (or why its result was rejected).
   */
  constructor(indexName: string, obj: unknown, cause: unknown) {
    super(`index function ${JSON.stringify(indexName)} failed for object ${describeObject(obj)}: ${messageOf(cause)}`, { cause });
    this.indexName = indexName;
    // Not enumerable: a logger that serialises an error's fields must not write the object (it may be a Secret).
    Object.defineProperty(this, 'obj', { value: obj, enumerable: false, writable: false, configurable: true });
  }
}
