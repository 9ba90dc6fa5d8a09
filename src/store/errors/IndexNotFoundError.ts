/**
 * A query named an index the store does not have (`byIndex`, `indexKeys`,
 * `index`). `listIndexFuncValues` does not throw it: it answers `[]`, as
 * client-go does.
 *
 * ## Example
 * ```ts
 * import { createIndexer, IndexNotFoundError } from 'rxkube/core';
 *
 * try {
 *   createIndexer().byIndex('namespace', 'default');
 * } catch (err) {
 *   if (err instanceof IndexNotFoundError) console.error(err.indexName); // "namespace"
 * }
 * ```
 */
export class IndexNotFoundError extends Error {
  override readonly name: string = 'IndexNotFoundError';
  /** The index that was asked for. */
  readonly indexName: string;

  /** @param indexName the index that was asked for. */
  constructor(indexName: string) {
    super(`Index with name ${indexName} does not exist`);
    this.indexName = indexName;
  }
}
