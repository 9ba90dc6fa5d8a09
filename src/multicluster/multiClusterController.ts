import type { Observable, SchedulerLike } from 'rxjs';
import type { ControllerMetrics } from '../controller/metrics.js';
import type { ControllerSource, ControllerStatus, ErrorAction, OwnsSource, ReconcileAction, ReconcileContext, ReconcileOutcome, WatchesSource, ForSource } from '../controller/types.js';
import type { RateLimiter } from '../workqueue/rateLimiters.js';
import type { MultiClusterInformer } from './multiClusterInformer.js';
import { SharedMultiClusterController } from './SharedMultiClusterController.js';
import type { Cluster, ClusterProvider } from './types.js';

/**
 * Where a multi-cluster controller reads from: a multi-cluster informer (each
 * cluster's controller reads that cluster's part of it), or one
 * single-cluster source that every cluster's controller shares (a hub
 * cluster's objects, say, to be applied in every member).
 *
 * ## Example
 * ```ts
 * import type { Informer, MultiClusterInformer } from 'rxkube';
 * import type { ClusterSource } from 'rxkube/core';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * declare const configMaps: MultiClusterInformer<V1ConfigMap>;
 * declare const hubConfigMaps: Informer<V1ConfigMap>;
 *
 * const perCluster: ClusterSource<V1ConfigMap> = configMaps; // one cache per cluster
 * const fromTheHub: ClusterSource<V1ConfigMap> = hubConfigMaps; // one cache, read by every cluster's controller
 * ```
 */
export type ClusterSource<T> = MultiClusterInformer<T> | ControllerSource<T>;

/**
 * What a multi-cluster reconcile is given: a single-cluster
 * `ReconcileContext` (its `key` and `store` are those of the cluster's
 * primary source, so a single-cluster reconcile works unchanged) and the
 * cluster, whose `kubeConfig` is how to write to it. `signal` also aborts
 * when the cluster leaves or its KubeConfig changes.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 * import { type ClusterReconcileContext } from 'rxkube/core';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 *
 * async function reconcile(cm: V1ConfigMap, ctx: ClusterReconcileContext<V1ConfigMap>) {
 *   const configMaps = objectClient(ctx.cluster.kubeConfig, 'v1/configmaps', { namespace: cm.metadata?.namespace });
 *   await configMaps.patch(cm.metadata?.name ?? '', { metadata: { labels: { seen: 'yes' } } }, { signal: ctx.signal });
 * }
 * ```
 */
export interface ClusterReconcileContext<T> extends ReconcileContext<T> {
  /** The cluster whose key this is. */
  readonly cluster: Cluster;
}

/**
 * A multi-cluster reconcile function: as a `Reconciler`, with the cluster
 * in its context.
 *
 * ## Example
 * ```ts
 * import type { ClusterReconciler } from 'rxkube/core';
 * import type { V1Deployment } from '@kubernetes/client-node';
 *
 * const reconcile: ClusterReconciler<V1Deployment> = async (d, ctx) => {
 *   console.log(`${ctx.cluster.name}: ${ctx.key}`);
 *   return { requeueAfter: 600_000 };
 * };
 * ```
 */
export type ClusterReconciler<T> = (obj: T, ctx: ClusterReconcileContext<T>) => ReconcileAction | Promise<ReconcileAction>;

/**
 * A reconcile outcome of a multi-cluster controller: the single-cluster
 * outcome (its `key` is `namespace/name` within the cluster) with the
 * cluster's name.
 *
 * ## Example
 * ```ts
 * import { clusterKey } from 'rxkube';
 * import { type ClusterReconcileOutcome } from 'rxkube/core';
 *
 * const where = (o: ClusterReconcileOutcome<unknown>) => clusterKey(o.cluster, o.key); // 'eu-1/default/web'
 * ```
 */
export type ClusterReconcileOutcome<T> = ReconcileOutcome<T> & { readonly cluster: string };

/**
 * One cluster's metrics: the `ControllerMetrics` of its controller under the
 * multi-cluster controller's name, with the cluster's name for a `cluster`
 * label. `reconcileTime` and `activeWorkers` count only reconciles that
 * hold one of the shared slots; `maxConcurrentReconciles` is the shared
 * `concurrency`; the queue's work duration includes the wait for a slot.
 *
 * ## Example
 * ```ts
 * import type { ClusterControllerMetrics } from 'rxkube/core';
 *
 * const labels = (m: ClusterControllerMetrics) => ({ controller: m.name, cluster: m.cluster });
 * ```
 */
export interface ClusterControllerMetrics extends ControllerMetrics {
  /** The cluster's name [label `cluster`]. */
  readonly cluster: string;
}

/**
 * One cluster's controller status: `ControllerStatus`, with `inFlight`
 * counting reconciles that hold a shared slot and `queueDepth` including
 * those waiting for one.
 *
 * ## Example
 * ```ts
 * import type { ClusterControllerStatus } from 'rxkube/core';
 *
 * const line = (s: ClusterControllerStatus) => `${s.cluster}: ${s.state}, ${s.queueDepth} queued`;
 * ```
 */
export interface ClusterControllerStatus extends ControllerStatus {
  readonly cluster: string;
}

/**
 * Options of {@link multiClusterController}.
 *
 * ## Example
 * ```ts
 * import { multiClusterController, type MultiClusterInformer } from 'rxkube';
 * import type { ClusterReconciler, MultiClusterControllerOptions } from 'rxkube/core';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: MultiClusterInformer<V1Deployment>;
 * declare const reconcile: ClusterReconciler<V1Deployment>;
 *
 * const opts = { for: deployments, reconcile, concurrency: 8 } satisfies MultiClusterControllerOptions<V1Deployment>;
 * multiClusterController(opts).subscribe();
 * ```
 */
export interface MultiClusterControllerOptions<T> {
  /**
   * The fleet. Each cluster present gets a controller of its own; one that
   * leaves has its controller stopped (reconciles in flight aborted), one
   * whose KubeConfig changes gets a new one.
   * @default the `for` informer's provider (required when `for` is a single-cluster source)
   */
  readonly clusters?: ClusterProvider;
  /**
   * The primary objects of each cluster (or one shared source for all); `{ source, predicates }` enqueues only
   * the changes the predicates pass, as a controller's `for` (CR-113). Required.
   */
  readonly for: ClusterSource<T> | (Omit<ForSource<T>, 'source'> & { readonly source: ClusterSource<T> });
  /** Objects the primary objects own, per cluster; a change enqueues the owner's key in that cluster. @default [] */
  readonly owns?: readonly (Omit<OwnsSource, 'source'> & { /** The owned objects: per cluster, or one source for all. */ readonly source: ClusterSource<any> })[];
  /**
   * Other objects, mapped to primary keys (`namespace/name`) of one cluster
   * by a function that is told the cluster. A shared source's changes are
   * mapped once per cluster.
   * @default []
   */
  readonly watches?: readonly {
    /** The watched objects: per cluster, or one source for all. */
    readonly source: ClusterSource<any>;
    /** The primary keys of `cluster` to reconcile when `obj` changes (as a controller's `watches` mapper); what it throws is reported. */
    readonly map: (obj: any, cluster: Cluster) => Iterable<string> | string | undefined | null;
    /** Only changes that pass these are mapped, as a controller's `watches` predicates (CR-115). @default [] */
    readonly predicates?: WatchesSource<any>['predicates'];
  }[];
  /** Brings one cluster in line with one primary object. Required. */
  readonly reconcile: ClusterReconciler<T>;
  /** As the controller's `errorPolicy`, with the cluster in the context. @default () => 'backoff' */
  readonly errorPolicy?: (error: Error, obj: T, ctx: ClusterReconcileContext<T>) => ErrorAction;
  /**
   * Reconciles running at once over every cluster. Slots are shared
   * round-robin between the clusters with keys waiting, so a cluster with a
   * backlog gets one turn per round, like every other (docs/semantics.md MC-11).
   * @default 1
   */
  readonly concurrency?: number;
  /** As the controller's `resyncPeriod`, per cluster. @default 0 */
  readonly resyncPeriod?: number;
  /** As the controller's `shutdownTimeoutMs`. @default 30_000 */
  readonly shutdownTimeoutMs?: number;
  /** As the controller's `reconcileTimeoutMs`, per cluster. @default undefined (no timeout) */
  readonly reconcileTimeoutMs?: number;
  /** As the controller's `priorityQueue`, per cluster. @default true */
  readonly priorityQueue?: boolean;
  /** As the controller's `readYourWrites`, per cluster (RYW-1). @default true */
  readonly readYourWrites?: boolean;
  /** As the controller's `readYourWritesTimeoutMs`, per cluster (RYW-6). @default 5_000 */
  readonly readYourWritesTimeoutMs?: number;
  /** Stops every cluster's controller for good when it aborts; the outcomes then complete. @default undefined */
  readonly signal?: AbortSignal;
  /**
   * Makes the rate limiter of one cluster, called once per cluster's
   * controller, so each cluster's keys back off on their own (a rate limiter
   * keyed `namespace/name` shared between clusters would mix them up).
   * @default () => defaultControllerRateLimiter({ scheduler })
   */
  readonly rateLimiter?: () => RateLimiter<string>;
  /** Clock and timers. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** The controllers' own errors, each a `ClusterError` naming its cluster, except the provider's. @default undefined (errors$ subscribers, else reportError) */
  readonly onError?: (err: Error) => void;
  /** For messages and metrics (the `controller` label). @default the `for` source's name */
  readonly name?: string;
}

/**
 * A controller over a fleet, made by {@link multiClusterController}: an
 * Observable of reconcile outcomes, each with its cluster, whose
 * subscriptions are its lifetime.
 *
 * ## Example
 * ```ts
 * import type { MultiClusterController } from 'rxkube';
 *
 * const backlog = (c: MultiClusterController<unknown>) => c.status().map((s) => `${s.cluster}: ${s.queueDepth} queued`);
 * ```
 */
export interface MultiClusterController<T> extends Observable<ClusterReconcileOutcome<T>> {
  readonly name: string;
  /** The controllers' own errors, each a `ClusterError` naming its cluster (a provider's aside). */
  readonly errors$: Observable<Error>;
  /** Each running cluster's controller status, sorted by cluster. */
  status(): readonly ClusterControllerStatus[];
  /** Each running cluster's metrics, sorted by cluster; a cluster that left is no longer listed. */
  metrics(): readonly ClusterControllerMetrics[];
  /** Stops every cluster's controller for good, gracefully; resolves when all have drained. */
  shutdown(): Promise<void>;
}

/**
 * Creates a controller over many clusters: one `controller()` per cluster
 * the provider gives, each with its own work queue and rate limiter and the
 * cluster in its reconcile context, all sharing `concurrency` slots
 * round-robin so that no cluster's backlog starves the others. Each
 * cluster's controller keeps every rule of a single-cluster controller (one
 * reconcile per key at a time, workers start once that cluster's sources
 * have synced, requeues, backoff, graceful drain); a cluster that cannot be
 * reached holds up only itself.
 *
 * ## Example
 * ```ts
 * import { kubeconfigClusters, kubeSource, multiClusterController, multiClusterInformer, objectClient } from 'rxkube';
 *
 * const clusters = kubeconfigClusters();
 * const deployments = multiClusterInformer(clusters, (c) => kubeSource(c.kubeConfig, 'apps/v1/deployments'));
 * const c = multiClusterController({
 *   for: deployments,
 *   reconcile: async (d, ctx) => {
 *     const client = objectClient(ctx.cluster.kubeConfig, 'apps/v1/deployments', { namespace: d.metadata?.namespace });
 *     await client.patch(d.metadata?.name ?? '', { metadata: { annotations: { seen: 'yes' } } }, { signal: ctx.signal });
 *   },
 *   concurrency: 4,
 * });
 * c.subscribe((o) => console.log(o.cluster, o.type, o.key));
 * ```
 *
 * @param opts the fleet, the sources, the reconcile function and how to run it; `clusters` is required when `for` is a
 *   single-cluster source.
 * @returns the controller, idle until subscribed.
 * @throws {TypeError} when an option is missing or invalid.
 */
export function multiClusterController<T>(
  opts: MultiClusterControllerOptions<T> & { readonly for: MultiClusterInformer<T> | (Omit<ForSource<T>, 'source'> & { readonly source: MultiClusterInformer<T> }) },
): MultiClusterController<T>;
export function multiClusterController<T>(
  opts: MultiClusterControllerOptions<T> & { readonly for: ControllerSource<T> | ForSource<T>; readonly clusters: ClusterProvider },
): MultiClusterController<T>;
export function multiClusterController<T>(opts: MultiClusterControllerOptions<T>): MultiClusterController<T> {
  return new SharedMultiClusterController<T>(opts);
}
