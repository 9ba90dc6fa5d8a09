import { combineLatest, filter, take, type SchedulerLike, type Subscription } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { toError } from '../errors/reportError.js';
import type { RateLimiter } from '../workqueue/rateLimiters.js';
import { WorkQueue } from '../workqueue/WorkQueue.js';
import { successResult, type ControllerMetricsRecorder } from './metrics.js';
import type { ControllerStats } from './stats.js';
import { allSources, triggerKeys, type Triggers } from './triggers.js';
import type { ErrorAction, ErrorPolicy, ReconcileAction, ReconcileContext, ReconcileOutcome, Reconciler } from './types.js';

/** A controller's options once checked, with defaults applied. */
export interface RunConfig<T> {
  readonly name: string;
  readonly triggers: Triggers<T>;
  readonly reconcile: Reconciler<T>;
  readonly errorPolicy: ErrorPolicy<T> | undefined;
  readonly concurrency: number;
  readonly resyncPeriod: number;
  readonly shutdownTimeoutMs: number;
  readonly reconcileTimeoutMs: number;
  readonly rateLimiter: RateLimiter<string>;
  readonly scheduler: SchedulerLike;
}

/** What a run tells the controller that started it. */
export interface RunHooks<T> {
  outcome(outcome: ReconcileOutcome<T>): void;
  report(err: Error): void;
  /** Something the status shows changed. */
  changed(): void;
  /** A source ended (with an error nothing can heal, or because it was stopped). */
  ended(err: Error | undefined): void;
}

/**
 * One lifetime of a controller, from its first subscriber to its drain: the
 * sources' subscriptions feeding a work queue, and the workers taking keys
 * from it. A run is never restarted; the controller makes a new one.
 */
export class ControllerRun<T> {
  readonly #config: RunConfig<T>;
  readonly #hooks: RunHooks<T>;
  readonly #stats: ControllerStats;
  // Results and durations by controller-runtime's metric names, across runs.
  readonly #metrics: ControllerMetricsRecorder;
  // Dedup, one-in-flight-per-key, delays and backoff: client-go's work queue does all of it.
  readonly queue: WorkQueue<string>;
  // The sources' subscriptions: while held, their informers run; released only after the drain.
  #triggers: Subscription | undefined;
  // Waits for every source to sync (and for the previous run to drain) before workers start.
  #gate: Subscription | undefined;
  // Aborted when shutdown begins: workers stop taking keys.
  readonly #stopTaking = new AbortController();
  // Aborted when the run is over (or gave up waiting): the signal every reconcile was given.
  readonly #abortReconciles = new AbortController();
  // Reconciles running now, by key, so shutdown can wait for them and name the ones it gave up on.
  readonly #inFlight = new Map<string, Promise<void>>();
  // Keys still running past reconcileTimeoutMs, their signal already aborted: what a liveness probe names.
  readonly #stuck = new Set<string>();
  #started = false;
  // Set once shutdown began; the same promise answers every later call.
  #drained: Promise<void> | undefined;

  constructor(config: RunConfig<T>, hooks: RunHooks<T>, stats: ControllerStats, metrics: ControllerMetricsRecorder) {
    this.#config = config;
    this.#hooks = hooks;
    this.#stats = stats;
    this.#metrics = metrics;
    this.queue = new WorkQueue<string>({
      name: config.name,
      scheduler: config.scheduler,
      rateLimiter: config.rateLimiter,
      onError: (err) => hooks.report(err),
    });
  }

  get state(): 'waitingForSync' | 'running' | 'draining' {
    return this.#drained !== undefined ? 'draining' : this.#started ? 'running' : 'waitingForSync';
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  get stuck(): readonly string[] {
    return [...this.#stuck];
  }

  /** Subscribes to the sources now; workers start once all synced and `after` resolved. */
  start(after: Promise<void>): void {
    this.#triggers = triggerKeys(this.#config.triggers, (err) => this.#hooks.report(err)).subscribe({
      next: (key) => this.queue.add(key),
      error: (err: unknown) => this.#hooks.ended(toError(err)),
      complete: () => this.#hooks.ended(undefined),
    });
    if (this.#drained !== undefined) return;
    this.#gate = combineLatest(allSources(this.#config.triggers).map((s) => s.synced$))
      .pipe(
        filter((synced) => synced.every(Boolean)),
        take(1),
      )
      .subscribe(() => {
        void after.then(() => {
          if (this.#drained !== undefined) return;
          this.#started = true;
          this.#hooks.changed();
          for (let i = 0; i < this.#config.concurrency; i++) void this.#work();
        });
      });
  }

  /**
   * Stops taking keys, waits up to `shutdownTimeoutMs` for the reconciles in
   * flight (then aborts their signal and reports the ones still running), and
   * only then lets go of the sources.
   */
  drain(): Promise<void> {
    if (this.#drained !== undefined) return this.#drained;
    this.#stopTaking.abort();
    this.queue.shutDown();
    this.#gate?.unsubscribe();
    this.#drained = this.#waitForInFlight().then(() => {
      this.#abortReconciles.abort(new Error(`${this.#config.name}: the controller stopped`));
      this.#triggers?.unsubscribe();
    });
    this.#hooks.changed();
    return this.#drained;
  }

  async #waitForInFlight(): Promise<void> {
    if (this.#inFlight.size === 0) return;
    const finished = Promise.all(this.#inFlight.values()).then(() => false);
    let timer: Subscription | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = this.#config.scheduler.schedule(() => resolve(true), this.#config.shutdownTimeoutMs);
    });
    const gaveUp = await Promise.race([finished, timedOut]);
    timer?.unsubscribe();
    if (!gaveUp) return;
    const keys = [...this.#inFlight.keys()];
    const err = new Error(
      `${this.#config.name}: ${keys.length} reconcile(s) still running ${this.#config.shutdownTimeoutMs} ms after shutdown began (${keys.join(', ')}); their signal was aborted and the controller stopped without them`,
    );
    this.#abortReconciles.abort(err);
    this.#hooks.report(err);
  }

  async #work(): Promise<void> {
    for (;;) {
      let got;
      try {
        got = await this.queue.get({ signal: this.#stopTaking.signal });
      } catch {
        return; // only the abort at shutdown rejects get()
      }
      if (got.shutdown) return;
      const key = got.item;
      if (this.#stopTaking.signal.aborted) {
        // Keys queued before shutdown are still handed out; they are left for the next run.
        this.queue.done(key);
        return;
      }
      // #reconcileKey catches what user code throws; anything else must still not kill the worker.
      const running = this.#reconcileKey(key).catch((err: unknown) => this.#hooks.report(toError(err)));
      this.#inFlight.set(key, running);
      this.#hooks.changed();
      await running;
      this.#inFlight.delete(key);
      this.#hooks.changed();
    }
  }

  async #reconcileKey(key: string): Promise<void> {
    const { triggers, scheduler, reconcile } = this.#config;
    const store = triggers.primary.store;
    let obj: T | undefined;
    try {
      obj = store.getByKey(key);
    } catch (err) {
      this.#hooks.report(toError(err));
    }
    if (obj === undefined) {
      // Deleted objects are not reconciled (kube-rs): cleanup on deletion belongs to a finalizer, which keeps the object until done.
      this.queue.forget(key);
      this.queue.done(key);
      this.#stats.gone++;
      this.#hooks.outcome({ type: 'gone', key });
      return;
    }
    const deadline = this.#deadline(key);
    const ctx: ReconcileContext<T> = { key, signal: deadline?.signal ?? this.#abortReconciles.signal, retries: this.queue.numRequeues(key), store };
    const startedAt = scheduler.now();
    let action: ReconcileAction;
    let error: Error | undefined;
    try {
      action = await reconcile(obj, ctx);
      checkAction(action, 'reconcile');
    } catch (err) {
      error = toError(err);
    } finally {
      deadline?.timer.unsubscribe();
      if (this.#stuck.delete(key)) this.#hooks.changed();
    }
    const durationMs = Math.max(0, scheduler.now() - startedAt);
    this.#stats.recordDuration(durationMs);
    let outcome: ReconcileOutcome<T>;
    try {
      if (error === undefined) {
        this.#stats.reconciles++;
        this.queue.forget(key);
        const requeueAfter = action === undefined ? undefined : action.requeueAfter;
        if (requeueAfter !== undefined) this.#requeue(key, requeueAfter);
        this.#metrics.record(successResult(requeueAfter), durationMs);
        outcome = { type: 'reconciled', key, obj, requeueAfter, durationMs };
      } else {
        this.#stats.reconciles++;
        this.#stats.errors++;
        this.#stats.lastError = error;
        this.#metrics.record('error', durationMs);
        const requeueAfter = this.#afterFailure(key, error, obj, ctx);
        outcome = { type: 'failed', key, obj, error, requeueAfter, durationMs, retries: this.queue.numRequeues(key) };
      }
      if (this.#config.resyncPeriod > 0) this.queue.addAfter(key, this.#config.resyncPeriod);
    } finally {
      this.queue.done(key);
    }
    this.#hooks.outcome(outcome);
  }

  /**
   * With `reconcileTimeoutMs`, a signal of the reconcile's own that also aborts when the timeout passes; the key
   * is then listed as stuck until its reconcile settles.
   */
  #deadline(key: string): { readonly signal: AbortSignal; readonly timer: Subscription } | undefined {
    const { reconcileTimeoutMs, scheduler, name } = this.#config;
    if (reconcileTimeoutMs <= 0) return undefined;
    const timedOut = new AbortController();
    const timer = scheduler.schedule(() => {
      timedOut.abort(new Error(`${name}: the reconcile of ${key} took longer than reconcileTimeoutMs (${reconcileTimeoutMs} ms); its signal was aborted`));
      this.#stuck.add(key);
      this.#hooks.changed();
    }, reconcileTimeoutMs);
    return { signal: AbortSignal.any([this.#abortReconciles.signal, timedOut.signal]), timer };
  }

  /** Applies the error policy; returns the delay it chose, if any. */
  #afterFailure(key: string, error: Error, obj: T, ctx: ReconcileContext<T>): number | undefined {
    let decision: ErrorAction = 'backoff';
    const policy = this.#config.errorPolicy;
    if (policy !== undefined) {
      try {
        decision = policy(error, obj, ctx);
        checkAction(decision, 'errorPolicy');
      } catch (err) {
        this.#hooks.report(new CallbackError('controller', `the errorPolicy of ${this.#config.name} threw for ${key}; backing off instead`, err));
        decision = 'backoff';
      }
    }
    if (decision === undefined) {
      this.queue.forget(key);
      return undefined;
    }
    if (decision !== 'backoff') {
      this.#requeue(key, decision.requeueAfter);
      return decision.requeueAfter;
    }
    let delay: number;
    try {
      delay = this.#config.rateLimiter.when(key);
      if (typeof delay !== 'number' || !Number.isFinite(delay)) throw new TypeError(`the rate limiter returned ${String(delay)}, not a finite number of ms`);
    } catch (err) {
      this.#hooks.report(new CallbackError('controller', `the rate limiter of ${this.#config.name} failed for ${key}; it is not requeued`, err));
      return undefined;
    }
    this.#requeue(key, delay);
    return Math.max(0, delay);
  }

  #requeue(key: string, delayMs: number): void {
    if (this.queue.shuttingDown()) return;
    this.#stats.requeues++;
    this.queue.addAfter(key, delayMs);
  }
}

/** A returned action must be nothing, `{ requeueAfter: ms }` (or `'backoff'` from an error policy). */
function checkAction(action: unknown, from: 'reconcile' | 'errorPolicy'): void {
  if (action === undefined) return;
  if (from === 'errorPolicy' && action === 'backoff') return;
  const after = (action as { requeueAfter?: unknown } | null)?.requeueAfter;
  if (typeof action === 'object' && action !== null && typeof after === 'number' && Number.isFinite(after) && after >= 0) return;
  const expected = from === 'reconcile' ? 'undefined or { requeueAfter: ms >= 0 }' : "undefined, 'backoff' or { requeueAfter: ms >= 0 }";
  let shown: string;
  try {
    shown = JSON.stringify(action) ?? String(action);
  } catch {
    shown = String(action);
  }
  throw new TypeError(`${from} must return ${expected}, got ${shown}`);
}
