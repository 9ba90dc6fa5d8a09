import { Subscription, type SchedulerLike } from 'rxjs';
import { explainFrozenWrite } from '../errors/frozenObject.js';
import type { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { BufferOverflowError } from './BufferOverflowError.js';
import { HandlerError } from './HandlerError.js';
import { createHandlerBuffer, type BufferEntry, type BufferPolicy, type HandlerBuffer } from './handlerBuffer.js';
import type { Notification } from './notification.js';
import { describeValue } from '../options/validate.js';

/**
 * Callbacks for an informer's notifications. Each may return a promise; the
 * next notification for this handler waits until it settles.
 */
export interface EventHandler<T> {
  /** An object appeared; `isInInitialList` is true for the objects of the first list (or the cache, for a late handler). */
  add?(obj: T, isInInitialList: boolean): void | Promise<void>;
  /** An object changed (or, for a resync, is sent again: then `oldObj === obj`). */
  update?(oldObj: T, obj: T): void | Promise<void>;
  /** An object went away: its last state, or a `DeletedFinalStateUnknown` when a relist found it gone. */
  delete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

/** Options of `informer.addHandler`. */
export interface HandlerOptions {
  /**
   * How often this handler wants every cached object again as an update
   * (`oldObj === obj`), in milliseconds; 0 for never. Values under 1000 are
   * raised to 1000, as client-go does. It holds whenever the handler is
   * added: a running informer checks for due resyncs at least this often
   * from then on (where client-go would raise it to its own check period).
   * @default the informer's resyncPeriod
   */
  readonly resyncPeriod?: number;
  /**
   * What is held while the handler is busy.
   * @default 'unbounded'
   */
  readonly buffer?: BufferPolicy;
}

/**
 * A handler's registration with an informer: an rxjs `Subscription` like any
 * other, so it starts an idle informer, `unsubscribe()` ends it, and
 * `subscription.add(registration)` ties it to another lifetime; once it ends
 * by itself it leaves that parent, as any child Subscription does.
 * `done` resolves once it has ended and a handler call in progress has
 * finished, so what the handler uses can then be torn down (client-go's
 * `ShutDownEventHandler`): `reg.unsubscribe(); await reg.done;`.
 *
 * ## Example
 * ```ts
 * import type { Informer } from 'rxkube';
 * import type { V1Pod } from '@kubernetes/client-node';
 * declare const pods: Informer<V1Pod>;
 *
 * const reg = pods.addHandler({ add: async (pod) => console.log('added', pod.metadata?.name) });
 * await pods.whenSynced({ timeout: 30_000 });
 * reg.unsubscribe(); // the last subscriber: the watch ends
 * await reg.done; // the handler call in progress, if any, has finished
 * ```
 */
export interface Registration extends Subscription {
  /** Unique per registration, even for the same handler object. */
  readonly id: number;
  /** Notifications waiting for this handler. */
  readonly depth: number;
  /** Notifications this handler has finished (including failed ones). */
  readonly processed: number;
  /** True once unsubscribed, or ended by an `overflow: 'error'` buffer or the informer's failure. */
  readonly closed: boolean;
  /**
   * True once the informer has synced and this handler has finished every
   * add of the initial list (for a late handler: the adds of the objects
   * cached when it was added).
   */
  hasSynced(): boolean;
  /**
   * Resolves once the registration has ended (unsubscribed, overflowed with
   * `'error'`, or the informer failed) and a handler call in progress has
   * finished: client-go's `ShutDownEventHandler` is `unsubscribe()` then
   * `await done`.
   */
  readonly done: Promise<void>;
  /**
   * Stops deliveries at once: pending notifications are dropped and the
   * handler is never called again; `done` tells when a call in progress has
   * finished. When it was the informer's last subscriber, the informer goes
   * idle. Idempotent.
   */
  unsubscribe(): void;
}

/** Hooks the informer gives a registration. */
export interface RegistrationHost {
  hasSynced(): boolean;
  report(err: Error): void;
  removed(reg: HandlerRegistration<unknown>): void;
  /** The buffer grew past a power of two (64, 128, …): worth showing on the status stream. */
  backlog(reg: HandlerRegistration<unknown>): void;
  /** Runs a registration's drain in a microtask, shared with the other registrations the same event reached. */
  drainSoon(drain: () => void): void;
  /** Timers for slowing down a failing handler. */
  readonly scheduler: SchedulerLike;
}

const YIELD_EVERY = 256;
/** A handler that fails again and again waits 10 ms, 20 ms, … up to this before its next call, as client-go pauses a crashed listener. */
const MAX_FAILURE_PAUSE_MS = 1000;
const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One handler, its buffer and the loop that feeds it. */
export class HandlerRegistration<T> extends Subscription implements Registration {
  readonly id: number;
  readonly #handler: EventHandler<T>;
  readonly #buffer: HandlerBuffer<T>;
  readonly #host: RegistrationHost;
  // Reported in overflow errors; Infinity for unbounded and coalescing buffers.
  readonly #limit: number;
  /** Resync period in ms, at least 1000; 0 never. The informer's check period is lowered to it when shorter (S-11). */
  readonly resyncPeriod: number;
  /** Virtual-clock time of the next due resync. */
  nextResyncAt = 0;
  /**
   * Whether sync updates (resync ticks, and relists that changed nothing) go to this handler: client-go's
   * per-listener flag, recomputed at every resync check. It starts set only for handlers that asked for
   * resync, where client-go sets it for all, so a handler without resync never gets no-op updates.
   */
  resyncDue: boolean;
  // Adds of the initial list not yet finished; hasSynced waits for zero.
  #initialOutstanding = 0;
  #processed = 0;
  // Failures in a row: each one lengthens the pause before the next call, so a handler failing on every event cannot spin.
  #failuresInRow = 0;
  // Ends the current failure pause early when the registration closes.
  #wakePause: (() => void) | undefined;
  // The drain loop is running (or scheduled); a second one would break per-handler order.
  #draining = false;
  // Resolves when the running drain loop goes idle; done waits on it. Made only when asked for while draining,
  // so a drain (one per event for a handler that keeps up) costs no promise.
  #idle: Promise<void> | undefined;
  #markIdle: (() => void) | undefined;
  readonly done: Promise<void>;
  #markDone: () => void = () => {};

  constructor(id: number, handler: EventHandler<T>, opts: HandlerOptions, defaultResync: number, host: RegistrationHost) {
    if (handler === null || typeof handler !== 'object') throw new TypeError(`handler must be an object with add/update/delete, got ${describeValue(handler)}`);
    for (const name of ['add', 'update', 'delete'] as const) {
      const fn = handler[name];
      if (fn !== undefined && typeof fn !== 'function') throw new TypeError(`handler.${name} must be a function, got ${describeValue(fn)}`);
    }
    super();
    const resync = opts.resyncPeriod ?? defaultResync;
    if (!Number.isFinite(resync) || resync < 0) throw new TypeError(`resyncPeriod must be a non-negative number of ms, got ${describeValue(opts.resyncPeriod)}`);
    this.id = id;
    this.#handler = handler;
    const policy = opts.buffer ?? 'unbounded';
    this.#buffer = createHandlerBuffer<T>(policy);
    this.#limit = typeof policy === 'object' && 'limit' in policy ? policy.limit : Infinity;
    this.#host = host;
    this.resyncPeriod = resync === 0 ? 0 : Math.max(resync, 1000);
    this.resyncDue = this.resyncPeriod !== 0;
    this.done = new Promise((resolve) => (this.#markDone = resolve));
  }

  get depth(): number {
    return this.#buffer.size;
  }

  get processed(): number {
    return this.#processed;
  }

  hasSynced(): boolean {
    return this.#host.hasSynced() && this.#initialOutstanding === 0;
  }

  /** Ends deliveries, leaves the Subscriptions it was added to, runs its own finalizers, and tells the informer. */
  override unsubscribe(): void {
    if (this.closed) return;
    try {
      super.unsubscribe();
    } finally {
      this.#close();
      this.#host.removed(this as HandlerRegistration<unknown>);
    }
  }

  /** Ends deliveries without telling the informer, which is ending them all (S-35). */
  end(): void {
    if (this.closed) return;
    try {
      super.unsubscribe();
    } finally {
      this.#close();
    }
  }

  #whenIdle(): Promise<void> {
    if (!this.#draining) return Promise.resolve();
    this.#idle ??= new Promise((resolve) => (this.#markIdle = resolve));
    return this.#idle;
  }

  /** Queues a notification; never blocks the caller. */
  enqueue(n: Notification<T>): void {
    if (this.closed) return;
    const initial = n.event.type === 'add' && n.event.isInInitialList;
    const result = this.#buffer.push({ n, initial });
    if (result.overflow === 'full') {
      this.unsubscribe();
      this.#host.report(new BufferOverflowError(`handler #${this.id} buffer is full; registration ended`, this.#limit));
      return;
    }
    if (initial) this.#initialOutstanding++;
    this.#initialOutstanding -= result.discardedInitial;
    const depth = this.#buffer.size;
    if (depth >= 64 && (depth & (depth - 1)) === 0) this.#host.backlog(this as HandlerRegistration<unknown>);
    if (result.overflow !== undefined) {
      this.#host.report(new BufferOverflowError(`handler #${this.id} buffer is full; dropped the oldest notification (${result.overflow.n.event.type} ${result.overflow.n.key})`, this.#limit, result.overflow.n.key));
    }
    this.#scheduleDrain();
  }

  #close(): void {
    this.#wakePause?.();
    this.#buffer.clear();
    this.#initialOutstanding = 0;
    void this.#whenIdle().then(this.#markDone);
  }

  #scheduleDrain(): void {
    if (this.#draining) return;
    this.#draining = true;
    // A microtask, so the informer finishes applying the current batch to the store before any handler runs.
    this.#host.drainSoon(this.#drainNow);
  }

  /**
   * Delivers what is buffered, synchronously while the handler returns no
   * promise, does not fail and has not had its run of calls; the first that
   * does hands the rest to {@link HandlerRegistration.#drainLater}. A drain
   * runs once per event for a handler that keeps up, so the common case makes
   * no promise and no async frame.
   */
  readonly #drainNow = (): void => {
    let handedOn = false;
    try {
      let calls = 0;
      for (let entry = this.#buffer.shift(); entry !== undefined; entry = this.closed ? undefined : this.#buffer.shift()) {
        const pending = this.#deliver(entry);
        if (pending !== undefined || this.#failuresInRow > 0 || ++calls >= YIELD_EVERY) {
          handedOn = true;
          void this.#drainLater(pending);
          return;
        }
      }
    } finally {
      if (!handedOn) this.#drained();
    }
  };

  /**
   * The rest of a drain once it must wait: for the handler's promise, for the
   * pause after a failure, or for a turn of the event loop after a run of
   * synchronous calls (so they cannot starve the sockets feeding the informer).
   *
   * @param first the promise of the delivery that handed the drain on, if it returned one
   */
  async #drainLater(first: Promise<void> | undefined): Promise<void> {
    let pending = first;
    // Handed on after a run of synchronous calls: the first step yields.
    let sinceYield = YIELD_EVERY - 1;
    try {
      for (;;) {
        if (pending !== undefined) {
          await pending;
          sinceYield = 0;
        }
        if (this.#failuresInRow > 0 && !this.closed) {
          await this.#pause(Math.min(MAX_FAILURE_PAUSE_MS, 10 * 2 ** Math.min(this.#failuresInRow - 1, 10)));
          sinceYield = 0;
        } else if (pending === undefined && ++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await yieldToIo();
        }
        const entry = this.closed ? undefined : this.#buffer.shift();
        if (entry === undefined) return;
        pending = this.#deliver(entry);
      }
    } finally {
      this.#drained();
    }
  }

  /** The drain loop went idle: a later enqueue starts another, and whoever waits for idleness is told. */
  #drained(): void {
    this.#draining = false;
    const markIdle = this.#markIdle;
    this.#idle = undefined;
    this.#markIdle = undefined;
    markIdle?.();
  }

  /** Calls the handler; returns a promise only when the handler returned one, so sync handlers stay cheap. */
  #deliver(entry: BufferEntry<T>): Promise<void> | undefined {
    const event = entry.n.event;
    let result: unknown;
    try {
      result = this.#call(event);
    } catch (err) {
      this.#failed(event, err);
      this.#finished(entry, false);
      return undefined;
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<void>).then === 'function') {
      return Promise.resolve(result as PromiseLike<void>).then(
        () => this.#finished(entry, true),
        (err: unknown) => {
          this.#failed(event, err);
          this.#finished(entry, false);
        },
      );
    }
    this.#finished(entry, true);
    return undefined;
  }

  #call(event: InformerEvent<T>): unknown {
    const h = this.#handler;
    switch (event.type) {
      case 'add':
        return h.add?.(event.obj, event.isInInitialList);
      case 'update':
        return h.update?.(event.oldObj, event.obj);
      case 'delete':
        return h.delete?.(event.obj);
    }
  }

  #failed(event: InformerEvent<T>, err: unknown): void {
    this.#failuresInRow++;
    this.#host.report(new HandlerError<T>(this.id, event, explainFrozenWrite(err)));
  }

  /** Waits on the informer's scheduler; ends early when the registration closes, so done is not held up. */
  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#host.scheduler.schedule(() => {
        this.#wakePause = undefined;
        resolve();
      }, ms);
      this.#wakePause = () => {
        timer.unsubscribe();
        this.#wakePause = undefined;
        resolve();
      };
    });
  }

  #finished(entry: BufferEntry<T>, ok: boolean): void {
    if (ok) this.#failuresInRow = 0;
    this.#processed++;
    if (entry.initial && this.#initialOutstanding > 0) this.#initialOutstanding--;
  }
}
