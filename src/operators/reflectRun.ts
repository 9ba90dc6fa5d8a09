import { config, type SchedulerAction, type Subscriber, type Subscription } from 'rxjs';
import { ConnectionError, DecodeError } from '../sources/errors/index.js';
import type { ListerWatcher, WatchEvent, WatchOptions } from '../sources/types.js';
import type { KubeObject } from '../store/types.js';
import { Backoff } from './internal/backoff.js';
import {
  isExpired,
  isIdleTimeout,
  isTooLargeResourceVersion,
  isTooManyRequests,
  isRetriedNotFallenBack,
  isWatchListRejected,
  retryAfterSeconds,
} from './reflectClassify.js';
import { InitialEventsIncompleteError, VeryShortWatchError } from './reflectErrors.js';
import { listAll, type ListAllResult } from '../sources/pager.js';
import type { ReflectorCounters, ReflectorState, RelistReason, ResolvedReflectOptions } from './reflectTypes.js';
import type { ReflectorEvent } from './types.js';

/** A watch shorter than this with no events counts as a failure (client-go RF-15). */
const VERY_SHORT_WATCH_MS = 1000;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** An open watch response: its iterator and the controller that aborts its request. */
interface OpenWatch<T> {
  readonly iterator: AsyncIterator<WatchEvent<T>>;
  readonly controller: AbortController;
}

type Phase = 'list' | 'watch';
type Outcome<S> = { readonly ok: true; readonly value: S } | { readonly ok: false; readonly error: unknown };

const ok = <S>(value: S): Outcome<S> => ({ ok: true, value });
const failed = <S>(error: unknown): Outcome<S> => ({ ok: false, error });

function metaOf(obj: unknown): KubeObject['metadata'] {
  if (obj === null || typeof obj !== 'object') return undefined;
  const meta = (obj as KubeObject).metadata;
  return meta !== null && typeof meta === 'object' ? meta : undefined;
}

function objectKey(obj: unknown): string {
  const meta = metaOf(obj);
  const name = meta?.name ?? '';
  return meta?.namespace ? `${meta.namespace}/${name}` : name;
}

function preview(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * One subscription's list → watch loop (client-go's Reflector.Run /
 * ListAndWatch). It owns every request and timer it starts so that `stop()`
 * can release them all.
 */
export class ReflectorRun<T> {
  /** Where list pages and watch streams come from. */
  readonly #lw: ListerWatcher<T>;
  /** Validated options. */
  readonly #opts: ResolvedReflectOptions;
  /** The downstream subscriber events and the terminal error go to. */
  readonly #out: Subscriber<ReflectorEvent<T>>;
  /** Shared delay sequence of every retry path (client-go B-1). */
  readonly #backoff: Backoff;
  /** Set once by stop() or a terminal error; every await re-checks it. */
  #stopped = false;
  /** Every request in flight, so teardown can abort them. */
  readonly #requests = new Set<AbortController>();
  /** Every pending timer, so teardown can clear them. */
  readonly #timers = new Set<Subscription>();
  /** Resolvers of pending sleeps, so teardown lets the loop finish instead of leaving it suspended. */
  readonly #sleepers = new Set<() => void>();
  /** The resync ticker of the current list/watch cycle. */
  #resync: Subscription | undefined;
  /** The resourceVersion to resume from (client-go's lastSyncResourceVersion). */
  #lastSyncRv = '';
  /** The server said lastSyncRv is gone or too new: the next list is a consistent read (RV ""). */
  #rvUnavailable = false;
  /** A "0" list once came back paginated, so keep paging (client-go's sticky paginatedResult). */
  #paginatedResult = false;
  /** The server refused a streaming list outright; use paged lists from now on. */
  #watchListRejected = false;
  /** A list has succeeded before, so the next one is a relist. */
  #listedOnce = false;
  /** Running totals for status reports. */
  #counters: { -readonly [K in keyof ReflectorCounters]: number } = {
    lists: 0,
    watches: 0,
    relists: 0,
    events: 0,
    decodeErrors: 0,
    errors: 0,
  };

  constructor(lw: ListerWatcher<T>, opts: ResolvedReflectOptions, out: Subscriber<ReflectorEvent<T>>) {
    this.#lw = lw;
    this.#opts = opts;
    this.#out = out;
    this.#backoff = new Backoff(opts.backoff, () => opts.scheduler.now(), opts.random);
  }

  /** Starts the loop; it runs until stop() or a terminal error. */
  start(): void {
    this.#loop().catch((err: unknown) => {
      // Only a bug in this file or a broken ListerWatcher contract gets here.
      if (!this.#stopped) this.#terminate(err);
    });
  }

  /** Aborts every request, clears every timer and ends the loop. Idempotent. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const controller of this.#requests) controller.abort();
    this.#requests.clear();
    for (const timer of this.#timers) timer.unsubscribe();
    this.#timers.clear();
    this.#stopResync();
    for (const wake of this.#sleepers) wake();
    this.#sleepers.clear();
  }

  async #loop(): Promise<void> {
    let phase: Phase = 'list';
    let handoff: OpenWatch<T> | undefined;
    while (!this.#stopped) {
      if (phase === 'list') {
        this.#stopResync();
        const listed = await this.#list();
        if (this.#stopped) {
          if (listed.ok && listed.value !== undefined) this.#closeWatch(listed.value);
          return;
        }
        if (!listed.ok) {
          const next = await this.#recover(listed.error, 'list');
          if (next === undefined) return;
          phase = next;
          continue;
        }
        handoff = listed.value;
        this.#startResync();
        phase = 'watch';
      }
      const watched = await this.#watch(handoff);
      handoff = undefined;
      if (this.#stopped) return;
      if (watched.ok) continue;
      const next = await this.#recover(watched.error, 'watch');
      if (next === undefined) return;
      phase = next;
    }
  }

  // ---------------------------------------------------------------- failures

  /**
   * Reports an error and waits as its kind requires; returns the phase to
   * run next, or undefined when the reflector stopped or the error was final.
   */
  async #recover(error: unknown, phase: Phase): Promise<Phase | undefined> {
    if (this.#report(error)) return undefined;
    if (isTooManyRequests(error)) {
      const seconds = retryAfterSeconds(error);
      await this.#wait(error, seconds === undefined ? this.#backoff.next() : seconds * 1000);
      return phase;
    }
    if (phase === 'watch') {
      if (isIdleTimeout(error)) return 'watch';
      if (error instanceof ConnectionError || error instanceof DecodeError) {
        // A watch from the last good resourceVersion replays whatever was lost; a relist would only cost more.
        await this.#wait(error, this.#backoff.next());
        return 'watch';
      }
      const reason: RelistReason = isExpired(error)
        ? 'expired'
        : error instanceof VeryShortWatchError
          ? 'very-short-watch'
          : 'watch-failed';
      this.#status({ state: 'relisting', reason, error });
      // Resync ticks belong to one list/watch cycle (RF-26); none while waiting to relist.
      this.#stopResync();
    }
    await this.#wait(error, this.#backoff.next());
    return 'list';
  }

  /** Counts and reports an error; returns true when onTerminal made it final (the observable has errored). */
  #report(error: unknown): boolean {
    this.#counters.errors += 1;
    if (error instanceof DecodeError) this.#counters.decodeErrors += 1;
    let terminal = false;
    const onTerminal = this.#opts.onTerminal;
    if (onTerminal !== undefined) {
      try {
        terminal = onTerminal(error) === true;
      } catch (callbackError) {
        this.#status({ state: 'error', error, terminal: false });
        this.#counters.errors += 1;
        this.#status({ state: 'error', error: callbackError, terminal: false });
        return false;
      }
    }
    this.#status({ state: 'error', error, terminal });
    if (terminal) this.#terminate(error);
    return terminal;
  }

  #terminate(error: unknown): void {
    this.stop();
    this.#out.error(error);
  }

  async #wait(error: unknown, delayMs: number): Promise<void> {
    if (this.#stopped) return;
    this.#status({ state: 'backoff', error, delayMs });
    await this.#sleep(delayMs);
  }

  // ------------------------------------------------------------------- lists

  /** One list cycle; on success emits Replace and may hand over an open watch (streaming list). */
  async #list(): Promise<Outcome<OpenWatch<T> | undefined>> {
    this.#counters.lists += 1;
    if (this.#listedOnce) this.#counters.relists += 1;
    const stream = this.#opts.initialList === 'stream' && this.#lw.supportsWatchList !== false && !this.#watchListRejected;
    this.#status({ state: 'listing', mode: stream ? 'stream' : 'paged' });
    if (stream) {
      const streamed = await this.#watchList();
      if (this.#stopped || streamed.ok) return streamed;
      const error = streamed.error;
      if (isRetriedNotFallenBack(error)) return failed(error);
      // The server cannot serve this streaming list: report, then fall back to a paged list for this cycle.
      if (this.#report(error)) return failed(error);
      if (isWatchListRejected(error)) this.#watchListRejected = true;
      if (this.#stopped) return failed(error);
    }
    const listed = await this.#pagedList();
    return listed.ok ? ok(undefined) : failed(listed.error);
  }

  async #pagedList(): Promise<Outcome<void>> {
    const rv = this.#rvUnavailable ? '' : this.#lastSyncRv === '' ? '0' : this.#lastSyncRv;
    let result: ListAllResult<T>;
    try {
      result = await this.#listOnce(rv);
    } catch (error) {
      if (this.#stopped) return failed(error);
      if (!isExpired(error) && !isTooLargeResourceVersion(error)) return failed(error);
      // The snapshot is gone (or not there yet): one consistent read at once (client-go RF-11).
      this.#rvUnavailable = true;
      if (this.#report(error)) return failed(error);
      try {
        result = await this.#listOnce('');
      } catch (retryError) {
        return failed(retryError);
      }
    }
    if (this.#stopped) return ok(undefined);
    if (rv === '0' && result.paginated) this.#paginatedResult = true;
    this.#applyReplace(result.items, result.resourceVersion);
    return ok(undefined);
  }

  #listOnce(rv: string): Promise<ListAllResult<T>> {
    // A list at a specific resourceVersion can be answered from the watch cache only when unpaged (RF-10).
    const limit = this.#paginatedResult || rv === '' || rv === '0' ? this.#opts.pageSize : 0;
    // `limit` is always sent, 0 included, and is also the pager's page size so a source default cannot re-page it.
    const opts = rv === '' ? { limit } : { resourceVersion: rv, limit };
    return this.#request((signal) => listAll(this.#lw, opts, signal, { pageSize: limit }));
  }

  #applyReplace(items: readonly T[], resourceVersion: string): void {
    this.#rvUnavailable = false;
    this.#listedOnce = true;
    this.#lastSyncRv = resourceVersion;
    this.#out.next({ type: 'Replace', items, resourceVersion });
  }

  /**
   * A streaming list: the initial state arrives as ADDED events up to the
   * `k8s.io/initial-events-end` bookmark, then the same stream carries on as
   * the watch (client-go RF-20..RF-23).
   */
  async #watchList(): Promise<Outcome<OpenWatch<T> | undefined>> {
    for (;;) {
      const rv = this.#rvUnavailable ? '' : this.#lastSyncRv;
      const opts: WatchOptions = {
        resourceVersion: rv,
        resourceVersionMatch: 'NotOlderThan',
        sendInitialEvents: true,
        allowWatchBookmarks: true,
        timeoutSeconds: this.#timeoutSeconds(),
      };
      const started = this.#opts.scheduler.now();
      let open: OpenWatch<T>;
      try {
        open = this.#openWatch(opts);
      } catch (error) {
        return failed(error);
      }
      const state = new Map<string, T>();
      let received = 0;
      let endRv: string | undefined;
      let error: unknown;
      try {
        for (;;) {
          const next = await open.iterator.next();
          if (this.#stopped) break;
          if (next.done === true) break;
          const event = next.value;
          received += 1;
          this.#counters.events += 1;
          if (event.type === 'BOOKMARK') {
            const meta = metaOf(event.object);
            if (meta?.annotations?.[INITIAL_EVENTS_END] === 'true') {
              endRv = meta.resourceVersion ?? '';
              break;
            }
            continue;
          }
          this.#checkObject(event);
          if (event.type === 'DELETED') state.delete(objectKey(event.object));
          else state.set(objectKey(event.object), event.object);
        }
      } catch (caught) {
        error = caught;
      }
      if (this.#stopped) {
        this.#closeWatch(open);
        return ok(undefined);
      }
      if (endRv !== undefined) {
        this.#applyReplace([...state.values()], endRv);
        return ok(open);
      }
      this.#closeWatch(open);
      if (error !== undefined && isExpired(error)) {
        // Our resourceVersion is too old for the server: stream from "now" instead, at once (RF-22).
        this.#rvUnavailable = true;
        if (this.#report(error)) return failed(error);
        continue;
      }
      if (error !== undefined) return failed(error);
      const lasted = this.#opts.scheduler.now() - started;
      if (received === 0 && lasted < VERY_SHORT_WATCH_MS) return failed(new VeryShortWatchError(lasted));
      return failed(new InitialEventsIncompleteError(received));
    }
  }

  // ----------------------------------------------------------------- watches

  /** One watch (or the continuation of a streaming list); ok when it ended normally. */
  async #watch(handoff: OpenWatch<T> | undefined): Promise<Outcome<void>> {
    const startRv = this.#lastSyncRv;
    const started = this.#opts.scheduler.now();
    let open: OpenWatch<T>;
    try {
      open =
        handoff ??
        this.#openWatch({ resourceVersion: startRv, timeoutSeconds: this.#timeoutSeconds(), allowWatchBookmarks: true });
    } catch (error) {
      return failed(error);
    }
    // Resource versions of a stream opened at "" or "0" are only trusted once a non-ADDED event shows up (RF-16).
    let propagate = handoff !== undefined || (startRv !== '' && startRv !== '0');
    let received = 0;
    this.#status({ state: 'watching', resourceVersion: startRv });
    try {
      for (;;) {
        const next = await open.iterator.next();
        if (this.#stopped || next.done === true) break;
        let event: Exclude<ReflectorEvent<T>, { type: 'Resync' | 'Replace' }>;
        try {
          event = this.#toReflectorEvent(next.value);
        } catch (invalid) {
          if (!(invalid instanceof DecodeError)) throw invalid;
          // A well-formed event that cannot be used (no name, unknown type) would come back on every
          // resume from the last resourceVersion, so it is reported and skipped, as client-go does;
          // only a line that cannot be parsed at all ends the watch.
          if (this.#report(invalid)) return ok(undefined);
          this.#status({ state: 'watching', resourceVersion: this.#lastSyncRv });
          continue;
        }
        received += 1;
        this.#counters.events += 1;
        if (next.value.type !== 'ADDED') propagate = true;
        if (propagate) this.#lastSyncRv = event.resourceVersion;
        this.#out.next(event);
      }
    } catch (error) {
      if (!this.#stopped) return failed(error);
    } finally {
      this.#closeWatch(open);
    }
    if (this.#stopped) return ok(undefined);
    const lasted = this.#opts.scheduler.now() - started;
    if (handoff === undefined && received === 0 && lasted < VERY_SHORT_WATCH_MS) {
      return failed(new VeryShortWatchError(lasted));
    }
    return ok(undefined);
  }

  #toReflectorEvent(event: WatchEvent<T>): Exclude<ReflectorEvent<T>, { type: 'Resync' | 'Replace' }> {
    if (event.type === 'BOOKMARK') {
      const rv = metaOf(event.object)?.resourceVersion;
      if (typeof rv !== 'string' || rv === '') {
        throw new DecodeError('BOOKMARK event without metadata.resourceVersion', preview(event), -1);
      }
      return { type: 'Bookmark', resourceVersion: rv };
    }
    const resourceVersion = this.#checkObject(event);
    switch (event.type) {
      case 'ADDED':
        return { type: 'Added', obj: event.object, resourceVersion };
      case 'MODIFIED':
        return { type: 'Modified', obj: event.object, resourceVersion };
      case 'DELETED':
        return { type: 'Deleted', obj: event.object, resourceVersion };
      default:
        throw new DecodeError(`unknown watch event type ${preview((event as { type: unknown }).type)}`, preview(event), -1);
    }
  }

  /**
   * The source already rejects such events; checked again because a custom
   * ListerWatcher may not, and an object without a name cannot be keyed.
   */
  #checkObject(event: WatchEvent<T>): string {
    const meta = metaOf(event.object);
    if (meta === undefined || typeof meta.name !== 'string' || meta.name === '') {
      throw new DecodeError(`${event.type} event object without metadata.name`, preview(event), -1);
    }
    return meta.resourceVersion ?? '';
  }

  #openWatch(opts: WatchOptions): OpenWatch<T> {
    this.#counters.watches += 1;
    const controller = new AbortController();
    const trimmed: WatchOptions = opts.resourceVersion === '' ? { ...opts, resourceVersion: undefined } : opts;
    const clean = Object.fromEntries(Object.entries(trimmed).filter(([, v]) => v !== undefined)) as WatchOptions;
    const iterator = this.#lw.watch(clean, controller.signal)[Symbol.asyncIterator]();
    this.#requests.add(controller);
    return { iterator, controller };
  }

  #closeWatch(open: OpenWatch<T>): void {
    this.#requests.delete(open.controller);
    open.controller.abort();
    // return() on a generator suspended in an await is queued behind it; the abort above ends that await.
    try {
      Promise.resolve(open.iterator.return?.()).catch(() => undefined);
    } catch {
      // A broken iterator cannot be closed any further; its request is aborted already.
    }
  }

  #timeoutSeconds(): number {
    const min = this.#opts.minWatchTimeoutSeconds;
    return Math.floor(min + this.#unitRandom() * min);
  }

  #unitRandom(): number {
    const r = this.#opts.random();
    return Number.isFinite(r) ? Math.min(Math.max(r, 0), 0.999_999) : 0;
  }

  // ------------------------------------------------------- requests & timers

  async #request<R>(send: (signal: AbortSignal) => Promise<R>): Promise<R> {
    const controller = new AbortController();
    this.#requests.add(controller);
    try {
      return await send(controller.signal);
    } finally {
      this.#requests.delete(controller);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.#stopped) {
        resolve();
        return;
      }
      let done = false;
      // Declared before scheduling: a synchronous scheduler may run wake() before schedule() returns.
      let timer: Subscription | undefined;
      const wake = (): void => {
        if (done) return;
        done = true;
        this.#sleepers.delete(wake);
        if (timer !== undefined) this.#timers.delete(timer);
        resolve();
      };
      this.#sleepers.add(wake);
      timer = this.#opts.scheduler.schedule(() => wake(), Math.max(0, ms));
      if (done) timer.unsubscribe();
      else this.#timers.add(timer);
    });
  }

  #startResync(): void {
    const period = this.#opts.resyncPeriod;
    if (period <= 0 || this.#stopped) return;
    this.#stopResync();
    const out = this.#out;
    this.#resync = this.#opts.scheduler.schedule(function tick(this: SchedulerAction<unknown>) {
      out.next({ type: 'Resync' });
      this.schedule(undefined, period);
    }, period);
  }

  #stopResync(): void {
    this.#resync?.unsubscribe();
    this.#resync = undefined;
  }

  // ------------------------------------------------------------------ status

  #status(state: ReflectorState): void {
    const sink = this.#opts.status;
    if (sink === undefined) return;
    try {
      sink({ ...state, counters: { ...this.#counters } });
    } catch (err) {
      config.onUnhandledError?.(err);
    }
  }
}
