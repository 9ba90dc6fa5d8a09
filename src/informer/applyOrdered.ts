// How an informer made with fifo: 'ordered' applies what orderedFifo hands on (PF-5…PF-8, PF-11).

import { toError } from '../errors/reportError.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { replaceKeyed } from '../store/indexer.js';
import type { KeyedReplaceFailure } from '../store/keyedFiling.js';
import type { OrderedFifoItem, ReplacedAll } from '../operators/orderedTypes.js';
import { applyDeltas, isRecreated, isSameVersion, type DeltaTarget, type Notify } from './applyDeltas.js';

/** Applies one item of the ordered queue: a single watch event, a whole relist, or a whole resync. */
export function applyOrdered<T>(item: OrderedFifoItem<T>, target: DeltaTarget<T>): void {
  if ('deltas' in item) applyDeltas(item, target);
  else if (item.type === 'ReplacedAll') applyReplacedAll(item, target);
  else applySyncAll(target);
}

/**
 * A relist as one step (PF-5): the store is replaced whole before the first
 * notification, so every handler reads the new list; then the deletions it
 * implies, then an add or update per listed object in list order.
 */
function applyReplacedAll<T>(list: ReplacedAll<T>, target: DeltaTarget<T>): void {
  if (!target.current()) return;
  const store = target.store;
  const { items, keys, kept } = list;
  const listed = new Set<string>(keys);
  for (const key of kept) listed.add(key);
  // Read before the swap: what each listed key held, and what the list no longer has.
  const old: (T | undefined)[] = new Array<T | undefined>(items.length);
  for (let i = 0; i < items.length; i++) old[i] = store.getByKey(keys[i] as string);
  const gone: DeletedFinalStateUnknown<T>[] = [];
  for (const key of store.listKeys()) {
    if (!listed.has(key)) gone.push(new DeletedFinalStateUnknown(key, store.getByKey(key)));
  }
  // Kept keys go in with the object the store holds, which the store files again without asking an index function.
  const nextKeys: string[] = [...keys];
  const next: T[] = [...items];
  for (const key of kept) {
    const stored = store.getByKey(key);
    if (stored === undefined) continue;
    nextKeys.push(key);
    next.push(stored);
  }
  let failures: readonly KeyedReplaceFailure[];
  try {
    failures = replaceKeyed(store, nextKeys, next, list.resourceVersion);
  } catch (err) {
    // The store still holds the old list: announcing the list's deletions or objects would describe a store that is not there.
    target.report(toError(err));
    return;
  }
  // Taken at the swap (PF-16): whoever joins from here on was given the new list whole when it joined.
  const notify = target.audience();
  const skipped = reportRefused(failures, target);
  for (const tombstone of gone) {
    if (!target.current()) return;
    notify({ type: 'delete', obj: tombstone }, tombstone.key, false);
  }
  for (let i = 0; i < items.length; i++) {
    if (!target.current()) return;
    if (skipped.has(i)) continue;
    const obj = items[i] as T;
    announce(keys[i] as string, old[i], obj, list.isInInitialList, notify);
  }
}

/** The add, update or delete-then-add one listed object means, as C-4 and S-32 decide it for a single event. */
function announce<T>(key: string, old: T | undefined, obj: T, isInInitialList: boolean, notify: Notify<T>): void {
  if (old === undefined) {
    notify({ type: 'add', obj, isInInitialList }, key, false);
    return;
  }
  if (isRecreated(old, obj)) {
    notify({ type: 'delete', obj: new DeletedFinalStateUnknown(key, old) }, key, false);
    notify({ type: 'add', obj, isInInitialList }, key, false);
    return;
  }
  notify({ type: 'update', oldObj: old, obj }, key, isSameVersion(old, obj));
}

/**
 * The objects the keyed swap left out because an index function refused
 * them are handled like transform failures (PF-10): the key kept its stored
 * copy (or stayed absent), nobody is told of it, the `IndexError` is reported.
 *
 * @returns the positions of the objects left out
 */
function reportRefused<T>(failures: readonly KeyedReplaceFailure[], target: DeltaTarget<T>): ReadonlySet<number> {
  const skipped = new Set<number>();
  for (const { at, error } of failures) {
    target.report(error);
    skipped.add(at);
  }
  return skipped;
}

/** A resync as one step (PF-11): every stored object, unchanged, as a sync update. */
function applySyncAll<T>(target: DeltaTarget<T>): void {
  const store = target.store;
  for (const obj of store.list()) {
    if (!target.current()) return;
    let key: string;
    try {
      key = store.keyOf(obj);
    } catch (err) {
      target.report(toError(err));
      continue;
    }
    target.notify({ type: 'update', oldObj: obj, obj }, key, true);
  }
}
