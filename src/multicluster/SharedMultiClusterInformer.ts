import { BehaviorSubject, Observable, asyncScheduler, distinctUntilChanged, map, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { ErrorChannel } from '../errors/ErrorChannel.js';
import { CacheSyncError, type CacheSyncFailure } from '../informer/CacheSyncError.js';
import { informer, type Informer, type InformerOptions, type WhenSyncedOptions } from '../informer/informer.js';
import { SyncWaiters } from '../informer/syncWaiters.js';
import type { ListerWatcher } from '../sources/types.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { IndexConflictError } from '../store/errors/IndexConflictError.js';
import { byNamespace } from '../store/indexFuncs.js';
import { metaNamespaceKey } from '../store/keys.js';
import type { Indexers, KubeObject, ReadonlyIndexer } from '../store/types.js';
import { checkOptionNames, numberOption, schedulerOption, describeValue } from '../options/validate.js';
import { clusterChanges, type ClusterChange } from './clusterChanges.js';
import { ClusterMember, type MemberHost } from './clusterMember.js';
import type { ClusterInformer, MultiClusterInformer, MultiClusterInformerOptions, MultiClusterStatus } from './multiClusterInformer.js';
import { CLUSTER_INDEX, multiClusterStore, type MultiClusterStore } from './multiClusterStore.js';
import { clusterView } from './clusterView.js';
import type { Cluster, ClusterEvent, ClusterProvider } from './types.js';

const OPTION_NAMES = [
  'indexers',
  'transform',
  'stripManagedFields',
  'initialList',
  'fifo',
  'freeze',
  'keyFunc',
  'scheduler',
  'reflector',
  'whileUnreachable',
  'unreachableAfterMs',
  'maxLagMs',
  'onError',
  'name',
];

/** Whoever the informer delivers to: everything, or one cluster's events (a cluster view). */
interface Listener<T> {
  readonly subscriber: Subscriber<ClusterEvent<T>>;
  readonly cluster: string | undefined;
}

/** A source that is never read: it lets the informer options be checked up front by building an informer that never starts. */
const UNUSED_SOURCE: ListerWatcher<never> = {
  list: () => Promise.reject(new Error('unused')),
  watch: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('unused')) }) }),
};

/** The one multi-cluster informer implementation: every subscriber and cluster view shares one run over the fleet. */
export class SharedMultiClusterInformer<T extends KubeObject> extends Observable<ClusterEvent<T>> implements MultiClusterInformer<T> {
  readonly name: string;
  readonly clusters: ClusterProvider;
  readonly store: MultiClusterStore<T>;
  readonly status$: Observable<MultiClusterStatus>;
  readonly errors$: Observable<Error>;
  readonly #source: (cluster: Cluster) => ListerWatcher<T>;
  // Options of each cluster's informer (name and indexers are set per cluster).
  readonly #informerOpts: InformerOptions<T>;
  // Every cluster's store has these; addIndexers adds to it, so clusters that join later get them too.
  #indexers: Indexers<T>;
  readonly #keyFunc: (obj: T) => string;
  readonly #scheduler: SchedulerLike;
  readonly #unreachableAfterMs: number;
  readonly #whileUnreachable: 'keep' | 'drop';
  // Where errors go: onError, errors$ subscribers, or the process reporter.
  readonly #errors: ErrorChannel;
  readonly #synced = new BehaviorSubject<boolean>(false);
  readonly #status: BehaviorSubject<MultiClusterStatus>;
  // Whoever waits in whenSynced, answered at once when the informer goes idle or fails.
  readonly #syncWaiters = new SyncWaiters(this.#synced, (reason, detail) => this.#syncError(reason, detail));
  // Subscribers of everything, and of one cluster each; copied on write so a delivery never sees a half-changed list.
  #all: readonly Listener<T>[] = [];
  #byCluster = new Map<string, readonly Listener<T>[]>();
  #listeners = 0;
  // The clusters present, by name.
  readonly #members = new Map<string, ClusterMember<T>>();
  readonly #host: MemberHost<T>;
  #state: MultiClusterStatus['state'] = 'idle';
  // The provider's subscription while running.
  #provider: Subscription | undefined;
  // Whether the provider gave its first set in this run: until then nothing can be synced.
  #haveSet = false;
  #errorCount = 0;
  #lastError: Error | undefined;
  #failure: Error | undefined;

  constructor(clusters: ClusterProvider, source: (cluster: Cluster) => ListerWatcher<T>, opts: MultiClusterInformerOptions<T>) {
    let self: SharedMultiClusterInformer<T> | undefined;
    super((subscriber) => (self as SharedMultiClusterInformer<T>).attach(subscriber, undefined));
    self = this;
    const where = 'multiClusterInformer';
    if (typeof (clusters as Partial<ClusterProvider> | null)?.subscribe !== 'function') throw new TypeError(`${where}: clusters must be an Observable of cluster sets, got ${describeValue(clusters)}`);
    if (typeof source !== 'function') throw new TypeError(`${where}: source must be a function from a cluster to a ListerWatcher, got ${describeValue(source)}`);
    const o = checkOptionNames(where, opts, OPTION_NAMES) as MultiClusterInformerOptions<T>;
    const whileUnreachable = o.whileUnreachable ?? 'keep';
    if (whileUnreachable !== 'keep' && whileUnreachable !== 'drop') throw new TypeError(`${where}: option "whileUnreachable" must be 'keep' or 'drop', got ${describeValue(o.whileUnreachable)}`);
    this.#whileUnreachable = whileUnreachable;
    this.#unreachableAfterMs = numberOption(where, 'unreachableAfterMs', o.unreachableAfterMs, 10_000);
    this.#scheduler = schedulerOption(where, o.scheduler, asyncScheduler);
    if (o.onError !== undefined && typeof o.onError !== 'function') throw new TypeError(`${where}: option "onError" must be a function, got ${describeValue(o.onError)}`);
    if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '')) throw new TypeError(`${where}: option "name" must be a non-empty string, got ${describeValue(o.name)}`);
    if (o.indexers !== undefined && CLUSTER_INDEX in o.indexers) throw new IndexConflictError([CLUSTER_INDEX]);
    const { whileUnreachable: _w, unreachableAfterMs: _u, onError, name, indexers, ...informerOpts } = o;
    this.#informerOpts = informerOpts;
    this.#indexers = { namespace: byNamespace, ...indexers };
    // The per-cluster informers' options are checked now, by one that is never started.
    informer<T>(UNUSED_SOURCE as ListerWatcher<T>, { ...informerOpts, indexers: this.#indexers });
    this.#keyFunc = o.keyFunc ?? metaNamespaceKey;
    this.name = name ?? 'multi-cluster informer';
    this.clusters = clusters;
    this.#source = source;
    this.#errors = new ErrorChannel(onError);
    this.errors$ = this.#errors.errors$;
    this.#status = new BehaviorSubject<MultiClusterStatus>(this.#snapshot());
    this.status$ = this.#status.asObservable();
    this.#host = {
      build: (cluster) => this.#build(cluster),
      emit: (event) => this.#emit(event),
      report: (err) => this.#report(err),
      changed: () => this.#publish(),
      scheduler: this.#scheduler,
      unreachableAfterMs: this.#unreachableAfterMs,
      whileUnreachable: this.#whileUnreachable,
    };
    this.store = multiClusterStore<T>({
      stores: () => this.#stores(),
      store: (name) => this.#members.get(name)?.store,
      indexers: () => this.#indexers,
      addIndexers: (more) => this.#addIndexers(more),
      keyOf: (obj) => (obj instanceof DeletedFinalStateUnknown ? obj.key : this.#keyFunc(obj)),
    });
  }

  hasSynced(): boolean {
    return this.#synced.value;
  }

  whenSynced(opts: WhenSyncedOptions = {}): Promise<void> {
    if (opts === null || typeof opts !== 'object' || opts instanceof AbortSignal) throw new TypeError(`whenSynced takes { timeout?, signal? }, got ${describeValue(opts)}`);
    const { timeout, signal } = opts;
    if (timeout !== undefined && (!Number.isFinite(timeout) || timeout < 0)) throw new TypeError(`timeout must be a non-negative number of ms, got ${describeValue(timeout)}`);
    if (this.#synced.value) return Promise.resolve();
    if (this.#state === 'failed') return Promise.reject(this.#syncError('failed', 'its cluster provider failed'));
    if (this.#state === 'idle') return Promise.reject(this.#syncError('not-running', 'it is not running: subscribe to it first'));
    if (signal?.aborted) return Promise.reject(this.#syncError('aborted', 'the signal aborted'));
    return this.#syncWaiters.wait(timeout, signal);
  }

  cluster(name: string): ClusterInformer<T> {
    if (typeof name !== 'string' || name === '') throw new TypeError(`cluster: name must be a non-empty string, got ${describeValue(name)}`);
    return clusterView<T>(`${this.name} in ${name}`, name, {
      attach: (subscriber) => this.attach(subscriber, name),
      store: () => this.#members.get(name)?.store,
      status$: this.#status.pipe(
        map(() => this.#members.get(name)?.hasSynced() === true),
        distinctUntilChanged(),
        map((synced) => ({ synced })),
      ),
      indexers: () => this.#indexers,
      keyOf: (obj) => (obj instanceof DeletedFinalStateUnknown ? obj.key : this.#keyFunc(obj)),
    });
  }

  // ------------------------------------------------------------ lifetime

  /** A subscriber of everything (cluster undefined) or of one cluster: the first starts the run; later ones get the cache as adds first. */
  attach(subscriber: Subscriber<ClusterEvent<T>>, cluster: string | undefined): () => void {
    if (this.#state === 'failed') {
      subscriber.error(this.#failure);
      return () => {};
    }
    const listener: Listener<T> = { subscriber, cluster };
    if (cluster === undefined) this.#all = [...this.#all, listener];
    else this.#byCluster.set(cluster, [...(this.#byCluster.get(cluster) ?? []), listener]);
    this.#listeners++;
    if (this.#state === 'idle') this.#run();
    else {
      for (const [name, member] of this.#members) {
        if (cluster !== undefined && name !== cluster) continue;
        this.#replay(member, subscriber);
      }
    }
    return () => this.#detach(listener);
  }

  #detach(listener: Listener<T>): void {
    if (listener.cluster === undefined) {
      const before = this.#all.length;
      this.#all = this.#all.filter((l) => l !== listener);
      if (this.#all.length === before) return;
    } else {
      const list = this.#byCluster.get(listener.cluster) ?? [];
      const rest = list.filter((l) => l !== listener);
      if (rest.length === list.length) return;
      if (rest.length === 0) this.#byCluster.delete(listener.cluster);
      else this.#byCluster.set(listener.cluster, rest);
    }
    this.#listeners--;
    if (this.#listeners === 0 && this.#state === 'running') this.#pause();
  }

  #run(): void {
    this.#state = 'running';
    this.#haveSet = false;
    this.#publish();
    this.#provider = clusterChanges(this.clusters, (err) => this.#report(err)).subscribe({
      next: (changes) => this.#apply(changes),
      error: (err: unknown) => this.#fail(err instanceof Error ? err : new Error(String(err))),
    });
  }

  /** The last subscriber left: every cluster's requests and timers end, the cache empties; a later subscriber starts afresh. */
  #pause(): void {
    this.#provider?.unsubscribe();
    this.#provider = undefined;
    for (const member of this.#members.values()) member.close();
    this.#members.clear();
    this.#state = 'idle';
    this.#syncWaiters.failAll('stopped', 'its last subscriber left');
    this.#publish();
  }

  /** The provider failed: every subscriber gets its error (MC-1). */
  #fail(err: Error): void {
    this.#failure = err;
    this.#report(err);
    this.#provider = undefined;
    for (const member of this.#members.values()) member.close();
    this.#members.clear();
    this.#state = 'failed';
    this.#syncWaiters.failAll('failed', 'its cluster provider failed');
    const listeners = [...this.#all, ...[...this.#byCluster.values()].flat()];
    this.#all = [];
    this.#byCluster.clear();
    this.#listeners = 0;
    this.#publish();
    for (const l of listeners) l.subscriber.error(err);
  }

  #apply(changes: readonly ClusterChange[]): void {
    for (const change of changes) {
      if (change.type === 'join') {
        this.#members.set(change.cluster.name, new ClusterMember<T>(change.cluster, this.#host));
      } else if (change.type === 'leave') {
        const member = this.#members.get(change.name);
        this.#members.delete(change.name);
        member?.remove();
      } else {
        this.#members.get(change.cluster.name)?.replace(change.cluster);
      }
      // A subscriber may have left inside an event of this change.
      if (this.#state !== 'running') return;
    }
    this.#haveSet = true;
    this.#publish();
  }

  #build(cluster: Cluster): Informer<T> {
    return informer<T>(this.#source(cluster), { ...this.#informerOpts, indexers: this.#indexers, name: `${this.name} in ${cluster.name}` });
  }

  // ------------------------------------------------------------ delivery

  #emit(event: ClusterEvent<T>): void {
    for (const l of this.#all) l.subscriber.next(event);
    const some = this.#byCluster.get(event.cluster);
    if (some !== undefined) for (const l of some) l.subscriber.next(event);
  }

  #replay(member: ClusterMember<T>, subscriber: Subscriber<ClusterEvent<T>>): void {
    const store = member.store;
    if (store === undefined) return;
    for (const key of store.listKeys()) {
      const obj = store.getByKey(key);
      if (obj !== undefined) subscriber.next({ type: 'add', obj, isInInitialList: true, cluster: member.name, key: this.store.keyOf(member.name, obj) });
    }
  }

  *#stores(): Iterable<[string, ReadonlyIndexer<T>]> {
    for (const [name, member] of this.#members) {
      const store = member.store;
      if (store !== undefined) yield [name, store];
    }
  }

  #addIndexers(more: Indexers<T>): void {
    const taken = Object.keys(more).filter((name) => name in this.#indexers && this.#indexers[name] !== more[name]);
    if (taken.length > 0) throw new IndexConflictError(taken);
    const fresh = Object.fromEntries(Object.entries(more).filter(([name]) => !(name in this.#indexers)));
    if (Object.keys(fresh).length === 0) return;
    for (const member of this.#members.values()) member.addIndexers(fresh);
    this.#indexers = { ...this.#indexers, ...fresh };
  }

  // ------------------------------------------------------------ errors and status

  #report(err: Error): void {
    this.#errorCount++;
    this.#lastError = err;
    this.#errors.report(err);
    this.#publish();
  }

  #syncError(reason: CacheSyncFailure, detail: string): CacheSyncError {
    const synced: string[] = [];
    const unsynced: string[] = [];
    let cause: unknown = this.#failure;
    for (const [name, member] of this.#members) {
      if (member.settled) synced.push(name);
      else {
        unsynced.push(name);
        cause ??= member.lastError;
      }
    }
    if (!this.#haveSet) unsynced.push(`${this.name} (no cluster set from its provider yet)`);
    return new CacheSyncError(synced, unsynced.length > 0 ? unsynced : [this.name], cause ?? this.#lastError, reason, detail);
  }

  #snapshot(): MultiClusterStatus {
    const clusters = [...(this.#members?.values() ?? [])].map((m) => m.status()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { state: this.#state, synced: this.#synced.value, clusters, errors: this.#errorCount, lastError: this.#lastError };
  }

  #publish(): void {
    if (this.#status === undefined) return;
    const synced = this.#state === 'running' && this.#haveSet && [...this.#members.values()].every((m) => m.settled);
    if (synced !== this.#synced.value) this.#synced.next(synced);
    this.#status.next(this.#snapshot());
  }
}
