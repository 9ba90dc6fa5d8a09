import {
  BehaviorSubject,
  EMPTY,
  NEVER,
  Observable,
  asyncScheduler,
  concat,
  concatMap,
  defer,
  distinctUntilChanged,
  filter,
  finalize,
  firstValueFrom,
  fromEvent,
  ignoreElements,
  map,
  merge,
  of,
  share,
  tap,
  timer,
} from 'rxjs';
import { ErrorChannel } from '../errors/ErrorChannel.js';
import { CacheSyncError, type CacheSyncFailure } from '../informer/CacheSyncError.js';
import { informer, type InformerOptions, type InformerStatus, type WhenSyncedOptions } from '../informer/informer.js';
import { checkInformerOptionValues } from '../informer/informerOptions.js';
import { checkOptionNames, describeValue, functionOption, numberOption, optionNames, schedulerOption } from '../options/validate.js';
import { timerDelay } from '../options/timerDelay.js';
import type { ListerWatcher } from '../sources/types.js';
import { IndexConflictError } from '../store/errors/IndexConflictError.js';
import { createIndexer } from '../store/indexer.js';
import { byNamespace } from '../store/indexFuncs.js';
import { readonlyView } from '../store/readonlyView.js';
import type { KubeObject, ReadonlyIndexer } from '../store/types.js';
import { clusterChanges, eachCluster } from './clusterChanges.js';
import { clusterFanOut } from './clusterFanOut.js';
import { clusterMember, type ClusterStatus, type Fleet } from './clusterMember.js';
import { CLUSTER_INDEX, multiClusterStore, type MultiClusterStore } from './multiClusterStore.js';
import { readingOf } from './providerReading.js';
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
   * What happens to the objects of a cluster unreachable for `unreachableAfterMs` (MC-6): `'keep'` them, stale, as
   * client-go keeps its cache through a partition, or `'drop'` them, each as a delete with reason
   * `cluster-unreachable`, to come back as adds once the cluster answers.
   * @default 'keep'
   */
  readonly whileUnreachable?: 'keep' | 'drop';
  /**
   * How long every request to a cluster must keep failing before it counts as unreachable (MC-4): its state says
   * so, a `ClusterError` is reported, `whenSynced` stops waiting for it, and `whileUnreachable` applies.
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
 * Where a multi-cluster informer stands, on its `status$`: the informer
 * status's `synced`, `errors` and `lastError`, its `state` (`idle` before
 * its first subscriber and after its last one left, `running` in between,
 * `failed` after its provider failed), and each cluster present, by name,
 * with the status of the informer serving it.
 *
 * ## Example
 * ```ts
 * import type { MultiClusterStatus } from 'rxkube/core';
 *
 * const away = (s: MultiClusterStatus) => s.clusters.filter((c) => c.state === 'unreachable').map((c) => c.name);
 * ```
 */
export interface MultiClusterStatus extends Pick<InformerStatus, 'synced' | 'errors' | 'lastError'> {
  readonly state: 'idle' | 'running' | 'failed';
  /** The clusters present, sorted by name. */
  readonly clusters: readonly ClusterStatus[];
}

/**
 * One cluster of a multi-cluster informer, as an informer of that cluster
 * alone: its events (with the cluster in them), its store (keyed
 * `namespace/name`, empty while the cluster is absent) and whether it has
 * synced. Subscribing to it keeps the multi-cluster informer running. It is
 * a `ControllerSource`, so a `controller()` can run over one cluster.
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
  /**
   * State, each cluster's state, object count and last error. Emits when a state changes (the run's, a cluster's, its
   * informer's status), on an error and on each set applied; `objects` is as of that emission (LT-28).
   */
  readonly status$: Observable<MultiClusterStatus>;
  /** Every error met, each a `ClusterError` naming its cluster (a provider's own errors aside). */
  readonly errors$: Observable<Error>;
  /**
   * Resolves once the provider gave its first set and every cluster in it has synced or is known to be unreachable
   * or failed (MC-8); rejects with a `CacheSyncError` naming the clusters still syncing, as `Informer.whenSynced`.
   */
  whenSynced(opts?: WhenSyncedOptions): Promise<void>;
  /** One cluster of the fleet as a single-cluster informer. */
  cluster(name: string): ClusterInformer<T>;
}

const OPTION_NAMES = optionNames<MultiClusterInformerOptions<unknown>>({
  indexers: true,
  transform: true,
  stripManagedFields: true,
  initialList: true,
  fifo: true,
  freeze: true,
  keyFunc: true,
  scheduler: true,
  reflector: true,
  maxLagMs: true,
  whileUnreachable: true,
  unreachableAfterMs: true,
  onError: true,
  name: true,
});

/**
 * Creates an informer over many clusters: for each cluster the provider
 * gives, `source(cluster)` is listed and watched by an informer of its own,
 * and their events and caches are merged. Events carry their cluster and a
 * key that names it (`cluster/namespace/name`); the store is keyed the same
 * way, with every index working across clusters and a `cluster` index.
 *
 * A cluster is listed at its join, torn down at its leave (its objects
 * leave as `cluster-removed` deletes), and listed anew beside the old
 * connection when its KubeConfig changes, with only what differs announced;
 * one that fails is retried without holding up the others, and is marked
 * unreachable after `unreachableAfterMs`. It is `informer()`s merged: its
 * subscription is its lifetime. The rules: docs/semantics.md MC-1 … MC-10, MC-15,
 * LT-20 … LT-29.
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
  const where = 'multiClusterInformer';
  if (typeof (clusters as Partial<ClusterProvider> | null)?.subscribe !== 'function') throw new TypeError(`${where}: clusters must be an Observable of cluster sets, got ${describeValue(clusters)}`);
  if (typeof source !== 'function') throw new TypeError(`${where}: source must be a function from a cluster to a ListerWatcher, got ${describeValue(source)}`);
  const { whileUnreachable = 'keep', unreachableAfterMs, onError, name = 'multi-cluster informer', indexers, ...informerOpts } = checkOptionNames(where, opts, OPTION_NAMES) as MultiClusterInformerOptions<T>;
  if (whileUnreachable !== 'keep' && whileUnreachable !== 'drop') throw new TypeError(`${where}: option "whileUnreachable" must be 'keep' or 'drop', got ${describeValue(whileUnreachable)}`);
  if (typeof name !== 'string' || name === '') throw new TypeError(`${where}: option "name" must be a non-empty string, got ${describeValue(name)}`);
  if (indexers !== undefined && indexers !== null && CLUSTER_INDEX in indexers) throw new IndexConflictError([CLUSTER_INDEX]);
  // Each cluster's informer gets these options: checked now, as informer() would check them.
  checkInformerOptionValues(informerOpts);
  // The store of a cluster not present: empty, with every cluster's index functions (addIndexers adds here too, for
  // clusters yet to join) and key function. Building it checks those options now.
  const absent = createIndexer<T>({ indexers: { namespace: byNamespace, ...indexers }, keyFunc: informerOpts.keyFunc, freeze: informerOpts.freeze });
  const errors = new ErrorChannel(functionOption(where, 'onError', onError));

  // The state of the run, kept by the shared pipeline below and read by the store, status$ and whenSynced.
  let state: MultiClusterStatus['state'] = 'idle';
  // Whether the provider's first set has been applied in this run: until then nothing can be synced.
  let haveSet = false;
  let errorCount = 0;
  let lastError: Error | undefined;
  const fleet: Fleet<T> = {
    members: new Map(),
    build: (cluster) => informer<T>(source(cluster), { ...informerOpts, indexers: absent.getIndexers(), name: `${name} in ${cluster.name}` }),
    report: (err) => {
      errorCount++;
      lastError = err;
      errors.report(err);
      publish();
    },
    changed: () => publish(),
    scheduler: schedulerOption(where, informerOpts.scheduler, asyncScheduler),
    unreachableAfterMs: numberOption(where, 'unreachableAfterMs', unreachableAfterMs, 10_000),
    whileUnreachable,
  };
  const snapshot = (): MultiClusterStatus => {
    const statuses = [...fleet.members.values()].map((m) => m.status()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const synced = state === 'running' && haveSet && statuses.every((c) => c.state !== 'syncing');
    return { state, synced, clusters: statuses, errors: errorCount, lastError };
  };
  const status = new BehaviorSubject<MultiClusterStatus>(snapshot());
  const publish = (): void => status.next(snapshot());

  // Every subscriber and cluster view, and the one loop that tells each event to them (LT-25, LT-26).
  const fanOut = clusterFanOut<T>(() => fleet.members.keys(), (cluster) => fleet.members.get(cluster)?.store);
  // The provider's error that ended the run, for good: what a whenSynced it ends names as its cause.
  let failure: Error | undefined;

  // One Observable per cluster, merged, told to the fan-out, and shared: the run lives while anyone subscribes (LT-20).
  const run$ = defer(() => {
    state = 'running';
    haveSet = false;
    publish();
    const setApplied = defer(() => {
      haveSet = true;
      publish();
      return EMPTY;
    });
    // One set after another: a set the provider gives from inside an event of the last one waits for it (LT-27), and
    // reaches every other reader of the provider after the last one too (MC-15).
    const changes$ = clusterChanges(readingOf(clusters), fleet.report).pipe(
      concatMap((set) => concat(set, setApplied)),
      share(),
    );
    return eachCluster(changes$, (cluster, later) => clusterMember(cluster, later, fleet)).pipe(
      tap({
        next: fanOut.emit,
        error: (err: unknown) => {
          state = 'failed';
          failure = err instanceof Error ? err : new Error(String(err));
          fleet.report(failure);
        },
      }),
      ignoreElements(),
      finalize(() => {
        if (state === 'running') state = 'idle';
        publish();
      }),
    );
  }).pipe(share({ resetOnError: false, resetOnComplete: false, resetOnRefCountZero: true }));

  // A subscriber of everything or of one cluster: on the fan-out and counted by the run before its replay, so that what
  // the replay sets off reaches it (LT-25); replayed to only when it joins a run already going.
  const attach = (cluster: string | undefined): Observable<ClusterEvent<T>> =>
    new Observable<ClusterEvent<T>>((subscriber) => {
      const late = state === 'running';
      const attached = fanOut.attach(subscriber, cluster);
      const counted = run$.subscribe({ error: (err: unknown) => subscriber.error(err) });
      if (late) attached.replay();
      return () => {
        attached.detach();
        counted.unsubscribe();
      };
    });

  const syncError = (reason: CacheSyncFailure, detail: string): CacheSyncError => {
    const now = status.value;
    const synced = now.clusters.filter((c) => c.state !== 'syncing').map((c) => c.name);
    const waiting = now.clusters.filter((c) => c.state === 'syncing');
    const unsynced = waiting.map((c) => c.name);
    if (!haveSet) unsynced.push(`${name} (no cluster set from its provider yet)`);
    const cause = failure ?? waiting.find((c) => c.lastError !== undefined)?.lastError ?? lastError;
    return new CacheSyncError(synced, unsynced.length > 0 ? unsynced : [name], cause, reason, detail);
  };

  return Object.assign(attach(undefined), {
    name,
    clusters,
    store: multiClusterStore<T>(fleet.members, absent),
    status$: status.asObservable(),
    errors$: errors.errors$,
    whenSynced: (wait: WhenSyncedOptions = {}): Promise<void> => {
      if (wait === null || typeof wait !== 'object' || wait instanceof AbortSignal) throw new TypeError(`whenSynced takes { timeout?, signal? }, got ${describeValue(wait)}`);
      const { timeout, signal } = wait;
      if (timeout !== undefined && (!Number.isFinite(timeout) || timeout < 0)) throw new TypeError(`timeout must be a non-negative number of ms, got ${describeValue(timeout)}`);
      // The first of: synced, the run not running (at the call: not started), the timeout, the signal (S-2).
      const outcome = merge(
        status.pipe(
          map((s, i) => {
            if (s.synced) return undefined;
            if (s.state === 'failed') return syncError('failed', 'its cluster provider failed');
            if (s.state === 'running') return null;
            return i === 0 ? syncError('not-running', 'it is not running: subscribe to it first') : syncError('stopped', 'its last subscriber left');
          }),
          filter((err) => err !== null),
        ),
        timeout === undefined ? NEVER : timer(timerDelay(timeout)).pipe(map(() => syncError('timeout', `not within ${timeout} ms`))),
        signal === undefined ? NEVER : defer(() => (signal.aborted ? of(0) : fromEvent(signal, 'abort'))).pipe(map(() => syncError('aborted', 'the signal aborted'))),
      );
      return firstValueFrom(outcome).then((err) => {
        if (err !== undefined) throw err;
      });
    },
    cluster: (cluster: string): ClusterInformer<T> => {
      if (typeof cluster !== 'string' || cluster === '') throw new TypeError(`cluster: name must be a non-empty string, got ${describeValue(cluster)}`);
      // Reads the cluster's store while it is present, else an empty one with the same indexes and key function.
      const current = (): ReadonlyIndexer<T> => fleet.members.get(cluster)?.store ?? absent;
      const store = readonlyView(new Proxy(absent, { get: (_, p) => bound(current(), p) }));
      return Object.assign(attach(cluster), {
        name: `${name} in ${cluster}`,
        cluster,
        store,
        status$: status.pipe(
          map(() => fleet.members.get(cluster)?.status().informer?.synced === true),
          distinctUntilChanged(),
          map((synced) => ({ synced })),
        ),
      });
    },
  });
}

/** `store[p]`, a method bound to `store`. */
function bound(store: object, p: string | symbol): unknown {
  const v: unknown = Reflect.get(store, p);
  return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(store) : v;
}
