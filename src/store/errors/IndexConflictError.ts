/**
 * `addIndexers` was given names the store already has. Nothing was added.
 *
 * ## Example
 * ```ts
 * import { byNamespace } from 'rxkube';
 * import { createIndexer, IndexConflictError } from 'rxkube/core';
 *
 * const store = createIndexer({ indexers: { namespace: byNamespace } });
 * try {
 *   store.addIndexers({ namespace: byNamespace });
 * } catch (err) {
 *   if (err instanceof IndexConflictError) console.error(err.indexNames); // ["namespace"]
 * }
 * ```
 */
export class IndexConflictError extends Error {
  override readonly name: string = 'IndexConflictError';
  /** The names that already existed, sorted. */
  readonly indexNames: readonly string[];

  /** @param indexNames the names that already existed. */
  constructor(indexNames: readonly string[]) {
    const sorted = Object.freeze([...indexNames].sort());
    super(`indexer conflict: ${sorted.join(', ')}`);
    this.indexNames = sorted;
  }
}
