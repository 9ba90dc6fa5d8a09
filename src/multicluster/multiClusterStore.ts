// The cache of a multi-cluster informer: one read-only view over the stores
// of its clusters, keyed `cluster/namespace/name` (MC-7). It holds nothing of
// its own, so a fleet costs no more memory than its clusters' caches.

import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { IndexConflictError } from '../store/errors/IndexConflictError.js';
import { IndexNotFoundError } from '../store/errors/IndexNotFoundError.js';
import type { Indexer, Indexers, ReadonlyIndexer, StoreListOptions } from '../store/types.js';
import type { Member } from './clusterMember.js';
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
 * not say where it came from (MC-7).
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

/**
 * The multi-cluster store over the clusters present.
 * @param members the clusters present, by name.
 * @param absent the empty store of a cluster not present: it holds the index functions every cluster's store has
 *   (and clusters yet to join will get) and keys objects as they do.
 */
export function multiClusterStore<T>(members: ReadonlyMap<string, Member<T>>, absent: Indexer<T>): MultiClusterStore<T> {
  const known = (indexName: string): void => {
    if (indexName !== CLUSTER_INDEX && !(indexName in absent.getIndexers())) throw new IndexNotFoundError(indexName);
  };
  /** Each present cluster's store with its name, and `f` of each, flattened. */
  const over = <R>(f: (s: ReadonlyIndexer<T>, name: string) => readonly R[]): R[] =>
    [...members].flatMap(([name, m]) => (m.store === undefined ? [] : f(m.store, name)));
  const keysOf = (cluster: string, keys: readonly string[]): string[] => keys.map((key) => clusterKey(cluster, key));
  const store: MultiClusterStore<T> = {
    get size() {
      return over((s) => [s.size]).reduce((a, b) => a + b, 0);
    },
    getByKey(key) {
      let parts;
      try {
        parts = splitClusterKey(key);
      } catch {
        return undefined;
      }
      return members.get(parts.cluster)?.store?.getByKey(parts.key);
    },
    keyOf: (cluster, obj) => clusterKey(cluster, absent.keyOf(obj)),
    list: (opts) => over((s) => s.list(opts)),
    listKeys: () => over((s, name) => keysOf(name, s.listKeys())),
    byIndex(indexName, value) {
      known(indexName);
      if (indexName === CLUSTER_INDEX) return members.get(value)?.store?.list() ?? [];
      return over((s) => s.byIndex(indexName, value));
    },
    indexKeys(indexName, value) {
      known(indexName);
      if (indexName === CLUSTER_INDEX) return keysOf(value, members.get(value)?.store?.listKeys() ?? []).sort();
      return over((s, name) => keysOf(name, s.indexKeys(indexName, value))).sort();
    },
    listIndexFuncValues(indexName) {
      const values = over((s, name) => (indexName !== CLUSTER_INDEX ? s.listIndexFuncValues(indexName) : s.size > 0 ? [name] : []));
      return [...new Set(values)].sort();
    },
    getIndexers: () => absent.getIndexers(),
    addIndexers(more) {
      if (more !== null && typeof more === 'object' && CLUSTER_INDEX in more) throw new IndexConflictError([CLUSTER_INDEX]);
      const have = absent.getIndexers();
      const taken = Object.keys(more).filter((name) => name in have && have[name] !== more[name]);
      if (taken.length > 0) throw new IndexConflictError(taken);
      const fresh = Object.fromEntries(Object.entries(more).filter(([name]) => !(name in have)));
      if (Object.keys(fresh).length === 0) return;
      // Checked here first (a value that is not a function throws), so no cluster gets half of them.
      absent.addIndexers(fresh);
      for (const m of members.values()) m.addIndexers(fresh);
    },
  };
  return Object.freeze(store);
}
