import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import type { CachedLookup } from '../sources/cachedParts.js';
import type { ListerWatcher } from '../sources/types.js';
import { resolveBackoffOptions } from './backoff.js';
import { DEFAULT_STALL, type StallOptions } from './watchRhythm.js';
import { ReflectorRun } from './run.js';
import type { ReflectOptions, ReflectorEvent, ReflectorProbe, ReflectorStatus, ResolvedReflectOptions } from './types.js';
import { booleanOption, describeValue, oneOf } from '../options/validate.js';



function nonNegative(name: string, value: unknown, fallback: number, integer = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new TypeError(`reflect: ${name} must be a finite ${integer ? 'integer' : 'number'} >= 0, got ${describeValue(value)}`);
  }
  return value;
}

function isScheduler(value: unknown): value is SchedulerLike {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as SchedulerLike).schedule === 'function' &&
    typeof (value as SchedulerLike).now === 'function'
  );
}

function resolveStatus(value: unknown): ((status: ReflectorStatus) => void) | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'function') return value as (status: ReflectorStatus) => void;
  if (value !== null && typeof value === 'object') {
    const next = (value as { next?: unknown }).next;
    if (next === undefined) return undefined;
    if (typeof next === 'function') return (status) => (next as (s: ReflectorStatus) => void).call(value, status);
  }
  throw new TypeError(`reflect: status must be an Observer, a Subject or a function, got ${describeValue(value)}`);
}

function flag(name: string, value: unknown): boolean {
  return booleanOption('reflect', name, value, false);
}

function cachedLookup(value: unknown): CachedLookup {
  if (typeof value !== 'function') throw new TypeError(`reflect: cached must be a function (namespace, name) => object, got ${describeValue(value)}`);
  return value as CachedLookup;
}

function resolveStall(value: unknown): StallOptions | undefined {
  if (value === false) return undefined;
  if (value === undefined) return DEFAULT_STALL;
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`reflect: stallDetection must be false or an object, got ${describeValue(value)}`);
  }
  const given = value as Partial<Record<keyof StallOptions, unknown>>;
  const missedBeats = nonNegative('stallDetection.missedBeats', given.missedBeats, DEFAULT_STALL.missedBeats);
  if (missedBeats < 1) throw new TypeError(`reflect: stallDetection.missedBeats must be >= 1, got ${describeValue(missedBeats)}`);
  const minMs = nonNegative('stallDetection.minMs', given.minMs, DEFAULT_STALL.minMs);
  if (minMs <= 0) throw new TypeError(`reflect: stallDetection.minMs must be > 0, got ${describeValue(minMs)}`);
  return Object.freeze({ missedBeats, minMs });
}

/**
 * Checks reflect()'s options and fills in every default.
 *
 * @param opts the options as given
 * @returns the complete options
 * @throws TypeError naming the first bad option and its value
 */
export function resolveReflectOptions(opts: ReflectOptions = {}): ResolvedReflectOptions {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`reflect: options must be an object, got ${describeValue(opts)}`);
  const initialList = oneOf('reflect', 'initialList', opts.initialList, ['paged', 'stream'], 'paged');
  const listDelivery = oneOf('reflect', 'listDelivery', opts.listDelivery, ['whole', 'pages'], 'whole');
  const minWatchTimeoutSeconds = nonNegative('minWatchTimeoutSeconds', opts.minWatchTimeoutSeconds, 300);
  if (minWatchTimeoutSeconds < 1) {
    throw new TypeError(`reflect: minWatchTimeoutSeconds must be >= 1, got ${describeValue(minWatchTimeoutSeconds)}`);
  }
  const scheduler = opts.scheduler ?? asyncScheduler;
  if (!isScheduler(scheduler)) throw new TypeError(`reflect: scheduler must be an rxjs SchedulerLike, got ${describeValue(scheduler)}`);
  if (opts.onTerminal !== undefined && typeof opts.onTerminal !== 'function') {
    throw new TypeError(`reflect: onTerminal must be a function, got ${describeValue(opts.onTerminal)}`);
  }
  const random = opts.random ?? Math.random;
  if (typeof random !== 'function') throw new TypeError(`reflect: random must be a function, got ${describeValue(random)}`);
  let backoff;
  try {
    backoff = resolveBackoffOptions(opts.backoff, 'backoff');
  } catch (err) {
    throw new TypeError(`reflect: ${(err as Error).message}`);
  }
  return {
    resyncPeriod: nonNegative('resyncPeriod', opts.resyncPeriod, 0),
    initialList,
    listDelivery,
    stripManagedFields: flag('stripManagedFields', opts.stripManagedFields),
    ...(opts.cached !== undefined && { cached: cachedLookup(opts.cached) }),
    pageSize: nonNegative('pageSize', opts.pageSize, 500, true),
    pageSizeExplicit: opts.pageSize !== undefined,
    backoff,
    stall: resolveStall(opts.stallDetection),
    minWatchTimeoutSeconds,
    scheduler,
    onTerminal: opts.onTerminal,
    random,
    status: resolveStatus(opts.status),
    workQueued: always,
  };
}

const always = (): boolean => true;

/**
 * Turns a ListerWatcher into one long-lived stream of server facts: a
 * `Replace` after every (re)list, then the watch's `Added` / `Modified` /
 * `Deleted` / `Bookmark` events, and `Resync` ticks — client-go's Reflector
 * as a cold Observable.
 *
 * The stream never errors or completes because of a transient fault:
 * - a watch that reaches its timeout is re-opened from the last
 *   resourceVersion (bookmarks included) at once, without a relist; one the
 *   server keeps open 30 s past its `timeoutSeconds` is ended by the client
 *   and re-opened the same way, reported as a
 *   {@link WatchDeadlineExceededError} (a streaming list that overran is
 *   streamed again);
 * - a fault the next request fixes is retried at once (a jitter of at most
 *   50 ms): a watch the server closed early, a line that would not parse
 *   (resumed from the last good resourceVersion), a 410 Expired (relist; a
 *   LIST whose resourceVersion is gone or too new is retried at once as a
 *   consistent read, and an expired continue token turns into one full list),
 *   a stalled watch, a streaming list cut before its end bookmark (streamed
 *   again). Only while the same kind repeats does its own backoff grow, so a
 *   watch that closes, then 410s, then relists is three jitters, not a sum;
 * - a stalled watch is noticed by its rhythm: once events and bookmarks have
 *   arrived steadily, four missed intervals (never under 5 s, see
 *   `stallDetection`) abort it with a {@link WatchStalledError}; until a
 *   rhythm is known, the source's idle timeout applies;
 * - faults of the server's health (5xx, refused or reset connections, 429
 *   without Retry-After, 401/403/404) follow client-go's one backoff, 800 ms ×
 *   2 up to 30 s with full jitter, started over after two minutes without
 *   such failures; connection errors resume the watch, the rest relist, as
 *   client-go does; a 429 with Retry-After waits exactly that long;
 * - a 400 BadRequest or 422 Invalid answer to a LIST or a plain WATCH is
 *   final: the observable errors with it (the same answer to a streaming
 *   list only switches to paged lists). `onTerminal`, when given, decides
 *   instead, for every error;
 * - a watch that closes within a second with no event counts as a failure
 *   and relists, as in client-go.
 *
 * Every error, and every change of state, is reported to `opts.status` with
 * running counters; without a status sink every error goes to the process's
 * rate-limited stderr reporter, so none is silent. The status sink is an
 * option rather than a second returned stream because the events are cold:
 * each subscription runs its own loop, and a sink passed alongside it cannot
 * be confused with another run.
 *
 * Each subscription starts its own list/watch loop; unsubscribing aborts
 * every request in flight and clears every timer.
 *
 * ## Example
 * ```ts
 * import { Subject } from 'rxjs';
 * import { isForbidden, kubeSource } from 'rxkube';
 * import { reflect, type ReflectorStatus } from 'rxkube/core';
 * import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const status = new Subject<ReflectorStatus>();
 * status.subscribe((s) => console.log(s.state, s.counters.relists));
 * const pods = kubeSource(kc, 'v1/pods');
 * const sub = reflect(pods, { resyncPeriod: 60_000, status, onTerminal: isForbidden }).subscribe((event) => {
 *   if (event.type === 'Replace') console.log(`listed ${event.items.length} pods at ${event.resourceVersion}`);
 *   else if (event.type === 'Added' || event.type === 'Modified' || event.type === 'Deleted') console.log(event.type, event.obj.metadata?.name);
 * });
 * // later: sub.unsubscribe() aborts the watch.
 * ```
 *
 * @param lw where lists and watches come from (`kubeSource(…)` or any ListerWatcher)
 * @param opts tuning; every field is optional and validated up front
 * @param opts.resyncPeriod milliseconds between `Resync` ticks while watching; 0 is off. @default 0
 * @param opts.initialList `'paged'` LIST or `'stream'` (sendInitialEvents watch with paged fallback). @default 'paged'
 * @param opts.listDelivery `'whole'`: one `Replace` per list; `'pages'`: a `ReplacePage` per page as it arrives, then `ReplaceEnd`. @default 'whole'
 * @param opts.stripManagedFields ask the source to leave `metadata.managedFields` out, unparsed. @default false
 * @param opts.cached the consumer's cached object by namespace and name, whose unchanged parts a MODIFIED event may take instead of parsing them (PF-50). @default none
 * @param opts.pageSize LIST page size for every list when set; 0 for unpaged. Unset, 500 except unpaged relists at a pinned resourceVersion. @default 500
 * @param opts.backoff retry delays. @default { initialMs: 800, factor: 2, maxMs: 30_000, jitter: 1.0, resetAfterMs: 120_000 }
 * @param opts.minWatchTimeoutSeconds watch timeouts are random in [min, 2·min) seconds; kept even under client-go's 5-minute floor. @default 300
 * @param opts.stallDetection when a silent watch counts as stalled, or false. @default { missedBeats: 4, minMs: 5000 }
 * @param opts.scheduler scheduler for all timers and the clock. @default asyncScheduler
 * @param opts.onTerminal return true to make an error final; replaces the default (400/422 final). @default undefined
 * @param opts.random jitter source in [0, 1). @default Math.random
 * @param opts.status receives every state change and error. @default undefined (errors go to the stderr reporter)
 * @returns a cold Observable of reflector events that errors only on a final error
 * @throws TypeError synchronously when an option is invalid
 */
export function reflect<T>(lw: ListerWatcher<T>, opts?: ReflectOptions): Observable<ReflectorEvent<T>> {
  return probedReflect(lw, opts, () => {});
}

/**
 * reflect() that hands each subscription's {@link ReflectorProbe} to `onRun` as it starts, so its counters and
 * resume point can be read at any moment (internal: the informer's metrics). `workQueued`, when given, tells
 * whether the events emitted so far left work to run before the next one; without it the reflector assumes so.
 */
export function probedReflect<T>(
  lw: ListerWatcher<T>,
  opts: ReflectOptions | undefined,
  onRun: (probe: ReflectorProbe) => void,
  workQueued?: () => boolean,
): Observable<ReflectorEvent<T>> {
  if (lw === null || typeof lw !== 'object' || typeof lw.list !== 'function' || typeof lw.watch !== 'function') {
    throw new TypeError(`reflect: lw must be a ListerWatcher with list() and watch(), got ${describeValue(lw)}`);
  }
  const resolved = workQueued === undefined ? resolveReflectOptions(opts) : { ...resolveReflectOptions(opts), workQueued };
  return new Observable<ReflectorEvent<T>>((subscriber) => {
    const run = new ReflectorRun(lw, resolved, subscriber);
    onRun(run);
    run.start();
    return () => run.stop();
  });
}
