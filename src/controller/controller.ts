import { BehaviorSubject, defer, type Observable, type Subscriber } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { ErrorChannel } from '../errors/ErrorChannel.js';
import { Throttle } from '../errors/throttle.js';
import { QueueMetricsRecorder } from '../workqueue/metrics.js';
import type { LOW_PRIORITY } from '../workqueue/priority.js';
import type { WorkQueue } from '../workqueue/WorkQueue.js';
import { checkRateLimiter, defaultControllerRateLimiter, type RateLimiter } from '../workqueue/rateLimiters.js';
import { ReadYourWrites } from './readYourWrites.js';
import { ReadingObservable } from './readingObservable.js';
import { ControllerRun } from './run.js';
import { groupOf, type RunConfig } from './runConfig.js';
import { ControllerStats } from './stats.js';
import { allSources, type Triggers } from './triggers.js';
import { resolveControllerOptions } from './options.js';
import type { ControllerStatus } from './status.js';
import type { ControllerOptions, ControllerSource, ReconcileOutcome } from './types.js';
import type { TerminalError } from './TerminalError.js';

/**
 * A running reconcile loop, made by {@link controller}: an Observable of
 * reconcile outcomes whose subscriptions are its lifetime, with its status
 * and errors beside it.
 *
 * ## Example
 * ```ts
 * import { controller, type Controller, type Informer, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * const c: Controller<V1Deployment> = controller({ for: deployments, reconcile });
 * c.status$.subscribe((s) => console.log(`${s.queueDepth} queued, p99 ${s.durationP99Ms} ms`));
 * c.subscribe();
 * await c.shutdown();
 * ```
 */
export interface Controller<T> extends Observable<ReconcileOutcome<T>> {
  /** The controller's name, for messages and metrics. */
  readonly name: string;
  /**
   * Every informer the controller reads: `for` first, then `owns` and `watches` in their order. A runner
   * keeps them running on a standby replica (warm caches) and watches their health.
   */
  readonly sources: readonly ControllerSource<unknown>[];
  /** State, queue depth, reconciles in flight, counters, durations and the work queue's metrics; emits on change. */
  readonly status$: Observable<ControllerStatus>;
  /**
   * The controller's own errors (a mapper or error policy that threw, a
   * shutdown that timed out, an `owns` entry that never matches), and
   * reconcile failures nobody consumes (see `onError`).
   */
  readonly errors$: Observable<Error>;
  /** The status now. */
  status(): ControllerStatus;
  /**
   * Stops for good, gracefully: no new reconciles, those in flight finish
   * (up to `shutdownTimeoutMs`), then the sources are let go and every
   * subscriber completes. Resolves when all that is done.
   */
  shutdown(): Promise<void>;
}

/** The one controller implementation: every subscriber shares one run. */
class SharedController<T> extends ReadingObservable<ReconcileOutcome<T>> implements Controller<T> {
  readonly name: string;
  readonly sources: readonly ControllerSource<unknown>[];
  readonly status$: Observable<ControllerStatus>;
  readonly errors$: Observable<Error>;
  // What every run is built from: the sources, the reconcile and how to run it.
  readonly #config: RunConfig<T>;
  // Lifetime counters and durations, kept across runs.
  readonly #stats = new ControllerStats();
  // The queue of the current or last run, so queue metrics never go back to zero between runs.
  #lastQueue: WorkQueue<string> | undefined;
  // The latest status for status$ subscribers, pushed on every change.
  readonly #status: BehaviorSubject<ControllerStatus>;
  // The held snapshot missed a change made while nobody listened.
  #stale = false;
  // The controller's own errors: onError, errors$ subscribers, or the process reporter, so none is silent.
  readonly #errors: ErrorChannel;
  // Who receives outcomes; the first one starts a run, the last one to leave drains it.
  readonly #subscribers = new Set<Subscriber<ReconcileOutcome<T>>>();
  // The subscribers that consume outcomes (gave a next callback or piped): with none, failures are reported.
  readonly #consumers = new Set<Subscriber<ReconcileOutcome<T>>>();
  // Reconcile failures on their way to the error channel, limited per key (CR-13, LT-60): a key failing on every retry writes a line a minute.
  readonly #failures: Throttle;
  // The current run, while there are subscribers (and while it drains after shutdown or failure).
  #run: ControllerRun<T> | undefined;
  // A run draining after its last subscriber left, shown on the status until it is done.
  #draining: ControllerRun<T> | undefined;
  // The last run's drain: a new run's workers wait for it, so one key is never reconciled by two runs at once.
  #previousDrain: Promise<void> = Promise.resolve();
  // Set for good by shutdown(), the signal, or a source that failed.
  #ended: { readonly state: 'stopped' | 'failed'; readonly error: Error | undefined; readonly drained: Promise<void> } | undefined;

  constructor(config: RunConfig<T>, onError: ((err: Error) => void) | undefined, signal: AbortSignal | undefined) {
    let self: SharedController<T> | undefined;
    super((subscriber, consumes) => (self as SharedController<T>).#subscribe(subscriber, consumes));
    self = this;
    this.name = config.name;
    this.sources = allSources(config.triggers);
    this.#config = config;
    this.#errors = new ErrorChannel(onError);
    this.#failures = new Throttle(60_000, () => config.scheduler.now());
    this.#status = new BehaviorSubject<ControllerStatus>(this.status());
    // A snapshot is built only while someone listens; a new listener first gets one made then.
    this.status$ = defer(() => {
      if (this.#stale && !this.#status.closed) this.#publish(true);
      return this.#status;
    });
    this.errors$ = this.#errors.errors$;
    if (signal !== undefined) {
      if (signal.aborted) void this.shutdown();
      else signal.addEventListener('abort', () => void this.shutdown(), { once: true });
    }
  }

  status(): ControllerStatus {
    const run = this.#run ?? this.#draining;
    const queue = this.#lastQueue?.metrics() ?? new QueueMetricsRecorder<string>(this.name, () => 0).snapshot(0);
    let inFlightByGroup: Map<string, number> | undefined;
    if (this.#config.fairBy !== undefined) {
      inFlightByGroup = new Map();
      for (const key of run?.inFlightKeys ?? []) {
        const group = groupOf(this.#config, key) as string;
        inFlightByGroup.set(group, (inFlightByGroup.get(group) ?? 0) + 1);
      }
    }
    const readYourWrites = this.#config.readYourWrites?.counts() ?? { waits: 0, timeouts: 0 };
    return this.#stats.snapshot(
      {
        state: run !== undefined ? run.state : (this.#ended?.state ?? 'idle'),
        queueDepth: run?.queue.len() ?? 0,
        inFlight: run?.inFlight ?? 0,
        stuck: run?.stuck ?? [],
        maxConcurrentReconciles: this.#config.concurrency,
        queue,
        readYourWritesWaits: readYourWrites.waits,
        readYourWritesTimeouts: readYourWrites.timeouts,
      },
      inFlightByGroup,
    );
  }

  shutdown(): Promise<void> {
    return this.#end('stopped', undefined);
  }

  /** See {@link forgetGroup}. */
  static forgetGroup(c: SharedController<unknown>, group: string): void {
    c.#stats.forget(group);
  }

  /** See {@link abortInFlight}. */
  static abortInFlight(c: SharedController<unknown>, reason: Error): void {
    (c.#run ?? c.#draining)?.abortReconciles(reason);
  }

  /** A new subscriber; `consumes` when it reads the outcomes (see ReadingObservable): while none does, failures are reported. */
  #subscribe(subscriber: Subscriber<ReconcileOutcome<T>>, consumes: boolean): () => void {
    if (this.#ended !== undefined) {
      if (this.#ended.error !== undefined) subscriber.error(this.#ended.error);
      else subscriber.complete();
      return () => {};
    }
    this.#subscribers.add(subscriber);
    if (consumes) this.#consumers.add(subscriber);
    if (this.#run === undefined) this.#startRun();
    return () => {
      this.#consumers.delete(subscriber);
      if (!this.#subscribers.delete(subscriber)) return;
      if (this.#subscribers.size === 0 && this.#ended === undefined) this.#drainRun();
    };
  }

  #startRun(): void {
    const run: ControllerRun<T> = new ControllerRun<T>(
      this.#config,
      {
        outcome: (o) => {
          if (this.#run !== run) return;
          for (const s of [...this.#subscribers]) s.next(o);
        },
        report: (err) => this.#report(err),
        failed: (key, error, terminal) => {
          // Terminal failures are always reported; others only when no subscriber reads the outcomes.
          if (terminal || this.#consumers.size === 0) this.#failed(key, error, terminal);
        },
        settled: (key) => this.#failures.settled(key),
        changed: () => this.#publish(),
        ended: (err) => {
          if (this.#run !== run) return;
          if (err !== undefined) void this.#end('failed', err);
          else void this.#end('stopped', undefined);
        },
      },
      this.#stats,
    );
    this.#run = run;
    this.#lastQueue = run.queue;
    run.start(this.#previousDrain);
    this.#publish();
  }

  /** The last subscriber left: drain in the background; the controller can be subscribed again. */
  #drainRun(): void {
    const run = this.#run;
    if (run === undefined) return;
    this.#run = undefined;
    this.#draining = run;
    this.#previousDrain = run.drain().then(() => {
      if (this.#draining === run) this.#draining = undefined;
      this.#publish();
    });
    this.#publish();
  }

  #end(state: 'stopped' | 'failed', error: Error | undefined): Promise<void> {
    if (this.#ended !== undefined) return this.#ended.drained;
    const run = this.#run;
    const drained = (run?.drain() ?? this.#previousDrain).then(() => {
      if (this.#run === run) this.#run = undefined;
      const subscribers = [...this.#subscribers];
      this.#subscribers.clear();
      this.#consumers.clear();
      for (const s of subscribers) {
        if (error !== undefined) s.error(error);
        else s.complete();
      }
      this.#publish();
      this.#status.complete();
      this.#errors.complete();
    });
    this.#ended = { state, error, drained };
    if (error !== undefined) {
      this.#stats.lastError = error;
    }
    this.#publish();
    return drained;
  }

  #failed(key: string, error: Error, terminal: boolean): void {
    const passed = this.#failures.pass(key);
    if (passed === undefined) return;
    const { held, sinceMs } = passed;
    const more = held > 0 ? ` (${held} more failure${held === 1 ? '' : 's'} of it in the last ${Math.round(sinceMs / 1000)} s not reported)` : '';
    const what = terminal ? 'failed for good (TerminalError; not retried until it changes)' : 'failed';
    this.#report(new CallbackError('controller', `the reconcile of ${key} by ${this.name} ${what}${more}`, error));
  }

  #report(err: Error): void {
    this.#stats.lastError = err;
    this.#errors.report(err);
    this.#publish();
  }

  /** Tells status$ listeners what changed; with none, only notes that the held snapshot is stale (unless `force`). */
  #publish(force = false): void {
    if (this.#status === undefined || this.#status.closed) return;
    if (!force && !this.#status.observed) {
      this.#stale = true;
      return;
    }
    this.#stale = false;
    this.#status.next(this.status());
  }
}

/**
 * Creates a controller: a reconcile loop over informers, in the shape of
 * kube-rs's `Controller`. Every change of a primary object (`for`), of an
 * object it owns (`owns`, by owner reference) or of anything mapped to it
 * (`watches`) enqueues the primary object's key; workers take keys from a
 * work queue and call `reconcile` with the object read from the primary
 * store.
 *
 * - One reconcile at a time per key: a key that changes while it is being
 *   reconciled runs once more after it, however many changes came. Up to
 *   `concurrency` different keys run at once.
 * - Reconciles start only once every source has synced, so a reconcile never
 *   sees a half-filled cache.
 * - A reconcile reads its own writes: before it reads an object it waits, at
 *   most `readYourWritesTimeoutMs`, until the caches show what this process
 *   wrote through `objectClient` (the object itself, and anything of
 *   the `owns`/`watches` resources), so it does not act on a version older
 *   than its own last write (docs/semantics.md RYW-1…RYW-7).
 *   `readYourWrites: false` turns it off.
 * - `for: { source, predicates: [generationChanged] }` (and `predicates` on
 *   `owns`/`watches` entries) enqueues only the changes a predicate passes,
 *   so the controller's own status writes do not wake it again; deletions
 *   always pass (docs/semantics.md CR-113…CR-115).
 * - A key whose object is gone from the store is not reconciled (outcome
 *   `gone`): act on deletion with a {@link finalizer}, which keeps the object
 *   until your cleanup ran.
 * - `reconcile` returns `{ requeueAfter: ms }` to run again later, or
 *   nothing to wait for the next change. A throw goes through `errorPolicy`:
 *   by default a per-key exponential backoff (`rateLimiter`); a success
 *   forgets the key's failures; a {@link TerminalError} is not retried
 *   until the object changes. `resyncPeriod` reconciles every object again
 *   periodically. A key has one schedule: a requeue or backoff that a later
 *   reconcile made moot never fires.
 * - Live changes go before backlog: keys from the initial list and resyncs
 *   wait at {@link LOW_PRIORITY} (`priorityQueue: false` turns that off).
 * - `fairBy: (key) => tenant` shares the workers fairly: while several
 *   groups have keys waiting, they take turns, so one group's backlog never
 *   starves the others (docs/semantics.md LT-1…LT-3).
 * - `reconcileTimeoutMs` aborts a reconcile's signal after that long and
 *   counts it failed; its key waits for it (`status().stuck`).
 * - Failures are never silent: while no subscriber consumes the outcomes
 *   (`c.subscribe()` without a `next`), they go to `onError`/`errors$`,
 *   limited to one line per key per minute.
 *
 * Subscribing runs the controller (it subscribes to its informers, which
 * starts them); all subscribers share one run. When the last one leaves, or
 * `shutdown()` is called, or `signal` aborts, it stops taking keys, waits
 * for the reconciles in flight (at most `shutdownTimeoutMs`, then aborts
 * their signal), and only then lets go of the informers. After `shutdown()`
 * or the signal the outcomes complete; if a source fails for good (an
 * informer's 400 or 422), they error with that error after the same drain.
 *
 * ## Example
 * ```ts
 * import { controller, generationChanged, informer, kubeSource } from 'rxkube';
 * import type { KubeConfig, V1Deployment } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * declare function ensureConfigMapFor(d: V1Deployment, signal: AbortSignal): Promise<void>;
 *
 * const deployments = informer(kubeSource(kc, 'apps/v1/deployments'));
 * const configMaps = informer(kubeSource(kc, 'v1/configmaps'));
 * const stop = new AbortController();
 * const c = controller({
 *   // Spec changes wake it; status writes (its own among them) do not.
 *   for: { source: deployments, predicates: [generationChanged] },
 *   owns: [{ source: configMaps, kind: 'Deployment', apiVersion: 'apps/v1' }],
 *   reconcile: async (d, ctx) => {
 *     await ensureConfigMapFor(d, ctx.signal); // throw to retry with backoff
 *     return { requeueAfter: 300_000 };
 *   },
 *   concurrency: 4,
 *   signal: stop.signal,
 * });
 * c.subscribe((o) => console.log(o.type, o.key));
 * process.on('SIGTERM', () => stop.abort());
 * ```
 *
 * @param opts the sources, the reconcile function and how to run it.
 * @returns the controller, idle until subscribed.
 * @throws {TypeError} when an option is missing or invalid.
 */
export function controller<T>(opts: ControllerOptions<T>): Controller<T> {
  const resolved = resolveControllerOptions(opts);
  const scheduler = resolved.scheduler;
  let rateLimiter: RateLimiter<string>;
  if (resolved.rateLimiter !== undefined) {
    checkRateLimiter('controller', 'option "rateLimiter"', resolved.rateLimiter);
    rateLimiter = resolved.rateLimiter;
  } else {
    rateLimiter = defaultControllerRateLimiter<string>({ scheduler });
  }
  const triggers: Triggers<T> = { primary: resolved.for, primaryPredicates: resolved.forPredicates, owns: resolved.owns, watches: resolved.watches };
  const config: RunConfig<T> = {
    name: resolved.name,
    triggers,
    reconcile: resolved.reconcile,
    errorPolicy: resolved.errorPolicy,
    concurrency: resolved.concurrency,
    resyncPeriod: resolved.resyncPeriod,
    shutdownTimeoutMs: resolved.shutdownTimeoutMs,
    reconcileTimeoutMs: resolved.reconcileTimeoutMs,
    priorityQueue: resolved.priorityQueue,
    fairBy: resolved.fairBy,
    rateLimiter,
    scheduler,
    readYourWrites: resolved.readYourWrites && new ReadYourWrites(triggers as Triggers<unknown>, resolved.readYourWrites, scheduler, resolved.name),
  };
  return new SharedController<T>(config, resolved.onError, resolved.signal);
}

/**
 * Drops what `c` counted for a `fairBy` group that is gone for good (the
 * multi-cluster controller's cluster that left), so the group's series end
 * instead of piling up over churning names (LT-14). Internal, not exported
 * from an entry: only a composite that knows its groups' lifetimes calls it.
 */
export function forgetGroup(c: Controller<unknown>, group: string): void {
  if (c instanceof SharedController) SharedController.forgetGroup(c as SharedController<unknown>, group);
}

/**
 * Aborts the signal of `c`'s reconciles in flight now, with `reason`, rather than waiting up to `shutdownTimeoutMs`:
 * for a runner that lost its lease, as another replica may be reconciling already (MG-3). Internal, not exported from
 * an entry; call `shutdown()` first, so no new reconcile starts.
 */
export function abortInFlight(c: Controller<unknown>, reason: Error): void {
  if (c instanceof SharedController) SharedController.abortInFlight(c as SharedController<unknown>, reason);
}
