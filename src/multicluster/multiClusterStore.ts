// The cache of a multi-cluster informer: one read-only view over the stores
// of its clusters, keyed `cluster/namespace/name` (MC-7). It holds nothing of
// its own, so a fleet costs no more memory than its clusters' caches.

import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { IndexConflictError } from '../store/errors/IndexConflictError.js';
import { IndexNotFoundError } from '../store/errors/IndexNotFoundError.js';
import type { Indexers, ReadonlyIndexer, StoreListOptions } from '../store/types.js';
import { clusterKey, splitClusterKey } from './clusterKey.js';

/** The index every multi-cluster store has: objects by the name of their cluster. */
export const CLUSTER_INDEX = 'cluster';

/**
 * The cache of a multi-cluster informer: every cluster's objects under keys
 * that name their cluster (`cluster/namespace/name`, see {@link clusterKey}),
 * with indexes that work across clusters. Index functions are those of a
 * single-cluster store, run per cluster; `byIndex('namespace', 'default')`
 * answers the `default` namespaces of every cluster. The `cluster` index is
 * always there: `byIndex('cluster', 'eu-1')` is one cluster's objects, and
 * `listIndexFuncValues('cluster')` the clusters that hold any.
 *
 * Unlike a single cluster's store, `keyOf` needs the cluster: an object does
 * not say where it came from. That difference also keeps a multi-cluster
 * informer from being passed where one cluster's informer is expected.
 *
 * ## Example
 * ```ts
 * import { multiClusterInformer, kubeconfigClusters, kubeSource } from 'rxkube';
 *
 * const pods = multiClusterInformer(kubeconfigClusters(), (c) => kubeSource(c.kubeConfig, 'v1/pods'));
 * pods.subscribe();
 * await pods.whenSynced({ timeout: 60_000 });
 * pods.store.getByKey('eu-1/default/web');
 * pods.store.byIndex('cluster', 'us-2').length;
 * pods.store.list({ namespace: 'kube-system', labelSelector: 'k8s-app=kube-dns' }); // in every cluster
 * ```
 */
export interface MultiClusterStore<T> {
  /** Objects cached, over every cluster. */
  readonly size: number;
  /** The object under a multi-cluster key (`cluster/namespace/name`). */
  getByKey(key: string): T | undefined;
  /** The multi-cluster key of `obj` (or of a tombstone) in `cluster`. Throws `KeyError` when `obj` cannot be keyed. */
  keyOf(cluster: string, obj: T | DeletedFinalStateUnknown<T>): string;
  /** Objects of every cluster, optionally filtered by namespace and label/field selectors. */
  list(opts?: StoreListOptions): T[];
  /** Every multi-cluster key. */
  listKeys(): string[];
  /** Objects indexed under `value` by `indexName`, in every cluster. Throws `IndexNotFoundError`. */
  byIndex(indexName: string, value: string): T[];
  /** Multi-cluster keys indexed under `value` by `indexName`, sorted. Throws `IndexNotFoundError`. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value `indexName` holds in any cluster, sorted; `[]` for an unknown index. */
  listIndexFuncValues(indexName: string): string[];
  /** The index functions by name (the `cluster` index is not a function and is not listed). */
  getIndexers(): Indexers<T>;
  /** Adds index functions to every cluster's store, now and as clusters join. Throws `IndexConflictError` for a taken name. */
  addIndexers(indexers: Indexers<T>): void;
}

/** What the store reads from its informer. */
export interface StoreHost<T> {
  /** The store of each cluster present, by name. */
  stores(): Iterable<[string, ReadonlyIndexer<T>]>;
  store(cluster: string): ReadonlyIndexer<T> | undefined;
  /** The index functions every cluster's store has. */
  indexers(): Indexers<T>;
  /** Adds index functions to every cluster's store and to those of clusters yet to join. */
  addIndexers(indexers: Indexers<T>): void;
  /** Keys an object (or tombstone) as a cluster's store would. */
  keyOf(obj: T | DeletedFinalStateUnknown<T>): string;
}

/** The multi-cluster store over `host`'s clusters. */
export function multiClusterStore<T>(host: StoreHost<T>): MultiClusterStore<T> {
  const known = (indexName: string): void => {
    if (indexName !== CLUSTER_INDEX && !(indexName in host.indexers())) throw new IndexNotFoundError(indexName);
  };
  const store: MultiClusterStore<T> = {
    get size() {
      let n = 0;
      for (const [, s] of host.stores()) n += s.size;
      return n;
    },
    getByKey(key) {
      let parts;
      try {
        parts = splitClusterKey(key);
      } catch {
        return undefined;
      }
      return host.store(parts.cluster)?.getByKey(parts.key);
    },
    keyOf(cluster, obj) {
      return clusterKey(cluster, obj instanceof DeletedFinalStateUnknown ? obj.key : host.keyOf(obj));
    },
    list(opts) {
      const out: T[] = [];
      for (const [, s] of host.stores()) for (const obj of s.list(opts)) out.push(obj);
      return out;
    },
    listKeys() {
      const out: string[] = [];
      for (const [name, s] of host.stores()) for (const key of s.listKeys()) out.push(clusterKey(name, key));
      return out;
    },
    byIndex(indexName, value) {
      known(indexName);
      if (indexName === CLUSTER_INDEX) return host.store(value)?.list() ?? [];
      const out: T[] = [];
      for (const [, s] of host.stores()) for (const obj of s.byIndex(indexName, value)) out.push(obj);
      return out;
    },
    indexKeys(indexName, value) {
      known(indexName);
      const out: string[] = [];
      if (indexName === CLUSTER_INDEX) {
        for (const key of host.store(value)?.listKeys() ?? []) out.push(clusterKey(value, key));
      } else {
        for (const [name, s] of host.stores()) for (const key of s.indexKeys(indexName, value)) out.push(clusterKey(name, key));
      }
      return out.sort();
    },
    listIndexFuncValues(indexName) {
      const values = new Set<string>();
      if (indexName === CLUSTER_INDEX) {
        for (const [name, s] of host.stores()) if (s.size > 0) values.add(name);
      } else {
        for (const [, s] of host.stores()) for (const v of s.listIndexFuncValues(indexName)) values.add(v);
      }
      return [...values].sort();
    },
    getIndexers() {
      return host.indexers();
    },
    addIndexers(indexers) {
      if (indexers !== null && typeof indexers === 'object' && CLUSTER_INDEX in indexers) throw new IndexConflictError([CLUSTER_INDEX]);
      host.addIndexers(indexers);
    },
  };
  return Object.freeze(store);
}
