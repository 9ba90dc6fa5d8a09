import type { Observable } from 'rxjs';
import type { InformerOptions, WhenSyncedOptions } from '../informer/informer.js';
import type { ListerWatcher } from '../sources/types.js';
import type { KubeObject, ReadonlyIndexer } from '../store/types.js';
import type { ClusterStatus } from './clusterMember.js';
import type { MultiClusterStore } from './multiClusterStore.js';
import { SharedMultiClusterInformer } from './SharedMultiClusterInformer.js';
import type { Cluster, ClusterEvent, ClusterProvider } from './types.js';

/**
 * Options of {@link multiClusterInformer}: those of `informer()`, applied to
 * each cluster's informer, and what to do about clusters that fail.
 *
 * ## Example
 * ```ts
 * import { byLabel } from 'rxkube';
 * import { type MultiClusterInformerOptions } from 'rxkube/core';
 * import type { V1Pod } from '@kubernetes/client-node';
 *
 * const opts: MultiClusterInformerOptions<V1Pod> = { indexers: { app: byLabel('app') }, whileUnreachable: 'drop', unreachableAfterMs: 30_000 };
 * ```
 */
export interface MultiClusterInformerOptions<T> extends Omit<InformerOptions<T>, 'resyncPeriod' | 'onError' | 'name'> {
  /**
   * What happens to the objects of a cluster that has been unreachable for
   * `unreachableAfterMs`: `'keep'` them, stale, as client-go keeps its cache
   * during a network partition (they are brought up to date when the
   * cluster answers again, with events for what changed meanwhile), or
   * `'drop'` them, each as a delete with reason `cluster-unreachable`
   * (they come back as adds once the cluster answers: nothing acts on what
   * might no longer be there).
   * @default 'keep'
   */
  readonly whileUnreachable?: 'keep' | 'drop';
  /**
   * How long a cluster's list or watch must keep failing (refused
   * connections, refused credentials, 5xx, …; every retry failing, no watch
   * in between) before the cluster counts as unreachable: its state says so,
   * a `ClusterError` is reported, `whenSynced` stops waiting for it, and
   * `whileUnreachable` applies. Each failure is reported as it happens
   * anyway, and retried with backoff throughout.
   * @default 10_000
   */
  readonly unreachableAfterMs?: number;
  /**
   * Receives every error, each a `ClusterError` naming its cluster except a
   * provider's own. When absent, errors go to `errors$` subscribers, else to
   * the process reporter.
   * @default undefined (errors$ subscribers, else stderr)
   */
  readonly onError?: (err: Error) => void;
  /** A name for messages and status. @default 'multi-cluster informer' */
  readonly name?: string;
}

/**
 * Where a multi-cluster informer stands, on its `status$`: `idle` before its
 * first subscriber and after its last one left, `running` in between,
 * `failed` after its provider failed; `synced` as `hasSynced()`; and each
 * cluster present, by name.
 *
 * ## Example
 * ```ts
 * import type { MultiClusterStatus } from 'rxkube/core';
 *
 * const away = (s: MultiClusterStatus) => s.clusters.filter((c) => c.state === 'unreachable').map((c) => c.name);
 * ```
 */
export interface MultiClusterStatus {
  readonly state: 'idle' | 'running' | 'failed';
  readonly synced: boolean;
  /** The clusters present, sorted by name. */
  readonly clusters: readonly ClusterStatus[];
  /** Errors met so far (everything sent on `errors$`). */
  readonly errors: number;
  readonly lastError: Error | undefined;
}

/**
 * One cluster of a multi-cluster informer, as an informer of that cluster
 * alone: its events (with the cluster in them), its store (keyed
 * `namespace/name`, empty while the cluster is absent) and whether it has
 * synced. Subscribing to it keeps the multi-cluster informer running. It is
 * what a controller needs (a `ControllerSource`), which is how
 * `multiClusterController` runs one controller per cluster.
 *
 * ## Example
 * ```ts
 * import { controller, type MultiClusterInformer, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: MultiClusterInformer<V1Deployment>;
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * const euDeployments = deployments.cluster('eu-1');
 * euDeployments.store.getByKey('default/web');
 * controller({ for: euDeployments, reconcile }).subscribe();
 * ```
 */
export interface ClusterInformer<T> extends Observable<ClusterEvent<T>> {
  /** `<informer name> in <cluster>`. */
  readonly name: string;
  readonly cluster: string;
  readonly store: ReadonlyIndexer<T>;
  /** The cluster's sync state, then each change: `synced` is false while the cluster is absent. */
  readonly status$: Observable<{ readonly synced: boolean }>;
}

/**
 * An informer over a fleet: one cache and one stream of events for a
 * resource in every cluster a provider gives, merged from one informer per
 * cluster. Subscribing starts it (and with it the provider); when the last
 * subscriber leaves, every cluster's requests and timers end.
 *
 * ## Example
 * ```ts
 * import type { MultiClusterInformer } from 'rxkube';
 * import type { V1Node } from '@kubernetes/client-node';
 *
 * const unready = (nodes: MultiClusterInformer<V1Node>) =>
 *   nodes.store.list().filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status !== 'True'));
 * ```
 */
export interface MultiClusterInformer<T> extends Observable<ClusterEvent<T>> {
  readonly name: string;
  /** The provider it reads; a controller over this informer reads the same one. */
  readonly clusters: ClusterProvider;
  /** The merged cache, keyed `cluster/namespace/name`. */
  readonly store: MultiClusterStore<T>;
  /** State, each cluster's state, object count and last error; emits on change. */
  readonly status$: Observable<MultiClusterStatus>;
  /** Every error met, each a `ClusterError` naming its cluster (a provider's own errors aside). */
  readonly errors$: Observable<Error>;
  /**
   * True once the provider gave its first set and every cluster in it has
   * synced or is known to be unreachable or failed (MC-8): one cluster that
   * is down does not hold up the others. With no clusters, true as soon as
   * the provider said so. The same as the last `status$`'s `synced`, kept
   * for client-go users; to wait, use `whenSynced`.
   */
  hasSynced(): boolean;
  /** Resolves once `hasSynced()`; rejects with a `CacheSyncError` naming the clusters still syncing, as `Informer.whenSynced`. */
  whenSynced(opts?: WhenSyncedOptions): Promise<void>;
  /** One cluster of the fleet as a single-cluster informer. */
  cluster(name: string): ClusterInformer<T>;
}

/**
 * Creates an informer over many clusters: for each cluster the provider
 * gives, `source(cluster)` is listed and watched by an informer of its own,
 * and their events and caches are merged. Events carry their cluster and a
 * key that names it (`cluster/namespace/name`); the store is keyed the same
 * way, with every index working across clusters and a `cluster` index.
 *
 * As clusters come and go (docs/semantics.md MC-1 … MC-9): a cluster that
 * joins is listed (its objects arrive as adds with `isInInitialList`); one
 * that leaves is torn down, every request and timer of it ended, and its
 * objects leave as deletes with reason `cluster-removed`; one whose
 * KubeConfig changes is listed anew beside the old connection, which keeps
 * serving until the new one has synced, and then only what differs is
 * announced (so a rotated credential causes no churn). A cluster that
 * cannot be reached or refuses the credentials is retried with backoff
 * without holding up the others; every error is a `ClusterError` naming it,
 * and after `unreachableAfterMs` it is marked unreachable and its objects
 * are kept or dropped (`whileUnreachable`).
 *
 * ## Example
 * ```ts
 * import { multiClusterInformer, kubeconfigClusters, kubeSource } from 'rxkube';
 *
 * const clusters = kubeconfigClusters({ contexts: ['eu-1', 'us-2'] });
 * const deployments = multiClusterInformer(clusters, (c) => kubeSource(c.kubeConfig, 'apps/v1/deployments'));
 * deployments.subscribe((e) => console.log(e.type, e.key)); // add eu-1/default/web, …
 * await deployments.whenSynced({ timeout: 60_000 });
 * console.log(deployments.store.byIndex('cluster', 'us-2').length, 'deployments in us-2');
 * ```
 *
 * @param clusters the fleet, e.g. `kubeconfigClusters()` or `secretClusters(hub, …)`.
 * @param source what to list and watch in one cluster, e.g. `(c) => kubeSource(c.kubeConfig, 'v1/pods')`.
 *   Called when a cluster joins or its KubeConfig changes; what it throws is reported and the cluster marked failed.
 * @param opts informer options for every cluster, and what to do about unreachable clusters.
 * @returns the informer, idle until subscribed.
 * @throws {TypeError} for an option that is not valid.
 */
export function multiClusterInformer<T extends KubeObject = KubeObject>(
  clusters: ClusterProvider,
  source: (cluster: Cluster) => ListerWatcher<T>,
  opts: MultiClusterInformerOptions<T> = {},
): MultiClusterInformer<T> {
  return new SharedMultiClusterInformer<T>(clusters, source, opts);
}
