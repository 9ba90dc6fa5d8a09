/**
 * Something went wrong with one cluster of a fleet: it refused a connection
 * or the credentials, stayed unreachable, failed for good, or its entry in
 * the provider was unusable. `cluster` names it and `cause` is the
 * underlying error (a `ConnectionError`, a `KubeApiError` such as a 401 or
 * 403, … or a `TypeError` for a bad KubeConfig), so one `instanceof` check
 * finds the cluster and the usual guards on `cause` (`isUnauthorized`, …)
 * find what happened. The other clusters carry on meanwhile.
 *
 * ## Example
 * ```ts
 * import { isUnauthorized, type MultiClusterInformer } from 'rxkube';
 * import { ClusterError } from 'rxkube/core';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: MultiClusterInformer<V1Deployment>;
 *
 * deployments.errors$.subscribe((err) => {
 *   if (err instanceof ClusterError && isUnauthorized(err.cause)) console.warn(`${err.cluster}: credentials refused`);
 * });
 * ```
 */
export class ClusterError extends Error {
  override readonly name = 'ClusterError';
  /** The cluster's name, as its provider gave it. */
  readonly cluster: string;

  /**
   * @param cluster the cluster's name.
   * @param message what happened, without the cluster's name (it is prefixed).
   * @param cause the underlying error, if any.
   */
  constructor(cluster: string, message: string, cause?: unknown) {
    super(`cluster ${JSON.stringify(cluster)}: ${message}`, cause === undefined ? undefined : { cause });
    this.cluster = cluster;
  }
}
