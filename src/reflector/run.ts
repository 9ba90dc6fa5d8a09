import { interval, type Subscriber, type Subscription } from 'rxjs';
import type { ListerWatcher } from '../sources/types.js';
import { PagedList } from './pagedList.js';
import { ReflectorContext } from './reflectorContext.js';
import { RetryPolicy } from './retryPolicy.js';
import { streamingList } from './streamingList.js';
import { watchOnce } from './watchOnce.js';
import type { WatchStream } from './watchStream.js';
import { classifyFailure, isTerminalByDefault } from './classify.js';
import type { ReflectorCounters, ReflectorProbe, RelistReason, ResolvedReflectOptions, RetryKind } from './types.js';
import type { ReflectorEvent } from './types.js';
import { describeValue } from '../options/validate.js';
import { timerDelay } from '../options/timerDelay.js';

type Phase = 'list' | 'watch';

/** A list cycle's result: the stream a streaming list hands over (if any), or the failure. */
type Listed<T> = { readonly ok: true; readonly stream: WatchStream<T> | undefined } | { readonly ok: false; readonly error: unknown };

/**
 * One subscription's list → watch loop (client-go's Reflector.Run /
 * ListAndWatch): picks the list strategy, runs watches one after another,
 * and after each failure asks the retry policy how long to wait and what to
 * run next. Requests and timers hang off the context's signal, so `stop()`
 * releases them all.
 */
export class ReflectorRun<T> implements ReflectorProbe {
  /** State shared with the list and watch parts. */
  readonly #ctx: ReflectorContext<T>;
  /** Delays by kind of failure. */
  readonly #policy: RetryPolicy;
  /** The paged list strategy (it remembers whether lists come back paginated). */
  readonly #paged: PagedList<T>;
  /** The server refused a streaming list outright; use paged lists from now on. */
  #watchListRejected = false;
  /** The resync ticker of the current list/watch cycle. */
  #resync: Subscription | undefined;
  /** The period of that ticker: the option's, until the informer changes it while running. */
  #resyncPeriod: number;
  /** A list/watch cycle is running: resync ticks belong to it (RF-26), whatever their period. */
  #inCycle = false;
  /** What led to the next list, for the relist counters: the relist reason of a failed watch, or a failed list. */
  #nextListReason: RelistReason | 'list-failed' = 'list-failed';

  constructor(lw: ListerWatcher<T>, opts: ResolvedReflectOptions, out: Subscriber<ReflectorEvent<T>>) {
    this.#ctx = new ReflectorContext(lw, opts, out);
    this.#policy = new RetryPolicy(opts.backoff, () => opts.scheduler.now(), opts.random);
    this.#paged = new PagedList(this.#ctx);
    this.#resyncPeriod = opts.resyncPeriod;
    this.#ctx.add(() => this.#stopResync());
  }

  /** Starts the loop; it runs until stop() or a terminal error. */
  start(): void {
    this.#loop().catch((err: unknown) => {
      // Only a bug in this file or a broken ListerWatcher contract gets here.
      if (!this.#ctx.stopped) this.#ctx.terminate(err);
    });
  }

  counters(): ReflectorCounters {
    return this.#ctx.counters();
  }

  get lastSyncResourceVersion(): string {
    return this.#ctx.lastSyncRv;
  }

  setResyncPeriod(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new TypeError(`reflect: resyncPeriod must be a non-negative number of ms, got ${describeValue(ms)}`);
    if (ms === this.#resyncPeriod) return;
    this.#resyncPeriod = ms;
    // Between cycles the next successful list starts the ticker (RF-26).
    if (this.#inCycle) this.#tick();
  }

  /** Aborts every request, clears every timer and ends the loop. Idempotent. */
  stop(): void {
    this.#ctx.stop();
  }

  async #loop(): Promise<void> {
    const ctx = this.#ctx;
    let phase: Phase = 'list';
    let handoff: WatchStream<T> | undefined;
    while (!ctx.stopped) {
      if (phase === 'list') {
        this.#stopResync();
        const listed = await this.#list();
        if (ctx.stopped) {
          if (listed.ok) listed.stream?.close();
          return;
        }
        if (!listed.ok) {
          const next = await this.#recover(listed.error, 'list');
          if (next === undefined) return;
          phase = next;
          continue;
        }
        handoff = listed.stream;
        this.#inCycle = true;
        this.#tick();
        phase = 'watch';
      }
      const watched = await watchOnce(ctx, handoff);
      handoff = undefined;
      if (ctx.stopped) return;
      if (watched.healthy) this.#policy.healthy();
      if (watched.ok) {
        // A routine end (the watch's timeout) re-watches at once; an early close by the server is a fault a new
        // request fixes: at once the first time, backing off only if the server keeps doing it.
        if (!watched.healthy) await this.#wait('watch-closed', undefined, this.#policy.delay('watch-closed'));
        continue;
      }
      const next = await this.#recover(watched.error, 'watch', watched.established);
      if (next === undefined) return;
      phase = next;
    }
  }

  /** One list cycle: a streaming list when allowed (with its paged fallback), else a paged list. */
  async #list(): Promise<Listed<T>> {
    const ctx = this.#ctx;
    const stream = ctx.opts.initialList === 'stream' && ctx.lw.supportsWatchList !== false && !this.#watchListRejected;
    ctx.listing(stream ? 'stream' : 'paged', this.#nextListReason);
    if (stream) {
      const streamed = await streamingList(ctx);
      if (streamed === undefined) return { ok: true, stream: undefined };
      if (streamed.ok) return streamed;
      if (!streamed.fallback) return streamed;
      // The server cannot serve this streaming list: report, then a paged list for this cycle. A 400/422 to the
      // streaming request is not final: it only says the server lacks the feature.
      if (ctx.report(streamed.error, { defaultTerminal: false })) return streamed;
      if (isTerminalByDefault(streamed.error)) this.#watchListRejected = true;
    }
    try {
      await this.#paged.run();
      return { ok: true, stream: undefined };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /**
   * Reports a failure and waits as its kind requires; returns the phase to
   * run next, or undefined when the reflector stopped or the error was final.
   */
  async #recover(error: unknown, phase: Phase, established = false): Promise<Phase | undefined> {
    const ctx = this.#ctx;
    const disposition = classifyFailure(error, phase, established);
    if (ctx.report(error)) return undefined;
    if (disposition.relist !== undefined) {
      ctx.status({ state: 'relisting', reason: disposition.relist, error });
      // Resync ticks belong to one list/watch cycle (RF-26); none while waiting to relist.
      this.#stopResync();
    }
    if (disposition.then === 'list') this.#nextListReason = disposition.relist ?? 'list-failed';
    await this.#wait(disposition.kind, error, this.#policy.delay(disposition.kind, disposition.retryAfterMs));
    return ctx.stopped ? undefined : disposition.then;
  }

  async #wait(kind: RetryKind, error: unknown, delayMs: number): Promise<void> {
    if (this.#ctx.stopped) return;
    this.#ctx.retrying(kind);
    if (error !== undefined || delayMs > 0) this.#ctx.status({ state: 'backoff', error, delayMs, kind });
    await this.#ctx.sleep(delayMs);
  }

  /** (Re)starts the ticker of the running cycle at the current period. */
  #tick(): void {
    this.#resync?.unsubscribe();
    this.#resync = undefined;
    const period = this.#resyncPeriod;
    if (period <= 0 || this.#ctx.stopped) return;
    this.#resync = interval(timerDelay(period), this.#ctx.opts.scheduler).subscribe(() => this.#ctx.emit({ type: 'Resync' }));
  }

  #stopResync(): void {
    this.#inCycle = false;
    this.#resync?.unsubscribe();
    this.#resync = undefined;
  }
}
