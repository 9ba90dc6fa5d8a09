// One cluster of a multi-cluster informer seen as an informer of that
// cluster alone (a ControllerSource): its events, its store, its sync state.
// Internal; made by MultiClusterInformer.cluster(name).

import { Observable, type Subscriber } from 'rxjs';
import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { IndexNotFoundError } from '../store/errors/IndexNotFoundError.js';
import type { Indexers, ReadonlyIndexer } from '../store/types.js';
import type { ClusterInformer } from './multiClusterInformer.js';
import type { ClusterEvent } from './types.js';

/** What a view reads from its multi-cluster informer. */
export interface ViewHost<T> {
  /** Subscribes to the cluster's events (starting the informer if idle); returns the teardown. */
  attach(subscriber: Subscriber<ClusterEvent<T>>): () => void;
  /** The cluster's store, while it is present. */
  store(): ReadonlyIndexer<T> | undefined;
  readonly status$: Observable<{ readonly synced: boolean }>;
  indexers(): Indexers<T>;
  /** The key function of every cluster's store (a tombstone's own key for a tombstone). */
  keyOf(obj: T | DeletedFinalStateUnknown<T>): string;
}

/** A cluster's view of a multi-cluster informer. */
export function clusterView<T>(name: string, cluster: string, host: ViewHost<T>): ClusterInformer<T> {
  const view = new Observable<ClusterEvent<T>>((subscriber) => host.attach(subscriber)) as Observable<ClusterEvent<T>> & {
    name: string;
    cluster: string;
    store: ReadonlyIndexer<T>;
    status$: Observable<{ readonly synced: boolean }>;
  };
  // While the cluster is absent its store reads as empty, with the same indexes.
  const indexed = (indexName: string): void => {
    if (!(indexName in host.indexers())) throw new IndexNotFoundError(indexName);
  };
  const store: ReadonlyIndexer<T> = {
    get size() {
      return host.store()?.size ?? 0;
    },
    // Keyed as the cluster's store keys, present or not, so the objects of a cluster that just left can still be named.
    keyOf: (obj) => host.keyOf(obj),
    get: (obj) => host.store()?.get(obj),
    getByKey: (key) => host.store()?.getByKey(key),
    list: (opts) => host.store()?.list(opts) ?? [],
    listKeys: () => host.store()?.listKeys() ?? [],
    byIndex: (indexName, value) => {
      const s = host.store();
      if (s !== undefined) return s.byIndex(indexName, value);
      indexed(indexName);
      return [];
    },
    indexKeys: (indexName, value) => {
      const s = host.store();
      if (s !== undefined) return s.indexKeys(indexName, value);
      indexed(indexName);
      return [];
    },
    listIndexFuncValues: (indexName) => host.store()?.listIndexFuncValues(indexName) ?? [],
    index: (indexName, obj) => {
      const s = host.store();
      if (s !== undefined) return s.index(indexName, obj);
      indexed(indexName);
      return [];
    },
    getIndexers: () => host.indexers(),
    lastSyncResourceVersion: () => host.store()?.lastSyncResourceVersion() ?? '',
  };
  view.name = name;
  view.cluster = cluster;
  view.store = Object.freeze(store);
  view.status$ = host.status$;
  return view;
}
