import { setImmediate as yieldToIo } from 'node:timers/promises';
import { DeletedFinalStateUnknown, metaNamespaceKey, type EventHandler, type InformerEvent, type KubeObject, type ReadonlyIndexer } from 'rxkube';
import type { State } from './workload.js';

/** How a view receives its events: the informer's own subscription, or a handler under one buffer policy. */
export type ViewKind = 'observer' | 'unbounded' | 'coalesce' | 'limit-error' | 'dropOldest' | 'late';

interface Seen {
  readonly rv: string;
  readonly uid: string;
}

function rvOf(obj: KubeObject): string {
  return obj.metadata?.resourceVersion ?? '';
}

function keyOfDeleted(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): string {
  return obj instanceof DeletedFinalStateUnknown ? obj.key : metaNamespaceKey(obj);
}

/**
 * What one consumer of an informer believes, rebuilt from its add, update
 * and delete events alone, checked as each event arrives: no add for a key
 * it holds, no update or delete for a key it does not, and an update's old
 * object is the one it last saw. A `dropOldest` view may legitimately break
 * these rules for keys whose notifications were dropped, so its breaches are
 * kept aside and judged at the end against the keys reported dropped.
 */
export class View {
  readonly name: string;
  readonly kind: ViewKind;
  readonly #state = new Map<string, Seen>();
  // Breaches of the event rules; for a dropOldest view, candidates judged against the dropped keys at the end.
  readonly #breaches: { readonly key: string; readonly message: string }[] = [];
  /** Every delivered event as `type key rv`, for comparing a lossy view with a lossless one of the same stream. */
  readonly log: string[] = [];
  // The store the observer view is checked against at each event (C-6: the store is updated before anyone hears).
  readonly #store: ReadonlyIndexer<KubeObject> | undefined;

  constructor(name: string, kind: ViewKind, store?: ReadonlyIndexer<KubeObject>) {
    this.name = name;
    this.kind = kind;
    this.#store = store;
  }

  get size(): number {
    return this.#state.size;
  }

  /** Applies one event to the view, recording any breach of the rules. */
  apply(event: InformerEvent<KubeObject>): void {
    if (event.type === 'delete') {
      const key = keyOfDeleted(event.obj);
      this.log.push(`delete ${key}`);
      if (!this.#state.delete(key)) this.#breach(key, `delete of ${key}, which it never saw added`);
      if (this.#store?.getByKey(key) !== undefined) this.#breach(key, `delete of ${key} while the store still holds it`);
      return;
    }
    const obj = event.obj;
    const key = metaNamespaceKey(obj);
    const rv = rvOf(obj);
    this.log.push(`${event.type} ${key} ${rv}`);
    const held = this.#state.get(key);
    if (event.type === 'add') {
      if (held !== undefined) this.#breach(key, `add of ${key} (rv ${rv}) while it holds rv ${held.rv}`);
    } else if (held === undefined) {
      this.#breach(key, `update of ${key} (rv ${rv}), which it never saw added`);
    } else if (rvOf(event.oldObj) !== held.rv) {
      this.#breach(key, `update of ${key} whose old object has rv ${rvOf(event.oldObj)}, but it last saw rv ${held.rv}`);
    }
    if (this.#store !== undefined) {
      const stored = this.#store.getByKey(key);
      if (stored === undefined || rvOf(stored) !== rv) this.#breach(key, `${event.type} of ${key} rv ${rv} while the store holds ${stored === undefined ? 'nothing' : `rv ${rvOf(stored)}`}`);
    }
    this.#state.set(key, { rv, uid: obj.metadata?.uid ?? '' });
  }

  /**
   * A handler feeding this view. `slow` handlers yield to I/O on every event, so their buffers really fill:
   * coalescing then merges and a bounded buffer drops.
   */
  handler(slow: boolean): EventHandler<KubeObject> {
    const settle = slow ? () => yieldToIo() : undefined;
    return {
      add: (obj, isInInitialList) => {
        this.apply({ type: 'add', obj, isInInitialList });
        return settle?.();
      },
      update: (oldObj, obj) => {
        this.apply({ type: 'update', oldObj, obj });
        return settle?.();
      },
      delete: (obj) => {
        this.apply({ type: 'delete', obj });
        return settle?.();
      },
    };
  }

  /** Breaches of the rules; for a dropOldest view, only those on keys never reported dropped. */
  breaches(dropped: ReadonlySet<string> = new Set()): string[] {
    return this.#breaches.filter((b) => this.kind !== 'dropOldest' || !dropped.has(b.key)).map((b) => `${this.name}: ${b.message}`);
  }

  #breach(key: string, message: string): void {
    this.#breaches.push({ key, message });
  }

  /** Differences from the expected state ; keys in `skip` are left out. */
  diff(expected: State, skip: ReadonlySet<string> = new Set()): string[] {
    const out: string[] = [];
    for (const [key, rv] of expected) {
      if (skip.has(key)) continue;
      const seen = this.#state.get(key);
      if (seen === undefined) out.push(`${key} missing (server rv ${rv})`);
      else if (seen.rv !== rv) out.push(`${key} at rv ${seen.rv}, server rv ${rv}`);
    }
    for (const [key, seen] of this.#state) {
      if (!skip.has(key) && !expected.has(key)) out.push(`${key} (rv ${seen.rv}) not on the server`);
    }
    return out;
  }
}

/** Differences between an informer's store and the expected state, empty when they are equal. */
export function storeDiff(store: ReadonlyIndexer<KubeObject>, expected: State): string[] {
  const out: string[] = [];
  const keys = store.listKeys();
  for (const key of keys) {
    const want = expected.get(key);
    const obj = store.getByKey(key);
    const rv = obj === undefined ? '' : rvOf(obj);
    if (want === undefined) out.push(`${key} (rv ${rv}) not on the server`);
    else if (want !== rv) out.push(`${key} at rv ${rv}, server rv ${want}`);
  }
  if (keys.length !== expected.size || out.length > 0) {
    const held = new Set(keys);
    for (const [key, rv] of expected) if (!held.has(key)) out.push(`${key} missing (server rv ${rv})`);
  }
  return out;
}

/** `lossy` is `lossless` with some entries left out, in the same order. */
export function isSubsequence(lossy: readonly string[], lossless: readonly string[]): boolean {
  let i = 0;
  for (const entry of lossless) {
    if (i < lossy.length && lossy[i] === entry) i++;
  }
  return i === lossy.length;
}
