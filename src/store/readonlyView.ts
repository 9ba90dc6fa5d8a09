// The read-only view a store hands to readers (asReadonly): only the read
// methods, forwarded to the store. Internal.

import type { ReadonlyIndexer } from './types.js';

/** A frozen object with only `store`'s read methods. */
export function readonlyView<T>(store: ReadonlyIndexer<T>): ReadonlyIndexer<T> {
  // A separate object, so a reader cannot reach the write methods even with a cast.
  const view: ReadonlyIndexer<T> = {
    get size() {
      return store.size;
    },
    keyOf: (obj) => store.keyOf(obj),
    get: (obj) => store.get(obj),
    getByKey: (key) => store.getByKey(key),
    list: (opts) => store.list(opts),
    listKeys: () => store.listKeys(),
    byIndex: (name, value) => store.byIndex(name, value),
    indexKeys: (name, value) => store.indexKeys(name, value),
    listIndexFuncValues: (name) => store.listIndexFuncValues(name),
    index: (name, obj) => store.index(name, obj),
    getIndexers: () => store.getIndexers(),
    lastSyncResourceVersion: () => store.lastSyncResourceVersion(),
  };
  return Object.freeze(view);
}
