/**
 * What the parts of one reflect() subscription share: the source, the
 * options, where events and status go, the resourceVersion to resume from,
 * the counters, and the one signal whose abort ends every request and timer.
 */
import { config, firstValueFrom, fromEvent, Subscription, takeUntil, timer, type Subscriber, type TeardownLogic } from 'rxjs';
import { reportError } from '../errors/reportError.js';
import { DecodeError } from '../errors/api/index.js';
import type { ListerWatcher } from '../sources/types.js';
import { isTerminalByDefault } from './classify.js';
import { copyCounters, zeroCounters, type MutableCounters } from './counters.js';
import type { ReflectorCounters, ReflectorState, RelistReason, ResolvedReflectOptions, RetryKind } from './types.js';
import type { ReflectorEvent } from './types.js';
import { WatchRhythm } from './watchRhythm.js';
import { timerDelay } from '../options/timerDelay.js';

/** The counters that are plain numbers. */
type TotalName = Exclude<keyof MutableCounters, 'relistsByReason' | 'retriesByKind'>;

/** The state one reflect() subscription's list, watch and retry parts share. */
export class ReflectorContext<T> {
  /** Where list pages and watch streams come from. */
  readonly lw: ListerWatcher<T>;
  /** Validated options. */
  readonly opts: ResolvedReflectOptions;
  /** The rhythm of this subscription's watches; undefined when stall detection is off. */
  readonly rhythm: WatchRhythm | undefined;
  /** The downstream subscriber events and the terminal error go to. */
  readonly #out: Subscriber<ReflectorEvent<T>>;
  /** Aborted once by stop() or a terminal error: every request listens to its signal, every sleep ends on it. */
  readonly #abort = new AbortController();
  /** Teardown of timers that outlive one await (the resync ticker). */
  readonly #teardown = new Subscription();
  /** The resourceVersion to resume from (client-go's lastSyncResourceVersion). */
  lastSyncRv = '';
  /** The server said lastSyncRv is gone or too new: the next list is a consistent read (RV ""). */
  rvUnavailable = false;
  /**
   * A list delivered page by page failed after some of its pages went out: the snapshot they came from. The next
   * list must not be older, or an object could go back in time (RF-36).
   */
  partialListRv = '';
  /** A list has succeeded before, so the next one is a relist. */
  #listedOnce = false;
  /** Running totals for status reports and probes. */
  readonly #counters: MutableCounters = zeroCounters();

  constructor(lw: ListerWatcher<T>, opts: ResolvedReflectOptions, out: Subscriber<ReflectorEvent<T>>) {
    this.lw = lw;
    this.opts = opts;
    this.#out = out;
    this.rhythm = opts.stall === undefined ? undefined : new WatchRhythm(opts.stall);
  }

  /** Aborted when the subscription ends. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get stopped(): boolean {
    return this.#abort.signal.aborted;
  }

  /** The scheduler's clock. */
  now(): number {
    return this.opts.scheduler.now();
  }

  /** Adds one to a counter. */
  count(name: TotalName): void {
    this.#counters[name] += 1;
  }

  /** A failure of `kind` is followed by a new request. */
  retrying(kind: RetryKind): void {
    this.#counters.retriesByKind[kind] += 1;
  }

  /** The counters now, copied. */
  counters(): ReflectorCounters {
    return copyCounters(this.#counters);
  }

  /** A (re)list cycle starts; `reason` is what led to it, counted when it is a relist. */
  listing(mode: 'paged' | 'stream', reason: RelistReason | 'list-failed'): void {
    this.#counters.lists += 1;
    if (this.#listedOnce) {
      this.#counters.relists += 1;
      this.#counters.relistsByReason[reason] += 1;
    }
    this.status({ state: 'listing', mode });
  }

  /** A list succeeded: emits Replace and resumes from its resourceVersion. */
  replace(items: readonly T[], resourceVersion: string): void {
    this.#listed(resourceVersion);
    this.#out.next({ type: 'Replace', items, resourceVersion });
  }

  /** One page of a list delivered page by page; `first` starts the list (over). */
  replacePage(items: readonly T[], first: boolean): void {
    this.#out.next({ type: 'ReplacePage', items, first });
  }

  /** A list delivered page by page is complete: emits ReplaceEnd and resumes from its resourceVersion. */
  replaceEnd(resourceVersion: string): void {
    this.#listed(resourceVersion);
    this.#out.next({ type: 'ReplaceEnd', resourceVersion });
  }

  #listed(resourceVersion: string): void {
    this.rvUnavailable = false;
    this.partialListRv = '';
    this.#listedOnce = true;
    this.lastSyncRv = resourceVersion;
  }

  /** Emits one event downstream. */
  emit(event: ReflectorEvent<T>): void {
    this.#out.next(event);
  }

  /** Sends a status report (with the counters) to the status sink, if any. */
  status(state: ReflectorState): void {
    const sink = this.opts.status;
    if (sink === undefined) return;
    try {
      sink({ ...state, counters: this.counters() });
    } catch (err) {
      config.onUnhandledError?.(err);
    }
  }

  /**
   * Counts and reports an error (to the status sink, or to the process's
   * reporter when there is none) and decides whether it is final: `onTerminal`
   * when given, else the default rule (400/422), which a caller can turn off
   * for errors that have a fallback. A final error ends the subscription.
   *
   * @returns true when the error was final and the observable has errored
   */
  report(error: unknown, opts: { readonly defaultTerminal?: boolean } = {}): boolean {
    this.#counters.errors += 1;
    if (error instanceof DecodeError) this.#counters.decodeErrors += 1;
    let terminal = (opts.defaultTerminal ?? true) && isTerminalByDefault(error);
    const onTerminal = this.opts.onTerminal;
    if (onTerminal !== undefined) {
      try {
        terminal = onTerminal(error) === true;
      } catch (callbackError) {
        this.#error(error, false);
        this.#counters.errors += 1;
        this.#error(callbackError, false);
        return false;
      }
    }
    this.#error(error, terminal);
    if (terminal) this.terminate(error);
    return terminal;
  }

  #error(error: unknown, terminal: boolean): void {
    if (this.opts.status === undefined) reportError(error);
    this.status({ state: 'error', error, terminal });
  }

  /** Runs `teardown` when the subscription ends. */
  add(teardown: TeardownLogic): void {
    this.#teardown.add(teardown);
  }

  /** Ends the subscription's work: aborts every request, ends every sleep, clears every timer. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.#abort.abort();
    this.#teardown.unsubscribe();
  }

  /** Stops and errors the observable with `error`. */
  terminate(error: unknown): void {
    this.stop();
    this.#out.error(error);
  }

  /** Waits `ms` on the scheduler (no timer at all for 0); resolves early when the subscription ends. */
  sleep(ms: number): Promise<void> {
    if (this.stopped || ms <= 0) return Promise.resolve();
    const ended = fromEvent(this.#abort.signal, 'abort');
    return firstValueFrom(timer(timerDelay(ms), this.opts.scheduler).pipe(takeUntil(ended)), { defaultValue: 0 }).then(
      () => undefined,
    );
  }
}
