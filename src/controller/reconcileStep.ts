import type { Subscription } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { explainFrozenWrite } from '../errors/frozenObject.js';
import { toError } from '../errors/reportError.js';
import { LOW_PRIORITY } from '../workqueue/priority.js';
import type { WorkQueue } from '../workqueue/WorkQueue.js';
import { ReconcileTimeoutError } from './ReconcileTimeoutError.js';
import { groupOf, type RunConfig, type RunHooks } from './runConfig.js';
import { successResult, type ControllerStats } from './stats.js';
import { isTerminal } from './TerminalError.js';
import { WithdrawnError } from './WithdrawnError.js';
import type { ErrorAction, ReconcileAction, ReconcileContext, ReconcileOutcome } from './types.js';
import { describeValue } from '../options/validate.js';
import { timerDelay } from '../options/timerDelay.js';
import { followSignals } from '../options/followSignals.js';

/** How a reconcile call ended: its action, or what it threw (checked and explained). */
type Settled = { readonly ok: true; readonly action: ReconcileAction } | { readonly ok: false; readonly error: Error };

/** One reconcile's signal, and its timeout when the controller has one. */
interface Attempt {
  readonly signal: AbortSignal;
  /** Resolves when the reconcile ran longer than `reconcileTimeoutMs`; absent without a timeout. */
  readonly expired: Promise<ReconcileTimeoutError> | undefined;
  /** Cancels the timer and lets go of the run's signal. */
  end(): void;
}

/** What a step works with: the run's queue, counters and hooks. */
export interface StepContext<T> {
  readonly config: RunConfig<T>;
  readonly queue: WorkQueue<string>;
  readonly stats: ControllerStats;
  readonly hooks: RunHooks<T>;
  /** Aborted when the run is over, or gave up waiting at shutdown. */
  readonly signal: AbortSignal;
}

/**
 * The reconcile of one key handed out by the queue, from the object read
 * from the store to `done(key)`: the call with its timeout, the outcome,
 * the metrics, and what the key is scheduled for next (a requeue, a
 * backoff, the periodic resync, or nothing). Whatever it schedules is the
 * key's only schedule (DQ-6).
 */
export class ReconcileStep<T> {
  readonly #c: StepContext<T>;
  // Keys whose reconcile outlived reconcileTimeoutMs and has not returned, in order of timing out.
  readonly #stuck = new Set<string>();

  constructor(context: StepContext<T>) {
    this.#c = context;
  }

  /** Keys whose reconcile has run longer than `reconcileTimeoutMs` and not returned. */
  get stuck(): readonly string[] {
    return [...this.#stuck];
  }

  /**
   * Reconciles `key` with `obj` (undefined when it is gone from the store),
   * then marks the key done; resolves when the reconcile has returned, even
   * after a timeout, so one key never has two reconciles at once.
   * @param priority what the key was handed out at: requeues and backoff keep it.
   */
  async run(key: string, obj: T | undefined, priority: number): Promise<void> {
    const { config, queue, stats, hooks } = this.#c;
    if (obj === undefined) {
      // Deleted objects are not reconciled (kube-rs): cleanup on deletion belongs to a finalizer, which keeps the object until done.
      queue.forget(key);
      queue.done(key);
      stats.gone++;
      hooks.settled(key);
      hooks.outcome({ type: 'gone', key });
      return;
    }
    const attempt = this.#attempt(key);
    const ctx: ReconcileContext<T> = { key, signal: attempt.signal, retries: queue.numRequeues(key), store: config.triggers.primary.store };
    const startedAt = config.scheduler.now();
    const running = call(config, obj, ctx);
    const first = attempt.expired === undefined ? await running : await Promise.race([running, attempt.expired]);
    if (!(first instanceof ReconcileTimeoutError) && !first.ok && first.error instanceof WithdrawnError) {
      // Taken back by the source (its cluster left or was replaced): no outcome, no count, no backoff (LT-7).
      attempt.end();
      if (first.error.requeue) queue.add(key, { priority });
      else queue.forget(key);
      queue.done(key);
      return;
    }
    if (!(first instanceof ReconcileTimeoutError)) {
      attempt.end();
      let outcome: ReconcileOutcome<T>;
      try {
        outcome = this.#settle(key, obj, ctx, first, config.scheduler.now() - startedAt, priority);
      } finally {
        queue.done(key);
      }
      hooks.outcome(outcome);
      return;
    }
    // Timed out: the failure counts now; the key stays taken until the reconcile really returns.
    this.#stuck.add(key);
    try {
      hooks.outcome(this.#settle(key, obj, ctx, { ok: false, error: first }, first.timeoutMs, priority));
      hooks.changed();
    } catch (err) {
      hooks.report(toError(err));
    }
    try {
      await running;
    } finally {
      attempt.end();
      this.#stuck.delete(key);
      queue.done(key);
      hooks.changed();
    }
  }

  /** Records how the reconcile ended, schedules what comes next, and returns the outcome. */
  #settle(key: string, obj: T, ctx: ReconcileContext<T>, settled: Settled, elapsedMs: number, priority: number): ReconcileOutcome<T> {
    const { config, queue, stats, hooks } = this.#c;
    const durationMs = Math.max(0, elapsedMs);
    let outcome: ReconcileOutcome<T>;
    if (settled.ok) {
      queue.forget(key);
      const requeueAfter = settled.action === undefined ? undefined : settled.action.requeueAfter;
      if (requeueAfter !== undefined) this.#requeue(key, requeueAfter, priority);
      stats.record(successResult(requeueAfter), durationMs, false, groupOf(config, key));
      hooks.settled(key);
      outcome = { type: 'reconciled', key, obj, requeueAfter, durationMs };
    } else {
      const { error } = settled;
      const terminal = isTerminal(error);
      stats.lastError = error;
      stats.record('error', durationMs, terminal, groupOf(config, key));
      // A terminal failure is not retried until the object changes: no backoff, and its failures are forgotten.
      if (terminal) queue.forget(key);
      const requeueAfter = terminal ? undefined : this.#afterFailure(key, error, obj, ctx, priority);
      hooks.failed(key, error, terminal);
      outcome = { type: 'failed', key, obj, error, requeueAfter, durationMs, retries: queue.numRequeues(key), terminal };
    }
    const terminal = outcome.type === 'failed' && outcome.terminal;
    if (config.resyncPeriod > 0 && !terminal) queue.addAfter(key, config.resyncPeriod, { priority: config.priorityQueue ? LOW_PRIORITY : 0 });
    return outcome;
  }

  /** Applies the error policy; returns the delay it chose, if any. */
  #afterFailure(key: string, error: Error, obj: T, ctx: ReconcileContext<T>, priority: number): number | undefined {
    const { config, queue, hooks } = this.#c;
    let decision: ErrorAction = 'backoff';
    const policy = config.errorPolicy;
    if (policy !== undefined) {
      try {
        decision = policy(error, obj, ctx);
        checkAction(decision, 'errorPolicy');
      } catch (err) {
        hooks.report(new CallbackError('controller', `the errorPolicy of ${config.name} threw for ${key}; backing off instead`, err));
        decision = 'backoff';
      }
    }
    if (decision === undefined) {
      queue.forget(key);
      return undefined;
    }
    if (decision !== 'backoff') {
      this.#requeue(key, decision.requeueAfter, priority);
      return decision.requeueAfter;
    }
    let delay: number;
    try {
      delay = config.rateLimiter.when(key);
      if (typeof delay !== 'number' || !Number.isFinite(delay)) throw new TypeError(`the rate limiter returned ${describeValue(delay)}, not a finite number of ms`);
    } catch (err) {
      hooks.report(new CallbackError('controller', `the rate limiter of ${config.name} failed for ${key}; it is not requeued`, err));
      return undefined;
    }
    this.#requeue(key, delay, priority);
    return Math.max(0, delay);
  }

  #requeue(key: string, delayMs: number, priority: number): void {
    const { queue, stats } = this.#c;
    if (queue.shuttingDown()) return;
    stats.requeues++;
    queue.addAfter(key, delayMs, { priority });
  }

  /** The reconcile's signal: the run's own, or with a timeout one of its own that also follows the run's. */
  #attempt(key: string): Attempt {
    const { config, signal } = this.#c;
    const timeoutMs = config.reconcileTimeoutMs;
    if (timeoutMs === undefined) return { signal, expired: undefined, end: () => {} };
    const own = followSignals(signal);
    let timer: Subscription | undefined;
    const expired = new Promise<ReconcileTimeoutError>((resolve) => {
      timer = config.scheduler.schedule(() => {
        const err = new ReconcileTimeoutError(config.name, key, timeoutMs);
        own.abort(err);
        resolve(err);
      }, timerDelay(timeoutMs));
    });
    return {
      signal: own.signal,
      expired,
      end: () => {
        timer?.unsubscribe();
        own.release();
      },
    };
  }
}

/** Calls the reconcile; a throw, a rejection or an invalid action becomes the error, explained if it wrote to a frozen object. */
async function call<T>(config: RunConfig<T>, obj: T, ctx: ReconcileContext<T>): Promise<Settled> {
  try {
    const action = await config.reconcile(obj, ctx);
    checkAction(action, 'reconcile');
    return { ok: true, action };
  } catch (err) {
    return { ok: false, error: explainFrozenWrite(toError(err)) };
  }
}

/** A returned action must be nothing, `{ requeueAfter: ms }` (or `'backoff'` from an error policy). */
function checkAction(action: unknown, from: 'reconcile' | 'errorPolicy'): void {
  if (action === undefined) return;
  if (from === 'errorPolicy' && action === 'backoff') return;
  const after = (action as { requeueAfter?: unknown } | null)?.requeueAfter;
  if (typeof action === 'object' && action !== null && typeof after === 'number' && Number.isFinite(after) && after >= 0) return;
  const expected = from === 'reconcile' ? 'undefined or { requeueAfter: ms >= 0 }' : "undefined, 'backoff' or { requeueAfter: ms >= 0 }";
  // describeValue names an object by its keys only, so the bad requeueAfter is named beside it.
  const shown = after === undefined ? describeValue(action) : `${describeValue(action)} (requeueAfter ${describeValue(after)})`;
  throw new TypeError(`${from} must return ${expected}, got ${shown}`);
}
