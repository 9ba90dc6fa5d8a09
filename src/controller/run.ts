import { combineLatest, filter, take, type Subscription } from 'rxjs';
import { toError } from '../errors/reportError.js';
import { LOW_PRIORITY } from '../workqueue/priority.js';
import { WorkQueue } from '../workqueue/WorkQueue.js';
import { ReconcileStep } from './reconcileStep.js';
import type { RunConfig, RunHooks } from './runConfig.js';
import type { ControllerStats } from './stats.js';
import { allSources, triggerKeys } from './triggers.js';
import { syncedOf } from '../informer/syncedOf.js';
import { timerDelay } from '../options/timerDelay.js';

/**
 * One lifetime of a controller, from its first subscriber to its drain: the
 * sources' subscriptions feeding a work queue, and the workers taking keys
 * from it. A run is never restarted; the controller makes a new one.
 */
export class ControllerRun<T> {
  readonly #config: RunConfig<T>;
  readonly #hooks: RunHooks<T>;
  // Dedup, one-in-flight-per-key, priorities, delays and backoff: the work queue does all of it.
  readonly queue: WorkQueue<string>;
  // What happens to one key once taken: the reconcile, its timeout, its outcome and what is scheduled next.
  readonly #step: ReconcileStep<T>;
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
  #started = false;
  // Set once shutdown began; the same promise answers every later call.
  #drained: Promise<void> | undefined;

  constructor(config: RunConfig<T>, hooks: RunHooks<T>, stats: ControllerStats) {
    this.#config = config;
    this.#hooks = hooks;
    this.queue = new WorkQueue<string>({
      name: config.name,
      scheduler: config.scheduler,
      rateLimiter: config.rateLimiter,
      ...(config.fairBy !== undefined && { fairBy: config.fairBy }),
      onError: (err) => hooks.report(err),
    });
    this.#step = new ReconcileStep<T>({ config, queue: this.queue, stats, hooks, signal: this.#abortReconciles.signal });
  }

  get state(): 'waitingForSync' | 'running' | 'draining' {
    return this.#drained !== undefined ? 'draining' : this.#started ? 'running' : 'waitingForSync';
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Keys being reconciled now. */
  get inFlightKeys(): Iterable<string> {
    return this.#inFlight.keys();
  }

  /** Keys whose reconcile has run longer than `reconcileTimeoutMs` and not returned. */
  get stuck(): readonly string[] {
    return this.#step.stuck;
  }

  /** Subscribes to the sources now; workers start once all synced and `after` resolved. */
  start(after: Promise<void>): void {
    const backlog = this.#config.priorityQueue ? LOW_PRIORITY : 0;
    this.#triggers = triggerKeys(this.#config.triggers, backlog, (err) => this.#hooks.report(err)).subscribe({
      next: ({ key, priority }) => this.queue.add(key, { priority }),
      error: (err: unknown) => this.#hooks.ended(toError(err)),
      complete: () => this.#hooks.ended(undefined),
    });
    if (this.#drained !== undefined) return;
    this.#gate = combineLatest(allSources(this.#config.triggers).map((s) => syncedOf(s)))
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

  /** Aborts the signal of the reconciles in flight now, with `reason`, whether or not a drain waits for them. */
  abortReconciles(reason: Error): void {
    this.#abortReconciles.abort(reason);
  }

  async #waitForInFlight(): Promise<void> {
    if (this.#inFlight.size === 0) return;
    const finished = Promise.all(this.#inFlight.values()).then(() => false);
    let timer: Subscription | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = this.#config.scheduler.schedule(() => resolve(true), timerDelay(this.#config.shutdownTimeoutMs));
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
      // The step catches what user code throws; anything else must still not kill the worker.
      const running = this.#reconcileKey(key, got.priority).catch((err: unknown) => this.#hooks.report(toError(err)));
      this.#inFlight.set(key, running);
      this.#hooks.changed();
      await running;
      this.#inFlight.delete(key);
      this.#hooks.changed();
    }
  }

  /** Reads the key's object as its reconcile will see it, then runs the step (which marks the key done). */
  async #reconcileKey(key: string, priority: number): Promise<void> {
    // The object the reconcile sees is read here, as late as possible; anything to await before the read goes just above.
    let obj: T | undefined;
    await this.#config.readYourWrites?.wait(key, this.#abortReconciles.signal, (err) => this.#hooks.report(err));
    if (this.#abortReconciles.signal.aborted) {
      // Shutdown gave up on this key while it waited for the caches: a reconcile that starts already aborted would
      // only act half-way, so it does not start; the key is left for the next run, as keys still queued are.
      this.queue.done(key);
      return;
    }
    try {
      obj = this.#config.triggers.primary.store.getByKey(key);
    } catch (err) {
      this.#hooks.report(toError(err));
    }
    await this.#step.run(key, obj, priority);
  }
}
