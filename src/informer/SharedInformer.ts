import { BehaviorSubject, Observable, Subject, asyncScheduler, distinctUntilChanged, type Subscriber, type Subscription } from 'rxjs';
import { from as asyncFrom, type AsyncIterableX } from 'ix/asynciterable';
import { ErrorChannel } from '../errors/ErrorChannel.js';
import { toError } from '../errors/reportError.js';
import { createIndexer } from '../store/indexer.js';
import type { Indexer } from '../store/indexer.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { deepFreeze } from '../store/deepFreeze.js';
import type { InformerEvent } from '../store/events.js';
import { byNamespace } from '../store/indexFuncs.js';
import type { Indexers, KubeObject } from '../store/types.js';
import { deltaFifo } from '../operators/deltaFifo.js';
import { probedReflect } from '../operators/reflect.js';
import type { ReflectOptions, ReflectorStatus } from '../operators/reflectTypes.js';
import type { Deltas, ReflectorEvent } from '../operators/types.js';
import type { ListerWatcher, SourceIdentity } from '../sources/types.js';
import { CacheSyncError, type CacheSyncFailure } from './CacheSyncError.js';
import { CacheProgress } from './cacheProgress.js';
import { InformerStoppedError } from './InformerStoppedError.js';
import { checkInformerOptions } from './informerOptions.js';
import { InformerMetricsRecorder, type InformerMetrics } from './metrics.js';
import type { Informer, InformerOptions, InformerStatus, InformerStore, WhenSyncedOptions } from './informer.js';
import { notificationIterable } from './notifications.js';
import type { Notification } from './notification.js';
import { keepAlive, ObserverListener, type Listener } from './listeners.js';
import { HandlerRegistration, type EventHandler, type HandlerOptions, type Registration } from './registration.js';
import { armResync, resyncCheckPeriod, shouldResync } from './resyncPeriods.js';
import { stripManagedFields } from './stripManagedFields.js';
import { SyncWaiters } from './syncWaiters.js';

function uidOf(obj: unknown): string | undefined {
  return (obj as KubeObject | null)?.metadata?.uid;
}

function resourceVersionOf(obj: unknown): string | undefined {
  return (obj as KubeObject | null)?.metadata?.resourceVersion;
}

/** The one informer implementation: an Observable whose subscriptions, handlers and start() share one lifetime. */
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
  readonly synced$: Observable<boolean>;
  readonly status$: Observable<InformerStatus>;
  readonly errors$: Observable<Error>;
  readonly resourceVersion$: Observable<string>;
  // Keeps the store's resourceVersion at what every cached object has reached, and tells read-your-writes waits (S-38).
  readonly #progress: CacheProgress;
  // Everyone the informer delivers to; copied on write so a listener joining inside a delivery misses nothing and gets nothing twice.
  #listeners: readonly Listener<T>[] = [];
  // Whoever waits in whenSynced, so a pause, stop or failure can answer them at once.
  readonly #syncWaiters = new SyncWaiters(this.#synced, (reason, detail) => this.#syncError(reason, detail));
  #state: InformerStatus['state'] = 'idle';
  #reflectorStatus: ReflectorStatus | undefined;
  // When a watch last delivered an event or bookmark: a silent or failing watch shows here, not in the reflector's state.
  #lastWatchEventAt: number | undefined;
  // The running reflect → deltaFifo pipeline; unsubscribing aborts requests and timers.
  #subscription: Subscription | undefined;
  // Smallest handler resync period, fixed when a lifetime starts: the reflector ticks at this rate (client-go's resyncCheckPeriod).
  #resyncCheckPeriod = 0;
  #nextHandlerId = 1;
  #errorCount = 0;
  // Totals of lifetimes that ended and the running reflector, read when metrics() is called.
  readonly #metrics = new InformerMetricsRecorder();
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
    this.#status = new BehaviorSubject<InformerStatus>(this.#snapshot());
    this.synced$ = this.#synced.pipe(distinctUntilChanged());
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

  hasSynced(): boolean {
    return this.#synced.value;
  }

  whenSynced(opts: WhenSyncedOptions = {}): Promise<void> {
    if (opts === null || typeof opts !== 'object' || opts instanceof AbortSignal) {
      throw new TypeError(`whenSynced takes { timeout?, signal? }, got ${opts instanceof AbortSignal ? 'an AbortSignal (pass { signal })' : String(opts)}`);
    }
    const { timeout, signal } = opts;
    if (timeout !== undefined && (!Number.isFinite(timeout) || timeout < 0)) throw new TypeError(`timeout must be a non-negative number of ms, got ${String(timeout)}`);
    if (this.#synced.value) return Promise.resolve();
    if (this.#state === 'stopped' || this.#state === 'failed') return Promise.reject(this.#syncError(this.#state, `the informer ${this.#state === 'failed' ? 'failed' : 'was stopped'}`));
    if (this.#state === 'idle') {
      return Promise.reject(this.#syncError('not-running', 'it is not running: subscribe to it, add a handler or call start() first'));
    }
    if (signal?.aborted) return Promise.reject(this.#syncError('aborted', 'the signal aborted'));
    return this.#syncWaiters.wait(timeout, signal);
  }

  addHandler(handler: EventHandler<T>, opts: HandlerOptions = {}): Registration {
    this.#assertUsable('handler was not added');
    const reg = new HandlerRegistration<T>(this.#nextHandlerId++, handler, opts, this.#opts.resyncPeriod ?? 0, {
      hasSynced: () => this.#synced.value,
      report: (err) => this.#report(err),
      removed: (r) => this.#detach(r as HandlerRegistration<T>),
      backlog: () => this.#publishStatus(),
      scheduler: this.#opts.scheduler ?? asyncScheduler,
    });
    this.#attach(reg);
    return reg;
  }

  notifications(opts: HandlerOptions = {}): AsyncIterableX<InformerEvent<T>> {
    const iterable = asyncFrom(notificationIterable(this, opts));
    // rxjs's from() prefers an interop Observable to an async iterator, whose return() would wait for the next
    // event; handing it the informer itself makes unsubscribing from from(notifications()) end at once.
    const interop = (typeof Symbol === 'function' && (Symbol as { observable?: symbol }).observable) || '@@observable';
    Object.defineProperty(iterable, interop, { value: () => this });
    return iterable;
  }

  metrics(): InformerMetrics {
    let pending = 0;
    for (const l of this.#listeners) if (l instanceof HandlerRegistration) pending += l.depth;
    return this.#metrics.snapshot(this.name, this.#synced.value, this.#indexer.size, this.#errorCount, pending);
  }

  start(): void {
    this.#assertUsable('start() after the informer stopped');
    if (!this.#listeners.includes(keepAlive)) this.#attach(keepAlive);
  }

  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    if (this.#state !== 'failed') this.#state = 'stopped';
    await this.#end(undefined);
  }

  // ------------------------------------------------------------ lifetime

  #subscribeObserver(subscriber: Subscriber<InformerEvent<T>>): () => void {
    if (this.#state === 'failed') {
      subscriber.error(this.#failure);
      return () => {};
    }
    if (this.#state === 'stopped') {
      subscriber.error(new InformerStoppedError(`${this.name}: subscribed after the informer stopped`));
      return () => {};
    }
    const listener = new ObserverListener<T>(subscriber);
    this.#attach(listener);
    return () => this.#detach(listener);
  }

  #assertUsable(what: string): void {
    if (this.#state === 'stopped' || this.#state === 'failed') {
      throw new InformerStoppedError(`${this.name}: ${what}: the informer has ${this.#state === 'failed' ? 'failed' : 'stopped'}`, { cause: this.#failure });
    }
  }

  /** A new listener: the first one starts a lifetime; later ones get the cache as initial adds, in this turn, then live events. */
  #attach(listener: Listener<T>): void {
    this.#listeners = [...this.#listeners, listener];
    if (listener instanceof HandlerRegistration && this.#state === 'running') armResync(listener, this.#resyncCheckPeriod, this.#now());
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
    this.#metrics.ended();
    this.#state = 'idle';
    this.#reflectorStatus = undefined;
    this.#lastWatchEventAt = undefined;
    this.#indexer.replace([], '');
    this.#progress.reset();
    this.#synced.next(false);
    this.#syncWaiters.failAll('stopped', 'its last subscriber left');
    this.#publishStatus();
  }

  /** Ends the informer for good: after stop(), or with the error nothing can heal. */
  async #end(failure: Error | undefined): Promise<void> {
    this.#lifetime++;
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
    this.#metrics.ended();
    const listeners = this.#listeners;
    this.#listeners = [];
    this.#syncWaiters.failAll(failure === undefined ? 'stopped' : 'failed', failure === undefined ? 'the informer was stopped' : 'the informer failed');
    const shutdowns: Promise<void>[] = [];
    for (const l of listeners) {
      if (l instanceof HandlerRegistration) shutdowns.push(l.shutdown());
      else if (l instanceof ObserverListener) {
        if (failure === undefined) l.subscriber.complete();
        else l.subscriber.error(failure);
      }
    }
    await Promise.all(shutdowns);
    this.#publishStatus();
    this.#synced.complete();
    this.#errors.complete();
    this.#status.complete();
    this.#progress.complete();
  }

  #syncError(reason: CacheSyncFailure, detail: string): CacheSyncError {
    return new CacheSyncError([], [this.name], this.#failure ?? this.#lastError, reason, detail);
  }

  #run(): void {
    this.#state = 'running';
    this.#failure = undefined;
    const now = this.#now();
    this.#resyncCheckPeriod = resyncCheckPeriod(this.#opts.resyncPeriod ?? 0, this.#listeners);
    for (const l of this.#listeners) if (l instanceof HandlerRegistration) armResync(l, this.#resyncCheckPeriod, now);
    const input = new Subject<ReflectorEvent<T>>();
    const fifo = input.pipe(
      deltaFifo<T>({
        knownObjects: this.#indexer,
        emitDeltaTypeReplaced: true,
        ...(this.#opts.keyFunc !== undefined && { keyFunc: this.#opts.keyFunc }),
        ...(this.#transform !== undefined && { transform: this.#transform }),
        onError: (err) => this.#report(err),
        onSynced: () => {
          this.#synced.next(true);
          this.#publishStatus();
        },
      }),
    );
    const lifetime = ++this.#lifetime;
    const sub = fifo.subscribe({ next: (deltas) => this.#process(deltas, lifetime) });
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
        if (status.state === 'error') this.#report(toError(status.error));
        else this.#publishStatus();
      },
    };
    this.#subscription = sub;
    sub.add(
      probedReflect<T>(this.#source, reflectorOpts, (probe) => this.#metrics.started(probe)).subscribe({
        next: (event) => {
          if (event.type === 'Added' || event.type === 'Modified' || event.type === 'Deleted' || event.type === 'Bookmark') this.#lastWatchEventAt = this.#now();
          if (event.type !== 'Resync' || shouldResync(this.#listeners, this.#now())) input.next(event);
          // The FIFO drained synchronously, so the store holds this event now, unless a listener ended the lifetime.
          if (lifetime === this.#lifetime) this.#progress.applied(event);
        },
        // Only an error nothing can heal ends the reflector (a 400 or 422, or what onTerminal chose); it was reported with its status.
        error: (err: unknown) => {
          this.#state = 'failed';
          this.#failure = toError(err);
          void this.#end(this.#failure);
        },
      }),
    );
  }

  #now(): number {
    return (this.#opts.scheduler ?? asyncScheduler).now();
  }

  // ------------------------------------------------------------ deltas

  /** Applies one key's deltas to the store, oldest first, notifying after each. */
  #process(deltas: Deltas<T>, lifetime: number): void {
    const key = deltas.key;
    for (const delta of deltas.deltas) {
      // A listener's callback may have ended this lifetime (the last unsubscribe): nothing more is applied.
      if (lifetime !== this.#lifetime) return;
      try {
        if (delta.type === 'Deleted') {
          this.#indexer.delete(delta.obj);
          // The final state of a deleted object is never stored, so the store did not freeze it; every handler shares it.
          if (this.#freeze) deepFreeze(delta.obj instanceof DeletedFinalStateUnknown ? delta.obj.obj : delta.obj);
          this.#notify({ type: 'delete', obj: delta.obj }, key, false);
          continue;
        }
        const obj = delta.obj as T;
        const old = this.#indexer.getByKey(key);
        const oldUid = uidOf(old);
        const newUid = uidOf(obj);
        if (old === undefined) {
          this.#indexer.add(obj);
          this.#notify({ type: 'add', obj, isInInitialList: deltas.isInInitialList }, key, false);
        } else if (oldUid !== undefined && newUid !== undefined && oldUid !== newUid) {
          // Same name, new object: the old one is gone even if no watch said so.
          this.#indexer.delete(old);
          this.#notify({ type: 'delete', obj: new DeletedFinalStateUnknown(key, old) }, key, false);
          this.#indexer.add(obj);
          this.#notify({ type: 'add', obj, isInInitialList: deltas.isInInitialList }, key, false);
        } else {
          this.#indexer.update(obj);
          const rv = resourceVersionOf(obj);
          this.#notify({ type: 'update', oldObj: old, obj }, key, rv !== undefined && rv === resourceVersionOf(old));
        }
      } catch (err) {
        // A key or index function threw: the store is unchanged for this delta and nothing is announced.
        this.#report(toError(err));
      }
    }
  }

  #notify(event: InformerEvent<T>, key: string, isSync: boolean): void {
    const n: Notification<T> = { event, key, isSync };
    for (const l of this.#listeners) {
      if (isSync && !l.resyncDue) continue;
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
      lastWatchEventAt: this.#lastWatchEventAt,
    };
  }

  #publishStatus(): void {
    if (this.#status === undefined || this.#status.closed) return;
    this.#status.next(this.#snapshot());
  }
}
