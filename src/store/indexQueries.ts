// Reading the indexer's indexes: the keys and the objects filed under a value,
// and the counts of what an index holds. Internal.

import type { IndexState } from './indexBuckets.js';

/** The objects filed under `value` in `state`, read from `items`; a fresh array. */
export function objectsIn<T>(state: IndexState<T>, value: string, items: Map<string, T>): T[] {
  const b = state.buckets.get(value);
  if (b === undefined) return [];
  if (typeof b === 'string') return [items.get(b) as T];
  const out = new Array<T>(b.size);
  let i = 0;
  for (const k of b) out[i++] = items.get(k) as T;
  return out;
}

/** The keys filed under `value` in `state`, sorted; a fresh array. */
export function keysIn<T>(state: IndexState<T>, value: string): string[] {
  const b = state.buckets.get(value);
  if (b === undefined) return [];
  if (typeof b === 'string') return [b];
  return Array.from(b).sort();
}

/** The objects filed under any of `values` in `state`, each once, read from `items`. */
export function objectsUnderAny<T>(state: IndexState<T>, values: readonly string[], items: Map<string, T>): T[] {
  const keys = new Set<string>();
  for (const v of values) {
    const b = state.buckets.get(v);
    if (b === undefined) continue;
    if (typeof b === 'string') keys.add(b);
    else for (const k of b) keys.add(k);
  }
  const out: T[] = [];
  for (const k of keys) out.push(items.get(k) as T);
  return out;
}
