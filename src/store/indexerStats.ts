// The internal sizes of a store made by createIndexer, which leak tests read
// to prove that churn leaves nothing behind. Internal.

import type { IndexState } from './indexBuckets.js';

/** Internal sizes of a store made by `createIndexer`. */
export interface IndexerStats {
  readonly items: number;
  /** Per index: distinct values (buckets), keys with at least one value, and key entries summed over all buckets. */
  readonly indexes: Readonly<Record<string, { readonly values: number; readonly filedKeys: number; readonly bucketKeys: number }>>;
}

/** Counts the entries of a store's object map and of each of its indexes. */
export function countEntries<T>(items: ReadonlyMap<string, T>, states: readonly IndexState<T>[]): IndexerStats {
  const indexes: Record<string, { values: number; filedKeys: number; bucketKeys: number }> = {};
  for (const s of states) {
    let bucketKeys = 0;
    for (const b of s.buckets.values()) bucketKeys += typeof b === 'string' ? 1 : b.size;
    indexes[s.name] = { values: s.buckets.size, filedKeys: s.filed.size, bucketKeys };
  }
  return { items: items.size, indexes };
}
