import { BehaviorSubject, Observable, Subject, asyncScheduler, type Subscriber, type Subscription } from 'rxjs';
import { ErrorChannel } from '../errors/ErrorChannel.js';
import { toError } from '../errors/reportError.js';
import { createIndexer } from '../store/indexer.js';
import type { Indexer } from '../store/indexer.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { byNamespace } from '../store/indexFuncs.js';
import type { Indexers, KubeObject } from '../store/types.js';
import { deltaFifo } from '../operators/deltaFifo.js';
import { orderedFifo, type OrderedFifoOptions } from '../operators/orderedFifo.js';
import { probedReflect } from '../reflector/reflect.js';
import type { ReflectOptions, ReflectorEvent, ReflectorProbe, ReflectorStatus } from '../reflector/types.js';
import type { ListerWatcher, SourceIdentity } from '../sources/types.js';
import { applyDeltas, type DeltaTarget } from './applyDeltas.js';
import { applyOrdered } from './applyOrdered.js';
import { CacheSyncError, type CacheSyncFailure } from './CacheSyncError.js';
import { CacheProgress } from './cacheProgress.js';
import { checkInformerOptions } from './informerOptions.js';
import { InformerMetricsRecorder } from './metrics.js';
import type { Informer, InformerOptions, InformerStatus, InformerStore, WhenSyncedOptions } from './types.js';
import { Currency, DEFAULT_MAX_LAG_MS } from './currency.js';
import type { Notification } from './notification.js';
import { ObserverListener, type Listener } from './listeners.js';
import { DrainQueue } from './drainQueue.js';
import { HandlerRegistration, type EventHandler, type HandlerOptions, type Registration } from './registration.js';
import { armResync, lowerCheckPeriod, resyncCheckPeriod, shouldResync } from './resyncPeriods.js';
import { stripManagedFields } from './stripManagedFields.js';
import { SyncWaiters } from './syncWaiters.js';
import { describeValue } from '../options/validate.js';

/** The one informer implementation: an Observable whose subscriptions (handler registrations among them) share one lifetime. */
export class SharedInformer<T extends KubeObject> extends Observable<InformerEvent<T>> implements Informer<T> {
  readonly name: string;
  readonly identity: SourceIdentity | undefined;
  readonly #source: ListerWatcher<T>;
  readonly #opts: InformerOptions<T>;
  readonly #indexer: Indexer<T>;
  readonly #synced = new BehaviorSubject<boolean>(false);
  // Where errors go: onError, errors$ subscribers, or the process reporter.
  readonly #errors: ErrorChannel;
  readonly #status: BehaviorSubject<InformerStatus>;
  readonly #transform: ((obj: T) => T) | undefined;
  /** managedFields are stripped: by the source as it decodes, where it can, and by the transform. */
  readonly #strip: boolean;
  // Whether handed-out objects are frozen; the store freezes what it keeps, deletes are frozen here.
  readonly #freeze: boolean;
  readonly status$: Observable<InformerStatus>;
  readonly errors$: Observable<Error>;
  readonly resourceVersion$: Observable<string>;
  // Keeps the store's resourceVersion at what every cached object has reached, and tells read-your-writes waits (S-40).
  readonly #progress: CacheProgress;
  // Everyone the informer delivers to; copied on write so a listener joining inside a delivery misses nothing and gets nothing twice.
  //
  // Why a list of listeners and not rxjs's share()/connectable (S-39). share({ resetOnRefCountZero }) would give the
  // lifetime (first subscriber starts, last one stops), but not the rest, which this list does in one place:
  // - a late listener gets the cache as it is now as adds marked isInInitialList, in the turn it joins, then live
  //   events: a replay of past events (share's ReplaySubject connector) would be stale and unbounded;
  // - a sync notification goes only to listeners whose resync is due, a flag the resync check moves per listener;
  // - handler registrations carry their own buffers and show in status(); a failure ends each kind of listener its
  //   own way, and a late subscriber then gets the failure, not a new lifetime.
  // Measured (npm run bench -- micro, "fan-out: 1000 notifications → 10 listeners"): share() with a per-subscriber
  // filter took about ten times this loop per notification (p50 0.73 µs against 0.07 µs); small beside the
  // informer's whole per-event cost, so the points above decide, not the cost.
  #listeners: readonly Listener<T>[] = [];
  // Whoever waits in whenSynced, so a pause or failure can answer them at once.
  readonly #syncWaiters = new SyncWaiters(this.#synced, (reason, detail) => this.#syncError(reason, detail));
  #state: InformerStatus['state'] = 'idle';
  #reflectorStatus: ReflectorStatus | undefined;
  // Whether the cache is current with the server, and since when it is behind: what a liveness probe reads (HI-57).
  readonly #currency: Currency;
  // The running reflect → deltaFifo pipeline; unsubscribing aborts requests and timers.
  #subscription: Subscription | undefined;
  // How often the reflector ticks (client-go's resyncCheckPeriod): set when a lifetime starts, lowered by a handler asking for less (S-11).
  #resyncCheckPeriod = 0;
  // The running reflector, told when the check period is lowered.
  #reflector: ReflectorProbe | undefined;
  #nextHandlerId = 1;
  #errorCount = 0;
  // Totals of lifetimes that ended and the running reflector, read when a status is taken.
  readonly #metrics = new InformerMetricsRecorder();
  // The handlers' drains, one microtask per event for all of them (PF-45).
  readonly #drains = new DrainQueue();
  #lastError: Error | undefined;
  // The error that ended the informer, for late subscribers and whenSynced.
  #failure: Error | undefined;
  // Counts lifetimes: deltas of a lifetime that ended (its last listener left inside a delivery) are dropped.
  #lifetime = 0;

  constructor(source: ListerWatcher<T>, opts: InformerOptions<T>) {
    let self: SharedInformer<T> | undefined;
    super((subscriber) => (self as SharedInformer<T>).#subscribeObserver(subscriber));
    self = this;
    this.name = checkInformerOptions(source, opts);
    this.identity = source.identity;
    this.#source = source;
    this.#opts = opts;
    this.#freeze = opts.freeze ?? true;
    const indexers: Indexers<T> = { namespace: byNamespace, ...opts.indexers };
    this.#indexer = createIndexer<T>({
      indexers,
      ...(opts.keyFunc !== undefined && { keyFunc: opts.keyFunc }),
      freeze: this.#freeze,
    });
    const strip = opts.stripManagedFields ?? true;
    this.#strip = strip;
    const user = opts.transform;
    this.#transform = strip && user !== undefined ? (obj) => user(stripManagedFields(obj)) : strip ? stripManagedFields : user;
    this.#currency = new Currency(opts.scheduler ?? asyncScheduler, opts.maxLagMs ?? DEFAULT_MAX_LAG_MS, () => this.#publishStatus());
    this.#status = new BehaviorSubject<InformerStatus>(this.#snapshot());
    this.status$ = this.#status.asObservable();
    this.#errors = new ErrorChannel(opts.onError);
    this.errors$ = this.#errors.errors$;
    this.#progress = new CacheProgress(this.#indexer as Indexer<unknown>);
    this.resourceVersion$ = this.#progress.resourceVersion$;
  }

  get store(): InformerStore<T> {
    return this.#indexer;
  }

  status(): InformerStatus {
    return this.#snapshot();
  }

  whenSynced(opts: WhenSyncedOptions = {}): Promise<void> {
    if (opts === null || typeof opts !== 'object' || opts instanceof AbortSignal) {
      throw new TypeError(`whenSynced takes { timeout?, signal? }, got ${opts instanceof AbortSignal ? 'an AbortSignal (pass { signal })' : describeValue(opts)}`);
    }
    const { timeout, signal } = opts;
    if (timeout !== undefined && (!Number.isFinite(timeout) || timeout < 0)) throw new TypeError(`timeout must be a non-negative number of ms, got ${describeValue(timeout)}`);
    // Failed, even after it synced: a cache that stopped for good is not one to wait on (S-2).
    if (this.#state === 'failed') return Promise.reject(this.#syncError('failed', 'the informer failed'));
    if (this.#synced.value) return Promise.resolve();
    if (this.#state === 'idle') return Promise.reject(this.#syncError('not-running', 'it is not running: subscribe to it or add a handler first'));
    if (signal?.aborted) return Promise.reject(this.#syncError('aborted', 'the signal aborted'));
    return this.#syncWaiters.wait(timeout, signal);
  }

  addHandler(handler: EventHandler<T>, opts: HandlerOptions = {}): Registration {
    if (this.#state === 'failed') throw this.#failure;
    const reg = new HandlerRegistration<T>(this.#nextHandlerId++, handler, opts, this.#opts.resyncPeriod ?? 0, {
      hasSynced: () => this.#synced.value,
      report: (err) => this.#report(err),
      removed: (r) => this.#detach(r as HandlerRegistration<T>),
      backlog: () => this.#publishStatus(),
      drainSoon: (drain) => this.#drains.add(drain),
      scheduler: this.#opts.scheduler ?? asyncScheduler,
    });
    this.#attach(reg);
    return reg;
  }

  // ------------------------------------------------------------ lifetime

  #subscribeObserver(subscriber: Subscriber<InformerEvent<T>>): () => void {
    if (this.#state === 'failed') {
      subscriber.error(this.#failure);
      return () => {};
    }
    const listener = new ObserverListener<T>(subscriber);
    this.#attach(listener);
    return () => this.#detach(listener);
  }

  /** A new listener: the first one starts a lifetime; later ones get the cache as initial adds, in this turn, then live events. */
  #attach(listener: Listener<T>): void {
    this.#listeners = [...this.#listeners, listener];
    if (listener instanceof HandlerRegistration && this.#state === 'running') this.#joinResync(listener);
    if (this.#state === 'idle') this.#run();
    else {
      for (const obj of this.#indexer.list()) {
        listener.enqueue({ event: { type: 'add', obj, isInInitialList: true }, key: this.#indexer.keyOf(obj), isSync: false });
      }
    }
    this.#publishStatus();
  }

  #detach(listener: Listener<T>): void {
    const before = this.#listeners.length;
    this.#listeners = this.#listeners.filter((l) => l !== listener);
    if (this.#listeners.length === before) return;
    if (this.#listeners.length === 0 && this.#state === 'running') this.#pause();
    else this.#publishStatus();
  }

  /** The last listener left: end requests and timers and drop the cache; a later subscriber starts afresh. */
  #pause(): void {
    this.#lifetime++;
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
    this.#reflector = undefined;
    this.#metrics.ended();
    this.#state = 'idle';
    this.#reflectorStatus = undefined;
    this.#currency.reset();
    this.#indexer.replace([], '');
    this.#progress.reset();
    this.#synced.next(false);
    this.#syncWaiters.failAll('stopped', 'its last subscriber left');
    this.#publishStatus();
  }

  /**
   * Ends the informer for good with the error nothing can heal (S-35): it is no longer synced (S-2). A registration's
   * `done` waits for its call in progress, and `errors$` and `status$` end only once every `done` has settled, so
   * what such a call throws still reaches them (S-16).
   */
  #fail(failure: Error): void {
    this.#state = 'failed';
    this.#failure = failure;
    this.#lifetime++;
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
    this.#reflector = undefined;
    this.#metrics.ended();
    this.#currency.reset();
    const listeners = this.#listeners;
    this.#listeners = [];
    this.#syncWaiters.failAll('failed', 'the informer failed');
    this.#synced.next(false);
    const ending: Promise<void>[] = [];
    for (const l of listeners) {
      if (l instanceof HandlerRegistration) {
        l.end();
        ending.push(l.done);
      } else if (l instanceof ObserverListener) l.subscriber.error(failure);
    }
    this.#publishStatus();
    this.#synced.complete();
    this.#progress.complete();
    const close = (): void => {
      this.#errors.complete();
      this.#status.complete();
    };
    if (ending.length === 0) close();
    else void Promise.all(ending).then(close);
  }

  #syncError(reason: CacheSyncFailure, detail: string): CacheSyncError {
    return new CacheSyncError([], [this.name], this.#failure ?? this.#lastError, reason, detail);
  }

  #run(): void {
    this.#state = 'running';
    this.#failure = undefined;
    const now = this.#now();
    this.#resyncCheckPeriod = resyncCheckPeriod(this.#opts.resyncPeriod ?? 0, this.#listeners);
    for (const l of this.#listeners) if (l instanceof HandlerRegistration) armResync(l, now);
    const input = new Subject<ReflectorEvent<T>>();
    const fifoOpts: OrderedFifoOptions<T> = {
      knownObjects: this.#indexer,
      ...(this.#opts.keyFunc !== undefined && { keyFunc: this.#opts.keyFunc }),
      ...(this.#transform !== undefined && { transform: this.#transform }),
      onError: (err) => this.#report(err),
      onSynced: () => {
        this.#synced.next(true);
        this.#publishStatus();
      },
    };
    const lifetime = ++this.#lifetime;
    // Made once per lifetime: the FIFO hands over one Deltas per key, and a listener's callback may end the lifetime.
    const target: DeltaTarget<T> = {
      store: this.#indexer,
      freezeDeleted: this.#freeze,
      current: () => lifetime === this.#lifetime,
      notify: (event, key, isSync) => this.#notify(event, key, isSync),
      audience: () => {
        const fixed = this.#listeners;
        return (event, key, isSync) => this.#notify(event, key, isSync, fixed);
      },
      report: (err) => this.#report(err),
    };
    // The ordered queue (PF-1) hands on single events and whole relists; the per-key one (D-1…D-21) per-key Deltas.
    const sub =
      this.#opts.fifo === 'ordered'
        ? input.pipe(orderedFifo<T>(fifoOpts)).subscribe({ next: (item) => applyOrdered(item, target) })
        : input.pipe(deltaFifo<T>({ ...fifoOpts, emitDeltaTypeReplaced: true })).subscribe({ next: (deltas) => applyDeltas(deltas, target) });
    const reflectorOpts: ReflectOptions = {
      ...this.#opts.reflector,
      resyncPeriod: this.#resyncCheckPeriod,
      initialList: this.#opts.initialList ?? 'paged',
      // Each page is applied while the next downloads: a list is never held whole beside the store (RF-35, S-37).
      listDelivery: 'pages',
      // What the transform would strip is not parsed at all, where the source can skip it (P-7).
      stripManagedFields: this.#strip,
      ...(this.#opts.scheduler !== undefined && { scheduler: this.#opts.scheduler }),
      status: (status) => {
        this.#reflectorStatus = status;
        this.#currency.status(status);
        if (status.state === 'error') this.#report(toError(status.error));
        else this.#publishStatus();
      },
    };
    this.#subscription = sub;
    sub.add(
      probedReflect<T>(
        this.#source,
        reflectorOpts,
        (probe) => {
          this.#reflector = probe;
          this.#metrics.started(probe);
        },
        // Handlers are the only work an event queues for before the next (observers are told at once).
        () => this.#drains.due,
      ).subscribe({
        next: (event) => {
          this.#currency.event(event);
          if (event.type !== 'Resync' || shouldResync(this.#listeners, this.#now())) input.next(event);
          // The FIFO drained synchronously, so the store holds this event now, unless a listener ended the lifetime.
          if (lifetime === this.#lifetime) this.#progress.applied(event);
        },
        // Only an error nothing can heal ends the reflector (a 400 or 422, or what onTerminal chose); it was reported with its status.
        error: (err: unknown) => this.#fail(toError(err)),
      }),
    );
  }

  /** A handler joining a running lifetime: its resync clock starts now, and the reflector ticks at least as often as it asks. */
  #joinResync(reg: HandlerRegistration<T>): void {
    armResync(reg, this.#now());
    const period = lowerCheckPeriod(this.#resyncCheckPeriod, reg);
    if (period === this.#resyncCheckPeriod) return;
    this.#resyncCheckPeriod = period;
    this.#reflector?.setResyncPeriod(period);
  }

  #now(): number {
    return (this.#opts.scheduler ?? asyncScheduler).now();
  }

  // ------------------------------------------------------------ notifications

  /** Delivers to every listener, or only to those of `among` still listening (a relist's audience, PF-16). */
  #notify(event: InformerEvent<T>, key: string, isSync: boolean, among?: readonly Listener<T>[]): void {
    const n: Notification<T> = { event, key, isSync };
    const listeners = this.#listeners;
    // The list is copied on write, so the same array means nobody joined or left.
    const filter = among !== undefined && among !== listeners;
    for (const l of listeners) {
      if (isSync && !l.resyncDue) continue;
      if (filter && !among.includes(l)) continue;
      l.enqueue(n);
    }
  }

  // ------------------------------------------------------------ errors and status

  #report(err: Error): void {
    this.#errorCount++;
    this.#lastError = err;
    this.#errors.report(err);
    this.#publishStatus();
  }

  #snapshot(): InformerStatus {
    const handlers = [];
    for (const l of this.#listeners) {
      if (l instanceof HandlerRegistration) handlers.push({ id: l.id, depth: l.depth, processed: l.processed, synced: l.hasSynced() });
    }
    return {
      state: this.#state,
      synced: this.#synced.value,
      reflector: this.#reflectorStatus,
      handlers,
      errors: this.#errorCount,
      lastError: this.#lastError,
      objects: this.#indexer.size,
      ...this.#metrics.snapshot(),
      ...this.#currency.view(),
    };
  }

  #publishStatus(): void {
    if (this.#status === undefined || this.#status.closed) return;
    this.#status.next(this.#snapshot());
  }
}
