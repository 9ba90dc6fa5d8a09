import { BehaviorSubject, Subject, distinctUntilChanged, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { from as asyncFrom, type AsyncIterableX } from 'ix/asynciterable';
import { createIndexer } from '../store/indexer.js';
import type { Indexer, ReadonlyIndexer } from '../store/indexer.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import type { Indexers, KeyFunc, KubeObject } from '../store/types.js';
import { deltaFifo } from '../operators/deltaFifo.js';
import { reflect } from '../operators/reflect.js';
import type { ReflectOptions, ReflectorStatus } from '../operators/reflectTypes.js';
import type { Deltas, ReflectorEvent } from '../operators/types.js';
import type { ListerWatcher } from '../sources/types.js';
import { InformerStoppedError } from './InformerStoppedError.js';
import { HandlerRegistration, type EventHandler, type HandlerOptions, type Registration } from './registration.js';
import type { Notification } from './notification.js';
import type { InformerEvent } from './types.js';

/** Options of {@link informer}. */
export interface InformerOptions<T> {
  /** Extra indexes on the store, `name → obj => values`. @default {} */
  readonly indexers?: Indexers<T>;
  /**
   * Runs once per object before it is queued, e.g. to drop fields the
   * controller never reads. Must return the object to keep (it may be the
   * same object, changed in place); what it throws is reported on `errors$`
   * and that object is skipped. Runs after `stripManagedFields`.
   * @default undefined
   */
  readonly transform?: (obj: T) => T;
  /**
   * Drop `metadata.managedFields` before caching. Server-side-apply
   * bookkeeping is often a third of an object's size and controllers
   * rarely read it; set false to keep it.
   * @default true
   */
  readonly stripManagedFields?: boolean;
  /**
   * Default resync period of handlers, in ms; 0 disables resync. A handler's
   * own `resyncPeriod` overrides it.
   * @default 0
   */
  readonly resyncPeriod?: number;
  /** `'paged'` LIST or `'stream'` (a watch with `sendInitialEvents`, falling back to LIST). @default 'paged' */
  readonly initialList?: 'paged' | 'stream';
  /** Deep-freeze cached objects so no handler can corrupt the cache. @default true */
  readonly freeze?: boolean;
  /** Store key function. @default metaNamespaceKey */
  readonly keyFunc?: KeyFunc<T>;
  /** Scheduler for timers (resync, backoff); a TestScheduler makes them virtual. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Passed through to the reflector (page size, backoff, watch timeouts, terminal errors). @default {} */
  readonly reflector?: Omit<ReflectOptions, 'resyncPeriod' | 'initialList' | 'scheduler' | 'status'>;
}

/** A handler's state as shown on `status$`. */
export interface HandlerStatus {
  readonly id: number;
  readonly depth: number;
  readonly processed: number;
  readonly synced: boolean;
}

/** What an informer is doing, as emitted on `status$`. */
export interface InformerStatus {
  readonly state: 'new' | 'running' | 'stopped' | 'failed';
  readonly synced: boolean;
  /** The reflector's last status, once it has one. */
  readonly reflector: ReflectorStatus | undefined;
  readonly handlers: readonly HandlerStatus[];
  /** Errors survived so far (everything sent on `errors$`). */
  readonly errors: number;
  /** The most recent of them. */
  readonly lastError: Error | undefined;
}

/** A live, indexed cache of one resource and the stream of its changes. */
export interface Informer<T> {
  /**
   * Hot, shared stream of changes, in delivery order, emitted after the store
   * was updated. Resync updates are not on it (they are for handlers that ask
   * for them). A late subscriber misses what came before: use `addHandler`
   * or `notifications()` to start with the cached objects.
   */
  readonly events$: Observable<InformerEvent<T>>;
  /** The cache, read-only. */
  readonly store: ReadonlyIndexer<T>;
  /** Emits `false`, then `true` once the first list has been applied. */
  readonly synced$: Observable<boolean>;
  /** Reflector status, per-handler buffer depth, and state; emits on change. */
  readonly status$: Observable<InformerStatus>;
  /** Every error the informer survived: reflector faults, decode, transform, store and handler errors. */
  readonly errors$: Observable<Error>;
  hasSynced(): boolean;
  /** Resolves once synced; rejects if the informer stops first or `signal` aborts. */
  whenSynced(signal?: AbortSignal): Promise<void>;
  /** Adds a handler with its own buffer; a late handler first gets an add for every cached object. */
  addHandler(handler: EventHandler<T>, opts?: HandlerOptions): Registration;
  /** The same buffered notifications as an async iterable for `for await`; breaking out removes it. */
  notifications(opts?: HandlerOptions): AsyncIterableX<InformerEvent<T>>;
  /** Starts listing and watching; later calls do nothing. */
  start(): void;
  /** Stops requests, timers and handlers; resolves when all have ended. Idempotent. */
  stop(): Promise<void>;
}

const initialStatus: InformerStatus = { state: 'new', synced: false, reflector: undefined, handlers: [], errors: 0, lastError: undefined };

function resourceVersionOf(obj: unknown): string | undefined {
  return (obj as KubeObject | null)?.metadata?.resourceVersion;
}

function uidOf(obj: unknown): string | undefined {
  return (obj as KubeObject | null)?.metadata?.uid;
}

function stripManagedFields<T>(obj: T): T {
  const meta = (obj as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (meta !== undefined && meta !== null && 'managedFields' in meta && !Object.isFrozen(meta)) delete meta.managedFields;
  return obj;
}

/**
 * Creates an informer: a live, indexed, in-memory copy of one resource that
 * tells your code what changed. It wires `reflect()` (list, then watch, with
 * relist and backoff) into `deltaFifo()` and applies each key's deltas to the
 * store before any handler or subscriber hears of them.
 *
 * The informer runs from `start()` until `stop()`; subscribing to `events$`
 * does not start it. Differences from client-go, by design: a relist that
 * finds an object unchanged (same resourceVersion) tells only handlers whose
 * resync is due, as client-go's per-handler flag says, but a handler that
 * never asked for resync is never sent such no-op updates (client-go sends
 * them to every handler until its first resync check); an object re-created under the same name with a new UID
 * is a delete (a `DeletedFinalStateUnknown` of the old one) then an add,
 * never an update; and a handler that throws is reported, not fatal.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource } from 'rxkube';
 * import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const pods = informer<V1Pod>(kubeSource(kc, 'v1/pods'));
 * pods.addHandler({ add: (pod) => console.log('added', pod.metadata?.name) });
 * pods.start();
 * await pods.whenSynced();
 * ```
 *
 * @param source where objects come from, e.g. `kubeSource(kc, 'v1/pods')`.
 * @param opts informer options.
 * @returns the informer, not yet started.
 */
export function informer<T extends KubeObject = KubeObject>(source: ListerWatcher<T>, opts: InformerOptions<T> = {}): Informer<T> {
  return new SharedInformer<T>(source, opts);
}

class SharedInformer<T extends KubeObject> implements Informer<T> {
  readonly #source: ListerWatcher<T>;
  readonly #opts: InformerOptions<T>;
  readonly #indexer: Indexer<T>;
  readonly #events = new Subject<InformerEvent<T>>();
  readonly #synced = new BehaviorSubject<boolean>(false);
  readonly #errors = new Subject<Error>();
  readonly #status: BehaviorSubject<InformerStatus>;
  readonly #handlers = new Set<HandlerRegistration<T>>();
  readonly #transform: ((obj: T) => T) | undefined;
  readonly events$: Observable<InformerEvent<T>>;
  readonly synced$: Observable<boolean>;
  readonly status$: Observable<InformerStatus>;
  readonly errors$: Observable<Error>;
  #state: InformerStatus['state'] = 'new';
  #reflectorStatus: ReflectorStatus | undefined;
  // The running reflect → deltaFifo pipeline; unsubscribing aborts requests and timers.
  #subscription: Subscription | undefined;
  // Smallest handler resync period, fixed at start: the reflector ticks at this rate (client-go's resyncCheckPeriod).
  #resyncCheckPeriod: number;
  #nextHandlerId = 1;
  #errorCount = 0;
  #lastError: Error | undefined;

  constructor(source: ListerWatcher<T>, opts: InformerOptions<T>) {
    if (source === null || typeof source !== 'object' || typeof source.list !== 'function' || typeof source.watch !== 'function') {
      throw new TypeError(`source must be a ListerWatcher with list() and watch(), got ${String(source)}`);
    }
    const resync = opts.resyncPeriod ?? 0;
    if (!Number.isFinite(resync) || resync < 0) throw new TypeError(`resyncPeriod must be a non-negative number of ms, got ${String(opts.resyncPeriod)}`);
    if (opts.initialList !== undefined && opts.initialList !== 'paged' && opts.initialList !== 'stream') {
      throw new TypeError(`initialList must be 'paged' or 'stream', got ${JSON.stringify(opts.initialList)}`);
    }
    if (opts.transform !== undefined && typeof opts.transform !== 'function') throw new TypeError(`transform must be a function, got ${typeof opts.transform}`);
    this.#source = source;
    this.#opts = opts;
    this.#resyncCheckPeriod = resync === 0 ? 0 : Math.max(resync, 1000);
    this.#indexer = createIndexer<T>({
      ...(opts.indexers !== undefined && { indexers: opts.indexers }),
      ...(opts.keyFunc !== undefined && { keyFunc: opts.keyFunc }),
      freeze: opts.freeze ?? true,
    });
    const strip = opts.stripManagedFields ?? true;
    const user = opts.transform;
    this.#transform = strip && user !== undefined ? (obj) => user(stripManagedFields(obj)) : strip ? stripManagedFields : user;
    this.#status = new BehaviorSubject<InformerStatus>(initialStatus);
    this.events$ = this.#events.asObservable();
    this.synced$ = this.#synced.pipe(distinctUntilChanged());
    this.status$ = this.#status.asObservable();
    this.errors$ = this.#errors.asObservable();
  }

  get store(): ReadonlyIndexer<T> {
    return this.#indexer;
  }

  hasSynced(): boolean {
    return this.#synced.value;
  }

  whenSynced(signal?: AbortSignal): Promise<void> {
    if (this.#synced.value) return Promise.resolve();
    if (this.#state === 'stopped' || this.#state === 'failed') return Promise.reject(new InformerStoppedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        sub.unsubscribe();
        reject(signal?.reason);
      };
      const sub = this.#synced.subscribe({
        next: (synced) => {
          if (!synced) return;
          signal?.removeEventListener('abort', onAbort);
          resolve();
          queueMicrotask(() => sub.unsubscribe());
        },
        complete: () => {
          signal?.removeEventListener('abort', onAbort);
          if (!this.#synced.value) reject(new InformerStoppedError());
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  addHandler(handler: EventHandler<T>, opts: HandlerOptions = {}): Registration {
    if (this.#state === 'stopped' || this.#state === 'failed') {
      throw new InformerStoppedError('handler was not added: the informer has stopped');
    }
    const reg = new HandlerRegistration<T>(this.#nextHandlerId++, handler, opts, this.#opts.resyncPeriod ?? 0, {
      hasSynced: () => this.#synced.value,
      report: (err) => this.#report(err),
      removed: (r) => {
        this.#handlers.delete(r as HandlerRegistration<T>);
        this.#publishStatus();
      },
      backlog: () => this.#publishStatus(),
    });
    if (this.#state === 'running') {
      this.#armResync(reg, this.#now());
      // The cache as adds first, then live events; both happen in this turn, so nothing falls between.
      for (const obj of this.#indexer.list()) {
        reg.enqueue({ event: { type: 'add', obj, isInInitialList: true }, key: this.#indexer.keyOf(obj), isSync: false });
      }
    } else if (reg.requestedResyncPeriod !== 0 && (this.#resyncCheckPeriod === 0 || reg.requestedResyncPeriod < this.#resyncCheckPeriod)) {
      this.#resyncCheckPeriod = reg.requestedResyncPeriod;
    }
    this.#handlers.add(reg);
    this.#publishStatus();
    return reg;
  }

  notifications(opts: HandlerOptions = {}): AsyncIterableX<InformerEvent<T>> {
    return asyncFrom(notificationIterable(this, opts));
  }

  start(): void {
    if (this.#state !== 'new') return;
    this.#state = 'running';
    const now = this.#now();
    for (const reg of this.#handlers) this.#armResync(reg, now);
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
    const sub = fifo.subscribe({ next: (deltas) => this.#process(deltas) });
    const reflectorOpts: ReflectOptions = {
      ...this.#opts.reflector,
      resyncPeriod: this.#resyncCheckPeriod,
      initialList: this.#opts.initialList ?? 'paged',
      ...(this.#opts.scheduler !== undefined && { scheduler: this.#opts.scheduler }),
      status: (status) => {
        this.#reflectorStatus = status;
        if (status.state === 'error') this.#report(status.error instanceof Error ? status.error : new Error(String(status.error)));
        else this.#publishStatus();
      },
    };
    sub.add(
      reflect<T>(this.#source, reflectorOpts).subscribe({
        next: (event) => {
          if (event.type !== 'Resync') {
            input.next(event);
            return;
          }
          if (this.#shouldResync()) input.next(event);
        },
        error: () => {
          // Only an error the user declared terminal (onTerminal) ends the reflector; it was reported with its status.
          this.#state = 'failed';
          this.#publishStatus();
          this.#synced.complete();
        },
      }),
    );
    this.#subscription = sub;
    this.#publishStatus();
  }

  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
    const handlers = [...this.#handlers];
    this.#handlers.clear();
    await Promise.all(handlers.map((h) => h.shutdown()));
    this.#publishStatus();
    this.#synced.complete();
    this.#events.complete();
    this.#errors.complete();
    this.#status.complete();
  }

  #now(): number {
    return this.#opts.scheduler?.now() ?? Date.now();
  }

  /**
   * client-go's negotiation of a handler's resync period: never more often than the reflector ticks, which is
   * fixed once running (0, no resync at all, when no handler asked for one before start).
   */
  #armResync(reg: HandlerRegistration<T>, now: number): void {
    if (reg.requestedResyncPeriod !== 0) reg.resyncPeriod = this.#resyncCheckPeriod === 0 ? 0 : Math.max(reg.requestedResyncPeriod, this.#resyncCheckPeriod);
    reg.resyncDue = reg.resyncPeriod !== 0;
    reg.nextResyncAt = now + reg.resyncPeriod;
  }

  /** client-go's shouldResync: marks which handlers are due and says whether any is. */
  #shouldResync(): boolean {
    const now = this.#now();
    let any = false;
    for (const reg of this.#handlers) {
      const due = reg.resyncPeriod !== 0 && now >= reg.nextResyncAt;
      reg.resyncDue = due;
      if (due) {
        reg.nextResyncAt = now + reg.resyncPeriod;
        any = true;
      }
    }
    return any;
  }

  /** Applies one key's deltas to the store, oldest first, notifying after each. */
  #process(deltas: Deltas<T>): void {
    const key = deltas.key;
    for (const delta of deltas.deltas) {
      try {
        if (delta.type === 'Deleted') {
          this.#indexer.delete(delta.obj);
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
        this.#report(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  #notify(event: InformerEvent<T>, key: string, isSync: boolean): void {
    const n: Notification<T> = { event, key, isSync };
    for (const reg of this.#handlers) {
      if (isSync && !reg.resyncDue) continue;
      reg.enqueue(n);
    }
    if (!isSync) this.#events.next(event);
  }

  #report(err: Error): void {
    this.#errorCount++;
    this.#lastError = err;
    this.#errors.next(err);
    this.#publishStatus();
  }

  #publishStatus(): void {
    if (this.#status.closed) return;
    this.#status.next({
      state: this.#state,
      synced: this.#synced.value,
      reflector: this.#reflectorStatus,
      handlers: [...this.#handlers].map((h) => ({ id: h.id, depth: h.depth, processed: h.processed, synced: h.hasSynced() })),
      errors: this.#errorCount,
      lastError: this.#lastError,
    });
  }
}

/** Adapts a handler registration to an async iterator: a handler call ends when the consumer pulls the next event. */
function notificationIterable<T>(inf: Informer<T>, opts: HandlerOptions): AsyncIterable<InformerEvent<T>> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<InformerEvent<T>> {
      const ready: InformerEvent<T>[] = [];
      let waiting: ((r: IteratorResult<InformerEvent<T>>) => void) | undefined;
      let release: (() => void) | undefined;
      let done = false;
      const deliver = (event: InformerEvent<T>): Promise<void> =>
        new Promise<void>((resolve) => {
          release = resolve;
          if (waiting !== undefined) {
            const w = waiting;
            waiting = undefined;
            w({ value: event, done: false });
          } else {
            ready.push(event);
          }
        });
      const reg = inf.addHandler(
        {
          add: (obj, isInInitialList) => deliver({ type: 'add', obj, isInInitialList }),
          update: (oldObj, obj) => deliver({ type: 'update', oldObj, obj }),
          delete: (obj) => deliver({ type: 'delete', obj }),
        },
        opts,
      );
      const finish = (): IteratorResult<InformerEvent<T>> => {
        done = true;
        reg.remove();
        release?.();
        release = undefined;
        return { value: undefined, done: true };
      };
      // The informer stopping (or an overflow) ends the registration; a consumer waiting then sees the end.
      void reg.done.then(() => {
        done = true;
        if (waiting !== undefined && ready.length === 0) {
          const w = waiting;
          waiting = undefined;
          w({ value: undefined, done: true });
        }
      });
      return {
        next: () => {
          release?.();
          release = undefined;
          const event = ready.shift();
          if (event !== undefined) return Promise.resolve({ value: event, done: false });
          if (done || reg.closed) return Promise.resolve(finish());
          return new Promise((resolve) => (waiting = resolve));
        },
        return: () => Promise.resolve(finish()),
      };
    },
  };
}
