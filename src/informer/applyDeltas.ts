// How an informer turns one key's deltas into store changes and notifications (C-4, C-6, S-18, S-28, S-32).

import { toError } from '../errors/reportError.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { deepFreeze } from '../store/deepFreeze.js';
import { putKeyed, type Indexer } from '../store/indexer.js';
import type { KubeObject } from '../store/types.js';
import type { Deltas } from '../operators/types.js';
import type { InformerEvent } from '../operators/informerEvent.js';

/** Tells listeners of one change; `isSync` marks an update that carries no change. */
export type Notify<T> = (event: InformerEvent<T>, key: string, isSync: boolean) => void;

/** What applying deltas needs from the informer. */
export interface DeltaTarget<T> {
  readonly store: Indexer<T>;
  /** Deep-freeze the final state of deleted objects: the store never holds it, so it did not freeze it. */
  readonly freezeDeleted: boolean;
  /** False once a listener's callback ended the lifetime these deltas belong to: nothing more is applied. */
  current(): boolean;
  /** Tells the listeners, after the store changed; `isSync` marks an update that carries no change. */
  notify: Notify<T>;
  /**
   * A `notify` for the listeners there now only (those of them still there when it is called): a listener
   * joining later was given the store as it is then, so it must not hear again what that store already holds.
   */
  audience(): Notify<T>;
  report(err: Error): void;
}

function uidOf(obj: unknown): string | undefined {
  return (obj as KubeObject | null)?.metadata?.uid;
}

function resourceVersionOf(obj: unknown): string | undefined {
  return (obj as KubeObject | null)?.metadata?.resourceVersion;
}

/** Same key, another object: both have a UID and they differ, so the stored one is gone even if no watch said so (S-32). */
export function isRecreated(old: unknown, obj: unknown): boolean {
  const oldUid = uidOf(old);
  const newUid = uidOf(obj);
  return oldUid !== undefined && newUid !== undefined && oldUid !== newUid;
}

/** An update that carries no change: the same resourceVersion as the stored object (S-18). */
export function isSameVersion(old: unknown, obj: unknown): boolean {
  const rv = resourceVersionOf(obj);
  return rv !== undefined && rv === resourceVersionOf(old);
}

/** Applies one key's deltas to the store, oldest first, notifying after each. */
export function applyDeltas<T>(deltas: Deltas<T>, target: DeltaTarget<T>): void {
  const key = deltas.key;
  const store = target.store;
  for (const delta of deltas.deltas) {
    if (!target.current()) return;
    try {
      if (delta.type === 'Deleted') {
        store.delete(delta.obj);
        // Every handler shares the deleted object, so it is frozen like a stored one.
        if (target.freezeDeleted) deepFreeze(delta.obj instanceof DeletedFinalStateUnknown ? delta.obj.obj : delta.obj);
        target.notify({ type: 'delete', obj: delta.obj }, key, false);
        continue;
      }
      const obj = delta.obj as T;
      const old = store.getByKey(key);
      // The queue keyed the object; the store takes that key rather than working it out again.
      if (old === undefined) {
        putKeyed(store, key, obj);
        target.notify({ type: 'add', obj, isInInitialList: deltas.isInInitialList }, key, false);
      } else if (isRecreated(old, obj)) {
        store.delete(old);
        target.notify({ type: 'delete', obj: new DeletedFinalStateUnknown(key, old) }, key, false);
        putKeyed(store, key, obj);
        target.notify({ type: 'add', obj, isInInitialList: deltas.isInInitialList }, key, false);
      } else {
        putKeyed(store, key, obj);
        target.notify({ type: 'update', oldObj: old, obj }, key, isSameVersion(old, obj));
      }
    } catch (err) {
      // A key or index function threw: the store is unchanged for this delta and nothing is announced.
      target.report(toError(err));
    }
  }
}
