// How the indexer files a list the caller keyed already, leaving out what an index function refuses (PF-10). Internal.

import { IndexError } from './errors/IndexError.js';
import { valuesOf, type IndexState, type Values } from './indexBuckets.js';

/** An object a keyed replace left out: its position in the list and what its index function threw. */
export interface KeyedReplaceFailure {
  readonly at: number;
  readonly error: IndexError;
}

/** The new content and its index values, ready to swap in, and the objects left out. */
export interface KeyedFiling<T> {
  readonly next: Map<string, T>;
  readonly filedPerIndex: Map<string, Values>[];
  readonly failures: KeyedReplaceFailure[];
}

/**
 * Works out every index value of `items[i]` under `keys[i]` once. An object
 * an index function refuses keeps the stored copy of its key (or its key
 * stays absent, or keeps an earlier duplicate); the object the store holds
 * already reuses the values it was filed under. Throws only what is not an
 * `IndexError`.
 */
export function fileKeyed<T>(
  indexes: readonly IndexState<T>[],
  stored: ReadonlyMap<string, T>,
  keys: readonly string[],
  items: readonly T[],
): KeyedFiling<T> {
  const next = new Map<string, T>();
  const filedPerIndex = indexes.map(() => new Map<string, Values>());
  const failures: KeyedReplaceFailure[] = [];
  const pending: (Values | undefined)[] = new Array<Values | undefined>(indexes.length);
  for (let i = 0; i < items.length; i++) {
    const key = keys[i] as string;
    let obj = items[i] as T;
    const old = stored.get(key);
    try {
      for (let j = 0; j < indexes.length; j++) pending[j] = obj === old ? indexes[j]?.filed.get(key) : valuesOf(indexes[j] as IndexState<T>, obj);
    } catch (err) {
      if (!(err instanceof IndexError)) throw err;
      failures.push({ at: i, error: err });
      if (next.has(key) || old === undefined) continue;
      obj = old;
      for (let j = 0; j < indexes.length; j++) pending[j] = indexes[j]?.filed.get(key);
    }
    next.set(key, obj);
    for (let j = 0; j < indexes.length; j++) {
      const values = pending[j];
      if (values === undefined) filedPerIndex[j]?.delete(key);
      else filedPerIndex[j]?.set(key, values);
    }
  }
  return { next, filedPerIndex, failures };
}
