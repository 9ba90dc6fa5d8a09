// Keys of a multi-cluster store: `cluster/namespace/name`. The cluster name
// is escaped so that any name works (kubeconfig context names such as EKS's
// `arn:aws:eks:…:cluster/prod` hold a `/`) while the usual ones read as they are.

import { describeValue } from '../options/validate.js';

// Only the separator and the escape character itself are escaped, so `%` in a key always starts one of these two.
const ESCAPES: Readonly<Record<string, string>> = { '%': '%25', '/': '%2F' };
const UNESCAPES: Readonly<Record<string, string>> = { '%25': '%', '%2F': '/' };

/**
 * The key of an object in a multi-cluster store: the cluster's name, a
 * `/`, then the object's key in its cluster (`namespace/name`, or `name`
 * when cluster-scoped). A `/` or `%` in the cluster name is written `%2F`
 * or `%25`, so every key splits back into exactly one (cluster, key) pair.
 *
 * ## Example
 * ```ts
 * import { clusterKey } from 'rxkube';
 *
 * clusterKey('eu-1', 'default/web');            // 'eu-1/default/web'
 * clusterKey('arn:aws:eks:x:cluster/prod', 'n1'); // 'arn:aws:eks:x:cluster%2Fprod/n1'
 * ```
 *
 * @param cluster the cluster's name.
 * @param key the object's key within its cluster.
 * @returns the multi-cluster key.
 * @throws {TypeError} when `cluster` is not a non-empty string or `key` not a string.
 */
export function clusterKey(cluster: string, key: string): string {
  if (typeof cluster !== 'string' || cluster === '') throw new TypeError(`clusterKey: cluster must be a non-empty string, got ${describeValue(cluster)}`);
  if (typeof key !== 'string') throw new TypeError(`clusterKey: key must be a string, got ${describeValue(key)}`);
  return `${cluster.replace(/[%/]/g, (c) => ESCAPES[c] as string)}/${key}`;
}

/**
 * Splits a key made by {@link clusterKey} into the cluster's name and the
 * object's key within that cluster.
 *
 * ## Example
 * ```ts
 * import { splitClusterKey } from 'rxkube';
 *
 * splitClusterKey('eu-1/default/web'); // { cluster: 'eu-1', key: 'default/web' }
 * ```
 *
 * @param key a multi-cluster key.
 * @returns the cluster and the key within it.
 * @throws {TypeError} for a key with no cluster part.
 */
export function splitClusterKey(key: string): { readonly cluster: string; readonly key: string } {
  const slash = typeof key === 'string' ? key.indexOf('/') : -1;
  if (slash <= 0) throw new TypeError(`splitClusterKey: ${JSON.stringify(key)} is not a multi-cluster key (cluster/namespace/name)`);
  return { cluster: key.slice(0, slash).replace(/%25|%2F/g, (e) => UNESCAPES[e] as string), key: key.slice(slash + 1) };
}
