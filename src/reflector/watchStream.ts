/**
 * One open watch response with stall detection: every arrival teaches the
 * reflector's {@link WatchRhythm}, and a scheduler timer aborts the request
 * once the silence outlasts the rhythm's deadline.
 */
import type { Subscription } from 'rxjs';
import type { WatchBatch, WatchEvent, WatchOptions } from '../sources/types.js';
import { WatchDeadlineExceededError, WatchStalledError } from './errors.js';
import type { ReflectorContext } from './reflectorContext.js';
import { timerDelay } from '../options/timerDelay.js';

/**
 * How long past its `timeoutSeconds` a watch may stay open before the client
 * ends it (HI-60). kube-apiserver ends a watch at its timeout itself, but
 * starts that clock only once it serves the watch: after the request may
 * have waited in a priority-and-fairness queue and for the watch cache to
 * catch up (seconds each). Thirty seconds covers both and the latency of the
 * close, so a correct server never meets it, and bounds a server that never
 * ends its watches to a re-watch every timeout plus half a minute.
 */
export const WATCH_DEADLINE_GRACE_MS = 30_000;

/** An open watch request, read one event or one arrival (a chunk's events) at a time. */
export class WatchStream<T> {
  /** The options the watch was opened with (its timeout decides whether an end was routine). */
  readonly opts: WatchOptions;
  /** When the request was made, on the scheduler's clock. */
  readonly startedAt: number;
  /** The subscription's shared state. */
  readonly #ctx: ReflectorContext<T>;
  /** Aborts this request alone (on close or a stall); follows the subscription's signal. */
  readonly #controller = new AbortController();
  /** The response's events, one at a time (a source without `watchBatches`). */
  readonly #iterator: AsyncIterator<WatchEvent<T>> | undefined;
  /** The response's events, a chunk at a time (a source with `watchBatches`, as the HTTP source is). */
  readonly #batches: AsyncIterator<WatchBatch<T>> | undefined;
  /** Events of the last batch that next() has not handed out yet; nextBatch() takes the rest. */
  #buffered: WatchBatch<T> | undefined;
  /** Index of the next buffered event. */
  #at = 0;
  /** Ends this request when the subscription ends, removed on close. */
  readonly #onStop = (): void => this.close();
  /** The pending stall check; one at a time, re-armed lazily so an arrival costs no timer churn. */
  #check: Subscription | undefined;
  /** Set when the watch was cut for silence: what next() throws instead of the abort. */
  #stalled: WatchStalledError | undefined;
  /** The client's end of the watch at its timeout plus the grace; undefined when no timeout was asked. */
  #deadline: Subscription | undefined;
  /** Set when the watch outlived its deadline: what next() throws instead of the abort. */
  #overran: WatchDeadlineExceededError | undefined;
  /** close() ran. */
  #closed = false;

  /**
   * Opens the watch (the request starts now).
   *
   * @throws whatever the ListerWatcher's watch() throws synchronously
   */
  constructor(ctx: ReflectorContext<T>, opts: WatchOptions) {
    this.#ctx = ctx;
    this.opts = opts;
    this.startedAt = ctx.now();
    ctx.count('watches');
    const withHint: WatchOptions = {
      ...opts,
      ...(ctx.opts.stripManagedFields && { stripManagedFields: true }),
      ...(ctx.opts.cached !== undefined && { cached: ctx.opts.cached }),
    };
    const trimmed: WatchOptions = withHint.resourceVersion === '' ? { ...withHint, resourceVersion: undefined } : withHint;
    const clean = Object.fromEntries(Object.entries(trimmed).filter(([, v]) => v !== undefined)) as WatchOptions;
    const lw = ctx.lw;
    if (lw.watchBatches !== undefined) this.#batches = lw.watchBatches(clean, this.#controller.signal)[Symbol.asyncIterator]();
    else this.#iterator = lw.watch(clean, this.#controller.signal)[Symbol.asyncIterator]();
    ctx.signal.addEventListener('abort', this.#onStop, { once: true });
    ctx.rhythm?.opened(this.startedAt);
    this.#arm();
    this.#armDeadline();
  }

  /** The timeout the server was asked to end the watch at, in milliseconds (Infinity when none was asked). */
  get timeoutMs(): number {
    const seconds = this.opts.timeoutSeconds;
    return seconds === undefined ? Number.POSITIVE_INFINITY : seconds * 1000;
  }

  /**
   * The next event.
   *
   * @param initial true while the events are a replay of the initial state (a burst that says nothing of the rhythm)
   * @throws WatchStalledError when the watch was cut for silence, else what the source throws
   */
  async next(initial = false): Promise<IteratorResult<WatchEvent<T>>> {
    for (;;) {
      const buffered = this.#buffered;
      if (buffered !== undefined && this.#at < buffered.length) {
        const at = this.#at++;
        if (this.#at === buffered.length) this.#buffered = undefined;
        return { value: buffered.at(at) as WatchEvent<T>, done: false };
      }
      const batch = await this.nextBatch(initial);
      if (batch === undefined) return { value: undefined, done: true };
      this.#buffered = batch;
      this.#at = 0;
    }
  }

  /**
   * The events that arrived together (one chunk of the response; one event
   * from a source without the batch view), or undefined at the end. Events
   * that next() left over come first. One arrival teaches the rhythm once.
   *
   * @param initial as for next()
   * @throws WatchStalledError when the watch was cut for silence, else what the source throws
   */
  async nextBatch(initial = false): Promise<WatchBatch<T> | undefined> {
    const buffered = this.#buffered;
    if (buffered !== undefined) {
      this.#buffered = undefined;
      if (this.#at < buffered.length) return this.#at === 0 ? buffered : rest(buffered, this.#at);
    }
    let batch: WatchBatch<T> | undefined;
    try {
      if (this.#batches !== undefined) {
        const result = await this.#batches.next();
        batch = result.done === true ? undefined : result.value;
      } else {
        const result = await (this.#iterator as AsyncIterator<WatchEvent<T>>).next();
        batch = result.done === true ? undefined : [result.value];
      }
    } catch (error) {
      throw this.#stalled ?? this.#overran ?? error;
    }
    if (this.#stalled !== undefined) throw this.#stalled;
    if (this.#overran !== undefined) throw this.#overran;
    if (batch !== undefined && !this.#closed) {
      const now = this.#ctx.now();
      if (initial) this.#ctx.rhythm?.touch(now);
      else this.#ctx.rhythm?.beat(now);
      this.#arm();
    }
    return batch;
  }

  /** Aborts the request, clears the stall timer and releases the iterator. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#check?.unsubscribe();
    this.#check = undefined;
    this.#deadline?.unsubscribe();
    this.#deadline = undefined;
    this.#ctx.signal.removeEventListener('abort', this.#onStop);
    if (this.#stalled === undefined) this.#ctx.rhythm?.closed();
    this.#controller.abort();
    this.#buffered = undefined;
    // return() on a generator suspended in an await is queued behind it; the abort above ends that await.
    try {
      const iterator = this.#batches ?? this.#iterator;
      Promise.resolve(iterator?.return?.()).catch(() => undefined);
    } catch {
      // A broken iterator cannot be closed any further; its request is aborted already.
    }
  }

  /**
   * Ends the watch at its timeout plus the grace, in case the server does
   * not (HI-60); the stream of a streaming list keeps the clock of its
   * request across the handover, as the server's timeout does.
   */
  #armDeadline(): void {
    const seconds = this.opts.timeoutSeconds;
    if (seconds === undefined || this.#closed) return;
    const due = this.startedAt + seconds * 1000 + WATCH_DEADLINE_GRACE_MS;
    let ran = false;
    const deadline = this.#ctx.opts.scheduler.schedule(() => {
      ran = true;
      this.#deadline = undefined;
      if (this.#closed || this.#stalled !== undefined) return;
      const open = this.#ctx.now() - this.startedAt;
      // A timer clamped to 2³¹−1 ms (HI-56) fires before a longer deadline: wait on.
      if (this.#ctx.now() < due) {
        this.#armDeadline();
        return;
      }
      this.#overran = new WatchDeadlineExceededError(seconds, open);
      this.#controller.abort(this.#overran);
    }, timerDelay(due - this.#ctx.now()));
    if (!ran) this.#deadline = deadline;
  }

  /** Schedules a stall check at the deadline, unless one is pending or the rhythm is not known yet. */
  #arm(): void {
    const rhythm = this.#ctx.rhythm;
    if (rhythm === undefined || this.#check !== undefined || this.#closed) return;
    const now = this.#ctx.now();
    const deadline = rhythm.deadlineMs(now);
    const last = rhythm.lastHeard;
    if (deadline === undefined || last === undefined) return;
    this.#schedule(last + deadline - now);
  }

  #schedule(delayMs: number): void {
    // Declared before scheduling: a synchronous scheduler may run the check before schedule() returns.
    let ran = false;
    const check = this.#ctx.opts.scheduler.schedule(() => {
      ran = true;
      this.#check = undefined;
      this.#onCheck();
    }, timerDelay(delayMs));
    if (!ran) this.#check = check;
  }

  #onCheck(): void {
    const rhythm = this.#ctx.rhythm;
    const last = rhythm?.lastHeard;
    if (rhythm === undefined || last === undefined || this.#closed || this.#overran !== undefined) return;
    const now = this.#ctx.now();
    const deadline = rhythm.deadlineMs(now);
    if (deadline === undefined) return;
    const silence = now - last;
    if (silence < deadline) {
      this.#schedule(last + deadline - now);
      return;
    }
    this.#stalled = new WatchStalledError(silence, rhythm.expectedIntervalMs);
    rhythm.stalled();
    this.#controller.abort(this.#stalled);
  }
}

/** The events of `batch` from `index` on, read through it as they are asked for. */
function rest<T>(batch: WatchBatch<T>, index: number): WatchBatch<T> {
  return { length: batch.length - index, at: (i) => batch.at(i + index) };
}
