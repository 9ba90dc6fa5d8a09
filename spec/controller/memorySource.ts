import { BehaviorSubject, Observable, Subject, map } from 'rxjs';
import { createIndexer } from '../../src/store/indexer.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import type { KubeObject } from '../../src/store/types.js';
import type { ControllerSource } from '../../src/controller/types.js';

/**
 * An informer-shaped source held in memory, for controller specs that need
 * exact control of events and sync: writes update the store, then emit, as
 * an informer does. It counts its subscribers, so a spec can see when the
 * controller lets go.
 */
export interface MemorySource<T extends KubeObject> extends ControllerSource<T> {
  readonly subscribers: number;
  upsert(obj: T): void;
  remove(key: string, tombstone?: boolean): void;
  /** An informer's resync: an update of every cached object to itself (the same resourceVersion). */
  resync(): void;
  sync(): void;
  fail(err: Error): void;
  complete(): void;
}

export function memorySource<T extends KubeObject>(name = 'memory', opts: { freeze?: boolean } = {}): MemorySource<T> {
  // Unfrozen by default, so specs can build objects freely; { freeze: true } stores them as an informer does.
  const store = createIndexer<T>({ freeze: opts.freeze ?? false });
  const events = new Subject<InformerEvent<T>>();
  const synced = new BehaviorSubject(false);
  let subscribers = 0;
  const stream = new Observable<InformerEvent<T>>((subscriber) => {
    subscribers++;
    // Like an informer: a late subscriber first gets what is cached.
    for (const obj of store.list()) subscriber.next({ type: 'add', obj, isInInitialList: true });
    const inner = events.subscribe(subscriber);
    return () => {
      subscribers--;
      inner.unsubscribe();
    };
  });
  Object.defineProperty(stream, 'subscribers', { get: () => subscribers });
  return Object.assign(stream, {
    name,
    store,
    status$: synced.pipe(map((s) => ({ synced: s }))),
    upsert(obj: T) {
      const old = store.get(obj);
      store.update(obj);
      events.next(old === undefined ? { type: 'add', obj, isInInitialList: !synced.value } : { type: 'update', oldObj: old, obj });
    },
    resync() {
      for (const cached of store.list()) events.next({ type: 'update', oldObj: cached, obj: cached });
    },
    remove(key: string, tombstone = false) {
      const old = store.getByKey(key);
      if (old === undefined) return;
      store.delete(old);
      events.next({ type: 'delete', obj: tombstone ? new DeletedFinalStateUnknown(key, old) : old });
    },
    sync() {
      synced.next(true);
    },
    fail(err: Error) {
      events.error(err);
    },
    complete() {
      events.complete();
    },
  }) as unknown as MemorySource<T>;
}

/** A minimal object for specs. */
export function obj(name: string, extra: { namespace?: string; rv?: string; owner?: { kind: string; name: string; apiVersion?: string }; labels?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Thing',
    metadata: {
      name,
      namespace: extra.namespace ?? 'default',
      uid: `uid-${name}`,
      resourceVersion: extra.rv ?? '1',
      ...(extra.labels !== undefined && { labels: extra.labels }),
      ...(extra.owner !== undefined && {
        ownerReferences: [{ apiVersion: extra.owner.apiVersion ?? 'example.com/v1', kind: extra.owner.kind, name: extra.owner.name, uid: `uid-${extra.owner.name}`, controller: true }],
      }),
    },
  };
}
