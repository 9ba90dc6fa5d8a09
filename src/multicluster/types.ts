import type { KubeConfig } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';

/**
 * One cluster of a fleet: a name, unique among the clusters a provider
 * gives at one time, and the KubeConfig whose current context reaches it.
 *
 * ## Example
 * ```ts
 * import type { Cluster } from 'rxkube/core';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const here: Cluster = { name: kc.getCurrentContext(), kubeConfig: kc };
 * ```
 */
export interface Cluster {
  /** Names the cluster in keys, events, errors and metrics; any non-empty string. */
  readonly name: string;
  /** How to reach it: its current context's cluster and user are used. */
  readonly kubeConfig: KubeConfig;
}

/**
 * The clusters of a fleet as they change: an Observable that emits the
 * whole current set each time it changes (not the difference). The contract
 * every provider keeps, and what multi-cluster informers and controllers
 * assume (docs/semantics.md MC-1):
 *
 * - The first emission is the initial set (possibly empty); until it comes,
 *   nothing is listed and `whenSynced` waits.
 * - A name that appears joins, one that disappears leaves, and one whose
 *   KubeConfig reaches somewhere else is replaced; an equal set again, or a
 *   fresh but equal KubeConfig, changes nothing. A duplicate name is ignored.
 * - It should not error for what can heal (a file being rewritten, a hub
 *   that is down) but keep its last set: an error ends every informer and
 *   controller built on it. Completing keeps the last set for good.
 * - It should be shared (`shareReplay({ bufferSize: 1, refCount: true })`),
 *   so a late subscriber gets the current set at once; the ready-made
 *   providers are.
 *
 * ## Example
 * ```ts
 * import { of } from 'rxjs';
 * import type { ClusterProvider } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const euKc: KubeConfig;
 * declare const usKc: KubeConfig;
 *
 * // A fixed fleet is the simplest provider.
 * const fleet: ClusterProvider = of([{ name: 'eu', kubeConfig: euKc }, { name: 'us', kubeConfig: usKc }]);
 * ```
 */
export type ClusterProvider = Observable<readonly Cluster[]>;

/**
 * Why an object left a multi-cluster cache:
 * - `deleted`: its cluster said so (a watch event, or a relist that no longer
 *   lists it, which gives a `DeletedFinalStateUnknown`);
 * - `cluster-removed`: its cluster left the provider's set;
 * - `cluster-unreachable`: its cluster has been unreachable for
 *   `unreachableAfterMs` and the informer was asked to drop what it held
 *   (`whileUnreachable: 'drop'`); it comes back with the cluster;
 * - `cluster-failed`: its cluster answered the list or watch with an error
 *   that retrying cannot change (a 400 or 422), so nothing from it can be
 *   trusted until its KubeConfig changes or it leaves and rejoins.
 *
 * ## Example
 * ```ts
 * import type { ClusterDeleteReason } from 'rxkube/core';
 *
 * const reallyDeleted = (reason: ClusterDeleteReason) => reason === 'deleted';
 * ```
 */
export type ClusterDeleteReason = 'deleted' | 'cluster-removed' | 'cluster-unreachable' | 'cluster-failed';

/**
 * A change to a multi-cluster cache: an informer event with the cluster it
 * happened in and the object's key in the multi-cluster store
 * (`cluster/namespace/name`, see `clusterKey`); a delete also says
 * why. It is an `InformerEvent`, so every operator that takes informer
 * events takes these.
 *
 * ## Example
 * ```ts
 * import type { ClusterEvent } from 'rxkube/core';
 * import type { V1Pod } from '@kubernetes/client-node';
 *
 * const describe = (e: ClusterEvent<V1Pod>) => (e.type === 'delete' ? `${e.key} gone (${e.reason})` : `${e.type} ${e.key}`);
 * ```
 */
export type ClusterEvent<T> =
  | { readonly type: 'add'; readonly obj: T; readonly isInInitialList: boolean; readonly cluster: string; readonly key: string }
  | { readonly type: 'update'; readonly oldObj: T; readonly obj: T; readonly cluster: string; readonly key: string }
  | {
      readonly type: 'delete';
      readonly obj: T | DeletedFinalStateUnknown<T>;
      readonly cluster: string;
      readonly key: string;
      readonly reason: ClusterDeleteReason;
    };
